//! b2nd chunks against C-Blosc2 (python-blosc2 4.14.1 in .venv), both ways: the chunks Strata
//! builds for an array are byte-identical to `arr.schunk.get_chunk(i)` for the same data,
//! partitions and cparams (C-Blosc2 on one thread), Strata reads python-blosc2's chunks, and
//! python-blosc2 reads Strata's (tests/interop/ndarray_chunks.py is its side). Zeros and full
//! arrays hold the same special chunks as `blosc2.zeros` / `blosc2.full`.
//!
//! Skipped, with a message, when `.venv/bin/python` is missing (scripts/setup-venv.sh makes it).

use std::path::{Path, PathBuf};
use std::process::Command;
use strata::chunk::CParams;
use strata::format::b2nd::B2ndMeta;
use strata::ndarray::{ArrayParams, ChunkSource, Location, NdArray, Slice};
use strata::schunk::{SChunk, SChunkOptions};
use strata::{CodecId, FilterId};

struct Case {
    name: &'static str,
    shape: &'static [usize],
    chunks: &'static [usize],
    blocks: &'static [usize],
    dtype: &'static str,
    typesize: usize,
    codec: CodecId,
    clevel: u8,
    filters: [FilterId; 6],
    filters_meta: [u8; 6],
    source: &'static str,
}

const SHUFFLE: [FilterId; 6] = [
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::SHUFFLE,
];

fn cases() -> Vec<Case> {
    let base = Case {
        name: "",
        shape: &[],
        chunks: &[],
        blocks: &[],
        dtype: "",
        typesize: 0,
        codec: CodecId::ZSTD,
        clevel: 5,
        filters: SHUFFLE,
        filters_meta: [0; 6],
        source: "ramp",
    };
    vec![
        Case {
            name: "spec_5x7_u1",
            shape: &[5, 7],
            chunks: &[4, 4],
            blocks: &[2, 3],
            dtype: "|u1",
            typesize: 1,
            ..base
        },
        Case {
            name: "etopo5_corner_f4",
            shape: &[300, 500],
            chunks: &[128, 200],
            blocks: &[32, 50],
            dtype: "<f4",
            typesize: 4,
            source: "etopo5",
            ..base
        },
        Case {
            name: "levitus_f4_lz4_bitshuffle",
            shape: &[20, 180, 360],
            chunks: &[10, 64, 100],
            blocks: &[5, 16, 25],
            dtype: "<f4",
            typesize: 4,
            codec: CodecId::LZ4,
            filters: [0, 0, 0, 0, 0, 2].map(FilterId),
            source: "levitus",
            ..base
        },
        Case {
            name: "u8_4d_delta",
            shape: &[6, 7, 5, 8],
            chunks: &[4, 5, 3, 6],
            blocks: &[2, 2, 2, 3],
            dtype: "<u8",
            typesize: 8,
            codec: CodecId::LZ4,
            filters: [0, 0, 0, 0, 3, 1].map(FilterId),
            ..base
        },
        Case {
            name: "void300_blosclz",
            shape: &[9, 11],
            chunks: &[4, 5],
            blocks: &[3, 2],
            dtype: "|V300",
            typesize: 300,
            codec: CodecId::BLOSCLZ,
            ..base
        },
        Case {
            name: "i2_with_a_zero_chunk",
            shape: &[40, 30],
            chunks: &[16, 16],
            blocks: &[8, 8],
            dtype: "<i2",
            typesize: 2,
            clevel: 1,
            source: "ramp_with_zeros",
            ..base
        },
        Case {
            name: "i4_zlib_bytedelta",
            shape: &[1000],
            chunks: &[300],
            blocks: &[64],
            dtype: "<i4",
            typesize: 4,
            codec: CodecId::ZLIB,
            clevel: 9,
            filters: [1, 35, 0, 0, 0, 0].map(FilterId),
            filters_meta: [0, 4, 0, 0, 0, 0],
            ..base
        },
        Case {
            name: "u2_clevel0_memcpyed",
            shape: &[33, 17],
            chunks: &[10, 10],
            blocks: &[5, 4],
            dtype: "<u2",
            typesize: 2,
            codec: CodecId::BLOSCLZ,
            clevel: 0,
            ..base
        },
        Case {
            name: "f8_0d",
            dtype: "<f8",
            typesize: 8,
            ..base
        },
    ]
}

fn json_list<T: std::fmt::Display>(v: &[T]) -> String {
    let items: Vec<String> = v.iter().map(ToString::to_string).collect();
    format!("[{}]", items.join(", "))
}

fn to_json(cases: &[Case]) -> String {
    let objs: Vec<String> = cases
        .iter()
        .map(|c| {
            format!(
                r#"{{"name": "{}", "shape": {}, "chunks": {}, "blocks": {}, "dtype": "{}", "codec": {}, "clevel": {}, "filters": {}, "filters_meta": {}, "source": "{}"}}"#,
                c.name,
                json_list(c.shape),
                json_list(c.chunks),
                json_list(c.blocks),
                c.dtype,
                c.codec.0,
                c.clevel,
                json_list(&c.filters.map(u8::from)),
                json_list(&c.filters_meta),
                c.source
            )
        })
        .collect();
    format!("[{}]", objs.join(",\n"))
}

fn run_python(python: &Path, args: &[&Path]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/ndarray_chunks.py");
    let out = Command::new(python)
        .arg(&script)
        .args(args)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{} {:?} failed:\n{}\n{}",
        script.display(),
        args,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    print!("{}", String::from_utf8_lossy(&out.stdout));
}

fn read_chunks(dir: &Path, prefix: &str) -> Vec<Vec<u8>> {
    (0..)
        .map(|i| dir.join(format!("{prefix}_{i}.chunk")))
        .take_while(|p| p.exists())
        .map(|p| std::fs::read(p).unwrap())
        .collect()
}

/// The compressed chunks of `arr`, chunk 0 first (special chunks as C-Blosc2 rebuilds them).
fn chunks_of(arr: &NdArray) -> Vec<Vec<u8>> {
    (0..arr.store().nchunks())
        .map(|n| ChunkSource::chunk(arr.store(), n).unwrap().into_owned())
        .collect()
}

fn params(c: &Case) -> ArrayParams {
    let cparams = CParams {
        codec: c.codec,
        clevel: c.clevel,
        filters: c.filters,
        filters_meta: c.filters_meta,
        ..CParams::default()
    };
    ArrayParams::new(c.shape, c.typesize)
        .with_chunkshape(c.chunks)
        .with_blockshape(c.blocks)
        .with_dtype(c.dtype)
        .with_cparams(&cparams)
}

#[test]
fn chunks_are_cblosc2_chunks_both_ways() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup-venv.sh (the pinned python-blosc2 these checks need)",
        python.display()
    );
    for grid in ["data/etopo5_rose.npy", "data/levitus_temp.npy"] {
        assert!(
            root.join(grid).exists(),
            "missing {grid}: run scripts/fetch-data.sh"
        );
    }
    let dir: PathBuf = std::env::temp_dir().join(format!("strata-ndarray-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = cases();
    let spec = dir.join("cases.json");
    std::fs::write(&spec, to_json(&cases)).unwrap();
    run_python(&python, &[Path::new("make"), &spec, &dir]);

    for c in &cases {
        let d = dir.join(c.name);
        let data = std::fs::read(d.join("data.bin")).unwrap();
        let theirs = read_chunks(&d, "cblosc2");
        // Strata's chunks are C-Blosc2's, byte for byte. A special chunk (zeros) is an index
        // entry in a frame, which rebuilds it with default parameters (as C-Blosc2's
        // frames do): its kind and size are what must match.
        let arr = NdArray::from_buffer(&params(c), &Location::Memory, &data).unwrap();
        let ours = chunks_of(&arr);
        assert_eq!(ours.len(), theirs.len(), "{}: chunk count", c.name);
        assert!(!ours.is_empty());
        for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            let special = |c: &[u8]| c.len() == 32 && c[31] & 0x70 != 0;
            if special(b) {
                assert!(
                    special(a) && a[31] == b[31] && a[4..8] == b[4..8],
                    "{}: special chunk {i} differs ({a:x?} vs {b:x?})",
                    c.name
                );
            } else {
                assert!(
                    a == b,
                    "{}: chunk {i} differs ({} vs {} bytes)",
                    c.name,
                    a.len(),
                    b.len()
                );
            }
            std::fs::write(d.join(format!("strata_{i}.chunk")), a).unwrap();
        }
        // Arrays made whole hold C-Blosc2's special chunks.
        let zeros = NdArray::zeros(&params(c), &Location::Memory).unwrap();
        assert_eq!(
            chunks_of(&zeros)[0],
            std::fs::read(d.join("zeros.chunk")).unwrap()
        );
        let full = NdArray::full(&params(c), &Location::Memory, &data[..c.typesize]).unwrap();
        assert_eq!(
            chunks_of(&full)[0],
            std::fs::read(d.join("full.chunk")).unwrap()
        );
        // Strata reads C-Blosc2's chunks, whole and sliced.
        let meta = B2ndMeta::new(
            c.shape.iter().map(|&n| n as i64).collect(),
            c.chunks.iter().map(|&n| n as i32).collect(),
            c.blocks.iter().map(|&n| n as i32).collect(),
            c.dtype,
        )
        .unwrap();
        let opts = SChunkOptions {
            cparams: arr.cparams().clone(),
            metalayers: vec![("b2nd".into(), meta.to_bytes())],
            ..SChunkOptions::default()
        };
        let mut schunk = SChunk::new(&opts).unwrap();
        let refs: Vec<&[u8]> = theirs.iter().map(Vec::as_slice).collect();
        schunk.append_chunks(&refs).unwrap();
        let peer = NdArray::from_schunk(schunk).unwrap();
        assert_eq!(
            peer.to_vec().unwrap(),
            data,
            "{}: reading C-Blosc2's chunks",
            c.name
        );
        let slices: Vec<Slice> = c
            .shape
            .iter()
            .map(|&n| Slice::range((n / 3) as i64, (n - n / 4) as i64).step_by(-2))
            .collect();
        assert_eq!(
            peer.get_slice_vec(&slices).unwrap(),
            arr.get_slice_vec(&slices).unwrap(),
            "{}",
            c.name
        );
    }
    // C-Blosc2 reads Strata's chunks.
    run_python(&python, &[Path::new("check"), &spec, &dir]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The float32 grid of a `.npy` file (version 1 or 2, `<f4`, C order): data and shape.
fn load_npy_f4(path: &Path) -> (Vec<u8>, Vec<usize>) {
    let raw = std::fs::read(path).unwrap();
    assert_eq!(&raw[..6], b"\x93NUMPY");
    let (len, at) = if raw[6] == 1 {
        (u16::from_le_bytes([raw[8], raw[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes(raw[8..12].try_into().unwrap()) as usize,
            12,
        )
    };
    let header = std::str::from_utf8(&raw[at..at + len]).unwrap();
    assert!(header.contains("'<f4'") && header.contains("'fortran_order': False"));
    let dims = &header[header.find("'shape': (").unwrap() + 10..];
    let shape = dims[..dims.find(')').unwrap()]
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect();
    (raw[at + len..].to_vec(), shape)
}

/// Slice reads of ETOPO5 (2161 x 4320 float32, zstd 5 + shuffle, 2 threads), Strata and
/// python-blosc2 on the same machine in one run, in python-blosc2's default partitions and in
/// Strata's. Run with
/// `cargo test --release --test ndarray_interop -- --ignored --nocapture slice_timings`.
#[test]
#[ignore = "timing; run on demand"]
fn slice_timings_side_by_side() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv/bin/python");
    let (grid, shape) = load_npy_f4(&root.join("data/etopo5_rose.npy"));
    let (runs, nthreads) = (7, 2);
    let configs: [(&str, &[usize], &[usize]); 2] = [
        ("python-blosc2 defaults", &[2161, 4320], &[11, 4320]),
        ("Strata defaults", &[2161, 4320], &[361, 360]),
    ];
    let reads: [(&str, Vec<Slice>); 5] = [
        ("whole", vec![]),
        ("row", vec![Slice::index(1000)]),
        ("column", vec![Slice::FULL, Slice::index(2000)]),
        (
            "box 100x100",
            vec![Slice::range(1000, 1100), Slice::range(2000, 2100)],
        ),
        ("item", vec![Slice::index(1234), Slice::index(3210)]),
    ];
    let spec: Vec<String> = configs
        .iter()
        .map(|(name, c, b)| {
            format!(
                r#"{{"name": "{name}", "chunks": {}, "blocks": {}, "codec": 5, "clevel": 5, "filters": {}, "filters_meta": [0,0,0,0,0,0], "nthreads": {nthreads}, "runs": {runs}}}"#,
                json_list(c),
                json_list(b),
                json_list(&SHUFFLE)
            )
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("strata-timing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec_path = dir.join("timing.json");
    std::fs::write(&spec_path, format!("[{}]", spec.join(","))).unwrap();
    let script = root.join("tests/interop/ndarray_chunks.py");
    let out = Command::new(&python)
        .arg(&script)
        .args([Path::new("time"), &spec_path, &dir])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let python_times = String::from_utf8(out.stdout).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();

    println!("| partitions (chunks / blocks) | read | Strata | python-blosc2 | C / S |");
    println!("|---|---|---|---|---|");
    for (name, chunks, blocks) in configs {
        let p = ArrayParams::new(&shape, 4)
            .with_chunkshape(chunks)
            .with_blockshape(blocks)
            .with_cparams(&CParams {
                codec: CodecId::ZSTD,
                clevel: 5,
                ..CParams::default()
            });
        // DParams is gaining fields (the N-d context for plugins).
        #[allow(clippy::needless_update)]
        let dparams = strata::chunk::DParams {
            nthreads,
            ..Default::default()
        };
        let arr = NdArray::from_buffer(&p, &Location::Memory, &grid)
            .unwrap()
            .with_dparams(dparams);
        for (read, slices) in &reads {
            let (want, out_shape) = arr.get_slice_vec(slices).unwrap();
            let mut out = vec![0u8; want.len()];
            let mut best = f64::INFINITY;
            let mut blocks_read = 0;
            for _ in 0..runs {
                let t = std::time::Instant::now();
                let stats = arr.get_slice(slices, &mut out).unwrap();
                best = best.min(t.elapsed().as_secs_f64());
                blocks_read = stats.blocks_decompressed;
            }
            assert_eq!(out, want);
            let theirs: f64 = python_times
                .lines()
                .map(|l| l.split('\t').collect::<Vec<_>>())
                .find(|f| f[0] == name && f[1] == *read)
                .map(|f| f[2].parse().unwrap())
                .unwrap();
            println!(
                "| {name} {chunks:?} / {blocks:?} | {read} {out_shape:?} ({blocks_read} blocks) | {:.3} ms | {:.3} ms | {:.2} |",
                best * 1e3,
                theirs * 1e3,
                theirs / best
            );
        }
    }
}
