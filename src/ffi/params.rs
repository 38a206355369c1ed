//! Parameter structs: `strata_cparams` (compression), `strata_dparams` (decompression),
//! `strata_storage` (where and how a new frame is written). Each carries its own `size`, set
//! by its `_default` function, so later versions can add fields at the end and still read
//! what an older program passes.
//!
//! Format: C-Blosc2 `include/blosc2.h` (`blosc2_cparams`, `blosc2_dparams`,
//! `blosc2_storage`).

#![allow(unsafe_code)]

use super::{arg_mut, call_status, FfiResult};
use crate::chunk::{CParams, DParams, SplitMode};
use crate::error::{Error, Expected};
use crate::format::ids::{CodecId, FilterId};
use crate::frame::SyncPolicy;

/// Compression parameters, as C-Blosc2's `blosc2_cparams`.
///
/// Fill it with `strata_cparams_default` (which sets `size`) and change what you need.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct strata_cparams {
    /// `sizeof(strata_cparams)` as the caller compiled it (set by `strata_cparams_default`).
    pub size: usize,
    /// Codec ID: 0 blosclz, 1 lz4, 2 lz4hc, 4 zlib, 5 zstd, 32–255 plugins.
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
    /// Filter IDs, slot 0 applied first (0 none, 1 shuffle, 2 bitshuffle, 3 delta,
    /// 4 trunc_prec, 35 bytedelta).
    pub filters: [u8; 6],
    /// Filter meta bytes.
    pub filters_meta: [u8; 6],
    /// Non-zero to train and store a zstd dictionary.
    pub use_dict: u8,
    /// Threads that may compress blocks at once (the caller's included); 0 = the runtime's
    /// default.
    pub nthreads: u32,
}

/// Decompression parameters, as C-Blosc2's `blosc2_dparams`.
///
/// Fill it with `strata_dparams_default` (which sets `size`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct strata_dparams {
    /// `sizeof(strata_dparams)` as the caller compiled it (set by `strata_dparams_default`).
    pub size: usize,
    /// Threads that may decompress blocks at once (the caller's included); 0 = the runtime's
    /// default.
    pub nthreads: u32,
}

/// Where and how a new super-chunk or N-d array is written (the path itself is a separate
/// argument). Fill it with `strata_storage_default` (which sets `size`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct strata_storage {
    /// `sizeof(strata_storage)` as the caller compiled it (set by `strata_storage_default`).
    pub size: usize,
    /// Non-zero: a sparse frame (a directory of chunk files) instead of one contiguous file.
    pub sparse: u8,
    /// Non-zero: replace an existing file or directory at the path.
    pub overwrite: u8,
    /// When writes reach stable storage: `STRATA_SYNC_NONE`, `STRATA_SYNC_ON_CLOSE`
    /// (default: on `_flush` and `_close`), `STRATA_SYNC_EVERY_WRITE`.
    pub sync: u8,
    /// For a super-chunk, the chunk size in bytes that `strata_schunk_append_data` cuts
    /// buffers into before the first chunk fixes it; 0 = recommended from the L3 cache size.
    pub chunksize: usize,
}

/// Fails unless the caller's struct is at least as large as this library's (`what` names
/// its `size` field and the function that fills it).
pub(super) fn check_size(what: &'static str, size: usize, ours: usize) -> crate::Result<()> {
    if size < ours {
        return Err(Error::range(what, size, Expected::at_least(ours)));
    }
    Ok(())
}

impl From<&CParams> for strata_cparams {
    fn from(p: &CParams) -> Self {
        strata_cparams {
            size: std::mem::size_of::<strata_cparams>(),
            codec: p.codec.0,
            codec_meta: p.codec_meta,
            clevel: p.clevel,
            splitmode: p.splitmode as u8,
            typesize: u32::try_from(p.typesize).unwrap_or(u32::MAX),
            blocksize: u32::try_from(p.blocksize).unwrap_or(u32::MAX),
            filters: p.filters.map(u8::from),
            filters_meta: p.filters_meta,
            use_dict: u8::from(p.use_dict),
            nthreads: u32::try_from(p.nthreads).unwrap_or(u32::MAX),
        }
    }
}

impl strata_cparams {
    /// The library's parameters.
    pub(super) fn to_cparams(self) -> crate::Result<CParams> {
        check_size(
            "strata_cparams.size (fill it with strata_cparams_default)",
            self.size,
            std::mem::size_of::<Self>(),
        )?;
        let filters = self.filters.map(FilterId);
        Ok(CParams {
            codec: CodecId(self.codec),
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

    /// `p`'s parameters, or the defaults for NULL.
    ///
    /// # Safety
    /// `p` must be NULL or point to a `strata_cparams`.
    pub(super) unsafe fn read_or_default(p: *const Self) -> crate::Result<CParams> {
        // SAFETY: NULL or valid, by the caller's guarantee.
        match unsafe { p.as_ref() } {
            Some(p) => p.to_cparams(),
            None => Ok(CParams::default()),
        }
    }
}

impl strata_dparams {
    /// `p`'s parameters, or the defaults for NULL.
    ///
    /// # Safety
    /// `p` must be NULL or point to a `strata_dparams`.
    pub(super) unsafe fn read_or_default(p: *const Self) -> crate::Result<DParams> {
        // SAFETY: NULL or valid, by the caller's guarantee.
        let Some(p) = (unsafe { p.as_ref() }) else {
            return Ok(DParams::default());
        };
        check_size(
            "strata_dparams.size (fill it with strata_dparams_default)",
            p.size,
            std::mem::size_of::<Self>(),
        )?;
        Ok(DParams {
            nthreads: p.nthreads as usize,
            nd: None,
        })
    }
}

/// `strata_storage.sync` and `strata_schunk_open`'s `sync`: never fsync.
pub const STRATA_SYNC_NONE: u8 = 0;
/// Fsync on flush and close (the default).
pub const STRATA_SYNC_ON_CLOSE: u8 = 1;
/// Fsync at every ordering point of every write.
pub const STRATA_SYNC_EVERY_WRITE: u8 = 2;

/// The policy of a `STRATA_SYNC_*` value.
pub(super) fn sync_policy(code: u8) -> crate::Result<SyncPolicy> {
    match code {
        STRATA_SYNC_NONE => Ok(SyncPolicy::None),
        STRATA_SYNC_ON_CLOSE => Ok(SyncPolicy::OnClose),
        STRATA_SYNC_EVERY_WRITE => Ok(SyncPolicy::EveryWrite),
        other => Err(Error::range(
            "sync",
            other,
            Expected::OneOf("STRATA_SYNC_NONE (0), _ON_CLOSE (1) or _EVERY_WRITE (2)"),
        )),
    }
}

/// What a `strata_storage` asks for.
pub(super) struct Storage {
    pub sparse: bool,
    pub overwrite: bool,
    pub sync: SyncPolicy,
    pub chunksize: usize,
}

impl strata_storage {
    fn defaults() -> Self {
        strata_storage {
            size: std::mem::size_of::<Self>(),
            sparse: 0,
            overwrite: 0,
            sync: STRATA_SYNC_ON_CLOSE,
            chunksize: 0,
        }
    }

    /// `p`'s settings, or the defaults for NULL.
    ///
    /// # Safety
    /// `p` must be NULL or point to a `strata_storage`.
    pub(super) unsafe fn read_or_default(p: *const Self) -> crate::Result<Storage> {
        // SAFETY: NULL or valid, by the caller's guarantee.
        let s = unsafe { p.as_ref() }
            .copied()
            .unwrap_or_else(Self::defaults);
        check_size(
            "strata_storage.size (fill it with strata_storage_default)",
            s.size,
            std::mem::size_of::<Self>(),
        )?;
        Ok(Storage {
            sparse: s.sparse != 0,
            overwrite: s.overwrite != 0,
            sync: sync_policy(s.sync)?,
            chunksize: s.chunksize,
        })
    }
}

/// Writes `value` through `out` (NULL: the NULL-pointer error).
///
/// # Safety
/// `out` must be NULL or writable for one `T`.
unsafe fn write_default<T>(out: *mut T, value: T) -> FfiResult<()> {
    // SAFETY: forwarded from the caller.
    let out = unsafe { arg_mut(out, "out") }?;
    *out = value;
    Ok(())
}

/// Writes C-Blosc2's default compression parameters (BloscLZ, clevel 5, typesize 8, shuffle
/// in filter slot 5, automatic blocksize, forward-compatible split, default threads) into
/// `*out`, with `size` set. Returns 0, or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `out` must be NULL or point to writable memory for one `strata_cparams`.
#[no_mangle]
pub unsafe extern "C" fn strata_cparams_default(out: *mut strata_cparams) -> i32 {
    // SAFETY: forwarded from the caller.
    call_status(|| unsafe { write_default(out, strata_cparams::from(&CParams::default())) })
}

/// Writes the default decompression parameters (default threads) into `*out`, with `size`
/// set. Returns 0, or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `out` must be NULL or point to writable memory for one `strata_dparams`.
#[no_mangle]
pub unsafe extern "C" fn strata_dparams_default(out: *mut strata_dparams) -> i32 {
    let value = strata_dparams {
        size: std::mem::size_of::<strata_dparams>(),
        nthreads: 0,
    };
    // SAFETY: forwarded from the caller.
    call_status(|| unsafe { write_default(out, value) })
}

/// Writes the default storage settings (contiguous frame, no overwrite,
/// `STRATA_SYNC_ON_CLOSE`, recommended chunksize) into `*out`, with `size` set. Returns 0, or
/// `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `out` must be NULL or point to writable memory for one `strata_storage`.
#[no_mangle]
pub unsafe extern "C" fn strata_storage_default(out: *mut strata_storage) -> i32 {
    // SAFETY: forwarded from the caller.
    call_status(|| unsafe { write_default(out, strata_storage::defaults()) })
}
