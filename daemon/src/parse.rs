//! The request parsers: request paths, the `slice_`/`sel` grammar, `indices` JSON, `Range`
//! headers and chunk numbers. Pure functions over untrusted text (fuzzed by
//! `fuzz/fuzz_targets/daemon_requests.rs`): every input gives a value or an error message,
//! never a panic, and sizes are bounded before anything is allocated for them.

use std::fmt;

/// Deepest path a request may name (segments).
pub const MAX_SEGMENTS: usize = 64;
/// Longest path segment, in bytes (as file systems allow).
pub const MAX_SEGMENT_BYTES: usize = 255;
/// Most dimensions a key may name (as Blosc2 arrays have at most 8).
pub const MAX_KEY_DIMS: usize = 32;

/// Why a request path is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// Not UTF-8 after decoding, a NUL or control byte, a backslash, an empty, `.` or `..`
    /// segment, an absolute path, too deep or a segment too long.
    Bad(String),
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathError::Bad(why) => f.write_str(why),
        }
    }
}

/// The segments of a request path (the part after the route, e.g. `@public/dir/a.b2nd`),
/// percent-decoded exactly once. One trailing `/` is allowed; `%2F` decodes to a separator
/// like any `/`, and the segments are checked after decoding, so no encoding of `..` gets
/// through (`%252e` decodes to the literal name `%2e`).
///
/// # Errors
/// [`PathError::Bad`] as listed there.
pub fn request_path(raw: &str) -> Result<Vec<String>, PathError> {
    let bad = |why: &str| Err(PathError::Bad(why.to_owned()));
    let decoded: Vec<u8> = percent_encoding::percent_decode_str(raw).collect();
    let Ok(text) = String::from_utf8(decoded) else {
        return bad("the path is not UTF-8");
    };
    if text.starts_with('/') {
        return bad("absolute paths are not served");
    }
    if text.bytes().any(|b| b == 0 || b < 0x20 || b == 0x7f) {
        return bad("the path holds a control character");
    }
    if text.contains('\\') {
        return bad("the path holds a backslash");
    }
    let body = text.strip_suffix('/').unwrap_or(&text);
    if body.is_empty() {
        return bad("the path names no root");
    }
    let mut out = Vec::new();
    for seg in body.split('/') {
        match seg {
            "" => return bad("the path holds an empty segment"),
            "." | ".." => return bad("the path holds a '.' or '..' segment"),
            s if s.len() > MAX_SEGMENT_BYTES => return bad("a path segment is too long"),
            s => out.push(s.to_owned()),
        }
        if out.len() > MAX_SEGMENTS {
            return bad("the path is too deep");
        }
    }
    Ok(out)
}

/// One entry of a `slice_`/`sel` key: an index, or `start:stop[:step]` with optional bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyItem {
    /// An integer: NumPy drops the axis.
    Index(i64),
    /// A slice; `step` `None` is 1.
    Slice {
        /// First index (negative counts from the end).
        start: Option<i64>,
        /// Index past the last.
        stop: Option<i64>,
        /// Step, not 0 once resolved.
        step: Option<i64>,
    },
}

fn int(s: &str) -> Result<i64, String> {
    let t = s.trim();
    t.parse::<i64>()
        .map_err(|_| format!("slice_ is not a slice: invalid literal {t:?}"))
}

fn opt_int(s: &str) -> Result<Option<i64>, String> {
    if s.trim().is_empty() {
        Ok(None)
    } else {
        int(s).map(Some)
    }
}

/// Parses one `start:stop[:step]` or integer entry.
///
/// # Errors
/// A message for anything else.
pub fn key_item(seg: &str) -> Result<KeyItem, String> {
    let seg = seg.trim();
    if seg.is_empty() {
        return Err("slice_ is not a slice: an empty entry".into());
    }
    if !seg.contains(':') {
        return int(seg).map(KeyItem::Index);
    }
    let parts: Vec<&str> = seg.split(':').collect();
    if parts.len() > 3 {
        return Err(format!(
            "slice_ is not a slice: {seg:?} has more than two ':'"
        ));
    }
    Ok(KeyItem::Slice {
        start: opt_int(parts[0])?,
        stop: opt_int(parts[1])?,
        step: match parts.get(2) {
            Some(p) => opt_int(p)?,
            None => None,
        },
    })
}

/// Parses a key: comma-separated entries (whitespace allowed, one trailing comma allowed);
/// the empty string is the whole dataset (no entries).
///
/// # Errors
/// A message naming the bad entry.
pub fn key(s: &str) -> Result<Vec<KeyItem>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(Vec::new());
    }
    let body = s.strip_suffix(',').unwrap_or(s);
    let mut out = Vec::new();
    for seg in body.split(',') {
        out.push(key_item(seg)?);
        if out.len() > MAX_KEY_DIMS {
            return Err("slice_ names too many dimensions".into());
        }
    }
    Ok(out)
}

/// One entry of an `indices` key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexEntry {
    /// Coordinates along this axis (NumPy advanced indexing).
    Points(Vec<i64>),
    /// One coordinate.
    Index(i64),
    /// A slice, as a `slice_` entry spells it (`"0:10"`).
    Slice(KeyItem),
    /// The whole axis (`null`).
    Full,
}

/// Parses an `indices` key: a JSON list with one entry per leading dimension, each a list of
/// integers, an integer, a slice string or `null`; at most `max_coords` coordinates in all.
///
/// # Errors
/// `Err((too_many, message))`: `too_many` is true when the coordinate limit was passed.
pub fn indices(s: &str, max_coords: usize) -> Result<Vec<IndexEntry>, (bool, String)> {
    let bad = |m: String| Err((false, m));
    let v: serde_json::Value = match serde_json::from_str(s) {
        Ok(v) => v,
        Err(e) => return bad(format!("indices is not JSON: {e}")),
    };
    let serde_json::Value::Array(entries) = v else {
        return bad("indices must be a JSON list, one entry per dimension".into());
    };
    if entries.len() > MAX_KEY_DIMS {
        return bad("indices names too many dimensions".into());
    }
    let as_int = |x: &serde_json::Value| x.as_i64().ok_or(());
    let mut total = 0usize;
    let mut out = Vec::with_capacity(entries.len());
    for e in &entries {
        out.push(match e {
            serde_json::Value::Null => IndexEntry::Full,
            serde_json::Value::Number(_) => match as_int(e) {
                Ok(i) => IndexEntry::Index(i),
                Err(()) => return bad(format!("indices entry {e} is not an integer")),
            },
            serde_json::Value::String(s) => match key_item(s) {
                Ok(k) => IndexEntry::Slice(k),
                Err(m) => return bad(m),
            },
            serde_json::Value::Array(items) => {
                total = total.saturating_add(items.len());
                if total > max_coords {
                    return Err((
                        true,
                        format!("indices holds more than {max_coords} coordinates"),
                    ));
                }
                let mut pts = Vec::with_capacity(items.len());
                for x in items {
                    match as_int(x) {
                        Ok(i) => pts.push(i),
                        Err(()) => return bad(format!("indices coordinate {x} is not an integer")),
                    }
                }
                IndexEntry::Points(pts)
            }
            other => {
                return bad(format!(
                    "indices entry {other} is not a list, int, slice or null"
                ))
            }
        });
    }
    Ok(out)
}

/// What a `Range` header asks of a body of `len` bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ranges {
    /// Inclusive spans, sorted, overlapping and touching ones merged, each inside the body.
    Spans(Vec<(u64, u64)>),
    /// No span can be served (416).
    Unsatisfiable,
    /// More spans than allowed.
    TooMany,
    /// A range unit other than `bytes`: the header is ignored and the whole body sent
    /// (RFC 9110 §14.2: an origin server must ignore units it does not understand).
    OtherUnit,
    /// `bytes=` not followed by valid spans (RFC 9110 §14.2).
    Malformed,
}

/// Parses a `Range` header against a body of `len` bytes, with at most `max` spans.
#[must_use]
pub fn range(header: &str, len: u64, max: usize) -> Ranges {
    let Some((unit, spec)) = header.trim().split_once('=') else {
        return Ranges::Malformed;
    };
    // Range unit names are case-insensitive (RFC 9110 §14.1).
    if !unit.trim().eq_ignore_ascii_case("bytes") {
        return Ranges::OtherUnit;
    }
    let mut spans: Vec<(u64, u64)> = Vec::new();
    let mut asked = 0usize;
    for part in spec.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        asked += 1;
        if asked > max {
            return Ranges::TooMany;
        }
        let Some((a, b)) = part.split_once('-') else {
            return Ranges::Malformed;
        };
        let (a, b) = (a.trim(), b.trim());
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit());
        let span = if a.is_empty() {
            // suffix: the last b bytes
            if !digits(b) {
                return Ranges::Malformed;
            }
            let Ok(n) = b.parse::<u64>() else {
                return Ranges::Malformed;
            };
            if n == 0 || len == 0 {
                None
            } else {
                Some((len.saturating_sub(n), len - 1))
            }
        } else {
            if !digits(a) || !(b.is_empty() || digits(b)) {
                return Ranges::Malformed;
            }
            let (Ok(first), last) = (a.parse::<u64>(), b.parse::<u64>()) else {
                return Ranges::Malformed;
            };
            let last = match (b.is_empty(), last) {
                (true, _) => u64::MAX,
                (false, Ok(l)) => l,
                (false, Err(_)) => return Ranges::Malformed,
            };
            if last < first {
                return Ranges::Malformed;
            }
            (first < len).then(|| (first, last.min(len - 1)))
        };
        if let Some(s) = span {
            spans.push(s);
        }
    }
    if asked == 0 {
        return Ranges::Malformed;
    }
    if spans.is_empty() {
        return Ranges::Unsatisfiable;
    }
    spans.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(spans.len());
    for (a, b) in spans {
        match merged.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    Ranges::Spans(merged)
}

/// Parses a chunk number (`nchunk=`): a non-negative decimal integer.
///
/// # Errors
/// A message for anything else.
pub fn nchunk(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!("nchunk {t:?} is not a chunk number"));
    }
    t.parse::<u64>()
        .map_err(|_| format!("nchunk {t:?} is not a chunk number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(
            request_path("%40public/a/b.b2nd").unwrap(),
            ["@public", "a", "b.b2nd"]
        );
        assert_eq!(request_path("@public/").unwrap(), ["@public"]);
        assert_eq!(request_path("r/a%2Fb").unwrap(), ["r", "a", "b"]);
        assert_eq!(request_path("r/%252e%252e").unwrap(), ["r", "%2e%2e"]);
        for bad in [
            "",
            "/",
            "r/../x",
            "r/%2e%2e/x",
            "r/%2E%2E",
            "r//x",
            "/etc/passwd",
            "%2Fetc",
            "r/a%00b",
            "r/a\\b",
            "r/a%5cb",
            "r/./x",
            "r/%ff",
            "r/a%0ab",
        ] {
            assert!(request_path(bad).is_err(), "{bad:?}");
        }
        assert!(request_path(&"a/".repeat(70)).is_err());
        assert!(request_path(&format!("r/{}", "x".repeat(300))).is_err());
    }

    #[test]
    fn keys() {
        use KeyItem::{Index, Slice};
        assert_eq!(key("").unwrap(), []);
        assert_eq!(key("  ").unwrap(), []);
        assert_eq!(
            key("3:5, 1:4").unwrap(),
            [
                Slice {
                    start: Some(3),
                    stop: Some(5),
                    step: None
                },
                Slice {
                    start: Some(1),
                    stop: Some(4),
                    step: None
                }
            ]
        );
        assert_eq!(
            key("-5:").unwrap(),
            [Slice {
                start: Some(-5),
                stop: None,
                step: None
            }]
        );
        assert_eq!(
            key("::2,7").unwrap(),
            [
                Slice {
                    start: None,
                    stop: None,
                    step: Some(2)
                },
                Index(7)
            ]
        );
        assert_eq!(key("3,").unwrap(), [Index(3)]);
        for bad in [
            "a",
            "1,,2",
            "1:2:3:4",
            "1.5",
            "1:x",
            ",",
            "99999999999999999999",
        ] {
            assert!(key(bad).is_err(), "{bad:?}");
        }
        assert!(key(&"1,".repeat(40)).is_err());
    }

    #[test]
    fn indices_json() {
        assert_eq!(
            indices(r#"[[1,5,9],450,"0:10",null]"#, 100).unwrap(),
            [
                IndexEntry::Points(vec![1, 5, 9]),
                IndexEntry::Index(450),
                IndexEntry::Slice(KeyItem::Slice {
                    start: Some(0),
                    stop: Some(10),
                    step: None
                }),
                IndexEntry::Full
            ]
        );
        assert!(matches!(indices("[[1,2,3]]", 2), Err((true, _))));
        for bad in [
            "{}",
            "[1.5]",
            "[[1,\"a\"]]",
            "[true]",
            "nope",
            "[[1],[{}]]",
            "[\"x\"]",
        ] {
            assert!(matches!(indices(bad, 100), Err((false, _))), "{bad}");
        }
    }

    #[test]
    fn ranges() {
        assert_eq!(range("bytes=0-31", 5271, 64), Ranges::Spans(vec![(0, 31)]));
        assert_eq!(
            range("bytes=-100", 5271, 64),
            Ranges::Spans(vec![(5171, 5270)])
        );
        assert_eq!(range("bytes=-99999", 10, 64), Ranges::Spans(vec![(0, 9)]));
        assert_eq!(range("bytes=5-", 10, 64), Ranges::Spans(vec![(5, 9)]));
        assert_eq!(
            range("bytes=0-3,100-103", 200, 64),
            Ranges::Spans(vec![(0, 3), (100, 103)])
        );
        assert_eq!(
            range("bytes=4-7, 0-3", 200, 64),
            Ranges::Spans(vec![(0, 7)])
        );
        assert_eq!(range("bytes=0-5,2-3", 200, 64), Ranges::Spans(vec![(0, 5)]));
        assert_eq!(range("bytes=99999999-", 5271, 64), Ranges::Unsatisfiable);
        assert_eq!(range("bytes=-0", 10, 64), Ranges::Unsatisfiable);
        assert_eq!(range("bytes=0-1,2-3,4-5", 10, 2), Ranges::TooMany);
        assert_eq!(range("BYTES=0-1", 10, 64), Ranges::Spans(vec![(0, 1)]));
        assert_eq!(range("Bytes = 2-3", 10, 64), Ranges::Spans(vec![(2, 3)]));
        assert_eq!(range("items=0-1", 10, 64), Ranges::OtherUnit);
        assert_eq!(range("=0-1", 10, 64), Ranges::OtherUnit);
        for bad in [
            "",
            "bytes",
            "bytes=",
            "bytes=a-b",
            "bytes=5-2",
            "bytes=-",
            "bytes=1",
            "bytes=+1-2",
            "bytes=0-99999999999999999999999",
        ] {
            assert_eq!(range(bad, 10, 64), Ranges::Malformed, "{bad:?}");
        }
    }

    #[test]
    fn chunk_numbers() {
        assert_eq!(nchunk("7").unwrap(), 7);
        for bad in ["", "-1", "1.0", "x", "1e3", "99999999999999999999999"] {
            assert!(nchunk(bad).is_err(), "{bad:?}");
        }
    }
}
