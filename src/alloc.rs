//! Fallible allocation: the one place where memory sized by input (a frame's header, a
//! chunk's `nbytes`, a selection, a C caller's length) is reserved. A size the system cannot
//! give is [`Error::MemoryAlloc`] naming the bytes, never an abort.

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

/// `n` zero bytes.
///
/// # Errors
/// [`Error::MemoryAlloc`].
pub(crate) fn zeroed(n: usize) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    resize(&mut v, n, 0)?;
    Ok(v)
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
