#!/usr/bin/env python3
"""The server's one-way layout, checked (ARCHITECTURE.md):

1. nothing outside `cli/` imports `crate::cli`, nothing outside `web/` imports `crate::web`
   (the edges); the binary's `main.rs` is the one place that calls into `cli`;
2. no import circle among the top-level modules of `server/src` (a reference `crate::X` from a
   file of module Y is an edge Y -> X; `super::` inside a top-level module stays inside it);
3. unsafe code stays denied (the workspace lint): the one file that may allow it is
   `app/src/lazy_pages.rs`, for what `wasm_split` (leptos' lazy loading) expands to.

Exit 1 with every violation listed. `--self-test` runs the check on small trees that break each
rule and on one that keeps them, so the check itself is known to fail when it should.
"""
import os
import re
import sys
import tempfile

EDGES = ("cli", "web")
REF = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")
COMMENT = re.compile(r"^\s*//")


def top_module(src, path):
    rel = os.path.relpath(path, src)
    first = rel.split(os.sep)[0]
    return first[:-3] if first.endswith(".rs") else first


def graph(src):
    edges = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            path = os.path.join(root, f)
            mod = top_module(src, path)
            if mod in ("lib", "main"):
                continue
            with open(path, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    if COMMENT.match(line):
                        continue
                    for target in REF.findall(line):
                        if target != mod:
                            edges.setdefault(mod, {}).setdefault(target, (path, n))
    return edges


def violations(src):
    found = []
    edges = graph(src)
    for mod, targets in sorted(edges.items()):
        for edge in EDGES:
            if edge in targets and mod != edge:
                path, n = targets[edge]
                found.append(f"{path}:{n}: {mod} imports the edge crate::{edge}")
    # Cycles: depth-first search over the module graph.
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in sorted(edges.get(m, {})):
            if state.get(t) == "open":
                cycle = stack[stack.index(t):] + [t]
                path, n = edges[m][t]
                found.append(f"{path}:{n}: import circle " + " -> ".join(cycle))
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m)
    return found


UNSAFE_ALLOWED = {os.path.join("app", "src", "lazy_pages.rs")}
ALLOW_UNSAFE = re.compile(r"allow\([^)]*\bunsafe_code\b")


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


def self_test():
    cases = {
        "edge imported": {"control/mod.rs": "use crate::cli::x;\n", "cli/mod.rs": "use crate::control::y;\n"},
        "web imported": {"review/mod.rs": "fn f() { crate::web::serve(); }\n"},
        "circle": {"a.rs": "use crate::b::x;\n", "b/mod.rs": "use crate::c::y;\n", "c.rs": "use crate::a::z;\n"},
    }
    ok_tree = {"cli/mod.rs": "use crate::control::y;\n", "web/mod.rs": "use crate::control::y;\n",
               "control/mod.rs": "// crate::cli is named in a comment only\nuse crate::engine::E;\n", "engine.rs": ""}
    failures = []
    for name, tree in list(cases.items()) + [("clean", ok_tree)]:
        with tempfile.TemporaryDirectory() as d:
            for rel, text in tree.items():
                os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
                with open(os.path.join(d, rel), "w") as fh:
                    fh.write(text)
            v = violations(d)
            if (name == "clean") == bool(v):
                failures.append(f"self-test {name}: {v or 'no violation found'}")
    with tempfile.TemporaryDirectory() as d:
        for rel, text in {"app/src/lazy_pages.rs": "#![allow(unsafe_code)]\n",
                          "server/src/x.rs": "// #[allow(unsafe_code)] in a comment\n"}.items():
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w") as fh:
                fh.write(text)
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
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server", "src")
    if "--graph" in sys.argv:
        for mod, targets in sorted(graph(os.path.normpath(src)).items()):
            print(f"{mod} -> {', '.join(sorted(targets))}")
    found = violations(os.path.normpath(src)) + unsafe_allowances(os.path.normpath(os.path.join(src, "..", "..")))
    for v in found:
        print(v)
    mods = graph(os.path.normpath(src))
    print(f"layout: {len(mods)} modules, {sum(len(t) for t in mods.values())} import edges, {len(found)} violations")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
