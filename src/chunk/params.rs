//! Compression parameters of one chunk, as C-Blosc2's `blosc2_cparams`.

use crate::error::{Error, Result};
use crate::format::b2nd::B2ndMeta;
use crate::format::chunk::{filter_id, MAX_BLOCKSIZE, MAX_FILTERS};
use std::sync::Arc;

/// How blocks are split into one stream per byte of the item (Blosc2 `BLOSC_*_SPLIT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SplitMode {
    /// Always split (`BLOSC_ALWAYS_SPLIT` = 1).
    Always = 1,
    /// Never split (`BLOSC_NEVER_SPLIT` = 2).
    Never = 2,
    /// Split when it usually pays off (`BLOSC_AUTO_SPLIT` = 3).
    Auto = 3,
    /// As [`SplitMode::Auto`] (`BLOSC_FORWARD_COMPAT_SPLIT` = 4), C-Blosc2's default.
    #[default]
    ForwardCompat = 4,
}

impl SplitMode {
    /// The mode for a Blosc2 split-mode number (1 to 4).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for any other number.
    pub fn from_code(code: u8) -> Result<Self> {
        match code {
            1 => Ok(SplitMode::Always),
            2 => Ok(SplitMode::Never),
            3 => Ok(SplitMode::Auto),
            4 => Ok(SplitMode::ForwardCompat),
            other => Err(Error::InvalidParam(format!(
                "split mode {other} is not 1 to 4"
            ))),
        }
    }
}

/// Parameters for compressing one chunk. Defaults are C-Blosc2's `BLOSC2_CPARAMS_DEFAULTS`:
/// BloscLZ, clevel 5, typesize 8, shuffle in filter slot 5, automatic block size,
/// forward-compatible split.
///
/// Format: c-blosc2 `include/blosc2.h` (`blosc2_cparams`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CParams {
    /// Codec ID (`compcode`): 0 blosclz, 1 lz4, 2 lz4hc, 4 zlib, 5 zstd, 32+ plugins.
    pub codec: u8,
    /// Codec meta byte, passed to the codec unchanged.
    pub codec_meta: u8,
    /// Compression level 0–9; 0 stores the data raw.
    pub clevel: u8,
    /// Item size in bytes, 1 to `BLOSC2_MAXTYPESIZE`; a chunk header stores > 255 as 1.
    pub typesize: usize,
    /// Block size in bytes; 0 chooses it as C-Blosc2 does, so default output matches.
    pub blocksize: usize,
    /// Stream split mode.
    pub splitmode: SplitMode,
    /// Filter IDs, slot 0 applied first; 0 = empty slot.
    pub filters: [u8; MAX_FILTERS],
    /// Meta byte of each filter slot.
    pub filters_meta: [u8; MAX_FILTERS],
    /// Train and store a zstd dictionary in the chunk (zstd only).
    pub use_dict: bool,
    /// Threads (the caller's included) that may compress blocks at once; 0 = the runtime's
    /// default (`STRATA_NTHREADS`, `BLOSC_NTHREADS`, else one per core). The bytes written
    /// are the same for every value.
    pub nthreads: usize,
    /// The N-d array (b2nd metalayer) the chunk belongs to, passed to the codec and filters;
    /// `None` for plain data. ZFP codecs need it. It is not stored in the chunk.
    pub nd: Option<Arc<B2ndMeta>>,
}

impl Default for CParams {
    fn default() -> Self {
        CParams {
            codec: 0,
            codec_meta: 0,
            clevel: 5,
            typesize: 8,
            blocksize: 0,
            splitmode: SplitMode::ForwardCompat,
            filters: [0, 0, 0, 0, 0, filter_id::SHUFFLE],
            filters_meta: [0; MAX_FILTERS],
            use_dict: false,
            nthreads: 0,
            nd: None,
        }
    }
}

impl CParams {
    /// Checks the ranges C-Blosc2 checks when creating a compression context.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for clevel > 9, typesize 0 or > `BLOSC2_MAXTYPESIZE`, a
    /// blocksize > `BLOSC2_MAXBLOCKSIZE`, a ZFP codec with shuffle or bitshuffle;
    /// [`Error::CodecDict`] for a dictionary with a codec
    /// other than zstd.
    pub fn validate(&self) -> Result<()> {
        if self.clevel > 9 {
            return Err(Error::InvalidParam(format!(
                "clevel {} is not 0 to 9",
                self.clevel
            )));
        }
        if self.typesize == 0 || self.typesize > MAX_BLOCKSIZE {
            return Err(Error::InvalidParam(format!(
                "typesize {} is not 1 to {MAX_BLOCKSIZE}",
                self.typesize
            )));
        }
        if self.blocksize > MAX_BLOCKSIZE {
            return Err(Error::InvalidParam(format!(
                "blocksize {} exceeds {MAX_BLOCKSIZE}",
                self.blocksize
            )));
        }
        if (ZFP_FIRST..=ZFP_LAST).contains(&self.codec)
            && self
                .filters
                .iter()
                .any(|&f| f == filter_id::SHUFFLE || f == filter_id::BITSHUFFLE)
        {
            return Err(Error::InvalidParam(format!(
                "codec {} (ZFP) cannot follow shuffle or bitshuffle, as in C-Blosc2",
                self.codec
            )));
        }
        if self.use_dict && self.codec != 5 {
            return Err(Error::CodecDict(format!(
                "dictionaries need zstd (codec 5), not codec {}",
                self.codec
            )));
        }
        Ok(())
    }
}

/// The ZFP codec IDs (FIXED_ACCURACY 33 to FIXED_RATE 35), which C-Blosc2 refuses to combine
/// with shuffle or bitshuffle (`blosc2_create_cctx`).
const ZFP_FIRST: u8 = 33;
const ZFP_LAST: u8 = 35;

/// Parameters for decompressing, as C-Blosc2's `blosc2_dparams`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DParams {
    /// Threads (the caller's included) that may decompress blocks at once; 0 = the runtime's
    /// default.
    pub nthreads: usize,
    /// The N-d array (b2nd metalayer) the chunk belongs to, passed to the codec and filters
    /// (C-Blosc2 codecs read it from `dparams->schunk`); `None` for plain data.
    pub nd: Option<Arc<B2ndMeta>>,
}
