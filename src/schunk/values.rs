//! Metalayer and vlmetalayer values encoded as python-blosc2 encodes them:
//! `msgpack.packb(v, strict_types=True, use_bin_type=True)`, tuples as
//! `["__tuple__", item, …]`, strings as msgpack str and bytes as msgpack bin.
//!
//! Format: python-blosc2 `src/blosc2/msgpack_utils.py` (`msgpack_packb`,
//! `decode_tuple_list_hook`); `docs/b2nd.md` (values in metalayers and vlmetalayers).
//!
//! ```
//! use strata::schunk::values::{pack, tuple, unpack, Value};
//! let v = tuple(vec![Value::from(1), Value::from("a")]);
//! let bytes = pack(&v);
//! assert_eq!(bytes, [0x93, 0xa9, b'_', b'_', b't', b'u', b'p', b'l', b'e', b'_', b'_', 1, 0xa1, b'a']);
//! assert_eq!(unpack(&bytes).unwrap(), v);
//! ```

use crate::error::{Error, Expected, Result};

/// The marker python-blosc2 puts first in an array that stands for a tuple.
pub const TUPLE_MARKER: &str = "__tuple__";

/// A msgpack value, as metalayers and vlmetalayers hold them.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `nil` (Python's `None`).
    Nil,
    /// `true` or `false`.
    Bool(bool),
    /// An integer, from −2^63 to 2^64 − 1 (what msgpack can hold).
    Int(i128),
    /// A 32-bit float.
    F32(f32),
    /// A 64-bit float (what msgpack-python writes for a Python `float`).
    F64(f64),
    /// A string (msgpack str, UTF-8).
    Str(String),
    /// Bytes (msgpack bin, Python's `bytes`).
    Bin(Vec<u8>),
    /// An array (a Python list, or a tuple with [`TUPLE_MARKER`] first: see [`tuple()`]).
    Array(Vec<Value>),
    /// A map, its entries in stored order.
    Map(Vec<(Value, Value)>),
    /// An extension type: its type byte and data.
    Ext(i8, Vec<u8>),
}

impl Value {
    /// The string, if this is one.
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// Implements `From<$t>` for [`Value`] as `Value::$variant`.
macro_rules! from {
    ($variant:ident: $($t:ty),*) => {$(
        impl From<$t> for Value {
            fn from(v: $t) -> Value {
                Value::$variant(v.into())
            }
        }
    )*};
}

from!(Bool: bool);
from!(Int: i8, i16, i32, i64, u8, u16, u32, u64);
from!(F32: f32);
from!(F64: f64);
from!(Str: &str, String);
from!(Array: Vec<Value>);

/// `v` as the msgpack library's value (integers out of msgpack's range saturate, which no
/// [`Value`] built from a Rust integer is).
fn to_msgpack(v: &Value) -> rmpv::Value {
    match v {
        Value::Nil => rmpv::Value::Nil,
        Value::Bool(b) => rmpv::Value::Boolean(*b),
        Value::Int(i) => match u64::try_from(*i) {
            Ok(u) => rmpv::Value::from(u),
            Err(_) => rmpv::Value::from(i64::try_from(*i).unwrap_or(i64::MIN)),
        },
        Value::F32(f) => rmpv::Value::F32(*f),
        Value::F64(f) => rmpv::Value::F64(*f),
        Value::Str(s) => rmpv::Value::from(s.as_str()),
        Value::Bin(b) => rmpv::Value::Binary(b.clone()),
        Value::Array(items) => rmpv::Value::Array(items.iter().map(to_msgpack).collect()),
        Value::Map(entries) => rmpv::Value::Map(
            entries
                .iter()
                .map(|(k, v)| (to_msgpack(k), to_msgpack(v)))
                .collect(),
        ),
        Value::Ext(kind, data) => rmpv::Value::Ext(*kind, data.clone()),
    }
}

/// The msgpack library's value as a [`Value`].
fn from_msgpack(v: rmpv::Value) -> Result<Value> {
    Ok(match v {
        rmpv::Value::Nil => Value::Nil,
        rmpv::Value::Boolean(b) => Value::Bool(b),
        rmpv::Value::Integer(i) => Value::Int(match (i.as_i64(), i.as_u64()) {
            (Some(v), _) => i128::from(v),
            (None, Some(v)) => i128::from(v),
            (None, None) => {
                return Err(Error::Internal {
                    what: "a msgpack integer is an i64 or a u64",
                })
            }
        }),
        rmpv::Value::F32(f) => Value::F32(f),
        rmpv::Value::F64(f) => Value::F64(f),
        rmpv::Value::String(s) => Value::Str(s.into_str().ok_or(Error::Malformed {
            what: "a msgpack string in a metalayer is not UTF-8",
        })?),
        rmpv::Value::Binary(b) => Value::Bin(b),
        rmpv::Value::Array(items) => {
            Value::Array(items.into_iter().map(from_msgpack).collect::<Result<_>>()?)
        }
        rmpv::Value::Map(entries) => Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| Ok((from_msgpack(k)?, from_msgpack(v)?)))
                .collect::<Result<_>>()?,
        ),
        rmpv::Value::Ext(kind, data) => Value::Ext(kind, data),
    })
}

/// The msgpack bytes of `v`, each integer in its shortest encoding and floats as float64,
/// as msgpack-python writes them.
#[must_use]
pub fn pack(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = rmpv::encode::write_value(&mut out, &to_msgpack(v));
    out
}

/// The value `bytes` encode (exactly: trailing bytes are an error).
///
/// # Errors
/// [`Error::Malformed`] for bytes that do not start with a msgpack value or a string that is
/// not UTF-8, [`Error::InvalidHeader`] for bytes after it.
pub fn unpack(bytes: &[u8]) -> Result<Value> {
    let mut rd = bytes;
    let v = rmpv::decode::read_value(&mut rd).map_err(|_| Error::Malformed {
        what: "a metalayer's content is not a msgpack value",
    })?;
    if !rd.is_empty() {
        let what = "bytes after the msgpack value of a metalayer";
        return Err(Error::header(what, rd.len(), Expected::Exactly(0)));
    }
    from_msgpack(v)
}

/// A tuple as python-blosc2 encodes it: `["__tuple__", items…]`.
#[must_use]
pub fn tuple(items: Vec<Value>) -> Value {
    let mut v = Vec::with_capacity(items.len() + 1);
    v.push(Value::from(TUPLE_MARKER));
    v.extend(items);
    Value::Array(v)
}

/// The items of a python-blosc2 tuple, or `None` if `v` is not one.
#[must_use]
pub fn as_tuple(v: &Value) -> Option<&[Value]> {
    match v {
        Value::Array(items) if items.first().and_then(Value::as_str) == Some(TUPLE_MARKER) => {
            Some(&items[1..])
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_msgpack_python() {
        // msgpack.packb([1, 200, 70000, -5, -200, 1.5, "x", b"y", True, None], use_bin_type=True)
        let v = Value::Array(vec![
            1.into(),
            200.into(),
            70_000.into(),
            (-5).into(),
            (-200).into(),
            1.5.into(),
            "x".into(),
            Value::Bin(b"y".to_vec()),
            true.into(),
            Value::Nil,
        ]);
        let expected = [
            0x9a, 0x01, 0xcc, 0xc8, 0xce, 0x00, 0x01, 0x11, 0x70, 0xfb, 0xd1, 0xff, 0x38, 0xcb,
            0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0xa1, b'x', 0xc4, 0x01, b'y', 0xc3, 0xc0,
        ];
        assert_eq!(pack(&v), expected);
        assert_eq!(unpack(&expected).unwrap(), v);
        let e = unpack(&[0x92, 1]).unwrap_err();
        assert!(matches!(e, Error::Malformed { .. }), "{e}");
        let e = unpack(&[1, 2]).unwrap_err();
        assert!(matches!(e, Error::InvalidHeader { value: 1, .. }), "{e}");
        assert_eq!(as_tuple(&tuple(vec![1.into()])).unwrap(), &[Value::from(1)]);
    }

    #[test]
    fn every_kind_round_trips_and_integers_span_msgpack() {
        let v = Value::Map(vec![
            (
                Value::from("ints"),
                Value::Array(vec![
                    Value::from(i64::MIN),
                    Value::from(u64::MAX),
                    Value::from(-1),
                    Value::from(0u8),
                ]),
            ),
            (Value::from(7), Value::F32(0.5)),
            (Value::Nil, Value::Ext(-3, vec![1, 2])),
            (Value::Bool(false), Value::Bin(vec![])),
        ]);
        let bytes = pack(&v);
        assert_eq!(unpack(&bytes).unwrap(), v);
        // u64::MAX is a uint64, i64::MIN an int64, -1 a negative fixint, 0 a positive one.
        assert_eq!(&bytes[7..7 + 9], &[0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            &bytes[16..16 + 9],
            &[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        );
        assert_eq!(&bytes[25..27], &[0xff, 0x00]);
        assert_eq!(Value::from("x").as_str(), Some("x"));
        assert_eq!(Value::from(3).as_str(), None);
        // A str that is not UTF-8 is refused.
        let e = unpack(&[0xa1, 0xff]).unwrap_err();
        assert!(matches!(e, Error::Malformed { .. }), "{e}");
    }
}
