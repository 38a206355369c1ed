//! The Blosc2 chunk header: 16 bytes (Blosc1 and the compat form) or 32 bytes (extended).
//!
//! Pure bytes, no I/O, no codecs. All integers are little-endian.
//! Format: c-blosc2 `README_CHUNK_FORMAT.rst` and `blosc/blosc2.c` (`read_chunk_header`,
//! `write_compression_header`); where they disagree this follows the code (see
//! `docs/chunk-format.md`).

use crate::error::{Error, Expected, Result};
use crate::format::ids::{CodecId, FilterId};

/// Length of the Blosc1 / compat header in bytes.
pub const MIN_HEADER_LENGTH: usize = 16;
/// Length of the extended (Blosc2) header in bytes.
pub const EXTENDED_HEADER_LENGTH: usize = 32;
/// Extra bytes a chunk may need beyond its data (`BLOSC2_MAX_OVERHEAD`).
pub const MAX_OVERHEAD: usize = 32;
/// Largest `nbytes` of a chunk (`BLOSC2_MAX_BUFFERSIZE` = `INT_MAX - 32`), in bytes.
pub const MAX_BUFFERSIZE: usize = i32::MAX as usize - MAX_OVERHEAD;
/// Largest block size (`BLOSC2_MAXBLOCKSIZE`), in bytes.
pub const MAX_BLOCKSIZE: usize = 536_866_816;
/// Below this many bytes a buffer is stored raw (`BLOSC_MIN_BUFFERSIZE`).
pub const MIN_BUFFERSIZE: usize = 32;
/// Largest typesize a chunk header can hold; larger ones are stored as 1.
pub const MAX_TYPESIZE: usize = 255;
/// Number of filter slots in a chunk (`BLOSC2_MAX_FILTERS`).
pub const MAX_FILTERS: usize = 6;
/// Largest dictionary (`BLOSC2_MAXDICTSIZE`), in bytes.
pub const MAX_DICT_SIZE: usize = 128 * 1024;
/// Chunk format version written by C-Blosc2 2.x and 3.x for regular chunks.
pub const VERSION_FORMAT_STABLE: u8 = 5;
/// Chunk format version of C-Blosc2 3.x variable-length-block chunks.
pub const VERSION_FORMAT_VL_BLOCKS: u8 = 6;

/// `flags` bit 0: byte shuffle (also half of the extended-header marker).
pub const FLAG_SHUFFLE: u8 = 0x01;
/// `flags` bit 1: the data is stored raw.
pub const FLAG_MEMCPYED: u8 = 0x02;
/// `flags` bit 2: bit shuffle (also half of the extended-header marker).
pub const FLAG_BITSHUFFLE: u8 = 0x04;
/// `flags` bit 3: delta.
pub const FLAG_DELTA: u8 = 0x08;
/// `flags` bit 4: every block is one stream.
pub const FLAG_DONT_SPLIT: u8 = 0x10;
/// Format code in `flags` bits 5–7 meaning "the codec ID is in header byte 22".
pub const FORMAT_UDCODEC: u8 = 6;

/// `blosc2_flags` bit 0: a dictionary section follows `bstarts`.
pub const B2FLAG_USEDICT: u8 = 0x01;
/// `blosc2_flags` bit 1: written on a big-endian host (ignored on read).
pub const B2FLAG_BIGENDIAN: u8 = 0x02;
/// `blosc2_flags` bit 3: a lazy chunk (in-memory only).
pub const B2FLAG_LAZY: u8 = 0x08;
/// `blosc2_flags` bit 7: instrumentation records instead of data.
pub const B2FLAG_INSTR_CODEC: u8 = 0x80;

/// The special-value kind of a chunk (`blosc2_flags` bits 4–6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecialType {
    /// A regular chunk.
    None = 0,
    /// All bytes zero.
    Zero = 1,
    /// Every item a quiet NaN (typesize 4 or 8).
    Nan = 2,
    /// One item, stored after the header, repeated.
    Value = 3,
    /// Contents undefined (Strata reads zeros).
    Uninit = 4,
}

impl SpecialType {
    /// The name as `strata chunk info` prints it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            SpecialType::None => "none",
            SpecialType::Zero => "zero",
            SpecialType::Nan => "nan",
            SpecialType::Value => "value",
            SpecialType::Uninit => "uninit",
        }
    }
}

/// A parsed and validated chunk header.
///
/// Format: `README_CHUNK_FORMAT.rst`, "header" and "extended header".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkHeader {
    /// Format version (byte 0): 2 = Blosc1, 3/4 = Blosc2 pre-releases, 5 = Blosc2, 6 = VL blocks.
    pub version: u8,
    /// Codec format version (byte 1).
    pub versionlz: u8,
    /// Flags (byte 2).
    pub flags: u8,
    /// Item size in bytes as stored (byte 3); 1..=255.
    pub typesize: usize,
    /// Uncompressed size in bytes.
    pub nbytes: usize,
    /// Block size in bytes (for VL-block chunks: the number of blocks).
    pub blocksize: usize,
    /// Compressed size in bytes, header included.
    pub cbytes: usize,
    /// 16 or 32.
    pub header_len: usize,
    /// Filter IDs in pipeline order (slot 0 applied first when compressing).
    pub filters: [FilterId; MAX_FILTERS],
    /// One meta byte per filter slot.
    pub filters_meta: [u8; MAX_FILTERS],
    /// The codec ID (Blosc2 `compcode`).
    pub compcode: CodecId,
    /// The codec meta byte.
    pub compcode_meta: u8,
    /// `blosc2_flags` (byte 31; 0 for a 16-byte header).
    pub blosc2_flags: u8,
    /// `blosc2_flags2` (byte 30; VL-blocks bit in 3.x).
    pub blosc2_flags2: u8,
    /// The special-value kind.
    pub special: SpecialType,
}

fn le_i32(b: &[u8], at: usize) -> i32 {
    i32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Maps a chunk format code (flags bits 5–7) to a codec ID, for headers that do not carry
/// the codec in byte 22.
///
/// Format code 2 is Snappy (Blosc1, codec ID 3): no codec is registered under that ID, so
/// decoding such a chunk fails with [`Error::UnknownCodec`] (`BLOSC2_ERROR_CODEC_SUPPORT`, as
/// C-Blosc2 answers), while its header still parses. Codes 5 and 7 are reserved: the header
/// is invalid.
fn format_code_to_compcode(code: u8, udcompcode: CodecId) -> Result<CodecId> {
    match code {
        0 => Ok(CodecId::BLOSCLZ),
        1 => Ok(CodecId::LZ4),
        2 => Ok(CodecId::SNAPPY),
        3 => Ok(CodecId::ZLIB),
        4 => Ok(CodecId::ZSTD),
        FORMAT_UDCODEC => Ok(udcompcode),
        other => Err(Error::header(
            "chunk codec format code",
            other,
            Expected::OneOf("0 to 4 or 6"),
        )),
    }
}

impl ChunkHeader {
    /// Parses and validates the header at the start of `src`.
    ///
    /// Checks: the header fits; version 1..=6; typesize ≠ 0; `cbytes` ≥ header and ≤ the
    /// source length; `nbytes` ≤ [`MAX_BUFFERSIZE`]; blocksize in 1..=[`MAX_BLOCKSIZE`] and
    /// ≤ `nbytes` (when `nbytes` > 0); a special kind ≤ 4; VL-block headers as 3.x accepts them.
    ///
    /// # Errors
    /// [`Error::Truncated`], [`Error::VersionSupport`], [`Error::InvalidHeader`].
    pub fn parse(src: &[u8]) -> Result<Self> {
        if src.len() < MIN_HEADER_LENGTH {
            return Err(Error::Truncated {
                what: "chunk header",
                needed: MIN_HEADER_LENGTH,
                available: src.len(),
            });
        }
        let version = src[0];
        if version == 0 || version > VERSION_FORMAT_VL_BLOCKS {
            return Err(Error::VersionSupport { version });
        }
        let flags = src[2];
        let typesize = usize::from(src[3]);
        let nbytes = le_i32(src, 4);
        let blocksize = le_i32(src, 8);
        let cbytes = le_i32(src, 12);
        let (Ok(nbytes), Ok(blocksize), Ok(cbytes)) = (
            usize::try_from(nbytes),
            usize::try_from(blocksize),
            usize::try_from(cbytes),
        ) else {
            let (what, value) = [("chunk nbytes", nbytes), ("chunk blocksize", blocksize)]
                .into_iter()
                .find(|&(_, v)| v < 0)
                .unwrap_or(("chunk cbytes", cbytes));
            return Err(Error::header(what, value, Expected::AtLeast(0)));
        };
        let extended = flags & (FLAG_SHUFFLE | FLAG_BITSHUFFLE) == (FLAG_SHUFFLE | FLAG_BITSHUFFLE);
        let header_len = if extended {
            EXTENDED_HEADER_LENGTH
        } else {
            MIN_HEADER_LENGTH
        };
        if src.len() < header_len {
            return Err(Error::Truncated {
                what: "extended chunk header",
                needed: header_len,
                available: src.len(),
            });
        }
        if typesize == 0 {
            return Err(Error::header("chunk typesize", 0, Expected::AtLeast(1)));
        }
        if cbytes < header_len {
            return Err(Error::header(
                "chunk cbytes (with the header)",
                cbytes,
                Expected::at_least(header_len),
            ));
        }
        if cbytes > src.len() {
            return Err(Error::Truncated {
                what: "chunk (cbytes)",
                needed: cbytes,
                available: src.len(),
            });
        }
        if nbytes > MAX_BUFFERSIZE {
            return Err(Error::header(
                "chunk nbytes",
                nbytes,
                Expected::at_most(MAX_BUFFERSIZE),
            ));
        }

        let mut filters = [FilterId::NOFILTER; MAX_FILTERS];
        let mut filters_meta = [0u8; MAX_FILTERS];
        let (udcompcode, compcode_meta, blosc2_flags2, blosc2_flags) = if extended {
            for (f, &b) in filters.iter_mut().zip(&src[16..22]) {
                *f = FilterId(b);
            }
            filters_meta.copy_from_slice(&src[24..30]);
            if version == 3 {
                // Blosc2 alpha chunks had five filter slots.
                filters[5] = FilterId::NOFILTER;
                filters_meta[5] = 0;
            }
            (CodecId(src[22]), src[23], src[30], src[31])
        } else {
            // Blosc1 and compat headers: filters derived from the flags.
            if flags & FLAG_SHUFFLE != 0 {
                filters[5] = FilterId::SHUFFLE;
            } else if flags & FLAG_BITSHUFFLE != 0 {
                filters[5] = FilterId::BITSHUFFLE;
            }
            if flags & FLAG_DELTA != 0 {
                filters[4] = FilterId::DELTA;
            }
            (CodecId(0), 0, 0, 0)
        };

        let special = match (blosc2_flags >> 4) & 0x07 {
            0 => SpecialType::None,
            1 => SpecialType::Zero,
            2 => SpecialType::Nan,
            3 => SpecialType::Value,
            4 => SpecialType::Uninit,
            other => {
                return Err(Error::header(
                    "special chunk kind",
                    other,
                    Expected::AtMost(4),
                ))
            }
        };
        let memcpyed = flags & FLAG_MEMCPYED != 0;
        // A memcpyed chunk may keep whatever codec bits the failed compression left.
        let compcode = if memcpyed || special != SpecialType::None {
            format_code_to_compcode(flags >> 5, udcompcode).unwrap_or(udcompcode)
        } else {
            format_code_to_compcode(flags >> 5, udcompcode)?
        };

        let vl_blocks = version == VERSION_FORMAT_VL_BLOCKS;
        if vl_blocks {
            if blosc2_flags2 & !0x01 != 0 {
                return Err(Error::header(
                    "chunk blosc2_flags2 (bit 0 only)",
                    blosc2_flags2,
                    Expected::AtMost(1),
                ));
            }
        } else if special == SpecialType::None && !(nbytes == 0 && cbytes == header_len) {
            if blocksize == 0 || blocksize > MAX_BLOCKSIZE {
                return Err(Error::header(
                    "chunk blocksize",
                    blocksize,
                    Expected::range(1, MAX_BLOCKSIZE),
                ));
            }
            if nbytes > 0 && blocksize > nbytes {
                return Err(Error::header(
                    "chunk blocksize (at most nbytes)",
                    blocksize,
                    Expected::at_most(nbytes),
                ));
            }
        }
        Ok(ChunkHeader {
            version,
            versionlz: src[1],
            flags,
            typesize,
            nbytes,
            blocksize,
            cbytes,
            header_len,
            filters,
            filters_meta,
            compcode,
            compcode_meta,
            blosc2_flags,
            blosc2_flags2,
            special,
        })
    }

    /// Writes this header into the first [`ChunkHeader::header_len`] bytes of `dst`.
    ///
    /// # Panics
    /// Never for a header built by Strata: sizes are ≤ [`MAX_BUFFERSIZE`] + overhead.
    pub fn write(&self, dst: &mut [u8]) {
        dst[0] = self.version;
        dst[1] = self.versionlz;
        dst[2] = self.flags;
        dst[3] = u8::try_from(self.typesize).unwrap_or(1);
        let i32le = |v: usize| i32::try_from(v).unwrap_or(i32::MAX).to_le_bytes();
        dst[4..8].copy_from_slice(&i32le(self.nbytes));
        dst[8..12].copy_from_slice(&i32le(self.blocksize));
        dst[12..16].copy_from_slice(&i32le(self.cbytes));
        if self.header_len == EXTENDED_HEADER_LENGTH {
            for (b, f) in dst[16..22].iter_mut().zip(&self.filters) {
                *b = f.0;
            }
            dst[22] = self.compcode.0;
            dst[23] = self.compcode_meta;
            dst[24..30].copy_from_slice(&self.filters_meta);
            dst[30] = self.blosc2_flags2;
            dst[31] = self.blosc2_flags;
        }
    }

    /// True if the data is stored raw after the header.
    #[must_use]
    pub fn memcpyed(&self) -> bool {
        self.flags & FLAG_MEMCPYED != 0
    }

    /// True if every block is a single stream.
    #[must_use]
    pub fn dont_split(&self) -> bool {
        self.flags & FLAG_DONT_SPLIT != 0
    }

    /// True if a dictionary section follows `bstarts`.
    #[must_use]
    pub fn use_dict(&self) -> bool {
        self.blosc2_flags & B2FLAG_USEDICT != 0
    }

    /// True if this is a C-Blosc2 3.x variable-length-block chunk.
    #[must_use]
    pub fn vl_blocks(&self) -> bool {
        self.version == VERSION_FORMAT_VL_BLOCKS
    }

    /// Number of blocks: `ceil(nbytes / blocksize)`, or the count stored in a VL-block chunk.
    #[must_use]
    pub fn nblocks(&self) -> usize {
        if self.vl_blocks() {
            self.blocksize
        } else if self.blocksize == 0 {
            0
        } else {
            self.nbytes.div_ceil(self.blocksize)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cblosc2_default_header() {
        // The header C-Blosc2 writes with its defaults for 100000 int64 (0, 1, 2, …).
        let mut h = vec![
            0x05, 0x01, 0x05, 0x08, 0x00, 0x35, 0x0c, 0x00, 0x00, 0x00, 0x08, 0x00, 0x5b, 0x10,
            0x00, 0x00, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        h.resize(0x105b, 0);
        let p = ChunkHeader::parse(&h).unwrap();
        assert_eq!(
            (p.version, p.typesize, p.nbytes, p.blocksize, p.cbytes),
            (5, 8, 800_000, 524_288, 4187)
        );
        assert_eq!(
            (p.header_len, p.compcode, p.filters),
            (32, CodecId::BLOSCLZ, [0, 0, 0, 0, 0, 1].map(FilterId))
        );
        assert_eq!(p.nblocks(), 2);
        assert!(!p.dont_split());
        let mut out = [0u8; 32];
        p.write(&mut out);
        assert_eq!(&out[..], &h[..32]);
    }

    #[test]
    fn blosc1_header_derives_filters_and_codec() {
        // Blosc 1.3.0 lz4 with shuffle: 02 01 21 04.
        let mut h = vec![0x02, 0x01, 0x21, 0x04];
        h.extend_from_slice(&64i32.to_le_bytes());
        h.extend_from_slice(&64i32.to_le_bytes());
        h.extend_from_slice(&20i32.to_le_bytes());
        h.resize(20, 0);
        let p = ChunkHeader::parse(&h).unwrap();
        assert_eq!(
            (p.header_len, p.compcode, p.filters[5]),
            (16, CodecId::LZ4, FilterId::SHUFFLE)
        );
    }

    #[test]
    fn rejects_lies() {
        let mut h = [0u8; 32];
        h[0] = 5;
        h[2] = 0x05;
        h[3] = 0; // typesize 0
        h[12] = 32;
        assert_eq!(ChunkHeader::parse(&h).unwrap_err().code(), -11);
        h[3] = 4;
        h[12] = 33; // cbytes beyond the source
        assert_eq!(ChunkHeader::parse(&h).unwrap_err().code(), -5);
        h[12] = 32;
        h[0] = 7;
        assert_eq!(ChunkHeader::parse(&h).unwrap_err().code(), -10);
        h[0] = 5;
        h[31] = 0x50; // special kind 5
        assert_eq!(ChunkHeader::parse(&h).unwrap_err().code(), -11);
        assert_eq!(ChunkHeader::parse(&h[..10]).unwrap_err().code(), -5);
    }
}
