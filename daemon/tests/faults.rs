//! Faults: a client that disconnects mid-response, a slow client, a file truncated or
//! replaced while it is being served, a writer changing a file between reads, and `kill -9`
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
    // The truncated dataset is refused cleanly; the others are served.
    let r = d.get("/v1/meta/@public/big.b2nd");
    assert_eq!(
        (r.status, r.detail().as_str()),
        (500, "the dataset could not be read")
    );
    check_others(&d);
    let r = d.get("/api/fetch/@public/big.b2nd?slice_=0:3,0:3");
    assert_eq!(r.status, 500);
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
