//! `BITSHUFFLE` — filter ID 2, name `bitshuffle`: bit transpose of each block.
//!
//! With `ts` the typesize, `N = len / ts` and `N8 = N - N % 8`, the first `N8*ts` bytes become
//! `8*ts` rows of `N8/8` bytes: row `8j + k` holds bit `k` of byte `j` of every element,
//! element `8g + m` at bit `m` of the row's byte `g`. The remaining `len - N8*ts` bytes are
//! copied unchanged. Backward is the inverse.
//!
//! **Blosc1 chunks** (`BlockContext::version == 2`): C-Blosc 1.x left a block whose element count
//! is not a multiple of 8 entirely unshuffled, so backward copies such a block unchanged.
//!
//! **Meta byte:** ignored. The typesize must be 1–256.
//!
//! **Matches** C-Blosc2 2.x and 3.x `bshuf_trans_bit_elem` byte for byte (checked against
//! python-blosc2 4.14.1 / C-Blosc2 3.3.5, fixtures in `tests/data/filters/`). SIMD kernels
//! (AVX2, SSE2, scalar twin) live in the filters' internal `simd` module.
//!
//! Format: `docs/filters.md`; c-blosc2 `blosc/shuffle.c` (`bitshuffle`, `bitunshuffle`),
//! `blosc/bitshuffle-generic.c`.
//!
//! ```
//! use strata::filters::{Filter, bitshuffle::Bitshuffle};
//! use strata::block::BlockContext;
//! let ctx = BlockContext { typesize: 1, ..BlockContext::default() };
//! // Eight bytes with only bit 0 set in element 3: row 0 gets 1 << 3.
//! let src = [0u8, 0, 0, 1, 0, 0, 0, 0];
//! let mut out = [0u8; 8];
//! Bitshuffle.forward(&src, &mut out, &ctx).unwrap();
//! assert_eq!(out, [8, 0, 0, 0, 0, 0, 0, 0]);
//! let mut back = [0u8; 8];
//! Bitshuffle.backward(&out, &mut back, &ctx).unwrap();
//! assert_eq!(back, src);
//! ```
#![forbid(unsafe_code)]

use super::shuffle::{kernel_err, same_len};
use super::{simd, Filter};
use crate::block::BlockContext;
use crate::error::{Error, Result};
use crate::format::ids::FilterId;

/// The bit-shuffle filter (ID 2).
#[derive(Debug, Default, Clone, Copy)]
pub struct Bitshuffle;

/// Filter ID of [`Bitshuffle`].
const ID: FilterId = FilterId::BITSHUFFLE;

/// Checks the typesize.
fn element_size(ctx: &BlockContext<'_>) -> Result<usize> {
    if (1..=256).contains(&ctx.typesize) {
        Ok(ctx.typesize)
    } else {
        Err(Error::Filter {
            id: ID.0,
            message: format!("typesize {} is not in 1..=256", ctx.typesize),
        })
    }
}

impl Filter for Bitshuffle {
    fn id(&self) -> FilterId {
        ID
    }
    fn name(&self) -> &str {
        "bitshuffle"
    }
    fn forward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        same_len(ID, src, dst)?;
        let ts = element_size(ctx)?;
        simd::bitshuffle(ts, src, dst).map_err(kernel_err(ID))
    }
    fn backward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        same_len(ID, src, dst)?;
        let ts = element_size(ctx)?;
        if ctx.version == 2 && !(src.len() / ts).is_multiple_of(8) {
            dst.copy_from_slice(src);
            return Ok(());
        }
        simd::bitunshuffle(ts, src, dst).map_err(kernel_err(ID))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(typesize: usize, version: u8) -> BlockContext<'static> {
        BlockContext {
            typesize,
            meta: 0,
            nblock: 0,
            offset: 0,
            version,
            dref: &[],
            nd: None,
            ..BlockContext::default()
        }
    }

    #[test]
    fn round_trips_with_tails() {
        for ts in [1usize, 2, 3, 4, 7, 8, 16, 33, 255] {
            for len in [0usize, 1, 9, 64, 100, 1000, 8195] {
                let src: Vec<u8> = (0..len).map(|i| (i * 37 + ts) as u8).collect();
                let (mut f, mut b) = (vec![0; len], vec![0; len]);
                Bitshuffle.forward(&src, &mut f, &ctx(ts, 5)).unwrap();
                Bitshuffle.backward(&f, &mut b, &ctx(ts, 5)).unwrap();
                assert_eq!(b, src, "ts={ts} len={len}");
            }
        }
    }

    #[test]
    fn blosc1_chunks_keep_odd_blocks_unshuffled() {
        let src: Vec<u8> = (0..4 * 13).map(|i| (i * 5) as u8).collect();
        let mut out = vec![0; src.len()];
        // 13 elements: not a multiple of 8, so a version-2 block is a plain copy.
        Bitshuffle.backward(&src, &mut out, &ctx(4, 2)).unwrap();
        assert_eq!(out, src);
        // Version 3+ transforms the first 8 elements.
        Bitshuffle.backward(&src, &mut out, &ctx(4, 3)).unwrap();
        assert_ne!(out, src);
        assert_eq!(out[32..], src[32..]);
        // 16 elements: version 2 bit-unshuffles as usual.
        let src: Vec<u8> = (0..4 * 16 + 3).map(|i| (i * 5) as u8).collect();
        let (mut f, mut b) = (vec![0; src.len()], vec![0; src.len()]);
        Bitshuffle.forward(&src, &mut f, &ctx(4, 2)).unwrap();
        Bitshuffle.backward(&f, &mut b, &ctx(4, 2)).unwrap();
        assert_eq!(b, src);
    }

    #[test]
    fn errors_instead_of_panics() {
        let mut dst = [0u8; 8];
        assert!(matches!(
            Bitshuffle.forward(&[0; 8], &mut dst, &ctx(0, 5)),
            Err(Error::Filter { id: 2, .. })
        ));
        assert!(Bitshuffle
            .forward(&[0; 8], &mut dst, &ctx(1000, 5))
            .is_err());
        assert!(Bitshuffle.backward(&[0; 7], &mut dst, &ctx(1, 5)).is_err());
    }
}
