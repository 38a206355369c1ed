//! LZ4 (codec ID 1, format code 1): raw LZ4 block format, no frame.
//!
//! Meta byte: unused. C-Blosc2 matched: 2.x and 3.x (`LZ4_compress_fast` with acceleration 1;
//! the clevel does not change LZ4's output there, nor here). Compression uses lz4_flex; its
//! streams decode with any LZ4 block decoder, though they need not equal liblz4's byte for byte.
//! Format: c-blosc2 `blosc/blosc2.c` (`lz4_wrap_compress`, `lz4_wrap_decompress`).
//!
//! ```
//! use strata::codecs::{Codec, CodecCtx, lz4::Lz4};
//! let ctx = CodecCtx { clevel: 5, meta: 0, typesize: 1, blocksize: 4096, nblock: 0, dict: None };
//! let src = vec![7u8; 4096];
//! let mut c = vec![0u8; 4096];
//! let n = Lz4.compress(&src, &mut c, &ctx).unwrap();
//! let mut d = vec![0u8; 4096];
//! assert_eq!(Lz4.decompress(&c[..n], &mut d, &ctx).unwrap(), 4096);
//! assert_eq!(d, src);
//! ```

use super::{Codec, CodecCtx};
use crate::error::{Error, Result};

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The LZ4 codec.
#[derive(Debug, Default, Clone, Copy)]
pub struct Lz4;

/// Decodes one raw LZ4 block into `dst`; shared by [`Lz4`] and the LZ4HC codec.
pub(crate) fn decompress_block(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    lz4_flex::block::decompress_into(src, dst).map_err(|e| Error::Data(format!("lz4: {e}")))
}

impl Codec for Lz4 {
    fn id(&self) -> u8 {
        1
    }
    fn name(&self) -> &str {
        "lz4"
    }
    fn format_code(&self) -> u8 {
        1
    }
    fn compress(&self, src: &[u8], dst: &mut [u8], _ctx: &CodecCtx<'_>) -> Result<usize> {
        // lz4_flex wants room for the worst case; compress there, keep it only if it fits.
        let bound = lz4_flex::block::get_maximum_output_size(src.len());
        if dst.len() >= bound {
            return Ok(lz4_flex::block::compress_into(src, dst).unwrap_or(0));
        }
        SCRATCH.with(|cell| {
            let mut scratch = cell.borrow_mut();
            scratch.resize(bound, 0);
            match lz4_flex::block::compress_into(src, &mut scratch) {
                Ok(n) if n <= dst.len() => {
                    dst[..n].copy_from_slice(&scratch[..n]);
                    Ok(n)
                }
                // An output that does not fit is not an error: the pipeline stores it raw.
                _ => Ok(0),
            }
        })
    }
    fn decompress(&self, src: &[u8], dst: &mut [u8], _ctx: &CodecCtx<'_>) -> Result<usize> {
        decompress_block(src, dst)
    }
}
