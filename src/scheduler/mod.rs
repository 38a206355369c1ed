//! The process runtime: one worker thread per core, data-parallel jobs whose tasks borrow the
//! caller's slices, and the cache topology with the sizing rules that follow from it.
//!
//! * [`Runtime`]: a pool of workers, one per physical core, each pinned to its core
//!   (`core_affinity`; `STRATA_PIN=0` turns pinning off), fed through work-stealing queues
//!   (`crossbeam-deque`: an injector for jobs from outside the pool, one deque per worker for
//!   jobs started inside it). The thread that starts a job always works on it too, so a
//!   one-thread job costs nothing more than a loop. [`Runtime::global`] is the lazily created
//!   process-wide runtime that contexts, arrays and the daemon share; [`Runtime::new`] makes a
//!   separate one to pass around (`Arc<Runtime>`).
//! * [`topology`]: cores, L1d/L2/L3 sizes (sysfs, CPUID, defaults; `STRATA_L1D`, `STRATA_L2`,
//!   `STRATA_L3`).
//! * [`sizing`]: the chunk size from L3 and the block size from L2.
//! * [`parse_size`]: sizes in bytes as people write them (`48K`, `8M`), for the environment,
//!   sysfs and the command line.
//! * [`SystemInfo`]: the summary of a runtime and its machine (what `strata system` prints);
//!   it uses the runtime, the topology and the sizing rules, none of which uses it.
//! * [`MIN_PARALLEL_BYTES`] and [`parallel_nthreads`]: when a job is too small to share.
//!
//! Environment, read when a runtime is created: `STRATA_NTHREADS`, else `BLOSC_NTHREADS` (the
//! variable C-Blosc2 users already set), gives the default `nthreads` of a job, caller
//! included; `STRATA_PIN=0` disables pinning. [`RuntimeConfig`] fields override both.
//!
//! `unsafe` lives in two small files: `job.rs`, which erases the lifetime of a job's closure so
//! that workers can run tasks borrowing the caller's stack (sound because the caller cannot
//! return, even by unwinding, before every worker has left the job), and `sys.rs` (CPUID, and
//! a lock-free slot that keeps the global runtime findable after `fork()`). All other files are
//! `#![forbid(unsafe_code)]`.
//!
//! Format: none (this layer knows no byte layouts). Models: C-Blosc2 `README_THREADED.rst`
//! (serial path for small buffers, `BLOSC_NTHREADS`).
//!
//! ```
//! use strata::scheduler::{parallel_nthreads, Runtime};
//! let src: Vec<u8> = (0..=255).cycle().take(1 << 20).collect();
//! let mut dst = vec![0u8; src.len()];
//! let rt = Runtime::global();
//! let block = 64 * 1024;
//! let nthreads = parallel_nthreads(src.len(), rt.nthreads());
//! rt.for_each_chunk_mut(&mut dst, block, nthreads, |i, out| {
//!     out.copy_from_slice(&src[i * block..i * block + out.len()]);
//!     Ok(())
//! })?;
//! assert_eq!(src, dst);
//! # Ok::<(), strata::Error>(())
//! ```
#![deny(unsafe_code)]

mod config;
#[allow(unsafe_code)]
mod job;
mod runtime;
mod size;
pub mod sizing;
#[allow(unsafe_code)]
mod sys;
mod system;
pub mod topology;

pub use config::{RuntimeConfig, DEFAULT_SPIN};
pub use runtime::Runtime;
pub use size::{parse_size, SizeError};
pub use system::SystemInfo;

/// Bytes of work below which a job runs on the caller's thread alone; above it, each thread
/// gets at least `MIN_PARALLEL_BYTES / 2` (see [`parallel_nthreads`]).
///
/// 64 KiB is where handing half of a job to a woken worker pays both ways, compressing and
/// decompressing, while the workers are awake (a pipeline handing out chunk after chunk); the
/// measurements and the command that repeats them are in `docs/measurements.md`.
pub const MIN_PARALLEL_BYTES: usize = 64 * 1024;

/// How many threads (caller included) a job processing `nbytes` bytes should use, given a cap
/// of `nthreads`: 1 below [`MIN_PARALLEL_BYTES`], else as many as give each thread at least
/// `MIN_PARALLEL_BYTES / 2`, up to `nthreads`.
///
/// `nthreads` is a resolved count (pass [`Runtime::nthreads`] for the runtime's default);
/// 0 counts as 1.
///
/// ```
/// use strata::scheduler::{parallel_nthreads, MIN_PARALLEL_BYTES};
/// assert_eq!(parallel_nthreads(MIN_PARALLEL_BYTES - 1, 8), 1);
/// assert_eq!(parallel_nthreads(MIN_PARALLEL_BYTES, 8), 2);
/// assert_eq!(parallel_nthreads(100 * MIN_PARALLEL_BYTES, 8), 8);
/// ```
#[must_use]
pub fn parallel_nthreads(nbytes: usize, nthreads: usize) -> usize {
    let per_thread = (MIN_PARALLEL_BYTES / 2).max(1);
    (nbytes / per_thread).clamp(1, nthreads.max(1))
}
