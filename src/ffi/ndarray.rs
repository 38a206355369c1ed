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

use super::params::{strata_cparams, strata_dparams, strata_storage, sync_policy};
use super::schunk::{location, open_mode};
use super::{
    arg_mut, arg_ref, call, call_status, copy_out, count, name_out, slice_in, slice_out, str_in,
    take_handle, FfiResult,
};
use crate::error::Error;
use crate::format::b2nd::MAX_DIM;
use crate::ndarray::dtype::itemsize;
use crate::ndarray::{ArrayParams, NdArray, Selection, Slice};
use crate::schunk::{Location, SChunk};
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

/// A b2nd N-d array in a frame (memory, `.b2nd` file or sparse directory). Opaque; made by
/// `strata_ndarray_uninit`, `_zeros`, `_full`, `_from_buffer`, `_open`, `_from_cframe`;
/// released by `strata_ndarray_close` or `strata_ndarray_free`.
#[allow(non_camel_case_types)] // the C name
pub struct strata_ndarray {
    inner: NdArray,
}

// One call at a time may change a handle; calls taking a `const` handle may overlap.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<NdArray>();
};

/// The first `ndim` entries of a C array argument, checked against 0..=16.
fn dims<T: Copy>(ndim: i32, all: &[T; 16]) -> crate::Result<&[T]> {
    let n = usize::try_from(ndim)
        .ok()
        .filter(|&n| n <= MAX_DIM)
        .ok_or_else(|| Error::InvalidParam(format!("ndim {ndim} is not 0 to {MAX_DIM}")))?;
    Ok(&all[..n])
}

/// A dimension count argument with its arrays' length.
fn ndim_arg(ndim: i32) -> crate::Result<usize> {
    usize::try_from(ndim)
        .ok()
        .filter(|&n| n <= MAX_DIM)
        .ok_or_else(|| Error::InvalidParam(format!("ndim {ndim} is not 0 to {MAX_DIM}")))
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
        let ours = std::mem::size_of::<Self>();
        if self.size < ours {
            return Err(Error::InvalidParam(format!(
                "strata_ndarray_params.size is {}, this library needs {ours} \
                 (fill it with strata_ndarray_params_default)",
                self.size
            ))
            .into());
        }
        let shape = dims(self.ndim, &self.shape)?;
        let chunkshape = dims(self.ndim, &self.chunkshape)?;
        let blockshape = dims(self.ndim, &self.blockshape)?;
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
        let mut p = ArrayParams::new(shape, cparams.typesize)
            .cparams(&cparams)
            .dparams(&dparams)
            .overwrite(storage.overwrite)
            .sync(storage.sync);
        if chunkshape.iter().any(|&c| c != 0) {
            p = p.chunkshape(chunkshape);
        }
        if blockshape.iter().any(|&b| b != 0) {
            p = p.blockshape(blockshape);
        }
        if let Some(d) = dtype {
            p = p.dtype(d);
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
enum Fill<'a> {
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
        let p = unsafe { params.array_params(dtype, &storage) }?;
        // SAFETY: forwarded from the caller.
        let loc: Location = unsafe { location(urlpath, storage.sparse) }?;
        let arr = match fill()? {
            Fill::Uninit => NdArray::uninit(&p, &loc)?,
            Fill::Zeros => NdArray::zeros(&p, &loc)?,
            Fill::Full(v) => NdArray::full(&p, &loc, v)?,
            Fill::Buffer(b) => NdArray::from_buffer(&p, &loc, b)?,
        };
        *out = Box::into_raw(Box::new(strata_ndarray { inner: arr }));
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
/// Returns 0, or `STRATA_ERROR_FILE_OPEN`, `STRATA_ERROR_INVALID_HEADER` (not a frame),
/// `STRATA_ERROR_METALAYER_NOT_FOUND` (a frame without a `b2nd` metalayer),
/// `STRATA_ERROR_INVALID_PARAM`.
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
        let schunk = SChunk::open_with(path, open_mode(mode)?, sync_policy(sync)?)?;
        let inner = NdArray::from_schunk(schunk)?;
        *out = Box::into_raw(Box::new(strata_ndarray { inner }));
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
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (out, src) = unsafe { (arg_mut(out, "out")?, slice_in(src, srclen, "src")?) };
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(src.len())
            .map_err(|_| Error::MemoryAlloc(src.len()))?;
        bytes.extend_from_slice(src);
        let inner = NdArray::from_cframe(bytes)?;
        *out = Box::into_raw(Box::new(strata_ndarray { inner }));
        Ok(())
    })
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
    call(|| {
        // SAFETY: the caller guarantees the handle.
        let a = unsafe { arg_ref(array, "array") }?;
        let frame = a.inner.to_cframe()?;
        // SAFETY: forwarded from the caller.
        unsafe { copy_out(&frame, dst, dstlen) }
    })
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
        let (a, path) = unsafe { (arg_ref(array, "array")?, str_in(urlpath, "urlpath")?) };
        Ok(a.inner.save(path)?)
    })
}

/// Flushes and frees the handle (freed even when the flush fails); NULL does nothing.
/// Returns 0, or `STRATA_ERROR_FILE_WRITE`.
///
/// # Safety
/// `array` NULL or a live handle, not used again after the call.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_close(array: *mut strata_ndarray) -> i32 {
    call_status(|| {
        // SAFETY: forwarded from the caller.
        match unsafe { take_handle(array) } {
            Some(a) => Ok(a.inner.close()?),
            None => Ok(()),
        }
    })
}

/// Frees the handle, flushing as `strata_ndarray_close` does but ignoring a failure; NULL
/// does nothing.
///
/// # Safety
/// `array` NULL or a live handle, not used again after the call.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_free(array: *mut strata_ndarray) {
    call(|| {
        // SAFETY: forwarded from the caller.
        drop(unsafe { take_handle(array) });
        Ok(0)
    });
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
        let (a, out) = unsafe { (arg_ref(array, "array")?, arg_mut(out, "out")?) };
        let m = a.inner.meta();
        let mut info = strata_ndarray_info {
            ndim: i32::try_from(m.ndim()).unwrap_or(i32::MAX),
            typesize: i32::try_from(a.inner.typesize()).unwrap_or(i32::MAX),
            shape: [0; 16],
            chunkshape: [0; 16],
            blockshape: [0; 16],
            nbytes: count(a.inner.nbytes()),
            cbytes: count(a.inner.cbytes()),
        };
        info.shape[..m.ndim()].copy_from_slice(&m.shape);
        info.chunkshape[..m.ndim()].copy_from_slice(&m.chunkshape);
        info.blockshape[..m.ndim()].copy_from_slice(&m.blockshape);
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
        let a = unsafe { arg_ref(array, "array") }?;
        let dtype = a
            .inner
            .dtype()
            .map_or_else(|| format!("|S{}", a.inner.typesize()), str::to_string);
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
        let a = unsafe { arg_mut(array, "array") }?;
        a.inner
            .set_nthreads(compress_nthreads as usize, decompress_nthreads as usize);
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
        let (a, sl) = unsafe { (arg_ref(array, "array")?, slices(ndim, start, stop, step)?) };
        let sel = Selection::new(a.inner.shape(), &sl)?;
        let need = sel
            .nitems()
            .and_then(|n| n.checked_mul(a.inner.typesize()))
            .ok_or_else(|| Error::InvalidParam("the selection's size overflows".into()))?;
        if dst.is_null() && dstlen == 0 {
            return Ok(count(need));
        }
        // SAFETY: the caller guarantees `dstlen` writable bytes.
        let out = unsafe { slice_out(dst, dstlen, "dst") }?;
        let room = out.len();
        let out = out.get_mut(..need).ok_or(Error::DestinationTooSmall {
            needed: need,
            available: room,
        })?;
        a.inner.get_slice(&sl, out)?;
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
                arg_mut(array, "array")?,
                slices(ndim, start, stop, step)?,
                slice_in(src, srclen, "src")?,
            )
        };
        a.inner.set_slice(&sl, src)?;
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
                arg_mut(array, "array")?,
                slice_in(new_shape, n, "new_shape")?,
            )
        };
        a.inner.resize(shape)?;
        Ok(())
    })
}
