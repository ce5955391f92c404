//! Internal errors for the browser: the detail (database text, paths, an engine's answer) is
//! logged with the request's id, and the browser gets a generic message that names the id,
//! so an operator can find the log line without the console leaking its internals.

use app::api::ApiError;

tokio::task_local! {
    /// The id of the HTTP request being served (set by the web layer's request-id middleware).
    pub static REQUEST_ID: String;
}

/// A short random id for a request (or for an error outside one).
pub fn new_id() -> String {
    use rand::RngCore;
    let mut b = [0u8; 6];
    rand::rng().fill_bytes(&mut b);
    hex::encode(b)
}

/// The id of the request being served, or a fresh one outside a request.
pub fn request_id() -> String {
    REQUEST_ID.try_with(Clone::clone).unwrap_or_else(|_| new_id())
}

/// Logs `e` with the request id and returns the generic error the browser sees.
pub fn internal(e: impl std::fmt::Display) -> ApiError {
    let id = request_id();
    tracing::error!(request_id = %id, error = %e, "internal error");
    ApiError::Internal(format!(
        "the console could not complete this (request {id}; details in its log)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_browser_sees_the_request_id_not_the_detail() {
        let e = REQUEST_ID
            .scope("abc123".to_string(), async {
                internal("no such table: secrets at /var/lib/x.db")
            })
            .await;
        let ApiError::Internal(text) = e else { panic!("{e:?}") };
        assert!(text.contains("abc123"), "{text}");
        assert!(!text.contains("secrets") && !text.contains("/var/lib"), "{text}");
    }
}
