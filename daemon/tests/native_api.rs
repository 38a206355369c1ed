//! The native API (`/v1`) against the library reading the same files: metadata, the chunk
//! index (whose spans, read as ranges of the raw file, are the stored chunks), the raw file
//! (HEAD, ranges, ETag, 304, If-Range), stored chunks one and many at a time, slices as raw
//! bytes, `.npy` and b2nd; `/healthz`, `/metrics`; TLS; graceful shutdown.

mod common;

use common::{data_root, floats, request, Conn, Daemon};
use std::io::Read;
use std::time::Duration;
use strata::ndarray::{NdArray, OpenMode, Slice};
use strata::schunk::SChunk;

fn serve(root: &std::path::Path) -> Daemon {
    Daemon::start(&["--root", &format!("@public={}", root.display())])
}

/// Item (i, j) of `grid.b2nd`.
fn grid(i: usize, j: usize) -> f32 {
    (i * 300 + j) as f32 * 0.5
}

#[test]
fn meta_and_index_describe_the_stored_chunks() {
    let root = data_root();
    let d = serve(root.path());
    let m = d.get("/v1/meta/@public/grid.b2nd");
    assert_eq!(m.status, 200);
    let v: serde_json::Value = serde_json::from_slice(&m.body).unwrap();
    assert_eq!(v["shape"], serde_json::json!([200, 300]));
    assert_eq!(v["chunks"], serde_json::json!([64, 100]));
    assert_eq!(v["blocks"], serde_json::json!([16, 25]));
    assert_eq!(
        (v["dtype"].as_str(), v["dtype_numpy"].as_str()),
        (Some("<f4"), Some("float32"))
    );
    assert_eq!(v["nchunks"], 12);
    assert_eq!(v["kind"], "b2nd");
    let file = std::fs::read(root.path().join("grid.b2nd")).unwrap();
    assert_eq!(v["size"], file.len());
    assert_eq!(
        m.header("etag").unwrap(),
        format!("\"{}\"", v["etag"].as_str().unwrap())
    );

    let ix = d.get("/v1/index/@public/grid.b2nd");
    assert_eq!(ix.status, 200);
    let n = u64::from_le_bytes(ix.body[..8].try_into().unwrap()) as usize;
    assert_eq!((n, ix.body.len()), (12, 8 + 12 * 16));
    let s = SChunk::open(root.path().join("grid.b2nd"), OpenMode::Read).unwrap();
    for k in 0..n {
        let at = 8 + k * 16;
        let off = u64::from_le_bytes(ix.body[at..at + 8].try_into().unwrap());
        let len = u64::from_le_bytes(ix.body[at + 8..at + 16].try_into().unwrap());
        let chunk = s.chunk(k).unwrap();
        assert_eq!(
            &file[off as usize..(off + len) as usize],
            &chunk[..],
            "chunk {k}"
        );
        let r = d.get_with(
            "/v1/raw/@public/grid.b2nd",
            &format!("Range: bytes={}-{}\r\n", off, off + len - 1),
        );
        assert_eq!((r.status, &r.body), (206, &chunk), "range of chunk {k}");
        let c = d.get(&format!("/v1/chunk/@public/grid.b2nd/{k}"));
        assert_eq!((c.status, &c.body), (200, &chunk));
        assert_eq!(
            c.header("x-chunk-nbytes").unwrap(),
            (64 * 100 * 4).to_string()
        );
        assert_eq!(c.header("x-chunk-cbytes").unwrap(), chunk.len().to_string());
        assert_eq!(
            c.header("x-chunk-blocksize").unwrap(),
            (16 * 25 * 4).to_string()
        );
    }
    // Read again (both APIs), every chunk comes from the stored-chunk cache: the same bytes,
    // nothing read again.
    for k in 0..n {
        let chunk = s.chunk(k).unwrap();
        let c = d.get(&format!("/v1/chunk/@public/grid.b2nd/{k}"));
        assert_eq!((c.status, &c.body), (200, &chunk), "chunk {k} again");
        let c = d.get(&format!("/api/chunk/@public/grid.b2nd?nchunk={k}"));
        assert_eq!((c.status, &c.body), (200, &chunk), "chunk {k} through /api");
    }
    assert_eq!(
        (
            d.metric("stratad_chunk_cache_misses_total"),
            d.metric("stratad_chunk_cache_hits_total")
        ),
        (12.0, 24.0)
    );
    let j = d.get("/v1/index/@public/grid.b2nd?fmt=json");
    let v: serde_json::Value = serde_json::from_slice(&j.body).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 12);
    assert_eq!(d.get("/v1/chunk/@public/grid.b2nd/12").status, 404);
    assert_eq!(d.get("/v1/chunk/@public/grid.b2nd/x").status, 400);
    assert_eq!(d.get("/v1/meta/@public/nope.b2nd").status, 404);
}

#[test]
fn raw_file_with_head_ranges_and_validators() {
    let root = data_root();
    let d = serve(root.path());
    let file = std::fs::read(root.path().join("sub/line.b2nd")).unwrap();
    let n = file.len();
    let u = "/v1/raw/@public/sub/line.b2nd";
    let full = d.get(u);
    assert_eq!((full.status, &full.body), (200, &file));
    assert_eq!(full.header("accept-ranges"), Some("bytes"));
    assert!(full.header("content-disposition").is_none());
    let etag = full.header("etag").unwrap().to_owned();
    assert!(full.header("last-modified").is_some());
    let head = request(
        d.addr,
        &format!("HEAD {u} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!(
        (head.status, head.header("content-length")),
        (200, Some(n.to_string().as_str()))
    );
    assert!(head.body.is_empty());
    let r = d.get_with(u, "Range: bytes=10-19\r\n");
    assert_eq!((r.status, &r.body[..]), (206, &file[10..20]));
    assert_eq!(
        r.header("content-range"),
        Some(format!("bytes 10-19/{n}").as_str())
    );
    let r = d.get_with(u, "Range: bytes=-7\r\n");
    assert_eq!(&r.body[..], &file[n - 7..]);
    let r = d.get_with(u, "Range: bytes=0-1, 5-6\r\n");
    assert_eq!(r.status, 206);
    assert!(r
        .header("content-type")
        .unwrap()
        .starts_with("multipart/byteranges; boundary="));
    let body = r.text();
    assert!(body.contains(&format!("Content-Range: bytes 0-1/{n}")));
    assert!(body.contains(&format!("Content-Range: bytes 5-6/{n}")));
    let r = d.get_with(u, &format!("If-None-Match: {etag}\r\n"));
    assert_eq!((r.status, r.body.len()), (304, 0));
    assert_eq!(r.header("etag"), Some(etag.as_str()));
    let r = d.get_with(u, "If-None-Match: \"other\"\r\n");
    assert_eq!(r.status, 200);
    let r = d.get_with(u, &format!("Range: bytes=0-3\r\nIf-Range: {etag}\r\n"));
    assert_eq!(r.status, 206);
    let r = d.get_with(u, "Range: bytes=0-3\r\nIf-Range: \"stale\"\r\n");
    assert_eq!((r.status, r.body.len()), (200, n));
    // An If-Range that is not even text matches nothing: the whole file.
    let mut raw =
        format!("GET {u} HTTP/1.1\r\nHost: x\r\nRange: bytes=0-3\r\nIf-Range: ").into_bytes();
    raw.extend_from_slice(b"\xff\xfe\r\nConnection: close\r\n\r\n");
    let r = common::request_bytes(d.addr, &raw);
    assert_eq!((r.status, r.body.len()), (200, n));
    let lm = full.header("last-modified").unwrap();
    let r = d.get_with(u, &format!("Range: bytes=0-3\r\nIf-Range: {lm}\r\n"));
    assert_eq!(r.status, 206);
    let r = d.get_with(u, &format!("Range: bytes={n}-\r\n"));
    assert_eq!(
        (r.status, r.header("content-range")),
        (416, Some(format!("bytes */{n}").as_str()))
    );
}

#[test]
fn many_chunks_in_one_request() {
    let root = data_root();
    let d = serve(root.path());
    let body = "[0, 5, 11, 5]";
    let r = request(
        d.addr,
        &format!(
            "POST /v1/chunks/@public/grid.b2nd HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert_eq!(r.status, 200);
    let s = SChunk::open(root.path().join("grid.b2nd"), OpenMode::Read).unwrap();
    let b = &r.body;
    assert_eq!(u32::from_le_bytes(b[..4].try_into().unwrap()), 4);
    let mut at = 4;
    for want in [0usize, 5, 11, 5] {
        let n = u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize;
        let len = u64::from_le_bytes(b[at + 8..at + 16].try_into().unwrap()) as usize;
        assert_eq!(n, want);
        assert_eq!(&b[at + 16..at + 16 + len], &s.chunk(n).unwrap()[..]);
        at += 16 + len;
    }
    assert_eq!(at, b.len());
    let bad = "[99]";
    let r = request(
        d.addr,
        &format!("POST /v1/chunks/@public/grid.b2nd HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{bad}", bad.len()),
    );
    assert_eq!(r.status, 404);
}

#[test]
fn slices_as_raw_npy_and_b2nd() {
    let root = data_root();
    let d = serve(root.path());
    let arr = NdArray::open(root.path().join("grid.b2nd"), OpenMode::Read).unwrap();
    // start:stop:step per axis, negative steps, an integer dropping its axis.
    for (sel, rows, cols) in [
        (
            "10:20,5:50:3",
            (10..20).collect::<Vec<_>>(),
            (5..50).step_by(3).collect::<Vec<_>>(),
        ),
        ("-3:,::-97", (197..200).collect(), vec![299, 202, 105, 8]),
        ("150:180:7,299", (150..180).step_by(7).collect(), vec![299]),
    ] {
        let r = d.get(&format!("/v1/slice/@public/grid.b2nd?sel={sel}&fmt=raw"));
        assert_eq!(r.status, 200, "{sel}");
        let want: Vec<f32> = rows
            .iter()
            .flat_map(|&i| cols.iter().map(move |&j| grid(i, j)))
            .collect();
        assert_eq!(floats(&r.body), want, "{sel}");
        let shape = if sel.ends_with(",299") {
            rows.len().to_string()
        } else {
            format!("{},{}", rows.len(), cols.len())
        };
        assert_eq!(r.header("x-shape"), Some(shape.as_str()));
        assert_eq!(r.header("x-dtype"), Some("<f4"));
    }
    // the library agrees on one of them
    let (lib, _) = arr
        .get_slice_vec(&[Slice::range(10, 20), Slice::new(Some(5), Some(50), 3)])
        .unwrap();
    assert_eq!(
        d.get("/v1/slice/@public/grid.b2nd?sel=10:20,5:50:3").body,
        lib
    );
    // .npy
    let r = d.get("/v1/slice/@public/grid.b2nd?sel=1:3,4:6&fmt=npy");
    assert_eq!(r.header("content-type"), Some("application/x-npy"));
    let hl = u16::from_le_bytes([r.body[8], r.body[9]]) as usize;
    let header = std::str::from_utf8(&r.body[10..10 + hl]).unwrap();
    assert!(
        header.contains("'descr': '<f4'") && header.contains("'shape': (2, 2)"),
        "{header}"
    );
    assert_eq!(
        floats(&r.body[10 + hl..]),
        [grid(1, 4), grid(1, 5), grid(2, 4), grid(2, 5)]
    );
    // b2nd
    let r = d.get("/v1/slice/@public/grid.b2nd?sel=100:164,0:300&fmt=b2nd");
    let a = NdArray::from_cframe(r.body).unwrap();
    assert_eq!(a.shape(), [64, 300]);
    let want: Vec<f32> = (100..164)
        .flat_map(|i| (0..300).map(move |j| grid(i, j)))
        .collect();
    assert_eq!(floats(&a.to_vec().unwrap()), want);
    // errors
    assert_eq!(d.get("/v1/slice/@public/grid.b2nd?sel=0:1:0").status, 400);
    assert_eq!(d.get("/v1/slice/@public/grid.b2nd?sel=500").status, 400);
    assert_eq!(d.get("/v1/slice/@public/grid.b2nd?fmt=xml").status, 400);
    assert_eq!(
        d.get_with("/v1/slice/@public/grid.b2nd", "Range: bytes=0-1\r\n")
            .status,
        416
    );
}

#[test]
fn health_and_metrics() {
    let root = data_root();
    let d = serve(root.path());
    let h = d.get("/healthz");
    assert_eq!((h.status, h.text().as_str()), (200, "ok\n"));
    for _ in 0..3 {
        assert_eq!(d.get("/api/info/@public/grid.b2nd").status, 200);
    }
    assert_eq!(d.get("/api/info/@public/none.b2nd").status, 404);
    let m = d.get("/metrics");
    assert_eq!(m.header("content-type"), Some("text/plain; version=0.0.4"));
    assert_eq!(
        d.metric("stratad_requests_total{route=\"/api/info\",status=\"200\"}"),
        3.0
    );
    assert_eq!(
        d.metric("stratad_requests_total{route=\"/api/info\",status=\"404\"}"),
        1.0
    );
    assert_eq!(
        d.metric("stratad_request_duration_seconds_count{route=\"/api/info\"}"),
        4.0
    );
    assert!(d.metric("stratad_pool_workers") >= 1.0);
    assert_eq!(
        d.metric("stratad_refused_total{reason=\"queue_full\"}"),
        0.0
    );
}

#[test]
fn keep_alive_serves_request_after_request() {
    let root = data_root();
    let d = serve(root.path());
    let mut c = Conn::open(d.addr);
    for k in 0..50 {
        let r = c
            .get(
                &format!("/v1/slice/@public/sub/line.b2nd?sel={k}:{}", k + 3),
                "",
            )
            .unwrap();
        assert_eq!(
            floats(&r.body),
            [k as f32 * 0.5, (k + 1) as f32 * 0.5, (k + 2) as f32 * 0.5]
        );
    }
}

#[test]
fn tls_serves_the_same_answers() {
    let root = data_root();
    let dir = tempfile::tempdir().unwrap();
    let (cert, cp, kp) = common::self_signed(dir.path());
    let d = Daemon::start(&[
        "--root",
        &format!("@public={}", root.path().display()),
        "--tls-cert",
        cp.to_str().unwrap(),
        "--tls-key",
        kp.to_str().unwrap(),
    ]);
    assert_eq!(d.scheme, "https");
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::Specific(std::sync::Arc::new(vec![
            ureq::tls::Certificate::from_der(cert.der()).to_owned(),
        ])))
        .build();
    let agent: ureq::Agent = ureq::Agent::config_builder().tls_config(tls).build().into();
    let url = format!(
        "https://localhost:{}/v1/slice/@public/grid.b2nd?sel=0,0:4",
        d.addr.port()
    );
    let mut resp = agent.get(&url).call().unwrap();
    let mut body = Vec::new();
    resp.body_mut().as_reader().read_to_end(&mut body).unwrap();
    assert_eq!(
        floats(&body),
        [grid(0, 0), grid(0, 1), grid(0, 2), grid(0, 3)]
    );
    // plain HTTP on the TLS port gets no answer
    let mut s = std::net::TcpStream::connect(d.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    std::io::Write::write_all(&mut s, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    assert!(!String::from_utf8_lossy(&buf).contains("200 OK"));
}

#[test]
fn sigterm_lets_the_request_in_flight_finish() {
    let root = data_root();
    // A 12 MiB file, streamed in pieces.
    let big = root.path().join("big.b2nd");
    common::make_noise(&big, &[1536, 2048], &[512, 512], &[64, 128]);
    let file = std::fs::read(&big).unwrap();
    let mut d = serve(root.path());
    let mut s = std::net::TcpStream::connect(d.addr).unwrap();
    std::io::Write::write_all(
        &mut s,
        b"GET /v1/raw/@public/big.b2nd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut first = [0u8; 4096];
    s.read_exact(&mut first).unwrap();
    // SIGTERM while the body is being sent: no new connection is accepted, the body completes.
    // SAFETY: kill(2) on our child.
    unsafe {
        libc::kill(d.child.id() as libc::pid_t, libc::SIGTERM);
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        std::net::TcpStream::connect(d.addr).is_err(),
        "accepted after SIGTERM"
    );
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).unwrap();
    let mut all = first.to_vec();
    all.extend_from_slice(&rest);
    let at = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert_eq!(all[at..].len(), file.len());
    assert!(all[at..] == file[..], "the body differs from the file");
    let status = d
        .terminate(Duration::from_secs(20))
        .expect("stratad exits after SIGTERM");
    assert!(status.success(), "{status:?}");
}
