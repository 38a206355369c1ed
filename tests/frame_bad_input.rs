//! Malformed frames give errors that name the file and say what is wrong: every truncation
//! of a small frame, wrong magic, lying offsets and lengths, an index pointing outside the
//! file, metalayer lengths past the end, a sparse directory missing a chunk file. No panic,
//! no allocation sized by a lying field. Devices, FIFOs and sockets are refused without waiting;
//! frames replace only regular files and are written through symbolic links.

use std::os::unix::fs::FileTypeExt;
use strata::chunk::{compress_vec, CParams};
use strata::format::chunk::SpecialType;
use strata::frame::{OpenMode, SyncPolicy};
use strata::schunk::{Location, SChunk, SChunkOptions};

fn sample() -> Vec<u8> {
    let o = SChunkOptions {
        cparams: CParams {
            typesize: 4,
            nthreads: 1,
            ..CParams::default()
        },
        metalayers: vec![("meta".into(), vec![0x93, 1, 2, 3])],
        ..SChunkOptions::default()
    };
    let mut s = SChunk::new(&o).unwrap();
    let data: Vec<u8> = (0..2000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
    for p in data.chunks(4000) {
        s.append_buffer(p).unwrap();
    }
    let zeros =
        strata::chunk::special_chunk(&s.cparams().clone(), SpecialType::Zero, 4000, None).unwrap();
    s.append_chunk(&zeros).unwrap();
    s.vlmeta_set("vl", b"some value", None).unwrap();
    s.to_cframe().unwrap()
}

/// Opens `bytes` as a file and reads everything; returns the first error.
fn open_and_read(path: &std::path::Path, bytes: &[u8]) -> strata::Result<()> {
    std::fs::write(path, bytes).unwrap();
    let s = SChunk::open(path, OpenMode::Read)?;
    for n in s.vlmeta_names() {
        s.vlmeta(n)?;
    }
    s.decompress_all()?;
    for i in 0..s.nchunks() {
        s.decompress_chunk_vec(i)?;
        let mut b = [0u8; 4];
        s.getitem(i, 0, 1, &mut b)?;
    }
    Ok(())
}

fn header_len(f: &[u8]) -> usize {
    u32::from_be_bytes(f[11..15].try_into().unwrap()) as usize
}

fn cbytes(f: &[u8]) -> usize {
    u64::from_be_bytes(f[39..47].try_into().unwrap()) as usize
}

#[test]
fn every_truncation_is_an_error_naming_the_file() {
    let f = sample();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.b2frame");
    open_and_read(&path, &f).unwrap();
    for cut in 0..f.len() {
        let e = open_and_read(&path, &f[..cut]).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("cut.b2frame"), "cut {cut}: {msg}");
        assert!([-11, -13, -5].contains(&e.code()), "cut {cut}: {e:?}");
        // In memory too: frame_len must equal the buffer length.
        assert!(SChunk::from_cframe(f[..cut].to_vec()).is_err());
    }
    let mut longer = f.clone();
    longer.push(0);
    let e = SChunk::from_cframe(longer.clone()).unwrap_err();
    assert!(e.to_string().contains("frame_len"), "{e}");
    // A file may have bytes past frame_len (C-Blosc2 accepts it too).
    open_and_read(&path, &longer).unwrap();
}

#[test]
fn lies_are_errors() {
    let f = sample();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lie.b2frame");
    let hl = header_len(&f);
    type Lie = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(&str, Lie)> = vec![
        ("magic", Box::new(|f| f[3] = b'X')),
        ("frame type", Box::new(|f| f[26] = 1)),
        ("version", Box::new(|f| f[25] = 0x14)),
        ("header_len", Box::new(|f| f[14] = 10)),
        ("frame_len", Box::new(|f| f[16] = 0x7f)),
        ("typesize", Box::new(|f| f[48..52].copy_from_slice(&[0; 4]))),
        ("cbytes past the file", Box::new(|f| f[40] = 0x10)),
        (
            "cbytes short",
            Box::new(|f| {
                let c = (cbytes(f) - 40) as u64;
                f[39..47].copy_from_slice(&c.to_be_bytes());
            }),
        ),
        (
            "nbytes huge, chunksize 1",
            Box::new(|f| {
                f[30..38].copy_from_slice(&(1u64 << 40).to_be_bytes());
                f[58..62].copy_from_slice(&1i32.to_be_bytes());
            }),
        ),
        ("nbytes vs index", Box::new(|f| f[36] += 0x10)),
        (
            "chunksize negative",
            Box::new(|f| f[58..62].copy_from_slice(&(-5i32).to_be_bytes())),
        ),
        ("metalayer length", Box::new(move |f| f[hl - 8] = 0x7f)),
        ("metalayer offset", Box::new(|f| f[101] = 0x7f)),
        (
            "trailer length",
            Box::new(|f| {
                let n = f.len();
                f[n - 20] = 0x7f;
            }),
        ),
        (
            "trailer marker",
            Box::new(|f| {
                let n = f.len();
                f[n - 23] = 0;
            }),
        ),
        (
            "vlmeta offset",
            Box::new(|f| {
                let n = f.len();
                let t = u32::from_be_bytes(f[n - 22..n - 18].try_into().unwrap()) as usize;
                f[n - t + 12] = 0x7f;
            }),
        ),
        (
            "offsets chunk cbytes",
            Box::new(move |f| {
                let at = hl + cbytes(f) + 12;
                f[at + 2] = 0x7f;
            }),
        ),
        (
            "offset outside the data",
            Box::new(move |f| {
                let at = hl + cbytes(f);
                let nb = i32::from_le_bytes(f[at + 4..at + 8].try_into().unwrap()) as usize;
                let flags = f[at + 2];
                assert!(flags & 2 != 0, "memcpyed index expected");
                let last = at + 32 + nb - 8;
                f[last..last + 8].copy_from_slice(&(1i64 << 40).to_le_bytes());
            }),
        ),
        (
            "chunk cbytes",
            Box::new(move |f| {
                f[hl + 12 + 1] = 0x7f;
            }),
        ),
        (
            "chunk nbytes vs the frame's chunksize",
            Box::new(move |f| {
                f[hl + 4..hl + 8].copy_from_slice(&0x7fff_ffe0i32.to_le_bytes());
            }),
        ),
        (
            "special kind",
            Box::new(move |f| {
                let at = hl + cbytes(f);
                f[at + 32 + 7] = 0x80;
            }),
        ),
    ];
    for (what, lie) in cases {
        let mut b = f.clone();
        lie(&mut b);
        let e = open_and_read(&path, &b).expect_err(what);
        if what.starts_with("chunk nbytes") {
            let msg = e.to_string();
            assert!(msg.contains("chunk 0: "), "{msg}");
            assert!(msg.contains("2147483616 is not 4000"), "{msg}");
            assert!(
                matches!(
                    e.root(),
                    strata::Error::InvalidHeader {
                        value: 0x7fff_ffe0,
                        expected: strata::error::Expected::Exactly(4000),
                        ..
                    }
                ),
                "{e:?}"
            );
        }
        assert!(e.to_string().contains("lie.b2frame"), "{what}: {e}");
        assert!(
            [-11, -24, -13, -5, -6, -3, -17, -10].contains(&e.code()),
            "{what}: {e:?}"
        );
    }
}

#[test]
fn sparse_directory_missing_a_chunk_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("sparse.b2frame");
    let o = SChunkOptions {
        cparams: CParams {
            typesize: 4,
            nthreads: 1,
            ..CParams::default()
        },
        sync: SyncPolicy::None,
        ..SChunkOptions::default()
    };
    let mut s = SChunk::create(&Location::Dir(d.clone()), &o).unwrap();
    for i in 0..3u32 {
        let data: Vec<u8> = (0..1000u32).flat_map(|k| (k + i).to_le_bytes()).collect();
        s.append_chunk(&compress_vec(s.cparams(), &data).unwrap())
            .unwrap();
    }
    drop(s);
    std::fs::remove_file(d.join("00000001.chunk")).unwrap();
    let s = SChunk::open(&d, OpenMode::Read).unwrap();
    s.decompress_chunk_vec(0).unwrap();
    let e = s.decompress_chunk_vec(1).unwrap_err();
    assert!(e.to_string().contains("00000001.chunk"), "{e}");
    assert_eq!(e.code(), -15);
    std::fs::write(d.join("00000002.chunk"), b"short").unwrap();
    let e = s.decompress_chunk_vec(2).unwrap_err();
    assert!(e.to_string().contains("00000002.chunk"), "{e}");
    std::fs::remove_file(d.join("chunks.b2frame")).unwrap();
    let e = SChunk::open(&d, OpenMode::Read).unwrap_err();
    assert!(e.to_string().contains("chunks.b2frame"), "{e}");
    // A contiguous frame where a sparse one is expected, and the reverse.
    std::fs::write(d.join("chunks.b2frame"), sample()).unwrap();
    assert_eq!(SChunk::open(&d, OpenMode::Read).unwrap_err().code(), -24);
}

#[test]
fn missing_file() {
    let e = SChunk::open("/nonexistent/x.b2frame", OpenMode::Read).unwrap_err();
    assert_eq!(e.code(), -15);
    assert!(e.to_string().contains("/nonexistent/x.b2frame"));
}

/// Runs `f` on a thread; panics if it takes more than 10 s (a read that never ends).
fn within_seconds<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(f()));
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .unwrap_or_else(|_| panic!("{what} did not return within 10 s"))
}

fn open_error(path: &std::path::Path) -> String {
    let p = path.to_owned();
    let what = format!("SChunk::open({})", path.display());
    let r = within_seconds(&what, move || SChunk::open(&p, OpenMode::Read).map(|_| ()));
    let e = r.unwrap_err();
    assert_eq!(e.code(), -15, "{e}");
    e.to_string()
}

#[test]
fn devices_fifos_and_sockets_are_refused_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.b2frame");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let socket = dir.path().join("socket.b2frame");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let not_regular = |path: &std::path::Path, kind: &str| {
        format!(
            "{}: cannot open: {kind} is not a regular file, the only kind a frame is stored in",
            path.display()
        )
    };
    // /dev/zero never ends: it would be read forever.
    let zero = std::path::Path::new("/dev/zero");
    assert_eq!(open_error(zero), not_regular(zero, "a character device"));
    assert_eq!(open_error(&fifo), not_regular(&fifo, "a FIFO"));
    let e = open_error(&socket);
    assert!(
        e.starts_with(&format!("{}: cannot open: ", socket.display())),
        "{e}"
    );
    // A sparse frame whose chunk file is a FIFO: its chunk cannot be read, and nothing waits.
    let sparse = dir.path().join("sparse");
    let o = SChunkOptions {
        cparams: CParams {
            typesize: 4,
            ..CParams::default()
        },
        ..SChunkOptions::default()
    };
    let mut s = SChunk::create(&Location::Dir(sparse.clone()), &o).unwrap();
    s.append_buffer(&[7u8; 4000]).unwrap();
    s.close().unwrap();
    let chunk = sparse.join("00000000.chunk");
    std::fs::remove_file(&chunk).unwrap();
    assert!(std::process::Command::new("mkfifo")
        .arg(&chunk)
        .status()
        .unwrap()
        .success());
    let e = within_seconds("reading a FIFO chunk", move || {
        SChunk::open(&sparse, OpenMode::Read).and_then(|s| s.decompress_chunk_vec(0))
    })
    .unwrap_err();
    assert_eq!(e.to_string(), not_regular(&chunk, "a FIFO"));
}

#[test]
fn frames_replace_only_regular_files_and_write_through_links() {
    let dir = tempfile::tempdir().unwrap();
    let o = SChunkOptions {
        cparams: CParams {
            typesize: 4,
            ..CParams::default()
        },
        overwrite: true,
        ..SChunkOptions::default()
    };
    // A FIFO, a symbolic link and a directory are not replaced by a new frame file.
    let fifo = dir.path().join("fifo.b2frame");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let target = dir.path().join("target.b2frame");
    std::fs::write(&target, b"keep").unwrap();
    let link = dir.path().join("link.b2frame");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let subdir = dir.path().join("dir.b2frame");
    std::fs::create_dir(&subdir).unwrap();
    for (path, kind) in [
        (&fifo, "a FIFO"),
        (&link, "a symbolic link"),
        (&subdir, "a directory"),
    ] {
        let e = SChunk::create(&Location::File(path.clone()), &o).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: cannot open: {kind} is not a regular file: a frame replaces only a regular file",
                path.display()
            )
        );
    }
    let e = SChunk::create(&Location::Dir(fifo.clone()), &o).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: cannot open: a FIFO is not a directory: a sparse frame replaces only a directory",
            fifo.display()
        )
    );
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    // A frame opened for writing through a link is rewritten at the link's target.
    let mut s = SChunk::create(&Location::File(target.clone()), &o).unwrap();
    s.append_buffer(&[1u8; 4000]).unwrap();
    s.close().unwrap();
    let mut s = SChunk::open(&link, OpenMode::ReadWrite).unwrap();
    s.vlmeta_set("note", b"through the link", None).unwrap();
    s.append_buffer(&[2u8; 4000]).unwrap();
    s.close().unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let s = SChunk::open(&target, OpenMode::Read).unwrap();
    assert_eq!(s.nchunks(), 2);
    assert_eq!(s.vlmeta("note").unwrap(), b"through the link");
}

#[test]
fn a_sparse_frames_chunk_file_that_is_a_symlink_is_refused_not_read_through() {
    let dir = tempfile::tempdir().unwrap();
    let o = SChunkOptions::default().with_chunksize(4000);
    let make = |path: &std::path::Path, byte: u8| {
        let mut s = SChunk::create(&Location::Dir(path.to_path_buf()), &o).unwrap();
        s.append_buffer(&[byte; 4000]).unwrap();
        s.append_buffer(&[byte; 4000]).unwrap();
        s.close().unwrap();
    };
    let sparse = dir.path().join("sp.b2frame");
    make(&sparse, 1);
    make(&dir.path().join("other.b2frame"), 9);
    let s = SChunk::open(&sparse, OpenMode::Read).unwrap();
    // Chunk 1's file replaced by a symlink to another frame's chunk (which would decode).
    let chunk1 = sparse.join("00000001.chunk");
    std::fs::remove_file(&chunk1).unwrap();
    std::os::unix::fs::symlink(dir.path().join("other.b2frame/00000001.chunk"), &chunk1).unwrap();
    assert_eq!(s.decompress_chunk_vec(0).unwrap(), vec![1u8; 4000]);
    let e = s.decompress_chunk_vec(1).unwrap_err();
    assert_eq!(
        e.root().to_string(),
        format!(
            "{}: cannot open: a symbolic link is not a regular file, the only kind a frame is stored in",
            chunk1.display()
        )
    );
}
