//! The bounded work queue in front of Strata's pinned runtime.
//!
//! Everything that reads a dataset (opening frames, decompressing, recompressing, reading
//! stored bytes) runs as a task on the runtime ([`Runtime::spawn`]), never on the threads
//! that do network I/O: one worker per core runs it, and what it decompresses in parallel
//! runs on the other workers, so the process never has more compute threads than cores,
//! whatever the number of clients.
//!
//! Admission is per request: each request that may read a dataset has a [`Permit`]
//! ([`Work::permit`]), which takes a place in the queue when the request first needs the pool
//! (before any work: a request answered from memory, such as a kept dataset's metadata or a
//! cached chunk, takes none). At most `capacity` requests hold a place, and past that a
//! request is refused at once with 503 and `Retry-After`. The tasks a request then runs (its
//! dataset's open, its read) run under the place it holds and never compete again, so an
//! admitted request is never refused halfway. The place is given back when the request and
//! its last task are done. A streamed body holds a place only while a piece of it is read
//! ([`Permit::release`] between pieces): waiting on a slow client, it keeps none from the
//! other requests; its next piece waits for a place rather than being refused
//! ([`Permit::run_waiting`]). A task that starts after its request's deadline, or after its
//! client went away, does nothing.

use crate::error::ApiError;
use crate::metrics::{Metrics, Refusal};
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use strata::scheduler::Runtime;
use tokio::sync::oneshot;

/// The queue.
#[derive(Debug)]
pub struct Work {
    runtime: Arc<Runtime>,
    capacity: usize,
    metrics: Arc<Metrics>,
}

/// One admitted request's place in the queue (given back when the last holder drops it: the
/// request, or a task of it still running).
#[derive(Debug)]
struct Place(Arc<Metrics>);

impl Drop for Place {
    fn drop(&mut self) {
        self.0.queued.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A request's right to run tasks on the pool: its place in the queue, taken once.
#[derive(Debug)]
pub struct Permit {
    runtime: Arc<Runtime>,
    metrics: Arc<Metrics>,
    capacity: usize,
    place: OnceLock<Arc<Place>>,
}

impl Work {
    /// A queue of `capacity` requests on `runtime`.
    #[must_use]
    pub fn new(runtime: Arc<Runtime>, capacity: usize, metrics: Arc<Metrics>) -> Work {
        Work {
            runtime,
            capacity: capacity.max(1),
            metrics,
        }
    }

    /// The runtime.
    #[must_use]
    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// The permit of a new request (no place taken yet).
    #[must_use]
    pub fn permit(&self) -> Permit {
        Permit {
            runtime: Arc::clone(&self.runtime),
            metrics: Arc::clone(&self.metrics),
            capacity: self.capacity,
            place: OnceLock::new(),
        }
    }
}

impl Permit {
    /// Takes the request's place in the queue unless it holds one.
    ///
    /// # Errors
    /// 503 with `Retry-After` when `capacity` requests hold a place.
    pub fn admit(&self) -> Result<(), ApiError> {
        self.place().map(drop)
    }

    fn place(&self) -> Result<Arc<Place>, ApiError> {
        self.try_place().ok_or_else(|| {
            self.metrics.refuse(Refusal::QueueFull);
            ApiError::unavailable("the server is busy; retry shortly", 1)
        })
    }

    /// The request's place: the one it holds, or a free one; `None` when `capacity` are held.
    fn try_place(&self) -> Option<Arc<Place>> {
        if let Some(p) = self.place.get() {
            return Some(Arc::clone(p));
        }
        let before = self.metrics.queued.fetch_add(1, Ordering::AcqRel);
        let place = Arc::new(Place(Arc::clone(&self.metrics)));
        if before >= self.capacity as u64 {
            return None;
        }
        // A request's tasks are awaited one at a time: nothing else set it meanwhile.
        Some(Arc::clone(self.place.get_or_init(|| place)))
    }

    /// Gives the request's place back (a task still running keeps it until it ends); the
    /// next task takes one again.
    pub fn release(&mut self) {
        drop(self.place.take());
    }

    /// [`Permit::run`], waiting for a free place until `deadline` when the queue is full
    /// instead of refusing.
    ///
    /// # Errors
    /// As [`Permit::run`]; 503 (deadline) when no place freed in time.
    pub async fn run_waiting<T, F>(&self, deadline: Instant, f: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce() -> Result<T, ApiError> + Send + 'static,
    {
        while self.try_place().is_none() {
            if Instant::now() >= deadline {
                self.metrics.refuse(Refusal::Deadline);
                return Err(deadline_error());
            }
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
        self.run(deadline, f).await
    }

    /// Runs `f` on the pool (taking the request's place first if it holds none) and waits
    /// for its answer.
    ///
    /// # Errors
    /// 503 when the queue is full (for the request's first task) or the deadline passed
    /// before `f` started; `f`'s error; 500 when `f` panicked.
    pub async fn run<T, F>(&self, deadline: Instant, f: F) -> Result<T, ApiError>
    where
        T: Send + 'static,
        F: FnOnce() -> Result<T, ApiError> + Send + 'static,
    {
        let place = self.place()?;
        let (tx, rx) = oneshot::channel();
        let metrics = Arc::clone(&self.metrics);
        self.runtime.spawn(move || {
            let _place = place;
            if tx.is_closed() {
                return;
            }
            if Instant::now() >= deadline {
                metrics.refuse(Refusal::Deadline);
                let _ = tx.send(Err(deadline_error()));
                return;
            }
            let _ = tx.send(f());
        });
        match rx.await {
            Ok(r) => r,
            Err(_) => Err(ApiError::internal("a task ended without an answer")),
        }
    }
}

/// The answer when a request's deadline passed.
#[must_use]
pub fn deadline_error() -> ApiError {
    ApiError::unavailable("the request did not finish before its deadline", 1)
}
