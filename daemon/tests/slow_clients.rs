//! Slow-client attacks (slow-loris and its kin): connections that say nothing, heads sent a
//! byte at a time, bodies trickled, and clients that stop reading an answer. Each holds one
//! of the daemon's few connection slots; each must be dropped within its limit so the slots
//! come back and other clients are served meanwhile.

mod common;

use common::{data_root, Daemon};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A daemon with 4 connection slots and short limits (1 s to send a head, a request deadline
/// of 2 s, 1 s without progress on a send).
fn daemon(root: &std::path::Path) -> Daemon {
    let config = root.join("stratad.toml");
    std::fs::write(
        &config,
        "[limits]\nconnections = 4\nheader_read_timeout = \"1s\"\nrequest_timeout = \"2s\"\nsend_timeout = \"1s\"\n",
    )
    .unwrap();
    Daemon::start(&[
        "--config",
        config.to_str().unwrap(),
        "--root",
        &format!("@public={}", root.display()),
    ])
}

/// How long until the server closes `s` (a read gives end of file or a reset), reading and
/// throwing away whatever it sends; `None` if still open after `limit`.
fn closed_within(s: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut buf = [0u8; 65536];
    while start.elapsed() < limit {
        match s.read(&mut buf) {
            Ok(0) => return Some(start.elapsed()),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return Some(start.elapsed()),
        }
    }
    None
}

/// Polls until the daemon's open-connection gauge is `want` (the poll's own connection
/// included), within 10 s.
fn connections_settle_at(d: &Daemon, want: f64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut now = d.metric("stratad_connections ");
    while now != want && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        now = d.metric("stratad_connections ");
    }
    assert_eq!(now, want, "open connections");
}

#[test]
fn silent_connections_and_heads_sent_byte_by_byte_are_dropped_at_the_head_deadline() {
    let root = data_root();
    let d = daemon(root.path());
    let start = Instant::now();
    let mut silent = TcpStream::connect(d.addr).unwrap();
    let mut trickle = TcpStream::connect(d.addr).unwrap();
    trickle
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    // One header byte every 100 ms: always some progress, never a whole head.
    let trickler = std::thread::spawn(move || {
        let t0 = Instant::now();
        let mut closed = None;
        while t0.elapsed() < Duration::from_secs(6) {
            if trickle.write_all(b"a").is_err() {
                closed = Some(t0.elapsed());
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        (trickle, closed)
    });
    // Meanwhile the other two slots serve.
    assert_eq!(d.get("/healthz").status, 200);
    let silent_after = closed_within(&mut silent, Duration::from_secs(5))
        .expect("a connection that sends nothing is dropped");
    assert!(
        silent_after >= Duration::from_millis(800),
        "dropped too early: {silent_after:?}"
    );
    let (mut trickle, mut closed) = trickler.join().unwrap();
    if closed.is_none() {
        closed = closed_within(&mut trickle, Duration::from_millis(500));
    }
    let closed = closed.expect("a head sent byte by byte is dropped");
    assert!(closed < Duration::from_secs(4), "{closed:?}");
    assert!(start.elapsed() < Duration::from_secs(8));
    connections_settle_at(&d, 1.0);
}

#[test]
fn an_idle_keep_alive_connection_is_dropped() {
    let root = data_root();
    let d = daemon(root.path());
    let mut s = TcpStream::connect(d.addr).unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut reader = std::io::BufReader::new(s.try_clone().unwrap());
    let r = common::read_response(&mut reader, false).unwrap();
    assert_eq!(r.status, 200);
    // Then nothing: the slot must come back.
    let after = closed_within(&mut s, Duration::from_secs(6))
        .expect("an idle keep-alive connection is dropped");
    assert!(after >= Duration::from_millis(800), "{after:?}");
    connections_settle_at(&d, 1.0);
}

#[test]
fn a_body_trickled_in_meets_the_request_deadline() {
    let root = data_root();
    let d = daemon(root.path());
    let mut s = TcpStream::connect(d.addr).unwrap();
    let body = br#"{"slice_": "0:2"}"#;
    s.write_all(
        format!(
            "POST /api/fetch/@public/grid.b2nd HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len() + 1000
        )
        .as_bytes(),
    )
    .unwrap();
    let start = Instant::now();
    let mut writer = s.try_clone().unwrap();
    let feeder = std::thread::spawn(move || {
        for _ in 0..60 {
            if writer.write_all(b" ").is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let mut reader = std::io::BufReader::new(s);
    reader
        .get_mut()
        .set_read_timeout(Some(Duration::from_secs(8)))
        .unwrap();
    let r = common::read_response(&mut reader, false).expect("an answer before the feeder ends");
    let took = start.elapsed();
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(r.detail(), "the request did not finish before its deadline");
    assert!(
        took >= Duration::from_millis(1800) && took < Duration::from_secs(5),
        "{took:?}"
    );
    drop(reader);
    feeder.join().unwrap();
    connections_settle_at(&d, 1.0);
}

#[test]
fn a_client_that_stops_reading_its_answer_is_dropped() {
    let root = data_root();
    // 16 MiB of noise: far more than the socket buffers hold.
    common::make_noise(
        &root.path().join("big.b2nd"),
        &[2048, 2048],
        &[1024, 1024],
        &[128, 256],
    );
    let d = daemon(root.path());
    let mut s = TcpStream::connect(d.addr).unwrap();
    s.set_nodelay(true).unwrap();
    // A small receive buffer so the send stalls early.
    s.write_all(b"GET /v1/raw/@public/big.b2nd HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        d.metric("stratad_connections "),
        2.0,
        "the stalled connection and the poll"
    );
    // Never read: after a second without progress the daemon gives the slot back.
    connections_settle_at(&d, 1.0);
    // What arrived is a prefix of the stored file, then the end.
    let stored = std::fs::read(root.path().join("big.b2nd")).unwrap();
    let mut got = Vec::new();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.read_to_end(&mut got);
    let head_end = got
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("the head arrived")
        + 4;
    let body = &got[head_end..];
    assert!(body.len() < stored.len(), "{} bytes arrived", body.len());
    assert_eq!(body, &stored[..body.len()]);
    assert_eq!(d.get("/healthz").status, 200);
}
