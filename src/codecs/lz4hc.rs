//! LZ4HC (codec ID 2, format code 1): LZ4's high-compression encoder, same block format as LZ4.
//!
//! Meta byte: unused. The clevel (1–9) is passed to `LZ4_compress_HC` as its level, as C-Blosc2
//! 2.x/3.x does. Encoding and decoding use liblz4 (through the `lz4` crate), as for LZ4.
//! Only chunk header byte 22 tells LZ4HC chunks from LZ4 ones.
//! Format: c-blosc2 `blosc/blosc2.c` (`lz4hc_wrap_compress`).
//!
//! ```
//! use strata::codecs::{Codec, lz4hc::Lz4hc};
//! use strata::block::BlockContext;
//! let ctx = BlockContext { clevel: 9, typesize: 1, blocksize: 4096, ..BlockContext::default() };
//! let src: Vec<u8> = (0..4096u32).map(|i| (i % 17) as u8).collect();
//! let mut c = vec![0u8; 4096];
//! let n = Lz4hc.compress(&src, &mut c, &ctx).unwrap();
//! let mut d = vec![0u8; 4096];
//! Lz4hc.decompress(&c[..n], &mut d, &ctx).unwrap();
//! assert_eq!(d, src);
//! ```

use super::{Capabilities, Codec};
use crate::block::BlockContext;
use crate::error::Result;
use crate::format::ids::CodecId;

/// The LZ4HC codec.
#[derive(Debug, Default, Clone, Copy)]
pub struct Lz4hc;

impl Codec for Lz4hc {
    fn id(&self) -> CodecId {
        CodecId::LZ4HC
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            high_ratio: true,
            ..Capabilities::default()
        }
    }
    fn name(&self) -> &str {
        "lz4hc"
    }
    fn format_code(&self) -> u8 {
        1
    }
    fn compress(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<usize> {
        let mode = ::lz4::block::CompressionMode::HIGHCOMPRESSION(i32::from(ctx.clevel));
        // liblz4 reports "does not fit" as an error; the pipeline then stores the stream raw.
        Ok(::lz4::block::compress_to_buffer(src, Some(mode), false, dst).unwrap_or(0))
    }
    fn decompress(&self, src: &[u8], dst: &mut [u8], _ctx: &BlockContext<'_>) -> Result<usize> {
        super::lz4::decompress_block(2, src, dst)
    }
    fn decompress_prefix(
        &self,
        src: &[u8],
        dst: &mut [u8],
        _ctx: &BlockContext<'_>,
    ) -> Result<Option<usize>> {
        super::lz4::decompress_block_prefix(2, src, dst).map(Some)
    }
}
