//! What a codec or a filter is told about the block it handles: one context for both, as
//! the plugin ABI's block context (`strata_block_ctx`, [`strata_plugin_api::BlockContext`]) is
//! one for both.
//!
//! ```
//! use strata::block::BlockContext;
//! use strata::codecs::{lz4::Lz4, Codec};
//! let ctx = BlockContext { clevel: 9, typesize: 1, blocksize: 4096, ..BlockContext::default() };
//! let src = b"a block of bytes, a block of bytes, a block of bytes".repeat(20);
//! let mut c = vec![0u8; src.len()];
//! let n = Lz4.compress(&src, &mut c, &ctx).unwrap();
//! let mut d = vec![0u8; src.len()];
//! Lz4.decompress(&c[..n], &mut d, &ctx).unwrap();
//! assert_eq!(d, src);
//! ```

use crate::format::b2nd::B2ndMeta;
use crate::format::chunk::VERSION_FORMAT_STABLE;

/// The block a codec or filter call is about, and the chunk it belongs to.
#[derive(Debug, Clone, Copy)]
pub struct BlockContext<'a> {
    /// Item size of the chunk in bytes (from the header: one above 255 is stored as 1).
    pub typesize: usize,
    /// Block size of the chunk in bytes (the last block may be shorter).
    pub blocksize: usize,
    /// Index of the block in the chunk.
    pub nblock: usize,
    /// Offset of the block in the uncompressed chunk, in bytes.
    pub offset: usize,
    /// The meta byte: the codec's (chunk header byte 23, `compcode_meta`) for a codec, the
    /// filter slot's (bytes 24–29, `filters_meta`) for a filter.
    pub meta: u8,
    /// Compression level 1–9 when compressing (0 never reaches a codec: the chunk is stored
    /// raw); 0 when decompressing.
    pub clevel: u8,
    /// The chunk format version (header byte 0); bitshuffle decodes version 2 chunks otherwise.
    pub version: u8,
    /// The chunk's dictionary (its dict section), for a codec that takes one.
    pub dict: Option<&'a [u8]>,
    /// The delta reference of a filter: when compressing, the whole raw chunk; when
    /// decompressing, the already decoded block 0 (empty for block 0 itself).
    pub dref: &'a [u8],
    /// The N-d array the chunk belongs to (its b2nd metalayer), when the caller gave it
    /// ([`crate::chunk::CParams::nd`], [`crate::chunk::DParams::nd`]); codecs such as ZFP need
    /// its blockshape, plugin filters receive its shapes.
    pub nd: Option<&'a B2ndMeta>,
}

impl Default for BlockContext<'_> {
    /// Block 0 at offset 0 of a chunk in the format Strata writes (version 5), every size,
    /// byte and level 0, without a dictionary, a delta reference or an N-d array.
    fn default() -> Self {
        BlockContext {
            typesize: 0,
            blocksize: 0,
            nblock: 0,
            offset: 0,
            meta: 0,
            clevel: 0,
            version: VERSION_FORMAT_STABLE,
            dict: None,
            dref: &[],
            nd: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_block_zero_of_a_version_5_chunk() {
        let c = BlockContext::default();
        assert_eq!(
            (
                c.typesize,
                c.blocksize,
                c.nblock,
                c.offset,
                c.meta,
                c.clevel
            ),
            (0, 0, 0, 0, 0, 0)
        );
        assert_eq!(c.version, 5);
        assert!(c.dict.is_none() && c.dref.is_empty() && c.nd.is_none());
    }
}
