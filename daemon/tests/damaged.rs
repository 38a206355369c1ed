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

/// Every route on dataset `name` answers 422 with `detail`.
fn assert_damaged_everywhere(d: &Daemon, name: &str, detail: &str, root: &Path) {
    let answers = every_route(d, name);
    assert_eq!(answers.len(), 13);
    for (asked, resp) in answers {
        assert_damaged(&asked, &resp, detail, root);
    }
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
        assert_damaged_everywhere(&d, name, detail, r);
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

/// `bytes` with the first occurrence of `from` (after the frame's fixed header) replaced
/// by `to`, of the same length.
fn patched(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let at = 87
        + bytes[87..]
            .windows(from.len())
            .position(|w| w == from)
            .expect("the bytes to patch");
    let mut out = bytes.to_vec();
    out[at..at + to.len()].copy_from_slice(to);
    out
}

#[test]
fn a_b2nd_metalayer_that_disagrees_with_its_frame_is_damage_not_an_internal_error() {
    let root = data_root();
    let r = root.path();
    let good = std::fs::read(r.join("grid.b2nd")).unwrap();
    let i64be = |v: i64| {
        let mut b = vec![0xd3];
        b.extend_from_slice(&v.to_be_bytes());
        b
    };
    let i32be = |v: i32| {
        let mut b = vec![0xd2];
        b.extend_from_slice(&v.to_be_bytes());
        b
    };
    // The shape's first axis (200) made 400, -200 and 2^62; the first chunkshape axis (64)
    // made 0 and 2^31 - 1.
    let cases = [
        ("taller.b2nd", patched(&good, &i64be(200), &i64be(400)),
         "the dataset is damaged: the b2nd metalayer: invalid parameter: chunks in the store (those of the array): 12 given, 21 expected"),
        ("negative.b2nd", patched(&good, &i64be(200), &i64be(-200)),
         "the dataset is damaged: the b2nd metalayer: invalid parameter: b2nd: dimension 0 has shape -200, chunkshape 64, blockshape 16 (need shape >= 0 and 1 <= blockshape <= chunkshape, or 0 for an empty dimension)"),
        ("huge.b2nd", patched(&good, &i64be(200), &i64be(1 << 62)),
         "the dataset is damaged: the b2nd metalayer: invalid parameter: b2nd: the item count overflows"),
        ("nochunk.b2nd", patched(&good, &i32be(64), &i32be(0)),
         "the dataset is damaged: the b2nd metalayer: invalid parameter: b2nd: dimension 0 has shape 200, chunkshape 0, blockshape 16 (need shape >= 0 and 1 <= blockshape <= chunkshape, or 0 for an empty dimension)"),
        ("bigchunk.b2nd", patched(&good, &i32be(64), &i32be(i32::MAX)),
         "the dataset is damaged: the b2nd metalayer: 858993459200 bytes exceed the Blosc2 chunk limit of 2147483615 bytes"),
    ];
    for (name, bytes, _) in &cases {
        std::fs::write(r.join(name), bytes).unwrap();
    }
    let d = Daemon::start(&["--root", &format!("@public={}", r.display())]);
    for (name, _, detail) in &cases {
        assert_damaged_everywhere(&d, name, detail, r);
    }
    check_others(&d);
    let m = d.get("/metrics").text();
    assert!(!m.contains("status=\"500\""), "{m}");
}

#[test]
fn a_dtype_that_does_not_describe_the_items_refuses_what_decodes_them() {
    let root = data_root();
    let r = root.path();
    let good = std::fs::read(r.join("grid.b2nd")).unwrap();
    // `<f4` made `|u1` (1-byte items over the frame's 4-byte ones) and `!f4` (no dtype).
    std::fs::write(r.join("narrow.b2nd"), patched(&good, b"<f4", b"|u1")).unwrap();
    std::fs::write(r.join("nonsense.b2nd"), patched(&good, b"<f4", b"!f4")).unwrap();
    let d = Daemon::start(&["--root", &format!("@public={}", r.display())]);
    for (name, bytes, detail) in [
        (
            "narrow.b2nd",
            patched(&good, b"<f4", b"|u1"),
            "the dataset is damaged: its dtype \"|u1\" has 1-byte items, its frame 4-byte items",
        ),
        (
            "nonsense.b2nd",
            patched(&good, b"<f4", b"!f4"),
            "the dataset is damaged: its dtype: invalid parameter: dtype \"!f4\": unknown kind '!'",
        ),
    ] {
        for (asked, resp) in every_route(&d, name) {
            // What reads items as the dtype says is refused; stored bytes, chunks and
            // metadata are served as they are.
            if asked.contains("slice") || asked.starts_with("POST /api/fetch") {
                assert_damaged(&asked, &resp, detail, r);
                continue;
            }
            assert_eq!(resp.status, 200, "{asked}: {}", resp.text());
            if asked.contains("/raw/")
                || asked.contains("/download/")
                || asked.ends_with(name) && asked.contains("/fetch/")
            {
                assert!(resp.body == bytes, "{asked}: not the stored file");
            }
        }
    }
    check_others(&d);
    let m = d.get("/metrics").text();
    assert!(!m.contains("status=\"500\""), "{m}");
}

#[test]
fn a_sparse_frame_missing_a_chunk_file_is_damaged_where_that_chunk_is_read() {
    let root = data_root();
    let r = root.path();
    let params = strata::ndarray::ArrayParams::from_dtype(&[40], "<f4")
        .unwrap()
        .with_chunkshape(&[10])
        .with_blockshape(&[5]);
    strata::ndarray::NdArray::from_buffer(
        &params,
        &strata::ndarray::Location::Dir(r.join("holes.b2nd")),
        &common::f32_items(40),
    )
    .unwrap()
    .close()
    .unwrap();
    std::fs::remove_file(r.join("holes.b2nd/00000002.chunk")).unwrap();
    let d = Daemon::start(&["--root", &format!("@public={}", r.display())]);
    let detail = "the dataset is damaged: the chunk file 00000002.chunk is missing";
    for t in [
        "/api/fetch/@public/holes.b2nd",
        "/api/download/@public/holes.b2nd",
        "/api/fetch/@public/holes.b2nd?slice_=15:25",
        "/api/chunk/@public/holes.b2nd?nchunk=2",
        "/v1/chunk/@public/holes.b2nd/2",
        "/v1/slice/@public/holes.b2nd?sel=20",
    ] {
        assert_damaged(t, &d.get(t), detail, r);
    }
    assert_damaged(
        "chunks",
        &post(&d, "/v1/chunks/@public/holes.b2nd", "[1,2]"),
        detail,
        r,
    );
    // The chunks that are there are served.
    let s = d.get("/v1/slice/@public/holes.b2nd?sel=30:33");
    assert_eq!((s.status, floats(&s.body)), (200, vec![15.0, 15.5, 16.0]));
    assert_eq!(d.get("/api/info/@public/holes.b2nd").status, 200);
    let m = d.get("/metrics").text();
    assert!(!m.contains("status=\"500\""), "{m}");
}
