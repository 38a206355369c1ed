//! The item size of a b2nd dtype string: NumPy's `dtype.str` (`"<f8"`, `"|b1"`, `"<c16"`,
//! `"|S10"`, `"<U5"`, `"|V300"`, `"<M8[ns]"`) and the `str(dtype)` that python-blosc2 writes
//! for structured dtypes (`"[('a', '<i4'), ('b', '<f8', (2, 3))]"`, nested fields, or the
//! dict form `"{'names': [...], 'formats': [...], 'offsets': [...], 'itemsize': 16}"`).
//!
//! Strata carries items as opaque bytes: the dtype only fixes the item size (the typesize)
//! and is stored unchanged in the metalayer.
//!
//! Format: `shared/spec/frames.md` §9 (dtype strings); NumPy's array-interface typestr and
//! `dtype.descr`; python-blosc2 `src/blosc2/blosc2_ext.pyx` (writes `dtype.str`, or
//! `str(dtype)` for structured dtypes).
//!
//! ```
//! use strata::ndarray::dtype::itemsize;
//! assert_eq!(itemsize("<f8")?, 8);
//! assert_eq!(itemsize("<U5")?, 20);
//! assert_eq!(itemsize("[('a', '<i4'), ('b', '<f8', (2,))]")?, 20);
//! # Ok::<(), strata::Error>(())
//! ```
#![forbid(unsafe_code)]

use crate::error::{Error, Result};

/// Deepest nesting of a structured dtype this parser follows.
const MAX_DEPTH: usize = 32;

fn bad(dtype: &str, why: impl std::fmt::Display) -> Error {
    Error::InvalidParam(format!("dtype {dtype:?}: {why}"))
}

/// The size in bytes of one item of `dtype` (see the module docs).
///
/// # Errors
/// [`Error::InvalidParam`] for a string that is not a NumPy typestr or a structured dtype
/// repr, the object kind `O` (no fixed bytes), or a size that overflows.
pub fn itemsize(dtype: &str) -> Result<usize> {
    let s = dtype.trim();
    if s.starts_with(['[', '{', '(']) {
        let mut p = Parser {
            s: s.as_bytes(),
            pos: 0,
            src: dtype,
        };
        let v = p.value(0)?;
        p.skip_ws();
        if p.pos != p.s.len() {
            return Err(bad(dtype, format!("unexpected text at byte {}", p.pos)));
        }
        return descr_size(&v, dtype, 0);
    }
    typestr_size(s, dtype)
}

/// The size of a NumPy typestr: an optional byte order (`<`, `>`, `|`, `=`, `!`), a kind
/// character and a count (`U` counts UCS-4 characters), and for `M`/`m` an optional unit.
fn typestr_size(s: &str, dtype: &str) -> Result<usize> {
    let s = s.strip_prefix(['<', '>', '|', '=', '!']).unwrap_or(s);
    let mut chars = s.chars();
    let kind = chars
        .next()
        .ok_or_else(|| bad(dtype, "empty type string"))?;
    let rest = chars.as_str();
    let rest = match kind {
        'M' | 'm' => match rest.find('[') {
            Some(i) if rest.ends_with(']') => &rest[..i],
            Some(_) => return Err(bad(dtype, "unclosed datetime unit")),
            None => rest,
        },
        _ => rest,
    };
    if kind == '?' && rest.is_empty() {
        return Ok(1);
    }
    let n: usize = rest
        .parse()
        .map_err(|_| bad(dtype, format!("{rest:?} is not an item count")))?;
    let unit = match kind {
        'b' | 'i' | 'u' | 'f' | 'c' | 'S' | 'a' | 'V' | 'M' | 'm' => 1,
        'U' => 4,
        'O' => return Err(bad(dtype, "Python objects have no fixed bytes")),
        k => return Err(bad(dtype, format!("unknown kind {k:?}"))),
    };
    n.checked_mul(unit)
        .ok_or_else(|| bad(dtype, "the item size overflows"))
}

/// A Python literal: what `str(dtype)` of a structured dtype is made of.
#[derive(Debug, Clone, PartialEq)]
enum Lit {
    Str(String),
    Int(i64),
    List(Vec<Lit>),
    Tuple(Vec<Lit>),
    Dict(Vec<(Lit, Lit)>),
    Const,
}

/// The size of a dtype given as a parsed literal (a field's format, or the whole dtype).
fn descr_size(v: &Lit, dtype: &str, depth: usize) -> Result<usize> {
    if depth > MAX_DEPTH {
        return Err(bad(dtype, "nested too deeply"));
    }
    let overflow = || bad(dtype, "the item size overflows");
    match v {
        Lit::Str(s) => typestr_size(s, dtype),
        // [(name, format), (name, format, shape), ...]: packed fields.
        Lit::List(fields) => fields.iter().try_fold(0usize, |acc, f| {
            let Lit::Tuple(parts) = f else {
                return Err(bad(dtype, "a field is not a tuple"));
            };
            if !(2..=3).contains(&parts.len()) {
                return Err(bad(dtype, "a field has not 2 or 3 entries"));
            }
            let size = descr_size(&parts[1], dtype, depth + 1)?;
            let count = parts.get(2).map_or(Ok(1), |s| shape_count(s, dtype))?;
            size.checked_mul(count)
                .and_then(|n| acc.checked_add(n))
                .ok_or_else(overflow)
        }),
        // (format, shape): a sub-array dtype.
        Lit::Tuple(parts) if parts.len() == 2 => descr_size(&parts[0], dtype, depth + 1)?
            .checked_mul(shape_count(&parts[1], dtype)?)
            .ok_or_else(overflow),
        Lit::Dict(entries) => {
            let get = |key: &str| {
                entries
                    .iter()
                    .find(|(k, _)| *k == Lit::Str(key.into()))
                    .map(|(_, v)| v)
            };
            if let Some(n) = get("itemsize") {
                return int_of(n, dtype);
            }
            let Some(Lit::List(formats)) = get("formats") else {
                return Err(bad(dtype, "a dict dtype without formats"));
            };
            let sizes = formats
                .iter()
                .map(|f| descr_size(f, dtype, depth + 1))
                .collect::<Result<Vec<_>>>()?;
            match get("offsets") {
                Some(Lit::List(offsets)) if offsets.len() == sizes.len() => {
                    offsets.iter().zip(&sizes).try_fold(0usize, |acc, (o, &s)| {
                        let end = int_of(o, dtype)?.checked_add(s).ok_or_else(overflow)?;
                        Ok(acc.max(end))
                    })
                }
                Some(_) => Err(bad(dtype, "offsets do not match the formats")),
                None => sizes
                    .iter()
                    .try_fold(0usize, |acc, &s| acc.checked_add(s))
                    .ok_or_else(overflow),
            }
        }
        _ => Err(bad(dtype, "not a dtype description")),
    }
}

fn int_of(v: &Lit, dtype: &str) -> Result<usize> {
    match v {
        Lit::Int(n) => usize::try_from(*n).map_err(|_| bad(dtype, format!("negative size {n}"))),
        _ => Err(bad(dtype, "a size is not an integer")),
    }
}

/// The number of items of a field shape: an int or a tuple of ints.
fn shape_count(v: &Lit, dtype: &str) -> Result<usize> {
    match v {
        Lit::Tuple(dims) => dims.iter().try_fold(1usize, |acc, d| {
            acc.checked_mul(int_of(d, dtype)?)
                .ok_or_else(|| bad(dtype, "the field shape overflows"))
        }),
        other => int_of(other, dtype),
    }
}

/// A recursive-descent parser of the Python literals `str(dtype)` uses.
struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    src: &'a str,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.s.get(self.pos).is_some_and(u8::is_ascii_whitespace) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn err(&self, what: &str) -> Error {
        bad(self.src, format!("{what} at byte {}", self.pos))
    }

    fn value(&mut self, depth: usize) -> Result<Lit> {
        if depth > MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        match self.peek() {
            Some(b'[') => self.seq(b']', depth).map(|(items, _)| Lit::List(items)),
            Some(b'(') => self.seq(b')', depth).map(|(items, trailing_comma)| {
                // `(x)` is x itself; `(x,)` is a one-tuple.
                if items.len() == 1 && !trailing_comma {
                    items.into_iter().next().unwrap_or(Lit::Const)
                } else {
                    Lit::Tuple(items)
                }
            }),
            Some(b'{') => self.dict(depth),
            Some(q @ (b'\'' | b'"')) => self.string(q),
            Some(b'-' | b'0'..=b'9') => self.int(),
            Some(b'A'..=b'Z' | b'a'..=b'z') => {
                let start = self.pos;
                while self.s.get(self.pos).is_some_and(u8::is_ascii_alphanumeric) {
                    self.pos += 1;
                }
                match &self.s[start..self.pos] {
                    b"True" | b"False" | b"None" => Ok(Lit::Const),
                    _ => Err(self.err("unknown name")),
                }
            }
            _ => Err(self.err("expected a value")),
        }
    }

    /// Items up to `close`; also whether the last item had a trailing comma.
    fn seq(&mut self, close: u8, depth: usize) -> Result<(Vec<Lit>, bool)> {
        self.pos += 1;
        let mut items = Vec::new();
        let mut trailing = false;
        loop {
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok((items, trailing));
            }
            items.push(self.value(depth + 1)?);
            trailing = false;
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    trailing = true;
                }
                Some(c) if c == close => {}
                _ => return Err(self.err("expected ',' or a closing bracket")),
            }
        }
    }

    fn dict(&mut self, depth: usize) -> Result<Lit> {
        self.pos += 1;
        let mut entries = Vec::new();
        loop {
            if self.peek() == Some(b'}') {
                self.pos += 1;
                return Ok(Lit::Dict(entries));
            }
            let k = self.value(depth + 1)?;
            if self.peek() != Some(b':') {
                return Err(self.err("expected ':'"));
            }
            self.pos += 1;
            let v = self.value(depth + 1)?;
            entries.push((k, v));
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {}
                _ => return Err(self.err("expected ',' or '}'")),
            }
        }
    }

    fn string(&mut self, quote: u8) -> Result<Lit> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            match self.s.get(self.pos).copied() {
                None => return Err(self.err("unterminated string")),
                Some(b'\\') => {
                    let c = self
                        .s
                        .get(self.pos + 1)
                        .copied()
                        .ok_or_else(|| self.err("unterminated string"))?;
                    out.push(c);
                    self.pos += 2;
                }
                Some(c) if c == quote => {
                    self.pos += 1;
                    return String::from_utf8(out)
                        .map(Lit::Str)
                        .map_err(|_| self.err("a string is not UTF-8"));
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn int(&mut self) -> Result<Lit> {
        let start = self.pos;
        if self.s[self.pos] == b'-' {
            self.pos += 1;
        }
        while self.s.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.s[start..self.pos])
            .ok()
            .and_then(|t| t.parse().ok())
            .map(Lit::Int)
            .ok_or_else(|| self.err("bad integer"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_typestrs() {
        for (s, n) in [
            ("|b1", 1),
            ("?", 1),
            ("|u1", 1),
            ("<i2", 2),
            (">u4", 4),
            ("<f8", 8),
            ("<f2", 2),
            ("<c8", 8),
            ("<c16", 16),
            ("|S10", 10),
            ("|S0", 0),
            ("<U5", 20),
            ("|V300", 300),
            ("<M8[ns]", 8),
            ("<m8", 8),
            ("=f4", 4),
        ] {
            assert_eq!(itemsize(s).unwrap(), n, "{s}");
        }
        for s in [
            "",
            "<",
            "|O8",
            "<x4",
            "<f",
            "<M8[ns",
            "<U99999999999999999999",
        ] {
            assert_eq!(itemsize(s).unwrap_err().code(), -12, "{s:?}");
        }
    }

    #[test]
    fn structured_reprs_as_python_blosc2_writes_them() {
        // Strings python-blosc2 4.14.1 wrote (`str(dtype)`), with numpy's itemsize.
        for (s, n) in [
            ("[('a', '<i4'), ('b', '<f8')]", 12),
            (
                "{'names': ['a', 'b'], 'formats': ['<i4', '<f8'], 'offsets': [0, 8], 'itemsize': 16}",
                16,
            ),
            ("[('a', '<i4', (2, 3)), ('n', [('x', 'u1')])]", 25),
            ("[(('title', 'a'), '<f4'), ('b', '|S3', 2)]", 10),
            ("('<f4', (2,))", 8),
            ("{'names': ['a'], 'formats': ['<f8'], 'offsets': [4]}", 12),
            ("[(\"q\\\"x\", '<u2')]", 2),
        ] {
            assert_eq!(itemsize(s).unwrap(), n, "{s}");
        }
        for s in [
            "[('a', '<i4')",
            "[('a',)]",
            "[('a', '<i4', (-1,))]",
            "[('a', '<i4')] x",
            "{'names': ['a']}",
            "[('a', 'O')]",
            &"[".repeat(100),
            "[('a', '<i4', (99999999999, 99999999999, 9999999999))]",
        ] {
            assert_eq!(itemsize(s).unwrap_err().code(), -12, "{s:?}");
        }
    }
}
