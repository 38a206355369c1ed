//! Special chunks: a 32-byte header standing for `nbytes` bytes of zeros, NaNs or undefined
//! values, or a header and one item repeated. Built as C-Blosc2 builds them, so the bytes match.
//!
//! Format: c-blosc2 `blosc/blosc2.c` (`blosc2_chunk_zeros`, `blosc2_chunk_nans`,
//! `blosc2_chunk_uninit`, `blosc2_chunk_repeatval`); `docs/chunk-format.md`.
//!
//! ```
//! use strata::chunk::{decompress_vec, special_chunk, CParams};
//! use strata::format::chunk::SpecialType;
//! let cparams = CParams { typesize: 4, ..CParams::default() };
//! let c = special_chunk(&cparams, SpecialType::Zero, 4000, None).unwrap();
//! assert_eq!(c.len(), 32);
//! assert_eq!(decompress_vec(&c).unwrap(), vec![0u8; 4000]);
//! ```

use super::{compute_blocksize, CParams, Context};
use crate::error::{Error, Expected, Result};
use crate::format::chunk::{
    ChunkHeader, SpecialType, EXTENDED_HEADER_LENGTH, FLAG_BITSHUFFLE, FLAG_SHUFFLE,
    MAX_BUFFERSIZE, MAX_FILTERS, MAX_TYPESIZE, VERSION_FORMAT_STABLE,
};
use crate::format::ids::{CodecId, FilterId};

/// A special chunk standing for `nbytes` bytes without storing them, as C-Blosc2's
/// `blosc2_chunk_zeros`, `_nans`, `_uninit` and `_repeatval` write it: a 32-byte header with
/// codec and filters 0 and the blocksize C-Blosc2 chooses for `cparams` (as [`super::compress`]
/// does), then, for [`SpecialType::Value`], the repeated value (`cparams.typesize` bytes).
///
/// Format: c-blosc2 `blosc/blosc2.c` (`blosc2_chunk_zeros` and siblings);
/// `docs/chunk-format.md` (special chunks).
///
/// # Errors
/// The errors of [`CParams::validate`] for bad `cparams`; [`Error::OutOfRange`] for `nbytes`
/// not a multiple of the typesize (except for zeros) or NaNs with a typesize other than 4 or 8;
/// [`Error::Unsupported`] for [`SpecialType::None`] or a `value` given for another kind;
/// [`Error::Mismatch`] for a `value` missing or not `typesize` bytes;
/// [`Error::MaxBufsizeExceeded`] for more than `BLOSC2_MAX_BUFFERSIZE` bytes.
pub fn special_chunk(
    cparams: &CParams,
    special: SpecialType,
    nbytes: usize,
    value: Option<&[u8]>,
) -> Result<Vec<u8>> {
    special_chunk_ctx(&Context::global(), cparams, special, nbytes, value)
}

/// [`special_chunk`] with the codec's block-size rules asked of `ctx`'s registry.
///
/// # Errors
/// As [`special_chunk`].
pub fn special_chunk_ctx(
    ctx: &Context,
    cparams: &CParams,
    special: SpecialType,
    nbytes: usize,
    value: Option<&[u8]>,
) -> Result<Vec<u8>> {
    cparams.validate()?;
    let ts = cparams.typesize;
    if nbytes > MAX_BUFFERSIZE {
        return Err(Error::MaxBufsizeExceeded {
            size: nbytes,
            limit: MAX_BUFFERSIZE,
        });
    }
    // Zeros may end in part of an item (a frame's last chunk, as C-Blosc2 writes it); the
    // other kinds stand for whole items, as the decoder requires.
    if special != SpecialType::Zero && !nbytes.is_multiple_of(ts) {
        let items = Expected::MultipleOf(ts as i64);
        return Err(Error::range("nbytes (whole items)", nbytes, items));
    }
    match (special, value) {
        (SpecialType::None, _) => {
            return Err(Error::Unsupported {
                what: "a special chunk needs a special kind",
            })
        }
        (SpecialType::Value, Some(v)) if v.len() == ts => {}
        (SpecialType::Value, v) => {
            let found = v.map_or(0, <[u8]>::len);
            return Err(Error::mismatch(
                "bytes of the repeated value (the typesize)",
                ts,
                found,
            ));
        }
        (_, Some(_)) => {
            return Err(Error::Unsupported {
                what: "only a repeated-value chunk takes a value",
            })
        }
        (SpecialType::Nan, None) if ts != 4 && ts != 8 => {
            let float = Expected::OneOf("4 or 8");
            return Err(Error::range("typesize of NaN items", ts, float));
        }
        _ => {}
    }
    let value = value.unwrap_or(&[]);
    let header = ChunkHeader {
        version: VERSION_FORMAT_STABLE,
        versionlz: 1,
        flags: FLAG_SHUFFLE | FLAG_BITSHUFFLE,
        typesize: if ts > MAX_TYPESIZE { 1 } else { ts },
        nbytes,
        blocksize: compute_blocksize(cparams, &ctx.codec_caps(cparams.codec), nbytes),
        cbytes: EXTENDED_HEADER_LENGTH + value.len(),
        header_len: EXTENDED_HEADER_LENGTH,
        filters: [FilterId::NOFILTER; MAX_FILTERS],
        filters_meta: [0; MAX_FILTERS],
        compcode: CodecId::BLOSCLZ,
        compcode_meta: 0,
        blosc2_flags: (special as u8) << 4,
        blosc2_flags2: 0,
        special,
    };
    let mut out = vec![0u8; header.cbytes];
    header.write(&mut out);
    out[EXTENDED_HEADER_LENGTH..].copy_from_slice(value);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::decompress_vec;

    fn cparams(typesize: usize) -> CParams {
        CParams {
            typesize,
            ..CParams::default()
        }
    }

    #[test]
    fn zeros_may_end_in_part_of_an_item() {
        let c = special_chunk(&cparams(7), SpecialType::Zero, 4000, None).unwrap();
        assert_eq!(c.len(), EXTENDED_HEADER_LENGTH);
        assert_eq!(decompress_vec(&c).unwrap(), vec![0u8; 4000]);
    }

    #[test]
    fn other_kinds_need_whole_items() {
        let cp = cparams(4);
        for (kind, value) in [
            (SpecialType::Nan, None),
            (SpecialType::Uninit, None),
            (SpecialType::Value, Some(&[1u8, 2, 3, 4][..])),
        ] {
            let err = special_chunk(&cp, kind, 4002, value).unwrap_err();
            assert_eq!(err.code(), -12, "{kind:?}: {err}");
            let c = special_chunk(&cp, kind, 4000, value).unwrap();
            assert_eq!(decompress_vec(&c).unwrap().len(), 4000, "{kind:?}");
        }
    }
}
