//! Block rules for N-d arrays side by side on real grids and the Caterva shapes: the time to
//! write the array, its compression ratio, and the time to read it whole, one hyperplane per
//! axis (a row and a column in 2-D) and a 100 x 100 box, for each rule in the same run. It
//! prints Markdown tables; it asserts only that every read returns the array's own items.
//!
//! Run with
//! `cargo test --release --test partition_rules -- --ignored --nocapture`;
//! `PARTITION_ROUNDS` (default 5) sets the rounds, `PARTITION_CASES` a comma-separated subset
//! of the case names (`etopo5`, `levitus`, `8000x8000`, `800x600x300`, `400x80x100x50`) and
//! `PARTITION_CODECS` one of `zstd`, `lz4`, `blosclz` or a comma-separated list (default
//! `zstd,lz4`). The rules take turns within each round, their order rotating from round to
//! round, and each read is timed alone; the tables give medians over the rounds. Reads and
//! writes use 2 threads. The Caterva shapes hold `benches/slicing.py`'s field (float64),
//! written by the venv's Python into a temporary directory.
//!
//! Skipped, with a message, when `.venv/bin/python` or the data files are missing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use strata::chunk::{CParams, DParams};
use strata::ndarray::partition::{balanced, default_chunkshape, even_out, partitions, slab};
use strata::ndarray::{ArrayParams, Location, NdArray, Slice};
use strata::scheduler::sizing::recommended_blocksize;
use strata::scheduler::topology::Topology;
use strata::CodecId;

const NTHREADS: usize = 2;

/// One array read from a `.npy` file (little-endian floats, C order).
struct Grid {
    name: String,
    shape: Vec<usize>,
    typesize: usize,
    dtype: &'static str,
    data: Vec<u8>,
}

fn load_npy(name: &str, path: &Path) -> Grid {
    let raw = std::fs::read(path).unwrap();
    assert_eq!(&raw[..6], b"\x93NUMPY", "{}", path.display());
    let (len, at) = if raw[6] == 1 {
        (u16::from_le_bytes([raw[8], raw[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes(raw[8..12].try_into().unwrap()) as usize,
            12,
        )
    };
    let header = std::str::from_utf8(&raw[at..at + len]).unwrap();
    assert!(header.contains("'fortran_order': False"), "{header}");
    let (typesize, dtype) = if header.contains("'<f4'") {
        (4, "float32")
    } else if header.contains("'<f8'") {
        (8, "float64")
    } else {
        panic!("{}: not <f4 or <f8: {header}", path.display())
    };
    let dims = &header[header.find("'shape': (").unwrap() + 10..];
    let shape = dims[..dims.find(')').unwrap()]
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect();
    let mut data = raw;
    data.drain(..at + len);
    Grid {
        name: name.to_string(),
        shape,
        typesize,
        dtype,
        data,
    }
}

/// A block rule: its name and the chunkshape and blockshape it gives an array.
struct Rule {
    name: String,
    chunks: Vec<usize>,
    blocks: Vec<usize>,
}

/// python-blosc2's default chunks and blocks for `grid` (its `compute_chunks_blocks`).
fn python_partitions(python: &Path, grid: &Grid) -> (Vec<usize>, Vec<usize>) {
    let shape: Vec<String> = grid.shape.iter().map(ToString::to_string).collect();
    let code = format!(
        "import numpy as np\nfrom blosc2.core import compute_chunks_blocks\n\
         c, b = compute_chunks_blocks(({},), dtype=np.dtype('{}'))\n\
         print(','.join(map(str, c)) + ' ' + ','.join(map(str, b)))",
        shape.join(", "),
        grid.dtype
    );
    let out = Command::new(python).args(["-c", &code]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let parse = |s: &str| -> Vec<usize> { s.split(',').map(|v| v.parse().unwrap()).collect() };
    let (c, b) = text.trim().split_once(' ').unwrap();
    (parse(c), parse(b))
}

/// The rules compared, for `grid` on the machine `topology`.
fn rules(python: &Path, grid: &Grid, topology: &Topology) -> Vec<Rule> {
    let ts = grid.typesize;
    let shape = &grid.shape;
    let items = recommended_blocksize(topology, ts) / ts;
    let with_chunks = |name: String, blocks: Vec<usize>| Rule {
        chunks: default_chunkshape(shape, &blocks, ts, topology),
        name,
        blocks,
    };
    let kib = |items: usize| (items * ts) >> 10;
    let bal = balanced(items, shape);
    // C-Blosc2's block size, 4 L1d, as a C-order slab evened out
    let l1_items = 4 * topology.l1d.bytes / ts;
    let l1_slab = even_out(&slab(l1_items, shape), shape);
    // each extent `num / den` times the smaller of `a`'s and `b`'s, within the shape
    let scaled_min = |a: &[usize], b: &[usize], num: usize, den: usize| -> Vec<usize> {
        a.iter()
            .zip(b)
            .zip(shape)
            .map(|((&a, &b), &n)| (a.min(b) * num / den).clamp(1, n))
            .collect()
    };
    let mut out = vec![
        with_chunks(
            format!("balanced {} KiB", kib(items)),
            even_out(&bal, shape),
        ),
        with_chunks(
            format!("balanced {} KiB", kib(items / 4)),
            even_out(&balanced(items / 4, shape), shape),
        ),
        with_chunks(
            format!("min(balanced, slab {} KiB)", kib(l1_items)),
            even_out(&scaled_min(&bal, &l1_slab, 2, 2), shape),
        ),
        with_chunks(
            format!("1.5 min(balanced, slab {} KiB)", kib(l1_items)),
            even_out(&scaled_min(&bal, &l1_slab, 3, 2), shape),
        ),
        with_chunks(
            format!("2 min(balanced, slab {} KiB)", kib(l1_items)),
            even_out(&scaled_min(&bal, &l1_slab, 4, 2), shape),
        ),
        {
            // C-order slab of a quarter block whose innermost extent is at most 2 KiB.
            let run = (2048 / ts).min(shape[shape.len() - 1]);
            let mut bound = shape.clone();
            *bound.last_mut().unwrap() = run;
            with_chunks(
                format!("slab {} KiB, 2 KiB runs", kib(items / 4)),
                even_out(&slab(items / 4, &bound), shape),
            )
        },
    ];
    let (c, b) = python_partitions(python, grid);
    out.push(Rule {
        name: "python-blosc2".to_string(),
        chunks: c,
        blocks: b,
    });
    let (c, b) = partitions(shape, None, None, ts, topology).unwrap();
    match out.iter_mut().find(|r| r.chunks == c && r.blocks == b) {
        Some(r) => r.name.push_str(" (Strata default)"),
        None => out.push(Rule {
            name: "Strata default".to_string(),
            chunks: c,
            blocks: b,
        }),
    }
    out
}

/// The reads timed: name and slices (empty: the whole array).
fn reads(shape: &[usize]) -> Vec<(String, Vec<Slice>)> {
    let ndim = shape.len();
    let mut out = vec![("whole".to_string(), vec![])];
    for (axis, &len) in shape.iter().enumerate() {
        let at = (len * 37 / 100) as i64;
        let s = (0..ndim)
            .map(|d| {
                if d == axis {
                    Slice::index(at)
                } else {
                    Slice::FULL
                }
            })
            .collect();
        let name = match (ndim, axis) {
            (2, 0) => "row".to_string(),
            (2, 1) => "column".to_string(),
            _ => format!("axis {axis}"),
        };
        out.push((name, s));
    }
    let boxed = (0..ndim)
        .map(|d| {
            if d + 2 >= ndim {
                let start = (shape[d] / 3) as i64;
                Slice::range(start, (start + 100).min(shape[d] as i64))
            } else {
                Slice::index((shape[d] / 2) as i64)
            }
        })
        .collect();
    out.push(("box 100x100".to_string(), boxed));
    out
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn codec(name: &str) -> CodecId {
    match name {
        "zstd" => CodecId::ZSTD,
        "lz4" => CodecId::LZ4,
        "blosclz" => CodecId::BLOSCLZ,
        _ => panic!("PARTITION_CODECS: unknown codec {name}"),
    }
}

fn run_grid(python: &Path, grid: &Grid, codec_name: &str, rounds: usize, topology: &Topology) {
    let rules = rules(python, grid, topology);
    let reads = reads(&grid.shape);
    let cparams = CParams {
        codec: codec(codec_name),
        clevel: 5,
        nthreads: NTHREADS,
        ..CParams::default()
    };
    // DParams is gaining fields (the N-d context for plugins).
    #[allow(clippy::needless_update)]
    let dparams = DParams {
        nthreads: NTHREADS,
        ..Default::default()
    };
    // times[rule][0] = write, times[rule][1 + r] = read r
    let mut times = vec![vec![Vec::new(); 1 + reads.len()]; rules.len()];
    let mut ratio = vec![0.0; rules.len()];
    let mut blocks_read = vec![vec![0; reads.len()]; rules.len()];
    // What each read returns, from the first rule's array (the whole read is checked against
    // the grid itself); every rule's reads must return the same.
    let want: Vec<Vec<u8>> = {
        let p = ArrayParams::new(&grid.shape, grid.typesize)
            .with_chunkshape(&rules[0].chunks)
            .with_blockshape(&rules[0].blocks)
            .with_cparams(&cparams);
        let arr = NdArray::from_buffer(&p, &Location::Memory, &grid.data).unwrap();
        reads
            .iter()
            .map(|(_, s)| {
                if s.is_empty() {
                    Vec::new()
                } else {
                    arr.get_slice_vec(s).unwrap().0
                }
            })
            .collect()
    };
    let mut out = vec![0u8; grid.data.len()];
    for round in 0..rounds {
        for k in 0..rules.len() {
            let i = (k + round) % rules.len();
            let rule = &rules[i];
            let p = ArrayParams::new(&grid.shape, grid.typesize)
                .with_chunkshape(&rule.chunks)
                .with_blockshape(&rule.blocks)
                .with_cparams(&cparams);
            let t = Instant::now();
            let arr = NdArray::from_buffer(&p, &Location::Memory, &grid.data).unwrap();
            times[i][0].push(t.elapsed().as_secs_f64());
            let arr = arr.with_dparams(dparams.clone());
            ratio[i] = arr.nbytes() as f64 / arr.cbytes() as f64;
            for (r, (name, slices)) in reads.iter().enumerate() {
                let expected = if slices.is_empty() {
                    &grid.data[..]
                } else {
                    &want[r][..]
                };
                let dst = &mut out[..expected.len()];
                let t = Instant::now();
                let stats = arr.get_slice(slices, dst).unwrap();
                times[i][1 + r].push(t.elapsed().as_secs_f64());
                blocks_read[i][r] = stats.blocks_decompressed;
                assert!(*dst == *expected, "{}: {name} read differs", rule.name);
            }
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "\n### {} {:?} {}, {} 5 + shuffle, {NTHREADS} threads, medians of {rounds} rounds (load {})\n",
        grid.name,
        grid.shape,
        grid.dtype,
        codec_name,
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    let head: Vec<&str> = reads.iter().map(|(n, _)| n.as_str()).collect();
    println!(
        "| rule | chunks / blocks | block KiB | write ms | ratio | {} ms |",
        head.join(" ms | ")
    );
    println!("|---|---|---|---|---|{}", "---|".repeat(head.len()));
    let med: Vec<Vec<f64>> = times
        .iter_mut()
        .map(|t| t.iter_mut().map(|v| median(v)).collect())
        .collect();
    let defaults = [
        0,
        rules
            .iter()
            .position(|r| r.name.starts_with("python-blosc2"))
            .unwrap(),
    ];
    for (i, rule) in rules.iter().enumerate() {
        let cells: Vec<String> = (0..reads.len())
            .map(|r| {
                let best = defaults
                    .iter()
                    .map(|&d| med[d][1 + r])
                    .fold(f64::INFINITY, f64::min);
                format!(
                    "{:.3} ({} blk, {:.2}x)",
                    med[i][1 + r] * 1e3,
                    blocks_read[i][r],
                    med[i][1 + r] / best
                )
            })
            .collect();
        let best_ratio = defaults.iter().map(|&d| ratio[d]).fold(0.0, f64::max);
        println!(
            "| {} | {:?} / {:?} | {} | {:.1} | {:.3} ({:.3}x) | {} |",
            rule.name,
            rule.chunks,
            rule.blocks,
            (rule.blocks.iter().product::<usize>() * grid.typesize) >> 10,
            med[i][0] * 1e3,
            ratio[i],
            ratio[i] / best_ratio,
            cells.join(" | ")
        );
    }
}

#[test]
#[ignore = "timing; run on demand"]
fn partition_rules_side_by_side() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = root.join(".venv/bin/python");
    let etopo = root.join("data/etopo5_rose.npy");
    let levitus = root.join("data/levitus_temp.npy");
    for p in [&python, &etopo, &levitus] {
        if !p.exists() {
            eprintln!("skipped: {} is missing", p.display());
            return;
        }
    }
    let rounds: usize = std::env::var("PARTITION_ROUNDS").map_or(5, |v| v.parse().unwrap());
    let wanted: Option<Vec<String>> = std::env::var("PARTITION_CASES")
        .ok()
        .map(|v| v.split(',').map(str::to_string).collect());
    let codecs = std::env::var("PARTITION_CODECS").unwrap_or_else(|_| "zstd,lz4".to_string());
    let want = |name: &str| wanted.as_ref().is_none_or(|w| w.iter().any(|n| n == name));
    let topology = Topology::detect();
    let dir = std::env::temp_dir().join(format!("strata-partitions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut cases: Vec<(String, PathBuf)> = vec![
        ("etopo5".to_string(), etopo.clone()),
        ("levitus".to_string(), levitus.clone()),
    ];
    for shape in ["8000x8000", "800x600x300", "400x80x100x50"] {
        cases.push((shape.to_string(), dir.join(format!("{shape}.npy"))));
    }
    for (name, path) in &cases {
        if !want(name) {
            continue;
        }
        if !path.exists() {
            let shape = name.replace('x', ", ");
            let code = format!(
                "import sys\nsys.path.insert(0, {:?})\nimport numpy as np\nfrom slicing import field\n\
                 np.save({:?}, field(({shape},)))",
                root.join("benches").display().to_string(),
                path.display().to_string()
            );
            let out = Command::new(&python).args(["-c", &code]).output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let grid = load_npy(name, path);
        for c in codecs.split(',') {
            run_grid(&python, &grid, c, rounds, &topology);
        }
        if path.starts_with(&dir) {
            std::fs::remove_file(path).unwrap();
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
