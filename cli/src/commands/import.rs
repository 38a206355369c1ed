//! `strata import`: a netCDF-3 file (every numeric variable), an HDF5 file (every dataset of
//! fixed-size items, or one as `FILE.h5:/path`), a `.npy` file or raw bytes (with `--shape` and
//! `--dtype`) into b2nd arrays (`.b2nd`), with partitions given or derived from the cache
//! sizes.

use super::info::stored_bytes;
use crate::formats::hdf5::is_hdf5;
use crate::formats::netcdf;
use crate::formats::raw::open_input;
use crate::human;
use crate::input;
use crate::options::CompressOptions;
use crate::output::{self, Form, Output, Staged};
use crate::progress::bytes_bar;
use crate::report::{self, json_line, Report};
use crate::source::hdf5_spec;
use crate::usage_error;
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use serde::Serialize;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use strata::ndarray::dtype::numpy_itemsize;
use strata::ndarray::{ArrayParams, NdArray};
use strata::schunk::values::Value;
use strata::schunk::Location;

/// `--chunkshape` / `--blockshape`: the array's partitions.
#[derive(Debug, Clone, Args)]
pub struct PartitionArgs {
    /// Chunk shape in items, comma-separated [default: derived from the L3 cache size].
    #[arg(long, value_delimiter = ',')]
    chunkshape: Vec<usize>,
    /// Block shape in items, comma-separated [default: derived from the L2 cache size].
    #[arg(long, value_delimiter = ',')]
    blockshape: Vec<usize>,
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
    shape: Vec<usize>,
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
    /// A netCDF-3 file (.nc, .cdf), an HDF5 file or one of its datasets (FILE.h5:/path), a
    /// C-order .npy file, or raw bytes with --shape and --dtype.
    input: PathBuf,
    /// The .b2nd file to write; for netCDF input, a directory that gets one VAR.b2nd per
    /// variable; for a whole HDF5 file, one that gets GROUP/DATASET.b2nd per dataset.
    output: PathBuf,
}

/// The b2nd parameters for data of `shape` and `dtype` from the command line's flags.
fn array_params(args: &ImportArgs, shape: &[usize], dtype: &str) -> Result<ArrayParams> {
    let typesize = numpy_itemsize(dtype).unwrap_or_else(|e| usage_error(format!("--dtype: {e}")));
    if args.options.typesize.is_some() {
        usage_error("--typesize is the dtype's item size for arrays; give --dtype instead");
    }
    let mut cparams = args
        .options
        .cparams(Some(typesize), args.nthreads)
        .unwrap_or_else(|e| usage_error(e));
    cparams.typesize = typesize;
    let mut params = ArrayParams::new(shape, typesize)
        .with_dtype(dtype)
        .with_cparams(&cparams)
        .with_overwrite(true);
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
        params = params.with_chunkshape(&args.partitions.chunkshape);
    }
    if !args.partitions.blockshape.is_empty() {
        params = params.with_blockshape(&args.partitions.blockshape);
    }
    // Shapes and partitions are the user's arguments: refusing them is a usage error.
    if let Err(e) = params.meta() {
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
    out: &Output,
    shape: &[usize],
    dtype: &str,
    data: &[u8],
    vlmeta: &[(&str, Value)],
) -> Result<Imported> {
    let params = array_params(args, shape, dtype)?;
    let path = out.path();
    let shown = path.display().to_string();
    let start = Instant::now();
    let staged = Staged::new(out)?;
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
    if let Some((file, dataset)) = hdf5_spec(&args.input) {
        return Ok(ImportReport {
            arrays: import_hdf5(args, Path::new(file), Some(dataset))?,
        });
    }
    if is_hdf5(&args.input)? {
        return Ok(ImportReport {
            arrays: import_hdf5(args, &args.input, None)?,
        });
    }
    let name = args.input.display();
    input::regular_file(&args.input)?;
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
    let netcdf::NetCdf { vars, global_attrs } = netcdf::read(&args.input)?;
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
    let mut arrays = Vec::new();
    for var in &vars {
        let chosen = args.vars.is_empty() || args.vars.contains(&var.name);
        // Text variables (NC_CHAR) are not numeric arrays.
        if !chosen || var.dtype == "|S1" {
            continue;
        }
        let path = args.output.join(format!("{}.b2nd", var.name));
        let out = output::check(&path, &args.input, args.force, Form::Frame)?;
        let dims = Value::Array(var.dims.iter().map(|d| Value::from(d.as_str())).collect());
        let map = |m: &serde_json::Map<String, serde_json::Value>| {
            to_msgpack(&serde_json::Value::Object(m.clone()))
        };
        // Every array carries the file's global attributes too, so that one opened alone
        // still has them (docs/python.md, "xarray").
        let vlmeta = [
            ("dims", dims),
            ("attrs", map(&var.attrs.values)),
            ("attr_dtypes", map(&var.attrs.dtypes)),
            ("global_attrs", map(&global_attrs.values)),
            ("global_attr_dtypes", map(&global_attrs.dtypes)),
        ];
        let shape = var
            .shape
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| {
                anyhow!(
                    "{}: variable {} has shape {:?}",
                    args.input.display(),
                    var.name,
                    var.shape
                )
            })?;
        arrays.push(write_array(
            args, &var.name, &out, &shape, var.dtype, &var.data, &vlmeta,
        )?);
        bar.inc(var.data.len() as u64);
    }
    bar.finish_and_clear();
    if arrays.is_empty() {
        bail!("{}: no numeric variable to import", args.input.display());
    }
    Ok(arrays)
}

/// The datasets of the HDF5 file `file` (only `dataset` when given) as b2nd arrays: the
/// output itself for one dataset, `OUTPUT/GROUP/DATASET.b2nd` for each of a whole file (those
/// whose items have no fixed size, as variable-length strings, are left out).
fn import_hdf5(args: &ImportArgs, file: &Path, dataset: Option<&str>) -> Result<Vec<Imported>> {
    if !args.shape.is_empty() || args.dtype.is_some() || !args.vars.is_empty() {
        usage_error(
            "--shape, --dtype and --var are not for HDF5 input; name one dataset as FILE.h5:/path",
        );
    }
    let shown = file.display();
    let names = match dataset {
        Some(d) => vec![d.to_owned()],
        None => {
            strata::hdf5::list_datasets(file).with_context(|| format!("cannot read {shown}"))?
        }
    };
    let mut out = Vec::new();
    for name in &names {
        let ds = match strata::hdf5::H5Dataset::open(file, name) {
            Ok(ds) => ds,
            // Datasets Strata cannot read as arrays (no fixed-size items) are left out.
            Err(e) if e.code() == strata::error::code::INVALID_PARAM && dataset.is_none() => {
                continue
            }
            Err(e) => {
                return Err(anyhow!(e)).with_context(|| format!("cannot open {shown}:{name}"))
            }
        };
        let path = match dataset {
            Some(_) => args.output.clone(),
            None => args
                .output
                .join(format!("{}.b2nd", name.trim_start_matches('/'))),
        };
        if let Some(dir) = path.parent().filter(|_| dataset.is_none()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create directory {}", dir.display()))?;
        }
        let target = output::check(&path, file, args.force, Form::Frame)?;
        let data = ds
            .to_vec()
            .with_context(|| format!("cannot read {shown}:{name}"))?;
        out.push(write_array(
            args,
            name,
            &target,
            ds.shape(),
            ds.dtype(),
            &data,
            &[],
        )?);
    }
    if out.is_empty() {
        bail!("{shown}: no dataset of fixed-size items to import");
    }
    Ok(out)
}

fn import_file(args: &ImportArgs) -> Result<Imported> {
    if !args.vars.is_empty() {
        usage_error("--var is for netCDF input");
    }
    let out = output::check(&args.output, &args.input, args.force, Form::Frame)?;
    let mut input = open_input(&args.input)?;
    let name = args.input.display();
    let (shape, dtype) = match (&input.npy, args.shape.is_empty(), &args.dtype) {
        (Some(npy), true, None) => (
            npy.shape
                .iter()
                .map(|&d| usize::try_from(d))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|_| anyhow!("{name}: the .npy shape {:?} is too large", npy.shape))?,
            npy.dtype.clone(),
        ),
        (Some(_), _, _) => {
            usage_error("--shape and --dtype are for raw input; a .npy file describes itself")
        }
        (None, false, Some(dtype)) => (args.shape.clone(), dtype.clone()),
        (None, _, _) => usage_error("raw input needs --shape and --dtype (or give a .npy file)"),
    };
    let typesize = match numpy_itemsize(&dtype) {
        Ok(n) => n,
        Err(e) if input.npy.is_some() => bail!("{name}: {e}"),
        Err(e) => usage_error(format!("--dtype: {e}")),
    };
    let needed = shape
        .iter()
        .try_fold(typesize as u64, |acc, &d| {
            u64::try_from(d).ok().and_then(|d| acc.checked_mul(d))
        })
        .unwrap_or_else(|| usage_error(format!("--shape {shape:?} is too large")));
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
    write_array(args, &var, &out, &shape, &dtype, &data, &[])
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
    fn an_hdf5_file_becomes_one_array_per_dataset() {
        let dir = tempfile::tempdir().unwrap();
        let h5 = dir.path().join("in.h5");
        let data: Vec<u8> = (0..24 * 10u16).flat_map(u16::to_le_bytes).collect();
        for name in ["/top", "/g/inner"] {
            let params = strata::ArrayParams::new(&[24, 10], 2)
                .with_dtype("<u2")
                .with_chunkshape(&[10, 10]);
            strata::hdf5::write_array(&h5, name, &params, &data).unwrap();
        }
        let out = dir.path().join("arrays");
        let r = import(&parse_args(&[
            "import".as_ref(),
            h5.as_os_str(),
            out.as_os_str(),
        ]))
        .unwrap();
        let names: Vec<&str> = r.arrays.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["/top", "/g/inner"]);
        for file in ["top.b2nd", "g/inner.b2nd"] {
            let arr = NdArray::open(out.join(file), OpenMode::Read).unwrap();
            assert_eq!(
                (arr.dtype(), arr.to_vec().unwrap()),
                (Some("<u2"), data.clone())
            );
        }
        // One dataset, named in the input.
        let one = dir.path().join("one.b2nd");
        let spec = format!("{}:/g/inner", h5.display());
        let r = import(&parse_args(&[
            "import".as_ref(),
            spec.as_ref(),
            one.as_os_str(),
        ]))
        .unwrap();
        assert_eq!(r.arrays[0].shape, [24, 10]);
        assert_eq!(
            NdArray::open(&one, OpenMode::Read)
                .unwrap()
                .to_vec()
                .unwrap(),
            data
        );
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
