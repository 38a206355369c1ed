//! `strata export`: a b2nd array, or a selection of it, to a `.npy` file (shape and dtype
//! kept) or raw C-order bytes; and the selection flags and array reading `strata slice`
//! shares.

use crate::formats::npy;
use crate::human;
use crate::output::{self, Staged};
use crate::report::{self, Report};
use crate::usage_error;
use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;
use strata::frame::OpenMode;
use strata::ndarray::{NdArray, Slice};

/// A selection given as `--start`, `--stop` and `--step` lists (one entry per dimension,
/// comma-separated; missing entries take the whole dimension; NumPy's meaning for negative
/// values).
#[derive(Debug, Clone, Default, Args)]
pub struct SliceArgs {
    /// First index per dimension [default: 0, or the end for a negative step].
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    start: Vec<i64>,
    /// Index past the last per dimension [default: the end].
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    stop: Vec<i64>,
    /// Step per dimension [default: 1].
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    step: Vec<i64>,
}

impl SliceArgs {
    /// The slices for an array of `ndim` dimensions (a usage error for longer lists or a
    /// zero step).
    pub fn slices(&self, ndim: usize) -> Vec<Slice> {
        for (name, list) in [
            ("--start", &self.start),
            ("--stop", &self.stop),
            ("--step", &self.step),
        ] {
            if list.len() > ndim {
                usage_error(format!(
                    "{name} has {} values, the array has {ndim} dimensions",
                    list.len()
                ));
            }
        }
        if self.step.contains(&0) {
            usage_error("--step values must not be 0");
        }
        (0..ndim)
            .map(|i| {
                Slice::new(
                    self.start.get(i).copied(),
                    self.stop.get(i).copied(),
                    self.step.get(i).copied().unwrap_or(1),
                )
            })
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.start.is_empty() && self.stop.is_empty() && self.step.is_empty()
    }
}

/// Arguments of `strata export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    selection: SliceArgs,
    /// Threads decompressing blocks; 0 = one per core.
    #[arg(long, default_value_t = 0)]
    nthreads: usize,
    /// Replace OUTPUT if it exists.
    #[arg(long, short = 'f')]
    force: bool,
    /// A .b2nd file or sparse directory.
    input: PathBuf,
    /// Where to write: a .npy file (shape and dtype kept), or raw C-order bytes otherwise.
    output: PathBuf,
}

/// Opens the array at `path` for reading on `nthreads` threads.
///
/// # Errors
/// The array cannot be opened; the message names it.
pub fn open_array(path: &Path, nthreads: usize) -> Result<NdArray> {
    let mut arr = NdArray::open(path, OpenMode::Read)
        .with_context(|| format!("cannot open {}", path.display()))?;
    arr.set_nthreads(0, nthreads);
    Ok(arr)
}

/// The selection's items in C order, its shape, and the time the read took.
///
/// # Errors
/// The array refuses the selection or cannot be read; the message names `path`.
pub fn read_selection(
    arr: &NdArray,
    sel: &SliceArgs,
    path: &Path,
) -> Result<(Vec<u8>, Vec<usize>, f64)> {
    let slices = sel.slices(arr.ndim());
    let start = Instant::now();
    let (data, shape) = arr
        .get_slice_vec(&slices)
        .with_context(|| format!("{}: cannot read the selection", path.display()))?;
    Ok((data, shape, start.elapsed().as_secs_f64()))
}

/// Writes `data` (C order, `shape`) as .npy when `path` ends in `.npy`, else raw.
///
/// # Errors
/// The file cannot be written; the message names it.
pub fn write_items(path: &Path, dtype: &str, shape: &[usize], data: &[u8]) -> Result<()> {
    let is_npy = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    let staged = Staged::new(path)?;
    if is_npy {
        let mut w = npy::create(staged.path(), dtype, shape)?;
        w.write_all(data)
            .and_then(|()| w.flush())
            .with_context(|| format!("cannot write {}", path.display()))?;
    } else {
        std::fs::write(staged.path(), data)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    staged.commit()
}

/// The array's dtype, or the default C-Blosc2 gives arrays without one.
pub fn dtype_of(arr: &NdArray) -> String {
    arr.dtype()
        .map_or_else(|| format!("|V{}", arr.typesize()), str::to_owned)
}

/// Writes the whole array at `input` to `output` (.npy or raw C order): what `strata
/// decompress` does for a b2nd array, whose chunks hold blocks rather than C order.
///
/// # Errors
/// As [`run`].
pub fn export_whole(input: &Path, output: &Path, nthreads: usize, force: bool) -> Result<()> {
    run(&ExportArgs {
        selection: SliceArgs::default(),
        nthreads,
        force,
        input: input.to_owned(),
        output: output.to_owned(),
    })
}

/// What `strata export` wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportReport {
    /// The file written.
    pub path: String,
    /// Bytes of the items written.
    pub nbytes: u64,
    /// Shape of the selection written.
    pub shape: Vec<usize>,
    /// Time the read of the selection took.
    pub seconds: f64,
}

impl Report for ExportReport {
    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "{}: {} {:?} in {} ({})",
            self.path,
            human::bytes(self.nbytes),
            self.shape,
            human::duration(self.seconds),
            human::speed(self.nbytes, self.seconds)
        )
    }
}

/// Runs `strata export`.
///
/// # Errors
/// An unreadable or corrupt array, a selection the array refuses, an unwritable output.
pub fn run(args: &ExportArgs) -> Result<()> {
    report::summary(&export(args)?);
    Ok(())
}

fn export(args: &ExportArgs) -> Result<ExportReport> {
    output::check(&args.output, &args.input, args.force)?;
    let arr = open_array(&args.input, args.nthreads)?;
    let (data, shape, seconds) = read_selection(&arr, &args.selection, &args.input)?;
    write_items(&args.output, &dtype_of(&arr), &shape, &data)?;
    Ok(ExportReport {
        path: args.output.display().to_string(),
        nbytes: data.len() as u64,
        shape,
        seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::{export, ExportReport, SliceArgs};
    use crate::commands::parse_args;
    use crate::commands::write_array;
    use crate::formats::npy;
    use crate::report::Report;
    use strata::ndarray::{ArrayParams, Slice};

    #[test]
    fn an_array_and_a_selection_become_npy_or_raw() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.b2nd");
        let data: Vec<u8> = (0..24u32).flat_map(u32::to_le_bytes).collect();
        let params = ArrayParams::new(&[4, 6], 4)
            .dtype("<u4")
            .chunkshape(&[3, 3])
            .blockshape(&[2, 2]);
        write_array(&path, &params, &data);
        let whole = dir.path().join("whole.npy");
        let args = parse_args(&["export".as_ref(), path.as_os_str(), whole.as_os_str()]);
        let r = export(&args).unwrap();
        assert_eq!((r.nbytes, &r.shape[..]), (96, &[4, 6][..]));
        assert_eq!(
            std::fs::read(&whole).unwrap(),
            npy::file("<u4", &[4, 6], &data)
        );
        // A column, as raw bytes.
        let column = dir.path().join("column.raw");
        let args = parse_args(&[
            "export".as_ref(),
            "--start".as_ref(),
            "0,5".as_ref(),
            "--stop".as_ref(),
            "4,6".as_ref(),
            path.as_os_str(),
            column.as_os_str(),
        ]);
        let r = export(&args).unwrap();
        assert_eq!(r.shape, [4, 1]);
        let items: Vec<u8> = [5u32, 11, 17, 23]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        assert_eq!(std::fs::read(&column).unwrap(), items);
    }

    #[test]
    fn selections_fill_missing_dimensions() {
        let sel = SliceArgs {
            start: vec![1],
            stop: vec![],
            step: vec![2, -1],
        };
        assert_eq!(
            sel.slices(3),
            [
                Slice::new(Some(1), None, 2),
                Slice::new(None, None, -1),
                Slice::new(None, None, 1)
            ]
        );
        assert!(SliceArgs::default().is_empty() && !sel.is_empty());
    }

    #[test]
    fn the_summary_line() {
        let r = ExportReport {
            path: "x.npy".into(),
            nbytes: 2048,
            shape: vec![16, 32],
            seconds: 0.000_5,
        };
        let mut out = Vec::new();
        r.write_text(&mut out).unwrap();
        assert_eq!(
            out,
            "x.npy: 2.00 KiB [16, 32] in 500 µs (0.00 GB/s)\n".as_bytes()
        );
    }
}
