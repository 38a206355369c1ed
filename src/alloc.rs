//! Fallible allocation: the one place where memory sized by input (a frame's header, a
//! chunk's `nbytes`, a selection, a C caller's length) is reserved. A size the system cannot
//! give is [`Error::MemoryAlloc`] naming the bytes, never an abort.
//!
//! Outputs come from [`zeroed`]: memory the system hands out already zeroed (fresh pages of a
//! large allocation are zero on first touch), so a decompressed array is not zero-filled by
//! one thread before the pool's workers write it: each page is first touched by the worker
//! that writes it. Large outputs are advised onto transparent huge pages, as NumPy does.
#![allow(unsafe_code)]

use crate::error::{Error, Result};

/// Room for `additional` more items in `v` (exactly that much, no more).
///
/// # Errors
/// [`Error::MemoryAlloc`] with the bytes `v` would hold.
pub(crate) fn reserve<T>(v: &mut Vec<T>, additional: usize) -> Result<()> {
    v.try_reserve_exact(additional).map_err(|_| {
        let items = v.len().saturating_add(additional);
        Error::MemoryAlloc(items.saturating_mul(std::mem::size_of::<T>()))
    })
}

/// An empty vector with room for `n` items.
///
/// # Errors
/// [`Error::MemoryAlloc`].
pub(crate) fn with_capacity<T>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    reserve(&mut v, n)?;
    Ok(v)
}

/// `v` made `len` items long, new items `value` (the items it keeps are not written again).
///
/// # Errors
/// [`Error::MemoryAlloc`].
pub(crate) fn resize<T: Clone>(v: &mut Vec<T>, len: usize, value: T) -> Result<()> {
    if let Some(more) = len.checked_sub(v.len()) {
        reserve(v, more)?;
    }
    v.resize(len, value);
    Ok(())
}

/// Outputs from this size on are advised onto transparent huge pages (NumPy's threshold).
const HUGE_PAGE_ADVICE_BYTES: usize = 4 << 20;

/// `n` zero bytes, zeroed by the system (no serial fill: see the module's doc).
///
/// # Errors
/// [`Error::MemoryAlloc`].
pub(crate) fn zeroed(n: usize) -> Result<Vec<u8>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(n).map_err(|_| Error::MemoryAlloc(n))?;
    // SAFETY: `layout` has a non-zero size (n > 0 was checked above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(Error::MemoryAlloc(n));
    }
    if n >= HUGE_PAGE_ADVICE_BYTES {
        advise_huge_pages(ptr, n);
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout of `n` bytes of
    // alignment 1, which is the layout a `Vec<u8>` of capacity `n` frees with; all `n` bytes
    // are initialised (zeroed), so length `n` is valid.
    Ok(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// Asks the kernel to back the whole pages inside `ptr..ptr + n` with huge pages. Advice
/// only: a kernel that refuses (no THP, or "never") leaves the memory as it is.
fn advise_huge_pages(ptr: *mut u8, n: usize) {
    // SAFETY: sysconf has no preconditions.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let start = (ptr as usize).next_multiple_of(page);
    let end = (ptr as usize + n) / page * page;
    if end > start {
        // SAFETY: `start..end` lies inside the allocation of `n` bytes at `ptr` and is page
        // aligned; MADV_HUGEPAGE changes no contents and no mapping, only how the kernel
        // backs the pages, and its failure is harmless (it is not checked).
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

/// A copy of `src`.
///
/// # Errors
/// [`Error::MemoryAlloc`].
pub(crate) fn copy(src: &[u8]) -> Result<Vec<u8>> {
    let mut v = with_capacity(src.len())?;
    v.extend_from_slice(src);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_outputs_are_zero_of_every_size() {
        for n in [0, 1, 4095, 4096, 1 << 20, HUGE_PAGE_ADVICE_BYTES + 7] {
            let v = zeroed(n).unwrap();
            assert_eq!((v.len(), v.capacity()), (n, n));
            assert!(v.iter().all(|&b| b == 0), "{n}");
        }
        // A vector from `zeroed` grows and frees like any other.
        let mut v = zeroed(10).unwrap();
        v.extend_from_slice(&[1, 2, 3]);
        assert_eq!(&v[8..], [0, 0, 1, 2, 3]);
    }

    #[test]
    fn sizes_the_system_cannot_give_are_errors() {
        assert_eq!(
            zeroed(usize::MAX).unwrap_err(),
            Error::MemoryAlloc(usize::MAX)
        );
        let e = with_capacity::<u64>(usize::MAX / 4).unwrap_err();
        assert_eq!(e, Error::MemoryAlloc(usize::MAX));
        let mut v = vec![1u32; 3];
        assert_eq!(
            reserve(&mut v, isize::MAX as usize).unwrap_err(),
            Error::MemoryAlloc(usize::MAX)
        );
        assert_eq!(v, [1, 1, 1]);
    }

    #[test]
    fn sizes_it_can_give_are_exact() {
        assert_eq!(zeroed(5).unwrap(), [0; 5]);
        let v = with_capacity::<u16>(7).unwrap();
        assert!(v.is_empty() && v.capacity() >= 7);
        let mut v = vec![9u8; 4];
        resize(&mut v, 6, 1).unwrap();
        assert_eq!(v, [9, 9, 9, 9, 1, 1]);
        resize(&mut v, 2, 1).unwrap();
        assert_eq!(v, [9, 9]);
        assert_eq!(copy(b"abc").unwrap(), b"abc");
    }
}
