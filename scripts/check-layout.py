#!/usr/bin/env python3
"""The crates' one-way layout, checked (ARCHITECTURE.md):

1. nothing outside `cli/` imports `crate::cli`, nothing outside `web/` imports `crate::web`
   (the server's edges); the binary's `main.rs` is the one place that calls into `cli`;
2. the core imports no feature: in `server`, the modules listed in CORE["server"] (facts and
   stores) import none of the others; in `app`, `domain`, `i18n` and `decode` (pure, shared with the
   browser) import neither the server seam (`api`) nor the UI;
3. no import circle among the children of any module, at every level: the top-level modules
   of a crate, the files of `control/`, the files of `app/src/domain/`, ... A reference from a
   file of child A to anything inside its sibling B is an edge A -> B; references between a
   module and its own parent or children are how Rust modules work and are not edges;
4. unsafe code stays denied (the workspace lint): the one file that may allow it is
   `app/src/lazy_pages.rs`, for what `wasm_split` (leptos' lazy loading) expands to.

References are read from the source with comments and string literals removed: `crate::`,
`super::` and `self::` paths, `use` trees with braces included, `super` inside an inline
module resolved against it. A unit test module (`mod tests { ... }`) may reach anywhere: the
locale test lists keys the pages build, a rule's test borrows a sibling's fixture.

Exit 1 with every violation listed. `--self-test` runs the check on small trees that break each
rule and on one that keeps them, so the check itself is known to fail when it should.
`--graph` prints the top-level graph of each crate.
"""
import os
import re
import sys
import tempfile

EDGES = ("cli", "web")
CORE = {
    "server": {"api_error", "clock", "config", "db", "engine", "gpu", "journal", "profile_store", "records", "releases", "tls"},
    "app": {"decode", "domain", "i18n"},
}
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RAW_STRING = re.compile(r'b?r(#*)"')


def strip(text):
    """The source with comments, string and char literals blanked (newlines kept, so line
    numbers still hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif (m := RAW_STRING.match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(n, j + 1)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'" and (m := re.match(r"'(\\.[^']*|[^'\\\n])'", text[i:])):
            out.append(" " * len(m.group(0)))
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


TOKEN = re.compile(r"::|[A-Za-z_][A-Za-z0-9_]*|\S")


def tokens(text):
    for n, line in enumerate(text.split("\n"), 1):
        for m in TOKEN.finditer(line):
            yield m.group(0), n


def paths(text):
    """(segments, line, inline module path) for every `crate::`/`super::`/`self::` path."""
    toks = list(tokens(strip(text)))
    found, inline, depth, i = [], [], 0, 0

    def tree(i, prefix, line, scope):
        # A path's remaining segments after `prefix`; `{a, b::{c}}` groups expand.
        segs = list(prefix)
        while i < len(toks):
            t = toks[i][0]
            if t == "{":
                i += 1
                while i < len(toks) and toks[i][0] != "}":
                    if toks[i][0] == ",":
                        i += 1
                        continue
                    if toks[i][0] == "self":
                        found.append((segs, line, scope))
                        i += 1
                        continue
                    i = tree(i, segs, line, scope)
                return i + 1
            if IDENT.fullmatch(t) or t == "*":
                if t != "*":
                    segs.append(t)
                if i + 1 < len(toks) and toks[i + 1][0] == "::":
                    i += 2
                    continue
                found.append((segs, line, scope))
                return i + 1
            found.append((segs, line, scope))
            return i
        found.append((segs, line, scope))
        return i

    while i < len(toks):
        t, line = toks[i]
        if t == "mod" and i + 2 < len(toks) and IDENT.fullmatch(toks[i + 1][0]) and toks[i + 2][0] == "{":
            inline.append((toks[i + 1][0], depth))
            depth += 1
            i += 3
            continue
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if inline and inline[-1][1] == depth:
                inline.pop()
        elif t in ("crate", "super", "self") and i + 1 < len(toks) and toks[i + 1][0] == "::" \
                and (i == 0 or toks[i - 1][0] != "::") and not any(m == "tests" for m, _ in inline):
            i = tree(i, [], line, [m for m, _ in inline])
            continue
        i += 1
    return found


def file_module(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] == "mod":
        rel = rel[:-1]
    return tuple(rel) if rel != ["lib"] and rel != ["main"] else ()


def resolve(segs, here, scope, modules):
    """The file module a path points into (the longest known prefix), or None."""
    at = list(here) + scope
    rest = list(segs)
    if rest and rest[0] == "crate":
        at, rest = [], rest[1:]
    while rest and rest[0] in ("self", "super"):
        if rest.pop(0) == "super":
            at = at[:-1]
    full = at + rest
    for k in range(len(full), 0, -1):
        if tuple(full[:k]) in modules:
            return tuple(full[:k])
    return None


def references(src):
    """{(from module, to module): (path, line)}: every reference between file modules."""
    files = {}
    for root, _, names in os.walk(src):
        for f in names:
            if f.endswith(".rs"):
                path = os.path.join(root, f)
                files[path] = file_module(src, path)
    modules = set(files.values())
    for m in list(modules):
        for k in range(1, len(m)):
            modules.add(m[:k])
    refs = {}
    for path, here in sorted(files.items()):
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        for segs, line, scope in paths(text):
            to = resolve(segs, here, scope, modules)
            if to is not None and to != here:
                refs.setdefault((here, to), (path, line))
    return refs


def levels(refs):
    """{parent: {child: {sibling: (path, line)}}}: the edges among each module's children."""
    out = {}
    for (a, b), where in refs.items():
        k = 0
        while k < min(len(a), len(b)) and a[k] == b[k]:
            k += 1
        if k == len(a) or k == len(b):
            continue  # a module and its own ancestor or descendant
        out.setdefault(a[:k], {}).setdefault(a[k], {}).setdefault(b[k], where)
    return out


def circles(edges, parent):
    found, state, stack = [], {}, []
    prefix = "::".join(parent)

    def name(m):
        return f"{prefix}::{m}" if prefix else m

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in sorted(edges.get(m, {})):
            if state.get(t) == "open":
                cycle = stack[stack.index(t):] + [t]
                path, n = edges[m][t]
                found.append(f"{path}:{n}: import circle " + " -> ".join(name(c) for c in cycle))
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m)
    return found


def violations(src, crate):
    found = []
    refs = references(src)
    by_level = levels(refs)
    top = by_level.get((), {})
    if crate == "server":
        for mod, targets in sorted(top.items()):
            for edge in EDGES:
                if edge in targets and mod != edge:
                    path, n = targets[edge]
                    found.append(f"{path}:{n}: {mod} imports the edge crate::{edge}")
    core = CORE.get(crate, set())
    for mod, targets in sorted(top.items()):
        if mod in core:
            for t, (path, n) in sorted(targets.items()):
                if t not in core:
                    found.append(f"{path}:{n}: the core module {mod} imports the feature crate::{t}")
    for parent, edges in sorted(by_level.items()):
        found += circles(edges, parent)
    return found


UNSAFE_ALLOWED = {os.path.join("app", "src", "lazy_pages.rs")}
ALLOW_UNSAFE = re.compile(r"allow\([^)]*\bunsafe_code\b")
COMMENT = re.compile(r"^\s*//")


def unsafe_allowances(root):
    """Files under `root`'s crates that allow unsafe code, other than the one that may."""
    found = []
    for crate in ("app", "server"):
        for dirpath, _, files in os.walk(os.path.join(root, crate)):
            for f in files:
                path = os.path.join(dirpath, f)
                if not f.endswith(".rs") or os.path.relpath(path, root) in UNSAFE_ALLOWED:
                    continue
                with open(path, encoding="utf-8") as fh:
                    for n, line in enumerate(fh, 1):
                        if not COMMENT.match(line) and ALLOW_UNSAFE.search(line):
                            found.append(f"{path}:{n}: allows unsafe code (only app/src/lazy_pages.rs may)")
    return found


def write_tree(d, tree):
    for rel, text in tree.items():
        os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
        with open(os.path.join(d, rel), "w") as fh:
            fh.write(text)


def self_test():
    cases = {
        "edge imported": {"control/mod.rs": "use crate::cli::x;\n", "cli/mod.rs": "use crate::control::y;\n"},
        "web imported": {"review/mod.rs": "fn f() { crate::web::serve(); }\n", "web/mod.rs": ""},
        "circle": {"a.rs": "use crate::b::x;\n", "b/mod.rs": "use crate::c::y;\n", "c.rs": "use crate::a::z;\n"},
        "core imports a feature": {"config.rs": "fn f() { crate::sim::release::parse(); }\n", "sim/mod.rs": ""},
        "circle among a module's files": {
            "control/mod.rs": "mod a;\nmod b;\n",
            "control/a.rs": "use super::b::X;\n",
            "control/b.rs": "fn f() { super::a::y(); }\n",
        },
        "circle through a use tree": {
            "domain/mod.rs": "",
            "domain/engine.rs": "use crate::domain::{\n    phases::{self, Phase},\n    rows,\n};\n",
            "domain/phases.rs": "use crate::domain::engine::EngineState;\n",
        },
        "circle deeper down": {
            "pages/engine/mod.rs": "",
            "pages/engine/charts.rs": "use super::logs::L;\n",
            "pages/engine/logs.rs": "use crate::pages::engine::charts::C;\n",
        },
    }
    ok_tree = {
        "cli/mod.rs": "use crate::control::y;\n", "web/mod.rs": "use crate::control::y;\n",
        "control/mod.rs": "// crate::cli is named in a comment only\nuse crate::engine::E;\nmod a;\nmod b;\n"
                          "fn f() { let s = \"crate::web::x\"; let c = '\"'; }\nuse self::a::A;\n",
        "control/a.rs": "use super::b::B;\nuse super::EngineControl;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
        "control/b.rs": "use super::{EngineControl, Running};\nfn f<'a>(x: &'a str) {}\n"
                        "#[cfg(test)]\nmod tests {\n    use super::super::a::A;\n}\n",
        "engine.rs": "use crate::config::C;\n", "config.rs": "/* crate::control:: in a block comment */\n",
    }
    failures = []
    for name, tree in list(cases.items()) + [("clean", ok_tree)]:
        with tempfile.TemporaryDirectory() as d:
            write_tree(d, tree)
            crate = "app" if name.startswith("circle through") else "server"
            v = violations(d, crate)
            if (name == "clean") == bool(v):
                failures.append(f"self-test {name}: {v or 'no violation found'}")
    with tempfile.TemporaryDirectory() as d:
        write_tree(d, {"app/src/lazy_pages.rs": "#![allow(unsafe_code)]\n",
                       "server/src/x.rs": "// #[allow(unsafe_code)] in a comment\n"})
        if unsafe_allowances(d):
            failures.append(f"self-test unsafe clean: {unsafe_allowances(d)}")
        with open(os.path.join(d, "server/src/y.rs"), "w") as fh:
            fh.write("#[allow(dead_code, unsafe_code)]\nfn f() {}\n")
        if not unsafe_allowances(d):
            failures.append("self-test unsafe allowed elsewhere: no violation found")
    return failures


def main():
    if "--self-test" in sys.argv:
        bad = self_test()
        for b in bad:
            print(b)
        print("layout check self-test: " + ("FAILED" if bad else "ok"))
        return 1 if bad else 0
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    found = unsafe_allowances(root)
    for crate in ("server", "app"):
        src = os.path.join(root, crate, "src")
        refs = references(src)
        by_level = levels(refs)
        if "--graph" in sys.argv:
            print(f"# {crate}")
            for mod, targets in sorted(by_level.get((), {}).items()):
                print(f"{mod} -> {', '.join(sorted(targets))}")
        v = violations(src, crate)
        found += v
        inner = sum(len(t) for level, e in by_level.items() for t in e.values())
        print(f"layout {crate}: {len(by_level)} module levels, {inner} import edges between siblings, "
              f"{len(v)} violations")
    for v in found:
        print(v)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
