//! The browser bundle under `/pkg/`: compiled into a release binary (content-hashed names,
//! precompressed, cached for good), or read from `target/site` in a development build.
//!
//! A release runs from anywhere: no checkout, no site directory. Each file is stored three
//! times (plain, brotli, gzip) so nothing is compressed per request; the names carry the
//! content hash, so a browser keeps them for a year and a new release is a new name.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use std::path::PathBuf;

/// One file of the embedded bundle.
#[derive(Debug)]
pub struct Asset {
    /// Relative to the site root, `pkg/…`.
    pub path: &'static str,
    pub body: &'static [u8],
    pub br: Option<&'static [u8]>,
    pub gz: Option<&'static [u8]>,
}

include!(concat!(env!("OUT_DIR"), "/embedded_site.rs"));

/// Where the bundle comes from.
#[derive(Clone, Debug)]
pub enum Site {
    /// Compiled in (`scripts/dist.sh`): a sorted table and the entry points' names.
    Embedded {
        files: &'static [Asset],
        urls: app::AssetUrls,
    },
    /// A directory with `pkg/` (`scripts/build-site.sh`), read per request, never cached.
    Dir(PathBuf),
}

impl Site {
    /// The embedded bundle when this binary has one, else `dir`.
    pub fn detect(dir: PathBuf) -> Self {
        match EMBEDDED_URLS {
            Some([bundle, css, charts]) if !EMBEDDED.is_empty() => Self::Embedded {
                files: EMBEDDED,
                urls: app::AssetUrls {
                    pkg_dir: bundle.trim_start_matches('/').to_string(),
                    css: css.into(),
                    charts: charts.into(),
                },
            },
            _ => Self::Dir(dir),
        }
    }

    pub fn urls(&self) -> app::AssetUrls {
        match self {
            Self::Embedded { urls, .. } => urls.clone(),
            Self::Dir(_) => app::AssetUrls::unhashed(),
        }
    }

    /// The directory leptos is told about (its 404 handler looks there for files).
    pub fn root(&self) -> PathBuf {
        match self {
            Self::Embedded { .. } => PathBuf::from("/nonexistent/roofline-site"),
            Self::Dir(d) => d.clone(),
        }
    }

    /// Whether the bundle is compiled in (reported in `roofline_build_info`).
    pub fn embedded(&self) -> bool {
        matches!(self, Self::Embedded { .. })
    }
}

/// The content type by extension; only what the bundle holds.
fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, e)| e) {
        Some("js") => "text/javascript; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("css") => "text/css; charset=utf-8",
        // A language's messages (Fluent), fetched by the browser's bundle.
        Some("ftl") => "text/plain; charset=utf-8",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("html") => "text/html; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Which stored encodings the client takes, best first (`br`, then `gzip`). A coding listed
/// with `q=0` is refused; `*` stands for any coding not listed.
pub fn accepted(headers: &HeaderMap) -> (bool, bool) {
    let mut br = None;
    let mut gz = None;
    let mut any = None;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(v) = value.to_str() else { continue };
        for item in v.split(',').take(32) {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            let q_zero = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            match coding.as_str() {
                "br" => br = Some(!q_zero),
                "gzip" | "x-gzip" => gz = Some(!q_zero),
                "*" => any = Some(!q_zero),
                _ => {}
            }
        }
    }
    (br.or(any).unwrap_or(false), gz.or(any).unwrap_or(false))
}

/// The response for one embedded file: the smallest stored encoding the client accepts.
pub fn embedded_response(files: &[Asset], path: &str, headers: &HeaderMap, head: bool) -> Response {
    let Ok(i) = files.binary_search_by(|a| a.path.cmp(path)) else {
        return (StatusCode::NOT_FOUND, "no such file in the bundle\n").into_response();
    };
    let file = &files[i];
    let (take_br, take_gz) = accepted(headers);
    let (body, encoding) = match (file.br, file.gz) {
        (Some(b), _) if take_br => (b, Some("br")),
        (_, Some(g)) if take_gz => (g, Some("gzip")),
        _ => (file.body, None),
    };
    let mut resp = Response::new(if head { Body::empty() } else { Body::from(body) });
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type(path)));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    if let Some(e) = encoding {
        h.insert(header::CONTENT_ENCODING, HeaderValue::from_static(e));
    }
    resp
}

/// A file of a development bundle: confined to `dir/pkg`, never cached (it changes with every
/// build).
async fn dir_response(dir: &std::path::Path, rel: &str, head: bool) -> Response {
    let safe = rel
        .split('/')
        .all(|c| !c.is_empty() && c != "." && c != ".." && !c.contains('\\') && !c.contains('\0'));
    if !safe || rel.len() > 512 {
        return (StatusCode::NOT_FOUND, "no such file in the bundle\n").into_response();
    }
    let file = dir.join("pkg").join(rel);
    let Ok(bytes) = tokio::fs::read(&file).await else {
        return (StatusCode::NOT_FOUND, "no such file in the bundle\n").into_response();
    };
    let len = bytes.len();
    let mut resp = Response::new(if head { Body::empty() } else { Body::from(bytes) });
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type(rel)));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    resp
}

/// `GET /pkg/{*path}`.
pub async fn serve(
    State(site): State<std::sync::Arc<Site>>,
    method: Method,
    Path(rel): Path<String>,
    headers: HeaderMap,
) -> Response {
    let head = method == Method::HEAD;
    match &*site {
        Site::Embedded { files, .. } => embedded_response(files, &format!("pkg/{rel}"), &headers, head),
        Site::Dir(dir) => dir_response(dir, &rel, head).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILES: &[Asset] = &[
        Asset {
            path: "pkg/a.1.js",
            body: b"plain",
            br: Some(b"b"),
            gz: Some(b"gz"),
        },
        Asset {
            path: "pkg/b.wasm",
            body: b"wasm!",
            br: None,
            gz: Some(b"g"),
        },
    ];

    fn get(path: &str, accept: &str) -> Response {
        let mut h = HeaderMap::new();
        if !accept.is_empty() {
            h.insert(header::ACCEPT_ENCODING, HeaderValue::from_str(accept).unwrap());
        }
        embedded_response(FILES, path, &h, false)
    }

    fn encoding(r: &Response) -> Option<&str> {
        r.headers().get(header::CONTENT_ENCODING).map(|v| v.to_str().unwrap())
    }

    #[test]
    fn the_smallest_accepted_encoding_is_sent_and_cached_for_good() {
        let r = get("pkg/a.1.js", "gzip, deflate, br, zstd");
        assert_eq!(encoding(&r), Some("br"));
        assert_eq!(r.headers()[header::CONTENT_LENGTH], "1");
        assert_eq!(
            r.headers()[header::CACHE_CONTROL],
            "public, max-age=31536000, immutable"
        );
        assert_eq!(r.headers()[header::VARY], "accept-encoding");
        assert_eq!(r.headers()[header::CONTENT_TYPE], "text/javascript; charset=utf-8");
        assert_eq!(encoding(&get("pkg/a.1.js", "gzip")), Some("gzip"));
        assert_eq!(encoding(&get("pkg/a.1.js", "")), None);
        assert_eq!(encoding(&get("pkg/a.1.js", "br;q=0, gzip;q=0.5")), Some("gzip"));
        assert_eq!(encoding(&get("pkg/a.1.js", "*")), Some("br"));
        assert_eq!(encoding(&get("pkg/a.1.js", "*, br;q=0")), Some("gzip"));
        assert_eq!(encoding(&get("pkg/a.1.js", "identity")), None);
        // No brotli copy stored: gzip.
        assert_eq!(encoding(&get("pkg/b.wasm", "br, gzip")), Some("gzip"));
        assert_eq!(
            get("pkg/b.wasm", "br").headers()[header::CONTENT_TYPE],
            "application/wasm"
        );
    }

    #[test]
    fn unknown_and_escaping_paths_are_not_found() {
        assert_eq!(get("pkg/nope.js", "br").status(), StatusCode::NOT_FOUND);
        assert_eq!(get("pkg/../Cargo.toml", "").status(), StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn a_development_bundle_stays_inside_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pkg/snippets")).unwrap();
        std::fs::write(dir.path().join("pkg/snippets/x.js"), "x").unwrap();
        std::fs::write(dir.path().join("secret"), "s").unwrap();
        let ok = dir_response(dir.path(), "snippets/x.js", false).await;
        assert_eq!(ok.status(), StatusCode::OK);
        assert_eq!(ok.headers()[header::CACHE_CONTROL], "no-cache");
        for bad in [
            "../secret",
            "snippets/../../secret",
            "/etc/passwd",
            "",
            "snippets//x.js",
            "a\\b",
        ] {
            assert_eq!(
                dir_response(dir.path(), bad, false).await.status(),
                StatusCode::NOT_FOUND,
                "{bad}"
            );
        }
    }
}
