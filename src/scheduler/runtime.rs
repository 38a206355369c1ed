//! The worker pool: one pinned worker per core, work-stealing queues, jobs whose tasks borrow
//! the caller's data.
#![forbid(unsafe_code)]

use super::config::{self, RuntimeConfig, DEFAULT_SPIN};
use super::job::{self, Body, Claims, JobState};
use super::sys::LeakedSlot;
use super::topology::{Cores, Topology};
use crate::error::{Error, Expected, Result};
use crossbeam_deque::{Injector, Steal, Stealer, Worker};
use crossbeam_utils::Backoff;
use std::cell::RefCell;
use std::panic;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// A ticket lets one worker join a job.
type Ticket = Arc<JobState>;

/// A task handed to the pool by [`Runtime::spawn`]: run once, by one worker, to its end.
type Detached = Box<dyn FnOnce() + Send + 'static>;

/// Distinguishes runtimes, so that a worker knows whether a job is its own runtime's.
static NEXT_RUNTIME_ID: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    /// Set on worker threads: which runtime, which worker, and the worker's own deque.
    static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
}

/// A worker thread's identity and deque.
struct Local {
    runtime_id: usize,
    index: usize,
    deque: Worker<Ticket>,
}

/// State shared by a runtime and its workers.
struct Shared {
    id: usize,
    /// Tickets from threads outside the pool.
    injector: Injector<Ticket>,
    /// The other end of each worker's deque (tickets of jobs started on a worker).
    stealers: Vec<Stealer<Ticket>>,
    /// Tasks from [`Runtime::spawn`]; a worker starts one only when no job needs help.
    detached: Injector<Detached>,
    shutdown: AtomicBool,
    /// Bumped after each publication, so a worker about to sleep sees it missed one.
    epoch: AtomicUsize,
    /// Workers asleep (or about to be) on `wake`.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
    spin: Duration,
}

impl Shared {
    /// A ticket from the worker's own deque, the injector, or another worker's deque.
    fn find_ticket(&self, index: usize) -> Option<Ticket> {
        let own = LOCAL.with(|l| l.borrow().as_ref().and_then(|w| w.deque.pop()));
        if own.is_some() {
            return own;
        }
        if let Some(t) = steal_from(|| self.injector.steal()) {
            return Some(t);
        }
        let k = self.stealers.len();
        (1..k).find_map(|off| steal_from(|| self.stealers[(index + off) % k].steal()))
    }

    /// Wakes up to `n` sleeping workers after tickets were published.
    fn notify(&self, n: usize) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        let sleepers = self.sleepers.load(Ordering::SeqCst);
        if sleepers == 0 {
            return;
        }
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        if n >= sleepers {
            self.wake.notify_all();
        } else {
            for _ in 0..n {
                self.wake.notify_one();
            }
        }
    }

    /// The worker loop: run tickets, spin a little when idle, then sleep until notified.
    fn work(&self, index: usize) {
        let backoff = Backoff::new();
        let mut idle_since: Option<Instant> = None;
        while !self.shutdown.load(Ordering::Acquire) {
            let epoch = self.epoch.load(Ordering::SeqCst);
            if let Some(ticket) = self.find_ticket(index) {
                ticket.join();
                idle_since = None;
                backoff.reset();
                continue;
            }
            if let Some(task) = steal_from(|| self.detached.steal()) {
                // A panic ends the task, not the worker.
                let _ = panic::catch_unwind(panic::AssertUnwindSafe(task));
                idle_since = None;
                backoff.reset();
                continue;
            }
            let since = *idle_since.get_or_insert_with(Instant::now);
            if since.elapsed() < self.spin {
                backoff.snooze();
                continue;
            }
            let guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
            self.sleepers.fetch_add(1, Ordering::SeqCst);
            // A publication after `epoch` was read bumped it; its publisher then either sees
            // `sleepers > 0` and notifies under the lock we hold, or we see the new epoch here.
            if self.epoch.load(Ordering::SeqCst) == epoch && !self.shutdown.load(Ordering::Acquire)
            {
                drop(
                    self.wake
                        .wait(guard)
                        .unwrap_or_else(PoisonError::into_inner),
                );
            } else {
                drop(guard);
            }
            self.sleepers.fetch_sub(1, Ordering::SeqCst);
            idle_since = None;
            backoff.reset();
        }
    }
}

/// Retries a steal until it succeeds or finds the queue empty.
fn steal_from<T>(mut steal: impl FnMut() -> Steal<T>) -> Option<T> {
    loop {
        match steal() {
            Steal::Success(t) => return Some(t),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

/// A pool of worker threads, one per core, that runs data-parallel jobs.
///
/// A job ([`Runtime::for_each_index`] and the helpers built on it) is `n` tasks run on up to
/// `nthreads` threads: the calling thread, which always takes part, plus workers that join
/// through the work-stealing queues. Tasks may borrow anything the caller can (input slices,
/// disjoint output chunks): the call returns only when every task is done.
///
/// Many threads may run jobs at once on the same runtime; they share its workers, so the
/// process never has more worker threads than the runtime was built with. A job's `nthreads`
/// only caps how many threads run its tasks; `0` means the runtime's default
/// ([`Runtime::nthreads`]). A job with one task or `nthreads == 1` runs inline, without any
/// synchronisation.
///
/// Use [`Runtime::global`] for the process-wide runtime, or [`Runtime::new`] (often in an
/// `Arc`) for a separate pool. Dropping a runtime stops and joins its workers.
///
/// ```
/// use strata::scheduler::Runtime;
/// let input: Vec<u32> = (0..1000).collect();
/// let mut output = vec![0u32; 1000];
/// Runtime::global().for_each_chunk_mut(&mut output, 100, 0, |i, out| {
///     for (o, x) in out.iter_mut().zip(&input[i * 100..]) {
///         *o = x * 2;
///     }
///     Ok(())
/// })?;
/// assert_eq!(output[999], 1998);
/// # Ok::<(), strata::Error>(())
/// ```
pub struct Runtime {
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
    workers: usize,
    pinned: bool,
    nthreads: AtomicUsize,
    cores: Cores,
    topology: Topology,
    config: RuntimeConfig,
    /// The process that created the workers; in a forked child they do not exist.
    pid: u32,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("workers", &self.workers)
            .field("pinned", &self.pinned)
            .field("nthreads", &self.nthreads())
            .field("topology", &self.topology)
            .finish_non_exhaustive()
    }
}

/// The process-wide runtime of one process (see [`Runtime::global`]).
struct GlobalSlot {
    pid: u32,
    runtime: Option<Arc<Runtime>>,
}

static GLOBAL: LeakedSlot<GlobalSlot> = LeakedSlot::new();

impl Runtime {
    /// Starts a runtime: detects cores and caches, spawns and pins the workers.
    ///
    /// Never fails: a worker that cannot be spawned is left out ([`Runtime::workers`] tells
    /// how many run) and a core that refuses pinning leaves [`Runtime::pinned`] false.
    #[must_use]
    pub fn new(config: RuntimeConfig) -> Runtime {
        let cores = Cores::detect();
        let topology = config.topology.unwrap_or_else(Topology::detect);
        let wanted = config.workers.unwrap_or_else(|| cores.physical.max(1));
        let pin = config.pin.or_else(config::env_pin).unwrap_or(true);
        let deques: Vec<Worker<Ticket>> = (0..wanted).map(|_| Worker::new_lifo()).collect();
        let shared = Arc::new(Shared {
            id: NEXT_RUNTIME_ID.fetch_add(1, Ordering::Relaxed),
            injector: Injector::new(),
            stealers: deques.iter().map(Worker::stealer).collect(),
            detached: Injector::new(),
            shutdown: AtomicBool::new(false),
            epoch: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            spin: config.spin.unwrap_or(DEFAULT_SPIN),
        });
        let (started_tx, started_rx) = mpsc::channel::<bool>();
        let mut handles = Vec::with_capacity(wanted);
        for (index, deque) in deques.into_iter().enumerate() {
            let cpu = if pin && !cores.pin_cpus.is_empty() {
                Some(cores.pin_cpus[index % cores.pin_cpus.len()])
            } else {
                None
            };
            let shared = Arc::clone(&shared);
            let started = started_tx.clone();
            let spawned = thread::Builder::new()
                .name(format!("strata-worker-{index}"))
                .spawn(move || worker_main(&shared, index, deque, cpu, &started));
            if let Ok(handle) = spawned {
                handles.push(handle);
            }
        }
        drop(started_tx);
        let workers = handles.len();
        // Wait until every worker runs (and has tried to pin itself).
        let pinned_count = started_rx.iter().take(workers).filter(|&p| p).count();
        let nthreads = config
            .nthreads
            .or_else(config::env_nthreads)
            .unwrap_or(workers)
            .max(1);
        Runtime {
            shared,
            handles,
            workers,
            pinned: workers > 0 && pinned_count == workers,
            nthreads: AtomicUsize::new(nthreads),
            cores,
            topology,
            config,
            pid: std::process::id(),
        }
    }

    /// The process-wide runtime, created on first use from the environment (or from
    /// [`Runtime::configure_global`]); it lives until the process exits.
    ///
    /// After `fork()`, the child's first call creates a fresh runtime (with the parent's
    /// configuration): the parent's workers do not exist in the child. Runtimes the child
    /// inherited still work there, running every job on the calling thread.
    #[must_use]
    pub fn global() -> Arc<Runtime> {
        let pid = std::process::id();
        loop {
            let current = GLOBAL.get();
            if let Some(slot) = current {
                if slot.pid == pid {
                    if let Some(rt) = &slot.runtime {
                        return Arc::clone(rt);
                    }
                }
            }
            let config = current
                .and_then(|s| s.runtime.as_ref())
                .map(|rt| rt.config.clone())
                .unwrap_or_default();
            if let Ok(rt) = install_global(current, pid, config) {
                return rt;
            }
        }
    }

    /// Creates the process-wide runtime from `config`.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] if this process already has its global runtime (configure it
    /// before the first [`Runtime::global`]).
    pub fn configure_global(config: RuntimeConfig) -> Result<Arc<Runtime>> {
        let pid = std::process::id();
        let current = GLOBAL.get();
        let exists = || Error::Unsupported {
            what: "the global runtime already exists: configure it before its first use",
        };
        if current.is_some_and(|s| s.pid == pid) {
            return Err(exists());
        }
        install_global(current, pid, config).map_err(|()| exists())
    }

    /// Number of worker threads (the caller's thread comes on top when it runs a job).
    #[must_use]
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Whether every worker is pinned to its own core.
    #[must_use]
    pub fn pinned(&self) -> bool {
        self.pinned
    }

    /// The default `nthreads` (caller included) of a job that passes 0.
    #[must_use]
    pub fn nthreads(&self) -> usize {
        self.nthreads.load(Ordering::Relaxed)
    }

    /// Sets the default `nthreads` for later jobs (0 counts as 1). Jobs already running keep
    /// theirs.
    pub fn set_nthreads(&self, nthreads: usize) {
        self.nthreads.store(nthreads.max(1), Ordering::Relaxed);
    }

    /// The cores this runtime was sized for.
    #[must_use]
    pub fn cores(&self) -> &Cores {
        &self.cores
    }

    /// The cache sizes this runtime uses for its sizing rules.
    #[must_use]
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The configuration the runtime was created with (unresolved: `None` fields stay `None`).
    #[must_use]
    pub fn config(&self) -> &RuntimeConfig {
        &self.config
    }

    /// The index of the current thread among this runtime's workers, `None` on other threads.
    #[must_use]
    pub fn current_worker(&self) -> Option<usize> {
        LOCAL.with(|l| {
            l.borrow()
                .as_ref()
                .filter(|w| w.runtime_id == self.shared.id)
                .map(|w| w.index)
        })
    }

    /// How many threads (caller included) a job of `n_tasks` tasks asking for `nthreads`
    /// would use: `nthreads` (0 = the default), capped by the tasks and by workers + 1.
    #[must_use]
    pub fn job_threads(&self, n_tasks: usize, nthreads: usize) -> usize {
        let wanted = if nthreads == 0 {
            self.nthreads()
        } else {
            nthreads
        };
        wanted.min(n_tasks).min(self.workers + 1).max(1)
    }

    /// Runs `f(i)` for every `i` in `0..n_tasks` on up to `nthreads` threads (caller included;
    /// 0 = [`Runtime::nthreads`]) and returns when all are done. On a pinned runtime a caller
    /// from outside the pool helps on top of up to `nthreads` workers, as it has no core of
    /// its own.
    ///
    /// Tasks run in no particular order. The first failure cancels the tasks not yet started.
    ///
    /// # Errors
    ///
    /// The error of the lowest-index failing task, whatever `f` returned.
    ///
    /// # Panics
    ///
    /// If a task panics, the panic is resumed on the caller with its original payload, after
    /// every started task has finished; the runtime stays usable.
    pub fn for_each_index<F>(&self, n_tasks: usize, nthreads: usize, f: F) -> Result<()>
    where
        F: Fn(usize) -> Result<()> + Sync,
    {
        self.for_each_index_init(n_tasks, nthreads, || (), |(), i| f(i))
    }

    /// Like [`Runtime::for_each_index`], with a per-thread state: each participating thread
    /// calls `init` once, before its first task, and passes the state to each task it runs
    /// (e.g. scratch buffers).
    ///
    /// # Errors
    ///
    /// The error of the lowest-index failing task.
    ///
    /// # Panics
    ///
    /// A task's panic is resumed on the caller (see [`Runtime::for_each_index`]).
    pub fn for_each_index_init<S, I, F>(
        &self,
        n_tasks: usize,
        nthreads: usize,
        init: I,
        f: F,
    ) -> Result<()>
    where
        I: Fn() -> S + Sync,
        F: Fn(&mut S, usize) -> Result<()> + Sync,
    {
        if n_tasks == 0 {
            return Ok(());
        }
        let threads = self.job_threads(n_tasks, nthreads);
        if threads <= 1 || !self.workers_here() {
            let mut state = init();
            return (0..n_tasks).try_for_each(|i| f(&mut state, i));
        }
        let body = |claims: &Claims<'_>| {
            let mut state = None;
            while let Some(i) = claims.next() {
                let state = state.get_or_insert_with(&init);
                if let Err(e) = f(state, i) {
                    claims.fail(i, e);
                }
            }
        };
        self.run_job(n_tasks, threads, &body)
    }

    /// Splits `data` into chunks of `chunk_len` elements (the last may be shorter) and runs
    /// `f(i, chunk_i)` for each, on up to `nthreads` threads (0 = the default). Each task gets
    /// exclusive access to its own chunk.
    ///
    /// # Errors
    ///
    /// [`Error::OutOfRange`] if `chunk_len` is 0 and `data` is not empty; else the error of
    /// the lowest-index failing task.
    ///
    /// # Panics
    ///
    /// A task's panic is resumed on the caller (see [`Runtime::for_each_index`]).
    pub fn for_each_chunk_mut<T, F>(
        &self,
        data: &mut [T],
        chunk_len: usize,
        nthreads: usize,
        f: F,
    ) -> Result<()>
    where
        T: Send,
        F: Fn(usize, &mut [T]) -> Result<()> + Sync,
    {
        self.for_each_chunk_mut_init(data, chunk_len, nthreads, || (), |(), i, chunk| f(i, chunk))
    }

    /// Like [`Runtime::for_each_chunk_mut`], with a per-thread state made by `init` (see
    /// [`Runtime::for_each_index_init`]).
    ///
    /// # Errors
    ///
    /// [`Error::OutOfRange`] if `chunk_len` is 0 and `data` is not empty; else the error of
    /// the lowest-index failing task.
    ///
    /// # Panics
    ///
    /// A task's panic is resumed on the caller (see [`Runtime::for_each_index`]).
    pub fn for_each_chunk_mut_init<T, S, I, F>(
        &self,
        data: &mut [T],
        chunk_len: usize,
        nthreads: usize,
        init: I,
        f: F,
    ) -> Result<()>
    where
        T: Send,
        I: Fn() -> S + Sync,
        F: Fn(&mut S, usize, &mut [T]) -> Result<()> + Sync,
    {
        if data.is_empty() {
            return Ok(());
        }
        if chunk_len == 0 {
            return Err(Error::range("chunk_len", 0, Expected::AtLeast(1)));
        }
        let n = data.len().div_ceil(chunk_len);
        if self.job_threads(n, nthreads) <= 1 || !self.workers_here() {
            let mut state = init();
            return data
                .chunks_mut(chunk_len)
                .enumerate()
                .try_for_each(|(i, c)| f(&mut state, i, c));
        }
        // Each chunk is handed out once, through its own (uncontended) lock.
        let slots: Vec<Mutex<Option<&mut [T]>>> = data
            .chunks_mut(chunk_len)
            .map(|c| Mutex::new(Some(c)))
            .collect();
        self.for_each_index_init(n, nthreads, init, |state, i| {
            let chunk = slots[i]
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            match chunk {
                Some(chunk) => f(state, i, chunk),
                None => Err(Error::Internal {
                    what: "the runtime handed a chunk out twice",
                }),
            }
        })
    }

    /// Runs `f(i)` for every `i` in `0..n_tasks` on up to `nthreads` threads (0 = the default)
    /// and collects the results in index order.
    ///
    /// # Errors
    ///
    /// The error of the lowest-index failing task.
    ///
    /// # Panics
    ///
    /// A task's panic is resumed on the caller (see [`Runtime::for_each_index`]).
    pub fn map_index<R, F>(&self, n_tasks: usize, nthreads: usize, f: F) -> Result<Vec<R>>
    where
        R: Send,
        F: Fn(usize) -> Result<R> + Sync,
    {
        let mut out: Vec<Option<R>> = crate::alloc::with_capacity(n_tasks)?;
        out.resize_with(n_tasks, || None);
        self.for_each_chunk_mut(&mut out, 1, nthreads, |i, slot| {
            slot[0] = Some(f(i)?);
            Ok(())
        })?;
        out.into_iter()
            .map(|r| {
                r.ok_or(Error::Internal {
                    what: "a task of the runtime produced nothing",
                })
            })
            .collect()
    }

    /// Hands `task` to the pool and returns at once: one worker runs it to its end, on its
    /// own core, when no job needs that worker's help (jobs come first, so work already
    /// started finishes before new work begins). Jobs the task starts are nested jobs: the
    /// other workers help with them, and no thread is added. This is how a server keeps every
    /// computation on the pool, whatever the number of its clients: the threads that receive
    /// requests spawn the work and wait for its answer (e.g. on a channel).
    ///
    /// Tasks start in no guaranteed order. A task that panics ends there; the worker goes on.
    /// Tasks still queued when the runtime is dropped are dropped without running. A runtime
    /// without workers in this process ([`Runtime::workers`] 0, or a forked child) runs the
    /// task on the calling thread before returning.
    ///
    /// ```
    /// use strata::scheduler::{Runtime, RuntimeConfig};
    /// let rt = std::sync::Arc::new(Runtime::new(RuntimeConfig::default().with_workers(2)));
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let pool = rt.clone();
    /// rt.spawn(move || {
    ///     let mut v = vec![1u64; 1 << 16];
    ///     pool.for_each_chunk_mut(&mut v, 1024, 0, |i, c| {
    ///         c.iter_mut().for_each(|x| *x += i as u64);
    ///         Ok(())
    ///     })
    ///     .unwrap();
    ///     tx.send(v.iter().sum::<u64>()).unwrap();
    /// });
    /// assert_eq!(rx.recv().unwrap(), (1 << 16) + 1024 * (63 * 64 / 2));
    /// ```
    pub fn spawn<F>(&self, task: F)
    where
        F: FnOnce() + Send + 'static,
    {
        if !self.workers_here() {
            let _ = panic::catch_unwind(panic::AssertUnwindSafe(task));
            return;
        }
        self.shared.detached.push(Box::new(task));
        self.shared.notify(1);
    }

    /// Whether this runtime's workers exist in this process (false in a forked child).
    fn workers_here(&self) -> bool {
        self.workers > 0 && std::process::id() == self.pid
    }

    /// Runs `body` as a job of `n` tasks on `threads` threads (caller included).
    ///
    /// Except: a caller from outside the pool is not pinned, so while the workers are, it
    /// shares a core with one of them, and counting it among `threads` would leave another core
    /// idle (the OS cannot move a pinned worker). An outside caller on a pinned runtime
    /// therefore invites `threads` workers (at most all of them) and helps on top; it adds no
    /// thread, only work for one that exists (the gain is measured in `docs/measurements.md`).
    fn run_job(&self, n: usize, threads: usize, body: &Body<'_>) -> Result<()> {
        let inside = LOCAL.with(|l| {
            l.borrow()
                .as_ref()
                .is_some_and(|w| w.runtime_id == self.shared.id)
        });
        let tickets = if self.pinned() && !inside {
            threads.min(self.workers).min(n - 1)
        } else {
            threads - 1
        };
        let mut mine: Option<Ticket> = None;
        let mut local = false;
        let outcome = job::run_scoped(n, body, |job| {
            mine = Some(Arc::clone(job));
            local = self.publish(job, tickets);
        });
        if local {
            // Drop our own tickets no worker took: they sit on top of our LIFO deque.
            if let Some(mine) = &mine {
                LOCAL.with(|l| {
                    if let Some(w) = l.borrow().as_ref() {
                        while let Some(t) = w.deque.pop() {
                            if !Arc::ptr_eq(&t, mine) {
                                w.deque.push(t);
                                break;
                            }
                        }
                    }
                });
            }
        }
        if let Some(payload) = outcome.panic {
            panic::resume_unwind(payload);
        }
        outcome.error.map_or(Ok(()), |(_, e)| Err(e))
    }

    /// Hands out `tickets` tickets for `job`: to this worker's own deque when called on one of
    /// our workers (nested job), else to the injector. Returns whether they went to the deque.
    fn publish(&self, job: &Ticket, tickets: usize) -> bool {
        let local = LOCAL.with(|l| match l.borrow().as_ref() {
            Some(w) if w.runtime_id == self.shared.id => {
                for _ in 0..tickets {
                    w.deque.push(Arc::clone(job));
                }
                true
            }
            _ => false,
        });
        if !local {
            for _ in 0..tickets {
                self.shared.injector.push(Arc::clone(job));
            }
        }
        self.shared.notify(tickets);
        local
    }
}

/// Creates a runtime from `config` and publishes it as this process's global runtime if the
/// slot still holds `current`; `Err` if another thread won the race (our runtime is dropped).
fn install_global(
    current: Option<&'static GlobalSlot>,
    pid: u32,
    config: RuntimeConfig,
) -> Result<Arc<Runtime>, ()> {
    let rt = Arc::new(Runtime::new(config));
    let slot = Box::leak(Box::new(GlobalSlot {
        pid,
        runtime: Some(Arc::clone(&rt)),
    }));
    match GLOBAL.replace(current, slot) {
        Ok(()) => Ok(rt),
        Err(lost) => {
            // Unpublished, so still ours: release the runtime (its workers are joined).
            lost.runtime = None;
            Err(())
        }
    }
}

/// A worker thread: pin, report, then serve tickets until shutdown.
fn worker_main(
    shared: &Shared,
    index: usize,
    deque: Worker<Ticket>,
    cpu: Option<usize>,
    started: &mpsc::Sender<bool>,
) {
    let pinned = cpu.is_some_and(|id| core_affinity::set_for_current(core_affinity::CoreId { id }));
    let _ = started.send(pinned);
    LOCAL.with(|l| {
        *l.borrow_mut() = Some(Local {
            runtime_id: shared.id,
            index,
            deque,
        })
    });
    shared.work(index);
    LOCAL.with(|l| l.borrow_mut().take());
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if std::process::id() != self.pid {
            // A forked child's copy: the workers do not exist here, and the lock may have been
            // held by one of them at the fork. Touch neither; never join.
            for handle in self.handles.drain(..) {
                std::mem::forget(handle);
            }
            return;
        }
        self.shared.shutdown.store(true, Ordering::Release);
        {
            let _guard = self
                .shared
                .lock
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            self.shared.wake.notify_all();
        }
        let me = thread::current().id();
        for handle in self.handles.drain(..) {
            // Dropped from one of its own workers (a task held the last `Arc`): that worker
            // exits by itself once its task returns; joining it here would deadlock.
            if handle.thread().id() != me {
                let _ = handle.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local_deque_len() -> Option<usize> {
        LOCAL.with(|l| l.borrow().as_ref().map(|w| w.deque.len()))
    }

    #[test]
    fn nested_job_takes_back_its_stale_tickets() {
        let rt = Runtime::new(RuntimeConfig {
            workers: Some(2),
            pin: Some(false),
            ..RuntimeConfig::default()
        });
        let leftovers = Mutex::new(Vec::new());
        rt.for_each_index(8, 3, |_| {
            if rt.current_worker().is_some() {
                // Instant tasks: the worker (as caller) usually runs them all itself, leaving
                // its tickets unclaimed on its own deque until it takes them back.
                rt.for_each_index(4, 3, |_| Ok(()))?;
                leftovers.lock().unwrap().push(local_deque_len());
            }
            thread::sleep(Duration::from_millis(1));
            Ok(())
        })
        .unwrap();
        for len in leftovers.into_inner().unwrap() {
            assert_eq!(len, Some(0));
        }
        assert_eq!(local_deque_len(), None);
    }

    #[test]
    fn idle_workers_sleep_and_wake() {
        let rt = Runtime::new(RuntimeConfig {
            workers: Some(2),
            pin: Some(false),
            spin: Some(Duration::ZERO),
            ..RuntimeConfig::default()
        });
        for _ in 0..20 {
            let start = Instant::now();
            while rt.shared.sleepers.load(Ordering::SeqCst) < 2
                && start.elapsed() < Duration::from_secs(5)
            {
                thread::sleep(Duration::from_micros(200));
            }
            assert_eq!(rt.shared.sleepers.load(Ordering::SeqCst), 2);
            let ran_on_worker = AtomicBool::new(false);
            let arrived = AtomicUsize::new(0);
            rt.for_each_index(2, 2, |_| {
                // Each task waits for the other: only a woken worker can run the second one
                // while the caller is busy with the first.
                arrived.fetch_add(1, Ordering::SeqCst);
                let start = Instant::now();
                while arrived.load(Ordering::SeqCst) < 2
                    && start.elapsed() < Duration::from_secs(10)
                {
                    thread::yield_now();
                }
                if rt.current_worker().is_some() {
                    ran_on_worker.store(true, Ordering::Relaxed);
                }
                Ok(())
            })
            .unwrap();
            assert!(
                ran_on_worker.load(Ordering::Relaxed),
                "no sleeping worker woke up"
            );
        }
    }
}
