//! `SHUFFLE` — filter ID 1, name `shuffle`: byte transpose of each block.
//!
//! With `ts` the element size and `N = len / ts`, byte `j` of element `i` moves to
//! `out[j*N + i]`; the last `len % ts` bytes are copied unchanged. Backward is the inverse.
//!
//! **Meta byte:** the element size when non-zero, else the chunk typesize (meta is honoured
//! from C-Blosc2 2.23.1 / 3.0.0 on; older writers always leave it 0). The element size must be
//! 1–256 (C-Blosc2's limit; a chunk header holds 1–255).
//!
//! **Matches** C-Blosc2 2.x and 3.x (checked byte for byte against python-blosc2 4.14.1 /
//! C-Blosc2 3.3.5, fixtures in `tests/data/filters/`). SIMD kernels (AVX2, SSE2, scalar twin)
//! live in the filters' internal `simd` module.
//!
//! Format: `docs/filters.md`; c-blosc2 `blosc/shuffle.c`, `blosc/shuffle-generic.h`.
//!
//! ```
//! use strata::filters::{Filter, shuffle::Shuffle};
//! use strata::block::BlockContext;
//! let ctx = BlockContext { typesize: 4, ..BlockContext::default() };
//! let src: Vec<u8> = (1..=3u32).flat_map(u32::to_le_bytes).collect();
//! let mut out = vec![0u8; src.len()];
//! Shuffle.forward(&src, &mut out, &ctx).unwrap();
//! assert_eq!(out, [1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
//! let mut back = vec![0u8; src.len()];
//! Shuffle.backward(&out, &mut back, &ctx).unwrap();
//! assert_eq!(back, src);
//! ```
#![forbid(unsafe_code)]

use super::{simd, Filter};
use crate::block::BlockContext;
use crate::error::{Error, Result};
use crate::format::ids::FilterId;

/// The byte-shuffle filter (ID 1).
#[derive(Debug, Default, Clone, Copy)]
pub struct Shuffle;

/// Filter ID of [`Shuffle`].
const ID: FilterId = FilterId::SHUFFLE;

impl Shuffle {
    /// The element size for this block: `meta` if non-zero, else the typesize.
    fn element_size(ctx: &BlockContext<'_>) -> Result<usize> {
        let ts = if ctx.meta != 0 {
            usize::from(ctx.meta)
        } else {
            ctx.typesize
        };
        if (1..=256).contains(&ts) {
            Ok(ts)
        } else {
            Err(Error::Filter {
                id: ID.0,
                message: format!("element size {ts} is not in 1..=256"),
            })
        }
    }
}

/// Checks that `src` and `dst` have the same length.
pub(super) fn same_len(id: FilterId, src: &[u8], dst: &[u8]) -> Result<()> {
    if src.len() == dst.len() {
        Ok(())
    } else {
        Err(Error::Filter {
            id: id.0,
            message: format!("source has {} bytes, destination {}", src.len(), dst.len()),
        })
    }
}

/// Turns a kernel argument error (already ruled out by the caller) into a filter error.
pub(super) fn kernel_err(id: FilterId) -> impl FnOnce(Error) -> Error {
    move |e| Error::Filter {
        id: id.0,
        message: e.to_string(),
    }
}

impl Filter for Shuffle {
    fn id(&self) -> FilterId {
        ID
    }
    fn name(&self) -> &str {
        "shuffle"
    }
    fn forward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        same_len(ID, src, dst)?;
        let ts = Self::element_size(ctx)?;
        simd::shuffle(ts, src, dst).map_err(kernel_err(ID))
    }
    fn backward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        same_len(ID, src, dst)?;
        let ts = Self::element_size(ctx)?;
        simd::unshuffle(ts, src, dst).map_err(kernel_err(ID))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(typesize: usize, meta: u8) -> BlockContext<'static> {
        BlockContext {
            typesize,
            meta,
            nblock: 0,
            offset: 0,
            version: 5,
            dref: &[],
            nd: None,
            ..BlockContext::default()
        }
    }

    #[test]
    fn meta_overrides_typesize() {
        let src: Vec<u8> = (0..20).collect();
        let mut a = vec![0; 20];
        let mut b = vec![0; 20];
        Shuffle.forward(&src, &mut a, &ctx(4, 2)).unwrap();
        Shuffle.forward(&src, &mut b, &ctx(2, 0)).unwrap();
        assert_eq!(a, b);
        assert_eq!(&a[..10], &[0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
    }

    #[test]
    fn round_trips_with_tails() {
        for ts in [1usize, 2, 3, 4, 8, 12, 16, 255] {
            for len in [0usize, 1, 5, 31, 100, 1000, 4099] {
                let src: Vec<u8> = (0..len).map(|i| (i * 31 + ts) as u8).collect();
                let (mut f, mut b) = (vec![0; len], vec![0; len]);
                Shuffle.forward(&src, &mut f, &ctx(ts, 0)).unwrap();
                Shuffle.backward(&f, &mut b, &ctx(ts, 0)).unwrap();
                assert_eq!(b, src, "ts={ts} len={len}");
                assert_eq!(f[len - len % ts..], src[len - len % ts..]);
            }
        }
    }

    #[test]
    fn errors_instead_of_panics() {
        let mut dst = [0u8; 8];
        let e = Shuffle.forward(&[0; 8], &mut dst, &ctx(0, 0)).unwrap_err();
        assert!(matches!(e, Error::Filter { id: 1, .. }));
        assert!(Shuffle.forward(&[0; 8], &mut dst, &ctx(257, 0)).is_err());
        assert!(Shuffle.backward(&[0; 9], &mut dst, &ctx(4, 0)).is_err());
        assert!(Shuffle.forward(&[0; 8], &mut dst, &ctx(300, 4)).is_ok());
    }
}
