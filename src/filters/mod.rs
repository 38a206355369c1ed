//! Filters by Blosc2 ID: one module each, behind the [`Filter`] trait.
//!
//! | ID | name | module |
//! |---|---|---|
//! | 1 | shuffle | [`shuffle`] |
//! | 2 | bitshuffle | [`bitshuffle`] |
//! | 3 | delta | [`delta`] |
//! | 4 | trunc_prec | [`trunc_prec`] |
//! | 34 | bytedelta (old, buggy variant; decode only bit-exact) | [`bytedelta`] |
//! | 35 | bytedelta | [`bytedelta`] |
//!
//! A filter transforms one block. Up to six run in sequence when compressing (slot 0 first)
//! and backwards when decompressing. SIMD kernels with run-time CPU dispatch live in an
//! internal module, each with a scalar twin; [`simd_level`] names the instruction set they use.
//! Format: c-blosc2 `include/blosc2.h` (`BLOSC_*` filter IDs), `blosc/blosc2.c` (`pipeline_forward`).

use crate::block::BlockContext;
use crate::error::Result;
use crate::format::ids::FilterId;

pub mod bitshuffle;
pub mod bytedelta;
pub mod delta;
pub mod shuffle;
pub(crate) mod simd;
pub mod trunc_prec;

/// The instruction set the SIMD kernels of the shuffle filters use on this machine (`avx2`,
/// `sse2` or `scalar`), chosen once at run time.
#[must_use]
pub fn simd_level() -> &'static str {
    simd::Level::detect().name()
}

/// A filter registered under a Blosc2 ID.
pub trait Filter: Send + Sync {
    /// The Blosc2 filter ID (chunk header bytes 16–21).
    fn id(&self) -> FilterId;
    /// The filter's name as Blosc2 spells it (`shuffle`, `bitshuffle`, ...).
    fn name(&self) -> &str;
    /// Transforms `src` into `dst` (same length, the block size) when compressing.
    ///
    /// # Errors
    /// [`crate::Error::Filter`] when the filter cannot handle this typesize or meta.
    fn forward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()>;
    /// Undoes [`Filter::forward`]: transforms `src` into `dst` (same length).
    ///
    /// # Errors
    /// [`crate::Error::Filter`] when the filter cannot handle this typesize or meta.
    fn backward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()>;
}
