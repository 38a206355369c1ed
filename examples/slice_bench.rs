//! Hyperplane reads of a `.b2nd` array, timed one by one, for `benches/slicing.py`.
//!
//! ```text
//! slice_bench FILE.b2nd --axis K --indices I1,I2,... [--nthreads N] [--warmup W] [--dump OUT]
//! ```
//!
//! Opens FILE once (untimed), makes W untimed reads (default 1) of the hyperplane at I1, then
//! reads the hyperplane `arr[:, ..., i, ..., :]` (`i` at axis K) at each index in order, each
//! timed alone from the call to a filled output (allocated per read as NumPy allocates the
//! arrays python-blosc2 returns: outputs of 4 MiB or more are anonymous memory advised to use
//! transparent huge pages, `MADV_HUGEPAGE`, as NumPy's allocator does). Prints one line of
//! JSON: `{"axis", "indices", "times_s", "median_s", "blocks_decompressed",
//! "chunks_touched", "nthreads"}`, with one entry per index in the lists. With `--dump` it
//! also writes the timed hyperplanes, concatenated in index order, items in C order as
//! stored (little-endian). Errors: a message on stderr and exit status 1.

use memmap2::{Advice, MmapMut, MmapOptions};
use serde_json::json;
use std::time::Instant;
use strata::chunk::DParams;
use strata::ndarray::{NdArray, OpenMode, Slice};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

struct Args {
    file: String,
    axis: usize,
    indices: Vec<i64>,
    nthreads: usize,
    warmup: usize,
    dump: Option<String>,
}

fn parse() -> Res<Args> {
    let mut it = std::env::args().skip(1);
    let mut args = Args {
        file: String::new(),
        axis: usize::MAX,
        indices: Vec::new(),
        nthreads: 1,
        warmup: 1,
        dump: None,
    };
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--axis" => args.axis = value("--axis")?.parse()?,
            "--indices" => {
                args.indices = value("--indices")?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?;
            }
            "--nthreads" => args.nthreads = value("--nthreads")?.parse()?,
            "--warmup" => args.warmup = value("--warmup")?.parse()?,
            "--dump" => args.dump = Some(value("--dump")?),
            f if f.starts_with("--") => return Err(format!("unknown option {f}").into()),
            f if args.file.is_empty() => args.file = f.to_owned(),
            f => return Err(format!("unexpected argument {f}").into()),
        }
    }
    if args.file.is_empty() || args.axis == usize::MAX || args.indices.is_empty() {
        return Err("usage: slice_bench FILE.b2nd --axis K --indices I1,I2,... \
                    [--nthreads N] [--warmup W] [--dump OUT]"
            .into());
    }
    Ok(args)
}

/// A zeroed output buffer of `len` bytes, allocated as NumPy allocates array data: from 4 MiB
/// on, with transparent huge pages advised (NumPy's `npy_alloc_cache`/`PyDataMem_UserNEW`
/// path calls `madvise(MADV_HUGEPAGE)` on such buffers).
enum Output {
    Heap(Vec<u8>),
    Huge(MmapMut),
}

impl Output {
    fn new(len: usize) -> Res<Output> {
        if len < 4 << 20 {
            return Ok(Output::Heap(vec![0u8; len]));
        }
        let map = MmapOptions::new().len(len).map_anon()?;
        map.advise(Advice::HugePage)?;
        Ok(Output::Huge(map))
    }

    fn bytes(&mut self) -> &mut [u8] {
        match self {
            Output::Heap(v) => v,
            Output::Huge(m) => m,
        }
    }
}

fn run() -> Res<()> {
    let args = parse()?;
    let arr = NdArray::open(&args.file, OpenMode::Read)?.with_dparams(DParams {
        nthreads: args.nthreads,
        ..DParams::default()
    });
    if args.axis >= arr.ndim() {
        return Err(format!("axis {} of a {}-d array", args.axis, arr.ndim()).into());
    }
    let key = |i: i64| -> Vec<Slice> {
        (0..arr.ndim())
            .map(|d| {
                if d == args.axis {
                    Slice::index(i)
                } else {
                    Slice::FULL
                }
            })
            .collect()
    };
    let plane_bytes = arr
        .shape()
        .iter()
        .enumerate()
        .filter(|&(d, _)| d != args.axis)
        .map(|(_, &n)| n)
        .product::<usize>()
        * arr.typesize();
    for _ in 0..args.warmup {
        let mut out = Output::new(plane_bytes)?;
        arr.get_slice(&key(args.indices[0]), out.bytes())?;
    }
    let (mut times, mut blocks, mut chunks) = (Vec::new(), Vec::new(), Vec::new());
    let mut dump = Vec::new();
    for &i in &args.indices {
        let t = Instant::now();
        let mut out = Output::new(plane_bytes)?;
        let stats = arr.get_slice(&key(i), out.bytes())?;
        times.push(t.elapsed().as_secs_f64());
        blocks.push(stats.blocks_decompressed);
        chunks.push(stats.chunks_read);
        if args.dump.is_some() {
            dump.extend_from_slice(out.bytes());
        }
    }
    if let Some(path) = &args.dump {
        std::fs::write(path, &dump)?;
    }
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let m = sorted.len();
    let median = if m % 2 == 1 {
        sorted[m / 2]
    } else {
        (sorted[m / 2 - 1] + sorted[m / 2]) / 2.0
    };
    let out = json!({
        "axis": args.axis,
        "indices": args.indices,
        "times_s": times,
        "median_s": median,
        "blocks_decompressed": blocks,
        "chunks_touched": chunks,
        "nthreads": args.nthreads,
    });
    println!("{out}");
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("slice_bench: {e}");
        std::process::exit(1);
    }
}
