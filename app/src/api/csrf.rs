//! The browser side of CSRF protection: every server-function call carries the session's
//! CSRF token (read from the `roofline_csrf` cookie, which scripts on our own origin can read
//! and other sites cannot) in the `x-csrf-token` header. The server compares it with the
//! token stored for the session behind the HttpOnly session cookie.

use leptos::server_fn::client::{browser::BrowserClient, Client};
use leptos::server_fn::error::FromServerFnError;
use leptos::server_fn::request::browser::BrowserRequest;
use leptos::server_fn::response::browser::BrowserResponse;
use std::future::Future;

/// The header the server checks.
pub const HEADER: &str = "x-csrf-token";
/// The readable cookie that carries the token to scripts.
pub const COOKIE: &str = "roofline_csrf";
/// Its name over HTTPS: the `__Host-` prefix makes the browser refuse it unless it is
/// Secure, for the whole host and set by the host itself (a sibling subdomain cannot plant it).
pub const HOST_COOKIE: &str = "__Host-roofline_csrf";

/// [`BrowserClient`] plus the CSRF header.
pub struct CsrfClient;

/// The token from `document.cookie`, empty when signed out (the server then refuses writes).
pub fn token() -> String {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        let cookies = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.dyn_into::<web_sys::HtmlDocument>().ok())
            .and_then(|d| d.cookie().ok())
            .unwrap_or_default();
        cookie_value(&cookies, HOST_COOKIE)
            .or_else(|| cookie_value(&cookies, COOKIE))
            .unwrap_or_default()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        String::new()
    }
}

/// One cookie's value out of a `Cookie` header or `document.cookie`.
pub fn cookie_value(cookies: &str, name: &str) -> Option<String> {
    cookies.split(';').find_map(|kv| {
        let (k, v) = kv.trim().split_once('=')?;
        (k == name).then(|| v.to_string())
    })
}

impl<E, IS, OS> Client<E, IS, OS> for CsrfClient
where
    E: FromServerFnError,
    IS: FromServerFnError,
    OS: FromServerFnError,
{
    type Request = BrowserRequest;
    type Response = BrowserResponse;

    fn send(req: Self::Request) -> impl Future<Output = Result<Self::Response, E>> + Send {
        req.headers().set(HEADER, &token());
        <BrowserClient as Client<E, IS, OS>>::send(req)
    }

    fn open_websocket(
        path: &str,
    ) -> impl Future<
        Output = Result<
            (
                impl futures::Stream<Item = Result<leptos::server_fn::Bytes, leptos::server_fn::Bytes>> + Send + 'static,
                impl futures::Sink<leptos::server_fn::Bytes> + Send + 'static,
            ),
            E,
        >,
    > + Send {
        <BrowserClient as Client<E, IS, OS>>::open_websocket(path)
    }

    fn spawn(future: impl Future<Output = ()> + Send + 'static) {
        <BrowserClient as Client<E, IS, OS>>::spawn(future)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_one_cookie() {
        let c = "lang=ru; roofline_csrf=abc123; other=x=y";
        assert_eq!(super::cookie_value(c, "roofline_csrf").as_deref(), Some("abc123"));
        assert_eq!(super::cookie_value(c, "other").as_deref(), Some("x=y"));
        assert_eq!(super::cookie_value(c, "missing"), None);
    }
}
