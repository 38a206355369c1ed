//! Load: 64 concurrent keep-alive clients on loopback for `STRATAD_LOAD_SECONDS` (30 by
//! default) of mixed requests (metadata, stored chunks round-robin, small slices as cframes,
//! raw slices, hyperplanes, byte ranges of the stored file), every body checked against what
//! the library reads from the same files. Meanwhile the daemon's thread count is sampled:
//! it never exceeds the cores plus a fixed few (the I/O threads, the main thread and one
//! blocking thread), whatever the number of clients; its peak RSS stays under the block
//! cache's size plus a stated overhead. Then 64 clients read one hyperplane at once: each
//! block it touches is decompressed once (the cache's misses), the rest are hits.

mod common;

use common::{data_root, floats, make_noise, Conn, Daemon};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use strata::ndarray::{NdArray, OpenMode};
use strata::schunk::SChunk;

/// Clients.
const CLIENTS: usize = 64;
/// The block cache of the daemon under load (smaller than the data read: it fills and
/// evicts).
const CACHE_MIB: u64 = 8;
/// The stored-chunk cache of the daemon under load.
const CHUNK_CACHE_MIB: u64 = 4;
/// What the daemon may hold besides the caches: open handles, in-flight bodies (64 clients),
/// buffers of the I/O runtime, the allocator's slack.
const OVERHEAD_MIB: u64 = 64;
/// Threads besides the pool's workers: the main thread, the I/O threads (2) and one
/// blocking thread.
const FIXED_THREADS: usize = 4;

fn grid(i: usize, j: usize) -> f32 {
    (i * 300 + j) as f32 * 0.5
}

#[test]
fn sixty_four_clients_mixed_requests() {
    let secs: u64 = std::env::var("STRATAD_LOAD_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let root = data_root();
    let noise = Arc::new(make_noise(
        &root.path().join("noise.b2nd"),
        &[2048, 2048],
        &[256, 256],
        &[32, 64],
    ));
    let cache = format!("{CACHE_MIB}M");
    let d = Daemon::start(&[
        "--root",
        &format!("@public={}", root.path().display()),
        "--cache-bytes",
        &cache,
        "--chunk-cache-bytes",
        &format!("{CHUNK_CACHE_MIB}M"),
    ]);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let chunks: Arc<Vec<Vec<u8>>> = {
        let s = SChunk::open(root.path().join("grid.b2nd"), OpenMode::Read).unwrap();
        Arc::new((0..s.nchunks()).map(|n| s.chunk(n).unwrap()).collect())
    };
    let file = Arc::new(std::fs::read(root.path().join("noise.b2nd")).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let answers = Arc::new(AtomicUsize::new(0));
    let latencies = Arc::new(Mutex::new(Vec::<u32>::new()));
    let pid = d.child.id();
    let monitor = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut max = 0;
            while !stop.load(Ordering::Relaxed) {
                let n = std::fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count);
                max = max.max(n);
                std::thread::sleep(Duration::from_millis(20));
            }
            max
        })
    };
    let addr = d.addr;
    let deadline = Instant::now() + Duration::from_secs(secs);
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (chunks, file, noise, answers, latencies) = (
                Arc::clone(&chunks),
                Arc::clone(&file),
                Arc::clone(&noise),
                Arc::clone(&answers),
                Arc::clone(&latencies),
            );
            std::thread::spawn(move || {
                let mut conn = Conn::open(addr);
                let mut lat = Vec::new();
                let mut k = c * 7919;
                while Instant::now() < deadline {
                    k += 1;
                    let t = Instant::now();
                    match k % 6 {
                        0 => {
                            let r = conn.get("/api/info/@public/grid.b2nd", "").unwrap();
                            let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
                            assert_eq!(v["shape"], serde_json::json!([200, 300]));
                        }
                        1 => {
                            let n = k % chunks.len();
                            let r = conn
                                .get(&format!("/api/chunk/@public/grid.b2nd?nchunk={n}"), "")
                                .unwrap();
                            assert!(r.body == chunks[n], "chunk {n}");
                        }
                        2 => {
                            let (i, j) = (k * 13 % 190, k * 31 % 290);
                            let r = conn
                                .get(
                                    &format!(
                                        "/api/fetch/@public/grid.b2nd?slice_={i}%3A{}%2C+{j}%3A{}",
                                        i + 10,
                                        j + 10
                                    ),
                                    "",
                                )
                                .unwrap();
                            assert_eq!(r.status, 200);
                            let a = NdArray::from_cframe(r.body).unwrap();
                            assert_eq!(a.shape(), [10, 10]);
                            let want: Vec<f32> = (i..i + 10)
                                .flat_map(|a| (j..j + 10).map(move |b| grid(a, b)))
                                .collect();
                            assert_eq!(floats(&a.to_vec().unwrap()), want);
                        }
                        3 => {
                            let (i, j) = (k * 17 % 2020, k * 29 % 2020);
                            let r = conn
                                .get(
                                    &format!(
                                        "/v1/slice/@public/noise.b2nd?sel={i}:{},{j}:{}",
                                        i + 20,
                                        j + 20
                                    ),
                                    "",
                                )
                                .unwrap();
                            let want: Vec<u8> = (i..i + 20)
                                .flat_map(|a| {
                                    noise[(a * 2048 + j) * 4..(a * 2048 + j + 20) * 4].to_vec()
                                })
                                .collect();
                            assert!(r.body == want, "noise slice {i},{j}");
                        }
                        4 => {
                            let j = k % 300;
                            let r = conn
                                .get(&format!("/v1/slice/@public/grid.b2nd?sel=:,{j}"), "")
                                .unwrap();
                            let want: Vec<f32> = (0..200).map(|i| grid(i, j)).collect();
                            assert_eq!(floats(&r.body), want, "hyperplane {j}");
                        }
                        _ => {
                            let a = k * 4099 % (file.len() - 8192);
                            let r = conn
                                .get(
                                    "/v1/raw/@public/noise.b2nd",
                                    &format!("Range: bytes={a}-{}\r\n", a + 8191),
                                )
                                .unwrap();
                            assert_eq!(r.status, 206);
                            assert!(r.body[..] == file[a..a + 8192], "range at {a}");
                        }
                    }
                    lat.push(t.elapsed().as_micros() as u32);
                    answers.fetch_add(1, Ordering::Relaxed);
                }
                latencies.lock().unwrap().extend(lat);
            })
        })
        .collect();
    for c in clients {
        c.join()
            .expect("a client failed (wrong body, error or status)");
    }
    stop.store(true, Ordering::Relaxed);
    let max_threads = monitor.join().unwrap();
    let n = answers.load(Ordering::Relaxed);
    let mut lat = latencies.lock().unwrap().clone();
    lat.sort_unstable();
    let pct = |p: f64| lat[((lat.len() - 1) as f64 * p) as usize] as f64 / 1000.0;
    let hwm_mib = d.status_kb("VmHWM") / 1024;
    let workers = d.metric("stratad_pool_workers") as usize;
    let (cached, evicted) = (
        d.metric("stratad_cache_bytes"),
        d.metric("stratad_cache_evictions_total"),
    );
    let errors = d.metric("stratad_refused_total{reason=\"queue_full\"}")
        + d.metric("stratad_refused_total{reason=\"deadline\"}");
    eprintln!(
        "load: {CLIENTS} clients, {secs} s, {n} answers ({:.0}/s), latency p50 {:.2} ms p99 {:.2} ms; \
         threads max {max_threads} (cores {cores}, workers {workers}); peak RSS {hwm_mib} MiB \
         (cache {CACHE_MIB} MiB holding {:.1} MiB, {evicted} evictions)",
        n as f64 / secs as f64,
        pct(0.5),
        pct(0.99),
        cached / f64::from(1 << 20)
    );
    assert!(
        cached >= (CACHE_MIB << 19) as f64 && evicted > 0.0,
        "the cache never filled"
    );
    assert!(n as u64 >= secs * 100, "only {n} answers in {secs} s");
    assert_eq!(errors, 0.0, "refused requests under load");
    assert!(workers <= cores, "{workers} workers on {cores} cores");
    assert!(
        max_threads <= cores + FIXED_THREADS,
        "{max_threads} threads with {CLIENTS} clients on {cores} cores"
    );
    assert!(
        hwm_mib <= CACHE_MIB + CHUNK_CACHE_MIB + OVERHEAD_MIB,
        "peak RSS {hwm_mib} MiB over {CACHE_MIB} + {CHUNK_CACHE_MIB} + {OVERHEAD_MIB} MiB"
    );
}

#[test]
fn a_hyperplane_read_by_64_clients_decompresses_each_block_once() {
    let root = data_root();
    let d = Daemon::start(&["--root", &format!("@public={}", root.path().display())]);
    let addr = d.addr;
    let barrier = Arc::new(std::sync::Barrier::new(CLIENTS));
    let before = (
        d.metric("stratad_cache_misses_total"),
        d.metric("stratad_cache_hits_total"),
    );
    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let mut conn = Conn::open(addr);
                barrier.wait();
                let r = conn
                    .get("/v1/slice/@public/grid.b2nd?sel=:,77", "")
                    .unwrap();
                assert_eq!(r.status, 200);
                assert_eq!(
                    floats(&r.body),
                    (0..200).map(|i| grid(i, 77)).collect::<Vec<_>>()
                );
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    // Column 77 of (200, 300) in chunks of (64, 100), blocks of (16, 25): 4 + 4 + 4 + 1 blocks.
    let misses = d.metric("stratad_cache_misses_total") - before.0;
    let hits = d.metric("stratad_cache_hits_total") - before.1;
    assert_eq!((misses, hits), (13.0, 13.0 * (CLIENTS as f64 - 1.0)));
}
