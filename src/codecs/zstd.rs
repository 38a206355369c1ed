//! Zstd (codec ID 5, format code 4): a standard zstd frame per stream, optionally with a
//! dictionary stored in the chunk.
//!
//! Meta byte: unused. Level mapping as C-Blosc2 2.x/3.x: `clevel < 9 → 2·clevel − 1`, except
//! clevel 8 → 20; clevel 9 → 22 (zstd's maximum). With a dictionary the level is 1, whatever
//! the clevel (C-Blosc2 builds its CDict at level 1).
//! Format: c-blosc2 `blosc/blosc2.c` (`zstd_wrap_compress`, `zstd_wrap_decompress`).
//!
//! ```
//! use strata::codecs::{Codec, zstd::Zstd};
//! use strata::block::BlockContext;
//! let ctx = BlockContext { clevel: 5, typesize: 4, blocksize: 4000, ..BlockContext::default() };
//! let src: Vec<u8> = (0..1000u32).flat_map(|i| i.to_le_bytes()).collect();
//! let mut c = vec![0u8; src.len()];
//! let n = Zstd.compress(&src, &mut c, &ctx).unwrap();
//! let mut d = vec![0u8; src.len()];
//! Zstd.decompress(&c[..n], &mut d, &ctx).unwrap();
//! assert_eq!(d, src);
//! ```

use super::{Capabilities, Codec};
use crate::block::BlockContext;
use crate::error::{Error, Result};
use crate::format::ids::CodecId;
use std::cell::RefCell;

/// The Zstd codec.
#[derive(Debug, Default, Clone, Copy)]
pub struct Zstd;

/// The zstd level C-Blosc2 uses for a clevel (1–9).
#[must_use]
pub fn zstd_level(clevel: u8) -> i32 {
    match clevel {
        9.. => 22,
        8 => 20,
        c => 2 * i32::from(c) - 1,
    }
}

thread_local! {
    // One compression and one decompression context per thread, reused across blocks, as
    // C-Blosc2 keeps one per thread context.
    static CCTX: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    static DCTX: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

impl Codec for Zstd {
    fn id(&self) -> CodecId {
        CodecId::ZSTD
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            dict: true,
            high_ratio: true,
            split_max_clevel: Some(5),
            needs_nd: false,
        }
    }
    fn name(&self) -> &str {
        "zstd"
    }
    fn format_code(&self) -> u8 {
        4
    }
    fn compress(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<usize> {
        if let Some(dict) = ctx.dict {
            let mut c = zstd::bulk::Compressor::with_dictionary(1, dict)
                .map_err(|e| zstd(Kind::Dict, &e))?;
            return Ok(c.compress_to_buffer(src, dst).unwrap_or(0));
        }
        CCTX.with(|cell| {
            let mut slot = cell.borrow_mut();
            let c = match slot.as_mut() {
                Some(c) => c,
                None => {
                    slot.insert(zstd::bulk::Compressor::new(1).map_err(|e| zstd(Kind::Param, &e))?)
                }
            };
            c.set_compression_level(zstd_level(ctx.clevel))
                .map_err(|e| zstd(Kind::Param, &e))?;
            // "Does not fit" is not an error: the pipeline stores the stream raw.
            Ok(c.compress_to_buffer(src, dst).unwrap_or(0))
        })
    }
    fn decompress(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<usize> {
        if let Some(dict) = ctx.dict {
            let mut d = zstd::bulk::Decompressor::with_dictionary(dict)
                .map_err(|e| zstd(Kind::Dict, &e))?;
            return d
                .decompress_to_buffer(src, dst)
                .map_err(|e| zstd(Kind::Stream, &e));
        }
        DCTX.with(|cell| {
            let mut slot = cell.borrow_mut();
            let d = match slot.as_mut() {
                Some(d) => d,
                None => {
                    slot.insert(zstd::bulk::Decompressor::new().map_err(|e| zstd(Kind::Param, &e))?)
                }
            };
            d.decompress_to_buffer(src, dst)
                .map_err(|e| zstd(Kind::Stream, &e))
        })
    }
}

/// Which of a codec's errors a zstd failure is.
enum Kind {
    Dict,
    Param,
    Stream,
}

fn zstd(kind: Kind, e: &std::io::Error) -> Error {
    let (id, message) = (5, format!("zstd: {e}"));
    match kind {
        Kind::Dict => Error::CodecDict { id, message },
        Kind::Param => Error::CodecParam { id, message },
        Kind::Stream => Error::Codec { id, message },
    }
}
