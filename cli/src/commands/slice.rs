//! `strata slice`: a selection of a b2nd array or an HDF5 dataset (NumPy's start:stop:step per
//! dimension), decompressing only the blocks it touches, printed as nested lists or written
//! with `-o`.

use super::export::{read_selection, write_items, SliceArgs};
use crate::output::{self, Form};
use crate::report::{self, Report};
use crate::source::Source;
use crate::usage_error;
use anyhow::{bail, Context, Result};
use clap::Args;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `strata slice`.
#[derive(Debug, Args)]
pub struct SliceCmdArgs {
    #[command(flatten)]
    selection: SliceArgs,
    /// Write the selection to this .npy (or raw) file instead of printing it.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Replace the -o file if it exists (a regular file only; a character device or FIFO
    /// takes the bytes as a stream).
    #[arg(long, short = 'f')]
    force: bool,
    /// Threads decompressing blocks; 0 = one per core.
    #[arg(long, default_value_t = 0)]
    nthreads: usize,
    /// A .b2nd file or sparse directory, or its http(s):// URL (read-only, only the blocks
    /// the selection needs fetched), or a dataset of an HDF5 file: FILE.h5:/path.
    input: PathBuf,
}

/// Most items `strata slice` prints; larger selections need `-o`.
const PRINT_LIMIT: usize = 1000;

/// A selection as `strata slice` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SliceReport {
    /// Shape of the selection.
    pub shape: Vec<usize>,
    /// The array's dtype.
    pub dtype: String,
    /// The items in C order, as text.
    pub items: Vec<String>,
}

impl Report for SliceReport {
    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "shape {:?} {}", self.shape, self.dtype)?;
        write_nested(out, &self.shape, &self.items, 0)?;
        writeln!(out)
    }
}

/// Runs `strata slice`.
///
/// # Errors
/// As `strata export`; a selection too large to print without `-o`.
pub fn run(args: &SliceCmdArgs) -> Result<()> {
    match slice(args)? {
        Some(report) => report::print(&report, false),
        None => Ok(()),
    }
}

/// The selection to print, or `None` when it was written to the `-o` file.
fn slice(args: &SliceCmdArgs) -> Result<Option<SliceReport>> {
    if args.selection.is_empty() && args.output.is_none() {
        usage_error("give --start/--stop/--step, or -o to write the whole array");
    }
    let out = match &args.output {
        Some(path) => Some(output::check(path, &args.input, args.force, Form::Bytes)?),
        None => None,
    };
    let arr = Source::open(&args.input, args.nthreads)?;
    let dtype = arr.dtype();
    if args.output.is_none() {
        let slices = args.selection.slices(arr.ndim());
        let sel = strata::ndarray::Selection::new(arr.shape(), &slices)
            .with_context(|| format!("{}: bad selection", args.input.display()))?;
        let n = sel.nitems().unwrap_or(usize::MAX);
        if n > PRINT_LIMIT {
            bail!(
                "the selection has {n} items, more than the {PRINT_LIMIT} printed; write it with -o OUT.npy"
            );
        }
    }
    let (data, shape, _) = read_selection(&arr, &args.selection, &args.input)?;
    if let Some(out) = &out {
        write_items(out, &dtype, &shape, &data)?;
        return Ok(None);
    }
    let items = data
        .chunks(arr.typesize().max(1))
        .map(|item| format_item(&dtype, item))
        .collect();
    Ok(Some(SliceReport {
        shape,
        dtype,
        items,
    }))
}

/// Prints `items` (C order) as nested lists of `shape`, one innermost row per line, indented
/// by depth as NumPy prints arrays.
fn write_nested(
    out: &mut dyn Write,
    shape: &[usize],
    items: &[String],
    depth: usize,
) -> std::io::Result<()> {
    match shape {
        [] => write!(out, "{}", items.first().map_or("", String::as_str))?,
        [_] => write!(out, "[{}]", items.join(", "))?,
        [n, rest @ ..] => {
            // items holds n × the items of `rest`.
            let step = items.len() / (*n).max(1);
            write!(out, "[")?;
            for i in 0..*n {
                if i > 0 {
                    write!(out, ",\n{}", " ".repeat(depth + 1))?;
                }
                write_nested(out, rest, &items[i * step..(i + 1) * step], depth + 1)?;
            }
            write!(out, "]")?;
        }
    }
    Ok(())
}

/// One item of `dtype` as text: numbers for little-endian and single-byte numeric types,
/// hex bytes otherwise.
fn format_item(dtype: &str, b: &[u8]) -> String {
    macro_rules! num {
        ($t:ty) => {
            <$t>::from_le_bytes(b.try_into().unwrap_or_default()).to_string()
        };
    }
    match dtype.trim_start_matches(['<', '|', '=']) {
        "b1" => (b.first() != Some(&0)).to_string(),
        "i1" => num!(i8),
        "u1" => num!(u8),
        "i2" if !dtype.starts_with('>') => num!(i16),
        "u2" if !dtype.starts_with('>') => num!(u16),
        "i4" if !dtype.starts_with('>') => num!(i32),
        "u4" if !dtype.starts_with('>') => num!(u32),
        "i8" if !dtype.starts_with('>') => num!(i64),
        "u8" if !dtype.starts_with('>') => num!(u64),
        "f4" if !dtype.starts_with('>') => num!(f32),
        "f8" if !dtype.starts_with('>') => num!(f64),
        _ => b.iter().map(|x| format!("{x:02x}")).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::{format_item, slice, SliceReport};
    use crate::commands::parse_args;
    use crate::commands::write_array;
    use crate::report::Report;
    use strata::ndarray::ArrayParams;

    fn text(report: &SliceReport) -> String {
        let mut out = Vec::new();
        report.write_text(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn nested_lists_as_numpy_prints_them() {
        let report = |shape: Vec<usize>, n: usize| SliceReport {
            shape,
            dtype: "<i4".into(),
            items: (0..n).map(|i| i.to_string()).collect(),
        };
        assert_eq!(text(&report(vec![], 1)), "shape [] <i4\n0\n");
        assert_eq!(text(&report(vec![3], 3)), "shape [3] <i4\n[0, 1, 2]\n");
        assert_eq!(
            text(&report(vec![2, 2, 2], 8)),
            "shape [2, 2, 2] <i4\n[[[0, 1],\n  [2, 3]],\n [[4, 5],\n  [6, 7]]]\n"
        );
        assert_eq!(text(&report(vec![0, 3], 0)), "shape [0, 3] <i4\n[]\n");
    }

    #[test]
    fn items_by_dtype() {
        assert_eq!(format_item("<f4", &1.5f32.to_le_bytes()), "1.5");
        assert_eq!(format_item("<i2", &(-3i16).to_le_bytes()), "-3");
        assert_eq!(format_item("|u1", &[200]), "200");
        assert_eq!(format_item("|i1", &[200]), "-56");
        assert_eq!(format_item("|b1", &[2]), "true");
        assert_eq!(format_item("<u8", &7u64.to_le_bytes()), "7");
        // Big-endian and other types as hex bytes.
        assert_eq!(format_item(">i2", &[0, 5]), "0005");
        assert_eq!(format_item("|V3", &[1, 2, 255]), "0102ff");
    }

    #[test]
    fn a_selection_is_read_from_the_array() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.b2nd");
        let data: Vec<u8> = (0..60i16).flat_map(i16::to_le_bytes).collect();
        let params = ArrayParams::new(&[6, 10], 2)
            .with_dtype("<i2")
            .with_chunkshape(&[4, 4])
            .with_blockshape(&[2, 2]);
        write_array(&path, &params, &data);
        let args = parse_args(&[
            "slice".as_ref(),
            "--start".as_ref(),
            "1,-3".as_ref(),
            "--stop".as_ref(),
            "5".as_ref(),
            "--step".as_ref(),
            "2".as_ref(),
            path.as_os_str(),
        ]);
        let r = slice(&args).unwrap().unwrap();
        assert_eq!((&r.shape[..], r.dtype.as_str()), (&[2, 3][..], "<i2"));
        assert_eq!(r.items, ["17", "18", "19", "37", "38", "39"]);
    }
}
