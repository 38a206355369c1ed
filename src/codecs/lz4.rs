//! LZ4 (codec ID 1, format code 1): raw LZ4 block format, no frame.
//!
//! Meta byte: unused. C-Blosc2 matched: 3.x (`LZ4_compress_fast` with acceleration
//! `10 − clevel`; C-Blosc2 2.x always used 1, so its LZ4 chunks below clevel 9 differ). Compression calls liblz4 1.10
//! (through the `lz4` crate), the release C-Blosc2 3.3 bundles, so Strata's LZ4 chunks equal
//! C-Blosc2's byte for byte and give the same ratios. Decompression uses liblz4's
//! `LZ4_decompress_safe`, made for untrusted input (it never reads or writes out of bounds),
//! which decoded faster than the pure-Rust decoders tried (`docs/measurements.md`).
//! Format: c-blosc2 `blosc/blosc2.c` (`lz4_wrap_compress`, `lz4_wrap_decompress`).
//!
//! ```
//! use strata::codecs::{Codec, lz4::Lz4};
//! use strata::block::BlockContext;
//! let ctx = BlockContext { clevel: 9, typesize: 1, blocksize: 4096, ..BlockContext::default() };
//! let src = vec![7u8; 4096];
//! let mut c = vec![0u8; 4096];
//! let n = Lz4.compress(&src, &mut c, &ctx).unwrap();
//! let mut d = vec![0u8; 4096];
//! assert_eq!(Lz4.decompress(&c[..n], &mut d, &ctx).unwrap(), 4096);
//! assert_eq!(d, src);
//! ```

use super::{Capabilities, Codec};
use crate::block::BlockContext;
use crate::error::{Error, Result};
use crate::format::ids::CodecId;

/// The LZ4 codec.
#[derive(Debug, Default, Clone, Copy)]
pub struct Lz4;

/// Decodes one raw LZ4 block into `dst`, returning the bytes written; shared by [`Lz4`] and
/// the LZ4HC codec (`id` names which in errors).
pub(crate) fn decompress_block(id: u8, src: &[u8], dst: &mut [u8]) -> Result<usize> {
    match ::lz4::block::decompress_to_buffer(
        src,
        Some(i32::try_from(dst.len()).unwrap_or(i32::MAX)),
        dst,
    ) {
        Ok(n) => Ok(n),
        Err(e) => Err(Error::Codec {
            id,
            message: format!("lz4: {e}"),
        }),
    }
}

impl Codec for Lz4 {
    fn id(&self) -> CodecId {
        CodecId::LZ4
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            split_max_clevel: Some(9),
            ..Capabilities::default()
        }
    }
    fn name(&self) -> &str {
        "lz4"
    }
    fn format_code(&self) -> u8 {
        1
    }
    fn compress(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<usize> {
        // liblz4's fast mode with acceleration 10 − clevel, as C-Blosc2 3.x calls it; "does
        // not fit" is an error there, and the pipeline then stores the stream raw.
        let mode = ::lz4::block::CompressionMode::FAST(10 - i32::from(ctx.clevel.min(9)));
        Ok(::lz4::block::compress_to_buffer(src, Some(mode), false, dst).unwrap_or(0))
    }
    fn decompress(&self, src: &[u8], dst: &mut [u8], _ctx: &BlockContext<'_>) -> Result<usize> {
        decompress_block(1, src, dst)
    }
}
