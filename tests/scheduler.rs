//! Integration tests of the scheduler: coverage of every task, disjoint output borrowing,
//! errors and panics, many application threads on few cores, changing `nthreads`, pinning,
//! environment configuration (in a child process) and `fork()`.
//!
//! `handoff_cost` (ignored) measures the hand-off cost behind `MIN_PARALLEL_BYTES`:
//! `cargo test --release --test scheduler -- --ignored --nocapture handoff_cost`.

use std::panic::{self, AssertUnwindSafe};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use strata::scheduler::{
    parallel_nthreads, Runtime, RuntimeConfig, SystemInfo, MIN_PARALLEL_BYTES,
};
use strata::Error;

fn two_workers() -> Runtime {
    Runtime::new(RuntimeConfig {
        workers: Some(2),
        ..RuntimeConfig::default()
    })
}

fn check_all_once(rt: &Runtime, n: usize, nthreads: usize) {
    let hits: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
    rt.for_each_index(n, nthreads, |i| {
        hits[i].fetch_add(1, Ordering::Relaxed);
        Ok(())
    })
    .unwrap();
    for (i, h) in hits.iter().enumerate() {
        assert_eq!(
            h.load(Ordering::Relaxed),
            1,
            "index {i} of {n}, nthreads {nthreads}"
        );
    }
}

#[test]
fn every_index_exactly_once() {
    let rt = two_workers();
    let global = Runtime::global();
    for n in [0, 1, 2, 3, 5, 8, 17, 64, 100, 1000, 4099] {
        for nthreads in [0, 1, 2, 3, 4, 8, 64] {
            check_all_once(&rt, n, nthreads);
            check_all_once(&global, n, nthreads);
        }
    }
}

#[test]
fn job_threads_caps() {
    let rt = two_workers();
    assert_eq!(rt.job_threads(1, 8), 1);
    assert_eq!(rt.job_threads(100, 1), 1);
    assert_eq!(rt.job_threads(100, 2), 2);
    assert_eq!(rt.job_threads(100, 64), 3); // two workers + the caller
    assert_eq!(rt.job_threads(0, 4), 1);
    let none = Runtime::new(RuntimeConfig {
        workers: Some(0),
        ..RuntimeConfig::default()
    });
    assert_eq!(none.workers(), 0);
    assert_eq!(none.job_threads(100, 8), 1);
    check_all_once(&none, 100, 8);
}

#[test]
fn disjoint_output_chunks_with_borrowed_input() {
    let rt = two_workers();
    let input: Vec<u8> = (0..1_000_003u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let expected: Vec<u8> = input
        .iter()
        .map(|b| b.wrapping_mul(3).wrapping_add(1))
        .collect();
    for chunk_len in [1, 7, 4096, 65_536, 1_000_003, 2_000_000] {
        for nthreads in [0, 1, 2, 3] {
            let mut output = vec![0u8; input.len()];
            rt.for_each_chunk_mut(&mut output, chunk_len, nthreads, |i, out| {
                let src = &input[i * chunk_len..i * chunk_len + out.len()];
                for (o, s) in out.iter_mut().zip(src) {
                    *o = s.wrapping_mul(3).wrapping_add(1);
                }
                Ok(())
            })
            .unwrap();
            assert!(
                output == expected,
                "chunk_len {chunk_len}, nthreads {nthreads}"
            );
        }
    }
    let mut empty: Vec<u8> = Vec::new();
    rt.for_each_chunk_mut(&mut empty, 0, 2, |_, _| Ok(()))
        .unwrap();
    let mut some = vec![0u8; 4];
    assert!(matches!(
        rt.for_each_chunk_mut(&mut some, 0, 2, |_, _| Ok(())),
        Err(Error::OutOfRange {
            what: "chunk_len",
            value: 0,
            ..
        })
    ));
}

#[test]
fn map_index_keeps_order() {
    let rt = two_workers();
    for nthreads in [1, 2, 3] {
        let squares = rt.map_index(1000, nthreads, |i| Ok(i * i)).unwrap();
        assert_eq!(squares, (0..1000).map(|i| i * i).collect::<Vec<_>>());
    }
    assert!(rt.map_index(0, 3, Ok::<usize, Error>).unwrap().is_empty());
}

#[test]
fn per_thread_state_is_made_once_per_thread() {
    let rt = two_workers();
    let inits = AtomicUsize::new(0);
    let total = AtomicUsize::new(0);
    rt.for_each_index_init(
        500,
        3,
        || {
            inits.fetch_add(1, Ordering::Relaxed);
            vec![0u8; 1024] // scratch
        },
        |scratch, i| {
            scratch[i % 1024] = 1;
            total.fetch_add(1, Ordering::Relaxed);
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(total.load(Ordering::Relaxed), 500);
    let inits = inits.load(Ordering::Relaxed);
    assert!((1..=3).contains(&inits), "{inits} inits");
}

#[test]
fn lowest_index_error_is_returned() {
    let rt = two_workers();
    for nthreads in [1, 2, 3] {
        let ran = AtomicUsize::new(0);
        let result = rt.for_each_index(1000, nthreads, |i| {
            ran.fetch_add(1, Ordering::Relaxed);
            if i == 5 || i == 17 || i == 900 {
                return Err(Error::InvalidIndex {
                    what: "task",
                    index: i as i64,
                    len: 1000,
                });
            }
            Ok(())
        });
        assert_eq!(
            result,
            Err(Error::InvalidIndex {
                what: "task",
                index: 5,
                len: 1000
            }),
            "nthreads {nthreads}"
        );
        // Cancelled: most of the 1000 tasks never ran.
        assert!(ran.load(Ordering::Relaxed) < 1000);
    }
}

#[test]
fn panic_reaches_the_caller_and_runtime_survives() {
    let rt = two_workers();
    for nthreads in [1, 2, 3] {
        let caught = panic::catch_unwind(AssertUnwindSafe(|| {
            rt.for_each_index(200, nthreads, |i| {
                if i % 50 == 7 {
                    panic!("task {i} exploded");
                }
                std::thread::sleep(Duration::from_micros(50));
                Ok(())
            })
        }));
        let payload = caught.expect_err("the panic must reach the caller");
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_string()))
            .unwrap_or_default();
        assert!(message.contains("exploded"), "{message}");
        // Same runtime, next job: everything runs.
        check_all_once(&rt, 1000, 3);
    }
}

#[test]
fn nested_jobs_do_not_deadlock() {
    let rt = two_workers();
    let cells: Vec<AtomicU32> = (0..64 * 64).map(|_| AtomicU32::new(0)).collect();
    rt.for_each_index(64, 3, |i| {
        rt.for_each_index(64, 3, |j| {
            cells[i * 64 + j].fetch_add(1, Ordering::Relaxed);
            Ok(())
        })
    })
    .unwrap();
    assert!(cells.iter().all(|c| c.load(Ordering::Relaxed) == 1));
}

/// Spawned tasks run on the workers, to their end, nested jobs included; a panicking task
/// leaves its worker alive; hundreds of queued tasks add no thread.
#[test]
fn spawned_tasks_run_on_the_workers() {
    let rt = Arc::new(two_workers());
    let (tx, rx) = std::sync::mpsc::channel();
    rt.spawn(|| panic!("a task that fails"));
    for t in 0..300u64 {
        let (tx, pool) = (tx.clone(), Arc::clone(&rt));
        rt.spawn(move || {
            let on_worker = pool.current_worker().is_some();
            let input: Vec<u64> = (0..20_000).map(|i| i * 3 + t).collect();
            let mut out = vec![0u64; input.len()];
            pool.for_each_chunk_mut(&mut out, 1000, 0, |i, o| {
                for (o, x) in o.iter_mut().zip(&input[i * 1000..]) {
                    *o = x + 1;
                }
                Ok(())
            })
            .unwrap();
            let right = out.iter().zip(&input).all(|(o, x)| *o == x + 1);
            tx.send((t, on_worker && right)).unwrap();
        });
    }
    drop(tx);
    let mut seen: Vec<(u64, bool)> = rx.iter().collect();
    seen.sort_unstable();
    assert_eq!(seen.len(), 300);
    assert!(seen
        .iter()
        .enumerate()
        .all(|(i, &(t, ok))| t == i as u64 && ok));
}

/// Without workers (workers: 0) a spawned task runs on the caller before `spawn` returns.
#[test]
fn spawn_without_workers_runs_inline() {
    let rt = Runtime::new(RuntimeConfig {
        workers: Some(0),
        ..RuntimeConfig::default()
    });
    let ran = Arc::new(AtomicBool::new(false));
    let r = Arc::clone(&ran);
    let caller = std::thread::current().id();
    rt.spawn(move || r.store(std::thread::current().id() == caller, Ordering::SeqCst));
    assert!(ran.load(Ordering::SeqCst));
}

#[test]
fn nthreads_changes_between_calls() {
    let rt = Arc::new(two_workers());
    let stop = Arc::new(AtomicBool::new(false));
    // One thread keeps changing the default while others run jobs with it.
    let changer = {
        let (rt, stop) = (Arc::clone(&rt), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut k = 0;
            while !stop.load(Ordering::Relaxed) {
                rt.set_nthreads(k % 5);
                k += 1;
                std::thread::yield_now();
            }
        })
    };
    let runners: Vec<_> = (0..3)
        .map(|t| {
            let rt = Arc::clone(&rt);
            std::thread::spawn(move || {
                for round in 0..300 {
                    let nthreads = if round % 2 == 0 { 0 } else { (round + t) % 6 };
                    check_all_once(&rt, 1 + round % 37, nthreads);
                }
            })
        })
        .collect();
    for r in runners {
        r.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    changer.join().unwrap();
    rt.set_nthreads(0);
    assert_eq!(rt.nthreads(), 1);
}

/// `(worker index, CPUs in the thread's affinity mask)` for tasks that ran on workers.
fn worker_affinities(rt: &Runtime) -> Vec<(usize, usize)> {
    let seen = Mutex::new(Vec::new());
    let threads = rt.workers() + 1;
    let arrived = AtomicUsize::new(0);
    rt.for_each_index(4 * threads, threads, |_| {
        // The first tasks wait for one another, so every worker has to take one.
        arrived.fetch_add(1, Ordering::SeqCst);
        let start = Instant::now();
        while arrived.load(Ordering::SeqCst) < threads && start.elapsed() < Duration::from_secs(10)
        {
            std::thread::yield_now();
        }
        if let Some(w) = rt.current_worker() {
            let cpus = core_affinity::get_core_ids().map_or(0, |ids| ids.len());
            seen.lock().unwrap().push((w, cpus));
        }
        Ok(())
    })
    .unwrap();
    seen.into_inner().unwrap()
}

#[test]
fn pinning_on_and_off() {
    let allowed = core_affinity::get_core_ids().map_or(0, |ids| ids.len());
    let off = Runtime::new(RuntimeConfig {
        workers: Some(2),
        pin: Some(false),
        ..RuntimeConfig::default()
    });
    assert!(!off.pinned());
    let seen = worker_affinities(&off);
    assert!(
        seen.iter().any(|&(w, _)| w == 0) && seen.iter().any(|&(w, _)| w == 1),
        "{seen:?}"
    );
    assert!(seen.iter().all(|&(_, cpus)| cpus == allowed), "{seen:?}");

    let on = Runtime::new(RuntimeConfig {
        pin: Some(true),
        ..RuntimeConfig::default()
    });
    let seen = worker_affinities(&on);
    assert!(!seen.is_empty(), "no worker joined");
    if on.pinned() {
        assert!(seen.iter().all(|&(_, cpus)| cpus == 1), "{seen:?}");
    }
    assert!(on.current_worker().is_none());
}

#[test]
fn runtimes_start_and_stop() {
    for workers in [0, 1, 2, 5] {
        let rt = Runtime::new(RuntimeConfig {
            workers: Some(workers),
            spin: Some(Duration::ZERO),
            ..RuntimeConfig::default()
        });
        assert_eq!(rt.workers(), workers);
        check_all_once(&rt, 100, 0);
        drop(rt); // joins the workers; must not hang
    }
}

#[test]
fn system_info_prints() {
    let info = SystemInfo::of(&two_workers());
    let text = info.to_string();
    for key in [
        "cores:",
        "workers:",
        "L1d:",
        "L2:",
        "L3:",
        "chunk size:",
        "block size:",
    ] {
        assert!(text.contains(key), "{text}");
    }
    assert_eq!(info.workers, 2);
    assert!(info.physical_cores >= 1);
}

#[test]
fn small_jobs_stay_inline() {
    assert_eq!(parallel_nthreads(0, 8), 1);
    assert_eq!(parallel_nthreads(MIN_PARALLEL_BYTES - 1, 8), 1);
    assert_eq!(parallel_nthreads(MIN_PARALLEL_BYTES, 8), 2);
    assert_eq!(parallel_nthreads(MIN_PARALLEL_BYTES * 100, 3), 3);
    assert_eq!(parallel_nthreads(MIN_PARALLEL_BYTES * 100, 0), 1);
    // A one-thread job runs on the caller, never on a worker.
    let rt = two_workers();
    let caller = std::thread::current().id();
    rt.for_each_index(50, 1, |_| {
        assert_eq!(std::thread::current().id(), caller);
        Ok(())
    })
    .unwrap();
}

// ---------------------------------------------------------------------------------------------
// Child-process tests: the environment and the thread count are per process, so these run the
// test binary again with `STRATA_SCHED_CHILD` set, on one test thread.

fn run_child(mode: &str, envs: &[(&str, &str)]) {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args([
        "--exact",
        "child_process_entry",
        "--ignored",
        "--test-threads=1",
        "--nocapture",
    ])
    .env("STRATA_SCHED_CHILD", mode)
    .env_remove("STRATA_NTHREADS")
    .env_remove("BLOSC_NTHREADS")
    .env_remove("STRATA_PIN");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child {mode} failed:\n{text}");
    assert!(
        text.contains(&format!("child {mode} ok")),
        "child {mode} did not run:\n{text}"
    );
}

#[cfg(target_os = "linux")]
fn task_count() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, Iterator::count)
}

#[test]
#[ignore = "runs only as a child process of the tests below"]
fn child_process_entry() {
    let Ok(mode) = std::env::var("STRATA_SCHED_CHILD") else {
        eprintln!("skipped: not started by a scheduler test (STRATA_SCHED_CHILD is not set)");
        return;
    };
    match mode.as_str() {
        "env-pin-off" => {
            let rt = Runtime::global();
            assert!(!rt.pinned());
            assert_eq!(rt.nthreads(), 3);
            assert_eq!(rt.topology().l2.bytes, 512 * 1024);
            assert_eq!(
                rt.topology().l2.source,
                strata::scheduler::topology::Source::Env
            );
            check_all_once(&rt, 100, 0);
        }
        "env-blosc" => {
            let rt = Runtime::global();
            assert_eq!(rt.nthreads(), 2);
        }
        "configure" => {
            let rt = Runtime::configure_global(RuntimeConfig {
                workers: Some(1),
                nthreads: Some(2),
                ..RuntimeConfig::default()
            })
            .unwrap();
            assert_eq!(rt.workers(), 1);
            assert!(Arc::ptr_eq(&rt, &Runtime::global()));
            assert!(Runtime::configure_global(RuntimeConfig::default()).is_err());
        }
        #[cfg(target_os = "linux")]
        "thread-budget" => thread_budget(),
        other => panic!("unknown child mode {other}"),
    }
    println!("child {mode} ok");
}

/// 8 application threads share the global runtime on this machine's cores; the process never
/// has more than baseline + workers + 8 threads, and every output is right.
#[cfg(target_os = "linux")]
fn thread_budget() {
    let baseline = task_count();
    let rt = Runtime::global();
    let cores = rt.cores().clone();
    assert!(
        rt.workers() <= cores.physical.max(1),
        "{} workers for {cores:?}",
        rt.workers()
    );
    let max_seen = AtomicUsize::new(task_count());
    std::thread::scope(|s| {
        for t in 0..8 {
            let (rt, max_seen) = (&rt, &max_seen);
            s.spawn(move || {
                let input: Vec<u32> = (0..100_000).map(|i| i * 7 + t).collect();
                for round in 0..150 {
                    let mut out = vec![0u32; input.len()];
                    let block = 1000 + 97 * (round % 13);
                    rt.for_each_chunk_mut(&mut out, block, round % 5, |i, o| {
                        for (o, x) in o.iter_mut().zip(&input[i * block..]) {
                            *o = x ^ 0x5a5a;
                        }
                        Ok(())
                    })
                    .unwrap();
                    assert!(out.iter().zip(&input).all(|(o, x)| *o == x ^ 0x5a5a));
                    max_seen.fetch_max(task_count(), Ordering::Relaxed);
                }
            });
        }
    });
    let max_seen = max_seen.into_inner();
    println!(
        "threads: baseline {baseline}, workers {}, max seen {max_seen}",
        rt.workers()
    );
    assert!(
        max_seen <= baseline + rt.workers() + 8,
        "{max_seen} threads"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn eight_app_threads_share_the_workers() {
    run_child("thread-budget", &[]);
}

#[test]
fn environment_configures_the_global_runtime() {
    run_child(
        "env-pin-off",
        &[
            ("STRATA_PIN", "0"),
            ("STRATA_NTHREADS", "3"),
            ("BLOSC_NTHREADS", "7"),
            ("STRATA_L2", "512K"),
        ],
    );
    run_child("env-blosc", &[("BLOSC_NTHREADS", "2")]);
    run_child("configure", &[]);
}

// ---------------------------------------------------------------------------------------------

/// A forked child gets a fresh global runtime and can run jobs on it, and on the runtimes it
/// inherited, without hanging; the parent waits at most 60 s.
#[cfg(unix)]
#[test]
fn fork_child_gets_a_fresh_runtime() {
    let parent_rt = Runtime::global();
    check_all_once(&parent_rt, 1000, 0);
    let explicit = two_workers();
    // Keep the parent's workers busy while forking.
    let stop = Arc::new(AtomicBool::new(false));
    let busy = {
        let (rt, stop) = (Arc::clone(&parent_rt), Arc::clone(&stop));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                check_all_once(&rt, 64, 0);
            }
        })
    };
    std::thread::sleep(Duration::from_millis(20));
    for _ in 0..3 {
        // SAFETY: the child only runs Strata code that allocates and spawns threads (fine with
        // glibc after fork) and leaves with `_exit`, never returning into the test harness.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let code = fork_child(&parent_rt, &explicit);
            // SAFETY: `_exit` ends the child at once, without running the parent's atexit
            // handlers or touching the harness's state.
            unsafe { libc::_exit(code) };
        }
        let status = wait_with_timeout(pid, Duration::from_secs(60));
        assert_eq!(status, Some(0), "child failed or hung (status {status:?})");
    }
    stop.store(true, Ordering::Relaxed);
    busy.join().unwrap();
    check_all_once(&parent_rt, 1000, 0);
}

#[cfg(unix)]
fn fork_child(parent_rt: &Arc<Runtime>, explicit: &Runtime) -> i32 {
    let rt = Runtime::global();
    if Arc::ptr_eq(&rt, parent_rt) {
        return 2;
    }
    if rt.workers() == 0 {
        return 3;
    }
    let sum = AtomicUsize::new(0);
    let job = |r: &Runtime| {
        sum.store(0, Ordering::Relaxed);
        r.for_each_index(10_000, 0, |i| {
            sum.fetch_add(i, Ordering::Relaxed);
            Ok(())
        })
        .is_ok()
            && sum.load(Ordering::Relaxed) == 10_000 * 9_999 / 2
    };
    // The fresh runtime, then the inherited ones (their workers are gone: jobs run inline).
    if !job(&rt) || !job(parent_rt) || !job(explicit) {
        return 4;
    }
    // Later calls in the child return the same fresh runtime.
    if !Arc::ptr_eq(&rt, &Runtime::global()) {
        return 5;
    }
    0
}

#[cfg(unix)]
fn wait_with_timeout(pid: libc::pid_t, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: plain syscall on our own child with a valid out-pointer.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if done == pid {
            return libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
        }
        if start.elapsed() > limit {
            // SAFETY: killing and reaping our own hung child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

// ---------------------------------------------------------------------------------------------

/// Measures what handing tasks to a worker costs, and where splitting real work pays off.
/// Run in release: `cargo test --release --test scheduler -- --ignored --nocapture handoff_cost`.
/// Each figure is the best of 7 trials (the least disturbed by other load on the machine).
#[test]
#[ignore = "measurement; run in release with --nocapture"]
fn handoff_cost() {
    let rt = Runtime::new(RuntimeConfig::default());
    println!("{}", SystemInfo::of(&rt));
    // Best over 7 trials of the mean time per call of `job`, optionally after an idle pause
    // (workers asleep: the cold case).
    let best = |reps: u32, pause: Option<Duration>, job: &mut dyn FnMut()| {
        (0..7)
            .map(|_| {
                let mut total = Duration::ZERO;
                for _ in 0..reps {
                    if let Some(p) = pause {
                        std::thread::sleep(p);
                    }
                    let t = Instant::now();
                    job();
                    total += t.elapsed();
                }
                total / reps
            })
            .min()
            .unwrap()
    };
    let rt = &rt;
    let empty = |nthreads: usize| move || rt.for_each_index(2, nthreads, |_| Ok(())).unwrap();
    let inline = best(100_000, None, &mut empty(1));
    let warm = best(100_000, None, &mut empty(2));
    let cold = best(200, Some(Duration::from_millis(2)), &mut empty(2));
    println!("empty 2-task job: inline {inline:?}, 2 threads back-to-back {warm:?}, 2 threads after 2 ms idle {cold:?}");
    let getpid = best(1_000_000, None, &mut || {
        std::hint::black_box(std::process::id());
    });
    println!("getpid: {getpid:?}");

    // Real work on `size` bytes, as 2 halves on 1 vs 2 threads: LZ4 compression (slow side of
    // the pipeline) and LZ4 decompression (fast side).
    let data: Vec<u8> = (0..4u32 << 20)
        .map(|i| ((i / 7) ^ (i >> 11)) as u8)
        .collect();
    println!(
        "{:>8} | {:>10} {:>10} {:>10} {:>6} {:>6} | {:>10} {:>10} {:>10} {:>6} {:>6}",
        "bytes",
        "c inline",
        "c warm",
        "c cold",
        "warm×",
        "cold×",
        "d inline",
        "d warm",
        "d cold",
        "warm×",
        "cold×"
    );
    for size in [
        4usize << 10,
        8 << 10,
        16 << 10,
        32 << 10,
        64 << 10,
        128 << 10,
        256 << 10,
        1 << 20,
    ] {
        let half = size / 2;
        let src = &data[..size];
        let compressed: Vec<Vec<u8>> = src
            .chunks(half)
            .map(|c| lz4::block::compress(c, None, false).expect("lz4 compresses"))
            .collect();
        let mut cbuf = vec![vec![0u8; half + half / 255 + 16]; 2];
        let mut dbuf = vec![vec![0u8; half]; 2];
        let reps = ((100u32 << 20) / size as u32 / 4).max(50);
        let mut row = Vec::new();
        for nthreads_pause in [(1, None), (2, None), (2, Some(Duration::from_millis(1)))] {
            let (nthreads, pause) = nthreads_pause;
            let r = if pause.is_some() { reps.min(200) } else { reps };
            row.push(best(r, pause, &mut || {
                rt.for_each_chunk_mut(&mut cbuf, 1, nthreads, |i, out| {
                    lz4::block::compress_to_buffer(
                        &src[i * half..(i + 1) * half],
                        None,
                        false,
                        &mut out[0],
                    )
                    .map(drop)
                    .map_err(|e| Error::Codec {
                        id: 1,
                        message: e.to_string(),
                    })
                })
                .unwrap();
            }));
        }
        for (nthreads, pause) in [(1, None), (2, None), (2, Some(Duration::from_millis(1)))] {
            let r = if pause.is_some() { reps.min(200) } else { reps };
            row.push(best(r, pause, &mut || {
                rt.for_each_chunk_mut(&mut dbuf, 1, nthreads, |i, out| {
                    lz4::block::decompress_to_buffer(&compressed[i], Some(half as i32), &mut out[0])
                        .map(drop)
                        .map_err(|e| Error::Codec {
                            id: 1,
                            message: e.to_string(),
                        })
                })
                .unwrap();
            }));
        }
        let x = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
        println!(
            "{size:>8} | {:>10?} {:>10?} {:>10?} {:>6.2} {:>6.2} | {:>10?} {:>10?} {:>10?} {:>6.2} {:>6.2}",
            row[0], row[1], row[2], x(row[0], row[1]), x(row[0], row[2]),
            row[3], row[4], row[5], x(row[3], row[4]), x(row[3], row[5])
        );
    }
}
