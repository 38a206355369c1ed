//! C functions for the shared cache of decompressed blocks (`strata_cache`): make one with a
//! byte bound, give it to arrays (`strata_ndarray_set_cache`), read its counters, free it.

#![allow(unsafe_code)]

use super::handle::{self, handle, Handle};
use super::{arg_mut, call_status};
use crate::cache::BlockCache;
use std::sync::Arc;

/// A byte-bounded cache of decompressed blocks, shared by the arrays given it and by any
/// number of threads. Opaque; made by `strata_cache_new`, released by `strata_cache_free`
/// (arrays holding it keep it alive until they are freed).
#[allow(non_camel_case_types)] // the C name
pub struct strata_cache {
    inner: Arc<BlockCache>,
}
handle!(strata_cache, Arc<BlockCache>, "cache");

/// What a cache did and holds (`strata_cache_get_stats`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct strata_cache_stats {
    /// Blocks read from the cache.
    pub hits: u64,
    /// Blocks decompressed into the cache (a block missed by several readers at once is
    /// decompressed once).
    pub misses: u64,
    /// Hits that waited for another reader's decompression.
    pub coalesced: u64,
    /// Blocks stored.
    pub inserts: u64,
    /// Blocks evicted to make room.
    pub evictions: u64,
    /// Bytes held now (blocks plus a small overhead per block).
    pub bytes: u64,
    /// Blocks held now.
    pub entries: u64,
    /// The byte bound.
    pub capacity: u64,
}

/// A new cache holding at most `capacity` bytes (0: nothing is kept). Never NULL.
#[no_mangle]
pub extern "C" fn strata_cache_new(capacity: u64) -> *mut strata_cache {
    strata_cache::into_raw(Arc::new(BlockCache::new(capacity)))
}

/// Releases this handle of the cache; arrays given it keep it until they are freed. NULL does
/// nothing.
///
/// # Safety
/// `cache` NULL or a live handle, not used again after the call.
#[no_mangle]
pub unsafe extern "C" fn strata_cache_free(cache: *mut strata_cache) {
    // SAFETY: forwarded from the caller.
    unsafe { handle::free(cache) }
}

/// Writes the cache's counters into `*out`. Returns 0 or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `cache` NULL or a live handle; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn strata_cache_get_stats(
    cache: *const strata_cache,
    out: *mut strata_cache_stats,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (c, out) = unsafe { (strata_cache::get(cache)?, arg_mut(out, "out")?) };
        let s = c.stats();
        *out = strata_cache_stats {
            hits: s.hits,
            misses: s.misses,
            coalesced: s.coalesced,
            inserts: s.inserts,
            evictions: s.evictions,
            bytes: s.bytes,
            entries: s.entries,
            capacity: s.capacity,
        };
        Ok(())
    })
}

/// Drops every block the cache holds (its counters stay). Returns 0 or
/// `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `cache` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_cache_clear(cache: *const strata_cache) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the handle.
        let c = unsafe { strata_cache::get(cache) }?;
        c.clear();
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::ndarray::strata_ndarray_set_cache;

    #[test]
    fn null_handles_are_errors() {
        let mut out = strata_cache_stats::default();
        // SAFETY: NULL handles are what is tested.
        unsafe {
            assert_eq!(
                strata_cache_get_stats(std::ptr::null(), &mut out),
                crate::ffi::STRATA_ERROR_NULL_POINTER
            );
            assert_eq!(
                strata_cache_clear(std::ptr::null()),
                crate::ffi::STRATA_ERROR_NULL_POINTER
            );
            assert_eq!(
                strata_ndarray_set_cache(std::ptr::null_mut(), std::ptr::null()),
                crate::ffi::STRATA_ERROR_NULL_POINTER
            );
            strata_cache_free(std::ptr::null_mut());
        }
        let c = strata_cache_new(1 << 20);
        // SAFETY: a live handle and a writable struct.
        unsafe {
            assert_eq!(strata_cache_get_stats(c, &mut out), 0);
            strata_cache_free(c);
        }
        assert_eq!((out.capacity, out.entries), (1 << 20, 0));
    }
}
