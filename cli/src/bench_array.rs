//! `strata bench ARRAY.b2nd`: how fast a b2nd array reads — the whole array, and hyperplanes
//! along each axis (decompressing only the blocks they touch) — next to reading the same
//! hyperplanes from a raw C-order `.npy` file with positioned reads, one per contiguous run of
//! items, as a program reading the raw file would. With `--cold`, both files are dropped from
//! the page cache before every read (fdatasync, then `posix_fadvise(DONTNEED)`), so each read
//! comes from the disk.

use crate::human;
use crate::input::open_input;
use anyhow::{bail, Context, Result};
use serde_json::json;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Instant;
use strata::frame::OpenMode;
use strata::ndarray::{NdArray, Slice};

/// Drops `path` (a file, or every file of a sparse frame directory) from the page cache.
fn evict(path: &Path) -> Result<()> {
    let files: Vec<std::path::PathBuf> = if path.is_dir() {
        std::fs::read_dir(path)?
            .map(|e| e.map(|e| e.path()))
            .collect::<std::io::Result<_>>()?
    } else {
        vec![path.to_owned()]
    };
    for f in files {
        let file = File::open(&f).with_context(|| format!("cannot open {}", f.display()))?;
        rustix::fs::fdatasync(&file)?;
        rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)?;
    }
    Ok(())
}

/// Hyperplanes timed per axis.
const PLANES: usize = 9;

/// A raw C-order array file: where its data starts and its shape.
struct RawArray {
    file: File,
    offset: u64,
    shape: Vec<usize>,
    typesize: usize,
}

impl RawArray {
    /// Reads the hyperplane `index` of `axis` into `out` with one positioned read per
    /// contiguous run of items.
    fn hyperplane(&self, axis: usize, index: usize, out: &mut [u8]) -> Result<()> {
        let inner: usize = self.shape[axis + 1..].iter().product();
        let outer: usize = self.shape[..axis].iter().product();
        let run = inner * self.typesize;
        let stride = self.shape[axis] * run;
        for o in 0..outer {
            let at = self.offset + (o * stride + index * run) as u64;
            self.file
                .read_exact_at(&mut out[o * run..(o + 1) * run], at)?;
        }
        Ok(())
    }
}

/// A deterministic spread of `n` indices in `0..len` (golden-ratio steps), so runs compare.
fn indices(len: usize, n: usize) -> Vec<usize> {
    (0..n)
        .map(|k| ((k as f64 * 0.618_033_988_75 + 0.5).fract() * len as f64) as usize % len.max(1))
        .collect()
}

/// A ratio with two significant digits: `0.012x`, `0.45x`, `3.8x`, `43x`.
fn speedup(r: f64) -> String {
    let digits = if r >= 10.0 {
        0
    } else if r >= 1.0 {
        1
    } else {
        (1.0 - r.log10().floor()) as usize
    };
    format!("{r:.digits$}x")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    }
}

/// Runs the array benchmark on `path`, comparing with `npy` when given.
///
/// # Errors
/// An unreadable array or `.npy`, a `.npy` whose shape or item size differs from the array's,
/// or a hyperplane that differs between the two.
pub fn run(
    path: &Path,
    npy: Option<&Path>,
    runs: usize,
    nthreads: usize,
    cold: bool,
    as_json: bool,
) -> Result<()> {
    let cool = |p: &Path| if cold { evict(p) } else { Ok(()) };
    let name = path.display();
    let mut arr =
        NdArray::open(path, OpenMode::Read).with_context(|| format!("cannot open {name}"))?;
    arr.set_nthreads(0, nthreads);
    let shape = arr.shape().to_vec();
    let ts = arr.typesize();
    let raw = npy
        .map(|p| -> Result<RawArray> {
            let input = open_input(p)?;
            let Some(info) = input.npy else {
                bail!("{}: not a .npy file", p.display());
            };
            let want: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
            if info.shape != want || info.typesize != ts {
                bail!(
                    "{}: shape {:?} of {}-byte items, {name} has {:?} of {ts}-byte items",
                    p.display(),
                    info.shape,
                    info.typesize,
                    shape
                );
            }
            let file = File::open(p).with_context(|| format!("cannot open {}", p.display()))?;
            let offset = file.metadata()?.len() - input.nbytes;
            Ok(RawArray {
                file,
                offset,
                shape: shape.clone(),
                typesize: ts,
            })
        })
        .transpose()?;

    let nbytes = arr.nbytes();
    let mut whole = Vec::new();
    for _ in 0..runs.max(1) {
        cool(path)?;
        let start = Instant::now();
        let data = arr
            .to_vec()
            .with_context(|| format!("{name}: cannot decompress"))?;
        whole.push(start.elapsed().as_secs_f64());
        std::hint::black_box(&data);
    }
    let whole = median(whole);
    let mut rows = Vec::new();
    for axis in 0..shape.len() {
        let mut plane_shape = shape.clone();
        plane_shape.remove(axis);
        let plane_bytes = plane_shape.iter().product::<usize>() * ts;
        let (mut strata_t, mut raw_t, mut blocks) = (Vec::new(), Vec::new(), Vec::new());
        for index in indices(shape[axis], PLANES) {
            let mut slices = vec![Slice::FULL; shape.len()];
            slices[axis] = Slice::index(index as i64);
            let mut out = vec![0u8; plane_bytes];
            cool(path)?;
            let start = Instant::now();
            let stats = arr
                .get_slice(&slices, &mut out)
                .with_context(|| format!("{name}: axis {axis} index {index}"))?;
            strata_t.push(start.elapsed().as_secs_f64());
            blocks.push(stats.blocks_decompressed);
            if let Some(raw) = &raw {
                let mut reference = vec![0u8; plane_bytes];
                cool(npy.expect("raw comes from npy"))?;
                let start = Instant::now();
                raw.hyperplane(axis, index, &mut reference)?;
                raw_t.push(start.elapsed().as_secs_f64());
                if reference != out {
                    bail!(
                        "{name}: the hyperplane at axis {axis} index {index} differs from the .npy"
                    );
                }
            }
        }
        rows.push(json!({
            "axis": axis,
            "plane_shape": plane_shape,
            "plane_bytes": plane_bytes,
            "strata_ms": median(strata_t) * 1e3,
            "blocks_decompressed": median(blocks.iter().map(|&b| b as f64).collect()).round() as u64,
            "npy_ms": (!raw_t.is_empty()).then(|| median(raw_t) * 1e3),
        }));
    }
    let report = json!({
        "path": name.to_string(),
        "cache": if cold { "cold" } else { "warm" },
        "shape": shape,
        "chunkshape": arr.chunkshape(),
        "blockshape": arr.blockshape(),
        "nbytes": nbytes,
        "cbytes": crate::info_cmd::stored_bytes(arr.schunk()),
        "decompress_s": whole,
        "decompress_gbps": nbytes as f64 / whole / 1e9,
        "hyperplanes": rows,
    });
    let mut out = std::io::stdout().lock();
    if as_json {
        writeln!(out, "{report}")?;
        return Ok(());
    }
    writeln!(
        out,
        "{name}: {:?} {} (chunks {:?}, blocks {:?}), {} -> {} (cratio {:.2})",
        shape,
        arr.dtype().unwrap_or("?"),
        arr.chunkshape(),
        arr.blockshape(),
        human::bytes(nbytes),
        human::bytes(crate::info_cmd::stored_bytes(arr.schunk())),
        nbytes as f64 / crate::info_cmd::stored_bytes(arr.schunk()).max(1) as f64
    )?;
    writeln!(
        out,
        "  page cache {}: whole array in {} ({})",
        if cold {
            "cold (dropped before every read)"
        } else {
            "warm"
        },
        human::duration(whole),
        human::speed(nbytes, whole)
    )?;
    writeln!(
        out,
        "  {:>4}  {:>18}  {:>10}  {:>8}  {:>10}  {:>8}",
        "axis", "hyperplane", "strata", "blocks", ".npy", "speed-up"
    )?;
    for r in &rows {
        let ms = |k: &str| r[k].as_f64();
        let (s, n) = (ms("strata_ms").unwrap_or_default(), ms("npy_ms"));
        writeln!(
            out,
            "  {:>4}  {:>18}  {:>10}  {:>8}  {:>10}  {:>8}",
            r["axis"].to_string(),
            r["plane_shape"].to_string(),
            human::duration(s / 1e3),
            r["blocks_decompressed"].to_string(),
            n.map_or_else(|| "-".to_owned(), |n| human::duration(n / 1e3)),
            n.map_or_else(|| "-".to_owned(), |n| speedup(n / s)),
        )?;
    }
    Ok(())
}
