//! b2nd arrays in frames: `.b2nd` files and sparse directories made, reopened, written,
//! resized and copied; lazy reads that fetch only the touched blocks' bytes; concurrent reads.

mod counting;
use counting::Counting;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use strata::chunk::{CParams, DParams};
use strata::format::b2nd::B2ndMeta;
use strata::ndarray::{ArrayParams, Location, NdArray, OpenMode, Slice, SyncPolicy};
use strata::schunk::{OpenOptions, SChunk, SChunkOptions};
use strata::CodecId;

/// Deterministic float64 data with some noise: compressible, but not trivially.
fn field(n: usize) -> Vec<u8> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..n)
        .flat_map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = (i as f64 / 300.0).sin() * 1000.0 + (x % 64) as f64 / 16.0;
            v.to_le_bytes()
        })
        .collect()
}

/// The items of `data` (C order, `shape`, 8-byte items) at `rows` x `cols` of a 2-D array.
fn pick2(data: &[u8], ncols: usize, rows: &[usize], cols: &[usize]) -> Vec<u8> {
    let mut out = Vec::new();
    for &r in rows {
        for &c in cols {
            let at = (r * ncols + c) * 8;
            out.extend_from_slice(&data[at..at + 8]);
        }
    }
    out
}

fn open_counting(path: &Path) -> (NdArray, Arc<AtomicU64>) {
    let (io, (bytes, _)) = Counting::open(path, false);
    let schunk = SChunk::from_io(
        Box::new(io),
        &OpenOptions::new(OpenMode::Read).with_sync(SyncPolicy::None),
    )
    .unwrap();
    (NdArray::from_schunk(schunk).unwrap(), bytes)
}

/// The stored bytes of blocks `blocks` of `chunk` (a whole chunk): each block from its
/// `bstart` to the next larger one, or the chunk's end.
fn blocksize(chunk: &[u8], blocks: &[usize]) -> u64 {
    let nblocks = (chunk.len() - 32).min(
        u32::from_le_bytes(chunk[4..8].try_into().unwrap()) as usize
            / u32::from_le_bytes(chunk[8..12].try_into().unwrap()) as usize,
    );
    let starts: Vec<usize> = (0..nblocks)
        .map(|b| u32::from_le_bytes(chunk[32 + 4 * b..36 + 4 * b].try_into().unwrap()) as usize)
        .collect();
    blocks
        .iter()
        .map(|&b| {
            let s = starts[b];
            let end = starts
                .iter()
                .copied()
                .filter(|&x| x > s)
                .min()
                .unwrap_or(chunk.len());
            (end - s) as u64
        })
        .sum()
}

#[test]
fn thin_slices_of_a_big_file_read_only_their_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.b2nd");
    let (n, cs, bs) = (1024usize, 512usize, 64usize);
    let data = field(n * n);
    let params = ArrayParams::from_dtype(&[n, n], "<f8")
        .unwrap()
        .with_chunkshape(&[cs, cs])
        .with_blockshape(&[bs, bs])
        .with_cparams(&CParams {
            codec: CodecId::ZSTD,
            clevel: 1,
            ..CParams::default()
        });
    let arr = NdArray::from_buffer(&params, &Location::File(path.clone()), &data).unwrap();
    let chunks: Vec<Vec<u8>> = (0..4).map(|k| arr.schunk().chunk(k).unwrap()).collect();
    assert!(
        chunks.iter().all(|c| c.len() > 256 * 1024),
        "chunks read lazily"
    );
    arr.close().unwrap();
    let file_len = std::fs::metadata(&path).unwrap().len();

    let (arr, read) = open_counting(&path);
    let per_chunk_head = 32 + 4 * 64; // chunk header + bstarts of 8 x 8 blocks
                                      // Row 100: chunks 0 and 1, block row 1 (blocks 8..16) of each.
    read.store(0, Ordering::Relaxed);
    let (row, _) = arr.get_slice_vec(&[Slice::index(100)]).unwrap();
    let all: Vec<usize> = (0..n).collect();
    assert_eq!(row, pick2(&data, n, &[100], &all));
    let blocks: Vec<usize> = (8..16).collect();
    let want = 2 * per_chunk_head + blocksize(&chunks[0], &blocks) + blocksize(&chunks[1], &blocks);
    assert_eq!(read.load(Ordering::Relaxed), want);
    assert!(want * 8 < file_len, "{want} of {file_len} bytes");
    // Column 700: chunks 1 and 3, block column 2 (blocks 2, 10, ..., 58) of each.
    read.store(0, Ordering::Relaxed);
    let mut col = vec![0u8; n * 8];
    let stats = arr
        .get_slice(&[Slice::FULL, Slice::index(700)], &mut col)
        .unwrap();
    assert_eq!(col, pick2(&data, n, &all, &[700]));
    assert_eq!((stats.chunks_read, stats.blocks_decompressed), (2, 16));
    let blocks: Vec<usize> = (0..8).map(|r| r * 8 + 2).collect();
    let want = 2 * per_chunk_head + blocksize(&chunks[1], &blocks) + blocksize(&chunks[3], &blocks);
    assert_eq!(read.load(Ordering::Relaxed), want);
    // One item: one block of one chunk.
    read.store(0, Ordering::Relaxed);
    let mut item = [0u8; 8];
    arr.get_slice(&[Slice::index(1000), Slice::index(3)], &mut item)
        .unwrap();
    assert_eq!(item[..], pick2(&data, n, &[1000], &[3])[..]);
    let want = per_chunk_head + blocksize(&chunks[2], &[7 * 8]);
    assert_eq!(read.load(Ordering::Relaxed), want);
    // The whole array reads every chunk once, whole.
    read.store(0, Ordering::Relaxed);
    assert_eq!(arr.to_vec().unwrap(), data);
    let stored: u64 = chunks.iter().map(|c| c.len() as u64).sum();
    assert_eq!(read.load(Ordering::Relaxed), stored);
}

#[test]
fn files_and_directories_keep_writes_and_resizes() {
    let dir = tempfile::tempdir().unwrap();
    let (r, c) = (37usize, 23usize);
    let data = field(r * c);
    for location in [
        Location::File(dir.path().join("a.b2nd")),
        Location::Dir(dir.path().join("a.b2frame")),
    ] {
        let path = match &location {
            Location::File(p) | Location::Dir(p) => p.clone(),
            Location::Memory => unreachable!(),
        };
        let params = ArrayParams::from_dtype(&[r, c], "<f8")
            .unwrap()
            .with_chunkshape(&[10, 8])
            .with_blockshape(&[4, 3]);
        let arr = NdArray::from_buffer(&params, &location, &data).unwrap();
        assert_eq!(arr.schunk().chunksize(), Some(12 * 9 * 8));
        assert_eq!(
            arr.schunk().is_sparse(),
            matches!(location, Location::Dir(_))
        );
        drop(arr);
        // Creating again over it needs overwrite.
        assert!(NdArray::zeros(&params, &location).is_err());
        let mut want = data.clone();
        {
            let mut arr = NdArray::open(&path, OpenMode::ReadWrite).unwrap();
            assert_eq!(arr.dtype(), Some("<f8"));
            assert_eq!(
                (arr.chunkshape(), arr.blockshape()),
                (&[10, 8][..], &[4, 3][..])
            );
            assert_eq!(arr.to_vec().unwrap(), data);
            let vals: Vec<u8> = (0..5 * 4 * 8).map(|i| i as u8).collect();
            arr.set_slice(&[Slice::range(8, 13), Slice::range(6, 10)], &vals)
                .unwrap();
            for (k, i) in (8..13).enumerate() {
                for (l, j) in (6..10).enumerate() {
                    let a = (i * c + j) * 8;
                    let b = (k * 4 + l) * 8;
                    want[a..a + 8].copy_from_slice(&vals[b..b + 8]);
                }
            }
            arr.resize(&[41, 17]).unwrap();
            arr.close().unwrap();
        }
        let mut next = vec![0u8; 41 * 17 * 8];
        for i in 0..r {
            for j in 0..17 {
                let (a, b) = ((i * c + j) * 8, (i * 17 + j) * 8);
                next[b..b + 8].copy_from_slice(&want[a..a + 8]);
            }
        }
        let arr = NdArray::open(&path, OpenMode::Read).unwrap();
        assert_eq!(arr.shape(), [41, 17]);
        assert_eq!(arr.meta().shape, [41, 17]);
        assert_eq!(arr.to_vec().unwrap(), next, "{location:?}");
        // Read-only arrays refuse writes.
        let mut arr = arr;
        let err = arr.set_slice(&[Slice::index(0)], &[0; 17 * 8]).unwrap_err();
        assert!(
            matches!(
                err,
                strata::Error::Io {
                    op: strata::error::IoOp::Write,
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(err.code(), strata::error::code::FILE_WRITE);
        // Saved as a contiguous file, through a cframe, and copied re-partitioned.
        let saved = dir.path().join("saved.b2nd");
        arr.save(&saved).unwrap();
        assert_eq!(
            NdArray::open(&saved, OpenMode::Read)
                .unwrap()
                .to_vec()
                .unwrap(),
            next
        );
        let back = NdArray::from_cframe(arr.to_cframe().unwrap()).unwrap();
        assert_eq!(back.to_vec().unwrap(), next);
        assert_eq!(back.to_cframe().unwrap(), std::fs::read(&saved).unwrap());
        let p = arr
            .params()
            .with_chunkshape(&[41, 5])
            .with_blockshape(&[41, 1])
            .with_overwrite(true);
        let copy = arr
            .copy(&p, &Location::Dir(dir.path().join("copy.b2frame")))
            .unwrap();
        assert_eq!(
            (copy.chunkshape(), copy.blockshape()),
            (&[41, 5][..], &[41, 1][..])
        );
        drop(copy);
        let copy = NdArray::open(dir.path().join("copy.b2frame"), OpenMode::Read).unwrap();
        assert_eq!(copy.to_vec().unwrap(), next);
        assert_eq!(copy.dtype(), Some("<f8"));
    }
}

#[test]
fn zeros_full_and_uninit_in_files_store_no_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("z.b2nd");
    let params = ArrayParams::new(&[300, 400], 4)
        .with_chunkshape(&[100, 100])
        .with_blockshape(&[50, 50])
        .with_dtype("<f4");
    let z = NdArray::zeros(&params, &Location::File(path.clone())).unwrap();
    assert_eq!((z.schunk().nchunks(), z.cbytes()), (12, 0));
    drop(z);
    // header, a special-value offsets chunk and the trailer
    assert!(std::fs::metadata(&path).unwrap().len() < 400);
    let mut z = NdArray::open(&path, OpenMode::ReadWrite).unwrap();
    assert_eq!(z.to_vec().unwrap(), vec![0; 300 * 400 * 4]);
    z.set_slice(
        &[Slice::index(150), Slice::index(250)],
        &1.5f32.to_le_bytes(),
    )
    .unwrap();
    let (v, _) = z
        .get_slice_vec(&[Slice::range(149, 152), Slice::index(250)])
        .unwrap();
    assert_eq!(v, [[0; 4], 1.5f32.to_le_bytes(), [0; 4]].concat());
    let u = NdArray::uninit(
        &params.clone().with_overwrite(true),
        &Location::File(path.clone()),
    )
    .unwrap();
    assert_eq!(u.cbytes(), 0);
    let f = NdArray::full(
        &params.clone().with_overwrite(true),
        &Location::File(path.clone()),
        &2.0f32.to_le_bytes(),
    )
    .unwrap();
    // one repeated-value chunk (header + the value) per chunk
    assert_eq!(f.cbytes(), 12 * (32 + 4));
    let (v, _) = f
        .get_slice_vec(&[Slice::index(299), Slice::range(398, 400)])
        .unwrap();
    assert_eq!(v, [2.0f32.to_le_bytes(); 2].concat());
}

#[test]
fn eight_threads_read_one_open_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.b2nd");
    let shape = [120usize, 90, 40];
    let data = field(shape.iter().product());
    let params = ArrayParams::from_dtype(&[120, 90, 40], "<f8")
        .unwrap()
        .with_chunkshape(&[50, 50, 40])
        .with_blockshape(&[10, 25, 8]);
    NdArray::from_buffer(&params, &Location::File(path.clone()), &data)
        .unwrap()
        .close()
        .unwrap();
    let arr = NdArray::open(&path, OpenMode::Read).unwrap();
    std::thread::scope(|s| {
        for t in 0..8usize {
            let (arr, data) = (&arr, &data);
            s.spawn(move || {
                for k in 0..25usize {
                    let i = (t * 13 + k * 7) % 120;
                    let j0 = (k * 11) % 60;
                    let (v, got) = arr
                        .get_slice_vec(&[
                            Slice::index(i as i64),
                            Slice::range(j0 as i64, j0 as i64 + 30).step_by(2),
                            Slice::FULL.step_by(if k % 2 == 0 { 3 } else { -1 }),
                        ])
                        .unwrap();
                    let ks: Vec<usize> = if k % 2 == 0 {
                        (0..40).step_by(3).collect()
                    } else {
                        (0..40).rev().collect()
                    };
                    assert_eq!(got, [1, 15, ks.len()]);
                    let mut want = Vec::new();
                    for j in (j0..j0 + 30).step_by(2) {
                        for &kk in &ks {
                            let at = ((i * 90 + j) * 40 + kk) * 8;
                            want.extend_from_slice(&data[at..at + 8]);
                        }
                    }
                    assert_eq!(v, want);
                }
            });
        }
    });
}

#[test]
fn legacy_caterva_metalayer_and_extra_metalayers() {
    let data: Vec<u8> = (0..60u8).collect();
    let p = ArrayParams::new(&[6, 10], 1)
        .with_chunkshape(&[4, 4])
        .with_blockshape(&[2, 2])
        .with_metalayer("extra", &[0x93, 1, 2, 3]);
    let arr = NdArray::from_buffer(&p, &Location::Memory, &data).unwrap();
    assert_eq!(arr.schunk().meta_names(), ["b2nd", "extra"]);
    assert_eq!(arr.dtype(), Some("|S1"));
    // The same chunks under the caterva name, as old writers stored them (no dtype).
    let meta = B2ndMeta {
        dtype: None,
        ..arr.meta().clone()
    };
    let opts = SChunkOptions {
        cparams: arr.cparams().clone(),
        metalayers: vec![("caterva".into(), meta.to_bytes())],
        ..SChunkOptions::default()
    };
    let mut s = SChunk::new(&opts).unwrap();
    for k in 0..arr.schunk().nchunks() {
        s.append_chunk(&arr.schunk().chunk(k).unwrap()).unwrap();
    }
    let mut old = NdArray::from_cframe(s.to_cframe().unwrap()).unwrap();
    assert_eq!((old.dtype(), old.to_vec().unwrap()), (None, data.clone()));
    old.resize(&[3, 10]).unwrap();
    let layer = B2ndMeta::from_bytes(old.schunk().meta("caterva").unwrap()).unwrap();
    assert_eq!(layer.shape, [3, 10]);
    let back = NdArray::from_cframe(old.to_cframe().unwrap()).unwrap();
    assert_eq!(back.to_vec().unwrap(), data[..30]);
    // Not an array; metalayer names that are the array's own.
    let plain = SChunk::new(&SChunkOptions::default()).unwrap();
    assert_eq!(
        NdArray::from_schunk(plain).unwrap_err().code(),
        strata::Error::MetalayerNotFound {
            name: String::new()
        }
        .code()
    );
    let p = ArrayParams::new(&[3], 1).with_metalayer("b2nd", &[]);
    assert_eq!(
        NdArray::zeros(&p, &Location::Memory).unwrap_err().code(),
        -12
    );
}

#[test]
fn dtypes_fix_the_typesize() {
    for (dtype, ts) in [
        ("|b1", 1),
        ("<c16", 16),
        ("|S10", 10),
        ("<U5", 20),
        ("[('a', '<i4'), ('b', '<f8')]", 12),
    ] {
        let p = ArrayParams::from_dtype(&[7, 3], dtype).unwrap();
        assert_eq!(p.cparams.typesize, ts);
        let data: Vec<u8> = (0..21 * ts).map(|i| (i * 7) as u8).collect();
        let arr = NdArray::from_buffer(&p, &Location::Memory, &data).unwrap();
        let back = NdArray::from_cframe(arr.to_cframe().unwrap()).unwrap();
        assert_eq!((back.dtype(), back.typesize()), (Some(dtype), ts));
        assert_eq!(back.to_vec().unwrap(), data);
    }
    let p = ArrayParams::new(&[4], 4).with_dtype("<f8");
    assert_eq!(
        NdArray::zeros(&p, &Location::Memory).unwrap_err().code(),
        -12
    );
    assert!(ArrayParams::from_dtype(&[4], "|O8").is_err());
    // threads per read come from the dparams
    let p = ArrayParams::from_dtype(&[4], "<i2")
        .unwrap()
        .with_dparams(&DParams {
            nthreads: 2,
            ..DParams::default()
        });
    let arr = NdArray::zeros(&p, &Location::Memory).unwrap();
    assert_eq!(arr.dparams().nthreads, 2);
    assert!(arr.dparams().nd.is_some() && arr.cparams().nd.is_some());
}

#[test]
fn special_chunks_with_another_blocksize_read_by_blocks() {
    // A frame whose header blocksize is 0 (automatic) rebuilds its zero chunks with another
    // blocksize than the array's blocks: reads still touch only the blocks they need.
    let meta = B2ndMeta::new(vec![400, 300], vec![200, 300], vec![50, 30], "<f8").unwrap();
    let opts = SChunkOptions {
        cparams: CParams {
            typesize: 8,
            ..CParams::default()
        },
        metalayers: vec![("b2nd".into(), meta.to_bytes())],
        ..SChunkOptions::default()
    };
    let mut s = SChunk::new(&opts).unwrap();
    s.fill_special(
        2 * 200 * 300,
        strata::format::chunk::SpecialType::Zero,
        200 * 300 * 8,
    )
    .unwrap();
    assert_ne!(s.chunk_header(0).unwrap().blocksize, 50 * 30 * 8);
    let arr = NdArray::from_schunk(s).unwrap();
    let (v, _) = arr
        .get_slice_vec(&[Slice::index(250), Slice::range(10, 40)])
        .unwrap();
    assert_eq!(v, vec![0; 30 * 8]);
    let mut out = vec![1u8; 30 * 8];
    let stats = arr
        .get_slice(&[Slice::index(250), Slice::range(10, 40)], &mut out)
        .unwrap();
    assert_eq!((stats.chunks_read, stats.blocks_decompressed), (1, 2));
    assert_eq!(out, vec![0; 30 * 8]);
}

#[test]
fn dtypes_numpy_refuses_are_not_written_but_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.b2nd");
    let location = Location::File(path.clone());
    let data = field(40);
    // Writing: only what NumPy's np.dtype accepts, so that python-blosc2 opens the file.
    let params = ArrayParams::new(&[40], 8).with_dtype("<f99");
    let e = NdArray::from_buffer(&params, &location, &data).unwrap_err();
    assert_eq!(e.code(), -12);
    assert_eq!(
        e.to_string(),
        "invalid parameter: dtype \"<f99\": NumPy has no 'f' of \"99\" bytes (only 2, 4, 8, 16)"
    );
    assert!(!path.exists());
    assert_eq!(
        ArrayParams::from_dtype(&[40], "|S0")
            .unwrap_err()
            .to_string(),
        "invalid parameter: dtype \"|S0\": \"0\" is not a positive count"
    );
    // Reading: a file another writer gave such a dtype ("!f8", same length as "<f8") opens.
    let params = ArrayParams::from_dtype(&[40], "<f8").unwrap();
    NdArray::from_buffer(&params, &location, &data)
        .and_then(NdArray::close)
        .unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let at: Vec<usize> = (0..bytes.len() - 3)
        .filter(|&i| &bytes[i..i + 3] == b"<f8")
        .collect();
    assert_eq!(
        at.len(),
        1,
        "the dtype is stored once, in the b2nd metalayer"
    );
    bytes[at[0]] = b'!';
    std::fs::write(&path, &bytes).unwrap();
    let arr = NdArray::open(&path, OpenMode::Read).unwrap();
    assert_eq!((arr.dtype(), arr.typesize()), (Some("!f8"), 8));
    assert_eq!(arr.get_slice_vec(&[Slice::FULL]).unwrap().0, data);
}

/// A write to an array opened read-only is refused before anything is read or checked: the
/// chunks a partial write would decompress are never fetched, and even a selection with the
/// wrong amount of data gets the read-only refusal.
#[test]
fn set_slice_on_a_read_only_array_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ro.b2nd");
    let data = field(100 * 80);
    let params = ArrayParams::from_dtype(&[100, 80], "<f8")
        .unwrap()
        .with_chunkshape(&[50, 40])
        .with_blockshape(&[10, 20]);
    NdArray::from_buffer(&params, &Location::File(path.clone()), &data)
        .unwrap()
        .close()
        .unwrap();
    let before = std::fs::read(&path).unwrap();
    let (mut arr, bytes) = open_counting(&path);
    let opened = bytes.load(Ordering::Relaxed);
    let part = [Slice::range(5, 15), Slice::range(30, 50)];
    for len in [200 * 8, 3] {
        let e = arr.set_slice(&part, &vec![7u8; len]).unwrap_err();
        assert!(
            e.to_string().contains("not allowed in Read mode"),
            "{len}: {e}"
        );
        assert_eq!(
            e.io_kind(),
            Some(std::io::ErrorKind::PermissionDenied),
            "{e:?}"
        );
    }
    assert_eq!(bytes.load(Ordering::Relaxed), opened, "chunks were read");
    drop(arr);
    assert_eq!(std::fs::read(&path).unwrap(), before);
}
