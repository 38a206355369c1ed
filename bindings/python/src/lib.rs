//! `strata._native`: the Rust side of the Python package `strata`.
//!
//! It holds an open [`NdArray`] per Python `Array` and moves bytes in and out of it; the Python
//! side (`python/strata/`) turns keys into selections, bytes into NumPy arrays and errors codes
//! into exception classes. Every read, write and decompression runs with the GIL released
//! ([`Python::detach`]), the array behind a lock taken inside the detached section, so Python
//! threads that read one array decode in parallel. Reads decode straight into a NumPy array
//! the Python side allocates, writes compress straight from the caller's array
//! (`src/borrow.rs`).

mod borrow;

use borrow::{Destination, Source};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyTuple};
use std::sync::{PoisonError, RwLock};
use strata::chunk::{decompress_vec, CParams, Context};
use strata::error::Expected;
use strata::format::chunk::ChunkHeader;
use strata::frame::OpenMode;
use strata::ndarray::{ArrayParams, Location, NdArray, Selection, Slice, SyncPolicy};
use strata::registry::Registry;
use strata::scheduler::Runtime;
use strata::{CodecId, Error, FilterId};

/// Why an operation on an `Array` failed.
enum Fail {
    /// The array was closed.
    Closed,
    /// The library said no.
    Strata(Error),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail::Strata(e)
    }
}

/// The `strata.errors` class for `e`: `OSError` kinds for I/O, `ValueError` kinds for bad
/// parameters and for stored bytes that do not decode.
fn error_class(e: &Error) -> &'static str {
    match e.root() {
        Error::Io { .. } | Error::Remote { .. } => "StrataIOError",
        Error::InvalidHeader { .. }
        | Error::Malformed { .. }
        | Error::Msgpack { .. }
        | Error::Frame { .. }
        | Error::Truncated { .. }
        | Error::RunLength { .. }
        | Error::Codec { .. }
        | Error::Decoded { .. }
        | Error::VersionSupport { .. }
        | Error::MetalayerNotFound { .. }
        | Error::FrameType { .. } => "CorruptError",
        Error::MemoryAlloc(_) | Error::Internal { .. } | Error::PluginPanic { .. } => "StrataError",
        // A library that is not a plugin Strata accepts; `load_plugin` makes a file that
        // cannot be read an I/O error.
        Error::PluginLoad { .. } => "ParamError",
        _ => "ParamError",
    }
}

/// The exception `class` of `strata.errors` with `message` and `code`.
fn exception(py: Python<'_>, class: &str, message: String, code: i32) -> PyErr {
    let made = py
        .import("strata.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|cls| cls.call1((message, code)));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(err) => err,
    }
}

/// `e` as the Python exception of its class, with its message and code.
fn py_err(py: Python<'_>, e: Fail) -> PyErr {
    match e {
        Fail::Closed => exception(
            py,
            "ClosedError",
            "the array is closed".to_string(),
            strata::error::code::INVALID_PARAM,
        ),
        Fail::Strata(e) => exception(py, error_class(&e), e.to_string(), e.code()),
    }
}

/// Runs `f` with the GIL released and turns its failure into the Python exception.
fn detached<T: Send>(py: Python<'_>, f: impl Send + FnOnce() -> Result<T, Fail>) -> PyResult<T> {
    py.detach(f).map_err(|e| py_err(py, e))
}

/// One dimension of a selection as Python gives it: `(start, stop, step)` of a `slice`.
type PySliceKey = (Option<i64>, Option<i64>, i64);

fn slices(key: &[PySliceKey]) -> Vec<Slice> {
    key.iter()
        .map(|&(start, stop, step)| Slice::new(start, stop, step))
        .collect()
}

/// The bytes of the selection `key`, C order, from `arr` into `out`, which must be the
/// selection's size exactly.
fn read_into(arr: &NdArray, key: &[PySliceKey], out: &mut [u8]) -> Result<(), Fail> {
    let slices = slices(key);
    let sel = Selection::new(arr.shape(), &slices)?;
    let nbytes = sel
        .nitems()
        .and_then(|n| n.checked_mul(arr.typesize()))
        .ok_or(Error::Overflow {
            what: "the selection's size in bytes",
        })?;
    if nbytes != out.len() {
        return Err(Fail::Strata(Error::Mismatch {
            what: "bytes of the destination array for the selection",
            expected: nbytes as u64,
            found: out.len() as u64,
        }));
    }
    arr.get_slice(&slices, out)?;
    Ok(())
}

/// An open b2nd array: a `.b2nd` file, a sparse frame directory, a URL or memory.
#[pyclass(frozen, module = "strata._native", name = "Array")]
struct Array {
    inner: RwLock<Option<NdArray>>,
    /// Where it lives; `None` in memory.
    location: Option<String>,
    /// `"r"`, `"r+"` or `"a"`.
    mode: String,
}

impl Array {
    fn new(arr: NdArray, location: Option<String>, mode: &str) -> Self {
        Array {
            inner: RwLock::new(Some(arr)),
            location,
            mode: mode.to_string(),
        }
    }

    /// `f` on the open array, under the read lock.
    fn with<T>(&self, f: impl FnOnce(&NdArray) -> Result<T, Fail>) -> Result<T, Fail> {
        let guard = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        f(guard.as_ref().ok_or(Fail::Closed)?)
    }

    /// `f` on the open array, under the write lock.
    fn with_mut<T>(&self, f: impl FnOnce(&mut NdArray) -> Result<T, Fail>) -> Result<T, Fail> {
        let mut guard = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        f(guard.as_mut().ok_or(Fail::Closed)?)
    }

    /// `f` on the open array with the GIL held (cheap reads of its metadata).
    fn get<T>(&self, py: Python<'_>, f: impl FnOnce(&NdArray) -> T) -> PyResult<T> {
        self.with(|a| Ok(f(a))).map_err(|e| py_err(py, e))
    }
}

fn open_mode(mode: &str) -> PyResult<OpenMode> {
    match mode {
        "r" => Ok(OpenMode::Read),
        "r+" | "w" => Ok(OpenMode::ReadWrite),
        "a" => Ok(OpenMode::Append),
        _ => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "mode must be 'r', 'r+' or 'a', not {mode:?}"
        ))),
    }
}

#[pymethods]
impl Array {
    /// The shape, a tuple of ints.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let shape = self.get(py, |a| a.shape().to_vec())?;
        PyTuple::new(py, shape)
    }

    /// The chunk shape, a tuple of ints.
    #[getter]
    fn chunks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let shape = self.get(py, |a| a.chunkshape().to_vec())?;
        PyTuple::new(py, shape)
    }

    /// The block shape, a tuple of ints.
    #[getter]
    fn blocks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let shape = self.get(py, |a| a.blockshape().to_vec())?;
        PyTuple::new(py, shape)
    }

    /// The NumPy dtype string stored in the `b2nd` metalayer, or `None`.
    #[getter]
    fn dtype_str(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.get(py, |a| a.dtype().map(str::to_string))
    }

    /// Bytes per item.
    #[getter]
    fn typesize(&self, py: Python<'_>) -> PyResult<usize> {
        self.get(py, NdArray::typesize)
    }

    /// Uncompressed size in bytes.
    #[getter]
    fn nbytes(&self, py: Python<'_>) -> PyResult<u64> {
        self.get(py, NdArray::nbytes)
    }

    /// Compressed size in bytes.
    #[getter]
    fn cbytes(&self, py: Python<'_>) -> PyResult<u64> {
        self.get(py, NdArray::cbytes)
    }

    /// Where the array lives (path or URL), `None` in memory.
    #[getter]
    fn location(&self) -> Option<String> {
        self.location.clone()
    }

    /// The mode it was opened with.
    #[getter]
    fn mode(&self) -> String {
        self.mode.clone()
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none()
    }

    /// The compression parameters: codec, clevel, typesize, filters, filters_meta, nthreads.
    #[getter]
    fn cparams<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.get(py, |a| a.cparams().clone())?;
        let d = PyDict::new(py);
        d.set_item("codec", c.codec.to_string())?;
        d.set_item("codec_meta", c.codec_meta)?;
        d.set_item("clevel", c.clevel)?;
        d.set_item("typesize", c.typesize)?;
        let filters: Vec<String> = c.filters.iter().map(ToString::to_string).collect();
        d.set_item("filters", filters)?;
        d.set_item("filters_meta", c.filters_meta.map(u32::from).to_vec())?;
        d.set_item("nthreads", c.nthreads)?;
        Ok(d)
    }

    /// The fixed-size metalayers, as a dict of name to bytes.
    #[getter]
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let layers: Vec<(String, Vec<u8>)> = self.get(py, |a| {
            let s = a.schunk();
            s.meta_names()
                .into_iter()
                .filter_map(|n| s.meta(n).map(|c| (n.to_string(), c.to_vec())))
                .collect()
        })?;
        let d = PyDict::new(py);
        for (name, content) in layers {
            d.set_item(name, PyBytes::new(py, &content))?;
        }
        Ok(d)
    }

    /// The names of the variable-length metalayers.
    fn vlmeta_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.get(py, |a| {
            a.schunk()
                .vlmeta_names()
                .into_iter()
                .map(str::to_string)
                .collect()
        })
    }

    /// The content (msgpack bytes) of the vlmetalayer `name`.
    ///
    /// Raises `CorruptError` (code `METALAYER_NOT_FOUND`) when there is none; `VLMeta` looks
    /// the name up first and raises `KeyError`.
    fn vlmeta_get<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyBytes>> {
        let content = detached(py, || self.with(|a| Ok(a.schunk().vlmeta(name)?)))?;
        Ok(PyBytes::new(py, &content))
    }

    /// Sets the vlmetalayer `name` to `content` (msgpack bytes); the array must be writable.
    fn vlmeta_set(&self, py: Python<'_>, name: &str, content: &[u8]) -> PyResult<()> {
        detached(py, || {
            self.with_mut(|a| Ok(a.schunk_mut().vlmeta_set(name, content, None)?))
        })
    }

    /// Removes the vlmetalayer `name`; the array must be writable.
    fn vlmeta_delete(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        detached(py, || {
            self.with_mut(|a| Ok(a.schunk_mut().vlmeta_delete(name)?))
        })
    }

    /// Decodes the selection `key`, a list of `(start, stop, step)` for the leading
    /// dimensions, into `out` (C order), with the GIL released. `out` must be a writeable,
    /// C-contiguous `numpy.ndarray` (not a subclass) of the selection's size in bytes, that
    /// no other thread uses during the call.
    ///
    /// Raises `TypeError` for another object, `ParamError` for a read-only or
    /// non-contiguous array or one of another size.
    fn read_into(
        &self,
        py: Python<'_>,
        key: Vec<PySliceKey>,
        out: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let mut dest = Destination::of(out)?;
        let bytes = dest.bytes();
        detached(py, || self.with(|a| read_into(a, &key, bytes)))
    }

    /// Writes `data`, a C-contiguous `numpy.ndarray` of the selection's shape and the array's
    /// dtype, into the selection `key`, from its memory, with the GIL released.
    fn write(&self, py: Python<'_>, key: Vec<PySliceKey>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let data = Source::of(data)?.bytes();
        detached(py, || {
            self.with_mut(|a| {
                a.set_slice(&slices(&key), data)?;
                Ok(())
            })
        })
    }

    /// Changes the shape to `shape` (new items are zeros).
    fn resize(&self, py: Python<'_>, shape: Vec<usize>) -> PyResult<()> {
        detached(py, || self.with_mut(|a| Ok(a.resize(&shape)?)))
    }

    /// Writes the array as a contiguous `.b2nd` file at `path`.
    fn save(&self, py: Python<'_>, path: &str) -> PyResult<()> {
        detached(py, || self.with(|a| Ok(a.save(path)?)))
    }

    /// Flushes and closes the array; later calls raise `ClosedError`.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        detached(py, || {
            let arr = self
                .inner
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            match arr {
                Some(a) => Ok(a.close()?),
                None => Ok(()),
            }
        })
    }
}

/// Opens the `.b2nd` file, sparse directory or URL `location` with `mode` (`"r"`, `"r+"`,
/// `"a"`).
#[pyfunction]
fn open(py: Python<'_>, location: String, mode: &str) -> PyResult<Array> {
    let om = open_mode(mode)?;
    let arr = detached(py, || Ok(NdArray::open(&location, om)?))?;
    Ok(Array::new(arr, Some(location), mode))
}

/// The filter slots for the filter names `filters` (slot 0 first), or the default.
fn filter_slots(filters: Option<Vec<String>>) -> Result<Option<[FilterId; 6]>, Error> {
    let Some(names) = filters else {
        return Ok(None);
    };
    if names.len() > 6 {
        return Err(Error::OutOfRange {
            what: "the number of filters",
            value: i64::try_from(names.len()).unwrap_or(i64::MAX),
            expected: Expected::AtMost(6),
        });
    }
    let registry = Registry::global();
    let mut slots = [FilterId::NOFILTER; 6];
    for (slot, name) in slots.iter_mut().zip(&names) {
        *slot = registry.parse_filter(name)?;
    }
    Ok(Some(slots))
}

/// Compression parameters from the Python keywords.
fn cparams(
    typesize: usize,
    codec: &str,
    clevel: u8,
    filters: Option<Vec<String>>,
    nthreads: usize,
) -> Result<CParams, Error> {
    let codec = match CodecId::from_name(codec) {
        Some(id) => id,
        None => Registry::global().parse_codec(codec)?.id(),
    };
    let mut c = CParams {
        codec,
        clevel,
        typesize,
        nthreads,
        ..CParams::default()
    };
    if let Some(slots) = filter_slots(filters)? {
        c.filters = slots;
    }
    Ok(c)
}

/// Makes a new array. `kind` is `"zeros"`, `"empty"`, `"full"` (every item the bytes of
/// `data`) or `"buffer"` (`data` the items); `data` is a C-contiguous `numpy.ndarray`, read
/// in place with the GIL released. `path` `None` keeps the array in memory, `contiguous`
/// chooses a `.b2nd` file over a sparse directory, `sync` makes closing it fsync what was
/// written (else nothing is fsynced, as `np.save` does).
#[pyfunction]
#[pyo3(signature = (kind, shape, typesize, dtype, data, path, contiguous, overwrite, sync, chunks, blocks, codec, clevel, filters, nthreads))]
#[allow(clippy::too_many_arguments)]
fn create(
    py: Python<'_>,
    kind: &str,
    shape: Vec<usize>,
    typesize: usize,
    dtype: Option<String>,
    data: &Bound<'_, PyAny>,
    path: Option<String>,
    contiguous: bool,
    overwrite: bool,
    sync: bool,
    chunks: Option<Vec<usize>>,
    blocks: Option<Vec<usize>>,
    codec: &str,
    clevel: u8,
    filters: Option<Vec<String>>,
    nthreads: usize,
) -> PyResult<Array> {
    let location = match &path {
        None => Location::Memory,
        Some(p) if contiguous => Location::File(p.into()),
        Some(p) => Location::Dir(p.into()),
    };
    let data = Source::of(data)?.bytes();
    let made = py.detach(|| -> Result<NdArray, Error> {
        let mut params = ArrayParams::new(&shape, typesize)
            .with_cparams(&cparams(typesize, codec, clevel, filters, nthreads)?)
            .with_overwrite(overwrite)
            .with_sync(if sync {
                SyncPolicy::OnClose
            } else {
                SyncPolicy::None
            });
        if let Some(d) = &dtype {
            params = params.with_dtype(d);
        }
        if let Some(c) = &chunks {
            params = params.with_chunkshape(c);
        }
        if let Some(b) = &blocks {
            params = params.with_blockshape(b);
        }
        match kind {
            "zeros" => NdArray::zeros(&params, &location),
            "empty" => NdArray::uninit(&params, &location),
            "full" => NdArray::full(&params, &location, data),
            _ => NdArray::from_buffer(&params, &location, data),
        }
    });
    let arr = made.map_err(|e| py_err(py, Fail::Strata(e)))?;
    Ok(Array::new(arr, path, "r+"))
}

/// Compresses `data` into one Blosc2 chunk.
#[pyfunction]
#[pyo3(signature = (data, typesize, codec, clevel, filters, nthreads))]
fn compress<'py>(
    py: Python<'py>,
    data: &[u8],
    typesize: usize,
    codec: &str,
    clevel: u8,
    filters: Option<Vec<String>>,
    nthreads: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let chunk = detached(py, || {
        let c = cparams(typesize, codec, clevel, filters, nthreads)?;
        Ok(strata::chunk::compress_vec_ctx(
            &Context::global(),
            &c,
            data,
        )?)
    })?;
    Ok(PyBytes::new(py, &chunk))
}

/// Decompresses the Blosc (1 or 2) chunk `chunk`, with the GIL released, into a new
/// bytearray (a copy of the decoded bytes: a bytearray cannot be decoded into before its
/// size is trusted; [`decompress_into`] has none).
#[pyfunction]
fn decompress<'py>(py: Python<'py>, chunk: &[u8]) -> PyResult<Bound<'py, PyByteArray>> {
    let data = detached(py, || Ok(decompress_vec(chunk)?))?;
    Ok(PyByteArray::new(py, &data))
}

/// The size in bytes of the data of the Blosc (1 or 2) chunk `chunk`, as its header says.
#[pyfunction]
fn chunk_nbytes(py: Python<'_>, chunk: &[u8]) -> PyResult<usize> {
    ChunkHeader::parse(chunk)
        .map(|h| h.nbytes)
        .map_err(|e| py_err(py, Fail::Strata(e)))
}

/// Decompresses the Blosc (1 or 2) chunk `chunk` into `out`, a writeable, C-contiguous
/// `numpy.ndarray` of [`chunk_nbytes`] bytes that no other thread uses during the call, with
/// the GIL released.
///
/// Raises `TypeError` for another object, `ParamError` for a read-only or non-contiguous
/// array or one of another size, `CorruptError` for a chunk that does not decode.
#[pyfunction]
fn decompress_into(py: Python<'_>, chunk: &[u8], out: &Bound<'_, PyAny>) -> PyResult<()> {
    let mut dest = Destination::of(out)?;
    let bytes = dest.bytes();
    detached(py, || {
        let nbytes = ChunkHeader::parse(chunk)?.nbytes;
        if nbytes != bytes.len() {
            return Err(Fail::Strata(Error::Mismatch {
                what: "bytes of the destination array for the chunk",
                expected: nbytes as u64,
                found: bytes.len() as u64,
            }));
        }
        strata::chunk::decompress(chunk, bytes)?;
        Ok(())
    })
}

/// Sets the number of threads of Strata's runtime (0 = one per core).
#[pyfunction]
fn set_nthreads(nthreads: usize) {
    Runtime::global().set_nthreads(nthreads);
}

/// The registered codecs and filters: a list of `(kind, id, name, origin)`.
#[pyfunction]
fn plugins<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let rows: Vec<(String, u8, String, String)> = Registry::global()
        .list()
        .into_iter()
        .map(|r| {
            (
                r.kind.name().to_string(),
                r.id,
                r.name,
                r.origin.to_string(),
            )
        })
        .collect();
    PyList::new(py, rows)
}

/// Loads the plugin library at `path` into the registry; returns its `(kind, id, name)`s.
///
/// A failure keeps the library's message and code (`PLUGIN_LOAD`); its class is
/// `StrataIOError` when `path` is not a regular file that can be opened for reading (missing,
/// a directory, no permission), else `ParamError` (not a plugin library Strata accepts).
#[pyfunction]
fn load_plugin(py: Python<'_>, path: String) -> PyResult<Vec<(String, u8, String)>> {
    let loaded = py
        .detach(|| Registry::global().load_plugin(&path))
        .map_err(|e| {
            let readable = std::fs::File::open(&path)
                .and_then(|f| f.metadata())
                .is_ok_and(|m| m.is_file());
            let class = if readable {
                error_class(&e)
            } else {
                "StrataIOError"
            };
            exception(py, class, e.to_string(), e.code())
        })?;
    Ok(loaded
        .into_iter()
        .map(|r| (r.kind.name().to_string(), r.id, r.name))
        .collect())
}

/// The native module `strata._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Array>()?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(create, m)?)?;
    m.add_function(wrap_pyfunction!(compress, m)?)?;
    m.add_function(wrap_pyfunction!(decompress, m)?)?;
    m.add_function(wrap_pyfunction!(chunk_nbytes, m)?)?;
    m.add_function(wrap_pyfunction!(decompress_into, m)?)?;
    m.add_function(wrap_pyfunction!(set_nthreads, m)?)?;
    m.add_function(wrap_pyfunction!(plugins, m)?)?;
    m.add_function(wrap_pyfunction!(load_plugin, m)?)?;
    let codes = PyDict::new(m.py());
    for &(value, name, _) in strata::error::CODES {
        codes.set_item(name, value)?;
    }
    m.add("ERROR_CODES", codes)?;
    m.add(
        "__doc__",
        "Strata's native module; use the package `strata`.",
    )?;
    Ok(())
}
