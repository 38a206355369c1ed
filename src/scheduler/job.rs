//! One parallel job whose tasks borrow the caller's stack: the only lifetime erasure in Strata.
//!
//! A job is `n` tasks (indices `0..n`) and one *body*, the closure every participating thread
//! runs: it claims indices one at a time ([`Claims::next`]) until none is left. The caller's
//! thread is always a participant; each *ticket* it hands to the worker queues lets one more
//! worker join. A ticket is an `Arc<JobState>`, so it may outlive the job (a worker can pop it
//! after the job is over); the body it points to may not, since it borrows the caller's stack.
//!
//! # Why the borrow is sound
//!
//! The body is stored as a raw pointer with its lifetime erased ([`ErasedBody`]). It is read
//! only by a worker that has *entered* the job, and the caller does not return before every
//! entered worker has *left*:
//!
//! * `state` holds the number of entered workers plus a `CLOSED` bit. A worker enters with a
//!   compare-and-swap that fails once `CLOSED` is set, and leaves with a decrement
//!   ([`JobState::join`]; a drop guard leaves even if the body panics).
//! * The caller sets `CLOSED` and then blocks until the count is zero
//!   ([`CloseGuard`], whose `Drop` runs on the normal path *and* while unwinding). After that no
//!   worker is inside, and none can enter: the pointer is dangling but never read again.
//!
//! Everything the workers wrote through the body happens-before the caller's return: leaving
//! is a `Release` decrement, and the caller's wait reads `state` with `Acquire`.
//!
//! A panic inside the body is caught on whichever thread ran it, recorded in the job and
//! resumed on the caller once the job is closed, so a panicking task never kills a worker and
//! never leaves the caller waiting.

use crate::error::Error;
use crossbeam_utils::CachePadded;
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, Thread};

/// The body every participant runs: claim indices from the [`Claims`] until it returns `None`.
pub(crate) type Body<'a> = dyn Fn(&Claims<'_>) + Sync + 'a;

/// A panic payload caught in a task, to be resumed on the caller.
pub(crate) type PanicPayload = Box<dyn Any + Send + 'static>;

/// The `CLOSED` bit of [`JobState::state`]; the bits below count entered workers.
const CLOSED: usize = 1 << (usize::BITS - 1);

/// Spins (checking the state) before the caller parks while workers finish.
const WAIT_SPINS: u32 = 1 << 10;

/// A [`Body`] pointer whose lifetime has been erased, so that it can sit in an `Arc` that
/// outlives the borrow.
///
/// Dereferenced only by [`JobState::join`] between a successful enter and the matching leave.
struct ErasedBody(*const Body<'static>);

// SAFETY: the pointee is `Sync` (see `Body`), so a shared reference to it may be used from any
// thread; the pointer itself is only dereferenced under the enter/leave protocol described in
// the module docs, while the caller keeps the borrow alive.
unsafe impl Send for ErasedBody {}
// SAFETY: as for `Send`: `&ErasedBody` only gives access to a `Sync` pointee, under the protocol.
unsafe impl Sync for ErasedBody {}

/// The shared state of one job: claimed indices, entered workers, the outcome.
pub(crate) struct JobState {
    /// Next index to hand out; grows past `n` once the indices are exhausted.
    next: CachePadded<AtomicUsize>,
    /// Entered workers, plus [`CLOSED`] once the caller stops admitting workers.
    state: CachePadded<AtomicUsize>,
    /// Number of tasks.
    n: usize,
    /// Set by the first error or panic: the remaining indices are not run.
    cancelled: AtomicBool,
    /// The lowest-index error seen, with its index.
    error: Mutex<Option<(usize, Error)>>,
    /// The first panic payload caught.
    panic: Mutex<Option<PanicPayload>>,
    /// The caller's thread, unparked by the last worker to leave after `CLOSED`.
    caller: Thread,
    /// The body; see [`ErasedBody`].
    body: ErasedBody,
}

/// What a finished job reports to its caller.
pub(crate) struct Outcome {
    /// The lowest-index error a task returned (if no task panicked).
    pub error: Option<(usize, Error)>,
    /// The payload of a task's panic, to be resumed on the caller.
    pub panic: Option<PanicPayload>,
}

/// The view of a job a body gets: claim indices, report failures.
pub(crate) struct Claims<'j> {
    job: &'j JobState,
}

impl Claims<'_> {
    /// The next unclaimed index, or `None` when all are claimed or the job was cancelled.
    pub(crate) fn next(&self) -> Option<usize> {
        if self.job.cancelled.load(Ordering::Relaxed) {
            return None;
        }
        let i = self.job.next.fetch_add(1, Ordering::Relaxed);
        (i < self.job.n).then_some(i)
    }

    /// Records that task `index` failed: keeps the lowest-index error and cancels the job.
    pub(crate) fn fail(&self, index: usize, error: Error) {
        self.job.cancelled.store(true, Ordering::Relaxed);
        let mut slot = self
            .job
            .error
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if slot.as_ref().is_none_or(|(i, _)| index < *i) {
            *slot = Some((index, error));
        }
    }
}

impl JobState {
    /// Runs the body for a worker that popped this job's ticket, if the job still admits
    /// workers; a ticket popped after the caller closed the job does nothing.
    pub(crate) fn join(&self) {
        let entered = self
            .state
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, |s| {
                (s & CLOSED == 0).then_some(s + 1)
            })
            .is_ok();
        if !entered {
            return;
        }
        let _leave = LeaveGuard { job: self };
        // SAFETY: we entered above while `CLOSED` was clear, and `_leave` leaves only after the
        // body returns or unwinds. The caller blocks in `CloseGuard::drop` until every entered
        // worker has left, before the borrow behind the pointer ends (module docs).
        let body = unsafe { &*self.body.0 };
        self.run_body(body);
    }

    /// Runs `body` on this thread, catching a panic into the job.
    fn run_body(&self, body: &Body<'_>) {
        let claims = Claims { job: self };
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| body(&claims))) {
            self.cancelled.store(true, Ordering::Relaxed);
            let mut slot = self.panic.lock().unwrap_or_else(PoisonError::into_inner);
            slot.get_or_insert(payload);
        }
    }
}

/// Leaves the job when dropped: decrements the entered count, waking the caller if it is
/// waiting for the last worker.
struct LeaveGuard<'j> {
    job: &'j JobState,
}

impl Drop for LeaveGuard<'_> {
    fn drop(&mut self) {
        // The caller may return as soon as this decrement is visible: touch nothing borrowed
        // after it (the `Arc`ed `JobState` itself stays alive through the ticket).
        let before = self.job.state.fetch_sub(1, Ordering::Release);
        if before == CLOSED | 1 {
            self.job.caller.unpark();
        }
    }
}

/// Closes the job and waits for every entered worker to leave; runs on return and on unwind.
struct CloseGuard<'j> {
    job: &'j JobState,
}

impl Drop for CloseGuard<'_> {
    fn drop(&mut self) {
        let job = self.job;
        if thread::panicking() {
            job.cancelled.store(true, Ordering::Relaxed);
        }
        let mut state = job.state.fetch_or(CLOSED, Ordering::Acquire) | CLOSED;
        let mut spins = 0;
        while state != CLOSED {
            if spins < WAIT_SPINS {
                spins += 1;
                std::hint::spin_loop();
            } else {
                // A leaving worker unparks us when it sees `CLOSED | 1`; a stale unpark token
                // only costs one more loop.
                thread::park();
            }
            state = job.state.load(Ordering::Acquire);
        }
    }
}

/// Runs one job of `n` tasks: `publish` hands out tickets, the calling thread runs `body`
/// itself, then the job is closed and this returns once no worker is inside `body`.
///
/// `publish` receives the job to clone into tickets (each lets one worker run `body`). The
/// function returns only after every worker that entered has left, also when `publish` or the
/// body panics, which is what makes lending `body` (and what it borrows) to workers sound.
// An `as` cast may not extend a trait object's lifetime, hence `transmute`.
#[allow(clippy::transmute_ptr_to_ptr)]
pub(crate) fn run_scoped(
    n: usize,
    body: &Body<'_>,
    publish: impl FnOnce(&Arc<JobState>),
) -> Outcome {
    let short: *const Body<'_> = body;
    // SAFETY: only the lifetime changes (same fat-pointer layout). The erased pointer is read
    // only in `JobState::join` by entered workers, and `_close` below does not let this
    // function return (or unwind) before all entered workers have left; `body` outlives this
    // call, so every read happens while the original borrow is alive.
    let erased: *const Body<'static> = unsafe { std::mem::transmute(short) };
    let job = Arc::new(JobState {
        next: CachePadded::new(AtomicUsize::new(0)),
        state: CachePadded::new(AtomicUsize::new(0)),
        n,
        cancelled: AtomicBool::new(false),
        error: Mutex::new(None),
        panic: Mutex::new(None),
        caller: thread::current(),
        body: ErasedBody(erased),
    });
    {
        let _close = CloseGuard { job: &job };
        publish(&job);
        job.run_body(body);
    }
    let error = job
        .error
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    let panic = job
        .panic
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    Outcome { error, panic }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn caller_alone_runs_every_index() {
        let sum = AtomicU64::new(0);
        let body = |c: &Claims<'_>| {
            while let Some(i) = c.next() {
                sum.fetch_add(i as u64, Ordering::Relaxed);
            }
        };
        let out = run_scoped(100, &body, |_| {});
        assert!(out.error.is_none() && out.panic.is_none());
        assert_eq!(sum.load(Ordering::Relaxed), 4950);
    }

    #[test]
    fn stale_ticket_does_not_enter() {
        let mut kept = None;
        let body = |c: &Claims<'_>| while c.next().is_some() {};
        let _ = run_scoped(3, &body, |job| kept = Some(Arc::clone(job)));
        let job = kept.unwrap();
        // The job is closed: joining now must not touch the (gone) body.
        job.join();
        assert_eq!(job.state.load(Ordering::Relaxed), CLOSED);
    }

    #[test]
    fn lowest_index_error_wins() {
        let body = |c: &Claims<'_>| {
            c.fail(7, Error::index("task", 7, 10));
            c.fail(3, Error::index("task", 3, 10));
            c.fail(5, Error::index("task", 5, 10));
        };
        let out = run_scoped(10, &body, |_| {});
        let (i, e) = out.error.unwrap();
        assert_eq!(i, 3);
        assert_eq!(e, Error::index("task", 3, 10));
    }

    #[test]
    fn worker_thread_joins_and_panic_is_caught() {
        let hits = AtomicU64::new(0);
        let body = |c: &Claims<'_>| {
            while let Some(i) = c.next() {
                hits.fetch_add(1, Ordering::Relaxed);
                if i == 1 {
                    panic!("task 1");
                }
            }
        };
        let out = thread::scope(|s| {
            run_scoped(4, &body, |job| {
                let job = Arc::clone(job);
                s.spawn(move || job.join());
            })
        });
        assert!(out.panic.is_some());
        assert!(hits.load(Ordering::Relaxed) >= 2);
    }
}
