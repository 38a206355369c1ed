//! Zlib (codec ID 4, format code 3): a zlib (RFC 1950) stream with header and Adler-32.
//!
//! Meta byte: unused. The clevel (1–9) is zlib's level, as in C-Blosc2 2.x/3.x (`compress2`).
//! The implementation is zlib-rs (through flate2), a port of zlib-ng, the library C-Blosc2
//! bundles: on the grids tested its streams have the same sizes as C-Blosc2's.
//! Format: c-blosc2 `blosc/blosc2.c` (`zlib_wrap_compress`, `zlib_wrap_decompress`).
//!
//! ```
//! use strata::codecs::{Codec, zlib::Zlib};
//! use strata::block::BlockContext;
//! let ctx = BlockContext { clevel: 5, typesize: 1, blocksize: 1000, ..BlockContext::default() };
//! let src = b"climate grids compress well, climate grids compress well".repeat(20);
//! let mut c = vec![0u8; src.len()];
//! let n = Zlib.compress(&src, &mut c, &ctx).unwrap();
//! let mut d = vec![0u8; src.len()];
//! Zlib.decompress(&c[..n], &mut d, &ctx).unwrap();
//! assert_eq!(d, src);
//! ```

use super::{Capabilities, Codec};
use crate::block::BlockContext;
use crate::error::{Error, Result};
use crate::format::ids::CodecId;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// The Zlib codec.
#[derive(Debug, Default, Clone, Copy)]
pub struct Zlib;

impl Codec for Zlib {
    fn id(&self) -> CodecId {
        CodecId::ZLIB
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            high_ratio: true,
            ..Capabilities::default()
        }
    }
    fn name(&self) -> &str {
        "zlib"
    }
    fn format_code(&self) -> u8 {
        3
    }
    fn compress(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<usize> {
        let mut z = Compress::new(Compression::new(u32::from(ctx.clevel.min(9))), true);
        match z.compress(src, dst, FlushCompress::Finish) {
            Ok(Status::StreamEnd) => Ok(usize::try_from(z.total_out()).unwrap_or(0)),
            // The stream did not end: the output does not fit, store the stream raw.
            Ok(_) | Err(_) => Ok(0),
        }
    }
    fn decompress(&self, src: &[u8], dst: &mut [u8], _ctx: &BlockContext<'_>) -> Result<usize> {
        let mut z = Decompress::new(true);
        match z.decompress(src, dst, FlushDecompress::Finish) {
            Ok(Status::StreamEnd) => usize::try_from(z.total_out()).map_err(|_| Error::Internal {
                what: "zlib wrote more bytes than the output holds",
            }),
            Ok(_) => Err(zlib("stream incomplete or output too small".into())),
            Err(e) => Err(zlib(format!("{e}"))),
        }
    }
}

fn zlib(message: String) -> Error {
    Error::Codec {
        id: 4,
        message: format!("zlib: {message}"),
    }
}
