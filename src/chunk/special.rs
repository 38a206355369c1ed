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
//! let c = special_chunk(&cparams, SpecialType::Zero, 4000, &[]).unwrap();
//! assert_eq!(c.len(), 32);
//! assert_eq!(decompress_vec(&c).unwrap(), vec![0u8; 4000]);
//! ```

use super::{compute_blocksize, CParams};
use crate::error::{Error, Result};
use crate::format::chunk::{
    ChunkHeader, SpecialType, EXTENDED_HEADER_LENGTH, FLAG_BITSHUFFLE, FLAG_SHUFFLE,
    MAX_BUFFERSIZE, MAX_TYPESIZE, VERSION_FORMAT_STABLE,
};

/// The chunk of `nbytes` bytes of special kind `kind` for items of `cparams.typesize` bytes;
/// `value` is the repeated item for [`SpecialType::Value`] (exactly `typesize` bytes) and is
/// ignored otherwise. The header's block size is the one `cparams` gives for `nbytes`.
///
/// # Errors
/// [`Error::InvalidParam`] when `nbytes` is not a multiple of the typesize, exceeds
/// `BLOSC2_MAX_BUFFERSIZE`, or `value` has the wrong length; for [`SpecialType::None`].
pub fn special_chunk(
    cparams: &CParams,
    kind: SpecialType,
    nbytes: usize,
    value: &[u8],
) -> Result<Vec<u8>> {
    let ts = cparams.typesize;
    if ts == 0 || !nbytes.is_multiple_of(ts) || nbytes > MAX_BUFFERSIZE {
        return Err(Error::InvalidParam(format!(
            "special chunk of {nbytes} bytes with typesize {ts}"
        )));
    }
    let extra = match kind {
        SpecialType::None => {
            return Err(Error::InvalidParam(
                "a special chunk needs a special kind".into(),
            ))
        }
        SpecialType::Value if value.len() != ts => {
            return Err(Error::InvalidParam(format!(
                "repeated value of {} bytes for typesize {ts}",
                value.len()
            )))
        }
        SpecialType::Value => value,
        _ => &[],
    };
    let header = ChunkHeader {
        version: VERSION_FORMAT_STABLE,
        versionlz: 1,
        flags: FLAG_SHUFFLE | FLAG_BITSHUFFLE,
        typesize: if ts > MAX_TYPESIZE { 1 } else { ts },
        nbytes,
        blocksize: compute_blocksize(cparams, nbytes),
        cbytes: EXTENDED_HEADER_LENGTH + extra.len(),
        header_len: EXTENDED_HEADER_LENGTH,
        filters: [0; 6],
        filters_meta: [0; 6],
        compcode: 0,
        compcode_meta: 0,
        blosc2_flags: (kind as u8) << 4,
        blosc2_flags2: 0,
        special: kind,
    };
    let mut out = vec![0u8; header.cbytes];
    header.write(&mut out);
    out[EXTENDED_HEADER_LENGTH..].copy_from_slice(extra);
    Ok(out)
}
