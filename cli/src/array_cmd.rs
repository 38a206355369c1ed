//! N-d arrays (b2nd) from the command line: `strata import` (netCDF-3, .npy, raw bytes →
//! .b2nd), `strata export` (a .b2nd or a slice of it → .npy or raw) and `strata slice`.

use crate::human;
use crate::input::open_input;
use crate::netcdf;
use crate::npy;
use crate::options::CompressOptions;
use crate::output::{self, Staged};
use crate::progress::bytes_bar;
use crate::usage_error;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use serde_json::json;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use strata::frame::OpenMode;
use strata::ndarray::dtype::itemsize;
use strata::ndarray::{ArrayParams, NdArray, Slice};
use strata::schunk::values::Value;
use strata::schunk::Location;

/// The first bytes of a netCDF-3 file (classic: version 1; 64-bit offset: version 2).
const NETCDF_MAGIC: [&[u8]; 2] = [b"CDF\x01", b"CDF\x02"];

/// `--chunkshape` / `--blockshape`: the array's partitions.
#[derive(Debug, Clone, Args)]
pub struct PartitionArgs {
    /// Chunk shape in items, comma-separated [default: derived from the L3 cache size].
    #[arg(long, value_delimiter = ',')]
    chunkshape: Vec<i32>,
    /// Block shape in items, comma-separated [default: derived from the L2 cache size].
    #[arg(long, value_delimiter = ',')]
    blockshape: Vec<i32>,
}

/// Arguments of `strata import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    #[command(flatten)]
    options: CompressOptions,
    #[command(flatten)]
    partitions: PartitionArgs,
    /// Shape of raw input in items, comma-separated (raw input only).
    #[arg(long, value_delimiter = ',')]
    shape: Vec<i64>,
    /// NumPy dtype of raw input, e.g. <f4, <i2, |u1 (raw input only).
    #[arg(long)]
    dtype: Option<String>,
    /// netCDF input: import only these variables (repeat or comma-separate).
    #[arg(long = "var", value_delimiter = ',')]
    vars: Vec<String>,
    /// Threads compressing chunks; 0 = one per core.
    #[arg(long, default_value_t = 0)]
    nthreads: usize,
    /// Replace existing outputs.
    #[arg(long, short = 'f')]
    force: bool,
    /// Print one JSON object per array instead of a table.
    #[arg(long)]
    json: bool,
    /// A netCDF-3 file (.nc, .cdf), a C-order .npy file, or raw bytes with --shape and --dtype.
    input: PathBuf,
    /// The .b2nd file to write; for netCDF input, a directory that gets one VAR.b2nd per
    /// variable.
    output: PathBuf,
}

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
    fn slices(&self, ndim: usize) -> Vec<Slice> {
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

    fn is_empty(&self) -> bool {
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

/// Arguments of `strata slice`.
#[derive(Debug, Args)]
pub struct SliceCmdArgs {
    #[command(flatten)]
    selection: SliceArgs,
    /// Write the selection to this .npy (or raw) file instead of printing it.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Replace the -o file if it exists.
    #[arg(long, short = 'f')]
    force: bool,
    /// Threads decompressing blocks; 0 = one per core.
    #[arg(long, default_value_t = 0)]
    nthreads: usize,
    /// A .b2nd file or sparse directory.
    input: PathBuf,
}

/// Most items `strata slice` prints; larger selections need `-o`.
const PRINT_LIMIT: usize = 1000;

/// The b2nd parameters for data of `shape` and `dtype` from the command line's flags.
fn array_params(args: &ImportArgs, shape: &[i64], dtype: &str) -> Result<ArrayParams> {
    let typesize = itemsize(dtype).unwrap_or_else(|e| usage_error(format!("--dtype: {e}")));
    if args.options.typesize.is_some() {
        usage_error("--typesize is the dtype's item size for arrays; give --dtype instead");
    }
    let mut cparams = args
        .options
        .cparams(Some(typesize), args.nthreads)
        .unwrap_or_else(|e| usage_error(e));
    cparams.typesize = typesize;
    let mut params = ArrayParams::new(shape, typesize)
        .dtype(dtype)
        .cparams(&cparams)
        .overwrite(true);
    let ndim = shape.len();
    for (name, given) in [
        ("--chunkshape", &args.partitions.chunkshape),
        ("--blockshape", &args.partitions.blockshape),
    ] {
        if !given.is_empty() && given.len() != ndim {
            usage_error(format!(
                "{name} has {} values, the array has {ndim} dimensions",
                given.len()
            ));
        }
    }
    if !args.partitions.chunkshape.is_empty() {
        params = params.chunkshape(&args.partitions.chunkshape);
    }
    if !args.partitions.blockshape.is_empty() {
        params = params.blockshape(&args.partitions.blockshape);
    }
    // Shapes and partitions are the user's arguments: refusing them is a usage error.
    if let Err(e) = params.meta(&strata::chunk::Context::global()) {
        usage_error(format!("shape {shape:?}, --chunkshape, --blockshape: {e}"));
    }
    Ok(params)
}

/// What an import made, for the report.
struct Imported {
    name: String,
    path: PathBuf,
    shape: Vec<usize>,
    chunkshape: Vec<usize>,
    blockshape: Vec<usize>,
    dtype: String,
    nbytes: u64,
    cbytes: u64,
    seconds: f64,
}

/// Writes one array and returns what to report about it.
fn write_array(
    args: &ImportArgs,
    name: &str,
    path: &Path,
    shape: &[i64],
    dtype: &str,
    data: &[u8],
    vlmeta: &[(&str, Value)],
) -> Result<Imported> {
    let params = array_params(args, shape, dtype)?;
    let start = Instant::now();
    let staged = Staged::new(path)?;
    let location = Location::File(staged.path().to_owned());
    let mut arr = NdArray::from_buffer(&params, &location, data)
        .with_context(|| format!("cannot write {}", path.display()))?;
    for (key, value) in vlmeta {
        arr.schunk_mut()
            .vlmeta_set_value(key, value)
            .with_context(|| format!("{}: cannot store vlmetalayer {key}", path.display()))?;
    }
    let imported = Imported {
        name: name.to_owned(),
        path: path.to_owned(),
        shape: arr.shape().to_vec(),
        chunkshape: arr.chunkshape().to_vec(),
        blockshape: arr.blockshape().to_vec(),
        dtype: dtype.to_owned(),
        nbytes: arr.nbytes(),
        cbytes: crate::info_cmd::stored_bytes(arr.schunk()),
        seconds: 0.0,
    };
    arr.close()
        .with_context(|| format!("cannot finish {}", path.display()))?;
    staged.commit()?;
    Ok(Imported {
        seconds: start.elapsed().as_secs_f64(),
        ..imported
    })
}

/// A JSON value as the msgpack value python-blosc2 reads back as the same Python object.
fn to_msgpack(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Nil,
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => n
            .as_i64()
            .map(Value::from)
            .or_else(|| n.as_u64().map(Value::from))
            .unwrap_or_else(|| Value::from(n.as_f64().unwrap_or(f64::NAN))),
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Array(items) => Value::Array(items.iter().map(to_msgpack).collect()),
        serde_json::Value::Object(map) => Value::Map(
            map.iter()
                .map(|(k, v)| (Value::from(k.as_str()), to_msgpack(v)))
                .collect(),
        ),
    }
}

/// Runs `strata import`.
///
/// # Errors
/// Unreadable or malformed input, unwritable output; the message names the file.
pub fn import(args: &ImportArgs) -> Result<()> {
    let name = args.input.display();
    let mut head = [0u8; 4];
    let n = std::fs::File::open(&args.input)
        .and_then(|mut f| f.read(&mut head))
        .with_context(|| format!("cannot read {name}"))?;
    let is_netcdf = NETCDF_MAGIC.iter().any(|m| head[..n] == **m);
    let imported = if is_netcdf {
        import_netcdf(args)?
    } else {
        vec![import_file(args)?]
    };
    report(&imported, args.json)
}

fn import_netcdf(args: &ImportArgs) -> Result<Vec<Imported>> {
    if !args.shape.is_empty() || args.dtype.is_some() {
        usage_error("--shape and --dtype are for raw input; netCDF files describe themselves");
    }
    let vars = netcdf::read(&args.input)?;
    for wanted in &args.vars {
        if !vars.iter().any(|v| &v.name == wanted) {
            let names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
            bail!(
                "{}: no variable {wanted} (it has {})",
                args.input.display(),
                names.join(", ")
            );
        }
    }
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("cannot create directory {}", args.output.display()))?;
    let bar = bytes_bar("importing", vars.iter().map(|v| v.data.len() as u64).sum());
    let mut out = Vec::new();
    for var in &vars {
        let chosen = args.vars.is_empty() || args.vars.contains(&var.name);
        // Text variables (NC_CHAR) are not numeric arrays.
        if !chosen || var.dtype == "|S1" {
            continue;
        }
        let path = args.output.join(format!("{}.b2nd", var.name));
        output::check(&path, &args.input, args.force)?;
        let dims = Value::Array(var.dims.iter().map(|d| Value::from(d.as_str())).collect());
        let attrs = to_msgpack(&serde_json::Value::Object(var.attrs.clone()));
        let vlmeta = [("dims", dims), ("attrs", attrs)];
        out.push(write_array(
            args, &var.name, &path, &var.shape, var.dtype, &var.data, &vlmeta,
        )?);
        bar.inc(var.data.len() as u64);
    }
    bar.finish_and_clear();
    if out.is_empty() {
        bail!("{}: no numeric variable to import", args.input.display());
    }
    Ok(out)
}

fn import_file(args: &ImportArgs) -> Result<Imported> {
    if !args.vars.is_empty() {
        usage_error("--var is for netCDF input");
    }
    output::check(&args.output, &args.input, args.force)?;
    let mut input = open_input(&args.input)?;
    let name = args.input.display();
    let (shape, dtype) = match (&input.npy, args.shape.is_empty(), &args.dtype) {
        (Some(npy), true, None) => (
            npy.shape.iter().map(|&d| d as i64).collect::<Vec<_>>(),
            npy.dtype.clone(),
        ),
        (Some(_), _, _) => {
            usage_error("--shape and --dtype are for raw input; a .npy file describes itself")
        }
        (None, false, Some(dtype)) => (args.shape.clone(), dtype.clone()),
        (None, _, _) => usage_error("raw input needs --shape and --dtype (or give a .npy file)"),
    };
    let typesize = itemsize(&dtype).unwrap_or_else(|e| usage_error(format!("--dtype: {e}")));
    let needed = shape
        .iter()
        .try_fold(typesize as u64, |acc, &d| {
            u64::try_from(d).ok().and_then(|d| acc.checked_mul(d))
        })
        .unwrap_or_else(|| usage_error(format!("--shape {shape:?} is negative or too large")));
    if input.nbytes != needed {
        bail!(
            "{name}: holds {} bytes, shape {shape:?} of {dtype} needs {needed}",
            input.nbytes
        );
    }
    let mut data = Vec::new();
    data.try_reserve_exact(needed as usize)
        .map_err(|_| anyhow!("{name}: cannot allocate {needed} bytes"))?;
    input
        .reader
        .read_to_end(&mut data)
        .with_context(|| format!("cannot read {name}"))?;
    data.truncate(needed as usize);
    let var = args
        .input
        .file_stem()
        .map_or_else(|| "array".to_owned(), |s| s.to_string_lossy().into_owned());
    write_array(args, &var, &args.output, &shape, &dtype, &data, &[])
}

fn report(imported: &[Imported], as_json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    for a in imported {
        if as_json {
            let row = json!({
                "name": a.name,
                "path": a.path.display().to_string(),
                "shape": a.shape,
                "chunkshape": a.chunkshape,
                "blockshape": a.blockshape,
                "dtype": a.dtype,
                "nbytes": a.nbytes,
                "cbytes": a.cbytes,
                "cratio": a.nbytes as f64 / a.cbytes.max(1) as f64,
                "seconds": a.seconds,
            });
            writeln!(out, "{row}")?;
        } else {
            writeln!(
                out,
                "{}: {} {:?} (chunks {:?}, blocks {:?}): {} -> {} (cratio {:.2}) in {} ({})",
                a.path.display(),
                a.dtype,
                a.shape,
                a.chunkshape,
                a.blockshape,
                human::bytes(a.nbytes),
                human::bytes(a.cbytes),
                a.nbytes as f64 / a.cbytes.max(1) as f64,
                human::duration(a.seconds),
                human::speed(a.nbytes, a.seconds),
            )?;
        }
    }
    Ok(())
}

fn open_array(path: &Path, nthreads: usize) -> Result<NdArray> {
    let mut arr = NdArray::open(path, OpenMode::Read)
        .with_context(|| format!("cannot open {}", path.display()))?;
    arr.set_nthreads(0, nthreads);
    Ok(arr)
}

/// The selection's items in C order, its shape, and the time the read took.
fn read_selection(
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
fn write_items(path: &Path, dtype: &str, shape: &[usize], data: &[u8]) -> Result<()> {
    let is_npy = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    let staged = Staged::new(path)?;
    if is_npy {
        let shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        let mut w = npy::create(staged.path(), dtype, &shape)?;
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
fn dtype_of(arr: &NdArray) -> String {
    arr.dtype()
        .map_or_else(|| format!("|V{}", arr.typesize()), str::to_owned)
}

/// Writes the whole array at `input` to `output` (.npy or raw C order): what `strata
/// decompress` does for a b2nd array, whose chunks hold blocks rather than C order.
///
/// # Errors
/// As [`export`].
pub fn export_whole(input: &Path, output: &Path, nthreads: usize, force: bool) -> Result<()> {
    export(&ExportArgs {
        selection: SliceArgs::default(),
        nthreads,
        force,
        input: input.to_owned(),
        output: output.to_owned(),
    })
}

/// Runs `strata export`.
///
/// # Errors
/// An unreadable or corrupt array, a selection the array refuses, an unwritable output.
pub fn export(args: &ExportArgs) -> Result<()> {
    output::check(&args.output, &args.input, args.force)?;
    let arr = open_array(&args.input, args.nthreads)?;
    let (data, shape, seconds) = read_selection(&arr, &args.selection, &args.input)?;
    write_items(&args.output, &dtype_of(&arr), &shape, &data)?;
    eprintln!(
        "{}: {} {:?} in {} ({})",
        args.output.display(),
        human::bytes(data.len() as u64),
        shape,
        human::duration(seconds),
        human::speed(data.len() as u64, seconds)
    );
    Ok(())
}

/// Runs `strata slice`.
///
/// # Errors
/// As [`export`]; a selection too large to print without `-o`.
pub fn slice(args: &SliceCmdArgs) -> Result<()> {
    if args.selection.is_empty() && args.output.is_none() {
        usage_error("give --start/--stop/--step, or -o to write the whole array");
    }
    if let Some(path) = &args.output {
        output::check(path, &args.input, args.force)?;
    }
    let arr = open_array(&args.input, args.nthreads)?;
    let dtype = dtype_of(&arr);
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
    if let Some(path) = &args.output {
        return write_items(path, &dtype, &shape, &data);
    }
    let items: Vec<String> = data
        .chunks(arr.typesize().max(1))
        .map(|item| format_item(&dtype, item))
        .collect();
    let mut out = std::io::stdout().lock();
    writeln!(out, "shape {shape:?} {dtype}")?;
    write_nested(&mut out, &shape, &items, 0)?;
    writeln!(out)?;
    Ok(())
}

/// Prints `items` (C order) as nested lists of `shape`, one innermost row per line, indented
/// by depth as NumPy prints arrays.
fn write_nested(
    out: &mut impl Write,
    shape: &[usize],
    items: &[String],
    depth: usize,
) -> Result<()> {
    match shape {
        [] => write!(out, "{}", items.first().map_or("", String::as_str))?,
        [_] => write!(out, "[{}]", items.join(", "))?,
        [n, rest @ ..] => {
            let step = rest.iter().product::<usize>();
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
