//! `strata export`: a b2nd array or an HDF5 dataset (`FILE.h5:/path`), or a selection of it,
//! to a `.npy` file (shape and dtype kept), raw C-order bytes, or a dataset of an HDF5 file
//! (`OUT.h5:/path`, chunks of HDF5's Blosc2 filter 32026 written directly); and the selection
//! flags and array reading `strata slice` shares.

use crate::formats::npy;
use crate::human;
use crate::output::{self, Form, Output, Staged};
use crate::report::{self, Report};
use crate::source::{hdf5_spec, Source};
use crate::usage_error;
use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use strata::ndarray::{ArrayParams, Slice};

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
    /// Replace OUTPUT if it exists (a regular file only: nothing else is ever replaced; for
    /// OUT.h5:/path, the dataset: the file's others stay).
    #[arg(long, short = 'f')]
    force: bool,
    /// A .b2nd file or sparse directory, or its http(s):// URL (read-only, only the blocks
    /// the selection needs fetched), or a dataset of an HDF5 file: FILE.h5:/path.
    input: PathBuf,
    /// Where to write: a .npy file (shape and dtype kept), a dataset of an HDF5 file
    /// (OUT.h5:/path; created with the file if missing), or raw C-order bytes otherwise. A
    /// symbolic link is followed; a character device or FIFO takes the bytes as a stream.
    output: PathBuf,
}

/// The selection's items in C order, its shape, and the time the read took.
///
/// # Errors
/// The array refuses the selection or cannot be read; the message names `path`.
pub fn read_selection(
    arr: &Source,
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

/// Writes `data` (C order, `shape`) to `output` as .npy when its name ends in `.npy`, else
/// raw.
///
/// # Errors
/// The file cannot be written; the message names it.
pub fn write_items(output: &Output, dtype: &str, shape: &[usize], data: &[u8]) -> Result<()> {
    let path = output.path();
    let is_npy = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    let staged = Staged::new(output)?;
    let mut w = BufWriter::new(staged.file()?);
    if is_npy {
        npy::write_header(&mut w, dtype, shape)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    w.write_all(data)
        .and_then(|()| w.flush())
        .with_context(|| format!("cannot write {}", path.display()))?;
    drop(w);
    staged.commit()
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
    if let Some((file, name)) = hdf5_spec(&args.output) {
        let arr = Source::open(&args.input, args.nthreads)?;
        return export_hdf5(args, &arr, Path::new(file), name);
    }
    let out = output::check(&args.output, &args.input, args.force, Form::Bytes)?;
    let arr = Source::open(&args.input, args.nthreads)?;
    let (data, shape, seconds) = read_selection(&arr, &args.selection, &args.input)?;
    write_items(&out, &arr.dtype(), &shape, &data)?;
    Ok(ExportReport {
        path: args.output.display().to_string(),
        nbytes: data.len() as u64,
        shape,
        seconds,
    })
}

/// Writes the source (or its selection) as dataset `name` of the HDF5 file `file`: a whole b2nd
/// array with its chunks as stored (not recompressed), anything else compressed again with
/// the source's partitions (cut to the selection) and, for a b2nd array, its codec.
fn export_hdf5(args: &ExportArgs, arr: &Source, file: &Path, name: &str) -> Result<ExportReport> {
    let target = args.output.display();
    let start = Instant::now();
    if let (Source::B2nd(a), true) = (arr, args.selection.is_empty()) {
        strata::hdf5::export_array(a, file, name, args.force)
            .with_context(|| format!("cannot write {target}"))?;
        return Ok(ExportReport {
            path: target.to_string(),
            nbytes: a.nbytes(),
            shape: a.shape().to_vec(),
            seconds: start.elapsed().as_secs_f64(),
        });
    }
    let (data, shape, _) = read_selection(arr, &args.selection, &args.input)?;
    let cut = |part: Vec<usize>| -> Vec<usize> {
        part.iter()
            .zip(&shape)
            .map(|(&p, &s)| p.min(s.max(1)))
            .collect()
    };
    let mut params = ArrayParams::from_dtype(&shape, &arr.dtype())
        .with_context(|| format!("{}: dtype", args.input.display()))?
        .with_chunkshape(&cut(arr.chunkshape()))
        .with_blockshape(&cut(arr.blockshape()))
        .with_overwrite(args.force);
    if let Source::B2nd(a) = arr {
        params = params.with_cparams(&strata::chunk::CParams {
            nd: None,
            ..a.cparams().clone()
        });
    }
    strata::hdf5::write_array(file, name, &params, &data)
        .with_context(|| format!("cannot write {target}"))?;
    Ok(ExportReport {
        path: target.to_string(),
        nbytes: data.len() as u64,
        shape,
        seconds: start.elapsed().as_secs_f64(),
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
            .with_dtype("<u4")
            .with_chunkshape(&[3, 3])
            .with_blockshape(&[2, 2]);
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
    fn arrays_go_into_hdf5_datasets_and_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.b2nd");
        let data: Vec<u8> = (0..40 * 30u32).flat_map(u32::to_le_bytes).collect();
        let params = ArrayParams::new(&[40, 30], 4)
            .with_dtype("<u4")
            .with_chunkshape(&[16, 16])
            .with_blockshape(&[8, 4]);
        write_array(&path, &params, &data);
        let h5 = dir.path().join("out.h5");
        // The whole array: its chunks as stored. A selection: compressed again.
        let whole = format!("{}:/g/whole", h5.display());
        export(&parse_args(&[
            "export".as_ref(),
            path.as_os_str(),
            whole.as_ref(),
        ]))
        .unwrap();
        let part = format!("{}:/part", h5.display());
        let args = parse_args(&[
            "export".as_ref(),
            "--start".as_ref(),
            "5,-1".as_ref(),
            "--stop".as_ref(),
            "35".as_ref(),
            "--step".as_ref(),
            "3,-2".as_ref(),
            path.as_os_str(),
            part.as_ref(),
        ]);
        let r = export(&args).unwrap();
        assert_eq!(r.shape, [10, 15]);
        let ds = strata::hdf5::H5Dataset::open(&h5, "/g/whole").unwrap();
        assert_eq!(
            (ds.chunkshape(), ds.blockshape()),
            (Some(&[16, 16][..]), Some(&[8, 4][..]))
        );
        assert_eq!(ds.to_vec().unwrap(), data);
        // HDF5 opens a file for writing only when no reader has it open.
        drop(ds);
        // Back out of the HDF5 file, as .npy: the selection's items.
        let npy_out = dir.path().join("part.npy");
        export(&parse_args(&[
            "export".as_ref(),
            part.as_ref(),
            npy_out.as_os_str(),
        ]))
        .unwrap();
        let want: Vec<u8> = (0..10u32)
            .flat_map(|i| (0..15u32).map(move |j| (5 + 3 * i) * 30 + 29 - 2 * j))
            .flat_map(u32::to_le_bytes)
            .collect();
        assert_eq!(
            std::fs::read(&npy_out).unwrap(),
            npy::file("<u4", &[10, 15], &want)
        );
        // An existing dataset is kept unless --force.
        let e = export(&parse_args(&[
            "export".as_ref(),
            path.as_os_str(),
            whole.as_ref(),
        ]))
        .unwrap_err();
        assert!(format!("{e:#}").contains("already exists"), "{e:#}");
        export(&parse_args(&[
            "export".as_ref(),
            "-f".as_ref(),
            path.as_os_str(),
            whole.as_ref(),
        ]))
        .unwrap();
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
