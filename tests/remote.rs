//! Remote frames over HTTP byte ranges, against a test server on 127.0.0.1 (tests/http):
//! arrays and super-chunks read by URL equal the local files, whatever the server does with
//! ranges (many per request, one, none); a sparse frame directory works too; a thin slice of
//! a large array moves only its blocks' bytes; and every fault (a server that dies
//! mid-body, truncates, changes the file, answers 404 or 5xx, redirects in a loop, or
//! answers too slowly) is a clear error in bounded time, never wrong data.
#![cfg(feature = "remote")]

mod http;

use http::{file, Fault, Ranges, Server};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use strata::chunk::CParams;
use strata::frame::{FrameIo, OpenMode, RemoteIo, RemoteOptions, Traffic};
use strata::ndarray::{ArrayParams, Location, NdArray, Slice};
use strata::schunk::{OpenOptions, SChunk};
use strata::Error;

/// A 3-d f32 array (60 × 70 × 80) with chunks of 25 × 30 × 40 and blocks of 10 × 10 × 20
/// (chunks well above the size read whole), written to `dir/name` (a directory for a
/// sparse frame); returns its data.
fn make_array(dir: &std::path::Path, name: &str, sparse: bool) -> Vec<u8> {
    let shape = [60usize, 70, 80];
    let n: usize = shape.iter().product();
    let data: Vec<u8> = (0..n)
        .flat_map(|i| ((i as f32 * 0.37).sin() * 1000.0).round().to_le_bytes())
        .collect();
    let params = ArrayParams::new(&shape, 4)
        .with_chunkshape(&[25, 30, 40])
        .with_blockshape(&[10, 10, 20])
        .with_dtype("<f4");
    let path = dir.join(name);
    let loc = if sparse {
        Location::Dir(path)
    } else {
        Location::File(path)
    };
    NdArray::from_buffer(&params, &loc, &data).unwrap();
    data
}

/// The files of `dir` (recursively), by path relative to it.
fn files_of(dir: &std::path::Path) -> HashMap<String, http::File> {
    let mut out = HashMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_str().unwrap().to_string();
                out.insert(rel, file(std::fs::read(&p).unwrap(), 1));
            }
        }
    }
    out
}

/// Options that give up fast (the fault tests).
fn quick() -> RemoteOptions {
    RemoteOptions {
        read_timeout: Duration::from_millis(500),
        request_timeout: Duration::from_secs(1),
        connect_timeout: Duration::from_secs(2),
        retries: 2,
        backoff: Duration::from_millis(10),
        ..RemoteOptions::default()
    }
}

fn open(url: &str, opts: &RemoteOptions) -> strata::Result<NdArray> {
    let read = OpenOptions::new(OpenMode::Read);
    NdArray::from_schunk(SChunk::open_remote(url, &read, opts)?)
}

/// Items `[a0..a1, b0..b1, c0..c1]` of the 60 × 70 × 80 f32 data.
fn expected(data: &[u8], r: [(usize, usize); 3]) -> Vec<u8> {
    let mut out = Vec::new();
    for i in r[0].0..r[0].1 {
        for j in r[1].0..r[1].1 {
            let at = ((i * 70 + j) * 80 + r[2].0) * 4;
            out.extend_from_slice(&data[at..at + (r[2].1 - r[2].0) * 4]);
        }
    }
    out
}

fn slices(r: [(usize, usize); 3]) -> Vec<Slice> {
    r.iter()
        .map(|&(a, b)| Slice::range(a as i64, b as i64))
        .collect()
}

const SELECTIONS: [[(usize, usize); 3]; 4] = [
    [(0, 60), (0, 70), (0, 80)],
    [(33, 34), (0, 70), (0, 80)],
    [(0, 60), (41, 42), (5, 6)],
    [(12, 49), (3, 66), (17, 79)],
];

#[test]
fn remote_arrays_read_as_the_local_files_whatever_the_server_does_with_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let data = make_array(dir.path(), "a.b2nd", false);
    make_array(dir.path(), "s.b2nd", true);
    let mut requests = Vec::new();
    for ranges in [Ranges::Many, Ranges::One, Ranges::None] {
        let srv = Server::start(files_of(dir.path()), ranges, None);
        for url in [srv.url("a.b2nd"), srv.url("s.b2nd"), srv.url("s.b2nd/")] {
            let arr = NdArray::open(&url, OpenMode::Read).unwrap();
            assert_eq!(arr.shape(), [60, 70, 80], "{url}");
            assert_eq!(arr.dtype(), Some("<f4"));
            assert!(arr.schunk().batches_reads());
            for sel in SELECTIONS {
                let (got, shape) = arr.get_slice_vec(&slices(sel)).unwrap();
                assert_eq!(shape, sel.map(|(a, b)| b - a), "{url} {ranges:?}");
                assert!(got == expected(&data, sel), "{url} {ranges:?} {sel:?}");
            }
            assert!(arr.to_vec().unwrap() == data, "{url} {ranges:?}");
        }
        let arr = NdArray::open(srv.url("a.b2nd"), OpenMode::Read).unwrap();
        let before = arr.schunk().traffic().unwrap();
        arr.get_slice_vec(&slices(SELECTIONS[3])).unwrap();
        let after = arr.schunk().traffic().unwrap();
        requests.push(after.requests - before.requests);
    }
    // 27 chunks touched: many ranges per request take fewest requests; one range per
    // request at most a few per step; a server without ranges sent the small file whole
    // once, at open, and nothing since.
    let [many, one, none] = requests[..] else {
        unreachable!()
    };
    assert!(many <= 3, "{requests:?}");
    assert!(one > many && one <= 3 * 8, "{requests:?}");
    assert_eq!(none, 0, "{requests:?}");
}

#[test]
fn a_remote_frame_is_read_only() {
    let dir = tempfile::tempdir().unwrap();
    make_array(dir.path(), "a.b2nd", false);
    let srv = Server::start(files_of(dir.path()), Ranges::Many, None);
    for mode in [OpenMode::ReadWrite, OpenMode::Append] {
        let e = SChunk::open(srv.url("a.b2nd"), mode).unwrap_err();
        assert!(
            matches!(e.root(), Error::Unsupported { what } if what.contains("read-only")),
            "{e}"
        );
    }
    let mut io = RemoteIo::open(&srv.url("a.b2nd"), &RemoteOptions::default()).unwrap();
    let e = io.write_at(strata::frame::Obj::Frame, 0, b"x").unwrap_err();
    assert!(e.to_string().contains("read-only"), "{e}");
    // A super-chunk by URL: its chunks as stored.
    let local = SChunk::open(dir.path().join("a.b2nd"), OpenMode::Read).unwrap();
    let remote = SChunk::open(srv.url("a.b2nd"), OpenMode::Read).unwrap();
    assert_eq!(remote.nchunks(), local.nchunks());
    for n in 0..local.nchunks() {
        assert_eq!(remote.chunk(n).unwrap(), local.chunk(n).unwrap());
    }
    assert_eq!(remote.path(), srv.url("a.b2nd"));
}

/// The bytes a lazy read of blocks `nblocks` of stored chunk `chunk` needs: its header, its
/// `bstarts`, and each block from its `bstart` to the next larger one.
fn lazy_bytes(chunk: &[u8], nblocks: &[usize]) -> u64 {
    let h = strata::format::chunk::ChunkHeader::parse(chunk).unwrap();
    let nb = h.nblocks();
    let starts: Vec<usize> = (0..nb)
        .map(|b| {
            let at = 32 + 4 * b;
            i32::from_le_bytes(chunk[at..at + 4].try_into().unwrap()) as usize
        })
        .collect();
    let mut sorted = starts.clone();
    sorted.sort_unstable();
    let blocks: usize = nblocks
        .iter()
        .map(|&b| {
            let next = sorted.iter().copied().find(|&s| s > starts[b]);
            next.unwrap_or(h.cbytes) - starts[b]
        })
        .sum();
    (32 + 4 * nb + blocks) as u64
}

#[test]
fn a_thin_slice_of_a_large_remote_array_moves_only_its_blocks() {
    // 4096 × 8192 f64 = 256 MiB: 8 × 8 chunks of 512 × 1024 (4 MiB), 8 × 8 blocks of
    // 64 × 128 (64 KiB) each.
    let (rows, cols) = (4096usize, 8192usize);
    let data: Vec<u8> = (0..rows * cols)
        .flat_map(|i| (((i % 7919) as f64) * 0.5 + (i / cols) as f64).to_le_bytes())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.b2nd");
    let params = ArrayParams::new(&[rows, cols], 8)
        .with_chunkshape(&[512, 1024])
        .with_blockshape(&[64, 128])
        .with_dtype("<f8")
        .with_cparams(&CParams::default().with_clevel(1));
    NdArray::from_buffer(&params, &Location::File(path.clone()), &data).unwrap();
    let local = NdArray::open(&path, OpenMode::Read).unwrap();
    assert_eq!(local.nbytes(), 256 << 20);
    let srv = Server::start(files_of(dir.path()), Ranges::Many, None);
    let arr = NdArray::open(srv.url("big.b2nd"), OpenMode::Read).unwrap();
    // The open: the fixed header, then the rest of the header and the tail (offsets index,
    // trailer) in one request.
    let h = local.schunk().header();
    let open_bytes = h.header_len as u64 + (h.frame_len - h.header_len as u64 - h.cbytes as u64);
    assert_eq!(
        arr.schunk().traffic().unwrap(),
        Traffic {
            bytes: open_bytes,
            requests: 2
        }
    );
    // Row 1000, all columns: chunk row 1, block row 7 of each of the 8 chunks.
    let row = 1000usize;
    let sel = [
        Slice::range(row as i64, row as i64 + 1),
        Slice::new(None, None, 1),
    ];
    let mut out = vec![0u8; cols * 8];
    let stats = arr.get_slice(&sel, &mut out).unwrap();
    assert!(out == data[row * cols * 8..(row + 1) * cols * 8]);
    let need: u64 = (8..16)
        .map(|n| {
            lazy_bytes(
                &local.schunk().chunk(n).unwrap(),
                &(56..64).collect::<Vec<_>>(),
            )
        })
        .sum();
    let moved = arr.schunk().traffic().unwrap();
    let slice_bytes = moved.bytes - open_bytes;
    assert_eq!(stats.bytes_read, slice_bytes);
    assert!(
        slice_bytes <= need,
        "the slice moved {slice_bytes} bytes, its blocks (with chunk headers and bstarts) are {need}"
    );
    assert!(slice_bytes >= need - need / 10, "{slice_bytes} of {need}");
    // Headers and bstarts of the 8 chunks in one request, their blocks in one more.
    assert_eq!((moved.requests - 2, stats.requests), (2, 2));
    // 64 of the 4096 blocks.
    assert!(need < local.cbytes() / 50, "{need} of {}", local.cbytes());
}

#[test]
fn a_sparse_frame_checks_its_index_when_it_meets_a_chunk_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = make_array(dir.path(), "s.b2nd", true);
    let srv = Server::start(files_of(dir.path()), Ranges::Many, None);
    let arr = NdArray::open(srv.url("s.b2nd"), OpenMode::Read).unwrap();
    let one = [(0, 25), (0, 30), (0, 40)];
    assert!(arr.get_slice_vec(&slices(one)).unwrap().0 == expected(&data, one));
    // The index is rewritten (same bytes, new version): the next chunk file met fails.
    let index = srv.files.lock().unwrap()["s.b2nd/chunks.b2frame"]
        .bytes
        .to_vec();
    srv.replace("s.b2nd/chunks.b2frame", file(index, 2));
    let e = arr
        .get_slice_vec(&slices([(30, 40), (0, 30), (0, 40)]))
        .unwrap_err();
    assert!(e.to_string().contains("changed since it was opened"), "{e}");
    // A chunk file already met that changes fails too.
    let arr = NdArray::open(srv.url("s.b2nd/"), OpenMode::Read).unwrap();
    assert!(arr.get_slice_vec(&slices(one)).unwrap().0 == expected(&data, one));
    let c0 = srv.files.lock().unwrap()["s.b2nd/00000000.chunk"]
        .bytes
        .to_vec();
    srv.replace("s.b2nd/00000000.chunk", file(c0, 3));
    let e = arr.get_slice_vec(&slices(one)).unwrap_err();
    assert!(e.to_string().contains("ETag"), "{e}");
}

/// A server of the small array (`a.b2nd`) with `fault`, and the array's data.
fn faulty(fault: Option<Fault>) -> (tempfile::TempDir, Server, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let data = make_array(dir.path(), "a.b2nd", false);
    let srv = Server::start(files_of(dir.path()), Ranges::Many, fault);
    (dir, srv, data)
}

/// Runs `f`, which must fail in less than `most`; returns its error.
fn fails_within<T: std::fmt::Debug>(
    most: Duration,
    f: impl FnOnce() -> strata::Result<T>,
) -> Error {
    let t = Instant::now();
    let e = f().unwrap_err();
    assert!(t.elapsed() < most, "{e} after {:?}", t.elapsed());
    e
}

#[test]
fn a_server_that_dies_or_truncates_is_an_error_after_the_retries() {
    let whole = [(0, 60), (0, 70), (0, 80)];
    for fault in [
        Fault::DieMidBody {
            after: 100,
            spare: 2,
        },
        Fault::Truncate { spare: 2 },
    ] {
        let (_dir, srv, _) = faulty(Some(fault.clone()));
        let url = srv.url("a.b2nd");
        let arr = open(&url, &quick()).unwrap();
        let e = fails_within(Duration::from_secs(5), || arr.get_slice_vec(&slices(whole)));
        let m = e.to_string();
        assert!(
            matches!(
                e,
                Error::Remote {
                    status: Some(206),
                    ..
                }
            ),
            "{fault:?}: {e}"
        );
        assert!(
            m.starts_with(&url) && m.contains("gave up after 3 attempts"),
            "{m}"
        );
        assert!(m.contains("broke while reading the answer"), "{m}");
    }
    // Failures that pass: the retries succeed.
    let (_dir, srv, data) = faulty(Some(Fault::FailFirst { count: 2 }));
    let arr = open(&srv.url("a.b2nd"), &quick()).unwrap();
    assert!(arr.to_vec().unwrap() == data);
    assert_eq!(arr.schunk().traffic().unwrap().requests, 2 + 2 + 2);
}

#[test]
fn a_changed_file_is_an_error_not_a_mix_of_versions() {
    let (_dir, srv, data) = faulty(None);
    let arr = open(&srv.url("a.b2nd"), &quick()).unwrap();
    let part = [(0, 25), (0, 30), (0, 40)];
    assert!(arr.get_slice_vec(&slices(part)).unwrap().0 == expected(&data, part));
    // The same bytes under a new ETag: If-Range makes the server send the whole file, whose
    // ETag is not the one opened.
    let old = srv.files.lock().unwrap()["a.b2nd"].clone();
    let bytes = old.bytes.to_vec();
    srv.replace("a.b2nd", file(bytes.clone(), 2));
    let e = arr
        .get_slice_vec(&slices([(30, 40), (0, 30), (0, 40)]))
        .unwrap_err();
    assert!(
        matches!(e, Error::Remote { status: Some(200), ref message, .. }
            if message.contains("changed since it was opened") && message.contains("ETag")),
        "{e}"
    );
    // A new length under the old ETag (a server that ignores If-Range would send it).
    let mut longer = bytes;
    longer.extend_from_slice(&[0; 10]);
    srv.replace(
        "a.b2nd",
        http::File {
            bytes: std::sync::Arc::new(longer),
            etag: old.etag,
        },
    );
    let e = arr
        .get_slice_vec(&slices([(30, 40), (0, 30), (0, 40)]))
        .unwrap_err();
    assert!(e.to_string().contains("changed since it was opened"), "{e}");
}

#[test]
fn without_an_etag_the_last_modified_date_and_the_length_tell_a_changed_file() {
    let (_dir, srv, data) = faulty(Some(Fault::NoEtag));
    let arr = open(&srv.url("a.b2nd"), &quick()).unwrap();
    let part = [(0, 25), (0, 30), (0, 40)];
    assert!(arr.get_slice_vec(&slices(part)).unwrap().0 == expected(&data, part));
    let old = srv.files.lock().unwrap()["a.b2nd"].clone();
    let new = file(old.bytes.to_vec(), 2);
    let (was, now) = (http::last_modified(&old), http::last_modified(&new));
    assert_ne!(was, now);
    srv.replace("a.b2nd", new);
    let e = arr
        .get_slice_vec(&slices([(30, 40), (0, 30), (0, 40)]))
        .unwrap_err();
    assert!(
        matches!(e, Error::Remote { status: Some(200), ref message, .. }
            if message.contains(&format!("it was last modified {was}, it is now {now}"))),
        "{e}"
    );
    // The same date, another length.
    let mut longer = old.bytes.to_vec();
    longer.extend_from_slice(&[0; 10]);
    srv.replace(
        "a.b2nd",
        http::File {
            bytes: std::sync::Arc::new(longer),
            etag: old.etag,
        },
    );
    let e = arr
        .get_slice_vec(&slices([(30, 40), (0, 30), (0, 40)]))
        .unwrap_err();
    assert!(
        e.to_string().contains(&format!(
            "it had {} bytes, it now has {}",
            old.bytes.len(),
            old.bytes.len() + 10
        )),
        "{e}"
    );
}

#[test]
fn missing_files_statuses_redirects_and_slow_servers_are_clear_errors() {
    let (_dir, srv, data) = faulty(Some(Fault::Redirect));
    // A redirect is followed, and later requests go where it led.
    let arr = open(&srv.url("r/a.b2nd"), &quick()).unwrap();
    assert!(arr.to_vec().unwrap() == data);
    let e = fails_within(Duration::from_secs(5), || {
        open(&srv.url("nothing.b2nd"), &quick())
    });
    assert!(
        matches!(e, Error::Remote { status: Some(404), ref url, ref message }
            if url.ends_with("/nothing.b2nd") && message.contains("404 Not Found")),
        "{e}"
    );
    assert_eq!(e.code(), -1004);

    let (_dir, srv, _) = faulty(Some(Fault::RedirectLoop));
    let e = fails_within(Duration::from_secs(5), || {
        open(&srv.url("a.b2nd"), &quick())
    });
    assert!(e.to_string().contains("more than 5 redirects"), "{e}");

    let (_dir, srv, _) = faulty(Some(Fault::Status {
        code: 500,
        spare: 2,
    }));
    let arr = open(&srv.url("a.b2nd"), &quick()).unwrap();
    let e = fails_within(Duration::from_secs(5), || arr.to_vec());
    assert!(
        matches!(e, Error::Remote { status: Some(500), ref message, .. }
            if message.contains("gave up after 3 attempts")),
        "{e}"
    );
    let (_dir, srv, _) = faulty(Some(Fault::Status {
        code: 403,
        spare: 2,
    }));
    let arr = open(&srv.url("a.b2nd"), &quick()).unwrap();
    let e = fails_within(Duration::from_secs(2), || arr.to_vec());
    assert!(e.to_string().contains("403"), "{e}");

    // Slower than the read timeout (500 ms), three times: an error within 4 s.
    let (_dir, srv, _) = faulty(Some(Fault::Slow {
        delay: Duration::from_secs(3),
        spare: 2,
    }));
    let arr = open(&srv.url("a.b2nd"), &quick()).unwrap();
    let e = fails_within(Duration::from_secs(4), || arr.to_vec());
    assert!(e.to_string().contains("timed out"), "{e}");

    // A body sent a byte every 100 ms (each read well within the read timeout) stops at the
    // whole-request timeout (1 s), three times: an error within 5 s.
    let (_dir, srv, _) = faulty(Some(Fault::Trickle {
        pause: Duration::from_millis(100),
        spare: 2,
    }));
    let arr = open(&srv.url("a.b2nd"), &quick()).unwrap();
    let e = fails_within(Duration::from_secs(5), || arr.to_vec());
    assert!(
        matches!(e, Error::Remote { ref message, .. }
            if message.contains("timed out") && message.contains("gave up after 3 attempts")),
        "{e}"
    );

    // Not a URL, not a frame.
    let e = RemoteIo::open("ftp://x/y", &quick()).unwrap_err();
    assert!(
        matches!(e, Error::InFile { ref path, ref source }
            if path == "ftp://x/y" && matches!(**source, Error::Unsupported { .. })),
        "{e}"
    );
    assert_eq!(e.code(), -12);
    let (_dir, srv, _) = faulty(None);
    srv.replace(
        "text",
        file(
            b"hello, not a frame at all, but long enough to parse as one; \
        more than eighty-seven bytes of it"
                .to_vec(),
            1,
        ),
    );
    let url = srv.url("text");
    let e = open(&url, &quick()).unwrap_err();
    assert!(
        matches!(e, Error::Frame { ref path, .. } if *path == url)
            && matches!(e.root(), Error::Msgpack { at: 0, .. }),
        "{e:?}"
    );
    assert_eq!(e.code(), -11, "{e}");
}

#[test]
fn a_block_cache_serves_repeated_reads_of_a_remote_array_without_requests() {
    use std::sync::Arc;
    use strata::cache::BlockCache;
    let dir = tempfile::tempdir().unwrap();
    let data = make_array(dir.path(), "a.b2nd", false);
    let srv = Server::start(files_of(dir.path()), Ranges::Many, None);
    let cache = Arc::new(BlockCache::new(64 << 20));
    let part = [(5, 45), (10, 60), (0, 80)];
    let read = |arr: &NdArray| {
        let before = arr.schunk().traffic().unwrap();
        let (got, _) = arr.get_slice_vec(&slices(part)).unwrap();
        assert!(got == expected(&data, part));
        arr.schunk().traffic().unwrap().requests - before.requests
    };
    let arr = NdArray::open(srv.url("a.b2nd"), OpenMode::Read)
        .unwrap()
        .with_cache(cache.clone());
    assert!(read(&arr) > 0);
    assert_eq!(read(&arr), 0, "every block from the cache");
    // Opened again: the same version (URL, ETag, length), the same blocks.
    let again = NdArray::open(srv.url("a.b2nd"), OpenMode::Read)
        .unwrap()
        .with_cache(cache.clone());
    assert_eq!(read(&again), 0);
    // A new version of the file is another dataset.
    let bytes = srv.files.lock().unwrap()["a.b2nd"].bytes.to_vec();
    srv.replace("a.b2nd", file(bytes, 2));
    let newer = NdArray::open(srv.url("a.b2nd"), OpenMode::Read)
        .unwrap()
        .with_cache(cache);
    assert!(read(&newer) > 0);
}
