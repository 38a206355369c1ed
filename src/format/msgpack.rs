//! The small msgpack subset that the frame header, the frame trailer and the b2nd metalayer
//! use, with its integers **big-endian** as msgpack defines them.
//!
//! [`Reader`] is a bounds-checked cursor: every read checks that the bytes exist and that the
//! marker is the one the layout expects, and reports what it was reading. [`Writer`] appends
//! the same encodings. Only the encodings C-Blosc2 writes are offered, each with its fixed
//! width (C-Blosc2 never picks the shortest form: a header `int32` is always `D2` + 4 bytes).
//!
//! Format: the msgpack specification (fixarray `9x`, array16 `DC`, map16 `DE`, fixstr `Ax`,
//! str32 `DB`, bin32 `C6`, int8–64 `D0`–`D3`, uint8–64 `CC`–`CF`, bool `C2`/`C3`, fixext16
//! `D8`); c-blosc2 `blosc/frame.c`, `blosc/b2nd.c`; `docs/frame-format.md`, `docs/b2nd.md`.

use crate::error::{Error, Marker, Result};

#[cfg(test)]
/// Marker of an `int8`.
pub const INT8: u8 = 0xd0;
/// Marker of an `int16`.
pub const INT16: u8 = 0xd1;
/// Marker of an `int32`.
pub const INT32: u8 = 0xd2;
/// Marker of an `int64`.
pub const INT64: u8 = 0xd3;
#[cfg(test)]
/// Marker of a `uint8`.
pub const UINT8: u8 = 0xcc;
/// Marker of a `uint16`.
pub const UINT16: u8 = 0xcd;
/// Marker of a `uint32`.
pub const UINT32: u8 = 0xce;
/// Marker of a `uint64`.
pub const UINT64: u8 = 0xcf;
/// Marker of `false`.
pub const FALSE: u8 = 0xc2;
/// Marker of `true`.
pub const TRUE: u8 = 0xc3;
/// Marker of a `bin32`.
pub const BIN32: u8 = 0xc6;
/// Marker of a `fixext16`.
pub const FIXEXT16: u8 = 0xd8;
/// Marker of a `str32`.
pub const STR32: u8 = 0xdb;
/// Marker of an `array16`.
pub const ARRAY16: u8 = 0xdc;
/// Marker of a `map16`.
pub const MAP16: u8 = 0xde;
/// First fixarray marker (`0x90 + len`, len ≤ 15).
pub const FIXARRAY: u8 = 0x90;
/// First fixstr marker (`0xa0 + len`, len ≤ 31).
pub const FIXSTR: u8 = 0xa0;

/// A bounds-checked reading cursor over msgpack bytes.
///
/// Errors are [`Error::Msgpack`] (another marker, or the buffer ends), naming the field read
/// and where; the frame layer adds the file name.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A cursor at the start of `buf`.
    #[must_use]
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// A cursor at byte `pos` of `buf` (reads fail if `pos` is past the end).
    #[must_use]
    pub fn at(buf: &'a [u8], pos: usize) -> Self {
        Reader { buf, pos }
    }

    /// The current position, in bytes from the start of the buffer.
    #[must_use]
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The next `n` bytes, consumed.
    ///
    /// # Errors
    /// [`Error::Msgpack`] when fewer than `n` bytes are left.
    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        match end {
            Some(end) => {
                let s = &self.buf[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(Error::Msgpack {
                what,
                at: self.pos,
                expected: Marker::Bytes(n),
                found: None,
            }),
        }
    }

    /// One byte.
    ///
    /// # Errors
    /// [`Error::Msgpack`] at the end of the buffer.
    pub fn u8(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.bytes(1, what)?[0])
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(N, what)?);
        Ok(a)
    }

    /// Checks that the next byte is `marker` and consumes it.
    ///
    /// # Errors
    /// [`Error::Msgpack`] for another byte or at the end of the buffer.
    pub fn marker(&mut self, marker: u8, what: &'static str) -> Result<()> {
        let at = self.pos;
        let b = self.u8(what)?;
        if b == marker {
            Ok(())
        } else {
            Err(Error::Msgpack {
                what,
                at,
                expected: Marker::Exactly(marker),
                found: Some(b),
            })
        }
    }

    #[cfg(test)]
    /// An `int8`/`int16`/`int32`/`int64` (`D0`–`D3`), a `uint8`–`uint64` (`CC`–`CF`) or a
    /// positive or negative fixint, as `i64`.
    ///
    /// # Errors
    /// [`Error::Msgpack`] for another marker, a short buffer or a `uint64` above `i64::MAX`.
    pub fn int(&mut self, what: &'static str) -> Result<i64> {
        let at = self.pos;
        let m = self.u8(what)?;
        Ok(match m {
            0x00..=0x7f => i64::from(m),
            0xe0..=0xff => i64::from(m as i8),
            INT8 => i64::from(i8::from_be_bytes(self.array(what)?)),
            INT16 => i64::from(i16::from_be_bytes(self.array(what)?)),
            INT32 => i64::from(i32::from_be_bytes(self.array(what)?)),
            INT64 => i64::from_be_bytes(self.array(what)?),
            UINT8 => i64::from(self.u8(what)?),
            UINT16 => i64::from(u16::from_be_bytes(self.array(what)?)),
            UINT32 => i64::from(u32::from_be_bytes(self.array(what)?)),
            UINT64 => {
                let v = u64::from_be_bytes(self.array(what)?);
                i64::try_from(v).map_err(|_| Error::Msgpack {
                    what,
                    at,
                    expected: Marker::Int64,
                    found: Some(UINT64),
                })?
            }
            other => {
                return Err(Error::Msgpack {
                    what,
                    at,
                    expected: Marker::Integer,
                    found: Some(other),
                })
            }
        })
    }

    /// An `int32` with its `D2` marker.
    ///
    /// # Errors
    /// [`Error::Msgpack`] for another marker or a short buffer.
    pub fn int32(&mut self, what: &'static str) -> Result<i32> {
        self.marker(INT32, what)?;
        Ok(i32::from_be_bytes(self.array(what)?))
    }

    /// An `int64` with its `D3` marker.
    ///
    /// # Errors
    /// [`Error::Msgpack`] for another marker or a short buffer.
    pub fn int64(&mut self, what: &'static str) -> Result<i64> {
        self.marker(INT64, what)?;
        Ok(i64::from_be_bytes(self.array(what)?))
    }

    /// An `int16` with its `D1` marker.
    ///
    /// # Errors
    /// [`Error::Msgpack`] for another marker or a short buffer.
    pub fn int16(&mut self, what: &'static str) -> Result<i16> {
        self.marker(INT16, what)?;
        Ok(i16::from_be_bytes(self.array(what)?))
    }

    /// A `uint16` with its `CD` marker.
    ///
    /// # Errors
    /// [`Error::Msgpack`] for another marker or a short buffer.
    pub fn uint16(&mut self, what: &'static str) -> Result<u16> {
        self.marker(UINT16, what)?;
        Ok(u16::from_be_bytes(self.array(what)?))
    }

    /// A `uint32` with its `CE` marker.
    ///
    /// # Errors
    /// [`Error::Msgpack`] for another marker or a short buffer.
    pub fn uint32(&mut self, what: &'static str) -> Result<u32> {
        self.marker(UINT32, what)?;
        Ok(u32::from_be_bytes(self.array(what)?))
    }

    /// A `uint64` with its `CF` marker.
    ///
    /// # Errors
    /// [`Error::Msgpack`] for another marker or a short buffer.
    pub fn uint64(&mut self, what: &'static str) -> Result<u64> {
        self.marker(UINT64, what)?;
        Ok(u64::from_be_bytes(self.array(what)?))
    }

    /// A bool (`C2`/`C3`).
    ///
    /// # Errors
    /// [`Error::Msgpack`] for another marker or at the end of the buffer.
    pub fn bool(&mut self, what: &'static str) -> Result<bool> {
        let at = self.pos;
        match self.u8(what)? {
            FALSE => Ok(false),
            TRUE => Ok(true),
            other => Err(Error::Msgpack {
                what,
                at,
                expected: Marker::Bool,
                found: Some(other),
            }),
        }
    }

    #[cfg(test)]
    /// The length of a fixarray (`9x`) or array16 (`DC`).
    ///
    /// # Errors
    /// [`Error::Msgpack`] for another marker or a short buffer.
    pub fn array_len(&mut self, what: &'static str) -> Result<usize> {
        let at = self.pos;
        match self.u8(what)? {
            m @ 0x90..=0x9f => Ok(usize::from(m - FIXARRAY)),
            ARRAY16 => Ok(usize::from(u16::from_be_bytes(self.array(what)?))),
            other => Err(Error::Msgpack {
                what,
                at,
                expected: Marker::Array,
                found: Some(other),
            }),
        }
    }

    /// The number of entries of a map16 (`DE`).
    ///
    /// # Errors
    /// [`Error::Msgpack`] for another marker or a short buffer.
    pub fn map16_len(&mut self, what: &'static str) -> Result<usize> {
        self.marker(MAP16, what)?;
        Ok(usize::from(u16::from_be_bytes(self.array(what)?)))
    }

    /// The bytes of a fixstr (`Ax`, up to 31 bytes).
    ///
    /// # Errors
    /// [`Error::Msgpack`] for another marker or a short buffer.
    pub fn fixstr(&mut self, what: &'static str) -> Result<&'a [u8]> {
        let at = self.pos;
        let m = self.u8(what)?;
        if m & 0xe0 != FIXSTR {
            return Err(Error::Msgpack {
                what,
                at,
                expected: Marker::Fixstr,
                found: Some(m),
            });
        }
        self.bytes(usize::from(m & 0x1f), what)
    }

    /// The bytes of a str32 (`DB` + u32 length).
    ///
    /// # Errors
    /// [`Error::Msgpack`] for another marker or a length past the end.
    pub fn str32(&mut self, what: &'static str) -> Result<&'a [u8]> {
        self.marker(STR32, what)?;
        let n = u32::from_be_bytes(self.array(what)?);
        self.bytes(n as usize, what)
    }

    /// The content of a bin32 (`C6` + u32 length).
    ///
    /// # Errors
    /// [`Error::Msgpack`] for another marker or a length past the end.
    pub fn bin32(&mut self, what: &'static str) -> Result<&'a [u8]> {
        self.marker(BIN32, what)?;
        let n = u32::from_be_bytes(self.array(what)?);
        self.bytes(n as usize, what)
    }

    /// A fixext16 (`D8`): its type byte and 16 data bytes.
    ///
    /// # Errors
    /// [`Error::Msgpack`] for another marker or a short buffer.
    pub fn fixext16(&mut self, what: &'static str) -> Result<(u8, [u8; 16])> {
        self.marker(FIXEXT16, what)?;
        let t = self.u8(what)?;
        Ok((t, self.array(what)?))
    }
}

/// Appends msgpack encodings to a byte vector, each in the fixed width C-Blosc2 uses.
#[derive(Debug, Clone, Default)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    /// An empty writer.
    #[must_use]
    pub fn new() -> Self {
        Writer::default()
    }

    /// The bytes written so far.
    #[must_use]
    pub fn into_inner(self) -> Vec<u8> {
        self.buf
    }

    /// The number of bytes written so far.
    #[must_use]
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Mutable access to the bytes written so far (to patch a length or an offset).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.buf
    }

    /// Raw bytes, no marker.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// A fixarray marker (`0x90 + n`).
    ///
    /// # Panics
    /// If `n > 15` (a programming error: the layouts fix their array sizes).
    pub fn fixarray(&mut self, n: usize) {
        assert!(n <= 15, "fixarray of {n} elements");
        self.buf.push(FIXARRAY + n as u8);
    }

    /// An array16 marker with its length.
    pub fn array16(&mut self, n: u16) {
        self.buf.push(ARRAY16);
        self.buf.extend_from_slice(&n.to_be_bytes());
    }

    /// A map16 marker with its number of entries.
    pub fn map16(&mut self, n: u16) {
        self.buf.push(MAP16);
        self.buf.extend_from_slice(&n.to_be_bytes());
    }

    /// A fixstr; the caller keeps `s` within 31 bytes.
    ///
    /// # Panics
    /// If `s` is longer than 31 bytes (names are checked before they reach the writer).
    pub fn fixstr(&mut self, s: &[u8]) {
        assert!(s.len() <= 31, "fixstr of {} bytes", s.len());
        self.buf.push(FIXSTR + s.len() as u8);
        self.buf.extend_from_slice(s);
    }

    #[cfg(test)]
    /// A str32 (`DB` + u32 length + bytes).
    pub fn str32(&mut self, s: &[u8]) {
        self.buf.push(STR32);
        self.buf.extend_from_slice(&(s.len() as u32).to_be_bytes());
        self.buf.extend_from_slice(s);
    }

    /// A bin32 (`C6` + u32 length + bytes).
    pub fn bin32(&mut self, b: &[u8]) {
        self.buf.push(BIN32);
        self.buf.extend_from_slice(&(b.len() as u32).to_be_bytes());
        self.buf.extend_from_slice(b);
    }

    /// A positive fixint (0–127).
    ///
    /// # Panics
    /// If `v > 127`.
    pub fn fixint(&mut self, v: u8) {
        assert!(v <= 0x7f, "positive fixint {v}");
        self.buf.push(v);
    }

    /// An `int16` (`D1`).
    pub fn int16(&mut self, v: i16) {
        self.buf.push(INT16);
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// An `int32` (`D2`).
    pub fn int32(&mut self, v: i32) {
        self.buf.push(INT32);
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// An `int64` (`D3`).
    pub fn int64(&mut self, v: i64) {
        self.buf.push(INT64);
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// A `uint16` (`CD`).
    pub fn uint16(&mut self, v: u16) {
        self.buf.push(UINT16);
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// A `uint32` (`CE`).
    pub fn uint32(&mut self, v: u32) {
        self.buf.push(UINT32);
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// A `uint64` (`CF`).
    pub fn uint64(&mut self, v: u64) {
        self.buf.push(UINT64);
        self.buf.extend_from_slice(&v.to_be_bytes());
    }

    /// A bool (`C2`/`C3`).
    pub fn bool(&mut self, v: bool) {
        self.buf.push(if v { TRUE } else { FALSE });
    }

    /// A fixext16 (`D8`, type byte, 16 bytes).
    pub fn fixext16(&mut self, kind: u8, data: &[u8; 16]) {
        self.buf.push(FIXEXT16);
        self.buf.push(kind);
        self.buf.extend_from_slice(data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writer_and_a_reader_agree() {
        let mut w = Writer::new();
        w.fixarray(2);
        w.int32(-7);
        w.str32(b"<f8");
        let bytes = w.into_inner();
        assert_eq!(
            bytes,
            [0x92, 0xd2, 0xff, 0xff, 0xff, 0xf9, 0xdb, 0, 0, 0, 3, b'<', b'f', b'8']
        );
        let mut r = Reader::new(&bytes);
        assert_eq!(r.array_len("values").unwrap(), 2);
        assert_eq!(r.int("value").unwrap(), -7);
        assert_eq!(r.str32("dtype").unwrap(), b"<f8");
    }

    #[test]
    fn ints_of_every_width_round_trip() {
        let mut w = Writer::new();
        w.int16(-2);
        w.int32(70_000);
        w.int64(-1 << 40);
        w.uint16(65_535);
        w.uint32(4_000_000_000);
        w.uint64(1 << 62);
        w.fixint(5);
        w.raw(&[0xff, INT8, 0x80, UINT8, 200]);
        let b = w.into_inner();
        let mut r = Reader::new(&b);
        let got: Vec<i64> = (0..10).map(|_| r.int("v").unwrap()).collect();
        assert_eq!(
            got,
            [
                -2,
                70_000,
                -1 << 40,
                65_535,
                4_000_000_000,
                1 << 62,
                5,
                -1,
                -128,
                200
            ]
        );
        assert!(r.int("end").is_err());
    }

    #[test]
    fn reader_never_reads_past_the_end() {
        let b = [BIN32, 0xff, 0xff, 0xff, 0xff, 1, 2];
        let e = Reader::new(&b).bin32("value").unwrap_err();
        assert_eq!(e.code(), -11);
        assert!(e.to_string().contains("value"), "{e}");
        assert!(Reader::new(&[0xa5, b'a']).fixstr("name").is_err());
        assert!(Reader::new(&[INT32, 1, 2]).int32("n").is_err());
        assert!(Reader::new(&[0x93]).map16_len("map").is_err());
        let mut r = Reader::at(&b, 100);
        assert!(r.u8("far").is_err());
    }

    #[test]
    fn fixstr_and_ext() {
        let mut w = Writer::new();
        w.fixstr(b"b2frame\0");
        w.fixext16(6, &[7; 16]);
        w.bool(true);
        let b = w.into_inner();
        assert_eq!(b[0], 0xa8);
        let mut r = Reader::new(&b);
        assert_eq!(r.fixstr("magic").unwrap(), b"b2frame\0");
        assert_eq!(r.fixext16("ext").unwrap(), (6, [7; 16]));
        assert!(r.bool("flag").unwrap());
    }
}
