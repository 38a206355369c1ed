//! Compression parameters of one chunk, as C-Blosc2's `blosc2_cparams`.

use crate::codecs::Capabilities;
use crate::error::{Error, Expected, Result};
use crate::format::b2nd::B2ndMeta;
use crate::format::chunk::{MAX_BLOCKSIZE, MAX_FILTERS};
use crate::format::ids::{CodecId, FilterId};
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
    /// [`Error::OutOfRange`] for any other number.
    pub fn from_code(code: u8) -> Result<Self> {
        match code {
            1 => Ok(SplitMode::Always),
            2 => Ok(SplitMode::Never),
            3 => Ok(SplitMode::Auto),
            4 => Ok(SplitMode::ForwardCompat),
            other => Err(Error::range("split mode", other, Expected::range(1, 4))),
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
    /// The codec ([`CodecId::BLOSCLZ`], [`CodecId::ZSTD`], a plugin's ID…).
    pub codec: CodecId,
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
    /// The filters, slot 0 applied first; [`FilterId::NOFILTER`] = empty slot.
    pub filters: [FilterId; MAX_FILTERS],
    /// Meta byte of each filter slot.
    pub filters_meta: [u8; MAX_FILTERS],
    /// Train and store a dictionary in the chunk (codecs that take one: zstd).
    pub use_dict: bool,
    /// Threads (the caller's included) that may compress blocks at once; 0 = the runtime's
    /// default (`STRATA_NTHREADS`, `BLOSC_NTHREADS`, else one per core). The bytes written
    /// are the same for every value.
    pub nthreads: usize,
    /// The N-d array (b2nd metalayer) the chunk belongs to, passed to the codec and filters;
    /// `None` for plain data. ZFP codecs need it. It is not stored in the chunk. Arrays and
    /// super-chunks with a `b2nd` metalayer set it from that metalayer.
    pub nd: Option<Arc<B2ndMeta>>,
}

impl Default for CParams {
    fn default() -> Self {
        CParams {
            codec: CodecId::BLOSCLZ,
            codec_meta: 0,
            clevel: 5,
            typesize: 8,
            blocksize: 0,
            splitmode: SplitMode::ForwardCompat,
            filters: [
                FilterId::NOFILTER,
                FilterId::NOFILTER,
                FilterId::NOFILTER,
                FilterId::NOFILTER,
                FilterId::NOFILTER,
                FilterId::SHUFFLE,
            ],
            filters_meta: [0; MAX_FILTERS],
            use_dict: false,
            nthreads: 0,
            nd: None,
        }
    }
}

impl CParams {
    /// These parameters with `codec`.
    #[must_use]
    pub fn with_codec(mut self, codec: CodecId) -> CParams {
        self.codec = codec;
        self
    }

    /// These parameters with the codec meta byte `meta`.
    #[must_use]
    pub fn with_codec_meta(mut self, meta: u8) -> CParams {
        self.codec_meta = meta;
        self
    }

    /// These parameters with compression level `clevel` (0–9).
    #[must_use]
    pub fn with_clevel(mut self, clevel: u8) -> CParams {
        self.clevel = clevel;
        self
    }

    /// These parameters with items of `typesize` bytes.
    #[must_use]
    pub fn with_typesize(mut self, typesize: usize) -> CParams {
        self.typesize = typesize;
        self
    }

    /// These parameters with blocks of `blocksize` bytes (0: chosen as C-Blosc2 does).
    #[must_use]
    pub fn with_blocksize(mut self, blocksize: usize) -> CParams {
        self.blocksize = blocksize;
        self
    }

    /// These parameters with split mode `splitmode`.
    #[must_use]
    pub fn with_splitmode(mut self, splitmode: SplitMode) -> CParams {
        self.splitmode = splitmode;
        self
    }

    /// These parameters with the filter pipeline `filters` (slot 0 first) and their meta
    /// bytes `meta`.
    #[must_use]
    pub fn with_filters(
        mut self,
        filters: [FilterId; MAX_FILTERS],
        meta: [u8; MAX_FILTERS],
    ) -> CParams {
        self.filters = filters;
        self.filters_meta = meta;
        self
    }

    /// These parameters training a dictionary (`true`) or not.
    #[must_use]
    pub fn with_use_dict(mut self, use_dict: bool) -> CParams {
        self.use_dict = use_dict;
        self
    }

    /// These parameters compressing with up to `nthreads` threads (0: the runtime's default).
    #[must_use]
    pub fn with_nthreads(mut self, nthreads: usize) -> CParams {
        self.nthreads = nthreads;
        self
    }

    /// These parameters for chunks of the N-d array `nd` (`None`: plain data).
    #[must_use]
    pub fn with_nd(mut self, nd: Option<Arc<B2ndMeta>>) -> CParams {
        self.nd = nd;
        self
    }

    /// Checks the ranges C-Blosc2 checks when creating a compression context (what the codec
    /// allows is checked when it is known: [`CParams::validate_for`]).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for clevel > 9, typesize 0 or > `BLOSC2_MAXTYPESIZE`, a
    /// blocksize > `BLOSC2_MAXBLOCKSIZE`.
    pub fn validate(&self) -> Result<()> {
        if self.clevel > 9 {
            return Err(Error::range("clevel", self.clevel, Expected::range(0, 9)));
        }
        if self.typesize == 0 || self.typesize > MAX_BLOCKSIZE {
            return Err(Error::range(
                "typesize",
                self.typesize,
                Expected::range(1, MAX_BLOCKSIZE),
            ));
        }
        if self.blocksize > MAX_BLOCKSIZE {
            return Err(Error::range(
                "blocksize",
                self.blocksize,
                Expected::at_most(MAX_BLOCKSIZE),
            ));
        }
        Ok(())
    }

    /// [`CParams::validate`], then what the codec, of capabilities `caps`, allows: a
    /// dictionary only for a codec that takes one, and no shuffle or bitshuffle before a codec
    /// that works on the N-d items (ZFP), as C-Blosc2 refuses it (`blosc2_create_cctx`).
    ///
    /// # Errors
    /// As [`CParams::validate`]; [`Error::Unsupported`] for shuffle or bitshuffle before an
    /// N-d codec; [`Error::CodecDict`] for a dictionary with a codec that takes none.
    pub fn validate_for(&self, caps: &Capabilities) -> Result<()> {
        self.validate()?;
        if caps.needs_nd
            && self
                .filters
                .iter()
                .any(|&f| f == FilterId::SHUFFLE || f == FilterId::BITSHUFFLE)
        {
            return Err(Error::Unsupported {
                what: "a codec that works on the array's items (ZFP) cannot follow shuffle or \
                       bitshuffle, as in C-Blosc2",
            });
        }
        if self.use_dict && !caps.dict {
            return Err(Error::CodecDict {
                id: self.codec.0,
                message: "this codec takes no dictionary (zstd does)".into(),
            });
        }
        Ok(())
    }
}

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

impl DParams {
    /// These parameters decompressing with up to `nthreads` threads (0: the runtime's
    /// default).
    #[must_use]
    pub fn with_nthreads(mut self, nthreads: usize) -> DParams {
        self.nthreads = nthreads;
        self
    }

    /// These parameters for chunks of the N-d array `nd` (`None`: plain data).
    #[must_use]
    pub fn with_nd(mut self, nd: Option<Arc<B2ndMeta>>) -> DParams {
        self.nd = nd;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codecs::{lz4::Lz4, zstd::Zstd, Codec};

    #[test]
    fn setters_build_what_literals_build() {
        let built = CParams::default()
            .with_codec(CodecId::ZSTD)
            .with_codec_meta(3)
            .with_clevel(7)
            .with_typesize(4)
            .with_blocksize(8192)
            .with_splitmode(SplitMode::Never)
            .with_filters([FilterId::DELTA; MAX_FILTERS], [1; MAX_FILTERS])
            .with_use_dict(true)
            .with_nthreads(3);
        let literal = CParams {
            codec: CodecId::ZSTD,
            codec_meta: 3,
            clevel: 7,
            typesize: 4,
            blocksize: 8192,
            splitmode: SplitMode::Never,
            filters: [FilterId::DELTA; MAX_FILTERS],
            filters_meta: [1; MAX_FILTERS],
            use_dict: true,
            nthreads: 3,
            nd: None,
        };
        assert_eq!(built, literal);
        assert_eq!(DParams::default().with_nthreads(2).nthreads, 2);
    }

    #[test]
    fn the_codec_decides_dictionaries_and_nd_filters() {
        let dict = CParams::default().with_use_dict(true);
        assert!(dict.validate_for(&Zstd.capabilities()).is_ok());
        assert_eq!(
            dict.validate_for(&Lz4.capabilities()).unwrap_err().code(),
            -9
        );
        let nd = Capabilities {
            needs_nd: true,
            ..Capabilities::default()
        };
        // The default pipeline shuffles: refused before an N-d codec, as C-Blosc2 does.
        let e = CParams::default().validate_for(&nd).unwrap_err();
        assert_eq!(e.code(), -12);
        assert!(e.to_string().contains("cannot follow shuffle"), "{e}");
        let mut bit = CParams::default();
        bit.filters[2] = FilterId::BITSHUFFLE;
        bit.filters[5] = FilterId::NOFILTER;
        assert!(bit.validate_for(&nd).is_err());
        let plain =
            CParams::default().with_filters([FilterId::NOFILTER; MAX_FILTERS], [0; MAX_FILTERS]);
        assert!(plain.validate_for(&nd).is_ok());
        assert!(CParams::default()
            .with_clevel(10)
            .validate_for(&Capabilities::default())
            .is_err());
    }
}
