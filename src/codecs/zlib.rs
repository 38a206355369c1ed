//! Zlib (codec ID 4, format code 3): a zlib (RFC 1950) stream with header and Adler-32.
//!
//! Meta byte: unused. The clevel (1–9) is zlib's level, as in C-Blosc2 2.x/3.x (`compress2`).
//! The implementation is zlib-rs (through flate2), a port of zlib-ng, the library C-Blosc2
//! bundles: on the grids tested its streams have the same sizes as C-Blosc2's.
//! Format: c-blosc2 `blosc/blosc2.c` (`zlib_wrap_compress`, `zlib_wrap_decompress`).
//!
//! ```
//! use strata::codecs::{Codec, CodecCtx, zlib::Zlib};
//! let ctx = CodecCtx { clevel: 5, meta: 0, typesize: 1, blocksize: 1000, nblock: 0, dict: None, nd: None };
//! let src = b"climate grids compress well, climate grids compress well".repeat(20);
//! let mut c = vec![0u8; src.len()];
//! let n = Zlib.compress(&src, &mut c, &ctx).unwrap();
//! let mut d = vec![0u8; src.len()];
//! Zlib.decompress(&c[..n], &mut d, &ctx).unwrap();
//! assert_eq!(d, src);
//! ```

use super::{Codec, CodecCtx};
use crate::error::{Error, Result};
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// The Zlib codec.
#[derive(Debug, Default, Clone, Copy)]
pub struct Zlib;

impl Codec for Zlib {
    fn id(&self) -> u8 {
        4
    }
    fn name(&self) -> &str {
        "zlib"
    }
    fn format_code(&self) -> u8 {
        3
    }
    fn compress(&self, src: &[u8], dst: &mut [u8], ctx: &CodecCtx<'_>) -> Result<usize> {
        let mut z = Compress::new(Compression::new(u32::from(ctx.clevel.min(9))), true);
        match z.compress(src, dst, FlushCompress::Finish) {
            Ok(Status::StreamEnd) => Ok(usize::try_from(z.total_out()).unwrap_or(0)),
            // The stream did not end: the output does not fit, store the stream raw.
            Ok(_) | Err(_) => Ok(0),
        }
    }
    fn decompress(&self, src: &[u8], dst: &mut [u8], _ctx: &CodecCtx<'_>) -> Result<usize> {
        let mut z = Decompress::new(true);
        match z.decompress(src, dst, FlushDecompress::Finish) {
            Ok(Status::StreamEnd) => usize::try_from(z.total_out())
                .map_err(|_| Error::Data("zlib: output size overflow".into())),
            Ok(_) => Err(Error::Data(
                "zlib: stream incomplete or output too small".into(),
            )),
            Err(e) => Err(Error::Data(format!("zlib: {e}"))),
        }
    }
}
