//! How server functions' answers and resources' hydration data are decoded in the browser:
//! the same JSON on the wire, read in two steps (text → [`serde_json::Value`] → the type,
//! through [`FromWire`]) rather than by serde straight from the text.
//!
//! Why: `serde_json::from_str::<T>` inlines the whole JSON parser (whitespace, escapes, number
//! parsing, map access) into each type's visitor, 5–10 KB of wasm per struct; decoding from a
//! `Value` shares one parser. serde's visitor from a `Value` still inlined every field's
//! decoding into each type (2–6 KB each); a derived [`FromWire`] is one shared call per field
//! (`crate::decode`). The console decodes some sixty answer types, and this was the largest
//! share of every page's wasm after the framework (BENCHMARKS.md, "Page weight"). The wire
//! format is unchanged (the server writes it with serde), so the JSON routes, the CLI and
//! older browsers' tabs read the same bytes.

use crate::decode::{FromWire, WireError};
use serde::Serialize;

/// Why an answer could not be read: not JSON, or not the shape of the type.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Shape(#[from] WireError),
}

/// Decodes JSON text into `T` by way of a [`serde_json::Value`].
pub fn decode<T: FromWire>(text: &[u8]) -> Result<T, DecodeError> {
    Ok(T::from_wire(serde_json::from_slice::<serde_json::Value>(text)?)?)
}

/// The server-function encoding: `application/json`, as [`leptos::server_fn::codec::Json`].
pub struct WireEncoding;

impl leptos::server_fn::ContentType for WireEncoding {
    const CONTENT_TYPE: &'static str = "application/json";
}

impl leptos::server_fn::FormatType for WireEncoding {
    const FORMAT_TYPE: leptos::server_fn::Format = leptos::server_fn::Format::Text;
}

impl<T: Serialize> leptos::server_fn::Encodes<T> for WireEncoding {
    type Error = serde_json::Error;

    fn encode(output: &T) -> Result<leptos::server_fn::Bytes, Self::Error> {
        serde_json::to_vec(output).map(leptos::server_fn::Bytes::from)
    }
}

impl<T: FromWire> leptos::server_fn::Decodes<T> for WireEncoding {
    type Error = DecodeError;

    fn decode(bytes: leptos::server_fn::Bytes) -> Result<T, Self::Error> {
        decode(&bytes)
    }
}

/// A server function's output encoding: `#[server(output = Wire, …)]`.
pub type Wire = leptos::server_fn::codec::Post<WireEncoding>;

/// The codec of the resources' hydration data (what the server rendered, read back by the
/// browser instead of asking again).
pub struct WireCodec;

impl<T: Serialize> leptos::server::codee::Encoder<T> for WireCodec {
    type Error = serde_json::Error;
    type Encoded = String;

    fn encode(val: &T) -> Result<String, Self::Error> {
        serde_json::to_string(val)
    }
}

impl<T: FromWire> leptos::server::codee::Decoder<T> for WireCodec {
    type Error = DecodeError;
    type Encoded = str;

    fn decode(val: &str) -> Result<T, Self::Error> {
        decode(val.as_bytes())
    }
}

/// A page's data: a resource whose hydration data is decoded as above.
pub type Data<T> = leptos::prelude::Resource<T, WireCodec>;

/// A [`Data`] that loads with `fetcher` whenever `source` changes (as `Resource::new`).
#[track_caller]
pub fn data<T, S, Fut>(
    source: impl Fn() -> S + Send + Sync + 'static,
    fetcher: impl Fn(S) -> Fut + Send + Sync + 'static,
) -> Data<T>
where
    T: Serialize + FromWire + Send + Sync + 'static,
    S: PartialEq + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = T> + Send + 'static,
{
    Data::new_with_options(source, fetcher, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize, crate::decode::FromWire)]
    struct Row {
        name: String,
        #[serde(default)]
        n: Option<f64>,
    }

    #[test]
    fn decodes_as_serde_json_does() {
        let text = br#"{"name":"a\u00e9","n":1.5,"extra":[1,2]}"#;
        let want: Row = serde_json::from_slice(text).unwrap();
        assert_eq!(decode::<Row>(text).unwrap(), want);
        assert_eq!(decode::<Row>(br#"{"name":"b"}"#).unwrap().n, None);
    }

    /// Every Rust file under `app/src/<dir>`, with its text.
    fn sources(dir: &str) -> Vec<(std::path::PathBuf, String)> {
        let mut out = Vec::new();
        let mut todo = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir)];
        while let Some(d) = todo.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    todo.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    out.push((p, text));
                }
            }
        }
        out
    }

    /// One answer type decoded straight from text puts its own JSON parser back in the wasm:
    /// every server function answers in [`Wire`], every page loads through [`data`].
    #[test]
    fn every_server_function_and_page_resource_decodes_through_a_value() {
        for (path, text) in sources("api") {
            for (i, line) in text.lines().enumerate() {
                let t = line.trim_start();
                if t.starts_with("#[server(") && t.contains("endpoint = ") {
                    assert!(
                        t.contains("output = crate::api::wire::Wire"),
                        "{}:{}: {t}",
                        path.display(),
                        i + 1
                    );
                }
            }
        }
        for (path, text) in sources("pages").into_iter().chain(sources("components")) {
            for (i, line) in text.lines().enumerate() {
                assert!(
                    !line.contains("Resource::new") && !line.contains("serde_json::from_str"),
                    "{}:{}: use crate::api::wire::data / wire::decode: {line}",
                    path.display(),
                    i + 1
                );
            }
        }
    }

    #[test]
    fn bad_text_and_wrong_shapes_are_errors() {
        assert!(decode::<Row>(b"{\"name\":").is_err());
        assert!(decode::<Row>(br#"{"name":3}"#).is_err());
        assert!(decode::<Row>(b"").is_err());
    }
}
