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
//! and backwards when decompressing. SIMD kernels with run-time CPU dispatch live in
//! [`simd`], each with a scalar twin.
//! Format: c-blosc2 `include/blosc2.h` (`BLOSC_*` filter IDs), `blosc/blosc2.c` (`pipeline_forward`).

use crate::error::Result;

pub mod bitshuffle;
pub mod bytedelta;
pub mod delta;
pub mod shuffle;
pub mod simd;
pub mod trunc_prec;

/// What a filter may need to know about the block it handles.
#[derive(Debug, Clone, Copy)]
pub struct FilterCtx<'a> {
    /// Item size of the chunk in bytes (from the header; >255 is stored as 1).
    pub typesize: usize,
    /// The filter's meta byte (chunk header bytes 24–29, `filters_meta`).
    pub meta: u8,
    /// Index of the block in the chunk.
    pub nblock: usize,
    /// Offset of the block in the uncompressed chunk, in bytes.
    pub offset: usize,
    /// The chunk format version byte (bitshuffle decodes version 2 chunks differently).
    pub version: u8,
    /// The delta reference: when compressing, the whole raw chunk input; when
    /// decompressing, the already decoded block 0 (empty for block 0 itself).
    pub dref: &'a [u8],
    /// The N-d array the chunk belongs to, when the caller gave it (see
    /// [`crate::codecs::CodecCtx::nd`]); plugin filters receive its shapes.
    pub nd: Option<&'a crate::format::b2nd::B2ndMeta>,
}

/// A filter registered under a Blosc2 ID.
pub trait Filter: Send + Sync {
    /// The Blosc2 filter ID (chunk header bytes 16–21).
    fn id(&self) -> u8;
    /// The filter's name as Blosc2 spells it (`shuffle`, `bitshuffle`, ...).
    fn name(&self) -> &str;
    /// Transforms `src` into `dst` (same length, the block size) when compressing.
    ///
    /// # Errors
    /// [`crate::Error::Filter`] when the filter cannot handle this typesize or meta.
    fn forward(&self, src: &[u8], dst: &mut [u8], ctx: &FilterCtx<'_>) -> Result<()>;
    /// Undoes [`Filter::forward`]: transforms `src` into `dst` (same length).
    ///
    /// # Errors
    /// [`crate::Error::Filter`] when the filter cannot handle this typesize or meta.
    fn backward(&self, src: &[u8], dst: &mut [u8], ctx: &FilterCtx<'_>) -> Result<()>;
}
