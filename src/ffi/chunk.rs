//! C functions for single chunks: compress, decompress, getitem, and the header's fields.
//!
//! Format: C-Blosc2 `README_CHUNK_FORMAT.rst` (`blosc2_compress`, `blosc2_decompress`,
//! `blosc2_getitem`, `blosc2_cbuffer_sizes`).

#![allow(unsafe_code)]

use super::params::strata_cparams;
use super::{arg_mut, arg_ref, call_status, in_out, slice_in};
use crate::chunk;
use crate::format::chunk::{ChunkHeader, SpecialType};

/// `strata_chunk_info.special`: a regular chunk.
pub const STRATA_SPECIAL_NONE: u8 = SpecialType::None as u8;
/// All bytes zero.
pub const STRATA_SPECIAL_ZERO: u8 = SpecialType::Zero as u8;
/// Every item a NaN (typesize 4 or 8).
pub const STRATA_SPECIAL_NAN: u8 = SpecialType::Nan as u8;
/// One item, repeated.
pub const STRATA_SPECIAL_VALUE: u8 = SpecialType::Value as u8;
/// Contents undefined (read as zeros).
pub const STRATA_SPECIAL_UNINIT: u8 = SpecialType::Uninit as u8;

/// The header fields of a chunk (`strata_chunk_get_info`). Sizes in bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct strata_chunk_info {
    /// Format version (2 Blosc1, 5 Blosc2, 6 variable-length blocks).
    pub version: u8,
    /// Codec format version.
    pub versionlz: u8,
    /// Flags byte (byte 2 of the header).
    pub flags: u8,
    /// Codec ID.
    pub codec: u8,
    /// Codec meta byte.
    pub codec_meta: u8,
    /// Special-value kind: `STRATA_SPECIAL_NONE`, `_ZERO`, `_NAN`, `_VALUE`, `_UNINIT`.
    pub special: u8,
    /// Header length: 16 (Blosc1) or 32 bytes.
    pub header_len: u8,
    /// `blosc2_flags` (byte 31).
    pub blosc2_flags: u8,
    /// Item size in bytes as stored (1–255).
    pub typesize: i32,
    /// Uncompressed size in bytes.
    pub nbytes: i32,
    /// Block size in bytes.
    pub blocksize: i32,
    /// Compressed size in bytes, header included.
    pub cbytes: i32,
    /// Filter IDs, slot 0 applied first when compressing.
    pub filters: [u8; 6],
    /// Filter meta bytes.
    pub filters_meta: [u8; 6],
}

impl From<&ChunkHeader> for strata_chunk_info {
    fn from(h: &ChunkHeader) -> Self {
        // Header fields come from 32-bit fields validated by the parser.
        let i = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
        strata_chunk_info {
            version: h.version,
            versionlz: h.versionlz,
            flags: h.flags,
            codec: h.compcode.0,
            codec_meta: h.compcode_meta,
            special: h.special as u8,
            header_len: u8::try_from(h.header_len).unwrap_or(u8::MAX),
            blosc2_flags: h.blosc2_flags,
            typesize: i(h.typesize),
            nbytes: i(h.nbytes),
            blocksize: i(h.blocksize),
            cbytes: i(h.cbytes),
            filters: h.filters.map(u8::from),
            filters_meta: h.filters_meta,
        }
    }
}

/// Compresses `srclen` bytes at `src` into one Blosc2 chunk at `dst` (`dstlen` bytes; at
/// least `srclen + 32` always suffices). Returns the chunk size in bytes, or a negative error
/// code: `STRATA_ERROR_WRITE_BUFFER` when `dst` is too small, `STRATA_ERROR_INVALID_PARAM`
/// for bad parameters (or a `cparams->size` smaller than this library's struct),
/// `STRATA_ERROR_MAX_BUFSIZE_EXCEEDED` above 2 GiB − 32 bytes, `STRATA_ERROR_CODEC_SUPPORT`
/// for an unknown codec.
///
/// # Safety
/// `cparams` must be NULL or point to a `strata_cparams`; `src` readable for `srclen` bytes;
/// `dst` writable for `dstlen` bytes and not overlapping `src`.
#[no_mangle]
pub unsafe extern "C" fn strata_compress(
    cparams: *const strata_cparams,
    src: *const u8,
    srclen: usize,
    dst: *mut u8,
    dstlen: usize,
) -> i64 {
    let compress = |src: &[u8], dst: &mut [u8]| {
        // SAFETY: the caller guarantees the pointer.
        let params = unsafe { arg_ref(cparams, "cparams") }?.to_cparams()?;
        Ok(chunk::compress(&params, src, dst)?)
    };
    // SAFETY: forwarded from the caller.
    unsafe { in_out(src, srclen, dst, dstlen, compress) }
}

/// Decompresses the chunk at `src` (`srclen` bytes) into `dst` (`dstlen` bytes, at least the
/// chunk's nbytes). Returns nbytes, or a negative error code: `STRATA_ERROR_WRITE_BUFFER`
/// when `dst` is too small, `STRATA_ERROR_READ_BUFFER` for a truncated chunk,
/// `STRATA_ERROR_VERSION_SUPPORT` / `STRATA_ERROR_INVALID_HEADER` for a bad header,
/// `STRATA_ERROR_DATA` for a corrupt stream, `STRATA_ERROR_CODEC_SUPPORT` /
/// `STRATA_ERROR_FILTER_PIPELINE` for an unknown codec or filter.
///
/// # Safety
/// `src` readable for `srclen` bytes; `dst` writable for `dstlen` bytes, not overlapping `src`.
#[no_mangle]
pub unsafe extern "C" fn strata_decompress(
    src: *const u8,
    srclen: usize,
    dst: *mut u8,
    dstlen: usize,
) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe {
        in_out(src, srclen, dst, dstlen, |s, d| {
            Ok(chunk::decompress(s, d)?)
        })
    }
}

/// Copies items `[start, start + nitems)` (of the chunk's typesize) of the chunk at `src`
/// into `dst`, decompressing only the blocks that hold them. Returns the bytes written, or a
/// negative error code (`STRATA_ERROR_INVALID_INDEX` for items outside the chunk, and those
/// of `strata_decompress`).
///
/// # Safety
/// `src` readable for `srclen` bytes; `dst` writable for `dstlen` bytes, not overlapping `src`.
#[no_mangle]
pub unsafe extern "C" fn strata_getitem(
    src: *const u8,
    srclen: usize,
    start: usize,
    nitems: usize,
    dst: *mut u8,
    dstlen: usize,
) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe {
        in_out(src, srclen, dst, dstlen, |s, d| {
            Ok(chunk::getitem(s, start, nitems, d)?)
        })
    }
}

/// Reads and validates the header of the chunk at `src` (`srclen` bytes, at least the
/// chunk's cbytes) into `*out`. Returns 0, or `STRATA_ERROR_READ_BUFFER`,
/// `STRATA_ERROR_VERSION_SUPPORT`, `STRATA_ERROR_INVALID_HEADER`.
///
/// # Safety
/// `src` readable for `srclen` bytes; `out` NULL or writable for one `strata_chunk_info`.
#[no_mangle]
pub unsafe extern "C" fn strata_chunk_get_info(
    src: *const u8,
    srclen: usize,
    out: *mut strata_chunk_info,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (src, out) = unsafe { (slice_in(src, srclen, "src")?, arg_mut(out, "out")?) };
        *out = strata_chunk_info::from(&ChunkHeader::parse(src)?);
        Ok(())
    })
}
