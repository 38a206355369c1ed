//! `strata bench ARRAY.b2nd` (or `FILE.h5:/dataset`): how fast a b2nd array or an HDF5 dataset
//! reads — the whole array, and hyperplanes along each axis (decompressing only the blocks
//! they touch) — next to reading the same
//! hyperplanes from a raw C-order `.npy` file with positioned reads, one per contiguous run of
//! items, as a program reading the raw file would; the whole array next to one read of the whole
//! `.npy` (as `np.load` reads it) and to a copy of the items between two buffers in memory (the
//! ceiling of any whole read). With `--cold`, both files are dropped from
//! the page cache before every read (fdatasync, then `posix_fadvise(DONTNEED)`), so each read
//! comes from the disk.

use super::BenchArgs;
use crate::commands::info::stored_bytes;
use crate::formats::raw::open_input;
use crate::human;
use crate::report::{self, Report};
use crate::source::{hdf5_spec, Source};
use anyhow::{anyhow, bail, Context, Result};
use serde::Serialize;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Instant;
use strata::ndarray::Slice;

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
    /// Reads the whole array into `out` (as `np.load` does: one read of the data).
    fn whole(&self, out: &mut [u8]) -> Result<()> {
        Ok(self.file.read_exact_at(out, self.offset)?)
    }

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

/// One axis: its hyperplanes read from the array, and from the `.npy` file when given.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hyperplanes {
    /// The axis.
    pub axis: usize,
    /// Shape of one hyperplane (the array's without `axis`).
    pub plane_shape: Vec<usize>,
    /// Bytes of one hyperplane.
    pub plane_bytes: usize,
    /// Median time of one read from the array, in ms.
    pub strata_ms: f64,
    /// Median count of blocks decompressed for one.
    pub blocks_decompressed: u64,
    /// Median time of one read from the `.npy` file, in ms.
    pub npy_ms: Option<f64>,
}

/// How fast a b2nd array reads.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArrayBenchReport {
    /// The array, as given.
    pub path: String,
    /// `cold` (page cache dropped before every read) or `warm`.
    pub cache: &'static str,
    /// Shape in items.
    pub shape: Vec<usize>,
    /// Chunk shape.
    pub chunkshape: Vec<usize>,
    /// Block shape.
    pub blockshape: Vec<usize>,
    /// The array's dtype.
    #[serde(skip)]
    pub dtype: String,
    /// Bytes of the items.
    pub nbytes: u64,
    /// Bytes on disk.
    pub cbytes: u64,
    /// Median time to decompress the whole array, in seconds.
    pub decompress_s: f64,
    /// The same as a speed, GB/s.
    pub decompress_gbps: f64,
    /// Median time to copy the items from one buffer to another (the memory's ceiling for
    /// any read of the whole array), in seconds.
    pub memcpy_s: f64,
    /// Bytes of the `.npy` file, when given.
    pub npy_bytes: Option<u64>,
    /// Median time to read the whole `.npy` file's data, in seconds, when given.
    pub npy_whole_s: Option<f64>,
    /// Hyperplanes along each axis.
    pub hyperplanes: Vec<Hyperplanes>,
}

impl Report for ArrayBenchReport {
    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "{}: {:?} {} (chunks {:?}, blocks {:?}), {} -> {} (cratio {:.2})",
            self.path,
            self.shape,
            self.dtype,
            self.chunkshape,
            self.blockshape,
            human::bytes(self.nbytes),
            human::bytes(self.cbytes),
            self.nbytes as f64 / self.cbytes.max(1) as f64
        )?;
        let npy = match (self.npy_bytes, self.npy_whole_s) {
            (Some(b), Some(t)) => format!(
                "; .npy ({}) in {} ({})",
                human::bytes(b),
                human::duration(t),
                human::speed(self.nbytes, t)
            ),
            _ => String::new(),
        };
        writeln!(
            out,
            "  page cache {}: whole array in {} ({}){npy}; memcpy {} ({})",
            if self.cache == "cold" {
                "cold (dropped before every read)"
            } else {
                "warm"
            },
            human::duration(self.decompress_s),
            human::speed(self.nbytes, self.decompress_s),
            human::duration(self.memcpy_s),
            human::speed(self.nbytes, self.memcpy_s)
        )?;
        writeln!(
            out,
            "  {:>4}  {:>18}  {:>10}  {:>8}  {:>10}  {:>8}",
            "axis", "hyperplane", "strata", "blocks", ".npy", "speed-up"
        )?;
        for r in &self.hyperplanes {
            let (s, n) = (r.strata_ms, r.npy_ms);
            // The plane's shape as JSON prints a list: `[180,360]`.
            let plane: Vec<String> = r.plane_shape.iter().map(usize::to_string).collect();
            writeln!(
                out,
                "  {:>4}  {:>18}  {:>10}  {:>8}  {:>10}  {:>8}",
                r.axis,
                format!("[{}]", plane.join(",")),
                human::duration(s / 1e3),
                r.blocks_decompressed,
                n.map_or_else(|| "-".to_owned(), |n| human::duration(n / 1e3)),
                n.map_or_else(|| "-".to_owned(), |n| speedup(n / s)),
            )?;
        }
        Ok(())
    }
}

/// Runs the array benchmark on `args.file`, comparing with `--npy` when given, and prints it.
///
/// # Errors
/// An unreadable array or `.npy`, a `.npy` whose shape or item size differs from the array's,
/// or a hyperplane that differs between the two.
pub fn run(args: &BenchArgs) -> Result<()> {
    let runs = usize::try_from(args.runs)?;
    let nthreads = args.nthreads.first().copied().unwrap_or(0);
    let report = bench(&args.file, args.npy.as_deref(), runs, nthreads, args.cold)?;
    report::print(&report, args.json)
}

fn bench(
    path: &Path,
    npy: Option<&Path>,
    runs: usize,
    nthreads: usize,
    cold: bool,
) -> Result<ArrayBenchReport> {
    let cool = |p: &Path| if cold { evict(p) } else { Ok(()) };
    let name = path.display();
    let arr = Source::open(path, nthreads)?;
    // The file to drop from the page cache: an HDF5 dataset's file.
    let file = hdf5_spec(path).map_or(path, |(file, _)| Path::new(file));
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
        cool(file)?;
        let start = Instant::now();
        let (data, _) = arr
            .get_slice_vec(&[])
            .with_context(|| format!("{name}: cannot decompress"))?;
        whole.push(start.elapsed().as_secs_f64());
        std::hint::black_box(&data);
    }
    let whole = median(whole);
    // The memory's ceiling: the items copied between two buffers already in memory.
    let len = usize::try_from(nbytes)?;
    let (source, mut copy) = (vec![1u8; len], vec![2u8; len]);
    let (mut copies, mut npy_whole) = (Vec::new(), Vec::new());
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        copy.copy_from_slice(std::hint::black_box(&source));
        copies.push(start.elapsed().as_secs_f64());
        std::hint::black_box(&copy);
        // The .npy read as `np.load` reads it: into a new buffer, one read.
        if let (Some(raw), Some(p)) = (&raw, npy) {
            cool(p)?;
            let start = Instant::now();
            let mut data = vec![0u8; len];
            raw.whole(&mut data)?;
            npy_whole.push(start.elapsed().as_secs_f64());
            std::hint::black_box(&data);
        }
    }
    drop((source, copy));
    let mut rows = Vec::new();
    for axis in 0..shape.len() {
        let mut plane_shape = shape.clone();
        plane_shape.remove(axis);
        let plane_bytes = plane_shape
            .iter()
            .try_fold(ts, |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| anyhow!("{name}: a hyperplane of axis {axis} overflows 64 bits"))?;
        let (mut strata_t, mut raw_t, mut blocks) = (Vec::new(), Vec::new(), Vec::new());
        for index in indices(shape[axis], PLANES) {
            let mut slices = vec![Slice::FULL; shape.len()];
            slices[axis] = Slice::index(index as i64);
            let mut out = vec![0u8; plane_bytes];
            cool(file)?;
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
        rows.push(Hyperplanes {
            axis,
            plane_shape,
            plane_bytes,
            strata_ms: median(strata_t) * 1e3,
            blocks_decompressed: median(blocks.iter().map(|&b| b as f64).collect()).round() as u64,
            npy_ms: (!raw_t.is_empty()).then(|| median(raw_t) * 1e3),
        });
    }
    Ok(ArrayBenchReport {
        path: name.to_string(),
        cache: if cold { "cold" } else { "warm" },
        shape,
        chunkshape: arr.chunkshape(),
        blockshape: arr.blockshape(),
        dtype: arr.dtype(),
        nbytes,
        cbytes: match &arr {
            Source::B2nd(a) => stored_bytes(&name.to_string(), a.schunk())?,
            Source::Hdf5(d) => d.storage_size(),
        },
        decompress_s: whole,
        decompress_gbps: nbytes as f64 / whole / 1e9,
        memcpy_s: median(copies),
        npy_bytes: npy.map(std::fs::metadata).transpose()?.map(|m| m.len()),
        npy_whole_s: (!npy_whole.is_empty()).then(|| median(npy_whole)),
        hyperplanes: rows,
    })
}

#[cfg(test)]
mod tests {
    use super::{bench, indices, speedup, ArrayBenchReport, Hyperplanes};
    use crate::commands::write_array;
    use crate::formats::npy;
    use crate::report::Report;
    use strata::ndarray::ArrayParams;

    #[test]
    fn hyperplanes_of_the_array_match_the_npy_file() {
        let dir = tempfile::tempdir().unwrap();
        let (array, raw) = (dir.path().join("a.b2nd"), dir.path().join("a.npy"));
        let data: Vec<u8> = (0..12 * 10u32).flat_map(u32::to_le_bytes).collect();
        let params = ArrayParams::new(&[12, 10], 4)
            .with_dtype("<u4")
            .with_chunkshape(&[6, 10])
            .with_blockshape(&[3, 5]);
        write_array(&array, &params, &data);
        std::fs::write(&raw, npy::file("<u4", &[12, 10], &data)).unwrap();
        let r = bench(&array, Some(&raw), 1, 1, false).unwrap();
        assert_eq!(
            (r.cache, &r.shape[..], r.dtype.as_str()),
            ("warm", &[12, 10][..], "<u4")
        );
        assert_eq!(
            (r.nbytes, r.cbytes),
            (480, std::fs::metadata(&array).unwrap().len())
        );
        let planes: Vec<(usize, &[usize], usize)> = r
            .hyperplanes
            .iter()
            .map(|h| (h.axis, &h.plane_shape[..], h.plane_bytes))
            .collect();
        assert_eq!(planes, [(0, &[10][..], 40), (1, &[12][..], 48)]);
        // A row touches the 2 blocks of one block row; a column one block per block row.
        assert_eq!(r.hyperplanes[0].blocks_decompressed, 2);
        assert_eq!(r.hyperplanes[1].blocks_decompressed, 4);
        assert!(r.hyperplanes.iter().all(|h| h.npy_ms.is_some()));
        let npy_len = std::fs::metadata(&raw).unwrap().len();
        assert_eq!(r.npy_bytes, Some(npy_len));
        assert!(r.npy_whole_s.is_some_and(|t| t > 0.0) && r.memcpy_s > 0.0);
        // A .npy whose shape differs is refused.
        std::fs::write(&raw, npy::file("<u4", &[10, 12], &data)).unwrap();
        let e = format!("{:#}", bench(&array, Some(&raw), 1, 1, false).unwrap_err());
        assert!(e.contains("shape [10, 12] of 4-byte items"), "{e}");
    }

    #[test]
    fn the_table() {
        let r = ArrayBenchReport {
            path: "a.b2nd".into(),
            cache: "cold",
            shape: vec![180, 360],
            chunkshape: vec![90, 360],
            blockshape: vec![10, 360],
            dtype: "<f4".into(),
            nbytes: 259_200,
            cbytes: 64_800,
            decompress_s: 0.002,
            decompress_gbps: 0.1296,
            memcpy_s: 0.0001,
            npy_bytes: Some(259_328),
            npy_whole_s: Some(0.004),
            hyperplanes: vec![Hyperplanes {
                axis: 1,
                plane_shape: vec![180],
                plane_bytes: 720,
                strata_ms: 0.5,
                blocks_decompressed: 18,
                npy_ms: Some(2.0),
            }],
        };
        let mut out = Vec::new();
        r.write_text(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a.b2nd: [180, 360] <f4 (chunks [90, 360], blocks [10, 360]), 253 KiB -> 63.3 KiB (cratio 4.00)\n\
             \x20 page cache cold (dropped before every read): whole array in 2.0 ms (0.13 GB/s); \
             .npy (253 KiB) in 4.0 ms (0.06 GB/s); memcpy 100 µs (2.59 GB/s)\n\
             \x20 axis          hyperplane      strata    blocks        .npy  speed-up\n\
             \x20    1               [180]      500 µs        18      2.0 ms      4.0x\n"
        );
    }

    #[test]
    fn spread_indices_and_ratios() {
        assert_eq!(indices(10, 4), [5, 1, 7, 3]);
        assert!(indices(1, 9).iter().all(|&i| i == 0));
        assert_eq!(speedup(43.2), "43x");
        assert_eq!(speedup(3.84), "3.8x");
        assert_eq!(speedup(0.45), "0.45x");
        assert_eq!(speedup(0.0123), "0.012x");
    }
}
