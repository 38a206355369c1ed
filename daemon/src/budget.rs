//! The memory budget of computed answers: the bytes of decoded slices, of cframes and `.npy`
//! bodies assembled in memory, of chunk lists and indexes, and of stored bytes read at once,
//! shared by all requests.
//!
//! A request takes a [`Charge`] and reserves what its answer needs before making it (a
//! selection's decoded bytes are known from its shape before anything is decoded). When the
//! reservation does not fit beside what the other requests hold, the request is refused
//! with 503 and `Retry-After`; an answer larger than the whole budget, which could never fit,
//! gets 413. Once made, the charge is settled to the answer's own size and goes with its
//! body ([`crate::serve::hold`]): it is given back when the last byte is sent, or when the
//! body is dropped because the client went away.

use crate::error::ApiError;
use crate::metrics::{Metrics, Refusal};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The budget: `capacity` bytes, of which `used` are held.
#[derive(Debug)]
pub struct Budget {
    capacity: u64,
    used: AtomicU64,
    /// The most bytes held at once since start.
    peak: AtomicU64,
    metrics: Arc<Metrics>,
}

/// What one request holds of the budget; given back when dropped.
#[derive(Debug)]
pub struct Charge {
    budget: Arc<Budget>,
    held: u64,
}

impl Budget {
    /// A budget of `capacity` bytes.
    #[must_use]
    pub fn new(capacity: u64, metrics: Arc<Metrics>) -> Arc<Budget> {
        Arc::new(Budget {
            capacity,
            used: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            metrics,
        })
    }

    /// A new request's charge (nothing held yet).
    #[must_use]
    pub fn charge(self: &Arc<Self>) -> Charge {
        Charge {
            budget: Arc::clone(self),
            held: 0,
        }
    }

    /// The bytes held now.
    #[must_use]
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Acquire)
    }

    /// The most bytes held at once since start.
    #[must_use]
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Acquire)
    }

    /// The budget's size.
    #[must_use]
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
}

impl Charge {
    /// Reserves `n` more bytes.
    ///
    /// # Errors
    /// 413 when the request would hold more than the whole budget; 503 with `Retry-After`
    /// (counted as a `memory` refusal) when `n` does not fit beside what the other requests
    /// hold.
    pub fn reserve(&mut self, n: u64) -> Result<(), ApiError> {
        let b = &self.budget;
        let want = self.held.saturating_add(n);
        if want > b.capacity {
            return Err(ApiError::too_large(format!(
                "the answer needs {want} bytes of memory, more than the server's budget of {}",
                b.capacity
            )));
        }
        if !self.try_reserve(n) {
            self.budget.metrics.refuse(Refusal::Memory);
            return Err(ApiError::unavailable(
                "the server's memory for answers is in use; retry shortly",
                1,
            ));
        }
        Ok(())
    }

    /// Reserves `n` more bytes if they fit now; `false` (nothing counted) when they do not,
    /// for memory a request can do without (a scratch buffer it has a slower way around).
    pub fn try_reserve(&mut self, n: u64) -> bool {
        let b = &self.budget;
        let mut used = b.used.load(Ordering::Acquire);
        loop {
            if used.saturating_add(n) > b.capacity {
                return false;
            }
            match b
                .used
                .compare_exchange_weak(used, used + n, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => break,
                Err(now) => used = now,
            }
        }
        b.peak.fetch_max(used + n, Ordering::AcqRel);
        self.held = self.held.saturating_add(n);
        true
    }

    /// Gives back `n` of the bytes held (a scratch buffer freed).
    pub fn release(&mut self, n: u64) {
        let n = n.min(self.held);
        self.budget.used.fetch_sub(n, Ordering::AcqRel);
        self.held -= n;
    }

    /// Holds exactly `n` bytes from now on (the answer is made: what was reserved beyond it is
    /// given back). An answer a little larger than reserved (a frame's own headers around
    /// its data) is held as it is: its memory is already taken.
    pub fn settle(&mut self, n: u64) {
        let used = &self.budget.used;
        if n < self.held {
            used.fetch_sub(self.held - n, Ordering::AcqRel);
        } else {
            let now = used.fetch_add(n - self.held, Ordering::AcqRel) + (n - self.held);
            self.budget.peak.fetch_max(now, Ordering::AcqRel);
        }
        self.held = n;
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.held, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_fit_the_budget_and_are_given_back() {
        let metrics = Arc::new(Metrics::default());
        let b = Budget::new(100, Arc::clone(&metrics));
        let mut one = b.charge();
        one.reserve(60).unwrap();
        let mut two = b.charge();
        // 60 + 50 > 100: refused for now, with Retry-After.
        let e = two.reserve(50).unwrap_err();
        assert_eq!((e.status.as_u16(), e.retry_after), (503, Some(1)));
        assert_eq!(metrics.refusals(Refusal::Memory), 1);
        assert_eq!(b.used(), 60);
        // More than the whole budget can never fit: 413.
        let e = two.reserve(101).unwrap_err();
        assert_eq!(e.status.as_u16(), 413);
        two.reserve(40).unwrap();
        assert_eq!(b.used(), 100);
        // Settled to a smaller answer, then dropped: everything comes back.
        one.settle(10);
        assert_eq!(b.used(), 50);
        two.settle(45);
        assert_eq!(b.used(), 55);
        drop(one);
        drop(two);
        assert_eq!(b.used(), 0);
        assert_eq!(b.peak(), 100);
    }

    #[test]
    fn scratch_bytes_are_taken_only_when_they_fit_and_given_back() {
        let metrics = Arc::new(Metrics::default());
        let b = Budget::new(100, Arc::clone(&metrics));
        let mut one = b.charge();
        one.reserve(30).unwrap();
        assert!(one.try_reserve(60));
        assert_eq!(b.used(), 90);
        // 90 + 20 > 100: not taken, and no refusal counted.
        assert!(!one.try_reserve(20));
        assert_eq!(metrics.refusals(Refusal::Memory), 0);
        one.release(60);
        assert_eq!((b.used(), b.peak()), (30, 90));
        one.release(1000);
        assert_eq!(b.used(), 0);
    }
}
