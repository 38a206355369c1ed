//! `strata import`: a netCDF-3 file (every numeric variable), a `.npy` file or raw bytes
//! (with `--shape` and `--dtype`) into b2nd arrays (`.b2nd`), with partitions given or derived
//! from the cache sizes.

use super::info::stored_bytes;
use crate::formats::netcdf;
use crate::formats::raw::open_input;
use crate::human;
use crate::options::CompressOptions;
use crate::output::{self, Staged};
use crate::progress::bytes_bar;
use crate::report::{self, json_line, Report};
use crate::usage_error;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use serde::Serialize;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use strata::ndarray::dtype::itemsize;
use strata::ndarray::{ArrayParams, NdArray};
use strata::schunk::values::Value;
use strata::schunk::Location;

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

/// One array `strata import` wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Imported {
    /// The variable's name (netCDF), or the input's file stem.
    pub name: String,
    /// The `.b2nd` file written.
    pub path: String,
    /// Shape in items.
    pub shape: Vec<usize>,
    /// Chunk shape in items.
    pub chunkshape: Vec<usize>,
    /// Block shape in items.
    pub blockshape: Vec<usize>,
    /// NumPy dtype string.
    pub dtype: String,
    /// Bytes of the items.
    pub nbytes: u64,
    /// Bytes the array takes on disk.
    pub cbytes: u64,
    /// `nbytes` over `cbytes`.
    pub cratio: f64,
    /// Time taken to compress and write it.
    pub seconds: f64,
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
    let shown = path.display().to_string();
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
    let (nbytes, cbytes) = (arr.nbytes(), stored_bytes(&shown, arr.schunk())?);
    let imported = Imported {
        name: name.to_owned(),
        path: shown,
        shape: arr.shape().to_vec(),
        chunkshape: arr.chunkshape().to_vec(),
        blockshape: arr.blockshape().to_vec(),
        dtype: dtype.to_owned(),
        nbytes,
        cbytes,
        cratio: nbytes as f64 / cbytes.max(1) as f64,
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

/// What `strata import` wrote: one array per imported variable or file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportReport {
    /// The arrays, in the order written.
    pub arrays: Vec<Imported>,
}

impl Report for ImportReport {
    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        for a in &self.arrays {
            writeln!(
                out,
                "{}: {} {:?} (chunks {:?}, blocks {:?}): {} -> {} (cratio {:.2}) in {} ({})",
                a.path,
                a.dtype,
                a.shape,
                a.chunkshape,
                a.blockshape,
                human::bytes(a.nbytes),
                human::bytes(a.cbytes),
                a.cratio,
                human::duration(a.seconds),
                human::speed(a.nbytes, a.seconds),
            )?;
        }
        Ok(())
    }

    /// One JSON object per array and line.
    fn write_json(&self, out: &mut dyn Write) -> Result<()> {
        self.arrays.iter().try_for_each(|a| json_line(out, a))
    }
}

/// Runs `strata import`.
///
/// # Errors
/// Unreadable or malformed input, unwritable output; the message names the file.
pub fn run(args: &ImportArgs) -> Result<()> {
    report::print(&import(args)?, args.json)
}

fn import(args: &ImportArgs) -> Result<ImportReport> {
    let name = args.input.display();
    let mut head = [0u8; 4];
    let n = std::fs::File::open(&args.input)
        .and_then(|mut f| f.read(&mut head))
        .with_context(|| format!("cannot read {name}"))?;
    let is_netcdf = netcdf::MAGIC.iter().any(|m| head[..n] == **m);
    let arrays = if is_netcdf {
        import_netcdf(args)?
    } else {
        vec![import_file(args)?]
    };
    Ok(ImportReport { arrays })
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

#[cfg(test)]
mod tests {
    use super::{import, to_msgpack, ImportReport, Imported};
    use crate::commands::parse_args;
    use crate::formats::npy;
    use crate::report::Report;
    use serde_json::json;
    use strata::frame::OpenMode;
    use strata::ndarray::NdArray;
    use strata::schunk::values::Value;

    #[test]
    fn a_npy_file_becomes_an_array_with_its_shape_and_dtype() {
        let dir = tempfile::tempdir().unwrap();
        let (input, output) = (dir.path().join("grid.npy"), dir.path().join("grid.b2nd"));
        let data: Vec<u8> = (0..300u16).flat_map(u16::to_le_bytes).collect();
        std::fs::write(&input, npy::file("<u2", &[15, 20], &data)).unwrap();
        let args = parse_args(&[
            "import".as_ref(),
            "--chunkshape".as_ref(),
            "8,10".as_ref(),
            "--blockshape".as_ref(),
            "4,5".as_ref(),
            input.as_os_str(),
            output.as_os_str(),
        ]);
        let r = import(&args).unwrap();
        let [a] = &r.arrays[..] else { panic!("{r:?}") };
        assert_eq!(
            (a.name.as_str(), a.path.clone()),
            ("grid", output.display().to_string())
        );
        assert_eq!(
            (&a.shape[..], &a.chunkshape[..], &a.blockshape[..]),
            (&[15, 20][..], &[8, 10][..], &[4, 5][..])
        );
        assert_eq!((a.dtype.as_str(), a.nbytes), ("<u2", 600));
        assert_eq!(a.cbytes, std::fs::metadata(&output).unwrap().len());
        let arr = NdArray::open(&output, OpenMode::Read).unwrap();
        assert_eq!(arr.to_vec().unwrap(), data);
        assert_eq!(arr.dtype(), Some("<u2"));
    }

    #[test]
    fn one_line_per_array() {
        let row = |name: &str| Imported {
            name: name.into(),
            path: format!("out/{name}.b2nd"),
            shape: vec![3, 4],
            chunkshape: vec![3, 4],
            blockshape: vec![1, 4],
            dtype: "<f4".into(),
            nbytes: 48,
            cbytes: 24,
            cratio: 2.0,
            seconds: 0.25,
        };
        let r = ImportReport {
            arrays: vec![row("t"), row("lat")],
        };
        let mut text = Vec::new();
        r.write_text(&mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "out/t.b2nd: <f4 [3, 4] (chunks [3, 4], blocks [1, 4]): 48 B -> 24 B (cratio 2.00) in 250.0 ms (0.00 GB/s)\n\
             out/lat.b2nd: <f4 [3, 4] (chunks [3, 4], blocks [1, 4]): 48 B -> 24 B (cratio 2.00) in 250.0 ms (0.00 GB/s)\n"
        );
        let mut json = Vec::new();
        r.write_json(&mut json).unwrap();
        let lines: Vec<serde_json::Value> = String::from_utf8(json)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1]["name"], "lat");
        assert_eq!(lines[1]["cratio"], 2.0);
    }

    #[test]
    fn attributes_as_msgpack() {
        let v = to_msgpack(&json!({"units": "K", "fill": -999, "scale": [0.5, 2], "n": null}));
        let Value::Map(pairs) = v else {
            panic!("{v:?}")
        };
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| key.as_str() == Some(k))
                .map(|(_, v)| v.clone())
        };
        assert_eq!(get("units"), Some(Value::from("K")));
        assert_eq!(get("fill"), Some(Value::from(-999)));
        assert_eq!(
            get("scale"),
            Some(Value::Array(vec![Value::from(0.5), Value::from(2)]))
        );
        assert_eq!(get("n"), Some(Value::Nil));
    }
}
