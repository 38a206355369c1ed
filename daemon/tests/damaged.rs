//! Damaged datasets under a root: a file cut short, a file whose bytes after the frame's
//! header are garbage, an empty file, and a file with one chunk whose bytes are corrupt.
//! Every route answers JSON `{"detail": "the dataset is damaged: ..."}` with 422 (what is
//! wrong, never a server path), the intact parts of a damaged file are still served, and
//! the daemon keeps serving the other files.

mod common;

use common::{data_root, floats, request, Daemon, Resp};
use std::path::Path;

/// `n` bytes of xorshift noise.
fn noise(n: usize) -> Vec<u8> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

fn post(d: &Daemon, target: &str, body: &str) -> Resp {
    request(
        d.addr,
        &format!(
            "POST {target} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// Every route on dataset `name`: (what was asked, the answer).
fn every_route(d: &Daemon, name: &str) -> Vec<(String, Resp)> {
    let p = format!("@public/{name}");
    let mut out: Vec<(String, Resp)> = [
        format!("/api/info/{p}"),
        format!("/api/fetch/{p}"),
        format!("/api/fetch/{p}?slice_=0:2"),
        format!("/api/chunk/{p}?nchunk=0"),
        format!("/api/download/{p}"),
        format!("/v1/meta/{p}"),
        format!("/v1/index/{p}"),
        format!("/v1/raw/{p}"),
        format!("/v1/chunk/{p}/0"),
        format!("/v1/slice/{p}?sel=0:2"),
        format!("/v1/slice/{p}?sel=0:2&fmt=npy"),
    ]
    .into_iter()
    .map(|t| {
        let r = d.get(&t);
        (t, r)
    })
    .collect();
    out.push((
        format!("POST /api/fetch/{p}"),
        post(d, &format!("/api/fetch/{p}"), r#"{"slice_": "0:2"}"#),
    ));
    out.push((
        format!("POST /v1/chunks/{p}"),
        post(d, &format!("/v1/chunks/{p}"), "[0]"),
    ));
    out
}

/// The answer is 422 with `detail`, as JSON, and shows no server path.
fn assert_damaged(asked: &str, r: &Resp, detail: &str, root: &Path) {
    assert_eq!(
        r.header("content-type"),
        Some("application/json"),
        "{asked}: {} {:?}",
        r.status,
        r.text()
    );
    assert_eq!((r.status, r.detail().as_str()), (422, detail), "{asked}");
    let text = r.text();
    assert!(
        !text.contains(&root.display().to_string()) && !text.contains("/proc/"),
        "{asked}: {text}"
    );
}

/// The other files are served, with the right values.
fn check_others(d: &Daemon) {
    let r = d.get("/v1/slice/@public/sub/line.b2nd?sel=10:13");
    assert_eq!((r.status, floats(&r.body)), (200, vec![5.0, 5.5, 6.0]));
    let r = d.get("/v1/slice/@public/grid.b2nd?sel=1,0:2");
    assert_eq!((r.status, floats(&r.body)), (200, vec![150.0, 150.5]));
}

#[test]
fn files_that_are_no_frame_are_refused_on_every_route() {
    let root = data_root();
    let r = root.path();
    let good = std::fs::read(r.join("grid.b2nd")).unwrap();
    // Cut short: the first 60 % of the file.
    std::fs::write(r.join("short.b2nd"), &good[..good.len() * 6 / 10]).unwrap();
    // The frame's header kept, everything after it garbage.
    let mut tail = good[..256].to_vec();
    tail.extend_from_slice(&noise(good.len() - 256));
    std::fs::write(r.join("tail.b2nd"), &tail).unwrap();
    std::fs::write(r.join("empty.b2nd"), b"").unwrap();
    let d = Daemon::start(&["--root", &format!("@public={}", r.display())]);
    for (name, detail) in [
        (
            "short.b2nd",
            "the dataset is damaged: invalid header: frame_len (at most the bytes stored) 70792 exceeds 42475",
        ),
        (
            "tail.b2nd",
            "the dataset is damaged: invalid header: trailer length: expected msgpack marker 0xce at byte 2, found 0x66",
        ),
        (
            "empty.b2nd",
            "the dataset is damaged: invalid header: frame header bytes 0 is below 87",
        ),
    ] {
        let answers = every_route(&d, name);
        assert_eq!(answers.len(), 13);
        for (asked, resp) in answers {
            assert_damaged(&asked, &resp, detail, r);
        }
        check_others(&d);
    }
    // Nothing was an internal error, and the daemon still answers.
    let m = d.get("/metrics").text();
    assert!(!m.contains("status=\"500\""), "{m}");
    assert_eq!(d.get("/healthz").status, 200);
}

#[test]
fn a_corrupt_chunk_is_refused_where_it_is_decoded() {
    let root = data_root();
    let r = root.path();
    let d = Daemon::start(&["--root", &format!("@public={}", r.display())]);
    let index: serde_json::Value =
        serde_json::from_slice(&d.get("/v1/index/@public/grid.b2nd?fmt=json").body).unwrap();
    let (off, len) = (
        index[0][0].as_u64().unwrap() as usize,
        index[0][1].as_u64().unwrap() as usize,
    );
    let mut bytes = std::fs::read(r.join("grid.b2nd")).unwrap();
    // Chunk 0's compressed streams (after its 32-byte header and block starts) overwritten.
    let streams = off + 32 + 16 * 4;
    let garbage = noise(off + len - streams);
    bytes[streams..off + len].copy_from_slice(&garbage);
    std::fs::write(r.join("bad.b2nd"), &bytes).unwrap();
    let chunk0 = &bytes[off..off + len];
    let detail = "the dataset is damaged: bad run-length encoding: size of a stream run -96368885 is not -255 to -1";
    let mut chunks_answer = 1u32.to_le_bytes().to_vec();
    chunks_answer.extend_from_slice(&0u64.to_le_bytes());
    chunks_answer.extend_from_slice(&(len as u64).to_le_bytes());
    chunks_answer.extend_from_slice(chunk0);
    let answers = every_route(&d, "bad.b2nd");
    assert_eq!(answers.len(), 13);
    for (asked, resp) in answers {
        // What decodes chunk 0 is refused; its stored bytes and metadata are served as they are.
        let decodes = asked.contains("slice") || asked.starts_with("POST /api/fetch");
        if decodes {
            assert_damaged(&asked, &resp, detail, r);
            continue;
        }
        assert_eq!(resp.status, 200, "{asked}: {}", resp.text());
        if asked.contains("/raw/")
            || asked.contains("/download/")
            || asked.ends_with("/fetch/@public/bad.b2nd")
        {
            assert!(resp.body == bytes, "{asked}: not the stored file");
        } else if asked.contains("/chunk/") || asked.contains("chunk/@public") {
            assert!(resp.body == chunk0, "{asked}: not the stored chunk");
        } else if asked.starts_with("POST /v1/chunks") {
            assert!(resp.body == chunks_answer, "{asked}");
        } else if asked.contains("/meta/") || asked.contains("/info/") {
            let v: serde_json::Value = serde_json::from_slice(&resp.body).unwrap();
            assert_eq!(v["shape"], serde_json::json!([200, 300]), "{asked}");
        } else {
            assert_eq!(
                resp.body,
                d.get("/v1/index/@public/grid.b2nd").body,
                "{asked}"
            );
        }
    }
    // The other chunks are served.
    let r2 = d.get("/v1/slice/@public/bad.b2nd?sel=64:66,0:2");
    assert_eq!(
        (r2.status, floats(&r2.body)),
        (200, vec![9600.0, 9600.5, 9750.0, 9750.5])
    );
    check_others(&d);
    let m = d.get("/metrics").text();
    assert!(!m.contains("status=\"500\""), "{m}");
}
