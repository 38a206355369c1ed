//! The item size of a b2nd dtype string: NumPy's `dtype.str` (`"<f8"`, `"|b1"`, `"<c16"`,
//! `"|S10"`, `"<U5"`, `"|V300"`, `"<M8[ns]"`) and the `str(dtype)` that python-blosc2 writes
//! for structured dtypes (`"[('a', '<i4'), ('b', '<f8', (2, 3))]"`, nested fields, or the
//! dict form `"{'names': [...], 'formats': [...], 'offsets': [...], 'itemsize': 16}"`).
//!
//! Strata carries items as opaque bytes: the dtype only fixes the item size (the typesize)
//! and is stored unchanged in the metalayer. For programs that show or split items (the
//! daemon's metadata and field reads), [`numpy_name`] spells a dtype as NumPy's `str(dtype)`
//! does, and [`fields`] lists the fields of a structured dtype with their byte offsets.
//!
//! Format: `docs/b2nd.md` (the dtype); NumPy's array-interface typestr and
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

use crate::error::{to_i64, Error, Expected, Result};
use std::borrow::Cow;

/// Deepest nesting of a structured dtype this parser follows.
const MAX_DEPTH: usize = 32;

fn bad(dtype: &str, why: impl Into<Cow<'static, str>>) -> Error {
    Error::Dtype {
        dtype: dtype.to_owned(),
        why: why.into(),
        at: None,
    }
}

/// How strictly type strings are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Grammar {
    /// Whatever gives an item size: for reading files other writers made.
    Lenient,
    /// Only what NumPy accepts: for the files Strata writes.
    NumPy,
}

/// The size in bytes of one item of `dtype` (see the module docs), read leniently: any
/// count after a kind character is taken, as files other writers made may hold.
///
/// # Errors
/// [`Error::Dtype`] for a string that is not a NumPy typestr or a structured dtype
/// repr, the object kind `O` (no fixed bytes), or a size that overflows.
pub fn itemsize(dtype: &str) -> Result<usize> {
    size_of(dtype, Grammar::Lenient)
}

/// The size in bytes of one item of `dtype`, accepting only what NumPy's `np.dtype` accepts
/// and a b2nd item can hold (at least one byte): the dtype strings Strata writes into arrays.
///
/// A typestr is an optional byte order (`<`, `>`, `|`, `=`) and one of `?`, `b1`, `i`/`u` of
/// 1, 2, 4 or 8 bytes, `f` of 2, 4, 8 or 16, `c` of 8, 16 or 32, `S`/`V` of N bytes and `U` of
/// N characters (N > 0, no leading zeros), `M8`/`m8` with an optional unit (`[D]`, `[10ms]`,
/// `[generic]`...; a multiplier without leading zeros). Structured dtypes are checked field by field.
///
/// # Errors
/// [`Error::Dtype`] naming the dtype and what NumPy would not accept (`"<f99"`: no
/// float of 99 bytes), as [`itemsize`] otherwise.
pub fn numpy_itemsize(dtype: &str) -> Result<usize> {
    let n = size_of(dtype, Grammar::NumPy)?;
    if n == 0 {
        return Err(bad(
            dtype,
            "items of 0 bytes (a b2nd item holds at least one byte)",
        ));
    }
    Ok(n)
}

fn size_of(dtype: &str, grammar: Grammar) -> Result<usize> {
    let s = match grammar {
        Grammar::Lenient => dtype.trim(),
        Grammar::NumPy => dtype,
    };
    if s.starts_with(['[', '{', '(']) {
        let mut p = Parser {
            s: s.as_bytes(),
            pos: 0,
            src: dtype,
        };
        let v = p.value(0)?;
        p.skip_ws();
        if p.pos != p.s.len() {
            return Err(Error::Dtype {
                dtype: dtype.to_owned(),
                why: "unexpected text after the description".into(),
                at: Some(p.pos),
            });
        }
        return descr_size(&v, dtype, 0, grammar);
    }
    typestr_size(s, dtype, grammar)
}

/// Datetime and timedelta units NumPy knows.
const TIME_UNITS: [&str; 14] = [
    "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "\u{3bc}s", "ns", "ps", "fs", "as",
];

/// Whether `digits` is a positive decimal count without leading zeros.
fn is_count(digits: &str) -> bool {
    !digits.is_empty() && !digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Checks the part of a NumPy typestr after its byte order: `kind` and `rest`, the count and
/// (datetimes) the unit.
fn numpy_typestr(kind: char, rest: &str, dtype: &str) -> Result<()> {
    let sizes: &[&str] = match kind {
        '?' => &[""],
        'b' => &["1"],
        'i' | 'u' => &["1", "2", "4", "8"],
        'f' => &["2", "4", "8", "16"],
        'c' => &["8", "16", "32"],
        'S' | 'U' | 'V' if is_count(rest) => return Ok(()),
        'S' | 'U' | 'V' => return Err(bad(dtype, format!("{rest:?} is not a positive count"))),
        'M' | 'm' => {
            let unit = rest
                .strip_prefix('8')
                .ok_or_else(|| bad(dtype, "datetimes and timedeltas have 8 bytes"))?;
            if unit.is_empty() || unit == "[generic]" {
                return Ok(());
            }
            let unit = unit
                .strip_prefix('[')
                .and_then(|u| u.strip_suffix(']'))
                .ok_or_else(|| bad(dtype, format!("{unit:?} is not a [unit]")))?;
            let digits = unit
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(unit.len());
            let (count, name) = unit.split_at(digits);
            // NumPy takes any multiplier, 0 included.
            if (count.is_empty() || count == "0" || is_count(count)) && TIME_UNITS.contains(&name) {
                return Ok(());
            }
            return Err(bad(dtype, format!("{unit:?} is not a datetime unit")));
        }
        'O' => return Err(bad(dtype, "Python objects have no fixed bytes")),
        k => return Err(bad(dtype, format!("unknown kind {k:?}"))),
    };
    if sizes.contains(&rest) {
        Ok(())
    } else {
        Err(bad(
            dtype,
            format!(
                "NumPy has no {kind:?} of {rest:?} bytes (only {})",
                sizes.join(", ")
            ),
        ))
    }
}

/// The size of a NumPy typestr: an optional byte order (`<`, `>`, `|`, `=`; leniently also
/// `!`), a kind character and a count (`U` counts UCS-4 characters), and for `M`/`m` an
/// optional unit; [`Grammar::NumPy`] checks them as [`numpy_typestr`] does.
fn typestr_size(s: &str, dtype: &str, grammar: Grammar) -> Result<usize> {
    let orders: &[char] = match grammar {
        Grammar::Lenient => &['<', '>', '|', '=', '!'],
        Grammar::NumPy => &['<', '>', '|', '='],
    };
    let s = s.strip_prefix(orders).unwrap_or(s);
    if grammar == Grammar::NumPy {
        let mut chars = s.chars();
        let kind = chars
            .next()
            .ok_or_else(|| bad(dtype, "empty type string"))?;
        numpy_typestr(kind, chars.as_str(), dtype)?;
    }
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
        .map_err(|_| bad(dtype, "the item count is not a number"))?;
    let unit = match kind {
        'b' | 'i' | 'u' | 'f' | 'c' | 'S' | 'a' | 'V' | 'M' | 'm' => 1,
        'U' => 4,
        'O' => return Err(bad(dtype, "Python objects have no fixed bytes")),
        _ => return Err(bad(dtype, "unknown kind (the first letter)")),
    };
    n.checked_mul(unit)
        .ok_or_else(|| bad(dtype, "the item size overflows"))
}

/// How NumPy's `str(dtype)` spells `dtype` (given as [`itemsize`] takes it): the type name
/// for native-order numbers (`"<i8"` → `int64`, `"|b1"` → `bool`, `"<f4"` → `float32`,
/// `"<c16"` → `complex128`, `"<M8[s]"` → `datetime64[s]`), the type string itself for
/// everything else (`"|S10"`, `"<U6"`, `"|V8"`, big-endian `">f8"`), and structured dtypes
/// unchanged (python-blosc2 stores them as `str(dtype)` already). Little-endian is native.
#[must_use]
pub fn numpy_name(dtype: &str) -> String {
    let s = dtype.trim();
    if s.starts_with(['[', '{', '(']) {
        return s.to_owned();
    }
    let (order, body) = match s.chars().next() {
        Some(c @ ('<' | '>' | '|' | '=' | '!')) => (Some(c), &s[1..]),
        _ => (None, s),
    };
    let native = !matches!(order, Some('>' | '!'));
    let mut chars = body.chars();
    let (Some(kind), rest) = (chars.next(), chars.as_str()) else {
        return s.to_owned();
    };
    let (count, unit) = match rest.find('[') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let bits = count.parse::<usize>().ok().map(|n| n * 8);
    let name = match (kind, bits) {
        ('?', None) | ('b', Some(8)) => Some("bool".to_owned()),
        ('i', Some(b @ (8 | 16 | 32 | 64))) if native || b == 8 => Some(format!("int{b}")),
        ('u', Some(b @ (8 | 16 | 32 | 64))) if native || b == 8 => Some(format!("uint{b}")),
        ('f', Some(b @ (16 | 32 | 64 | 128))) if native => Some(format!("float{b}")),
        ('c', Some(b @ (64 | 128 | 256))) if native => Some(format!("complex{b}")),
        ('M', Some(64)) if native => Some(format!("datetime64{unit}")),
        ('m', Some(64)) if native => Some(format!("timedelta64{unit}")),
        _ => None,
    };
    name.unwrap_or_else(|| {
        // NumPy writes `|` for types without byte order, `<`/`>` for the others.
        let order = match (order, kind) {
            (_, 'S' | 'a' | 'V' | 'b' | '?') => '|',
            (_, 'i' | 'u') if bits == Some(8) => '|',
            (Some('>' | '!'), _) => '>',
            _ => '<',
        };
        format!("{order}{body}")
    })
}

/// One field of a structured dtype (see [`fields`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The field's name.
    pub name: String,
    /// Where its bytes start in an item.
    pub offset: usize,
    /// Its bytes per item (the format's size times the sub-array's items).
    pub size: usize,
    /// Its format as a dtype string: a type string, or a structured dtype as `str(dtype)`
    /// spells it.
    pub dtype: String,
    /// The sub-array shape of the field (`('a', '<i4', (2, 3))`), empty for a scalar field.
    pub shape: Vec<usize>,
}

impl Field {
    /// This field's bytes out of `items`, a buffer of whole items of `itemsize` bytes, in
    /// item order.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if the field does not fit in an item or `items` is not a whole
    /// number of items.
    pub fn gather(&self, items: &[u8], itemsize: usize) -> Result<Vec<u8>> {
        let end = self.offset.saturating_add(self.size);
        if end > itemsize {
            let what = "end of the field in an item (the item size)";
            return Err(Error::range(what, end, Expected::at_most(itemsize)));
        }
        if itemsize == 0 || !items.len().is_multiple_of(itemsize) {
            let what = "bytes of items (whole items)";
            return Err(Error::range(
                what,
                items.len(),
                Expected::MultipleOf(to_i64(itemsize)),
            ));
        }
        let mut out = Vec::with_capacity(items.len() / itemsize * self.size);
        for item in items.chunks_exact(itemsize) {
            out.extend_from_slice(&item[self.offset..self.offset + self.size]);
        }
        Ok(out)
    }
}

/// The fields of a structured dtype, in order, with their byte offsets (packed for the list
/// form, as given for the dict form); `None` for a dtype without fields (a type string or a
/// sub-array).
///
/// ```
/// use strata::ndarray::dtype::fields;
/// let f = fields("[('a', '<f4'), ('b', '<f8', (2,))]")?.unwrap();
/// assert_eq!((f[1].name.as_str(), f[1].offset, f[1].size), ("b", 4, 16));
/// assert_eq!((f[1].dtype.as_str(), &f[1].shape[..]), ("<f8", &[2][..]));
/// assert_eq!(fields("<f8")?, None);
/// # Ok::<(), strata::Error>(())
/// ```
///
/// # Errors
/// As [`itemsize`], and for a field without a name.
pub fn fields(dtype: &str) -> Result<Option<Vec<Field>>> {
    let s = dtype.trim();
    if !s.starts_with(['[', '{']) {
        itemsize(s)?;
        return Ok(None);
    }
    let mut p = Parser {
        s: s.as_bytes(),
        pos: 0,
        src: dtype,
    };
    let v = p.value(0)?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(Error::Dtype {
            dtype: dtype.to_owned(),
            why: "unexpected text after the description".into(),
            at: Some(p.pos),
        });
    }
    descr_size(&v, dtype, 0, Grammar::Lenient)?;
    let field = |name: &Lit, format: &Lit, shape: Option<&Lit>, offset: usize| {
        let name = match name {
            Lit::Str(n) => n.clone(),
            // ((title, name), format)
            Lit::Tuple(t) if t.len() == 2 => match &t[1] {
                Lit::Str(n) => n.clone(),
                _ => return Err(bad(dtype, "a field name is not a string")),
            },
            _ => return Err(bad(dtype, "a field name is not a string")),
        };
        let shape = match shape {
            None => Vec::new(),
            Some(Lit::Tuple(dims)) => dims
                .iter()
                .map(|d| int_of(d, dtype))
                .collect::<Result<Vec<_>>>()?,
            Some(n) => vec![int_of(n, dtype)?],
        };
        let count = shape.iter().product::<usize>();
        let size = descr_size(format, dtype, 1, Grammar::Lenient)?
            .checked_mul(count)
            .ok_or_else(|| bad(dtype, "the item size overflows"))?;
        Ok(Field {
            name,
            offset,
            size,
            dtype: format_string(format),
            shape,
        })
    };
    let mut out = Vec::new();
    match &v {
        Lit::List(items) => {
            let mut offset = 0usize;
            for f in items {
                let Lit::Tuple(parts) = f else {
                    return Err(bad(dtype, "a field is not a tuple"));
                };
                let fl = field(&parts[0], &parts[1], parts.get(2), offset)?;
                offset += fl.size;
                out.push(fl);
            }
        }
        Lit::Dict(entries) => {
            let get = |key: &str| {
                entries
                    .iter()
                    .find(|(k, _)| *k == Lit::Str(key.into()))
                    .map(|(_, v)| v)
            };
            let (Some(Lit::List(names)), Some(Lit::List(formats))) = (get("names"), get("formats"))
            else {
                return Err(bad(dtype, "a dict dtype without names and formats"));
            };
            if names.len() != formats.len() {
                return Err(bad(dtype, "names do not match the formats"));
            }
            let offsets: Option<Vec<usize>> = match get("offsets") {
                Some(Lit::List(o)) => {
                    Some(o.iter().map(|x| int_of(x, dtype)).collect::<Result<_>>()?)
                }
                _ => None,
            };
            let mut offset = 0usize;
            for (i, (n, f)) in names.iter().zip(formats).enumerate() {
                let at = offsets.as_ref().map_or(offset, |o| o[i]);
                let (format, shape) = match f {
                    Lit::Tuple(t) if t.len() == 2 => (&t[0], Some(&t[1])),
                    other => (other, None),
                };
                let fl = field(n, format, shape, at)?;
                offset = at + fl.size;
                out.push(fl);
            }
        }
        _ => return Ok(None),
    }
    Ok(Some(out))
}

/// A field's format as a dtype string: a type string bare, anything else as Python writes it.
fn format_string(v: &Lit) -> String {
    match v {
        Lit::Str(s) => s.clone(),
        other => repr(other),
    }
}

/// A literal written back as Python writes it.
fn repr(v: &Lit) -> String {
    let join = |items: &[Lit]| items.iter().map(repr).collect::<Vec<_>>().join(", ");
    match v {
        Lit::Str(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
        Lit::Int(n) => n.to_string(),
        Lit::List(items) => format!("[{}]", join(items)),
        Lit::Tuple(items) if items.len() == 1 => format!("({},)", repr(&items[0])),
        Lit::Tuple(items) => format!("({})", join(items)),
        Lit::Dict(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(k, v)| format!("{}: {}", repr(k), repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Lit::Const => "None".into(),
    }
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
fn descr_size(v: &Lit, dtype: &str, depth: usize, grammar: Grammar) -> Result<usize> {
    if depth > MAX_DEPTH {
        return Err(bad(dtype, "nested too deeply"));
    }
    let overflow = || bad(dtype, "the item size overflows");
    match v {
        Lit::Str(s) => typestr_size(s, dtype, grammar),
        // [(name, format), (name, format, shape), ...]: packed fields.
        Lit::List(fields) => fields.iter().try_fold(0usize, |acc, f| {
            let Lit::Tuple(parts) = f else {
                return Err(bad(dtype, "a field is not a tuple"));
            };
            if !(2..=3).contains(&parts.len()) {
                return Err(bad(dtype, "a field has not 2 or 3 entries"));
            }
            let size = descr_size(&parts[1], dtype, depth + 1, grammar)?;
            let count = parts.get(2).map_or(Ok(1), |s| shape_count(s, dtype))?;
            size.checked_mul(count)
                .and_then(|n| acc.checked_add(n))
                .ok_or_else(overflow)
        }),
        // (format, shape): a sub-array dtype.
        Lit::Tuple(parts) if parts.len() == 2 => descr_size(&parts[0], dtype, depth + 1, grammar)?
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
                .map(|f| descr_size(f, dtype, depth + 1, grammar))
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
        Lit::Int(n) => usize::try_from(*n).map_err(|_| bad(dtype, "a size is negative")),
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

    fn err(&self, what: &'static str) -> Error {
        Error::Dtype {
            dtype: self.src.to_owned(),
            why: what.into(),
            at: Some(self.pos),
        }
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
    fn numpy_grammar_for_writing() {
        for (s, n) in [
            ("|b1", 1),
            ("?", 1),
            ("<?", 1),
            ("|u1", 1),
            ("<i8", 8),
            (">u2", 2),
            ("=f4", 4),
            ("<f2", 2),
            ("<f16", 16),
            ("<c32", 32),
            ("|S10", 10),
            ("<U5", 20),
            ("|V3", 3),
            ("<M8", 8),
            ("<M8[ns]", 8),
            ("<M8[generic]", 8),
            ("<m8[10ms]", 8),
            ("<M8[0s]", 8),
            ("<M8[\u{3bc}s]", 8),
            ("[('a', '<i4'), ('b', '<f8', (2, 3))]", 52),
            ("[('a', '<i4'), ('n', [('x', 'u1')])]", 5),
        ] {
            assert_eq!(numpy_itemsize(s).unwrap(), n, "{s}");
        }
        for (s, why) in [
            (
                "<f99",
                "NumPy has no 'f' of \"99\" bytes (only 2, 4, 8, 16)",
            ),
            ("<i3", "NumPy has no 'i' of \"3\" bytes (only 1, 2, 4, 8)"),
            ("|b2", "NumPy has no 'b' of \"2\" bytes (only 1)"),
            ("<c4", "NumPy has no 'c' of \"4\" bytes (only 8, 16, 32)"),
            ("!u2", "unknown kind '!'"),
            ("|a5", "unknown kind 'a'"),
            ("|S0", "\"0\" is not a positive count"),
            ("|S010", "\"010\" is not a positive count"),
            ("<U", "\"\" is not a positive count"),
            ("<M4", "datetimes and timedeltas have 8 bytes"),
            ("<M8[xx]", "\"xx\" is not a datetime unit"),
            ("<M8[01s]", "\"01s\" is not a datetime unit"),
            ("<M8[ns", "\"[ns\" is not a [unit]"),
            (" <f8", "unknown kind ' '"),
            (
                "[('a', '<f99')]",
                "NumPy has no 'f' of \"99\" bytes (only 2, 4, 8, 16)",
            ),
            ("[('a', '|V0')]", "\"0\" is not a positive count"),
        ] {
            let e = numpy_itemsize(s).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!("invalid parameter: dtype {s:?}: {why}")
            );
            assert_eq!(e.code(), -12);
        }
        // Read leniently: what other writers may have stored still gives its item size.
        assert_eq!(itemsize("!u2").unwrap(), 2);
        assert_eq!(itemsize("<f99").unwrap(), 99);
        assert_eq!(itemsize(" <f8").unwrap(), 8);
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

    #[test]
    fn numpy_names_as_str_dtype_gives_them() {
        // numpy 2.4: str(np.dtype(s)) for each s.
        for (s, name) in [
            ("|b1", "bool"),
            ("?", "bool"),
            ("|i1", "int8"),
            ("|u1", "uint8"),
            ("<i2", "int16"),
            ("<u4", "uint32"),
            ("<i8", "int64"),
            ("=i8", "int64"),
            ("<f2", "float16"),
            ("<f4", "float32"),
            ("<f8", "float64"),
            ("<c8", "complex64"),
            ("<c16", "complex128"),
            ("<M8[s]", "datetime64[s]"),
            ("<m8[ns]", "timedelta64[ns]"),
            ("<M8", "datetime64"),
            (">f8", ">f8"),
            (">i4", ">i4"),
            ("|S10", "|S10"),
            ("<U6", "<U6"),
            ("|V8", "|V8"),
            (
                "[('a', '<f4'), ('b', '<f8')]",
                "[('a', '<f4'), ('b', '<f8')]",
            ),
        ] {
            assert_eq!(numpy_name(s), name, "{s}");
        }
    }

    #[test]
    fn fields_with_offsets() {
        let f = fields("[('a', '<i4', (2, 3)), ('n', [('x', 'u1')]), (('t', 'c'), '|S3')]")
            .unwrap()
            .unwrap();
        let got: Vec<_> = f
            .iter()
            .map(|f| {
                (
                    f.name.as_str(),
                    f.offset,
                    f.size,
                    f.dtype.as_str(),
                    f.shape.clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("a", 0, 24, "<i4", vec![2, 3]),
                ("n", 24, 1, "[('x', 'u1')]", vec![]),
                ("c", 25, 3, "|S3", vec![]),
            ]
        );
        let d = fields(
            "{'names': ['a', 'b'], 'formats': ['<i4', '<f8'], 'offsets': [0, 8], 'itemsize': 16}",
        )
        .unwrap()
        .unwrap();
        assert_eq!((d[1].offset, d[1].size), (8, 8));
        assert_eq!(fields("<f8").unwrap(), None);
        assert!(fields("[('a', '<i4')").is_err());
        let items: Vec<u8> = (0..32).collect();
        assert_eq!(
            d[1].gather(&items, 16).unwrap(),
            [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31]
        );
        assert!(d[1].gather(&items[..20], 16).is_err());
        assert!(d[1].gather(&items, 12).is_err());
    }
}
