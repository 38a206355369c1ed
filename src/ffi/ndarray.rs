//! C functions for N-d arrays (`strata_ndarray`, b2nd): create (uninit, zeros, full, from a
//! buffer) in memory, in a `.b2nd` file or a sparse directory; open; save; read and write
//! slices; resize; shape, partitions and dtype.
//!
//! Shapes are in elements, outermost dimension first (C order), as b2nd stores them; sizes
//! are in bytes.
//!
//! Format: C-Blosc2 `README_B2ND_METALAYER.rst`, `blosc/b2nd.c` (`b2nd_uninit`,
//! `b2nd_zeros`, `b2nd_full`, `b2nd_from_cbuffer`, `b2nd_open`, `b2nd_save`,
//! `b2nd_get_slice_cbuffer`, `b2nd_set_slice_cbuffer`, `b2nd_resize`).

#![allow(unsafe_code)]

use super::cache::strata_cache;
use super::handle::{self, handle, Handle};
use super::params::{strata_cparams, strata_dparams, strata_storage, sync_policy};
use super::schunk::{location, open_mode};
use super::{
    arg_mut, arg_ref, call, call_status, count, name_out, out_buffer, slice_in, str_in, FfiResult,
};
use crate::error::{Error, Expected};
use crate::format::b2nd::MAX_DIM;
use crate::ndarray::dtype::itemsize;
use crate::ndarray::{ArrayParams, NdArray, Selection, Slice};
use crate::schunk::{Location, OpenOptions};
use std::ffi::c_char;

// The fixed arrays below hold one entry per dimension, up to b2nd's maximum.
const _: () = assert!(MAX_DIM == 16);

/// How a new N-d array is shaped and compressed. Fill it with `strata_ndarray_params_default`
/// (which sets the sizes of it and of its `cparams` and `dparams`), then set `ndim`, `shape`,
/// `cparams.typesize` (unless a dtype gives it) and what else you need.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct strata_ndarray_params {
    /// `sizeof(strata_ndarray_params)` as the caller compiled it.
    pub size: usize,
    /// Number of dimensions, 0–16 (`STRATA_MAX_DIM`).
    pub ndim: i32,
    /// Shape in elements, C order (first `ndim` entries used).
    pub shape: [i64; 16],
    /// Chunk shape in elements; all 0 = derived from the L3 cache size.
    pub chunkshape: [i32; 16],
    /// Block shape in elements; all 0 = derived from the L2 cache size.
    pub blockshape: [i32; 16],
    /// Compression of the chunks; `typesize` is the item size in bytes (`blocksize` is
    /// ignored: a chunk's blocks are the array's blocks).
    pub cparams: strata_cparams,
    /// Decompression (threads per read).
    pub dparams: strata_dparams,
}

/// What an N-d array is (`strata_ndarray_get_info`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct strata_ndarray_info {
    /// Number of dimensions.
    pub ndim: i32,
    /// Item size in bytes.
    pub typesize: i32,
    /// Shape in elements, C order (first `ndim` entries; the rest 0).
    pub shape: [i64; 16],
    /// Chunk shape in elements.
    pub chunkshape: [i32; 16],
    /// Block shape in elements.
    pub blockshape: [i32; 16],
    /// Uncompressed size of the items in bytes (`prod(shape) * typesize`).
    pub nbytes: i64,
    /// Compressed size in bytes (the frame's chunk data).
    pub cbytes: i64,
}

/// A b2nd N-d array in a frame (memory, `.b2nd` file or sparse directory), or a dataset of an
/// HDF5 file opened for reading (`strata_ndarray_open_hdf5`). Opaque; made by
/// `strata_ndarray_uninit`, `_zeros`, `_full`, `_from_buffer`, `_open`, `_from_cframe`,
/// `_open_hdf5`; released by `strata_ndarray_close` or `strata_ndarray_free`.
#[allow(non_camel_case_types)] // the C name
pub struct strata_ndarray {
    inner: Held,
}
handle!(strata_ndarray, Held, "array");

/// What a handle holds.
pub(super) enum Held {
    /// A b2nd array.
    B2nd(NdArray),
    /// An HDF5 dataset, read directly where its chunks are Blosc2 frames (read only).
    #[cfg(feature = "hdf5")]
    Hdf5(crate::hdf5::H5Dataset),
}

// One call at a time may change a handle; calls taking a `const` handle may overlap.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<NdArray>();
    #[cfg(feature = "hdf5")]
    shareable::<crate::hdf5::H5Dataset>();
};

impl Held {
    /// The b2nd array; an HDF5 dataset's handle refuses calls that only arrays have.
    pub(super) fn array(&self) -> crate::Result<&NdArray> {
        match self {
            Held::B2nd(a) => Ok(a),
            #[cfg(feature = "hdf5")]
            Held::Hdf5(d) => Err(read_only(d)),
        }
    }

    pub(super) fn array_mut(&mut self) -> crate::Result<&mut NdArray> {
        match self {
            Held::B2nd(a) => Ok(a),
            #[cfg(feature = "hdf5")]
            Held::Hdf5(d) => Err(read_only(d)),
        }
    }

    fn shape(&self) -> &[usize] {
        match self {
            Held::B2nd(a) => a.shape(),
            #[cfg(feature = "hdf5")]
            Held::Hdf5(d) => d.shape(),
        }
    }

    fn typesize(&self) -> usize {
        match self {
            Held::B2nd(a) => a.typesize(),
            #[cfg(feature = "hdf5")]
            Held::Hdf5(d) => d.typesize(),
        }
    }
}

#[cfg(feature = "hdf5")]
fn read_only(d: &crate::hdf5::H5Dataset) -> Error {
    let what = "an HDF5 dataset's handle reads slices only (export it to change it)";
    Error::in_file(d.path().display().to_string(), Error::Unsupported { what })
}

/// The first `ndim` entries of a C array argument, checked against 0..=16.
fn dims<T: Copy>(ndim: i32, all: &[T; 16]) -> crate::Result<&[T]> {
    Ok(&all[..ndim_arg(ndim)?])
}

/// `values` (a shape or partition of the C API, `what` in messages) as the Rust API's sizes.
pub(super) fn sizes<T: Copy + Into<i64>>(
    what: &'static str,
    values: &[T],
) -> crate::Result<Vec<usize>> {
    values
        .iter()
        .map(|&v| {
            let v: i64 = v.into();
            usize::try_from(v).map_err(|_| Error::range(what, v, Expected::AtLeast(0)))
        })
        .collect()
}

/// A dimension count argument with its arrays' length.
pub(super) fn ndim_arg(ndim: i32) -> crate::Result<usize> {
    usize::try_from(ndim)
        .ok()
        .filter(|&n| n <= MAX_DIM)
        .ok_or_else(|| Error::range("ndim", ndim, Expected::range(0, MAX_DIM)))
}

impl strata_ndarray_params {
    fn defaults() -> Self {
        let cparams = strata_cparams::from(&crate::chunk::CParams::default());
        strata_ndarray_params {
            size: std::mem::size_of::<Self>(),
            ndim: 0,
            shape: [0; 16],
            chunkshape: [0; 16],
            blockshape: [0; 16],
            cparams,
            dparams: strata_dparams {
                size: std::mem::size_of::<strata_dparams>(),
                nthreads: 0,
            },
        }
    }

    /// The library's parameters, with `dtype` (NULL-able) and `storage`.
    ///
    /// # Safety
    /// `dtype` NULL or NUL-terminated.
    unsafe fn array_params(
        &self,
        dtype: *const c_char,
        storage: &super::params::Storage,
    ) -> FfiResult<ArrayParams> {
        super::params::check_size(
            "strata_ndarray_params.size (fill it with strata_ndarray_params_default)",
            self.size,
            std::mem::size_of::<Self>(),
        )?;
        let shape = sizes("shape", dims(self.ndim, &self.shape)?)?;
        let chunkshape = sizes("chunkshape", dims(self.ndim, &self.chunkshape)?)?;
        let blockshape = sizes("blockshape", dims(self.ndim, &self.blockshape)?)?;
        let mut cparams = self.cparams.to_cparams()?;
        let dtype = if dtype.is_null() {
            None
        } else {
            // SAFETY: non-NULL and NUL-terminated, by the caller's guarantee.
            let d = unsafe { str_in(dtype, "dtype") }?;
            cparams.typesize = itemsize(d)?;
            Some(d)
        };
        // SAFETY: a reference is a valid pointer.
        let dparams = unsafe { strata_dparams::read_or_default(&self.dparams) }?;
        let mut p = ArrayParams::new(&shape, cparams.typesize)
            .with_cparams(&cparams)
            .with_dparams(&dparams)
            .with_overwrite(storage.overwrite)
            .with_sync(storage.sync);
        if chunkshape.iter().any(|&c| c != 0) {
            p = p.with_chunkshape(&chunkshape);
        }
        if blockshape.iter().any(|&b| b != 0) {
            p = p.with_blockshape(&blockshape);
        }
        if let Some(d) = dtype {
            p = p.with_dtype(d);
        }
        Ok(p)
    }
}

/// Writes the default N-d parameters (no dimensions yet, derived partitions, C-Blosc2's
/// default cparams and dparams with their sizes set) into `*out`. Returns 0 or
/// `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `out` NULL or writable for one `strata_ndarray_params`.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_params_default(out: *mut strata_ndarray_params) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointer.
        let out = unsafe { arg_mut(out, "out") }?;
        *out = strata_ndarray_params::defaults();
        Ok(())
    })
}

/// The four ways to fill a new array.
pub(super) enum Fill<'a> {
    Uninit,
    Zeros,
    Full(&'a [u8]),
    Buffer(&'a [u8]),
}

/// Creates an array filled as `fill` and hands out its handle.
///
/// # Safety
/// As the public creators.
unsafe fn create(
    urlpath: *const c_char,
    storage: *const strata_storage,
    params: *const strata_ndarray_params,
    dtype: *const c_char,
    fill: impl FnOnce() -> FfiResult<Fill<'static>>,
    out: *mut *mut strata_ndarray,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { create_with(urlpath, storage, params, dtype, fill, Ok, out) }
}

/// As [`create`], the parameters changed by `more` first (inside the call, so its errors
/// are reported).
///
/// # Safety
/// As the public creators.
pub(super) unsafe fn create_with(
    urlpath: *const c_char,
    storage: *const strata_storage,
    params: *const strata_ndarray_params,
    dtype: *const c_char,
    fill: impl FnOnce() -> FfiResult<Fill<'static>>,
    more: impl FnOnce(ArrayParams) -> FfiResult<ArrayParams>,
    out: *mut *mut strata_ndarray,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (out, params, storage) = unsafe {
            (
                arg_mut(out, "out")?,
                arg_ref(params, "params")?,
                strata_storage::read_or_default(storage)?,
            )
        };
        // SAFETY: forwarded from the caller.
        let p = more(unsafe { params.array_params(dtype, &storage) }?)?;
        // SAFETY: forwarded from the caller.
        let loc: Location = unsafe { location(urlpath, storage.sparse) }?;
        let arr = match fill()? {
            Fill::Uninit => NdArray::uninit(&p, &loc)?,
            Fill::Zeros => NdArray::zeros(&p, &loc)?,
            Fill::Full(v) => NdArray::full(&p, &loc, v)?,
            Fill::Buffer(b) => NdArray::from_buffer(&p, &loc, b)?,
        };
        strata_ndarray::hand_out(out, Held::B2nd(arr));
        Ok(())
    })
}

/// Creates an array whose contents are undefined (read as zeros; no chunk data stored) and
/// writes its handle to `*out`.
///
/// `urlpath` NULL keeps it in memory; otherwise a `.b2nd` file, or with `storage->sparse` a
/// sparse frame directory. `storage` NULL = defaults (no overwrite, `STRATA_SYNC_ON_CLOSE`;
/// its `chunksize` is ignored). `dtype` is a NumPy dtype string (`"<f4"`, `"<i8"`, `"|S10"`,
/// structured dtypes as python-blosc2 writes them); its item size is the typesize
/// (`params->cparams.typesize` is then ignored); NULL = `"|S<typesize>"`.
///
/// Returns 0, or `STRATA_ERROR_INVALID_PARAM` (bad shapes, dtype or parameters),
/// `STRATA_ERROR_MAX_BUFSIZE_EXCEEDED` (a chunk over 2 GiB), `STRATA_ERROR_FILE_OPEN` (path
/// exists without overwrite, or cannot be created).
///
/// # Safety
/// `urlpath` and `dtype` NULL or NUL-terminated; `storage` NULL or valid; `params` valid;
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_uninit(
    urlpath: *const c_char,
    storage: *const strata_storage,
    params: *const strata_ndarray_params,
    dtype: *const c_char,
    out: *mut *mut strata_ndarray,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { create(urlpath, storage, params, dtype, || Ok(Fill::Uninit), out) }
}

/// Creates an array of zeros (special zero chunks: no data stored); as
/// `strata_ndarray_uninit`.
///
/// # Safety
/// As `strata_ndarray_uninit`.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_zeros(
    urlpath: *const c_char,
    storage: *const strata_storage,
    params: *const strata_ndarray_params,
    dtype: *const c_char,
    out: *mut *mut strata_ndarray,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { create(urlpath, storage, params, dtype, || Ok(Fill::Zeros), out) }
}

/// Creates an array with every item equal to `value` (`valuelen` bytes, the typesize);
/// otherwise as `strata_ndarray_uninit` (`STRATA_ERROR_INVALID_PARAM` for another length).
///
/// # Safety
/// As `strata_ndarray_uninit`; `value` readable for `valuelen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_full(
    urlpath: *const c_char,
    storage: *const strata_storage,
    params: *const strata_ndarray_params,
    dtype: *const c_char,
    value: *const u8,
    valuelen: usize,
    out: *mut *mut strata_ndarray,
) -> i32 {
    let fill = || {
        // SAFETY: the caller guarantees `valuelen` readable bytes; they outlive the call.
        let v = unsafe { slice_in(value, valuelen, "value") }?;
        Ok(Fill::Full(v))
    };
    // SAFETY: forwarded from the caller.
    unsafe { create(urlpath, storage, params, dtype, fill, out) }
}

/// Creates an array holding `src`, a C-order buffer of `prod(shape)` items (`srclen` bytes,
/// at least `prod(shape) * typesize`); chunks are compressed in parallel. Otherwise as
/// `strata_ndarray_uninit` (`STRATA_ERROR_INVALID_PARAM` for a short buffer).
///
/// # Safety
/// As `strata_ndarray_uninit`; `src` readable for `srclen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_from_buffer(
    urlpath: *const c_char,
    storage: *const strata_storage,
    params: *const strata_ndarray_params,
    dtype: *const c_char,
    src: *const u8,
    srclen: usize,
    out: *mut *mut strata_ndarray,
) -> i32 {
    let fill = || {
        // SAFETY: the caller guarantees `srclen` readable bytes; they outlive the call.
        let b = unsafe { slice_in(src, srclen, "src") }?;
        Ok(Fill::Buffer(b))
    };
    // SAFETY: forwarded from the caller.
    unsafe { create(urlpath, storage, params, dtype, fill, out) }
}

/// Opens the `.b2nd` file or sparse directory at `urlpath` (`mode` `STRATA_OPEN_READ` or
/// `STRATA_OPEN_READWRITE`; `sync` a `STRATA_SYNC_*` value) and writes its handle to `*out`.
/// An `http://` or `https://` URL opens a remote array, read-only, read lazily over HTTP
/// byte ranges (`STRATA_HTTP_CONNECT_TIMEOUT`, `STRATA_HTTP_READ_TIMEOUT`,
/// `STRATA_HTTP_RETRIES` from the environment).
/// Returns 0, or `STRATA_ERROR_FILE_OPEN`, `STRATA_ERROR_INVALID_HEADER` (not a frame),
/// `STRATA_ERROR_METALAYER_NOT_FOUND` (a frame without a `b2nd` metalayer),
/// `STRATA_ERROR_INVALID_PARAM` (also: a URL with a write mode), `STRATA_ERROR_REMOTE` (the
/// server refused, could not be reached, or the file changed; the message names the URL and
/// the status).
///
/// # Safety
/// `urlpath` NULL or NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_open(
    urlpath: *const c_char,
    mode: u8,
    sync: u8,
    out: *mut *mut strata_ndarray,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (out, path) = unsafe { (arg_mut(out, "out")?, str_in(urlpath, "urlpath")?) };
        let opts = OpenOptions::new(open_mode(mode)?).with_sync(sync_policy(sync)?);
        let inner = NdArray::open_with(path, &opts)?;
        strata_ndarray::hand_out(out, Held::B2nd(inner));
        Ok(())
    })
}

/// Makes an in-memory array from a copy of the contiguous frame at `src` (`srclen` bytes:
/// a `.b2nd` file's bytes) and writes its handle to `*out`. Returns 0, or the errors of
/// `strata_ndarray_open`.
///
/// # Safety
/// `src` readable for `srclen` bytes; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_from_cframe(
    src: *const u8,
    srclen: usize,
    out: *mut *mut strata_ndarray,
) -> i32 {
    let make = |bytes| Ok(Held::B2nd(NdArray::from_cframe(bytes)?));
    // SAFETY: forwarded from the caller.
    unsafe { handle::from_bytes(src, srclen, out, make) }
}

/// Copies the array as one contiguous frame (the bytes of a `.b2nd` file) into `dst`
/// (`dstlen` bytes; `NULL, 0` asks for the size). Returns the frame's length in bytes, or
/// `STRATA_ERROR_WRITE_BUFFER`.
///
/// # Safety
/// `array` NULL or a live handle; `dst` NULL or writable for `dstlen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_to_cframe(
    array: *const strata_ndarray,
    dst: *mut u8,
    dstlen: usize,
) -> i64 {
    let frame = |held: &Held| held.array()?.to_cframe();
    // SAFETY: forwarded from the caller.
    unsafe { handle::bytes_out(array, dst, dstlen, frame) }
}

/// Saves the array as a contiguous `.b2nd` file at `urlpath`, replacing any file there
/// (chunks copied as stored). Returns 0, or `STRATA_ERROR_FILE_OPEN` /
/// `STRATA_ERROR_FILE_WRITE`.
///
/// # Safety
/// `array` NULL or a live handle; `urlpath` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_save(
    array: *const strata_ndarray,
    urlpath: *const c_char,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (a, path) = unsafe { (strata_ndarray::get(array)?, str_in(urlpath, "urlpath")?) };
        Ok(a.array()?.save(path)?)
    })
}

/// Flushes and frees the handle (freed even when the flush fails); NULL does nothing.
/// Returns 0, or `STRATA_ERROR_FILE_WRITE`.
///
/// # Safety
/// `array` NULL or a live handle, not used again after the call.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_close(array: *mut strata_ndarray) -> i32 {
    let close = |held| match held {
        Held::B2nd(a) => NdArray::close(a),
        #[cfg(feature = "hdf5")]
        Held::Hdf5(_) => Ok(()),
    };
    // SAFETY: forwarded from the caller.
    unsafe { handle::close(array, close) }
}

/// Frees the handle, flushing as `strata_ndarray_close` does but ignoring a failure; NULL
/// does nothing.
///
/// # Safety
/// `array` NULL or a live handle, not used again after the call.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_free(array: *mut strata_ndarray) {
    // SAFETY: forwarded from the caller.
    unsafe { handle::free(array) }
}

/// Writes the array's dimensions, shapes, item size and sizes into `*out`. Returns 0 or
/// `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `array` NULL or a live handle; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_get_info(
    array: *const strata_ndarray,
    out: *mut strata_ndarray_info,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (a, out) = unsafe { (strata_ndarray::get(array)?, arg_mut(out, "out")?) };
        let (shape, chunkshape, blockshape, cbytes): (Vec<i64>, Vec<i32>, Vec<i32>, u64) = match a {
            Held::B2nd(arr) => {
                let m = arr.meta();
                (
                    m.shape.clone(),
                    m.chunkshape.clone(),
                    m.blockshape.clone(),
                    arr.cbytes(),
                )
            }
            #[cfg(feature = "hdf5")]
            Held::Hdf5(d) => {
                let to_i32 = |v: &[usize]| {
                    v.iter()
                        .map(|&x| i32::try_from(x).unwrap_or(i32::MAX))
                        .collect()
                };
                let chunks = d.chunkshape().unwrap_or(d.shape());
                (
                    d.shape().iter().map(|&x| count(x)).collect(),
                    to_i32(chunks),
                    to_i32(d.blockshape().unwrap_or(chunks)),
                    d.storage_size(),
                )
            }
        };
        let ndim = shape.len().min(MAX_DIM);
        let nbytes = shape
            .iter()
            .fold(a.typesize() as u64, |n, &d| n.saturating_mul(d as u64));
        let mut info = strata_ndarray_info {
            ndim: i32::try_from(ndim).unwrap_or(i32::MAX),
            typesize: i32::try_from(a.typesize()).unwrap_or(i32::MAX),
            shape: [0; 16],
            chunkshape: [0; 16],
            blockshape: [0; 16],
            nbytes: count(nbytes),
            cbytes: count(cbytes),
        };
        info.shape[..ndim].copy_from_slice(&shape[..ndim]);
        info.chunkshape[..ndim].copy_from_slice(&chunkshape[..ndim]);
        info.blockshape[..ndim].copy_from_slice(&blockshape[..ndim]);
        *out = info;
        Ok(())
    })
}

/// Copies the array's NumPy dtype string NUL-terminated into `buf` (`len` bytes, at least
/// its length + 1; `NULL, 0` asks for the length). Returns the length without the NUL, or
/// `STRATA_ERROR_WRITE_BUFFER`; an array without a dtype (an old caterva array) gives
/// `"|S<typesize>"`.
///
/// # Safety
/// `array` NULL or a live handle; `buf` NULL or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_dtype(
    array: *const strata_ndarray,
    buf: *mut c_char,
    len: usize,
) -> i64 {
    call(|| {
        // SAFETY: the caller guarantees the handle.
        let a = unsafe { strata_ndarray::get(array) }?;
        let dtype = match a {
            Held::B2nd(arr) => arr
                .dtype()
                .map_or_else(|| format!("|S{}", arr.typesize()), str::to_string),
            #[cfg(feature = "hdf5")]
            Held::Hdf5(d) => d.dtype().to_string(),
        };
        // SAFETY: forwarded from the caller.
        unsafe { name_out(&dtype, buf, len) }
    })
}

/// Sets the threads this handle compresses (writes) and decompresses (reads) with; 0 = the
/// runtime's default. Returns 0 or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `array` NULL or a live handle, not used by another thread during the call.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_set_nthreads(
    array: *mut strata_ndarray,
    compress_nthreads: u32,
    decompress_nthreads: u32,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the handle.
        let a = unsafe { strata_ndarray::get_mut(array) }?;
        match a {
            Held::B2nd(arr) => {
                arr.set_nthreads(compress_nthreads as usize, decompress_nthreads as usize);
            }
            #[cfg(feature = "hdf5")]
            Held::Hdf5(d) => d.set_nthreads(decompress_nthreads as usize),
        }
        Ok(())
    })
}

/// Makes the array read its blocks through `cache` (shared with every array given it; the
/// handle keeps its own reference, so the cache may be freed before the array), or through
/// none (`cache` NULL). Blocks are kept under the array's version: its file's identity when
/// opened and its frame's state, so arrays of one file share them and a changed file opened
/// again never gets old ones; an HDF5 dataset's under a version of its handle alone. Returns 0
/// or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `array` NULL or a live handle, not used by another thread during the call; `cache` NULL
/// or a live cache handle.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_set_cache(
    array: *mut strata_ndarray,
    cache: *const strata_cache,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the handles.
        let a = unsafe { strata_ndarray::get_mut(array) }?;
        // SAFETY: as above; NULL detaches.
        let c = unsafe { strata_cache::get_opt(cache) }.map(std::sync::Arc::clone);
        match a {
            Held::B2nd(arr) => arr.set_cache(c),
            #[cfg(feature = "hdf5")]
            Held::Hdf5(d) => d.set_cache(c),
        }
        Ok(())
    })
}

/// The selection `start:stop:step` per dimension (`ndim` of them, the rest whole).
///
/// # Safety
/// `start`, `stop` readable for `ndim` values; `step` NULL or readable for `ndim`.
unsafe fn slices(
    ndim: i32,
    start: *const i64,
    stop: *const i64,
    step: *const i64,
) -> FfiResult<Vec<Slice>> {
    let n = ndim_arg(ndim)?;
    // SAFETY: forwarded from the caller.
    let (start, stop) = unsafe { (slice_in(start, n, "start")?, slice_in(stop, n, "stop")?) };
    let step = if step.is_null() {
        vec![1; n]
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { slice_in(step, n, "step") }?.to_vec()
    };
    Ok((0..n)
        .map(|d| Slice::new(Some(start[d]), Some(stop[d]), step[d]))
        .collect())
}

/// Copies the selection `start[d]:stop[d]:step[d]` (per dimension d < `ndim`, as Python's
/// slices: negative indices count from the end, bounds are clipped, a negative step walks
/// backwards; `step` NULL = all 1; dimensions from `ndim` on are taken whole) into `dst` as
/// a C-order array of the selection's shape, decompressing only the blocks it touches.
/// `NULL, 0` asks for the size. Returns the bytes written (`prod(selection shape) *
/// typesize`), or `STRATA_ERROR_INVALID_PARAM` (more dimensions than the array, a step of
/// 0), `STRATA_ERROR_WRITE_BUFFER`, errors of reading and decompressing.
///
/// An integer index `i` of a dimension is `start = i, stop = i + 1` there: `dst` is a flat
/// C-order buffer, so the bytes are those of the selection with that dimension dropped and
/// there is nothing to squeeze. For a negative `i` (from the end) give `stop` as the
/// dimension's length when `i = -1` (`-1:0` is empty, as in Python).
///
/// # Safety
/// `array` NULL or a live handle; `start`, `stop` (and `step` unless NULL) readable for
/// `ndim` values; `dst` NULL or writable for `dstlen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_get_slice(
    array: *const strata_ndarray,
    ndim: i32,
    start: *const i64,
    stop: *const i64,
    step: *const i64,
    dst: *mut u8,
    dstlen: usize,
) -> i64 {
    call(|| {
        // SAFETY: the caller guarantees the pointers.
        let (a, sl) = unsafe {
            (
                strata_ndarray::get(array)?,
                slices(ndim, start, stop, step)?,
            )
        };
        let sel = Selection::new(a.shape(), &sl)?;
        let need = sel
            .nitems()
            .and_then(|n| n.checked_mul(a.typesize()))
            .ok_or(Error::Overflow {
                what: "the selection's size in bytes",
            })?;
        // SAFETY: the caller guarantees `dstlen` writable bytes.
        if let Some(out) = unsafe { out_buffer(dst, dstlen, need) }? {
            match a {
                Held::B2nd(arr) => arr.get_slice(&sl, out)?,
                #[cfg(feature = "hdf5")]
                Held::Hdf5(d) => d.get_slice(&sl, out)?,
            };
        }
        Ok(count(need))
    })
}

/// Writes `src`, a C-order array of the selection's shape (`srclen` bytes, at least its
/// size), into the selection `start:stop:step` (as `strata_ndarray_get_slice`). Returns 0, or
/// `STRATA_ERROR_INVALID_PARAM` (a short source), `STRATA_ERROR_FILE_WRITE` (read-only),
/// errors of compressing and writing.
///
/// # Safety
/// `array` NULL or a live handle not used elsewhere during the call; `start`, `stop` (and
/// `step` unless NULL) readable for `ndim` values; `src` readable for `srclen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_set_slice(
    array: *mut strata_ndarray,
    ndim: i32,
    start: *const i64,
    stop: *const i64,
    step: *const i64,
    src: *const u8,
    srclen: usize,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (a, sl, src) = unsafe {
            (
                strata_ndarray::get_mut(array)?,
                slices(ndim, start, stop, step)?,
                slice_in(src, srclen, "src")?,
            )
        };
        a.array_mut()?.set_slice(&sl, src)?;
        Ok(())
    })
}

/// Changes the shape to `new_shape` (`ndim` values, the array's number of dimensions), at the
/// end of each dimension: items gained read as zeros. Returns 0, or
/// `STRATA_ERROR_INVALID_PARAM`, `STRATA_ERROR_FILE_WRITE`.
///
/// # Safety
/// `array` NULL or a live handle not used elsewhere during the call; `new_shape` readable for
/// `ndim` values.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_resize(
    array: *mut strata_ndarray,
    ndim: i32,
    new_shape: *const i64,
) -> i32 {
    call_status(|| {
        let n = ndim_arg(ndim)?;
        // SAFETY: the caller guarantees the pointers.
        let (a, shape) = unsafe {
            (
                strata_ndarray::get_mut(array)?,
                slice_in(new_shape, n, "new_shape")?,
            )
        };
        a.array_mut()?.resize(&sizes("new_shape", shape)?)?;
        Ok(())
    })
}
