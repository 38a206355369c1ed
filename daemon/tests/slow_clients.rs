//! Slow-client attacks (slow-loris and its kin): connections that say nothing (plain, or
//! after a TLS handshake), a lone byte, an HTTP/2 preface, heads sent a byte at a time,
//! bodies trickled, and clients that stop reading an answer. Each holds one of the daemon's
//! few connection slots; each must be dropped within its limit so the slots come back and
//! other clients are served meanwhile — while a client that reads slowly but steadily keeps
//! its answer.

mod common;

use common::{data_root, Daemon};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// A daemon with 4 connection slots and short limits (1 s to send a head, a request deadline
/// of 2 s, 1 s without progress on a send).
fn daemon(root: &std::path::Path) -> Daemon {
    daemon_with(root, &[])
}

/// [`daemon`] with more flags.
fn daemon_with(root: &std::path::Path, flags: &[&str]) -> Daemon {
    let config = root.join("stratad.toml");
    std::fs::write(
        &config,
        "[limits]\nconnections = 4\nheader_read_timeout = \"1s\"\nrequest_timeout = \"2s\"\nsend_timeout = \"1s\"\n",
    )
    .unwrap();
    let root_flag = format!("@public={}", root.display());
    let mut args = vec!["--config", config.to_str().unwrap(), "--root", &root_flag];
    args.extend_from_slice(flags);
    Daemon::start(&args)
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
    d.metric_settles_at("stratad_connections ", 1.0);
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
    d.metric_settles_at("stratad_connections ", 1.0);
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
    d.metric_settles_at("stratad_connections ", 1.0);
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
    d.metric_settles_at("stratad_connections ", 1.0);
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

#[test]
fn a_lone_byte_or_an_http2_preface_does_not_hold_a_slot() {
    let root = data_root();
    let d = daemon(root.path());
    let mut lone = TcpStream::connect(d.addr).unwrap();
    lone.write_all(b"P").unwrap();
    let mut preface = TcpStream::connect(d.addr).unwrap();
    preface
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .unwrap();
    for (what, s) in [
        ("a lone byte", &mut lone),
        ("an HTTP/2 preface", &mut preface),
    ] {
        let after = closed_within(s, Duration::from_secs(5));
        assert!(after.is_some(), "{what} still holds its connection");
    }
    d.metric_settles_at("stratad_connections ", 1.0);
}

#[test]
fn tls_sessions_that_go_quiet_after_the_handshake_are_dropped() {
    use std::sync::Arc;
    let root = data_root();
    let dir = tempfile::tempdir().unwrap();
    let (cert, cp, kp) = common::self_signed(dir.path());
    let d = daemon_with(
        root.path(),
        &[
            "--tls-cert",
            cp.to_str().unwrap(),
            "--tls-key",
            kp.to_str().unwrap(),
        ],
    );
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.der().clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let mut conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let mut sock = TcpStream::connect(d.addr).unwrap();
    while conn.is_handshaking() {
        conn.complete_io(&mut sock).unwrap();
    }
    // HTTP/1.1 is all the daemon offers.
    assert_eq!(conn.alpn_protocol(), Some(&b"http/1.1"[..]));
    let start = Instant::now();
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut tls = rustls::Stream::new(&mut conn, &mut sock);
    let mut buf = [0u8; 1024];
    let closed = loop {
        match tls.read(&mut buf) {
            Ok(0) => break Some(start.elapsed()),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if start.elapsed() > Duration::from_secs(5) {
                    break None;
                }
            }
            Err(_) => break Some(start.elapsed()),
        }
    };
    let closed = closed.expect("a quiet TLS session is dropped");
    assert!(closed >= Duration::from_millis(800), "{closed:?}");
}

#[test]
fn a_client_reading_slowly_but_steadily_keeps_its_answer() {
    let root = data_root();
    common::make_noise(
        &root.path().join("big.b2nd"),
        &[2048, 2048],
        &[1024, 1024],
        &[128, 256],
    );
    let stored = std::fs::read(root.path().join("big.b2nd")).unwrap();
    let d = daemon(root.path());
    // A small receive window, as a slow link gives: the answer waits in the daemon's send
    // queue, which the kernel would let grow to megabytes drained at the client's pace.
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    sock.connect(&d.addr.into()).unwrap();
    let mut s: TcpStream = sock.into();
    s.write_all(b"GET /v1/raw/@public/big.b2nd HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // 64 KiB every 700 ms for 5 s, five times the send timeout.
    let mut got = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        let mut want = buf.len();
        while want > 0 {
            let n = s.read(&mut buf[..want]).expect("the answer was cut");
            assert!(n > 0, "the answer ended after {} bytes", got.len());
            got.extend_from_slice(&buf[..n]);
            want -= n;
        }
        std::thread::sleep(Duration::from_millis(700));
    }
    let head_end = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let body = &got[head_end..];
    assert!(body.len() > 200 << 10, "{} bytes", body.len());
    assert_eq!(body, &stored[..body.len()]);
}

#[test]
fn clients_that_stop_reading_hold_no_place_in_the_work_queue() {
    let root = data_root();
    common::make_noise(
        &root.path().join("big.b2nd"),
        &[2048, 2048],
        &[1024, 1024],
        &[128, 256],
    );
    let d = daemon_with(root.path(), &["--queue", "2"]);
    // Two clients take the start of a 16 MiB answer, then read nothing.
    let stalled: Vec<TcpStream> = (0..2)
        .map(|_| {
            let mut s = TcpStream::connect(d.addr).unwrap();
            s.write_all(b"GET /v1/raw/@public/big.b2nd HTTP/1.1\r\nHost: x\r\n\r\n")
                .unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // Work for the pool still gets a place (the queue holds 2).
    for _ in 0..3 {
        let r = d.get("/v1/slice/@public/grid.b2nd?sel=3,0:2");
        assert_eq!(r.status, 200, "{}", r.text());
    }
    assert_eq!(
        d.metric("stratad_refused_total{reason=\"queue_full\"}"),
        0.0
    );
    drop(stalled);
}

#[test]
fn a_streamed_answer_is_in_flight_until_its_body_is_sent() {
    let root = data_root();
    common::make_noise(
        &root.path().join("big.b2nd"),
        &[2048, 2048],
        &[1024, 1024],
        &[128, 256],
    );
    let stored = std::fs::read(root.path().join("big.b2nd")).unwrap();
    let d = daemon(root.path());
    let ask = || {
        let mut s = TcpStream::connect(d.addr).unwrap();
        s.write_all(b"GET /v1/raw/@public/big.b2nd HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s
    };
    // Its handler returned long ago; its body is still being sent.
    let mut s = ask();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        d.metric("stratad_in_flight "),
        2.0,
        "the stalled body and the poll"
    );
    // Read to its end (the connection kept open): it leaves the gauge.
    let mut r = std::io::BufReader::new(&mut s);
    let resp = common::read_response(&mut r, false).unwrap();
    assert_eq!(resp.status, 200);
    assert!(resp.body == stored, "the body differs");
    d.metric_settles_at("stratad_in_flight ", 1.0);
    // A client that stops reading is dropped at the send timeout, and leaves it too.
    let _stalled = ask();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(d.metric("stratad_in_flight "), 2.0);
    d.metric_settles_at("stratad_in_flight ", 1.0);
    assert_eq!(d.metric("stratad_requests_cancelled_total "), 0.0);
}
