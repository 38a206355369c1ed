//! The direct-chunk path (`strata::hdf5`, feature `hdf5`) against the real peers, both ways.
//!
//! Reads: files written by h5py + hdf5plugin 7.1.0 and by PyTables 3.11.1 (every case of
//! `tests/interop/hdf5_cases.py`: all codecs and filters, ranks 1-3, 9, 10 and 16, tiny,
//! incompressible, zeros, raw-stored chunks, Fletcher32 after and before Blosc2, HDF5's
//! shuffle, compound, array and big-endian types, partly written, ZFP, CArray, EArray,
//! Table), a file with a user block, and damaged copies. Each dataset must read, whole and in
//! slices with steps, to the bytes the peer itself reads (dumped by the same script).
//!
//! Writes: `write_array` and `export_array` files read back by h5py + hdf5plugin, PyTables and
//! Debian's h5dump 1.10.8 with Strata's plugin.
//!
//! Needs `.venv` (scripts/setup-venv.sh): the test fails, naming it, when it is missing.
#![cfg(feature = "hdf5")]

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use strata::hdf5::{export_array, write_array, Access, H5Dataset};
use strata::ndarray::selection::Selection;
use strata::ndarray::{ArrayParams, Location, NdArray, Slice};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn python() -> PathBuf {
    let py = root().join(".venv/bin/python");
    assert!(
        py.exists(),
        "{} is missing: run scripts/setup-venv.sh",
        py.display()
    );
    py
}

/// Runs `tests/interop/hdf5_cases.py ARGS` (with `env`), failing the test on failure.
fn cases_script(args: &[&str], env: &[(&str, &Path)]) {
    let script = root().join("tests/interop/hdf5_cases.py");
    let mut cmd = Command::new(python());
    cmd.arg(&script).args(args).env_remove("HDF5_PLUGIN_PATH");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running python");
    assert!(
        out.status.success(),
        "hdf5_cases.py {args:?}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A peer's file and what the peer reads from it.
struct Written {
    path: PathBuf,
    /// name → (shape, the peer's bytes); datasets the peer cannot read are absent.
    read: BTreeMap<String, (Vec<usize>, Vec<u8>)>,
}

fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        // Under the target directory, emptied when the test binary starts.
        let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hdf5-direct");
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

fn load_dump(dir: &Path) -> BTreeMap<String, (Vec<usize>, Vec<u8>)> {
    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).unwrap()).unwrap();
    index
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| v["error"].is_null())
        .map(|(name, v)| {
            let shape = v["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect();
            let file = dir.join(v["file"].as_str().unwrap());
            (name.clone(), (shape, std::fs::read(file).unwrap()))
        })
        .collect()
}

/// `writer`'s file, written once, and `reader`'s dump of it.
fn written(writer: &str, reader: &str) -> &'static Written {
    static FILES: OnceLock<std::sync::Mutex<BTreeMap<String, &'static Written>>> = OnceLock::new();
    let files = FILES.get_or_init(Default::default);
    let mut files = files.lock().unwrap();
    let key = format!("{writer}-{reader}");
    if let Some(w) = files.get(&key) {
        return w;
    }
    let path = scratch().join(format!("{writer}.h5"));
    if !path.exists() {
        cases_script(&["write", writer, path.to_str().unwrap()], &[]);
    }
    let dump = scratch().join(&key);
    cases_script(
        &[
            "dump",
            reader,
            path.to_str().unwrap(),
            dump.to_str().unwrap(),
        ],
        &[],
    );
    let w: &'static Written = Box::leak(Box::new(Written {
        path,
        read: load_dump(&dump),
    }));
    files.insert(key, w);
    w
}

/// The build's ZFP plugin (plugins/zfp), loaded into Strata's registry once.
fn load_zfp() {
    static LOADED: OnceLock<()> = OnceLock::new();
    LOADED.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        let lib = exe
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("libstrata_zfp.so");
        assert!(
            lib.is_file(),
            "no {}: cargo build --release --workspace",
            lib.display()
        );
        strata::registry::Registry::global()
            .load_plugin(&lib)
            .unwrap();
    });
}

/// Reads every dataset of `w` with the direct path (or its fallback) and compares.
fn check_all(w: &Written) -> Vec<String> {
    load_zfp();
    let mut wrong = Vec::new();
    for (name, (shape, bytes)) in &w.read {
        let ds = H5Dataset::open(&w.path, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        if !ds.dtype().starts_with('(') {
            // NumPy gives array types' dims as trailing dims of the shape.
            assert_eq!(ds.shape(), shape.as_slice(), "{name}");
        }
        let mut v = vec![0u8; bytes.len()];
        match ds.get_slice(&[], &mut v) {
            // Read by the direct path, not by HDF5 after it failed.
            Ok(stats) if matches!(ds.access(), Access::Direct { .. }) && stats.chunks_read == 0 => {
                wrong.push(format!("{name}: HDF5 read it, not the direct path"));
            }
            Ok(_) if v == *bytes => {}
            Ok(_) => wrong.push(format!("{name}: other bytes")),
            Err(e) => wrong.push(format!("{name}: {e}")),
        }
    }
    wrong
}

#[test]
fn hdf5plugin_files_read_as_hdf5plugin_reads_them() {
    let w = written("hdf5plugin", "hdf5plugin");
    assert!(w.read.len() > 50, "{} datasets", w.read.len());
    let wrong = check_all(w);
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn pytables_files_read_as_pytables_reads_them() {
    let w = written("pytables", "pytables");
    assert_eq!(w.read.len(), 13);
    let wrong = check_all(w);
    assert!(wrong.is_empty(), "{wrong:#?}");
    let table = H5Dataset::open(&w.path, "/table").unwrap();
    assert_eq!(table.dtype(), "[('a', '<i4'), ('b', '<f8')]");
    assert_eq!(table.typesize(), 12);
    assert_eq!(table.access(), &Access::Direct { fletcher32: false });
    let fletcher = H5Dataset::open(&w.path, "/table_fletcher32").unwrap();
    assert_eq!(fletcher.access(), &Access::Direct { fletcher32: true });
}

#[test]
fn the_direct_path_takes_what_it_can_and_hdf5_the_rest() {
    let w = written("hdf5plugin", "hdf5plugin");
    for (name, direct) in [
        ("zstd_shuffle_2d", Some(false)),
        ("fletcher32_2d", Some(true)),
        ("u1_rank16", Some(false)),
        ("compound_1d", Some(false)),
        ("fletcher32_first_2d", None),
        ("hdf5shuffle_2d", None),
    ] {
        let ds = H5Dataset::open(&w.path, name).unwrap();
        match (direct, ds.access()) {
            (Some(f), Access::Direct { fletcher32 }) => assert_eq!(*fletcher32, f, "{name}"),
            (None, Access::Hdf5(why)) => assert!(why.contains("filter pipeline"), "{name}: {why}"),
            (want, got) => panic!("{name}: {got:?}, wanted direct = {want:?}"),
        }
    }
}

/// The selection `slices` of the C-order array `full` of `shape`, item by item.
fn naive_slice(full: &[u8], shape: &[usize], typesize: usize, slices: &[Slice]) -> Vec<u8> {
    let sel = Selection::new(shape, slices).unwrap();
    let strides = strata::ndarray::geometry::c_strides(shape);
    let mut out = Vec::new();
    let dims = sel.dims();
    let lists: Vec<Vec<usize>> = dims.iter().map(|d| d.indices().collect()).collect();
    let mut idx = vec![0usize; shape.len()];
    let n: usize = lists.iter().map(Vec::len).product();
    for _ in 0..n {
        let at: usize = idx
            .iter()
            .enumerate()
            .map(|(d, &k)| lists[d][k] * strides[d])
            .sum();
        out.extend_from_slice(&full[at * typesize..(at + 1) * typesize]);
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < lists[d].len() {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

#[test]
fn slices_with_steps_read_only_the_blocks_they_touch() {
    let w = written("hdf5plugin", "hdf5plugin");
    let s = |a, b, step| Slice::new(Some(a), Some(b), step);
    let cases: &[(&str, Vec<Slice>)] = &[
        ("zstd_shuffle_2d", vec![s(3, 117, 7), s(140, 2, -3)]),
        ("f4_3d", vec![Slice::index(5), s(10, 80, 1), s(179, 0, -2)]),
        ("lz4_shuffle_1d", vec![s(1199, 1201, 1)]),
        ("partial_2d", vec![s(50, 350, 25), s(0, 400, 9)]),
        ("compound_1d", vec![s(950, 10, -31)]),
        ("u1_rank16", vec![Slice::index(1); 15]),
        ("big_chunk_2d", vec![s(500, 600, 1)]),
        ("noopts_1d", vec![s(95, 205, 2)]),
        ("hdf5shuffle_2d", vec![s(10, 20, 1), s(100, 0, -5)]),
    ];
    for (name, slices) in cases {
        let (shape, full) = &w.read[*name];
        let ds = H5Dataset::open(&w.path, name).unwrap();
        let want = naive_slice(full, shape, ds.typesize(), slices);
        let (got, _) = ds
            .get_slice_vec(slices)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(got == want, "{name} {slices:?}");
    }
    // 100 rows of a 4 MiB chunk: a few of its blocks are decompressed, not all.
    let ds = H5Dataset::open(&w.path, "big_chunk_2d").unwrap();
    let mut out = vec![0u8; 100 * 1024 * 4];
    let stats = ds.get_slice(&[s(500, 600, 1)], &mut out).unwrap();
    let blocks = ds.blockshape().unwrap();
    let per_row = 1024usize.div_ceil(blocks[1]);
    let rows = (600usize.div_ceil(blocks[0])) - 500 / blocks[0];
    assert_eq!(
        stats.blocks_decompressed,
        per_row * rows,
        "blocks {blocks:?}"
    );
    // Read again (the chunk's frame open, its block count known): one read for the chunk
    // header and its bstarts, one for all the touched blocks, stored back to back.
    let whole = ds.get_slice(&[s(500, 600, 1)], &mut out).unwrap();
    assert_eq!((whole.chunks_read, whole.requests), (1, 2), "{whole:?}");
    // The same rows a block row at a time: the same items, each read with its own header and
    // bstarts, and otherwise the same bytes as the one read of all the blocks.
    let cuts: Vec<i64> = std::iter::once(500)
        .chain((501..600).filter(|r| r % blocks[0] as i64 == 0))
        .chain(std::iter::once(600))
        .collect();
    assert_eq!(cuts.len() - 1, rows);
    let (mut pieces, mut bytes_read) = (Vec::new(), 0);
    for pair in cuts.windows(2) {
        let mut piece = vec![0u8; (pair[1] - pair[0]) as usize * 1024 * 4];
        let stats = ds.get_slice(&[s(pair[0], pair[1], 1)], &mut piece).unwrap();
        assert_eq!((stats.chunks_read, stats.requests), (1, 2), "{pair:?}");
        pieces.extend_from_slice(&piece);
        bytes_read += stats.bytes_read;
    }
    let (shape, full) = &w.read["big_chunk_2d"];
    let want = naive_slice(full, shape, 4, &[s(500, 600, 1)]);
    assert!(pieces == want && out == want, "rows by block rows");
    let nblocks = 1024usize.div_ceil(blocks[0]) * 1024usize.div_ceil(blocks[1]);
    let header_and_bstarts = (32 + 4 * nblocks) as u64;
    assert_eq!(
        whole.bytes_read,
        bytes_read - (rows as u64 - 1) * header_and_bstarts
    );
}

#[test]
fn partly_written_datasets_map_chunks_by_coordinate() {
    let w = written("hdf5plugin", "hdf5plugin");
    let ds = H5Dataset::open(&w.path, "partial_2d").unwrap();
    assert_eq!(ds.fill_value(), (-1.0f32).to_le_bytes());
    assert_eq!(ds.chunk_location(&[0, 0]).unwrap(), None);
    let stored = ds
        .chunk_location(&[1, 0])
        .unwrap()
        .expect("chunk (1, 0) is written");
    assert_eq!(stored.filter_mask, 0);
    // PyTables 3.11's optimized read takes chunk (1, 0) for (0, 0): [[1, 2], [5, 6]] in the
    // verified 4x4 case. By coordinate, the first chunk is the fill value.
    let (first, _) = ds
        .get_slice_vec(&[Slice::range(0, 2), Slice::range(0, 2)])
        .unwrap();
    assert_eq!(first, [(-1.0f32).to_le_bytes(); 4].concat());
    let err = ds.chunk_location(&[4, 0]).unwrap_err();
    assert!(err.to_string().contains("dimension 0: "), "{err}");
    assert!(
        matches!(
            err.root(),
            strata::Error::OutOfRange {
                what: "chunk coordinate",
                value: 4,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn user_blocks_are_skipped_whatever_hdf5_reports() {
    let w = written("userblock", "hdf5plugin");
    assert_eq!(w.read.len(), 5);
    let wrong = check_all(w);
    assert!(wrong.is_empty(), "{wrong:#?}");
    let ds = H5Dataset::open(&w.path, "zstd_shuffle_2d").unwrap();
    let loc = ds.chunk_location(&[0, 0]).unwrap().unwrap();
    let file = std::fs::read(&w.path).unwrap();
    assert!(loc.file_offset >= 4096);
    let at = loc.file_offset as usize;
    assert_eq!(
        &file[at + 2..at + 9],
        b"b2frame",
        "the frame's magic at the chunk's offset"
    );
}

/// A copy of `src` named `name` in the scratch directory, changed by `damage`.
fn damaged(src: &Path, name: &str, damage: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let mut bytes = std::fs::read(src).unwrap();
    damage(&mut bytes);
    let path = scratch().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn damaged_chunks_are_clear_errors() {
    let w = written("hdf5plugin", "hdf5plugin");
    let at = |name: &str, coords: &[usize]| {
        H5Dataset::open(&w.path, name)
            .unwrap()
            .chunk_location(coords)
            .unwrap()
            .unwrap()
    };
    // A flipped byte under Fletcher32: the checksum says so (HDF5's fallback read fails too).
    let loc = at("fletcher32_2d", &[0, 0]);
    let path = damaged(&w.path, "flipped.h5", |b| {
        b[loc.file_offset as usize + 200] ^= 0x40
    });
    let err = H5Dataset::open(&path, "fletcher32_2d")
        .unwrap()
        .to_vec()
        .unwrap_err();
    assert!(err.to_string().contains("Fletcher32"), "{err}");
    // A frame whose header was zeroed.
    let loc = at("zstd_shuffle_2d", &[1, 1]);
    let path = damaged(&w.path, "zeroed.h5", |b| {
        let o = loc.file_offset as usize;
        b[o..o + 64].fill(0);
    });
    let err = H5Dataset::open(&path, "zstd_shuffle_2d")
        .unwrap()
        .to_vec()
        .unwrap_err();
    assert!(err.to_string().contains("zstd_shuffle_2d"), "{err}");
    // Every byte of a frame flipped in turn: an error or data, never a panic.
    let loc = at("lz4_nofilter_2d", &[0, 0]);
    for k in (0..loc.size as usize).step_by(97) {
        let path = damaged(&w.path, "flip-k.h5", |b| {
            b[loc.file_offset as usize + k] ^= 0xff
        });
        let _ = H5Dataset::open(&path, "lz4_nofilter_2d").unwrap().to_vec();
    }
    // A file cut in the middle of a chunk: that chunk ends past the end of the file.
    let loc = at("random_1mib", &[0]);
    let path = damaged(&w.path, "cut.h5", |b| {
        b.truncate(loc.file_offset as usize + 1000)
    });
    match H5Dataset::open(&path, "random_1mib") {
        Ok(ds) => {
            let err = ds.to_vec().unwrap_err();
            assert!(err.to_string().contains("(the file's length)"), "{err}");
        }
        Err(e) => assert!(
            e.to_string().contains("random_1mib") || e.to_string().contains("cut.h5"),
            "{e}"
        ),
    }
}

#[test]
fn a_frame_that_contradicts_the_cd_values_is_an_error_saying_so() {
    // A chunk written directly by h5py: a b2nd frame of shape (60, 50) in a dataset whose
    // chunks (and cd_values) say (50, 60). HDF5's own read fails on it too.
    let path = scratch().join("lying.h5");
    let code = format!(
        r#"
import blosc2, h5py, hdf5plugin, numpy as np
other = blosc2.asarray(np.zeros((60, 50), "f4"), chunks=(60, 50), blocks=(30, 50)).to_cframe()
with h5py.File({path:?}, "w") as f:
    ds = f.create_dataset("x", shape=(50, 60), dtype="<f4", chunks=(50, 60), compression=32026)
    ds.id.write_direct_chunk((0, 0), other)
"#
    );
    let out = Command::new(python())
        .args(["-c", &code])
        .env_remove("HDF5_PLUGIN_PATH")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ds = H5Dataset::open(&path, "x").unwrap();
    assert_eq!(ds.access(), &Access::Direct { fletcher32: false });
    let err = match ds.get_slice_vec(&[Slice::range(0, 2), Slice::range(0, 2)]) {
        Ok((v, _)) => panic!("read {} bytes", v.len()),
        Err(e) => e,
    };
    let msg = err.to_string();
    assert!(
        msg.contains("lying.h5") && msg.contains("shape [60, 50] given, [50, 60] expected"),
        "{msg}"
    );
    assert!(
        matches!(
            err.root(),
            strata::Error::ShapeMismatch { expected, found, .. }
                if expected == &[50, 60] && found == &[60, 50]
        ),
        "{msg}"
    );
}

/// Writes, then checks what `reader` reads from `path` is `want` (name → bytes).
fn peers_read(path: &Path, want: &BTreeMap<&str, Vec<u8>>) {
    for reader in ["hdf5plugin", "pytables"] {
        let dump = scratch().join(format!(
            "{}-{reader}",
            path.file_stem().unwrap().to_str().unwrap()
        ));
        cases_script(
            &[
                "dump",
                reader,
                path.to_str().unwrap(),
                dump.to_str().unwrap(),
            ],
            &[],
        );
        let got = load_dump(&dump);
        for (name, bytes) in want {
            let (_, b) = got
                .get(*name)
                .unwrap_or_else(|| panic!("{reader} cannot read {name}"));
            assert!(b == bytes, "{reader} reads other bytes from {name}");
        }
    }
    let plugins = plugin_dir();
    for (name, bytes) in want {
        let out = scratch().join(format!("{}.h5dump.bin", name.replace('/', "_")));
        let res = Command::new("h5dump")
            .args(["-d", &format!("/{name}"), "-b", "NATIVE", "-o"])
            .arg(&out)
            .arg(path)
            .env("HDF5_PLUGIN_PATH", &plugins)
            .output()
            .expect("h5dump (Debian's hdf5-tools)");
        assert!(
            res.status.success(),
            "h5dump {name}: {}",
            String::from_utf8_lossy(&res.stderr)
        );
        assert!(
            std::fs::read(&out).unwrap() == *bytes,
            "h5dump reads other bytes from {name}"
        );
    }
}

/// A directory holding only Strata's HDF5 plugin, built beside this test.
fn plugin_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let lib = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("libstrata_hdf5_filter.so");
    assert!(
        lib.is_file(),
        "no {}: cargo build -p strata-hdf5-filter",
        lib.display()
    );
    let dir = scratch().join("plugins");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&lib, dir.join("libstrata_hdf5_filter.so")).unwrap();
    dir
}

fn field(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed as f32;
    (0..n)
        .flat_map(|i| {
            x += ((i as f32 * 0.37 + seed as f32).sin() * 3.0).round();
            x.to_le_bytes()
        })
        .collect()
}

#[test]
fn direct_writes_read_back_in_every_peer() {
    let path = scratch().join("written.h5");
    let _ = std::fs::remove_file(&path);
    let mut want: BTreeMap<&str, Vec<u8>> = BTreeMap::new();
    let cparams = |codec| strata::chunk::CParams {
        codec: strata::CodecId(codec),
        typesize: 4,
        ..Default::default()
    };
    for (name, shape, chunks, codec) in [
        ("grid", vec![300usize, 500], vec![128, 200], 5u8),
        ("cube", vec![20, 90, 180], vec![8, 45, 64], 1),
        ("line", vec![100_000], vec![30_000], 0),
        ("rank10", vec![3; 10], vec![2; 10], 5),
    ] {
        let n: usize = shape.iter().product();
        let data = field(n, name.len() as u32);
        let params = ArrayParams::from_dtype(&shape, "<f4")
            .unwrap()
            .with_chunkshape(&chunks)
            .with_cparams(&cparams(codec));
        let stats = write_array(&path, name, &params, &data).unwrap();
        assert!(stats.chunks > 1 && stats.compressed == stats.chunks);
        // Rank 10's 4 KiB chunks are plain frames with little to gain.
        assert!(
            name == "rank10" || stats.stored_bytes < data.len() as u64,
            "{name} compresses"
        );
        let back = H5Dataset::open(&path, name).unwrap();
        assert_eq!(back.to_vec().unwrap(), data, "{name} read directly");
        want.insert(name, data);
    }
    // An array's chunks, copied as stored: a b2nd array with zeros chunks and edge chunks.
    let data = field(250 * 333, 9);
    let params = ArrayParams::from_dtype(&[250, 333], "<f4")
        .unwrap()
        .with_chunkshape(&[100, 120])
        .with_blockshape(&[25, 40])
        .with_cparams(&cparams(5));
    let mut arr = NdArray::from_buffer(&params, &Location::Memory, &data).unwrap();
    arr.set_slice(
        &[Slice::range(0, 100), Slice::range(0, 120)],
        &vec![0u8; 100 * 120 * 4],
    )
    .unwrap();
    let mut exported = data.clone();
    for r in 0..100 {
        exported[r * 333 * 4..(r * 333 + 120) * 4].fill(0);
    }
    let stats = export_array(&arr, &path, "/group/exported", false).unwrap();
    assert_eq!((stats.chunks, stats.compressed), (9, 0));
    let back = H5Dataset::open(&path, "/group/exported").unwrap();
    assert_eq!(back.blockshape(), Some(&[25usize, 40][..]));
    assert_eq!(back.to_vec().unwrap(), exported);
    drop(back); // HDF5 opens a file for writing only when no reader has it open
    want.insert("group/exported", exported);
    let again = export_array(&arr, &path, "/group/exported", false).unwrap_err();
    assert!(again.to_string().contains("already exists"), "{again}");
    peers_read(&path, &want);
}

#[test]
fn a_block_cache_serves_repeated_reads_of_one_open_dataset() {
    let path = scratch().join("cached.h5");
    let _ = std::fs::remove_file(&path);
    let data = field(200 * 300, 7);
    let params = ArrayParams::from_dtype(&[200, 300], "<f4")
        .unwrap()
        .with_chunkshape(&[100, 150])
        .with_blockshape(&[25, 50]);
    write_array(&path, "/g", &params, &data).unwrap();
    let cache = std::sync::Arc::new(strata::cache::BlockCache::new(16 << 20));
    let mut ds = H5Dataset::open(&path, "/g").unwrap();
    ds.set_cache(Some(std::sync::Arc::clone(&cache)));
    let row = [Slice::index(30), Slice::FULL];
    let want = naive_slice(&data, &[200, 300], 4, &row);
    assert_eq!(ds.get_slice_vec(&row).unwrap().0, want);
    // Row 30 lies in 6 blocks (one block row of 2 chunks, 3 blocks across each).
    let first = cache.stats();
    assert_eq!((first.misses, first.hits), (6, 0));
    assert_eq!(ds.get_slice_vec(&row).unwrap().0, want);
    assert_eq!((cache.stats().misses, cache.stats().hits), (6, 6));
    // Another open of the dataset has a version of its own; detached, nothing is counted.
    let mut other = H5Dataset::open(&path, "/g").unwrap();
    other.set_cache(Some(std::sync::Arc::clone(&cache)));
    assert_eq!(other.get_slice_vec(&row).unwrap().0, want);
    assert_eq!(cache.stats().misses, 12);
    ds.set_cache(None);
    assert_eq!(ds.get_slice_vec(&row).unwrap().0, want);
    assert_eq!((cache.stats().misses, cache.stats().hits), (12, 6));
}
