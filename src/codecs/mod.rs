//! Codecs by Blosc2 ID: one module each, behind the [`Codec`] trait.
//!
//! | ID | name | module |
//! |---|---|---|
//! | 0 | blosclz | [`blosclz`] (written here, byte-identical to C-Blosc2) |
//! | 1 | lz4 | [`lz4`] |
//! | 2 | lz4hc | [`lz4hc`] |
//! | 4 | zlib | [`zlib`] |
//! | 5 | zstd | [`zstd`] |
//!
//! A codec sees one stream of one block at a time; the chunk pipeline does the rest.
//! Format: c-blosc2 `include/blosc2.h` (`BLOSC_*` codec IDs and `BLOSC_*_FORMAT` codes).

use crate::block::BlockContext;
use crate::error::Result;
use crate::format::ids::CodecId;

pub mod blosclz;
pub mod lz4;
pub mod lz4hc;
pub mod zlib;
pub mod zstd;

/// What a codec can do and what it needs, which the chunk pipeline asks instead of knowing
/// codec IDs. The default (every field off) is what a plugin gets unless it declares more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// The codec takes a dictionary that the pipeline trains on the chunk (zstd's format;
    /// [`crate::chunk::CParams::use_dict`] needs it) and stores in the chunk.
    pub dict: bool,
    /// The codec works on the items of the N-d array ([`BlockContext::nd`]) as numbers (ZFP): it
    /// needs the array, and shuffle or bitshuffle may not reorder the bytes before it
    /// (C-Blosc2 refuses that combination).
    pub needs_nd: bool,
    /// One of C-Blosc2's "high compression ratio" codecs (LZ4HC, Zlib, Zstd), which get larger
    /// automatic block sizes.
    pub high_ratio: bool,
    /// The highest clevel at which the automatic split modes split shuffled blocks into one
    /// stream per byte of the item (BloscLZ and LZ4: 9; Zstd: 5); `None` never splits.
    pub split_max_clevel: Option<u8>,
}

/// A compression codec registered under a Blosc2 ID.
pub trait Codec: Send + Sync {
    /// The Blosc2 codec ID (`compcode`, chunk header byte 22).
    fn id(&self) -> CodecId;
    /// The codec's name as Blosc2 spells it (`blosclz`, `lz4`, ...).
    fn name(&self) -> &str;
    /// What the codec can do and needs; the default declares nothing.
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }
    /// The 3-bit format code stored in chunk flags bits 5–7 (6 = "codec in byte 22").
    fn format_code(&self) -> u8 {
        6
    }
    /// The codec format version (chunk header byte 1, `versionlz`).
    fn version(&self) -> u8 {
        1
    }
    /// Compresses `src` into `dst`, returning the compressed size in bytes, or 0 when the
    /// output does not fit in `dst` or the data is not worth compressing (the pipeline then
    /// stores the stream raw).
    ///
    /// # Errors
    /// A codec failure other than "does not fit".
    fn compress(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<usize>;
    /// Decompresses `src` into `dst`, returning the number of bytes written.
    ///
    /// # Errors
    /// [`crate::Error::Codec`] when `src` is not a valid stream or does not fit in `dst`.
    fn decompress(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<usize>;
    /// Decompresses only the first `dst.len()` bytes of the stream `src` into `dst`, stopping
    /// the decoder there (LZ4's partial decoding), for a reader that needs only the first items
    /// of a block. Returns the bytes written, which the pipeline checks are `dst.len()`; the
    /// rest of the stream is neither decoded nor checked. `None` declines, and the pipeline
    /// decodes the whole stream. The default declines.
    ///
    /// # Errors
    /// [`crate::Error::Codec`] when the decoded part of `src` is not a valid stream.
    fn decompress_prefix(
        &self,
        _src: &[u8],
        _dst: &mut [u8],
        _ctx: &BlockContext<'_>,
    ) -> Result<Option<usize>> {
        Ok(None)
    }
    /// Decompresses only the items `[start, start + dst.len() / typesize)` of an unsplit block
    /// (item indices in the block, C order) into `dst`, decoding as little of `src` as it can
    /// (ZFP's fixed-rate cells). `None` declines, and the pipeline decodes the whole block. The
    /// default declines.
    ///
    /// # Errors
    /// [`crate::Error::Codec`] when `src` is not a valid stream.
    fn decompress_items(
        &self,
        _src: &[u8],
        _dst: &mut [u8],
        _start: usize,
        _ctx: &BlockContext<'_>,
    ) -> Result<Option<usize>> {
        Ok(None)
    }
}
