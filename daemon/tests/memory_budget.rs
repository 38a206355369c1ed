//! The memory budget of computed answers (`--memory-budget`): an answer is charged from
//! before it is made until its body is sent or dropped; one that does not fit beside the
//! others gets 503 with `Retry-After`, one larger than the whole budget 413, and the bytes
//! come back when clients finish or go away.

mod common;

use common::{f32_items, make_f32, read_response, Daemon};
use std::io::{BufReader, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// The whole 1000 x 1000 `<f4` array: 4,000,000 decoded bytes.
const WHOLE: &str = "/v1/slice/@public/big.b2nd?sel=0:1000";

/// A daemon with a 6 MiB budget: one whole-array answer fits, two do not.
fn start() -> (tempfile::TempDir, Daemon) {
    let root = tempfile::tempdir().unwrap();
    make_f32(
        &root.path().join("big.b2nd"),
        &[1000, 1000],
        &[250, 250],
        &[50, 250],
    );
    let d = Daemon::start(&[
        "--root",
        &format!("@public={}", root.path().display()),
        "--memory-budget",
        "6M",
    ]);
    (root, d)
}

/// Sends a GET of `target` on a connection with a small receive window, reading nothing.
fn send(d: &Daemon, target: &str) -> TcpStream {
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    sock.connect(&d.addr.into()).unwrap();
    let mut s: TcpStream = sock.into();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(
        format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap();
    s
}

fn assert_busy(r: &common::Resp) {
    assert_eq!(
        (r.status, r.header("retry-after"), r.detail().as_str()),
        (
            503,
            Some("1"),
            "the server's memory for answers is in use; retry shortly"
        )
    );
}

#[test]
fn an_answer_holds_its_bytes_until_sent_and_others_wait() {
    let (_root, d) = start();
    assert_eq!(d.metric("stratad_answer_budget_bytes "), 6291456.0);
    // A client takes none of its answer: its 4,000,000 bytes stay held.
    let stalled = send(&d, WHOLE);
    d.metric_settles_at("stratad_answer_bytes ", 4_000_000.0);
    assert_busy(&d.get(WHOLE));
    assert_busy(&d.get("/api/fetch/@public/big.b2nd?slice_=0:500"));
    assert_eq!(d.metric("stratad_refused_total{reason=\"memory\"}"), 2.0);
    // What fits beside it is served.
    let r = d.get("/v1/slice/@public/big.b2nd?sel=1,0:3&fmt=npy");
    assert_eq!(r.status, 200);
    assert_eq!(&r.body[r.body.len() - 12..], &f32_items(1003)[4000..]);
    // The client goes away: its bytes come back, and the next answer is served.
    drop(stalled);
    d.metric_settles_at("stratad_answer_bytes ", 0.0);
    // An answer that could never fit: 413 (decoded, compressed and framed: 3 x 4,000,000).
    let r = d.get(&format!("{WHOLE}&fmt=b2nd"));
    assert_eq!(
        (r.status, r.detail().as_str()),
        (
            413,
            "the answer needs 12000000 bytes of memory, more than the server's budget of 6291456"
        )
    );
    let r = d.get(WHOLE);
    assert_eq!(r.status, 200);
    assert!(r.body == f32_items(1_000_000));
    d.metric_settles_at("stratad_answer_bytes ", 0.0);
}

#[test]
fn concurrent_large_slices_are_refused_or_served_whole() {
    let (_root, d) = start();
    let d = Arc::new(d);
    let want = Arc::new(f32_items(1_000_000));
    let refused = Arc::new(AtomicUsize::new(0));
    let barrier = Arc::new(Barrier::new(6));
    let clients: Vec<_> = (0..6)
        .map(|_| {
            let (d, want, refused, barrier) = (
                Arc::clone(&d),
                Arc::clone(&want),
                Arc::clone(&refused),
                Arc::clone(&barrier),
            );
            std::thread::spawn(move || {
                barrier.wait();
                loop {
                    // Each client waits a while before reading: its answer stays held.
                    let s = send(&d, WHOLE);
                    std::thread::sleep(Duration::from_millis(200));
                    let r = read_response(&mut BufReader::new(s), false).unwrap();
                    if r.status == 503 {
                        assert_busy(&r);
                        refused.fetch_add(1, Ordering::Relaxed);
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                    assert_eq!(r.status, 200, "{}", r.text());
                    assert!(r.body == *want, "a body differs");
                    return;
                }
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    let refused = refused.load(Ordering::Relaxed) as f64;
    assert!(refused >= 1.0, "no client was refused");
    assert_eq!(
        d.metric("stratad_refused_total{reason=\"memory\"}"),
        refused
    );
    // Everything was given back: a new request is served.
    d.metric_settles_at("stratad_answer_bytes ", 0.0);
    let r = d.get(WHOLE);
    assert_eq!(r.status, 200);
    assert!(r.body == *want);
}

/// Rows 0, 8, …, 248 of `big.b2nd`, all columns, as `indices`: 32 points in one chunk row,
/// read as one box of rows 0..249 (996,000 bytes) around an answer of 128,000 bytes.
fn spaced_rows() -> (String, Vec<u8>) {
    let rows: Vec<usize> = (0..32).map(|i| i * 8).collect();
    let key = format!(
        "[{}],null",
        rows.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(",")
    );
    let all = f32_items(1_000_000);
    let want = rows
        .iter()
        .flat_map(|&r| all[r * 4000..(r + 1) * 4000].to_vec())
        .collect();
    (
        format!("/api/fetch/@public/big.b2nd?indices=%5B{key}%5D"),
        want,
    )
}

fn values(body: Vec<u8>) -> Vec<u8> {
    let a = strata::ndarray::NdArray::from_cframe(body).unwrap();
    assert_eq!(a.shape(), [32, 1000]);
    a.to_vec().unwrap()
}

#[test]
fn the_box_read_around_scattered_points_is_charged_or_done_without() {
    let (_root, d) = start();
    let (target, want) = spaced_rows();
    let r = d.get(&target);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(values(r.body) == want);
    // The box was held beside the answer's own bytes: 128,000 + 996,000 at the peak (the
    // compressed frame after it takes 128,000 + 256,000).
    assert_eq!(d.metric("stratad_answer_bytes_peak "), 1_124_000.0);
    d.metric_settles_at("stratad_answer_bytes ", 0.0);
    // With 5,200,000 bytes held by clients that read nothing, the box does not fit in the
    // 6 MiB budget: the points are read one by one, and the answer is the same.
    let stalled = [
        send(&d, WHOLE),
        send(&d, "/v1/slice/@public/big.b2nd?sel=0:250"),
        send(&d, "/v1/slice/@public/big.b2nd?sel=0:50"),
    ];
    d.metric_settles_at("stratad_answer_bytes ", 5_200_000.0);
    let r = d.get(&target);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(values(r.body) == want);
    assert_eq!(d.metric("stratad_refused_total{reason=\"memory\"}"), 0.0);
    drop(stalled);
    d.metric_settles_at("stratad_answer_bytes ", 0.0);
}

#[test]
fn a_streamed_stored_file_holds_the_piece_it_has_read_until_it_is_sent() {
    let root = tempfile::tempdir().unwrap();
    let p = root.path().join("noise.b2nd");
    common::make_noise(&p, &[1536, 2048], &[512, 512], &[64, 128]);
    let bytes = std::fs::read(&p).unwrap();
    assert!(bytes.len() > 6 << 20, "{} bytes", bytes.len());
    let d = Daemon::start(&[
        "--root",
        &format!("@public={}", root.path().display()),
        "--memory-budget",
        "6M",
    ]);
    let raw = "/v1/raw/@public/noise.b2nd";
    // Six clients that read nothing hold one 1 MiB piece each: the whole budget.
    let stalled: Vec<TcpStream> = (0..6).map(|_| send(&d, raw)).collect();
    d.metric_settles_at("stratad_answer_bytes ", 6.0 * 1_048_576.0);
    assert_busy(&d.get(raw));
    assert_busy(&d.get("/api/fetch/@public/noise.b2nd"));
    // A range that fits in one small read is refused too, its bytes have no room either.
    assert_busy(&d.get_with(raw, "Range: bytes=0-99\r\n"));
    drop(stalled);
    d.metric_settles_at("stratad_answer_bytes ", 0.0);
    let r = d.get(raw);
    assert_eq!(r.status, 200);
    assert!(r.body == bytes, "the file differs");
    d.metric_settles_at("stratad_answer_bytes ", 0.0);
}
