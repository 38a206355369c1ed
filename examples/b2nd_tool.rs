//! A thin tool over `strata::ndarray` for the interop tests (tests/interop/test_b2nd.py),
//! until the `strata` CLI grows `info`, `slice` and `import` for arrays.
//!
//! * `b2nd_tool info <array>`: prints the array (`.b2nd` file or sparse directory) as JSON:
//!   shape, chunkshape, blockshape, dtype, typesize, nchunks, nbytes, cbytes, sparse,
//!   metalayer names, and the cparams (codec, clevel, filters, filters_meta).
//! * `b2nd_tool slice <array> <out.raw> [<slices>]`: writes the selection to `<out.raw>`
//!   (items in C order, as stored) and prints `{"shape": [...]}`. `<slices>` is one NumPy
//!   slice per leading dimension, comma-separated: `i`, `start:stop`, `start:stop:step`,
//!   any part left out (`::-1`, `3:`, `:`); an index keeps its dimension (length 1).
//! * `b2nd_tool write <spec.json> <data.raw> <array>`: makes an array from a JSON spec:
//!   `shape`, `dtype` (the typesize is its item size unless `typesize` is given),
//!   `chunkshape`/`blockshape` (optional: default partitions), `codec`, `codec_meta`,
//!   `clevel`, `filters`, `filters_meta` (six slots each), `sparse` (a directory instead of a file), and `init`:
//!   `buffer` (from `<data.raw>`, C order), `zeros`, `uninit` or `full` (the first item of
//!   `<data.raw>`).
//! * `b2nd_tool set <array> <data.raw> [<slices>]`: writes `<data.raw>` into the selection.
//! * `b2nd_tool resize <array> <d0,d1,...>`: resizes the array in place.

use serde_json::{json, Value as Json};
use std::path::PathBuf;
use strata::chunk::CParams;
use strata::ndarray::{ArrayParams, Location, NdArray, OpenMode, Slice};
use strata::{CodecId, FilterId};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// One NumPy slice: `i`, `a:b`, `a:b:c`, parts optional.
fn parse_slice(s: &str) -> Res<Slice> {
    let part = |p: &str| -> Res<Option<i64>> {
        let p = p.trim();
        Ok(if p.is_empty() { None } else { Some(p.parse()?) })
    };
    let parts: Vec<&str> = s.split(':').collect();
    Ok(match parts.as_slice() {
        [i] => Slice::index(part(i)?.ok_or("empty index")?),
        [a, b] => Slice::new(part(a)?, part(b)?, 1),
        [a, b, c] => Slice::new(part(a)?, part(b)?, part(c)?.unwrap_or(1)),
        _ => return Err(format!("bad slice {s:?}").into()),
    })
}

fn parse_slices(arg: Option<&String>) -> Res<Vec<Slice>> {
    match arg {
        None => Ok(Vec::new()),
        Some(s) if s.trim().is_empty() => Ok(Vec::new()),
        Some(s) => s.split(',').map(parse_slice).collect(),
    }
}

fn info(path: &str) -> Res<()> {
    let arr = NdArray::open(path, OpenMode::Read)?;
    let cp = arr.cparams();
    let out = json!({
        "shape": arr.shape(),
        "chunkshape": arr.chunkshape(),
        "blockshape": arr.blockshape(),
        "dtype": arr.dtype(),
        "typesize": arr.typesize(),
        "nchunks": arr.schunk().nchunks(),
        "nbytes": arr.nbytes(),
        "cbytes": arr.cbytes(),
        "sparse": arr.schunk().is_sparse(),
        "metalayers": arr.schunk().meta_names(),
        "codec": cp.codec.0,
        "clevel": cp.clevel,
        "filters": cp.filters.map(u8::from),
        "filters_meta": cp.filters_meta,
    });
    println!("{out}");
    Ok(())
}

fn slice(path: &str, out: &str, slices: Option<&String>) -> Res<()> {
    let arr = NdArray::open(path, OpenMode::Read)?;
    let (data, shape) = arr.get_slice_vec(&parse_slices(slices)?)?;
    std::fs::write(out, data)?;
    println!("{}", json!({ "shape": shape }));
    Ok(())
}

fn ints<T: TryFrom<i64>>(v: &Json, what: &str) -> Res<Vec<T>> {
    v.as_array()
        .ok_or(format!("{what} is not a list"))?
        .iter()
        .map(|x| {
            x.as_i64()
                .and_then(|i| T::try_from(i).ok())
                .ok_or_else(|| format!("{what}: bad entry {x}").into())
        })
        .collect()
}

fn slots(v: &Json, what: &str) -> Res<[u8; 6]> {
    let v: Vec<u8> = ints(v, what)?;
    v.try_into()
        .map_err(|_| format!("{what} needs 6 entries").into())
}

fn write(spec: &str, raw: &str, out: &str) -> Res<()> {
    let spec: Json = serde_json::from_str(&std::fs::read_to_string(spec)?)?;
    let data = std::fs::read(raw)?;
    let shape: Vec<usize> = ints(&spec["shape"], "shape")?;
    let dtype = spec["dtype"].as_str().ok_or("dtype is not a string")?;
    let mut params = match spec["typesize"].as_u64() {
        Some(ts) => ArrayParams::new(&shape, usize::try_from(ts)?).with_dtype(dtype),
        None => ArrayParams::from_dtype(&shape, dtype)?,
    };
    if !spec["chunkshape"].is_null() {
        params = params.with_chunkshape(&ints::<usize>(&spec["chunkshape"], "chunkshape")?);
    }
    if !spec["blockshape"].is_null() {
        params = params.with_blockshape(&ints::<usize>(&spec["blockshape"], "blockshape")?);
    }
    let mut cparams = CParams::default();
    if let Some(c) = spec["codec"].as_u64() {
        cparams.codec = CodecId(u8::try_from(c)?);
    }
    if let Some(c) = spec["clevel"].as_u64() {
        cparams.clevel = u8::try_from(c)?;
    }
    if let Some(m) = spec["codec_meta"].as_u64() {
        cparams.codec_meta = u8::try_from(m)?;
    }
    if !spec["filters"].is_null() {
        cparams.filters = slots(&spec["filters"], "filters")?.map(FilterId);
    }
    if !spec["filters_meta"].is_null() {
        cparams.filters_meta = slots(&spec["filters_meta"], "filters_meta")?;
    }
    let params = params.with_cparams(&cparams).with_overwrite(true);
    let location = if spec["sparse"].as_bool() == Some(true) {
        Location::Dir(PathBuf::from(out))
    } else {
        Location::File(PathBuf::from(out))
    };
    let ts = params.cparams.typesize;
    let arr = match spec["init"].as_str().unwrap_or("buffer") {
        "buffer" => NdArray::from_buffer(&params, &location, &data)?,
        "zeros" => NdArray::zeros(&params, &location)?,
        "uninit" => NdArray::uninit(&params, &location)?,
        "full" => NdArray::full(&params, &location, data.get(..ts).ok_or("no fill value")?)?,
        other => return Err(format!("unknown init {other:?}").into()),
    };
    arr.close()?;
    Ok(())
}

fn set(path: &str, raw: &str, slices: Option<&String>) -> Res<()> {
    let mut arr = NdArray::open(path, OpenMode::ReadWrite)?;
    arr.set_slice(&parse_slices(slices)?, &std::fs::read(raw)?)?;
    arr.close()?;
    Ok(())
}

fn resize(path: &str, shape: &str) -> Res<()> {
    let mut arr = NdArray::open(path, OpenMode::ReadWrite)?;
    let shape = shape
        .split(',')
        .map(|d| d.trim().parse::<usize>())
        .collect::<Result<Vec<_>, _>>()?;
    arr.resize(&shape)?;
    arr.close()?;
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let a = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
    let r = match a(1) {
        "info" => info(a(2)),
        "slice" => slice(a(2), a(3), args.get(4)),
        "write" => write(a(2), a(3), a(4)),
        "set" => set(a(2), a(3), args.get(4)),
        "resize" => resize(a(2), a(3)),
        _ => Err("usage: b2nd_tool info|slice|write|set|resize ... (see the source)".into()),
    };
    if let Err(e) = r {
        eprintln!("b2nd_tool: {e}");
        std::process::exit(1);
    }
}
