//! Faults: a client that disconnects mid-response, a slow client, a file truncated or
//! replaced while it is being served, a writer changing a file between reads, files replaced
//! under readers while small caches evict their handles and blocks, and `kill -9`
//! of the daemon under load followed by a restart. Nothing served is wrong (a body is the
//! file's bytes, or stops short of them), the daemon keeps serving the other clients, and no
//! file is changed by the daemon.

mod common;

use common::{data_root, floats, make_f32, Conn, Daemon};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use strata::ndarray::{NdArray, OpenMode, Slice};

/// Checks a body.
type Check = Box<dyn Fn(&[u8]) -> bool>;

fn serve(root: &std::path::Path) -> Daemon {
    Daemon::start(&["--root", &format!("@public={}", root.display())])
}

/// A root holding `big.b2nd`, a file of several MiB (streamed in pieces).
fn big_root() -> (tempfile::TempDir, Vec<u8>) {
    let root = data_root();
    let p = root.path().join("big.b2nd");
    common::make_noise(&p, &[1536, 2048], &[512, 512], &[64, 128]);
    let bytes = std::fs::read(&p).unwrap();
    assert!(bytes.len() > 4 << 20, "{} bytes", bytes.len());
    (root, bytes)
}

/// Starts a GET of `target` and returns the stream after the head, and the body bytes
/// already read with it.
fn start_get(d: &Daemon, target: &str) -> (TcpStream, Vec<u8>, usize) {
    let mut s = TcpStream::connect(d.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(
        format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap();
    let mut buf = vec![0u8; 64 << 10];
    let mut got = Vec::new();
    loop {
        let n = s.read(&mut buf).unwrap();
        got.extend_from_slice(&buf[..n]);
        if let Some(p) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..p]).to_string();
            let len: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap();
            return (s, got[p + 4..].to_vec(), len);
        }
    }
}

fn check_others(d: &Daemon) {
    let t = Instant::now();
    let r = d.get("/v1/slice/@public/sub/line.b2nd?sel=10:13");
    assert_eq!(floats(&r.body), [5.0, 5.5, 6.0]);
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "another client waited {:?}",
        t.elapsed()
    );
}

#[test]
fn client_disconnecting_mid_response() {
    let (root, bytes) = big_root();
    let d = serve(root.path());
    for _ in 0..5 {
        let (s, got, len) = start_get(&d, "/v1/raw/@public/big.b2nd");
        assert_eq!(len, bytes.len());
        assert_eq!(&got[..], &bytes[..got.len()]);
        drop(s);
        check_others(&d);
    }
    // The work queue empties: nothing is left running for the clients that went away.
    let t = Instant::now();
    while d.metric("stratad_queue_tasks") > 0.0 && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(d.metric("stratad_queue_tasks"), 0.0);
    let full = d.get("/v1/raw/@public/big.b2nd");
    assert!(full.body == bytes);
}

#[test]
fn slow_client_gets_every_byte_and_blocks_nobody() {
    let (root, bytes) = big_root();
    let d = serve(root.path());
    let (mut s, mut got, len) = start_get(&d, "/v1/raw/@public/big.b2nd");
    let mut buf = vec![0u8; 16 << 10];
    let start = Instant::now();
    let mut checks = 0;
    while got.len() < len {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed after {} of {len} bytes", got.len());
        got.extend_from_slice(&buf[..n]);
        if start.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(5));
            if checks < 20 {
                check_others(&d);
                checks += 1;
            }
        }
    }
    assert!(got == bytes, "the slow client's body differs");
    assert_eq!(checks, 20);
}

#[test]
fn file_truncated_while_served() {
    let (root, bytes) = big_root();
    let d = serve(root.path());
    let path = root.path().join("big.b2nd");
    let (mut s, mut got, len) = start_get(&d, "/v1/raw/@public/big.b2nd");
    assert_eq!(len, bytes.len());
    // Cut the file (the same inode) to a quarter while its body is being sent.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(bytes.len() as u64 / 4)
        .unwrap();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    got.extend_from_slice(&rest);
    // Short, never wrong: every byte received is the file's.
    assert!(
        got.len() < len,
        "got all {} bytes of a truncated file",
        got.len()
    );
    assert!(
        got[..] == bytes[..got.len()],
        "a byte received is not the file's"
    );
    // The truncated dataset is refused cleanly as damaged; the others are served.
    let damaged = format!(
        "the dataset is damaged: invalid header: frame_len (at most the bytes stored) {} exceeds {}",
        bytes.len(),
        bytes.len() / 4
    );
    let r = d.get("/v1/meta/@public/big.b2nd");
    assert_eq!((r.status, r.detail()), (422, damaged.clone()));
    check_others(&d);
    let r = d.get("/api/fetch/@public/big.b2nd?slice_=0:3,0:3");
    assert_eq!((r.status, r.detail()), (422, damaged));
}

#[test]
fn file_replaced_while_served() {
    let (root, bytes) = big_root();
    let d = serve(root.path());
    let path = root.path().join("big.b2nd");
    let (mut s, mut got, len) = start_get(&d, "/v1/raw/@public/big.b2nd");
    let etag_before = d
        .get("/v1/meta/@public/big.b2nd")
        .header("etag")
        .unwrap()
        .to_owned();
    // Replace it by rename (what writers do): the old inode is still what is being sent.
    let tmp = root.path().join("new.tmp");
    make_f32(&tmp, &[100, 100], &[50, 50], &[10, 10]);
    let new_bytes = std::fs::read(&tmp).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).unwrap();
    got.extend_from_slice(&rest);
    assert_eq!(got.len(), len);
    assert!(got == bytes, "the body mixes two files");
    // The next requests see the new file, with a new ETag.
    let r = d.get("/v1/raw/@public/big.b2nd");
    assert!(r.body == new_bytes);
    assert_ne!(r.header("etag").unwrap(), etag_before);
    let m = d.get("/v1/meta/@public/big.b2nd");
    let v: serde_json::Value = serde_json::from_slice(&m.body).unwrap();
    assert_eq!(v["shape"], serde_json::json!([100, 100]));
}

#[test]
fn writer_changing_the_file_between_reads_is_never_served_stale() {
    let root = data_root();
    let d = serve(root.path());
    let path = root.path().join("grid.b2nd");
    let read = |sel: &str| {
        floats(
            &d.get(&format!("/v1/slice/@public/grid.b2nd?sel={sel}"))
                .body,
        )
    };
    let mut conn = Conn::open(d.addr);
    for round in 0..6u32 {
        let before = read("70:72,0:4");
        let etag = d
            .get("/v1/meta/@public/grid.b2nd")
            .header("etag")
            .unwrap()
            .to_owned();
        // Another process's writer updates those items in place (the same inode).
        let value = 1000.0 + round as f32;
        {
            let mut arr = NdArray::open(&path, OpenMode::ReadWrite).unwrap();
            let data: Vec<u8> = (0..8).flat_map(|_| value.to_le_bytes()).collect();
            arr.set_slice(&[Slice::range(70, 72), Slice::range(0, 4)], &data)
                .unwrap();
            arr.close().unwrap();
        }
        let after = read("70:72,0:4");
        assert_eq!(after, vec![value; 8], "round {round}: stale after a write");
        assert_ne!(after, before);
        let r = conn.get("/v1/meta/@public/grid.b2nd", "").unwrap();
        assert_ne!(
            r.header("etag").unwrap(),
            etag,
            "round {round}: the same ETag after a write"
        );
        // Items outside the write are unchanged.
        assert_eq!(
            read("73,0:2"),
            [(73 * 300) as f32 * 0.5, (73 * 300 + 1) as f32 * 0.5]
        );
    }
    // Growing the array (resize: chunks appended) is seen too.
    {
        let mut arr = NdArray::open(&path, OpenMode::ReadWrite).unwrap();
        arr.resize(&[260, 300]).unwrap();
        arr.close().unwrap();
    }
    let m = d.get("/v1/meta/@public/grid.b2nd");
    let v: serde_json::Value = serde_json::from_slice(&m.body).unwrap();
    assert_eq!(v["shape"], serde_json::json!([260, 300]));
    assert_eq!(read("259,0:2"), [0.0, 0.0]);
}

#[test]
fn kill_9_under_load_and_restart() {
    let root = data_root();
    let before: Vec<(String, Vec<u8>)> = ["grid.b2nd", "sub/line.b2nd"]
        .iter()
        .map(|p| (p.to_string(), std::fs::read(root.path().join(p)).unwrap()))
        .collect();
    let grid = before[0].1.clone();
    let mut d = serve(root.path());
    let addr = d.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let good = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..8)
        .map(|c| {
            let (stop, good, grid) = (Arc::clone(&stop), Arc::clone(&good), grid.clone());
            std::thread::spawn(move || {
                let mut wrong = 0;
                'outer: while !stop.load(Ordering::Relaxed) {
                    let Ok(mut conn) = Conn::try_open(addr) else {
                        break;
                    };
                    for k in 0..1000usize {
                        let (t, check): (String, Check) = if (k + c) % 2 == 0 {
                            let i = (k * 7 + c) % 200;
                            (
                                format!("/v1/slice/@public/grid.b2nd?sel={i},10:12"),
                                Box::new(move |b: &[u8]| {
                                    floats(b)
                                        == [
                                            (i * 300 + 10) as f32 * 0.5,
                                            (i * 300 + 11) as f32 * 0.5,
                                        ]
                                }),
                            )
                        } else {
                            let a = (k * 131) % (grid.len() - 100);
                            let g = grid[a..a + 100].to_vec();
                            (
                                format!("/v1/raw/@public/grid.b2nd\r\nRange: bytes={a}-{}", a + 99),
                                Box::new(move |b: &[u8]| b == &g[..]),
                            )
                        };
                        let (target, headers) = match t.split_once("\r\n") {
                            Some((t, h)) => (t.to_owned(), format!("{h}\r\n")),
                            None => (t, String::new()),
                        };
                        match conn.get(&target, &headers) {
                            Ok(r) if r.status == 200 || r.status == 206 => {
                                if check(&r.body) {
                                    good.fetch_add(1, Ordering::Relaxed);
                                } else {
                                    wrong += 1;
                                }
                            }
                            Ok(r) => panic!("status {} for {target}", r.status),
                            Err(_) => continue 'outer,
                        }
                        if stop.load(Ordering::Relaxed) {
                            break 'outer;
                        }
                    }
                }
                wrong
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    let served_before_kill = good.load(Ordering::Relaxed);
    assert!(
        served_before_kill > 50,
        "only {served_before_kill} answers under load"
    );
    // SAFETY: kill(2) of our own child.
    unsafe {
        libc::kill(d.child.id() as libc::pid_t, libc::SIGKILL);
    }
    let status = d.child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
    stop.store(true, Ordering::Relaxed);
    let wrong: usize = clients.into_iter().map(|c| c.join().unwrap()).sum();
    assert_eq!(wrong, 0, "wrong bodies under load");
    // The files are unchanged, and a restarted daemon serves them.
    for (p, b) in &before {
        assert!(
            std::fs::read(root.path().join(p)).unwrap() == *b,
            "{p} changed"
        );
    }
    let d2 = serve(root.path());
    assert_eq!(d2.get("/v1/raw/@public/grid.b2nd").body, grid);
    assert_eq!(
        floats(&d2.get("/v1/slice/@public/grid.b2nd?sel=1,2").body),
        [(302) as f32 * 0.5]
    );
}

/// Item `k` of version `v` of file `i`: the three are readable back from every item.
fn versioned(i: u32, v: u32, k: u32) -> u32 {
    (i << 24) | (v << 12) | (k & 0xfff)
}

/// Writes version `v` of file `i` (64 × 64 `<u4`) beside `path`, hands its bytes to `known`,
/// then renames it over `path` (atomic: a reader sees the old file or the new one).
fn replace_version(path: &std::path::Path, i: u32, v: u32, known: impl FnOnce(Vec<u8>)) {
    use strata::ndarray::{ArrayParams, Location};
    let data: Vec<u8> = (0..64 * 64u32)
        .flat_map(|k| versioned(i, v, k).to_le_bytes())
        .collect();
    let tmp = path.with_extension("tmp");
    let params = ArrayParams::from_dtype(&[64, 64], "<u4")
        .unwrap()
        .with_chunkshape(&[32, 32])
        .with_blockshape(&[16, 16])
        .with_overwrite(true);
    NdArray::from_buffer(&params, &Location::File(tmp.clone()), &data)
        .unwrap()
        .close()
        .unwrap();
    known(std::fs::read(&tmp).unwrap());
    std::fs::rename(&tmp, path).unwrap();
}

/// Caches at scale: 48 files, a handle cache of 8 and caches of a few blocks (so handles
/// and blocks are evicted and reopened all the time), six readers and a writer replacing
/// random files for 8 s. Every slice is all of one version of its file, never older than
/// the version whose replacement finished before the request was sent, and every
/// whole-file fetch is byte for byte one such version's file.
#[test]
fn files_replaced_under_small_caches_are_never_served_stale_or_mixed() {
    const FILES: u32 = 48;
    let root = tempfile::tempdir().unwrap();
    let path = |i: u32| root.path().join(format!("f{i}.b2nd"));
    let versions: Arc<Vec<std::sync::atomic::AtomicU32>> =
        Arc::new((0..FILES).map(|_| 0.into()).collect());
    let files = Arc::new(std::sync::Mutex::new(std::collections::HashMap::new()));
    for i in 0..FILES {
        replace_version(&path(i), i, 0, |b| {
            files.lock().unwrap().insert((i, 0u32), b);
        });
    }
    let d = Daemon::start(&[
        "--root",
        &format!("@public={}", root.path().display()),
        "--handles",
        "8",
        "--cache-bytes",
        "64K",
        "--chunk-cache-bytes",
        "32K",
    ]);
    let addr = d.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let checked = Arc::new(AtomicUsize::new(0));
    let readers: Vec<_> = (0..6u64)
        .map(|t| {
            let (versions, files, stop, checked) = (
                Arc::clone(&versions),
                Arc::clone(&files),
                Arc::clone(&stop),
                Arc::clone(&checked),
            );
            std::thread::spawn(move || {
                let mut x = 0x2545_f491_4f6c_dd1du64 ^ (t + 1).wrapping_mul(0x9e37_79b9);
                let mut next = move |n: u64| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % n
                };
                let mut conn = Conn::open(addr);
                while !stop.load(Ordering::Relaxed) {
                    let i = next(u64::from(FILES)) as u32;
                    let floor = versions[i as usize].load(Ordering::SeqCst);
                    if next(8) == 0 {
                        let r = conn
                            .get(&format!("/api/fetch/@public/f{i}.b2nd"), "")
                            .unwrap();
                        assert_eq!(r.status, 200);
                        let known = files.lock().unwrap();
                        let v = (0..)
                            .take_while(|v| known.contains_key(&(i, *v)))
                            .find(|v| known[&(i, *v)] == r.body);
                        assert!(
                            v.is_some_and(|v| v >= floor),
                            "file {i}: the whole fetch is version {v:?}, after {floor}"
                        );
                    } else {
                        let (r0, c0) = (next(64) as u32, next(64) as u32);
                        let (r1, c1) = (r0 + 1 + next(u64::from(64 - r0)) as u32, c0 + 1);
                        let r = conn
                            .get(
                                &format!("/v1/slice/@public/f{i}.b2nd?sel={r0}:{r1},{c0}:{c1}"),
                                "",
                            )
                            .unwrap();
                        assert_eq!(r.status, 200, "{}", r.text());
                        let items: Vec<u32> = r
                            .body
                            .chunks_exact(4)
                            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
                            .collect();
                        assert_eq!(items.len(), (r1 - r0) as usize);
                        let v = (items[0] >> 12) & 0xfff;
                        assert!(v >= floor, "file {i}: version {v} served after {floor}");
                        for (n, &item) in items.iter().enumerate() {
                            let k = (r0 + n as u32) * 64 + c0;
                            assert_eq!(item, versioned(i, v, k), "file {i}: a mixed slice");
                        }
                    }
                    checked.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let start = Instant::now();
    let mut x = 0x1234_5678_9abc_def1u64;
    let mut replaced = 0;
    while start.elapsed() < Duration::from_secs(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let i = (x % u64::from(FILES)) as u32;
        let v = versions[i as usize].load(Ordering::SeqCst) + 1;
        replace_version(&path(i), i, v, |b| {
            files.lock().unwrap().insert((i, v), b);
        });
        versions[i as usize].store(v, Ordering::SeqCst);
        replaced += 1;
        std::thread::sleep(Duration::from_millis(5));
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().unwrap();
    }
    let n = checked.load(Ordering::Relaxed);
    eprintln!("{n} reads checked, {replaced} files replaced");
    assert!(
        n > 300 && replaced > 30,
        "{n} reads checked, {replaced} files replaced"
    );
    assert!(d.metric("stratad_cache_evictions_total ") > 0.0);
}

/// A sparse frame of 40 `<f4` items (chunks of 10) at `dir`, item `i` worth `i * 0.5 + base`.
fn make_sparse(dir: &std::path::Path, base: f32) {
    let params = strata::ndarray::ArrayParams::from_dtype(&[40], "<f4")
        .unwrap()
        .with_chunkshape(&[10])
        .with_blockshape(&[5]);
    let data: Vec<u8> = (0..40)
        .flat_map(|i| (i as f32 * 0.5 + base).to_le_bytes())
        .collect();
    NdArray::from_buffer(
        &params,
        &strata::ndarray::Location::Dir(dir.to_path_buf()),
        &data,
    )
    .unwrap()
    .close()
    .unwrap();
}

#[test]
fn a_sparse_chunk_file_replaced_by_a_symlink_out_of_the_root_after_it_was_served_is_not_read() {
    let root = data_root();
    let outside = tempfile::tempdir().unwrap();
    let r = root.path();
    make_sparse(&r.join("sp.b2nd"), 0.0);
    // A secret outside the root, shaped like a chunk of the dataset (so that it decodes).
    make_sparse(&outside.path().join("secret.b2nd"), 1000.0);
    let secret = std::fs::read(outside.path().join("secret.b2nd/00000001.chunk")).unwrap();
    let d = serve(r);
    // The dataset is opened and its handle kept.
    let s = d.get("/v1/slice/@public/sp.b2nd?sel=0:2");
    assert_eq!((s.status, floats(&s.body)), (200, vec![0.0, 0.5]));
    assert_eq!(d.get("/api/chunk/@public/sp.b2nd?nchunk=0").status, 200);
    // Chunk 1's file replaced by a symlink to the secret.
    let chunk1 = r.join("sp.b2nd/00000001.chunk");
    std::fs::remove_file(&chunk1).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.b2nd/00000001.chunk"), &chunk1).unwrap();
    for t in [
        "/api/chunk/@public/sp.b2nd?nchunk=1",
        "/v1/chunk/@public/sp.b2nd/1",
        "/v1/slice/@public/sp.b2nd?sel=10:12",
        "/api/fetch/@public/sp.b2nd?slice_=10:12",
        "/api/download/@public/sp.b2nd",
    ] {
        let a = d.get(t);
        assert_eq!((a.status, a.detail().as_str()), (404, "Not Found"), "{t}");
        assert!(!a.body.windows(secret.len()).any(|w| w == secret), "{t}");
    }
    // Put back as a regular file, it is served again.
    std::fs::remove_file(&chunk1).unwrap();
    make_sparse(&outside.path().join("again.b2nd"), 0.0);
    std::fs::copy(outside.path().join("again.b2nd/00000001.chunk"), &chunk1).unwrap();
    let s = d.get("/v1/slice/@public/sp.b2nd?sel=10:12");
    assert_eq!((s.status, floats(&s.body)), (200, vec![5.0, 5.5]));
}
