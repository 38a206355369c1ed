//! The Blosc2 frame: header (fixed part and metalayers), trailer (vlmetalayers) and the
//! entries of the offsets index. Pure bytes: no I/O, no codecs.
//!
//! A contiguous frame is `[header][chunk data section (cbytes bytes)][offsets chunk][trailer]`;
//! a sparse frame's `chunks.b2frame` has the same parts with an empty data section. Header and
//! trailer are msgpack with big-endian integers, always in the fixed widths C-Blosc2 writes, so
//! that [`FrameHeader::to_bytes`] and [`Trailer::to_bytes`] give C-Blosc2's bytes for the same
//! values.
//!
//! Format: c-blosc2 `blosc/frame.c` (`new_header_frame`, `get_header_info`,
//! `frame_update_trailer`, `get_meta_from_header`, `get_vlmeta_from_trailer`,
//! `frame_special_chunk`), `README_CFRAME_FORMAT.rst`; `docs/frame-format.md`.
//!
//! ```
//! use strata::format::frame::{FrameHeader, Metalayer, Trailer};
//! let mut h = FrameHeader::new(4);
//! h.frame_len = 149;
//! h.metalayers.push(Metalayer { name: "abc".into(), content: vec![0x93, 1, 2] });
//! let bytes = h.to_bytes();
//! assert_eq!(bytes.len(), 114);
//! let back = FrameHeader::parse(&bytes).unwrap();
//! assert_eq!(back.metalayers, h.metalayers);
//! let t = Trailer::default().to_bytes();
//! assert_eq!(t.len(), 35);
//! ```

use super::chunk::SpecialType;
use super::msgpack::{Reader, Writer};
use crate::error::{to_i64, Error, Expected, Result};
use crate::format::ids::{CodecId, FilterId};

/// Length of the fixed part of the header (`FRAME_HEADER_MINLEN`), in bytes.
pub const HEADER_MINLEN: usize = 87;
/// The shortest trailer (`FRAME_TRAILER_MINLEN`): how many bytes at the end of a frame hold
/// the trailer length and the fingerprint.
pub const TRAILER_MINLEN: usize = 25;
/// The magic string, as a fixstr of 8 bytes at header byte 1.
pub const MAGIC: &[u8; 8] = b"b2frame\0";
/// Most metalayers a frame holds (`BLOSC2_MAX_METALAYERS`); also the most vlmetalayers a
/// writer stores.
pub const MAX_METALAYERS: usize = 16;
/// Most vlmetalayers a reader accepts (`BLOSC2_MAX_VLMETALAYERS`).
pub const MAX_VLMETALAYERS_READ: usize = 8192;
/// Longest metalayer or vlmetalayer name, in bytes (`BLOSC2_METALAYER_NAME_MAXLEN`).
pub const METALAYER_NAME_MAXLEN: usize = 31;
/// Frame format version written by C-Blosc2 2.x and 3.x for fixed chunk sizes (`RC1`).
pub const FRAME_VERSION_RC1: u8 = 2;
/// Frame format version of C-Blosc2 3.x variable-chunk or VL-block frames; the highest read.
pub const FRAME_VERSION_VL: u8 = 3;
/// General flags: 64-bit offsets (bits 4–5 = 1).
pub const FLAG_OFFSETS_64: u8 = 0x10;
/// General flags: chunks of variable size (3.x, chunksize 0).
pub const FLAG_VARIABLE_CHUNKS: u8 = 0x40;
/// General flags: VL-block chunks (3.x).
pub const FLAG_VL_BLOCKS: u8 = 0x80;
/// Codec nibble meaning "the codec ID is in header byte 77".
const UDCODEC_FORMAT: u8 = 6;
/// Trailer format version written by C-Blosc2.
pub const TRAILER_VERSION: u8 = 1;

/// Byte offsets of the header fields that a commit rewrites (after their msgpack markers).
pub mod offset {
    /// `header_len` (int32).
    pub const HEADER_LEN: usize = 11;
    /// `frame_len` (uint64).
    pub const FRAME_LEN: usize = 16;
    /// General flags.
    pub const FLAGS: usize = 25;
    /// Frame type.
    pub const FRAME_TYPE: usize = 26;
    /// `nbytes` (int64).
    pub const NBYTES: usize = 30;
    /// `cbytes` (int64).
    pub const CBYTES: usize = 39;
    /// `chunksize` (int32).
    pub const CHUNKSIZE: usize = 58;
    /// The has-vlmetalayers bool.
    pub const HAS_VLMETA: usize = 68;
}

/// The frame type (header byte 26).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameType {
    /// One file: header, chunks, offsets, trailer.
    Contiguous = 0,
    /// A directory: `chunks.b2frame` (header, offsets, trailer) and one file per chunk.
    Sparse = 1,
}

impl FrameType {
    /// The type's name, for messages.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            FrameType::Contiguous => "contiguous",
            FrameType::Sparse => "sparse",
        }
    }
}

/// One metalayer or vlmetalayer: a name (≤ 31 bytes) and opaque content bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metalayer {
    /// The name.
    pub name: String,
    /// The content: for a metalayer, the bytes as given; for a vlmetalayer, a Blosc2 chunk.
    pub content: Vec<u8>,
}

/// Checks a metalayer or vlmetalayer name: 1 to 31 bytes.
///
/// # Errors
/// [`Error::OutOfRange`] (the name's length) otherwise.
pub fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > METALAYER_NAME_MAXLEN {
        return Err(Error::range(
            "bytes in a metalayer name",
            name.len(),
            Expected::range(1, METALAYER_NAME_MAXLEN),
        ));
    }
    Ok(())
}

/// The frame header: the fixed 87 bytes and the metalayers.
///
/// Format: `docs/frame-format.md` (the fixed 87 bytes, and the metalayers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameHeader {
    /// Length of the whole header, metalayers included, in bytes.
    pub header_len: usize,
    /// Length of the whole frame, in bytes.
    pub frame_len: u64,
    /// General flags: format version (bits 0–3), offset width, variable chunks, VL blocks.
    pub general_flags: u8,
    /// Frame type byte (0 contiguous, 1 sparse).
    pub frame_type: u8,
    /// Codec ID (`compcode`).
    pub codec: CodecId,
    /// Compression level 0–9.
    pub clevel: u8,
    /// `other_flags`: split mode − 1 in bits 0–1.
    pub other_flags: u8,
    /// Uncompressed size of all chunks, in bytes.
    pub nbytes: i64,
    /// Contiguous frames: length of the chunk data section, in bytes (where the offsets
    /// chunk begins). Sparse frames: the sum of the stored chunks' sizes.
    pub cbytes: i64,
    /// Item size in bytes (> 0).
    pub typesize: i32,
    /// The cparams block size (0 = automatic), in bytes.
    pub blocksize: i32,
    /// Bytes of every chunk but the last; −1 while there is no chunk, 0 for variable chunks.
    pub chunksize: i32,
    /// Threads used to compress (informational).
    pub nthreads_c: i16,
    /// Threads used to decompress (informational).
    pub nthreads_d: i16,
    /// True when the trailer holds vlmetalayers.
    pub has_vlmetalayers: bool,
    /// Filter IDs, slot 0 first.
    pub filters: [FilterId; 6],
    /// Filter meta bytes.
    pub filters_meta: [u8; 6],
    /// Codec meta byte.
    pub codec_meta: u8,
    /// `other_flags2` (byte 85): bit 0 = use_dict.
    pub other_flags2: u8,
    /// Byte 86, reserved; kept as read.
    pub reserved: u8,
    /// The metalayers, in order.
    pub metalayers: Vec<Metalayer>,
}

impl FrameHeader {
    /// The number of chunks the header announces: `nbytes` over the chunksize, rounded up;
    /// for a variable-chunksize frame (chunksize 0), the `nbytes` of its offsets chunk (read
    /// by `offsets_nbytes`: bytes 4..8 of that chunk, little-endian) over 8. At most
    /// `BLOSC2_MAX_BUFFERSIZE / 8`: the offsets index is one chunk.
    ///
    /// # Errors
    /// [`Error::InvalidHeader`] for a negative chunksize with data, an offsets chunk whose
    /// `nbytes` is not a positive multiple of 8, or more chunks than one offsets chunk holds;
    /// the errors of `offsets_nbytes`.
    pub fn announced_nchunks(&self, offsets_nbytes: impl FnOnce() -> Result<i32>) -> Result<u64> {
        if self.nbytes == 0 {
            return Ok(0);
        }
        let n = match self.chunksize {
            cs if cs > 0 => (self.nbytes as u64).div_ceil(cs as u64),
            0 => {
                let nb = offsets_nbytes()?;
                if nb <= 0 || nb % 8 != 0 {
                    return Err(Error::header(
                        "offsets chunk nbytes",
                        nb,
                        Expected::MultipleOf(8),
                    ));
                }
                nb as u64 / 8
            }
            cs => {
                return Err(Error::header(
                    "frame chunksize (with data)",
                    cs,
                    Expected::AtLeast(0),
                ))
            }
        };
        if !matches!(n.checked_mul(8), Some(b) if b <= super::chunk::MAX_BUFFERSIZE as u64) {
            return Err(Error::header(
                "chunks in the offsets index",
                n,
                Expected::AtMost(super::chunk::MAX_BUFFERSIZE as i64 / 8),
            ));
        }
        Ok(n)
    }

    /// The header of an empty contiguous frame of items of `typesize` bytes, with C-Blosc2's
    /// default parameters (BloscLZ, clevel 5, shuffle, forward-compatible split), no
    /// metalayers and `frame_len` 0 (set it before writing).
    #[must_use]
    pub fn new(typesize: i32) -> Self {
        FrameHeader {
            header_len: 0,
            frame_len: 0,
            general_flags: FRAME_VERSION_RC1 | FLAG_OFFSETS_64,
            frame_type: FrameType::Contiguous as u8,
            codec: CodecId::BLOSCLZ,
            clevel: 5,
            other_flags: 3,
            nbytes: 0,
            cbytes: 0,
            typesize,
            blocksize: 0,
            chunksize: -1,
            nthreads_c: 1,
            nthreads_d: 1,
            has_vlmetalayers: false,
            filters: [0, 0, 0, 0, 0, 1].map(FilterId),
            filters_meta: [0; 6],
            codec_meta: 0,
            other_flags2: 0,
            reserved: 0,
            metalayers: Vec::new(),
        }
    }

    /// Parses the fixed part from the first 87 bytes of `src` (metalayers are left empty).
    ///
    /// Checks the msgpack markers, the magic, the format version (≤ 3), `header_len` ≥ 87
    /// and ≤ `frame_len`, `typesize` > 0, `cbytes` ≥ 0, `nbytes` ≥ 0 and at most 6 filters.
    ///
    /// # Errors
    /// [`Error::InvalidHeader`] naming the field.
    pub fn parse_fixed(src: &[u8]) -> Result<Self> {
        if src.len() < HEADER_MINLEN {
            return Err(Error::header(
                "frame header bytes",
                src.len(),
                Expected::at_least(HEADER_MINLEN),
            ));
        }
        let mut r = Reader::new(&src[..HEADER_MINLEN]);
        r.marker(0x9e, "frame header array")?;
        if r.fixstr("magic")? != MAGIC {
            return Err(Error::Malformed {
                what: "wrong magic: not a Blosc2 frame",
            });
        }
        let header_len = r.int32("header_len")?;
        let frame_len = r.uint64("frame_len")?;
        r.marker(0xa4, "flags")?;
        let general_flags = r.u8("general flags")?;
        let frame_type = r.u8("frame type")?;
        let codec_flags = r.u8("codec flags")?;
        let other_flags = r.u8("other flags")?;
        let nbytes = r.int64("nbytes")?;
        let cbytes = r.int64("cbytes")?;
        let typesize = r.int32("typesize")?;
        let blocksize = r.int32("blocksize")?;
        let chunksize = r.int32("chunksize")?;
        let nthreads_c = r.int16("compression nthreads")?;
        let nthreads_d = r.int16("decompression nthreads")?;
        let has_vlmetalayers = r.bool("has vlmetalayers")?;
        let (nfilters, ext) = r.fixext16("filter pipeline")?;
        let version = general_flags & 0x0f;
        if version > FRAME_VERSION_VL {
            return Err(Error::header(
                "frame format version",
                version,
                Expected::at_most(FRAME_VERSION_VL),
            ));
        }
        let header_len = usize::try_from(header_len)
            .ok()
            .filter(|&h| h >= HEADER_MINLEN)
            .ok_or_else(|| {
                Error::header("header_len", header_len, Expected::at_least(HEADER_MINLEN))
            })?;
        if header_len as u64 > frame_len {
            return Err(Error::header(
                "header_len (at most frame_len)",
                header_len,
                Expected::at_most(frame_len),
            ));
        }
        if typesize <= 0 {
            return Err(Error::header(
                "frame typesize",
                typesize,
                Expected::AtLeast(1),
            ));
        }
        if nbytes < 0 {
            return Err(Error::header("frame nbytes", nbytes, Expected::AtLeast(0)));
        }
        if cbytes < 0 {
            return Err(Error::header("frame cbytes", cbytes, Expected::AtLeast(0)));
        }
        if nfilters > 6 {
            return Err(Error::header(
                "frame filters",
                nfilters,
                Expected::AtMost(6),
            ));
        }
        let mut filters = [FilterId::NOFILTER; 6];
        let mut filters_meta = [0u8; 6];
        for (f, &b) in filters.iter_mut().zip(&ext[..6]) {
            *f = FilterId(b);
        }
        let codec = CodecId(if codec_flags & 0x0f == UDCODEC_FORMAT {
            ext[6]
        } else {
            codec_flags & 0x0f
        });
        let codec_meta = ext[7];
        filters_meta.copy_from_slice(&ext[8..14]);
        Ok(FrameHeader {
            header_len,
            frame_len,
            general_flags,
            frame_type,
            codec,
            clevel: codec_flags >> 4,
            other_flags,
            nbytes,
            cbytes,
            typesize,
            blocksize,
            chunksize,
            nthreads_c,
            nthreads_d,
            has_vlmetalayers,
            filters,
            filters_meta,
            codec_meta,
            other_flags2: ext[14],
            reserved: ext[15],
            metalayers: Vec::new(),
        })
    }

    /// Parses the whole header: the fixed part and the metalayers in `src[87..header_len]`.
    ///
    /// Each metalayer value is found through its offset in the index, as C-Blosc2 reads it,
    /// and must lie inside the header.
    ///
    /// # Errors
    /// [`Error::InvalidHeader`] for anything malformed, including `src` shorter than
    /// `header_len`.
    pub fn parse(src: &[u8]) -> Result<Self> {
        let mut h = Self::parse_fixed(src)?;
        if src.len() < h.header_len {
            return Err(Error::header(
                "frame header bytes (header_len)",
                src.len(),
                Expected::at_least(h.header_len),
            ));
        }
        h.metalayers = parse_layers(&src[..h.header_len], HEADER_MINLEN, 0, &METALAYERS)?;
        if h.metalayers.len() > MAX_METALAYERS {
            return Err(Error::header(
                "metalayers",
                h.metalayers.len(),
                Expected::at_most(MAX_METALAYERS),
            ));
        }
        Ok(h)
    }

    /// The split mode code (1–4) that `other_flags` stores, as C-Blosc2 reads it.
    #[must_use]
    pub fn splitmode(&self) -> u8 {
        (self.other_flags & 0x03) + 1
    }

    /// The frame format version (general flags bits 0–3).
    #[must_use]
    pub fn version(&self) -> u8 {
        self.general_flags & 0x0f
    }

    /// The fixed 87 bytes of this header, `header_len` and `frame_len` as stored.
    #[must_use]
    pub fn fixed_bytes(&self) -> [u8; HEADER_MINLEN] {
        let mut w = Writer::new();
        w.fixarray(14);
        w.fixstr(MAGIC);
        w.int32(i32::try_from(self.header_len).unwrap_or(i32::MAX));
        w.uint64(self.frame_len);
        w.raw(&[0xa4, self.general_flags, self.frame_type]);
        let nibble = if self.codec.0 >= UDCODEC_FORMAT {
            UDCODEC_FORMAT
        } else {
            self.codec.0
        };
        w.raw(&[nibble | (self.clevel << 4), self.other_flags]);
        w.int64(self.nbytes);
        w.int64(self.cbytes);
        w.int32(self.typesize);
        w.int32(self.blocksize);
        w.int32(self.chunksize);
        w.int16(self.nthreads_c);
        w.int16(self.nthreads_d);
        w.bool(self.has_vlmetalayers);
        let mut ext = [0u8; 16];
        for (b, f) in ext[..6].iter_mut().zip(&self.filters) {
            *b = f.0;
        }
        ext[6] = self.codec.0;
        ext[7] = self.codec_meta;
        ext[8..14].copy_from_slice(&self.filters_meta);
        ext[14] = self.other_flags2;
        ext[15] = self.reserved;
        w.fixext16(6, &ext);
        let mut out = [0u8; HEADER_MINLEN];
        out.copy_from_slice(&w.into_inner());
        out
    }

    /// The length this header takes with its metalayers, in bytes.
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        HEADER_MINLEN
            + 10
            + self
                .metalayers
                .iter()
                .map(|m| 1 + m.name.len() + 5 + 5 + m.content.len())
                .sum::<usize>()
    }

    /// The whole header as C-Blosc2 writes it. `header_len` is computed (and stored in the
    /// bytes, not in `self`); `frame_len` is written as it is in `self`.
    ///
    /// # Panics
    /// If a metalayer name exceeds 31 bytes (names are checked when metalayers are added).
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut h = self.clone();
        h.header_len = self.encoded_len();
        let mut out = h.fixed_bytes().to_vec();
        out.extend_from_slice(&write_layers(&self.metalayers, HEADER_MINLEN, 0, 0));
        debug_assert_eq!(out.len(), h.header_len);
        out
    }
}

/// The words an error in a metalayer or vlmetalayer section uses.
struct Layers {
    count: &'static str,
    name: &'static str,
    utf8: &'static str,
    offset: &'static str,
    content: &'static str,
}

const METALAYERS: Layers = Layers {
    count: "metalayers in the index",
    name: "metalayer name",
    utf8: "a metalayer name is not UTF-8",
    offset: "metalayer offset",
    content: "metalayer content",
};

const VLMETALAYERS: Layers = Layers {
    count: "vlmetalayers in the index",
    name: "vlmetalayer name",
    utf8: "a vlmetalayer name is not UTF-8",
    offset: "vlmetalayer offset",
    content: "vlmetalayer content",
};

/// Parses a `93 [CD idx] [DE map] [DC values]` section at `start` of `buf`; offsets in the
/// map are relative to `base` (0 in the header, the trailer start in the trailer, which is
/// `buf`'s start).
fn parse_layers(buf: &[u8], start: usize, base: usize, words: &Layers) -> Result<Vec<Metalayer>> {
    let mut r = Reader::at(buf, start);
    r.marker(0x93, "metalayers array")?;
    r.uint16("metalayers index size")?;
    let n = r.map16_len("metalayers map")?;
    if n > MAX_VLMETALAYERS_READ {
        return Err(Error::header(
            words.count,
            n,
            Expected::at_most(MAX_VLMETALAYERS_READ),
        ));
    }
    let mut out = Vec::with_capacity(n.min(MAX_METALAYERS));
    for _ in 0..n {
        let name = r.fixstr(words.name)?;
        let name = std::str::from_utf8(name)
            .map_err(|_| Error::Malformed { what: words.utf8 })?
            .to_string();
        let off = r.int32(words.offset)?;
        let pos = usize::try_from(off)
            .ok()
            .and_then(|o| o.checked_sub(base))
            .filter(|&p| p < buf.len())
            .ok_or_else(|| {
                Error::header(
                    words.offset,
                    off,
                    Expected::range(base, to_i64(base + buf.len()) - 1),
                )
            })?;
        let content = Reader::at(buf, pos).bin32(words.content)?.to_vec();
        out.push(Metalayer { name, content });
    }
    Ok(out)
}

/// Writes a metalayers section whose first byte sits at `at` of the enclosing structure;
/// offsets are `base` + position. The index size counts from byte `idx_from` of the section
/// (0: the `93`, as in the header; 1: the `CD`, as in the trailer).
fn write_layers(layers: &[Metalayer], at: usize, base: usize, idx_from: usize) -> Vec<u8> {
    let n = u16::try_from(layers.len()).unwrap_or(u16::MAX);
    let mut w = Writer::new();
    w.fixarray(3);
    w.uint16(0);
    w.map16(n);
    let mut slots = Vec::with_capacity(layers.len());
    for m in layers {
        w.fixstr(m.name.as_bytes());
        slots.push(w.len() + 1);
        w.int32(0);
    }
    let idx = u16::try_from(w.len() - idx_from).unwrap_or(u16::MAX);
    w.bytes_mut()[2..4].copy_from_slice(&idx.to_be_bytes());
    w.array16(n);
    for (m, slot) in layers.iter().zip(slots) {
        let pos = i32::try_from(at + w.len() - base).unwrap_or(i32::MAX);
        w.bytes_mut()[slot..slot + 4].copy_from_slice(&pos.to_be_bytes());
        w.bin32(&m.content);
    }
    w.into_inner()
}

/// The trailer: vlmetalayers, length and fingerprint.
///
/// Format: `docs/frame-format.md` (trailer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trailer {
    /// Trailer format version (1).
    pub version: u8,
    /// The vlmetalayers; each content is a Blosc2 chunk.
    pub vlmetalayers: Vec<Metalayer>,
    /// Fingerprint type (0 = none, as C-Blosc2 writes).
    pub fingerprint_type: u8,
    /// Fingerprint bytes.
    pub fingerprint: [u8; 16],
}

impl Default for Trailer {
    fn default() -> Self {
        Trailer {
            version: TRAILER_VERSION,
            vlmetalayers: Vec::new(),
            fingerprint_type: 0,
            fingerprint: [0; 16],
        }
    }
}

impl Trailer {
    /// The trailer length stored in the last [`TRAILER_MINLEN`] bytes of a frame, checked to
    /// be at least 25 and at most `frame_len − 87`.
    ///
    /// # Errors
    /// [`Error::InvalidHeader`] when the `CE` marker is missing or the length is out of range.
    pub fn len_from_tail(tail: &[u8], frame_len: u64) -> Result<usize> {
        if tail.len() != TRAILER_MINLEN {
            return Err(Error::header(
                "trailer tail bytes",
                tail.len(),
                Expected::exactly(TRAILER_MINLEN),
            ));
        }
        let mut r = Reader::at(tail, 2);
        let len = r.uint32("trailer length")?;
        if (len as usize) < TRAILER_MINLEN
            || u64::from(len) > frame_len.saturating_sub(HEADER_MINLEN as u64)
        {
            return Err(Error::header(
                "trailer length",
                len,
                Expected::range(
                    TRAILER_MINLEN,
                    frame_len.saturating_sub(HEADER_MINLEN as u64),
                ),
            ));
        }
        Ok(len as usize)
    }

    /// Parses a whole trailer (`src` = its bytes, from the `94` to the fingerprint).
    ///
    /// # Errors
    /// [`Error::InvalidHeader`] for anything malformed.
    pub fn parse(src: &[u8]) -> Result<Self> {
        if src.len() < TRAILER_MINLEN {
            return Err(Error::header(
                "trailer bytes",
                src.len(),
                Expected::at_least(TRAILER_MINLEN),
            ));
        }
        let mut r = Reader::new(src);
        r.marker(0x94, "trailer array")?;
        let version = r.u8("trailer version")?;
        if version > 0x7f {
            return Err(Error::header(
                "trailer version",
                version,
                Expected::AtMost(0x7f),
            ));
        }
        let vlmetalayers = parse_layers(src, 2, 0, &VLMETALAYERS)?;
        let mut t = Reader::at(src, src.len() - 18);
        let (fingerprint_type, fingerprint) = t.fixext16("trailer fingerprint")?;
        Ok(Trailer {
            version,
            vlmetalayers,
            fingerprint_type,
            fingerprint,
        })
    }

    /// The trailer bytes as C-Blosc2 writes them.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::new();
        w.fixarray(4);
        w.fixint(self.version);
        w.raw(&write_layers(&self.vlmetalayers, 2, 0, 1));
        let len = u32::try_from(w.len() + 23).unwrap_or(u32::MAX);
        w.uint32(len);
        w.fixext16(self.fingerprint_type, &self.fingerprint);
        w.into_inner()
    }
}

/// Where the offsets index says a chunk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkLoc {
    /// Stored: a byte offset from the end of the header (contiguous frame) or a chunk file
    /// number (sparse frame).
    Stored(u64),
    /// Not stored: a special chunk of zeros, NaNs or uninitialized bytes.
    Special(SpecialType),
}

/// Decodes one offsets-index entry (int64 LE in the offsets chunk).
///
/// A negative value is special: C-Blosc2 tests the zeros bit (`1 << 56`) first, then
/// uninit (`4 << 56`), then NaN (`2 << 56`).
///
/// # Errors
/// [`Error::InvalidHeader`] for a negative value with none of those bits.
pub fn decode_offset(v: i64) -> Result<ChunkLoc> {
    if v >= 0 {
        return Ok(ChunkLoc::Stored(v as u64));
    }
    let u = v as u64;
    let kind = if u & (1 << 56) != 0 {
        SpecialType::Zero
    } else if u & (4 << 56) != 0 {
        SpecialType::Uninit
    } else if u & (2 << 56) != 0 {
        SpecialType::Nan
    } else {
        return Err(Error::Malformed {
            what: "a negative offsets-index entry has no special-kind bit",
        });
    };
    Ok(ChunkLoc::Special(kind))
}

/// The offsets-index entry of a special chunk (`0x80 | kind` in byte 7).
///
/// # Errors
/// [`Error::OutOfRange`] for kinds other than zeros, NaN and uninit.
pub fn encode_special(kind: SpecialType) -> Result<i64> {
    match kind {
        SpecialType::Zero | SpecialType::Nan | SpecialType::Uninit => {
            Ok(((1u64 << 63) | ((kind as u64) << 56)) as i64)
        }
        other => Err(Error::range(
            "special kind of an offsets-index entry",
            other as u8,
            Expected::OneOf("1 (zeros), 2 (NaN) or 4 (uninit)"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header and trailer of a frame C-Blosc2 wrote (one metalayer `abc`).
    const SPEC_HEADER: &str = "9ea862326672616d6500d200000072cf00000000000003dea412003503\
        d30000000000002ee0d300000000000002e2d200000004d200000000d200000fa0d10001d10001c3d806\
        0000000000010500000000000000000093cd0010de0001a3616263d20000006adc0001c60000000393\
        0102";

    fn unhex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn spec_header_round_trips_byte_for_byte() {
        let bytes = unhex(SPEC_HEADER);
        let h = FrameHeader::parse(&bytes).unwrap();
        assert_eq!((h.header_len, h.frame_len), (114, 990));
        assert_eq!((h.nbytes, h.cbytes, h.chunksize), (12_000, 738, 4000));
        assert_eq!((h.codec, h.clevel, h.typesize), (CodecId::ZSTD, 3, 4));
        assert_eq!(h.metalayers[0].name, "abc");
        assert_eq!(h.metalayers[0].content, [0x93, 1, 2]);
        assert_eq!(h.to_bytes(), bytes);
    }

    #[test]
    fn trailer_round_trips() {
        let t = Trailer {
            vlmetalayers: vec![Metalayer {
                name: "vl".into(),
                content: vec![7; 34],
            }],
            ..Trailer::default()
        };
        let b = t.to_bytes();
        assert_eq!(b.len(), 82);
        assert_eq!(
            &b[..20],
            &unhex("9401 93cd000e de0001 a2766c d200000014 dc0001 c6")[..20]
        );
        assert_eq!(
            Trailer::len_from_tail(&b[b.len() - 25..], 1000).unwrap(),
            82
        );
        assert_eq!(Trailer::parse(&b).unwrap(), t);
    }

    #[test]
    fn bad_headers_are_errors() {
        let bytes = unhex(SPEC_HEADER);
        for cut in 0..bytes.len() {
            assert!(FrameHeader::parse(&bytes[..cut]).is_err(), "cut {cut}");
        }
        let mut b = bytes.clone();
        b[2] = b'x';
        assert!(FrameHeader::parse(&b)
            .unwrap_err()
            .to_string()
            .contains("magic"));
        let mut b = bytes.clone();
        b[106] = 0x7f; // metalayer offset far past the header
        assert!(FrameHeader::parse(&b).is_err());
        let mut b = bytes;
        b[25] = 0x14; // version 4
        assert!(FrameHeader::parse(&b).is_err());
    }

    #[test]
    fn special_offsets() {
        assert_eq!(
            encode_special(SpecialType::Zero).unwrap() as u64,
            0x8100_0000_0000_0000
        );
        for k in [SpecialType::Zero, SpecialType::Nan, SpecialType::Uninit] {
            assert_eq!(
                decode_offset(encode_special(k).unwrap()).unwrap(),
                ChunkLoc::Special(k)
            );
        }
        assert_eq!(decode_offset(354).unwrap(), ChunkLoc::Stored(354));
        assert!(decode_offset(i64::MIN).is_err());
    }
}
