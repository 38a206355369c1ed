//! The super-chunk API: chunk operations and the fixed-chunksize rule, special chunks,
//! fill_special, lazy partial reads (counted at the store), metalayers, vlmetalayers, open
//! modes and persistence in the three layouts.

mod counting;
use counting::Counting;
use std::sync::atomic::Ordering;
use strata::chunk::{compress_vec, special_chunk, CParams};
use strata::format::chunk::SpecialType;
use strata::format::frame::ChunkLoc;
use strata::frame::{OpenMode, SyncPolicy};
use strata::schunk::values::{self, Value};
use strata::schunk::{Location, OpenOptions, SChunk, SChunkOptions};
use strata::CodecId;

const CS: usize = 4000;

fn cparams(typesize: usize) -> CParams {
    CParams {
        typesize,
        nthreads: 1,
        ..CParams::default()
    }
}

fn opts(typesize: usize) -> SChunkOptions {
    SChunkOptions {
        cparams: cparams(typesize),
        chunksize: CS,
        ..SChunkOptions::default()
    }
}

fn piece(i: u32, n: usize) -> Vec<u8> {
    (0..n as u32 / 4)
        .flat_map(|k| (k.wrapping_mul(7) ^ i).to_le_bytes())
        .collect()
}

fn chunk(i: u32, n: usize) -> Vec<u8> {
    compress_vec(&cparams(4), &piece(i, n)).unwrap()
}

#[test]
fn chunk_operations_keep_order_and_sizes() {
    let mut s = SChunk::new(&opts(4)).unwrap();
    for i in 0..4 {
        assert_eq!(s.append_chunk(&chunk(i, CS)).unwrap(), i as usize + 1);
    }
    s.insert_chunk(1, &chunk(10, CS)).unwrap();
    s.update_chunk(0, &chunk(11, CS)).unwrap();
    s.update_chunk(
        3,
        &special_chunk(&cparams(4), SpecialType::Zero, CS, None).unwrap(),
    )
    .unwrap();
    s.delete_chunk(2).unwrap();
    s.append_chunk(&chunk(12, 1000)).unwrap();
    let want = [
        piece(11, CS),
        piece(10, CS),
        vec![0; CS],
        piece(3, CS),
        piece(12, 1000),
    ];
    assert_eq!(s.nchunks(), 5);
    assert_eq!(s.nbytes(), (4 * CS + 1000) as u64);
    for (i, w) in want.iter().enumerate() {
        assert_eq!(&s.decompress_chunk_vec(i).unwrap(), w, "chunk {i}");
    }
    assert_eq!(s.decompress_all().unwrap(), want.concat());
    assert_eq!(s.iter().map(Result::unwrap).collect::<Vec<_>>(), want);
    assert!(matches!(
        s.chunk_info(2).unwrap().loc,
        ChunkLoc::Special(SpecialType::Zero)
    ));
    assert_eq!(s.chunk_info(2).unwrap().cbytes, 0);
    assert_eq!(s.chunk(2).unwrap().len(), 32);
    // The frame survives a round trip through bytes.
    let back = SChunk::from_cframe(s.to_cframe().unwrap()).unwrap();
    assert_eq!(back.decompress_all().unwrap(), want.concat());
}

#[test]
fn fixed_chunksize_rule_is_enforced() {
    let mut s = SChunk::new(&opts(4)).unwrap();
    s.append_chunk(&chunk(0, CS)).unwrap();
    assert_eq!(s.append_chunk(&chunk(1, CS + 4)).unwrap_err().code(), -20);
    s.append_chunk(&chunk(1, 400)).unwrap();
    // After a short last chunk nothing more can be appended.
    assert_eq!(s.append_chunk(&chunk(2, 400)).unwrap_err().code(), -20);
    assert_eq!(s.insert_chunk(0, &chunk(2, 400)).unwrap_err().code(), -19);
    assert_eq!(s.update_chunk(0, &chunk(2, 400)).unwrap_err().code(), -21);
    s.update_chunk(1, &chunk(2, 800)).unwrap();
    assert_eq!(s.insert_chunk(9, &chunk(2, CS)).unwrap_err().code(), -33);
    assert_eq!(s.delete_chunk(5).unwrap_err().code(), -33);
    assert_eq!(s.decompress_chunk_vec(1).unwrap(), piece(2, 800));
    assert_eq!(s.chunksize(), Some(CS));
}

#[test]
fn special_chunks_cost_nothing_and_fill_special() {
    let mut s = SChunk::new(&opts(8)).unwrap();
    let n = s
        .fill_special(1_000_003, SpecialType::Nan, 8 * 1024)
        .unwrap();
    assert_eq!(n, (1_000_003usize * 8).div_ceil(8 * 1024));
    assert_eq!(s.cbytes(), 0);
    assert!(s.frame_len() < 200, "{} bytes", s.frame_len());
    let last = s.decompress_chunk_vec(n - 1).unwrap();
    assert_eq!(last.len(), 1_000_003 * 8 % (8 * 1024));
    assert!(last
        .chunks(8)
        .all(|b| f64::from_le_bytes(b.try_into().unwrap()).is_nan()));
    assert_eq!(
        s.fill_special(1, SpecialType::Zero, 8).unwrap_err().code(),
        -28
    );
    let mut z = SChunk::new(&opts(4)).unwrap();
    assert_eq!(
        z.fill_special(10, SpecialType::Zero, 6).unwrap_err().code(),
        -12
    );
    assert_eq!(
        z.fill_special(10, SpecialType::Value, 8)
            .unwrap_err()
            .code(),
        -12
    );
}

#[test]
fn single_chunk_over_the_blosc2_limit_is_an_error() {
    let mut s = SChunk::new(&opts(1)).unwrap();
    // Zeroed pages that are never touched: the size is refused before any read.
    let big = vec![0u8; strata::format::chunk::MAX_BUFFERSIZE + 1];
    let e = s.append_buffer(&big).unwrap_err();
    assert_eq!(e.code(), -35, "{e}");
    assert_eq!(s.nchunks(), 0);
}

#[test]
fn partial_reads_read_only_the_blocks_they_need() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lazy.b2frame");
    let o = SChunkOptions {
        cparams: CParams {
            typesize: 8,
            blocksize: 32 * 1024,
            codec: CodecId::ZSTD,
            nthreads: 1,
            ..CParams::default()
        },
        chunksize: 8 << 20,
        ..SChunkOptions::default()
    };
    let data: Vec<u8> = (0..2u64 << 20)
        .flat_map(|i| (i * i % 100_003).to_le_bytes())
        .collect();
    let mut s = SChunk::create(&Location::File(path.clone()), &o).unwrap();
    s.append_data(&data).unwrap();
    s.close().unwrap();
    let chunk_cbytes = SChunk::open(&path, OpenMode::Read)
        .unwrap()
        .chunk_info(1)
        .unwrap()
        .cbytes;
    assert!(chunk_cbytes > 1 << 20, "{chunk_cbytes}");

    let (io, (read, _)) = Counting::open(&path, false);
    let s = SChunk::from_io(
        Box::new(io),
        &OpenOptions::new(OpenMode::Read).with_sync(SyncPolicy::None),
    )
    .unwrap();
    let before = read.load(Ordering::SeqCst);
    let mut out = vec![0u8; 1000 * 8];
    s.getitem(1, 500_000, 1000, &mut out).unwrap();
    let start = (1 << 20) * 8 + 500_000 * 8;
    assert_eq!(out, data[start..start + 8000]);
    let used = read.load(Ordering::SeqCst) - before;
    assert!(
        used < 64 * 1024,
        "read {used} bytes of a {chunk_cbytes}-byte chunk"
    );
    // Blocks 3..5 of chunk 0.
    let mut blocks = vec![0u8; 2 * 32 * 1024];
    assert_eq!(s.decompress_blocks(0, 3..5, &mut blocks).unwrap(), 65536);
    assert_eq!(blocks, data[3 * 32 * 1024..5 * 32 * 1024]);
    assert_eq!(s.decompress_range(0, 0..0, &mut []).unwrap(), 0);
    assert_eq!(
        s.decompress_range(0, 10..(8 << 20) + 1, &mut out)
            .unwrap_err()
            .code(),
        -33
    );
}

#[test]
fn metalayers() {
    let o = SChunkOptions {
        metalayers: vec![("b2nd".into(), vec![1, 2, 3, 4]), ("x".into(), vec![9])],
        ..opts(4)
    };
    let mut s = SChunk::new(&o).unwrap();
    assert_eq!(s.meta_names(), ["b2nd", "x"]);
    s.meta_update("b2nd", &[7, 7]).unwrap();
    // A shorter value overwrites the first bytes; the tail stays (C-Blosc2's meta_update).
    assert_eq!(s.meta("b2nd").unwrap(), [7, 7, 3, 4]);
    assert_eq!(s.meta_update("b2nd", &[0; 5]).unwrap_err().code(), -12);
    assert_eq!(s.meta_update("nope", &[0]).unwrap_err().code(), -34);
    s.meta_add("late", &values::pack(&Value::from("v")))
        .unwrap();
    assert_eq!(s.meta_value("late").unwrap(), Value::from("v"));
    assert_eq!(s.meta_add("x", &[1]).unwrap_err().code(), -12);
    assert_eq!(s.meta_add(&"n".repeat(32), &[1]).unwrap_err().code(), -12);
    s.append_chunk(&chunk(0, CS)).unwrap();
    assert_eq!(s.meta_add("after", &[1]).unwrap_err().code(), -12);
    let back = SChunk::from_cframe(s.to_cframe().unwrap()).unwrap();
    assert_eq!(back.meta("b2nd").unwrap(), [7, 7, 3, 4]);
    assert_eq!(back.meta_names(), ["b2nd", "x", "late"]);
    let many: Vec<_> = (0..17).map(|i| (format!("m{i}"), vec![i as u8])).collect();
    let e = SChunk::new(&SChunkOptions {
        metalayers: many,
        ..opts(1)
    })
    .unwrap_err();
    assert_eq!(e.code(), -12);
}

#[test]
fn vlmetalayers() {
    let mut s = SChunk::new(&opts(4)).unwrap();
    s.append_chunk(&chunk(0, CS)).unwrap();
    let v = values::tuple(vec![Value::from(3), Value::from("three")]);
    s.vlmeta_set_value("t", &v).unwrap();
    s.vlmeta_set("raw", b"bytes here", Some(&cparams(1)))
        .unwrap();
    s.vlmeta_set("raw", b"other", None).unwrap();
    assert_eq!(s.vlmeta_names(), ["t", "raw"]);
    assert_eq!(s.vlmeta("raw").unwrap(), b"other");
    assert_eq!(s.vlmeta_value("t").unwrap(), v);
    assert!(s.header().has_vlmetalayers);
    s.vlmeta_delete("t").unwrap();
    assert_eq!(s.vlmeta_delete("t").unwrap_err().code(), -34);
    assert_eq!(s.vlmeta("t").unwrap_err().code(), -34);
    for i in 0..15 {
        s.vlmeta_set(&format!("k{i}"), &[i], None).unwrap();
    }
    assert_eq!(s.vlmeta_set("k99", &[0], None).unwrap_err().code(), -12);
    let back = SChunk::from_cframe(s.to_cframe().unwrap()).unwrap();
    assert_eq!(back.vlmeta("k14").unwrap(), [14]);
    assert_eq!(back.decompress_chunk_vec(0).unwrap(), piece(0, CS));
}

#[test]
fn open_modes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.b2frame");
    let mut s = SChunk::create(&Location::File(path.clone()), &opts(4)).unwrap();
    s.append_chunk(&chunk(0, CS)).unwrap();
    s.close().unwrap();
    let mut r = SChunk::open(&path, OpenMode::Read).unwrap();
    assert_eq!(r.append_chunk(&chunk(1, CS)).unwrap_err().code(), -14);
    let mut a = SChunk::open(&path, OpenMode::Append).unwrap();
    a.append_chunk(&chunk(1, CS)).unwrap();
    assert_eq!(a.delete_chunk(0).unwrap_err().code(), -14);
    assert_eq!(a.vlmeta_set("x", b"1", None).unwrap_err().code(), -14);
    drop(a);
    let e = SChunk::create(&Location::File(path.clone()), &opts(4)).unwrap_err();
    assert_eq!(e.code(), -15);
    let s = SChunk::open(&path, OpenMode::Read).unwrap();
    assert_eq!(s.nchunks(), 2);
    assert_eq!(s.decompress_chunk_vec(1).unwrap(), piece(1, CS));
}

#[test]
fn the_three_layouts_hold_the_same_content() {
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..50_000u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
    let mut frames = Vec::new();
    for loc in [
        Location::Memory,
        Location::File(dir.path().join("c.b2frame")),
        Location::Dir(dir.path().join("s.b2frame")),
    ] {
        let o = SChunkOptions {
            metalayers: vec![("m".into(), vec![1, 2])],
            sync: SyncPolicy::EveryWrite,
            ..opts(4)
        };
        let mut s = SChunk::create(&loc, &o).unwrap();
        s.append_data(&data).unwrap();
        s.vlmeta_set("v", b"value", None).unwrap();
        s.update_buffer(3, &vec![0u8; CS]).unwrap();
        s.delete_chunk(1).unwrap();
        let mut want = data.clone();
        want[3 * CS..4 * CS].fill(0);
        want.drain(CS..2 * CS);
        assert_eq!(s.decompress_all().unwrap(), want, "{loc:?}");
        frames.push(s.to_cframe().unwrap());
        if let Location::File(p) | Location::Dir(p) = &loc {
            s.close().unwrap();
            let r = SChunk::open(p, OpenMode::Read).unwrap();
            assert_eq!(r.decompress_all().unwrap(), want);
            assert_eq!(r.vlmeta("v").unwrap(), b"value");
            assert_eq!(r.meta("m").unwrap(), [1, 2]);
        }
    }
    // The contiguous file and the in-memory frame are the same bytes.
    assert_eq!(frames[0], frames[1]);
    let from_sparse = SChunk::from_cframe(frames[2].clone()).unwrap();
    assert_eq!(
        from_sparse.decompress_all().unwrap(),
        SChunk::from_cframe(frames[0].clone())
            .unwrap()
            .decompress_all()
            .unwrap()
    );
}

#[test]
fn sparse_update_writes_a_new_chunk_file_and_removes_the_old() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("s.b2frame");
    let mut s = SChunk::create(&Location::Dir(d.clone()), &opts(4)).unwrap();
    for i in 0..3 {
        s.append_chunk(&chunk(i, CS)).unwrap();
    }
    s.update_chunk(1, &chunk(9, CS)).unwrap();
    s.delete_chunk(0).unwrap();
    let mut names: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["00000002.chunk", "00000003.chunk", "chunks.b2frame"]
    );
    assert_eq!(s.decompress_chunk_vec(0).unwrap(), piece(9, CS));
}

/// The frame bytes of a super-chunk: the cframe, and for a sparse directory its chunk files.
fn stored_bytes(loc: &Location, s: &SChunk) -> Vec<(String, Vec<u8>)> {
    match loc {
        Location::Dir(d) => {
            let mut files: Vec<_> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| {
                    let e = e.unwrap();
                    (
                        e.file_name().into_string().unwrap(),
                        std::fs::read(e.path()).unwrap(),
                    )
                })
                .collect();
            files.sort();
            files
        }
        Location::File(p) => vec![("file".into(), std::fs::read(p).unwrap())],
        _ => vec![("cframe".into(), s.to_cframe().unwrap())],
    }
}

#[test]
fn update_chunks_is_one_commit_with_the_bytes_of_single_updates() {
    let dir = tempfile::tempdir().unwrap();
    let zeros = special_chunk(&cparams(4), SpecialType::Zero, CS, None).unwrap();
    let value = special_chunk(&cparams(4), SpecialType::Value, CS, Some(&[1, 2, 3, 4])).unwrap();
    let (big, other, last) = (chunk(20, CS), chunk(21, CS), chunk(22, 1000));
    let small = compress_vec(&cparams(4), &[5; CS]).unwrap();
    // Out of order, growing, shrinking, to and from special chunks.
    let updates: Vec<(usize, &[u8])> = vec![
        (5, &big),
        (1, &zeros),
        (2, &value),
        (4, &other),
        (0, &small),
        (6, &last),
    ];
    for (k, layout) in ["mem", "file", "dir"].into_iter().enumerate() {
        let loc = |which: &str| match layout {
            "mem" => Location::Memory,
            "file" => Location::File(dir.path().join(format!("{k}{which}.b2frame"))),
            _ => Location::Dir(dir.path().join(format!("{k}{which}.b2frame"))),
        };
        let build = |l: &Location| {
            let mut s = SChunk::create(l, &opts(4)).unwrap();
            for i in 0..6 {
                if i == 3 {
                    s.append_chunk(&zeros).unwrap();
                } else {
                    s.append_chunk(&chunk(i, CS)).unwrap();
                }
            }
            s.append_chunk(&chunk(6, 2000)).unwrap();
            s.vlmeta_set("v", b"kept", None).unwrap();
            s
        };
        let (la, lb) = (loc("a"), loc("b"));
        let mut one_by_one = build(&la);
        for &(n, c) in &updates {
            one_by_one.update_chunk(n, c).unwrap();
        }
        let mut batched = build(&lb);
        batched.update_chunks(&updates).unwrap();
        if layout == "dir" {
            // A batch never writes over a file the committed index names, so the sparse
            // files may be numbered otherwise: the same files, the same frame once copied.
            let contents = |l: &Location, s: &SChunk| {
                let mut v: Vec<Vec<u8>> = stored_bytes(l, s)
                    .into_iter()
                    .filter(|(name, _)| name.ends_with(".chunk"))
                    .map(|(_, b)| b)
                    .collect();
                v.sort();
                v
            };
            assert_eq!(contents(&la, &one_by_one), contents(&lb, &batched));
            assert_eq!(
                one_by_one.to_cframe().unwrap(),
                batched.to_cframe().unwrap()
            );
        } else {
            assert_eq!(
                stored_bytes(&la, &one_by_one),
                stored_bytes(&lb, &batched),
                "{layout}"
            );
        }
        let mut want = Vec::new();
        for (i, p) in [
            vec![5u8; CS],
            vec![0; CS],
            [1, 2, 3, 4].repeat(CS / 4),
            vec![0; CS],
            piece(21, CS),
            piece(20, CS),
            piece(22, 1000),
        ]
        .into_iter()
        .enumerate()
        {
            assert_eq!(
                batched.decompress_chunk_vec(i).unwrap(),
                p,
                "{layout} chunk {i}"
            );
            want.extend(p);
        }
        assert_eq!(batched.nbytes(), want.len() as u64);
        assert_eq!(batched.vlmeta("v").unwrap(), b"kept");
        // Checked before anything is written: the frame is unchanged after each refusal.
        let before = stored_bytes(&lb, &batched);
        let twice = batched
            .update_chunks(&[(0, &big), (0, &other)])
            .unwrap_err();
        assert!(
            matches!(twice, strata::Error::Duplicate { ref name, .. } if name == "0"),
            "{twice}"
        );
        assert_eq!(twice.code(), strata::error::code::INVALID_PARAM);
        let past = batched
            .update_chunks(&[(0, &big), (7, &other)])
            .unwrap_err();
        assert_eq!(past.code(), -33, "{past}");
        let short = batched.update_chunks(&[(1, &chunk(1, 1000))]).unwrap_err();
        assert_eq!(
            short,
            strata::Error::ChunkSize {
                op: strata::error::ChunkOp::Update,
                nchunk: 1,
                nbytes: 1000,
                chunksize: 4000
            }
        );
        assert_eq!(stored_bytes(&lb, &batched), before, "{layout}");
        if let Location::File(p) | Location::Dir(p) = &lb {
            batched.close().unwrap();
            let r = SChunk::open(p, OpenMode::Read).unwrap();
            assert_eq!(r.decompress_all().unwrap(), want, "{layout} reopened");
        }
    }
}

/// Makes index entry `to` of the frame `f` (its offsets chunk at `at`, memcpyed) a copy of
/// entry `from`: two chunks then share their bytes, as a hand-made frame may.
fn share_entry(f: &mut [u8], at: usize, from: usize, to: usize) {
    assert!(f[at + 2] & 2 != 0, "a memcpyed offsets chunk expected");
    let e = |i: usize| at + 32 + 8 * i;
    let v: [u8; 8] = f[e(from)..e(from) + 8].try_into().unwrap();
    f[e(to)..e(to) + 8].copy_from_slice(&v);
}

#[test]
fn chunks_sharing_bytes_keep_them_when_one_is_replaced() {
    let build = |loc: &Location| {
        let mut s = SChunk::create(loc, &opts(4)).unwrap();
        for i in 0..3 {
            s.append_chunk(&chunk(i, CS)).unwrap();
        }
        s
    };
    let hl = |f: &[u8]| u32::from_be_bytes(f[11..15].try_into().unwrap()) as usize;
    // Contiguous: chunks 0 and 1 both point at chunk 0's bytes.
    let mut f = build(&Location::Memory).to_cframe().unwrap();
    let cbytes = u64::from_be_bytes(f[39..47].try_into().unwrap()) as usize;
    let at = hl(&f) + cbytes;
    share_entry(&mut f, at, 0, 1);
    let mut s = SChunk::from_cframe(f).unwrap();
    assert_eq!(s.decompress_chunk_vec(1).unwrap(), piece(0, CS));
    s.update_chunk(0, &chunk(7, CS)).unwrap();
    assert_eq!(s.decompress_chunk_vec(0).unwrap(), piece(7, CS));
    assert_eq!(
        s.decompress_chunk_vec(1).unwrap(),
        piece(0, CS),
        "the sharer kept its bytes"
    );
    s.update_chunks(&[(1, &chunk(8, CS)), (2, &chunk(9, CS))])
        .unwrap();
    let got: Vec<_> = (0..3).map(|i| s.decompress_chunk_vec(i).unwrap()).collect();
    assert_eq!(got, [piece(7, CS), piece(8, CS), piece(9, CS)]);
    let again = SChunk::from_cframe(s.to_cframe().unwrap()).unwrap();
    assert_eq!(again.decompress_all().unwrap(), got.concat());

    // Both sharers in one batch: the bytes of replacing them one at a time (the first goes to
    // the end, the last in place).
    let shared = || {
        let mut f = build(&Location::Memory).to_cframe().unwrap();
        share_entry(&mut f, at, 0, 1);
        SChunk::from_cframe(f).unwrap()
    };
    let (a, b) = (chunk(7, CS), chunk(8, CS));
    let mut one_by_one = shared();
    one_by_one.update_chunk(0, &a).unwrap();
    one_by_one.update_chunk(1, &b).unwrap();
    let mut batched = shared();
    batched.update_chunks(&[(0, &a), (1, &b)]).unwrap();
    assert!(
        one_by_one.to_cframe().unwrap() == batched.to_cframe().unwrap(),
        "batched sharers differ from one at a time"
    );
    // An empty batch writes nothing.
    let before = batched.to_cframe().unwrap();
    batched.update_chunks(&[]).unwrap();
    assert_eq!(batched.to_cframe().unwrap(), before);

    // Sparse: chunks 0 and 1 both name file 0; deleting or replacing one keeps the file.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("s.b2frame");
    build(&Location::Dir(d.clone())).close().unwrap();
    let index = d.join("chunks.b2frame");
    let mut f = std::fs::read(&index).unwrap();
    let at = hl(&f);
    share_entry(&mut f, at, 0, 1);
    // File 1 is no longer named: remove it, and its bytes from the header's cbytes.
    let orphan = d.join("00000001.chunk");
    let cbytes = u64::from_be_bytes(f[39..47].try_into().unwrap());
    let cbytes = cbytes - std::fs::metadata(&orphan).unwrap().len();
    f[39..47].copy_from_slice(&cbytes.to_be_bytes());
    std::fs::remove_file(orphan).unwrap();
    std::fs::write(&index, f).unwrap();
    let mut s = SChunk::open(&d, OpenMode::ReadWrite).unwrap();
    s.update_chunk(0, &chunk(7, CS)).unwrap();
    s.delete_chunk(2).unwrap();
    assert!(d.join("00000000.chunk").exists());
    assert_eq!(s.decompress_chunk_vec(1).unwrap(), piece(0, CS));
    s.close().unwrap();
    let s = SChunk::open(&d, OpenMode::Read).unwrap();
    assert_eq!(
        s.decompress_all().unwrap(),
        [piece(7, CS), piece(0, CS)].concat()
    );
    drop(s);
    // Both sharers replaced in one batch: the shared file is removed, and counted, once.
    let mut s = SChunk::open(&d, OpenMode::ReadWrite).unwrap();
    s.update_chunks(&[(0, &chunk(5, CS)), (1, &chunk(6, CS))])
        .unwrap();
    s.close().unwrap();
    let s = SChunk::open(&d, OpenMode::Read).unwrap();
    assert_eq!(
        s.decompress_all().unwrap(),
        [piece(5, CS), piece(6, CS)].concat()
    );
    let files: u64 = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".chunk"))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert_eq!(s.cbytes(), files, "cbytes counts each file once");
}

/// `chunk_spans` is the offsets index as byte spans of the file: each stored chunk's bytes are
/// there; special chunks and sparse frames have none.
#[test]
fn chunk_spans_locate_stored_chunks_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let opts = SChunkOptions {
        cparams: CParams {
            typesize: 4,
            ..CParams::default()
        },
        chunksize: 4000,
        ..SChunkOptions::default()
    };
    let data: Vec<u8> = (0..3000u32).flat_map(|i| (i * 7).to_le_bytes()).collect();
    for (loc, contiguous) in [
        (Location::File(dir.path().join("f.b2frame")), true),
        (Location::Dir(dir.path().join("d.b2frame")), false),
    ] {
        let mut s = SChunk::create(&loc, &opts).unwrap();
        s.append_data(&data).unwrap();
        let zeros = special_chunk(&opts.cparams, SpecialType::Zero, 4000, None).unwrap();
        s.append_chunk(&zeros).unwrap();
        s.close().unwrap();
        let path = match &loc {
            Location::File(p) | Location::Dir(p) => p.clone(),
            Location::Memory => unreachable!(),
        };
        let s = SChunk::open(&path, OpenMode::Read).unwrap();
        let spans = s.chunk_spans().unwrap();
        assert_eq!(spans.len(), s.nchunks());
        if contiguous {
            let file = std::fs::read(&path).unwrap();
            for (n, span) in spans.iter().enumerate().take(3) {
                let (off, len) = span.unwrap();
                assert_eq!(
                    &file[off as usize..(off + len) as usize],
                    &s.chunk(n).unwrap()[..]
                );
            }
            assert_eq!(spans[3], None, "a special chunk has no bytes");
        } else {
            assert!(spans.iter().all(Option::is_none));
        }
    }
}
