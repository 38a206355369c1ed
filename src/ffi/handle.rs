//! The handles C holds (`strata_schunk`, `strata_ndarray`, `strata_cache`): a Rust value
//! boxed behind an opaque pointer. [`Handle`] is the one place where such a pointer becomes a
//! reference again, and where the box is handed out and taken back.
//!
//! The contract is the one every C function states for its handle arguments (and the
//! header's preamble for all of them): a handle pointer is NULL or a live handle of its type
//! made by this library, not freed during the call; through a `*mut` handle no other thread
//! uses it during the call (calls taking a `const` handle may run at once).

#![allow(unsafe_code)]

use super::{arg_mut, call, call_status, copy_out, slice_in, Fail, FfiResult};

/// A Rust value that C holds as an opaque pointer, made by [`Handle::hand_out`]
/// (`Box::into_raw`) and released by [`free`] or [`close`] (`Box::from_raw`).
pub(super) trait Handle: Sized + 'static {
    /// The value inside.
    type Inner: 'static;
    /// The argument's name in a NULL-pointer error.
    const ARG: &'static str;

    /// The handle of `inner`.
    fn wrap(inner: Self::Inner) -> Self;
    /// Its value.
    fn inner(&self) -> &Self::Inner;
    /// Its value, to change.
    fn inner_mut(&mut self) -> &mut Self::Inner;
    /// Its value, the handle gone.
    fn into_inner(self) -> Self::Inner;

    /// Boxes `inner` and writes the pointer C will hold to `*out`.
    fn hand_out(out: &mut *mut Self, inner: Self::Inner) {
        *out = Self::into_raw(inner);
    }

    /// Boxes `inner` into the pointer C will hold.
    fn into_raw(inner: Self::Inner) -> *mut Self {
        Box::into_raw(Box::new(Self::wrap(inner)))
    }

    /// The value behind `ptr`, or a NULL-pointer failure naming the argument.
    ///
    /// # Safety
    /// `ptr` must be NULL or a live handle of this type, not freed while the reference is
    /// used.
    unsafe fn get<'a>(ptr: *const Self) -> FfiResult<&'a Self::Inner> {
        // SAFETY: NULL or a live handle (made by `into_raw`: aligned, initialized), by the
        // caller's guarantee.
        unsafe { Self::get_opt(ptr) }.ok_or(Fail::Null(Self::ARG))
    }

    /// The value behind `ptr`; `None` for NULL.
    ///
    /// # Safety
    /// As [`Handle::get`].
    unsafe fn get_opt<'a>(ptr: *const Self) -> Option<&'a Self::Inner> {
        // SAFETY: NULL or a live handle, by the caller's guarantee.
        unsafe { ptr.as_ref() }.map(Self::inner)
    }

    /// The value behind `ptr`, to change, or a NULL-pointer failure naming the argument.
    ///
    /// # Safety
    /// `ptr` must be NULL or a live handle of this type, not freed and not used by anyone else
    /// while the reference is used.
    unsafe fn get_mut<'a>(ptr: *mut Self) -> FfiResult<&'a mut Self::Inner> {
        // SAFETY: NULL or a live, unshared handle, by the caller's guarantee.
        unsafe { ptr.as_mut() }
            .map(Self::inner_mut)
            .ok_or(Fail::Null(Self::ARG))
    }

    /// Takes the value back from C; `None` for NULL.
    ///
    /// # Safety
    /// `ptr` must be NULL or a live handle of this type, not used again after the call.
    unsafe fn take(ptr: *mut Self) -> Option<Self::Inner> {
        // SAFETY: non-NULL, made by `into_raw`, and given up by the caller.
        (!ptr.is_null()).then(|| unsafe { Box::from_raw(ptr) }.into_inner())
    }
}

/// Implements [`Handle`] for a C handle struct whose field `inner` holds the value.
macro_rules! handle {
    ($handle:ident, $inner:ty, $arg:literal) => {
        impl $crate::ffi::handle::Handle for $handle {
            type Inner = $inner;
            const ARG: &'static str = $arg;
            fn wrap(inner: $inner) -> Self {
                $handle { inner }
            }
            fn inner(&self) -> &$inner {
                &self.inner
            }
            fn inner_mut(&mut self) -> &mut $inner {
                &mut self.inner
            }
            fn into_inner(self) -> $inner {
                self.inner
            }
        }
    };
}
pub(super) use handle;

/// A `_close` function: takes the handle back and runs `close` on its value (which may
/// fail: the handle is freed anyway); NULL does nothing.
///
/// # Safety
/// `ptr` must be NULL or a live handle of this type, not used again after the call.
pub(super) unsafe fn close<H: Handle>(
    ptr: *mut H,
    close: impl FnOnce(H::Inner) -> crate::Result<()>,
) -> i32 {
    call_status(|| {
        // SAFETY: forwarded from the caller.
        match unsafe { H::take(ptr) } {
            Some(inner) => Ok(close(inner)?),
            None => Ok(()),
        }
    })
}

/// A `_free` function: takes the handle back and drops its value; NULL does nothing.
///
/// # Safety
/// `ptr` must be NULL or a live handle of this type, not used again after the call.
pub(super) unsafe fn free<H: Handle>(ptr: *mut H) {
    call(|| {
        // SAFETY: forwarded from the caller.
        drop(unsafe { H::take(ptr) });
        Ok(0)
    });
}

/// A `_from_cframe` function: a handle over `make` of a copy of the caller's bytes `(src,
/// srclen)`, written to `*out`.
///
/// # Safety
/// `src` readable for `srclen` bytes; `out` NULL or writable.
pub(super) unsafe fn from_bytes<H: Handle>(
    src: *const u8,
    srclen: usize,
    out: *mut *mut H,
    make: impl FnOnce(Vec<u8>) -> crate::Result<H::Inner>,
) -> i32 {
    call_status(|| {
        // SAFETY: forwarded from the caller.
        let (out, src) = unsafe { (arg_mut(out, "out")?, slice_in(src, srclen, "src")?) };
        H::hand_out(out, make(crate::alloc::copy(src)?)?);
        Ok(())
    })
}

/// A `_to_cframe` function: `bytes` of the handle's value copied into `(dst, dstlen)` with
/// the size-query rule ([`copy_out`]).
///
/// # Safety
/// `ptr` NULL or a live handle; `dst` NULL or writable for `dstlen` bytes.
pub(super) unsafe fn bytes_out<H: Handle>(
    ptr: *const H,
    dst: *mut u8,
    dstlen: usize,
    bytes: impl FnOnce(&H::Inner) -> crate::Result<Vec<u8>>,
) -> i64 {
    call(|| {
        // SAFETY: forwarded from the caller.
        let bytes = bytes(unsafe { H::get(ptr) }?)?;
        // SAFETY: forwarded from the caller.
        unsafe { copy_out(&bytes, dst, dstlen) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Counter {
        inner: Vec<u32>,
    }
    handle!(Counter, Vec<u32>, "counter");

    #[test]
    fn a_handle_goes_out_and_comes_back() {
        let mut p = std::ptr::null_mut();
        Counter::hand_out(&mut p, vec![1, 2]);
        // SAFETY: `p` is the live handle just made, used by this thread only.
        unsafe {
            Counter::get_mut(p).ok().unwrap().push(3);
            assert_eq!(Counter::get(p).ok().unwrap(), &[1, 2, 3]);
            assert_eq!(Counter::get_opt(p), Some(&vec![1, 2, 3]));
            assert_eq!(Counter::take(p), Some(vec![1, 2, 3]));
        }
    }

    #[test]
    fn null_is_named_or_nothing() {
        // SAFETY: NULL pointers, which every function accepts.
        unsafe {
            assert!(matches!(
                Counter::get(std::ptr::null()),
                Err(Fail::Null("counter"))
            ));
            assert!(matches!(
                Counter::get_mut(std::ptr::null_mut()),
                Err(Fail::Null("counter"))
            ));
            assert!(Counter::get_opt(std::ptr::null()).is_none());
            assert!(Counter::take(std::ptr::null_mut()).is_none());
            assert_eq!(close(std::ptr::null_mut::<Counter>(), |_| Ok(())), 0);
            free(std::ptr::null_mut::<Counter>());
        }
        let p = Counter::into_raw(vec![7]);
        let mut seen = Vec::new();
        // SAFETY: the live handle just made, not used again.
        let rc = unsafe {
            close(p, |v| {
                seen = v;
                Err(crate::Error::MemoryAlloc(1))
            })
        };
        assert_eq!((rc, seen), (crate::error::code::MEMORY_ALLOC, vec![7]));
    }
}
