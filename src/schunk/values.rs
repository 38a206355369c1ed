//! Metalayer and vlmetalayer values encoded as python-blosc2 encodes them:
//! `msgpack.packb(v, strict_types=True, use_bin_type=True)`, tuples as
//! `["__tuple__", item, …]`, strings as msgpack str and bytes as msgpack bin.
//!
//! Format: python-blosc2 `src/blosc2/msgpack_utils.py` (`msgpack_packb`,
//! `decode_tuple_list_hook`); `shared/spec/frames.md` §3.
//!
//! ```
//! use strata::schunk::values::{pack, tuple, unpack, Value};
//! let v = tuple(vec![Value::from(1), Value::from("a")]);
//! let bytes = pack(&v);
//! assert_eq!(bytes, [0x93, 0xa9, b'_', b'_', b't', b'u', b'p', b'l', b'e', b'_', b'_', 1, 0xa1, b'a']);
//! assert_eq!(unpack(&bytes).unwrap(), v);
//! ```

use crate::error::{Error, Result};
pub use rmpv::Value;

/// The marker python-blosc2 puts first in an array that stands for a tuple.
pub const TUPLE_MARKER: &str = "__tuple__";

/// The msgpack bytes of `v`, each integer in its shortest encoding and floats as float64,
/// as msgpack-python writes them.
#[must_use]
pub fn pack(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = rmpv::encode::write_value(&mut out, v);
    out
}

/// The value `bytes` encode (exactly: trailing bytes are an error).
///
/// # Errors
/// [`Error::Data`] for bytes that are not one msgpack value.
pub fn unpack(bytes: &[u8]) -> Result<Value> {
    let mut rd = bytes;
    let v = rmpv::decode::read_value(&mut rd)
        .map_err(|e| Error::Data(format!("not a msgpack value: {e}")))?;
    if !rd.is_empty() {
        return Err(Error::Data(format!(
            "{} bytes after the msgpack value",
            rd.len()
        )));
    }
    Ok(v)
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
            Value::Binary(b"y".to_vec()),
            true.into(),
            Value::Nil,
        ]);
        let expected = [
            0x9a, 0x01, 0xcc, 0xc8, 0xce, 0x00, 0x01, 0x11, 0x70, 0xfb, 0xd1, 0xff, 0x38, 0xcb,
            0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0xa1, b'x', 0xc4, 0x01, b'y', 0xc3, 0xc0,
        ];
        assert_eq!(pack(&v), expected);
        assert_eq!(unpack(&expected).unwrap(), v);
        assert!(unpack(&[0x92, 1]).is_err());
        assert!(unpack(&[1, 2]).is_err());
        assert_eq!(as_tuple(&tuple(vec![1.into()])).unwrap(), &[Value::from(1)]);
    }
}
