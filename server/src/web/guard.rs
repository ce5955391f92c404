//! Request guards for a console without accounts: writes must come from our own origin.

use axum::extract::Request;
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Whether a request is a write that another site made the browser send.
pub fn is_cross_origin_write(
    method: &Method,
    origin: Option<&str>,
    host: Option<&str>,
    fetch_site: Option<&str>,
) -> bool {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return false;
    }
    if matches!(fetch_site, Some("cross-site") | Some("same-site")) {
        return true;
    }
    match (origin, host) {
        (Some("null"), _) => true,
        (Some(origin), Some(host)) => {
            let origin_host = origin.split_once("://").map(|(_, h)| h).unwrap_or(origin);
            !origin_host.eq_ignore_ascii_case(host)
        }
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// The host (and port) the client addressed: the `Host` header in HTTP/1.1, the
/// `:authority` pseudo-header in HTTP/2, which hyper puts in the URI rather than the headers.
pub fn requested_authority<'a>(headers: &'a HeaderMap, uri: &'a Uri) -> Option<&'a str> {
    match headers.get(header::HOST) {
        Some(host) => host.to_str().ok(),
        None => uri.authority().map(|a| a.as_str()),
    }
}

/// Whether the request carries `Authorization: Bearer TOKEN` (machine endpoints: the
/// Alertmanager webhook, Prometheus service discovery). Comparing digests keeps the time
/// independent of where the two differ.
pub fn bearer_matches(headers: &HeaderMap, token: &str) -> bool {
    use sha2::Digest;
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| sha2::Sha256::digest(t.as_bytes()) == sha2::Sha256::digest(token.as_bytes()))
}

/// The check of a machine endpoint: the refusal to send, if any — off (403, naming the key to
/// set) without a configured token, 401 unless the request carries it.
pub fn machine_token(configured: Option<&str>, headers: &HeaderMap, what: &str, key: &str) -> Option<Response> {
    let Some(token) = configured else {
        return Some(
            (
                StatusCode::FORBIDDEN,
                format!("{what} is off: set [auth] {key} in roofline.toml"),
            )
                .into_response(),
        );
    };
    if !bearer_matches(headers, token) {
        return Some(
            (
                StatusCode::UNAUTHORIZED,
                format!("{what}: bearer token missing or wrong"),
            )
                .into_response(),
        );
    }
    None
}

/// Refuses cross-origin writes with 403 before any handler runs.
pub async fn refuse_cross_origin_writes(req: Request, next: Next) -> Response {
    let h = req.headers();
    let get = |name: header::HeaderName| h.get(name).and_then(|v| v.to_str().ok());
    if is_cross_origin_write(
        req.method(),
        get(header::ORIGIN),
        requested_authority(h, req.uri()),
        h.get("sec-fetch-site").and_then(|v| v.to_str().ok()),
    ) {
        return (StatusCode::FORBIDDEN, "cross-origin writes are refused").into_response();
    }
    next.run(req).await
}

/// The host names a request may name: IP addresses always (DNS rebinding needs a name),
/// `localhost`, the machine's hostname, and `[auth] allowed_hosts`.
#[derive(Clone, Debug)]
pub struct HostNames(pub std::sync::Arc<Vec<String>>);

impl HostNames {
    pub fn new(configured: &[String]) -> Self {
        let mut names: Vec<String> = configured.iter().map(|n| n.trim().to_ascii_lowercase()).collect();
        names.push("localhost".into());
        if let Ok(h) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
            let h = h.trim().to_ascii_lowercase();
            if !h.is_empty() {
                names.push(h);
            }
        }
        Self(std::sync::Arc::new(names))
    }

    /// Whether a `Host` header's value names this console.
    pub fn allows(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        // `[v6]:port`, `v4:port`, `name:port`.
        let name = if let Some(rest) = host.strip_prefix('[') {
            return rest
                .split(']')
                .next()
                .is_some_and(|ip| ip.parse::<std::net::Ipv6Addr>().is_ok());
        } else {
            host.rsplit_once(':').map_or(host.as_str(), |(n, port)| {
                if port.bytes().all(|b| b.is_ascii_digit()) {
                    n
                } else {
                    host.as_str()
                }
            })
        };
        let name = name.trim_end_matches('.');
        name.parse::<std::net::IpAddr>().is_ok() || self.0.iter().any(|n| n == name)
    }
}

/// Refuses (421) a request whose `Host` is not one of this console's names.
pub async fn allowed_host(
    axum::extract::State(names): axum::extract::State<HostNames>,
    req: Request,
    next: Next,
) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    match host {
        Some(h) if !names.allows(&h) => (
            StatusCode::MISDIRECTED_REQUEST,
            format!(
                "{h:?} is not a name of this console: add it to [auth] allowed_hosts in roofline.toml (IP addresses, localhost and this machine's hostname always work)\n"
            ),
        )
            .into_response(),
        _ => next.run(req).await,
    }
}

/// Headers on every response: no page of the console may be framed by another origin
/// (clickjacking an approve button), no content sniffing, no referrer to other sites, and over
/// the console's own HTTPS listener, HSTS (`hsts`).
pub async fn security_headers(
    axum::extract::State(hsts): axum::extract::State<bool>,
    req: Request,
    next: Next,
) -> Response {
    use axum::http::{header, HeaderValue};
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("frame-ancestors 'none'"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    if hsts {
        h.insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static("max-age=31536000"),
        );
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_origin_passes_cross_origin_fails() {
        let post = Method::POST;
        assert!(!is_cross_origin_write(
            &Method::GET,
            Some("http://evil"),
            Some("127.0.0.1:3000"),
            Some("cross-site")
        ));
        assert!(!is_cross_origin_write(
            &post,
            Some("http://127.0.0.1:3000"),
            Some("127.0.0.1:3000"),
            Some("same-origin")
        ));
        assert!(!is_cross_origin_write(&post, None, Some("127.0.0.1:3000"), None));
        assert!(is_cross_origin_write(
            &post,
            Some("http://evil.example"),
            Some("127.0.0.1:3000"),
            None
        ));
        assert!(is_cross_origin_write(
            &post,
            None,
            Some("127.0.0.1:3000"),
            Some("cross-site")
        ));
        assert!(is_cross_origin_write(&post, Some("null"), Some("127.0.0.1:3000"), None));
    }

    #[test]
    fn the_authority_comes_from_host_or_from_the_http2_uri() {
        let mut headers = HeaderMap::new();
        let h2: Uri = "https://console.example:8443/login".parse().unwrap();
        assert_eq!(requested_authority(&headers, &h2), Some("console.example:8443"));
        assert_eq!(requested_authority(&headers, &"/login".parse().unwrap()), None);
        headers.insert(header::HOST, "127.0.0.1:3000".parse().unwrap());
        assert_eq!(requested_authority(&headers, &h2), Some("127.0.0.1:3000"));
    }

    #[test]
    fn a_host_is_an_address_or_one_of_the_consoles_names() {
        let names = HostNames(std::sync::Arc::new(vec!["gpu-a.internal".into(), "localhost".into()]));
        for ok in [
            "127.0.0.1:3000",
            "10.0.0.5",
            "[::1]:3000",
            "localhost:3000",
            "GPU-A.internal:443",
            "gpu-a.internal.",
        ] {
            assert!(names.allows(ok), "{ok}");
        }
        for refused in [
            "evil.example:3000",
            "gpu-a.internal.evil.example",
            "rebind.127.0.0.1.nip.io:3000",
            "[evil]:3000",
        ] {
            assert!(!names.allows(refused), "{refused}");
        }
    }
}
