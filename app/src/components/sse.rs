//! One server-sent event stream per page, decoded as JSON into a callback.
//!
//! Only the browser opens the stream; the server render shows the data it fetched itself. The
//! stream is closed when the component that opened it goes away.

use crate::decode::FromWire;

/// Subscribes to `url` (re-subscribing when it changes) and calls `on_event` with each
/// message's JSON payload. Malformed messages are skipped: the next one carries full state.
pub fn use_event_stream<T, U, F>(url: U, on_event: F)
where
    T: FromWire + 'static,
    U: Fn() -> String + Send + Sync + 'static,
    F: Fn(T) + Clone + 'static,
{
    #[cfg(feature = "hydrate")]
    {
        use leptos::prelude::*;
        use send_wrapper::SendWrapper;
        use wasm_bindgen::{closure::Closure, JsCast};
        let current: StoredValue<Option<SendWrapper<web_sys::EventSource>>> = StoredValue::new(None);
        Effect::new(move |_| {
            let url = url();
            if let Some(old) = current.try_update_value(|c| c.take()).flatten() {
                old.close();
            }
            let Ok(source) = web_sys::EventSource::new(&url) else {
                return;
            };
            let handler = on_event.clone();
            let callback = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
                if let Some(text) = ev.data().as_string() {
                    if let Ok(value) = crate::api::wire::decode::<T>(text.as_bytes()) {
                        handler(value);
                    }
                }
            });
            source.set_onmessage(Some(callback.as_ref().unchecked_ref()));
            callback.forget();
            current.set_value(Some(SendWrapper::new(source)));
        });
        on_cleanup(move || {
            if let Some(source) = current.try_update_value(|c| c.take()).flatten() {
                source.close();
            }
        });
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (url, on_event);
    }
}

/// Calls `on_change` each time the version that `pick` takes from the record stream
/// ([`crate::api::RECORDS_STREAM`]) moves, and once when the stream opens, which catches up on
/// a write between the page's render and its subscription. The pages that show incidents and
/// changes refetch through their server functions here instead of polling.
pub fn use_record_changes<F>(pick: fn(&crate::api::RecordVersions) -> i64, on_change: F)
where
    F: Fn() + Clone + Send + Sync + 'static,
{
    use leptos::prelude::*;
    let last: StoredValue<Option<i64>> = StoredValue::new(None);
    use_event_stream(
        || crate::api::RECORDS_STREAM.to_string(),
        move |v: crate::api::RecordVersions| {
            let now = pick(&v);
            if last.get_value() != Some(now) {
                last.set_value(Some(now));
                on_change();
            }
        },
    );
}
