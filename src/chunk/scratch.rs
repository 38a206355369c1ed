//! Per-thread block buffers, kept between calls so that compressing or decompressing chunk
//! after chunk does not allocate and zero-fill two blocks each time (C-Blosc2 keeps them in its
//! thread contexts).

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

/// Buffers no bigger than this are kept for reuse (a compression arena holds a whole chunk,
/// up to the largest recommended chunk size); bigger ones are freed on return.
const KEEP_BYTES: usize = 64 << 20;

thread_local! {
    static POOL: RefCell<Vec<[Vec<u8>; 2]>> = const { RefCell::new(Vec::new()) };
}

/// Two scratch buffers borrowed from this thread's pool; given back when dropped.
pub(crate) struct Scratch(Option<[Vec<u8>; 2]>);

/// Takes a pair of buffers from this thread's pool (or new empty ones).
pub(crate) fn take() -> Scratch {
    Scratch(Some(
        POOL.with(|p| p.borrow_mut().pop()).unwrap_or_default(),
    ))
}

impl Deref for Scratch {
    type Target = [Vec<u8>; 2];
    fn deref(&self) -> &Self::Target {
        self.0
            .as_ref()
            .unwrap_or_else(|| unreachable!("present until dropped"))
    }
}

impl DerefMut for Scratch {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.0
            .as_mut()
            .unwrap_or_else(|| unreachable!("present until dropped"))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(bufs) = self.0.take() {
            if bufs.iter().all(|b| b.capacity() <= KEEP_BYTES) {
                // A thread that is exiting has no pool left: the buffers are simply freed.
                let _ = POOL.try_with(|p| p.borrow_mut().push(bufs));
            }
        }
    }
}
