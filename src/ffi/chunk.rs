//! C functions for single chunks: compress, decompress, getitem.

#![allow(unsafe_code)]

use super::{boundary, fail, null_pointer, slice_in, slice_out};
use crate::chunk::{self, CParams, SplitMode};
use crate::format::chunk::MAX_FILTERS;

/// Compression parameters for one chunk, as C-Blosc2's `blosc2_cparams`.
///
/// `size` carries `sizeof(strata_cparams)` as the caller compiled it, so that later versions
/// can add fields at the end and still tell old callers apart. Fill the struct with
/// `strata_cparams_default` and change what you need.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct strata_cparams {
    /// `sizeof(strata_cparams)` as the caller compiled it.
    pub size: usize,
    /// Codec ID: 0 blosclz, 1 lz4, 2 lz4hc, 4 zlib, 5 zstd.
    pub codec: u8,
    /// Codec meta byte.
    pub codec_meta: u8,
    /// Compression level 0–9 (0 stores raw).
    pub clevel: u8,
    /// Split mode: 1 always, 2 never, 3 auto, 4 forward-compatible (default).
    pub splitmode: u8,
    /// Item size in bytes.
    pub typesize: u32,
    /// Block size in bytes; 0 = automatic (as C-Blosc2).
    pub blocksize: u32,
    /// Filter IDs, slot 0 applied first.
    pub filters: [u8; 6],
    /// Filter meta bytes.
    pub filters_meta: [u8; 6],
    /// Non-zero to train and store a zstd dictionary.
    pub use_dict: u8,
    /// Threads that may compress blocks at once (the caller's included); 0 = the default.
    pub nthreads: u32,
}

impl From<&CParams> for strata_cparams {
    fn from(p: &CParams) -> Self {
        strata_cparams {
            size: std::mem::size_of::<strata_cparams>(),
            codec: p.codec,
            codec_meta: p.codec_meta,
            clevel: p.clevel,
            splitmode: p.splitmode as u8,
            typesize: u32::try_from(p.typesize).unwrap_or(u32::MAX),
            blocksize: u32::try_from(p.blocksize).unwrap_or(u32::MAX),
            filters: p.filters,
            filters_meta: p.filters_meta,
            use_dict: u8::from(p.use_dict),
            nthreads: u32::try_from(p.nthreads).unwrap_or(u32::MAX),
        }
    }
}

impl strata_cparams {
    fn to_cparams(self) -> crate::Result<CParams> {
        if self.size < std::mem::size_of::<strata_cparams>() {
            return Err(crate::Error::InvalidParam(format!(
                "strata_cparams.size is {}, this library needs {}",
                self.size,
                std::mem::size_of::<strata_cparams>()
            )));
        }
        let mut filters = [0u8; MAX_FILTERS];
        filters.copy_from_slice(&self.filters);
        Ok(CParams {
            codec: self.codec,
            codec_meta: self.codec_meta,
            clevel: self.clevel,
            typesize: self.typesize as usize,
            blocksize: self.blocksize as usize,
            splitmode: SplitMode::from_code(self.splitmode)?,
            filters,
            filters_meta: self.filters_meta,
            use_dict: self.use_dict != 0,
            nthreads: self.nthreads as usize,
            nd: None,
        })
    }
}

/// Writes C-Blosc2's default parameters (BloscLZ, clevel 5, typesize 8, shuffle) into `*out`.
/// Returns 0, or a negative code when `out` is NULL.
///
/// # Safety
/// `out` must be NULL or point to writable memory for one `strata_cparams`.
#[no_mangle]
pub unsafe extern "C" fn strata_cparams_default(out: *mut strata_cparams) -> i32 {
    if out.is_null() {
        return null_pointer("out") as i32;
    }
    // SAFETY: non-null, and the caller guarantees room for one struct.
    unsafe { out.write(strata_cparams::from(&CParams::default())) };
    0
}

/// Compresses `srclen` bytes at `src` into one Blosc2 chunk at `dst` (`dstlen` bytes; at
/// least `srclen + 32` always suffices). Returns the chunk size in bytes, or a negative error
/// code (see `strata_last_error`).
///
/// # Safety
/// `cparams` must point to a `strata_cparams`; `src` readable for `srclen` bytes; `dst`
/// writable for `dstlen` bytes and not overlapping `src`.
#[no_mangle]
pub unsafe extern "C" fn strata_compress(
    cparams: *const strata_cparams,
    src: *const u8,
    srclen: usize,
    dst: *mut u8,
    dstlen: usize,
) -> i64 {
    boundary(|| {
        if cparams.is_null() {
            return null_pointer("cparams");
        }
        // SAFETY: non-null; the caller guarantees it points to a strata_cparams.
        let params = unsafe { *cparams };
        // SAFETY: the caller guarantees the buffers' lengths.
        let (Some(src), Some(dst)) = (unsafe { slice_in(src, srclen) }, unsafe {
            slice_out(dst, dstlen)
        }) else {
            return null_pointer("src or dst");
        };
        match params
            .to_cparams()
            .and_then(|p| chunk::compress(&p, src, dst))
        {
            Ok(n) => n as i64,
            Err(e) => i64::from(fail(&e)),
        }
    })
}

/// Decompresses the chunk at `src` (`srclen` bytes) into `dst` (`dstlen` bytes, at least the
/// chunk's nbytes). Returns nbytes, or a negative error code.
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
    boundary(|| {
        // SAFETY: the caller guarantees the buffers' lengths.
        let (Some(src), Some(dst)) = (unsafe { slice_in(src, srclen) }, unsafe {
            slice_out(dst, dstlen)
        }) else {
            return null_pointer("src or dst");
        };
        match chunk::decompress(src, dst) {
            Ok(n) => n as i64,
            Err(e) => i64::from(fail(&e)),
        }
    })
}

/// Copies items `[start, start + nitems)` of the chunk at `src` into `dst`, decompressing only
/// the blocks that hold them. Returns the bytes written, or a negative error code.
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
    boundary(|| {
        // SAFETY: the caller guarantees the buffers' lengths.
        let (Some(src), Some(dst)) = (unsafe { slice_in(src, srclen) }, unsafe {
            slice_out(dst, dstlen)
        }) else {
            return null_pointer("src or dst");
        };
        match chunk::getitem(src, start, nitems, dst) {
            Ok(n) => n as i64,
            Err(e) => i64::from(fail(&e)),
        }
    })
}
