//! The filter's `cd_values`: what `set_local` stores for a new dataset, and what a chunk's
//! compression reads back from them.
//!
//! | slot | meaning |
//! |---|---|
//! | 0 | filter revision, [`FILTER_REVISION`] |
//! | 1 | block size in bytes, 0 = chosen by the writer |
//! | 2 | typesize: the datatype's size (its base type's for an HDF5 array type) |
//! | 3 | chunk bytes: the datatype's size × the number of items in a chunk |
//! | 4 | clevel |
//! | 5 | the Blosc2 filter in slot 5 of the chunk's pipeline (0 none, 1 shuffle, 2 bitshuffle, 3 delta, 4 trunc_prec) |
//! | 6 | codec ID (`compcode`), plugin codecs included |
//! | 7 | chunk rank, only for b2nd chunks |
//! | 8… | chunk dims, outermost first |
//!
//! Format: `docs/hdf5.md` (the layout both hdf5plugin and PyTables use).
#![forbid(unsafe_code)]

use crate::error::{Error, Expected, Result};
use crate::format::b2nd::MAX_DIM;

/// HDF5's ID for Blosc2.
pub const FILTER_ID: i32 = 32026;
/// `cd_values[0]`, the revision of the filter's conventions.
pub const FILTER_REVISION: u32 = 1;
/// The most values a dataset's pipeline stores: 8 + a rank-16 chunk's dims.
pub const MAX_CD_VALUES: usize = 8 + MAX_DIM;
/// The highest rank whose chunks are written as b2nd frames: PyTables (up to 3.11 at least)
/// refuses a larger `cd_values[7]` through its filter; higher ranks get plain frames.
pub const MAX_WRITE_RANK: usize = 8;
/// C-Blosc2's defaults for the slots a user may leave out: clevel 5, shuffle, BloscLZ.
const DEFAULT_CLEVEL: u32 = 5;
const DEFAULT_FILTER: u32 = 1;
const DEFAULT_CODEC: u32 = 0;

/// The `cd_values` `set_local` stores for a new dataset: the user's `given` values, slots 0, 2
/// and 3 overwritten, missing clevel, filter and codec set to C-Blosc2's defaults (for every
/// rank: without them no chunk would be compressed, and an optional filter would store every
/// chunk raw), and the chunk's rank and dims appended when `1 < rank <=` [`MAX_WRITE_RANK`].
///
/// `typesize` is the datatype's size (its base type's for an array type), `type_size` its
/// full size, `chunk_dims` the dataset's chunk dims.
///
/// # Errors
/// [`Error::OutOfRange`] when a chunk holds more than `u32::MAX` bytes (HDF5's own limit is
/// lower) or a type size is 0.
pub fn set_local(
    given: &[u32],
    typesize: usize,
    type_size: usize,
    chunk_dims: &[u64],
) -> Result<Vec<u32>> {
    if typesize == 0 || type_size == 0 {
        return Err(Error::range("datatype size", 0, Expected::at_least(1)));
    }
    let chunksize = chunk_dims
        .iter()
        .fold(type_size as u64, |acc, &d| acc.saturating_mul(d));
    let chunksize = u32::try_from(chunksize).map_err(|_| {
        Error::range(
            "bytes of a chunk (4 GiB)",
            chunksize,
            Expected::at_most(u32::MAX),
        )
    })?;
    let typesize = u32::try_from(typesize)
        .map_err(|_| Error::range("typesize", typesize, Expected::at_most(u32::MAX)))?;
    let mut cd = vec![
        FILTER_REVISION,
        given.get(1).copied().unwrap_or(0),
        typesize,
        chunksize,
        given.get(4).copied().unwrap_or(DEFAULT_CLEVEL),
        given.get(5).copied().unwrap_or(DEFAULT_FILTER),
        given.get(6).copied().unwrap_or(DEFAULT_CODEC),
    ];
    let rank = chunk_dims.len();
    if (2..=MAX_WRITE_RANK).contains(&rank) {
        cd.push(rank as u32);
        for &d in chunk_dims {
            cd.push(
                u32::try_from(d)
                    .map_err(|_| Error::range("chunk dim", d, Expected::at_most(u32::MAX)))?,
            );
        }
    }
    Ok(cd)
}

/// What a chunk is compressed with, read from a dataset's `cd_values`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Block size in bytes (slot 1); 0 = Strata chooses.
    pub blocksize: usize,
    /// Typesize (slot 2).
    pub typesize: usize,
    /// The chunk's bytes as the dataset's datatype and chunk dims give them (slot 3).
    pub chunksize: usize,
    /// clevel (slot 4).
    pub clevel: u8,
    /// The Blosc2 filter in pipeline slot 5 (slot 5).
    pub filter: u8,
    /// Codec ID (slot 6).
    pub codec: u8,
    /// The chunk dims (slots 7…), when the values give a rank.
    pub dims: Option<Vec<usize>>,
}

impl Settings {
    /// Reads `cd`. Slots 4–6 may be missing (C-Blosc2's defaults then); slots 0–3 may not.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for fewer than 4 values, a clevel, filter or codec out of range
    /// or a rank outside 2 to 16; [`Error::Mismatch`] for fewer dims than it announces.
    pub fn from_cd(cd: &[u32]) -> Result<Settings> {
        if cd.len() < 4 {
            let what = "cd_values of the Blosc2 filter";
            return Err(Error::range(what, cd.len(), Expected::at_least(4)));
        }
        let byte = |slot: usize, default: u32, what: &'static str, max: u32| -> Result<u8> {
            let v = cd.get(slot).copied().unwrap_or(default);
            if v > max {
                return Err(Error::range(what, v, Expected::at_most(max)));
            }
            Ok(v as u8)
        };
        let dims = if cd.len() > 7 {
            let rank = cd[7] as usize;
            if !(2..=MAX_DIM).contains(&rank) {
                let ranks = Expected::range(2, MAX_DIM);
                return Err(Error::range("rank (cd_values[7])", rank, ranks));
            }
            let dims = cd.get(8..8 + rank).ok_or_else(|| {
                let what = "chunk dims in cd_values (the rank's)";
                Error::mismatch(what, rank, cd.len() - 8)
            })?;
            Some(dims.iter().map(|&d| d as usize).collect())
        } else {
            None
        };
        Ok(Settings {
            blocksize: cd[1] as usize,
            typesize: (cd[2] as usize).max(1),
            chunksize: cd[3] as usize,
            clevel: byte(4, DEFAULT_CLEVEL, "clevel (cd_values[4])", 9)?,
            filter: byte(5, DEFAULT_FILTER, "filter (cd_values[5])", 255)?,
            codec: byte(6, DEFAULT_CODEC, "codec (cd_values[6])", 255)?,
            dims,
        })
    }

    /// The chunk dims when a chunk of `nbytes` is to be written as a b2nd frame: the values
    /// give a rank and the chunk holds exactly `typesize` × ∏ dims bytes (a filter before
    /// Blosc2 that adds bytes, Fletcher32 for one, leaves a plain frame that keeps them all).
    #[must_use]
    pub fn b2nd_dims(&self, nbytes: usize) -> Option<&[usize]> {
        let dims = self.dims.as_deref()?;
        let items = dims.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
        (items.checked_mul(self.typesize) == Some(nbytes)).then_some(dims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_local_matches_the_peers_for_rank_2() {
        // hdf5plugin Blosc2(zstd, 5, BITSHUFFLE), f4, chunk (50, 60)
        assert_eq!(
            set_local(&[0, 0, 0, 0, 5, 2, 5], 4, 4, &[50, 60]).unwrap(),
            [1, 0, 4, 12000, 5, 2, 5, 2, 50, 60]
        );
        // h5py compression=32026 without options, 2-D
        assert_eq!(
            set_local(&[], 4, 4, &[5, 100]).unwrap(),
            [1, 0, 4, 2000, 5, 1, 0, 2, 5, 100]
        );
    }

    #[test]
    fn set_local_fills_defaults_for_rank_1_and_keeps_the_blocksize() {
        // hdf5plugin leaves (1, 0, 4, 400) here, which compresses nothing.
        assert_eq!(
            set_local(&[], 4, 4, &[100]).unwrap(),
            [1, 0, 4, 400, 5, 1, 0]
        );
        // PyTables' blocksize in slot 1 and lz4 in slot 6
        assert_eq!(
            set_local(&[5, 800, 0, 0, 5, 1, 1], 8, 8, &[100]).unwrap(),
            [1, 800, 8, 800, 5, 1, 1]
        );
    }

    #[test]
    fn set_local_stores_no_rank_above_8_and_the_base_typesize_of_arrays() {
        let dims = [2u64; 10];
        assert_eq!(
            set_local(&[], 2, 2, &dims).unwrap(),
            [1, 0, 2, 2048, 5, 1, 0]
        );
        // an H5T_ARRAY of 3 f4 per item, chunk (10, 10): typesize 4, chunk bytes 12 * 100
        assert_eq!(
            set_local(&[], 4, 12, &[10, 10]).unwrap(),
            [1, 0, 4, 1200, 5, 1, 0, 2, 10, 10]
        );
    }

    #[test]
    fn set_local_refuses_chunks_past_4_gib() {
        let e = set_local(&[], 8, 8, &[1 << 20, 1 << 10]).unwrap_err();
        assert!(e.to_string().contains("4 GiB"), "{e}");
        assert!(
            matches!(e, Error::OutOfRange { value, .. } if value == 8 << 30),
            "{e}"
        );
    }

    #[test]
    fn settings_read_every_slot_and_default_the_missing_ones() {
        let s = Settings::from_cd(&[1, 0, 8, 800]).unwrap();
        assert_eq!((s.clevel, s.filter, s.codec, s.dims), (5, 1, 0, None));
        let s = Settings::from_cd(&[1, 1024, 4, 12000, 9, 2, 5, 2, 50, 60]).unwrap();
        assert_eq!(
            s,
            Settings {
                blocksize: 1024,
                typesize: 4,
                chunksize: 12000,
                clevel: 9,
                filter: 2,
                codec: 5,
                dims: Some(vec![50, 60]),
            }
        );
        assert_eq!(s.b2nd_dims(12000), Some(&[50, 60][..]));
        assert_eq!(
            s.b2nd_dims(12004),
            None,
            "Fletcher32 before Blosc2: a plain frame"
        );
    }

    #[test]
    fn lying_settings_are_errors() {
        for (cd, what, value) in [
            (&[1, 0, 4][..], "cd_values of the Blosc2 filter", 3),
            (&[1, 0, 4, 400, 10, 1, 0], "clevel (cd_values[4])", 10),
            (&[1, 0, 4, 400, 5, 256, 0], "filter (cd_values[5])", 256),
            (&[1, 0, 4, 400, 5, 1, 0, 17], "rank (cd_values[7])", 17),
            (&[1, 0, 4, 400, 5, 1, 0, 1, 400], "rank (cd_values[7])", 1),
        ] {
            let e = Settings::from_cd(cd).unwrap_err();
            assert!(
                matches!(e, Error::OutOfRange { what: w, value: v, .. } if w == what && v == value),
                "{cd:?}: {e}"
            );
        }
        let e = Settings::from_cd(&[1, 0, 4, 400, 5, 1, 0, 3, 4, 10]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Mismatch {
                    expected: 3,
                    found: 2,
                    ..
                }
            ),
            "{e}"
        );
    }
}
