//! The scheduler's two small platform helpers that need `unsafe`: reading CPUID, and a
//! lock-free slot for a value that lives until the process ends.
//!
//! Apart from [`super::job`] (the lifetime erasure), this is the only file of the scheduler
//! that is not `#![forbid(unsafe_code)]`.
//!
//! [`LeakedSlot`] exists for fork safety: the process-wide runtime must be found without taking
//! a lock, because a `fork()` taken while another thread holds that lock would leave the lock
//! held forever in the child. A slot's values are leaked (`Box::leak`) and never freed, so a
//! reference read from it is valid for the rest of the process, in the parent and in a child.

use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

/// A lock-free slot holding a leaked `&'static T`, replaced by compare-and-swap.
pub(crate) struct LeakedSlot<T: 'static> {
    ptr: AtomicPtr<T>,
}

impl<T: Sync + 'static> LeakedSlot<T> {
    /// An empty slot.
    pub(crate) const fn new() -> Self {
        Self {
            ptr: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// The value in the slot, if any.
    pub(crate) fn get(&self) -> Option<&'static T> {
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: a non-null pointer in the slot was stored by `replace` from a `Box::leak`ed
        // value (so it is aligned, initialised and never freed); `replace` stops using its
        // `&mut` once the pointer is published, so from then on the value is only ever read
        // through shared references, and `T: Sync` makes that fine from any thread.
        unsafe { p.as_ref() }
    }

    /// Puts `value` in the slot if it still holds `current` (compared by address).
    ///
    /// # Errors
    ///
    /// Gives `value` back, unpublished, if another thread changed the slot first.
    pub(crate) fn replace(
        &self,
        current: Option<&'static T>,
        value: &'static mut T,
    ) -> Result<(), &'static mut T> {
        let expected = current.map_or(ptr::null_mut(), |c| ptr::from_ref(c).cast_mut());
        let new: *mut T = ptr::from_mut(value);
        match self
            .ptr
            .compare_exchange(expected, new, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => Ok(()),
            // Not published: `value` is still exclusively ours.
            Err(_) => Err(value),
        }
    }
}

/// Executes CPUID with `leaf` in EAX and `subleaf` in ECX; returns `[eax, ebx, ecx, edx]`.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[allow(unused_unsafe)] // `__cpuid_count` is a safe function in newer Rust versions.
pub(crate) fn cpuid(leaf: u32, subleaf: u32) -> [u32; 4] {
    // SAFETY: the CPUID instruction exists on every x86-64 processor; it only reads
    // identification registers and has no memory effects. Unsupported leaves return zeros or
    // the highest basic leaf's data, which the callers check against the maximum leaf.
    let r = unsafe { std::arch::x86_64::__cpuid_count(leaf, subleaf) };
    [r.eax, r.ebx, r.ecx, r.edx]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_publishes_once() {
        static SLOT: LeakedSlot<u32> = LeakedSlot::new();
        assert!(SLOT.get().is_none());
        SLOT.replace(None, Box::leak(Box::new(7))).unwrap();
        let seven = SLOT.get().unwrap();
        assert_eq!(*seven, 7);
        // A stale `current` fails and hands the value back.
        let back = SLOT.replace(None, Box::leak(Box::new(8))).unwrap_err();
        assert_eq!(*back, 8);
        SLOT.replace(Some(seven), back).unwrap();
        assert_eq!(*SLOT.get().unwrap(), 8);
    }

    #[cfg(all(target_arch = "x86_64", not(miri)))]
    #[test]
    fn cpuid_vendor_leaf() {
        // Leaf 0: EAX = highest basic leaf, at least 1 on any x86-64.
        assert!(cpuid(0, 0)[0] >= 1);
    }
}
