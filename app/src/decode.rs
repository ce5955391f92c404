//! Reading the console's own JSON answers in the browser: [`FromWire`], derived for every
//! answer type (`#[derive(crate::decode::FromWire)]`, `wire_derive`) from the type's serde
//! attributes, so it reads what the server wrote with serde exactly as serde's derive would.
//!
//! Why not serde's `Deserialize` here: a type's serde decoder is a visitor generic over the
//! deserializer, every field's decoding inlined into it; in the wasm that was 2–6 KB per
//! answer type and up to a third of a page group's code (BENCHMARKS.md, "Page weight"). A
//! derived [`FromWire`] is one call per field to the helpers below, which exist once per
//! field *type*. The server keeps serde for everything it reads (arguments, files, TOML).
//!
//! The answers are parsed into a `serde_json::Value` first (`api::wire::decode`) and taken
//! apart by value: strings move, nothing is copied twice.

use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};

pub use wire_derive::FromWire;

/// What was wrong and where (`rows.3.state: unknown "sleepy" (expected healthy, …)`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{message}", path_prefix(.path))]
pub struct WireError {
    /// Innermost first: each level adds its key on the way out.
    path: Vec<String>,
    message: String,
}

fn path_prefix(path: &[String]) -> String {
    if path.is_empty() {
        return String::new();
    }
    let mut out: Vec<&str> = path.iter().map(String::as_str).collect();
    out.reverse();
    format!("{}: ", out.join("."))
}

impl WireError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            path: Vec::new(),
            message: message.into(),
        }
    }

    /// `expected {what}` for a value of the wrong kind.
    pub fn expected(what: &str, of: &str) -> Self {
        Self::new(format!("expected {what} ({of})"))
    }

    /// A variant (or tag) no variant of the type is called.
    pub fn unknown(found: &str, expected: &str) -> Self {
        Self::new(format!("unknown variant `{found}` (expected one of {expected})"))
    }

    /// The same error, one level out (a field's key or an index).
    #[must_use]
    pub fn at(mut self, key: &str) -> Self {
        self.path.push(key.to_string());
        self
    }
}

/// A type the console's answers are read into.
pub trait FromWire: Sized {
    fn from_wire(v: Value) -> Result<Self, WireError>;

    /// What a field that is not there reads as: an error, but `None` for an `Option` (as
    /// serde's derive reads a missing optional field).
    fn missing() -> Result<Self, WireError> {
        Err(WireError::new("missing"))
    }
}

/// The object a struct is read from.
pub fn object(v: Value, what: &str) -> Result<Map<String, Value>, WireError> {
    match v {
        Value::Object(m) => Ok(m),
        _ => Err(WireError::expected("an object", what)),
    }
}

/// The array a tuple is read from, of exactly `n` items.
pub fn array(v: Value, n: usize, what: &str) -> Result<Vec<Value>, WireError> {
    match v {
        Value::Array(items) if items.len() == n => Ok(items),
        _ => Err(WireError::expected(&format!("an array of {n}"), what)),
    }
}

/// The next item of a tuple's array (its length was checked).
pub fn next<T: FromWire>(items: &mut std::vec::IntoIter<Value>) -> Result<T, WireError> {
    T::from_wire(items.next().unwrap_or(Value::Null))
}

/// A unit struct or variant's `null`.
pub fn unit(v: Value, what: &str) -> Result<(), WireError> {
    match v {
        Value::Null => Ok(()),
        _ => Err(WireError::expected("null", what)),
    }
}

/// A field: required, but `None` when an `Option` is missing.
#[inline(never)]
pub fn field<T: FromWire>(m: &mut Map<String, Value>, key: &str) -> Result<T, WireError> {
    match m.remove(key) {
        Some(v) => T::from_wire(v),
        None => T::missing(),
    }
    .map_err(|e| e.at(key))
}

/// A `#[serde(default)]` field: its type's default when missing.
#[inline(never)]
pub fn field_or_default<T: FromWire + Default>(m: &mut Map<String, Value>, key: &str) -> Result<T, WireError> {
    match m.remove(key) {
        Some(v) => T::from_wire(v).map_err(|e| e.at(key)),
        None => Ok(T::default()),
    }
}

/// A field of a `#[serde(default)]` struct: the struct's default's when missing.
pub fn field_or<T: FromWire>(m: &mut Map<String, Value>, key: &str, default: T) -> Result<T, WireError> {
    match m.remove(key) {
        Some(v) => T::from_wire(v).map_err(|e| e.at(key)),
        None => Ok(default),
    }
}

impl FromWire for Value {
    fn from_wire(v: Value) -> Result<Self, WireError> {
        Ok(v)
    }
}

impl FromWire for () {
    fn from_wire(v: Value) -> Result<Self, WireError> {
        unit(v, "()")
    }
}

impl FromWire for bool {
    fn from_wire(v: Value) -> Result<Self, WireError> {
        v.as_bool().ok_or_else(|| WireError::expected("true or false", "bool"))
    }
}

impl FromWire for String {
    fn from_wire(v: Value) -> Result<Self, WireError> {
        match v {
            Value::String(s) => Ok(s),
            _ => Err(WireError::expected("a string", "String")),
        }
    }
}

/// Integers as serde_json reads them: a JSON integer in the type's range (not `1.0`).
macro_rules! integers {
    ($($t:ty),*) => {$(
        impl FromWire for $t {
            fn from_wire(v: Value) -> Result<Self, WireError> {
                let n = v.as_number().ok_or_else(|| WireError::expected("a number", stringify!($t)))?;
                n.as_u64()
                    .and_then(|x| <$t>::try_from(x).ok())
                    .or_else(|| n.as_i64().and_then(|x| <$t>::try_from(x).ok()))
                    .ok_or_else(|| WireError::expected("an integer in range", stringify!($t)))
            }
        }
    )*};
}
integers!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

impl FromWire for f64 {
    fn from_wire(v: Value) -> Result<Self, WireError> {
        v.as_f64().ok_or_else(|| WireError::expected("a number", "f64"))
    }
}

impl FromWire for f32 {
    fn from_wire(v: Value) -> Result<Self, WireError> {
        // serde_json narrows the same way.
        f64::from_wire(v).map(|x| x as f32)
    }
}

impl<T: FromWire> FromWire for Option<T> {
    fn from_wire(v: Value) -> Result<Self, WireError> {
        match v {
            Value::Null => Ok(None),
            v => T::from_wire(v).map(Some),
        }
    }

    fn missing() -> Result<Self, WireError> {
        Ok(None)
    }
}

/// serde's `Result`: `{"Ok": value}` or `{"Err": error}` (a resource's data).
impl<T: FromWire, E: FromWire> FromWire for Result<T, E> {
    fn from_wire(v: Value) -> Result<Self, WireError> {
        let m = object(v, "a result")?;
        let mut entries = m.into_iter();
        match (entries.next(), entries.next()) {
            (Some((k, v)), None) if k == "Ok" => T::from_wire(v).map(Ok).map_err(|e| e.at("Ok")),
            (Some((k, v)), None) if k == "Err" => E::from_wire(v).map(Err).map_err(|e| e.at("Err")),
            _ => Err(WireError::expected("{\"Ok\": …} or {\"Err\": …}", "a result")),
        }
    }
}

impl<T: FromWire> FromWire for Box<T> {
    fn from_wire(v: Value) -> Result<Self, WireError> {
        T::from_wire(v).map(Box::new)
    }
}

impl<T: FromWire> FromWire for Vec<T> {
    fn from_wire(v: Value) -> Result<Self, WireError> {
        match v {
            Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, item)| T::from_wire(item).map_err(|e| e.at(&i.to_string())))
                .collect(),
            _ => Err(WireError::expected("an array", "a list")),
        }
    }
}

impl<A: FromWire, B: FromWire> FromWire for (A, B) {
    fn from_wire(v: Value) -> Result<Self, WireError> {
        let mut items = array(v, 2, "a pair")?.into_iter();
        Ok((next(&mut items)?, next(&mut items)?))
    }
}

impl<A: FromWire, B: FromWire, C: FromWire> FromWire for (A, B, C) {
    fn from_wire(v: Value) -> Result<Self, WireError> {
        let mut items = array(v, 3, "a triple")?.into_iter();
        Ok((next(&mut items)?, next(&mut items)?, next(&mut items)?))
    }
}

/// A map's key, as serde_json reads object keys: the string, or an integer written as one.
pub trait FromKey: Sized {
    fn from_key(k: String) -> Result<Self, WireError>;
}

impl FromKey for String {
    fn from_key(k: String) -> Result<Self, WireError> {
        Ok(k)
    }
}

macro_rules! integer_keys {
    ($($t:ty),*) => {$(
        impl FromKey for $t {
            fn from_key(k: String) -> Result<Self, WireError> {
                k.parse().map_err(|_| WireError::expected("an integer key", stringify!($t)))
            }
        }
    )*};
}
integer_keys!(u8, u16, u32, u64, usize, i32, i64);

fn entries<K: FromKey, V: FromWire>(v: Value) -> Result<impl Iterator<Item = Result<(K, V), WireError>>, WireError> {
    let m = object(v, "a map")?;
    Ok(m.into_iter().map(|(k, v)| {
        let value = V::from_wire(v).map_err(|e| e.at(&k))?;
        Ok((K::from_key(k)?, value))
    }))
}

impl<K: FromKey + Ord, V: FromWire> FromWire for BTreeMap<K, V> {
    fn from_wire(v: Value) -> Result<Self, WireError> {
        entries(v)?.collect()
    }
}

impl<K: FromKey + Eq + std::hash::Hash, V: FromWire> FromWire for HashMap<K, V> {
    fn from_wire(v: Value) -> Result<Self, WireError> {
        entries(v)?.collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    #[derive(Debug, PartialEq, Serialize, Deserialize, FromWire)]
    struct Row {
        name: String,
        n: Option<f64>,
        #[serde(default)]
        tags: Vec<String>,
        #[serde(rename = "the-count")]
        count: u32,
    }

    #[derive(Debug, Default, PartialEq, Serialize, Deserialize, FromWire)]
    #[serde(default)]
    struct Defaults {
        a: u8,
        b: String,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize, FromWire)]
    #[serde(rename_all = "kebab-case")]
    enum State {
        Healthy,
        KvTooSmall,
        #[serde(rename = "15m")]
        Quarter,
        Other(String),
        Shape {
            w: u32,
            h: u32,
        },
        Pair(u8, i64),
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize, FromWire)]
    #[serde(tag = "kind", rename_all = "kebab-case")]
    enum Tagged {
        Empty,
        WithFields { x: i32, label: Option<String> },
        Wrapped(Defaults),
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize, FromWire)]
    struct Newtype(Vec<u16>);

    #[derive(Debug, PartialEq, Serialize, Deserialize, FromWire)]
    struct Generic<T> {
        items: Vec<T>,
        by_id: BTreeMap<u32, T>,
    }

    /// Reads `v` both ways and wants the same value.
    fn same<T: FromWire + for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug>(v: Value) {
        let want: T = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(T::from_wire(v).unwrap(), want);
    }

    /// Both refuse `v`.
    fn refused<T: FromWire + for<'de> Deserialize<'de> + std::fmt::Debug>(v: Value) -> String {
        assert!(serde_json::from_value::<T>(v.clone()).is_err(), "serde reads {v}");
        T::from_wire(v).unwrap_err().to_string()
    }

    #[test]
    fn structs_read_as_serde_reads_them() {
        same::<Row>(json!({"name": "a", "n": 1.5, "tags": ["x"], "the-count": 3, "extra": [1]}));
        same::<Row>(json!({"name": "b", "the-count": 0}));
        same::<Row>(json!({"name": "c", "n": null, "the-count": 7}));
        same::<Row>(json!({"name": "d", "n": 2, "the-count": 7}));
        same::<Defaults>(json!({}));
        same::<Defaults>(json!({"b": "x"}));
        same::<Newtype>(json!([1, 2, 65535]));
        same::<Generic<String>>(json!({"items": ["a"], "by_id": {"7": "seven"}}));
    }

    #[test]
    fn enums_read_as_serde_reads_them() {
        for v in [
            json!("healthy"),
            json!("kv-too-small"),
            json!("15m"),
            json!({"other": "x"}),
            json!({"shape": {"w": 1, "h": 2}}),
            json!({"pair": [1, -2]}),
        ] {
            same::<State>(v);
        }
        for v in [
            json!({"kind": "empty"}),
            json!({"kind": "with-fields", "x": -3}),
            json!({"kind": "with-fields", "x": 4, "label": "l"}),
            json!({"kind": "wrapped", "a": 9}),
        ] {
            same::<Tagged>(v);
        }
    }

    #[test]
    fn results_read_as_serde_reads_them() {
        same::<Result<Row, String>>(json!({"Ok": {"name": "a", "the-count": 1}}));
        same::<Result<Row, String>>(json!({"Err": "no"}));
        refused::<Result<Row, String>>(json!({"Ok": 1, "Err": "x"}));
        refused::<Result<Row, String>>(json!({"Fine": 1}));
    }

    #[test]
    fn what_serde_refuses_is_refused_and_the_error_names_where() {
        let e = refused::<Row>(json!({"name": 3, "the-count": 1}));
        assert!(e.starts_with("name: expected a string"), "{e}");
        let e = refused::<Row>(json!({"name": "a"}));
        assert_eq!(e, "the-count: missing");
        let e = refused::<Row>(json!({"name": "a", "the-count": 1.0}));
        assert!(e.starts_with("the-count: expected an integer"), "{e}");
        let e = refused::<Row>(json!({"name": "a", "the-count": -1}));
        assert!(e.starts_with("the-count:"), "{e}");
        let e = refused::<Row>(json!({"name": "a", "the-count": 4_294_967_296_u64}));
        assert!(e.starts_with("the-count:"), "{e}");
        let e = refused::<Row>(json!({"name": "a", "the-count": 1, "tags": ["x", 2]}));
        assert!(e.starts_with("tags.1: expected a string"), "{e}");
        let e = refused::<State>(json!("sleepy"));
        assert!(
            e.contains("unknown variant `sleepy`") && e.contains("kv-too-small"),
            "{e}"
        );
        let e = refused::<State>(json!({"shape": {"w": 1}}));
        assert_eq!(e, "shape.h: missing");
        let e = refused::<Tagged>(json!({"x": 1}));
        assert_eq!(e, "kind: missing");
        let e = refused::<Tagged>(json!({"kind": "nope"}));
        assert!(e.starts_with("kind: unknown variant `nope`"), "{e}");
        refused::<State>(json!({"pair": [1]}));
        refused::<Newtype>(json!({"a": 1}));
        refused::<Generic<String>>(json!({"items": [], "by_id": {"x": "y"}}));
    }
}
