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

use crate::error::Result;
use crate::format::b2nd::B2ndMeta;

pub mod blosclz;
pub mod lz4;
pub mod lz4hc;
pub mod zlib;
pub mod zstd;

/// What a codec may need to know about the stream it handles.
#[derive(Debug, Clone, Copy)]
pub struct CodecCtx<'a> {
    /// Compression level, 0 to 9 (0 never reaches a codec: the chunk is memcpyed).
    pub clevel: u8,
    /// The codec meta byte (chunk header byte 23, `compcode_meta`).
    pub meta: u8,
    /// Item size in bytes.
    pub typesize: usize,
    /// Block size of the chunk in bytes.
    pub blocksize: usize,
    /// Index of the block in the chunk.
    pub nblock: usize,
    /// A zstd dictionary (the chunk's dict section), if the chunk has one.
    pub dict: Option<&'a [u8]>,
    /// The N-d array the chunk belongs to (its b2nd metalayer), when the caller gave it
    /// ([`crate::chunk::CParams::nd`], [`crate::chunk::DParams::nd`]); codecs such as ZFP need
    /// its blockshape.
    pub nd: Option<&'a B2ndMeta>,
}

/// A compression codec registered under a Blosc2 ID.
pub trait Codec: Send + Sync {
    /// The Blosc2 codec ID (`compcode`, chunk header byte 22).
    fn id(&self) -> u8;
    /// The codec's name as Blosc2 spells it (`blosclz`, `lz4`, ...).
    fn name(&self) -> &str;
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
    fn compress(&self, src: &[u8], dst: &mut [u8], ctx: &CodecCtx<'_>) -> Result<usize>;
    /// Decompresses `src` into `dst`, returning the number of bytes written.
    ///
    /// # Errors
    /// [`crate::Error::Data`] when `src` is not a valid stream or does not fit in `dst`.
    fn decompress(&self, src: &[u8], dst: &mut [u8], ctx: &CodecCtx<'_>) -> Result<usize>;
    /// Decompresses only the items `[start, start + dst.len() / typesize)` of an unsplit block
    /// (item indices in the block, C order) into `dst`, decoding as little of `src` as it can
    /// (ZFP's fixed-rate cells). `None` declines, and the pipeline decodes the whole block. The
    /// default declines.
    ///
    /// # Errors
    /// [`crate::Error::Data`] when `src` is not a valid stream.
    fn decompress_items(
        &self,
        _src: &[u8],
        _dst: &mut [u8],
        _start: usize,
        _ctx: &CodecCtx<'_>,
    ) -> Result<Option<usize>> {
        Ok(None)
    }
}
