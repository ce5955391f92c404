//! Build script: migrations are compiled in (rerun when they change), and a release embeds the
//! browser bundle. `scripts/dist.sh` prepares the bundle in a directory (content-hashed names,
//! each file with its `.br` and `.gz`, and `assets.txt` naming the entry points) and builds
//! with `ROOFLINE_EMBED_SITE` pointing at it; without it the binary embeds nothing and serves
//! `target/site` from disk (a development build).
#![expect(
    clippy::expect_used,
    reason = "a build script reports a broken bundle by panicking with what is wrong"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=migrations/sqlite");
    println!("cargo:rerun-if-changed=migrations/postgres");
    println!("cargo:rerun-if-env-changed=ROOFLINE_EMBED_SITE");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let code = match std::env::var_os("ROOFLINE_EMBED_SITE") {
        Some(dir) if !dir.is_empty() => embed(Path::new(&dir)),
        _ => "pub const EMBEDDED: &[Asset] = &[];\npub const EMBEDDED_URLS: Option<[&str; 3]> = None;\n".to_string(),
    };
    std::fs::write(out.join("embedded_site.rs"), code).expect("writing embedded_site.rs");
}

/// The table of embedded files, sorted by path (looked up by binary search).
fn embed(dir: &Path) -> String {
    let dir = dir
        .canonicalize()
        .unwrap_or_else(|e| panic!("ROOFLINE_EMBED_SITE {}: {e}", dir.display()));
    println!("cargo:rerun-if-changed={}", dir.display());
    let urls = std::fs::read_to_string(dir.join("assets.txt"))
        .unwrap_or_else(|e| panic!("{}/assets.txt: {e} (made by scripts/dist.sh)", dir.display()));
    println!("cargo:rerun-if-changed={}", dir.join("assets.txt").display());
    let find = |key: &str| -> String {
        urls.lines()
            .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('\t')))
            .unwrap_or_else(|| panic!("assets.txt names no {key}"))
            .trim()
            .to_string()
    };
    let mut files = Vec::new();
    walk(&dir, &dir, &mut files);
    files.sort();
    let mut code = String::from("pub const EMBEDDED: &[Asset] = &[\n");
    for rel in &files {
        let abs = dir.join(rel);
        println!("cargo:rerun-if-changed={}", abs.display());
        let side = |ext: &str| {
            let p = PathBuf::from(format!("{}.{ext}", abs.display()));
            if p.exists() {
                format!("Some(include_bytes!({:?}))", p.display().to_string())
            } else {
                "None".to_string()
            }
        };
        let _ = writeln!(
            code,
            "    Asset {{ path: {:?}, body: include_bytes!({:?}), br: {}, gz: {} }},",
            rel,
            abs.display().to_string(),
            side("br"),
            side("gz")
        );
    }
    code.push_str("];\n");
    let _ = writeln!(
        code,
        "pub const EMBEDDED_URLS: Option<[&str; 3]> = Some([{:?}, {:?}, {:?}]);",
        find("bundle"),
        find("css"),
        find("charts")
    );
    code
}

/// Every file under `pkg/` but the compressed copies, as paths relative to `root` with `/`.
fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.expect("reading the bundle directory");
        let path = entry.path();
        let kind = entry.file_type().expect("file type");
        if kind.is_dir() {
            walk(root, &path, out);
        } else if kind.is_file() {
            let rel = path
                .strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .replace('\\', "/");
            if rel.starts_with("pkg/") && !rel.ends_with(".br") && !rel.ends_with(".gz") {
                out.push(rel);
            }
        }
    }
}
