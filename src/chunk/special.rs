//! Special chunks: a 32-byte header standing for `nbytes` bytes of zeros, NaNs or undefined
//! values, or a header and one item repeated. Built as C-Blosc2 builds them, so the bytes match.
//!
//! Format: c-blosc2 `blosc/blosc2.c` (`blosc2_chunk_zeros`, `blosc2_chunk_nans`,
//! `blosc2_chunk_uninit`, `blosc2_chunk_repeatval`); `shared/spec/chunk-format.md`.
//!
//! ```
//! use strata::chunk::{decompress_vec, special_chunk, CParams};
//! use strata::format::chunk::SpecialType;
//! let cparams = CParams { typesize: 4, ..CParams::default() };
//! let c = special_chunk(&cparams, SpecialType::Zero, 4000, None).unwrap();
//! assert_eq!(c.len(), 32);
//! assert_eq!(decompress_vec(&c).unwrap(), vec![0u8; 4000]);
//! ```

use super::{compute_blocksize, CParams};
use crate::error::{Error, Result};
use crate::format::chunk::{
    ChunkHeader, SpecialType, EXTENDED_HEADER_LENGTH, FLAG_BITSHUFFLE, FLAG_SHUFFLE,
    MAX_BUFFERSIZE, MAX_FILTERS, MAX_TYPESIZE, VERSION_FORMAT_STABLE,
};

/// A special chunk standing for `nbytes` bytes without storing them, as C-Blosc2's
/// `blosc2_chunk_zeros`, `_nans`, `_uninit` and `_repeatval` write it: a 32-byte header with
/// codec and filters 0 and the blocksize [`compute_blocksize`] chooses for `cparams`, then,
/// for [`SpecialType::Value`], the repeated value (`cparams.typesize` bytes).
///
/// Format: c-blosc2 `blosc/blosc2.c` (`blosc2_chunk_zeros` and siblings);
/// `shared/spec/chunk-format.md` (special chunks).
///
/// # Errors
/// [`Error::InvalidParam`] for bad `cparams` ([`CParams::validate`]), `nbytes` not a multiple
/// of the typesize, [`SpecialType::None`], a `value` missing, given for another kind or not
/// `typesize` bytes, or NaNs with a typesize other than 4 or 8;
/// [`Error::MaxBufsizeExceeded`] for more than `BLOSC2_MAX_BUFFERSIZE` bytes.
pub fn special_chunk(
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
    let bad = |msg: String| Err(Error::InvalidParam(msg));
    if !nbytes.is_multiple_of(ts) {
        return bad(format!(
            "{nbytes} bytes is not a whole number of {ts}-byte items"
        ));
    }
    match (special, value) {
        (SpecialType::None, _) => return bad("a special chunk needs a special kind".into()),
        (SpecialType::Value, Some(v)) if v.len() == ts => {}
        (SpecialType::Value, _) => return bad(format!("a repeated value of {ts} bytes is needed")),
        (_, Some(_)) => return bad(format!("no value goes with {} chunks", special.name())),
        (SpecialType::Nan, None) if ts != 4 && ts != 8 => {
            return bad(format!("NaN chunks need typesize 4 or 8, not {ts}"))
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
        blocksize: compute_blocksize(cparams, nbytes),
        cbytes: EXTENDED_HEADER_LENGTH + value.len(),
        header_len: EXTENDED_HEADER_LENGTH,
        filters: [0; MAX_FILTERS],
        filters_meta: [0; MAX_FILTERS],
        compcode: 0,
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
