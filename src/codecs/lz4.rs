//! LZ4 (codec ID 1, format code 1): raw LZ4 block format, no frame.
//!
//! Meta byte: unused. C-Blosc2 matched: 3.x (`LZ4_compress_fast` with acceleration
//! `10 − clevel`; C-Blosc2 2.x always used 1, so its LZ4 chunks below clevel 9 differ). Compression calls liblz4 1.10
//! (through the `lz4` crate), the release C-Blosc2 3.3 bundles, so Strata's LZ4 chunks equal
//! C-Blosc2's byte for byte and give the same ratios. Decompression uses liblz4's
//! `LZ4_decompress_safe`, made for untrusted input (it never reads or writes out of bounds),
//! which decoded faster than the pure-Rust decoders tried (`docs/measurements.md`). A reader
//! that needs only the first bytes of a stream gets them from `LZ4_decompress_safe_partial`,
//! which stops decoding there ([`Codec::decompress_prefix`]).
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

#![allow(unsafe_code)]

use super::{Capabilities, Codec};
use crate::block::BlockContext;
use crate::error::{Error, Result};
use crate::format::ids::CodecId;
use std::os::raw::{c_char, c_int};

// liblz4's partial decoder, in the library the `lz4` crate links (its bindings leave it out).
extern "C" {
    fn LZ4_decompress_safe_partial(
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        target_output_size: c_int,
        dst_capacity: c_int,
    ) -> c_int;
}

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

/// Decodes the first `dst.len()` bytes of the raw LZ4 block `src` into `dst`, stopping there;
/// returns the bytes written (fewer when the block holds fewer). Shared by [`Lz4`] and the
/// LZ4HC codec (`id` names which in errors).
pub(crate) fn decompress_block_prefix(id: u8, src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let too_big = |what: &str, n: usize| Error::Codec {
        id,
        message: format!("lz4: {what} of {n} bytes is too large for liblz4"),
    };
    let src_size = c_int::try_from(src.len()).map_err(|_| too_big("a stream", src.len()))?;
    let target = c_int::try_from(dst.len()).map_err(|_| too_big("an output", dst.len()))?;
    // SAFETY: liblz4's `_safe_` decoders are made for untrusted input: they read at most
    // `src_size` bytes from `src` and write at most `dst_capacity` bytes to `dst`, which are
    // the lengths of the two slices (checked to fit in a C int above); the slices do not
    // overlap (one is borrowed shared, the other exclusively), and liblz4 keeps no pointer to
    // either after it returns. `src_size` is the exact stream length, so any target is allowed
    // (lz4.h, note 4 of `LZ4_decompress_safe_partial`).
    let n = unsafe {
        LZ4_decompress_safe_partial(
            src.as_ptr().cast::<c_char>(),
            dst.as_mut_ptr().cast::<c_char>(),
            src_size,
            target,
            target,
        )
    };
    usize::try_from(n).map_err(|_| Error::Codec {
        id,
        message: format!("lz4: the stream is corrupt (liblz4 returned {n})"),
    })
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
    fn decompress_prefix(
        &self,
        src: &[u8],
        dst: &mut [u8],
        _ctx: &BlockContext<'_>,
    ) -> Result<Option<usize>> {
        decompress_block_prefix(1, src, dst).map(Some)
    }
}
