//! C functions for changes along the axes of an N-d array (`strata_ndarray`): append,
//! insert and delete along one axis, resize with a start position, and new arrays that
//! concatenate or stack others. Each checks its arguments (axis, positions, data length,
//! a read-only handle) before it writes anything.
//!
//! Format: C-Blosc2 `blosc/b2nd.c` (`b2nd_append`, `b2nd_insert`, `b2nd_delete`,
//! `b2nd_resize`, `b2nd_concatenate`); python-blosc2's `blosc2.concat` and `blosc2.stack`.

#![allow(unsafe_code)]

use super::handle::Handle;
use super::ndarray::{ndim_arg, sizes, strata_ndarray, Held};
use super::params::strata_storage;
use super::schunk::{index, location};
use super::{arg_mut, call, call_status, count, slice_in, FfiResult};
use crate::error::{Error, Expected};
use crate::ndarray::NdArray;
use std::ffi::c_char;

/// An axis argument: negative is out of range.
fn axis_arg(axis: i32) -> crate::Result<usize> {
    usize::try_from(axis).map_err(|_| Error::range("axis", axis, Expected::AtLeast(0)))
}

/// The array behind a `*mut` handle, to change.
///
/// # Safety
/// `array` NULL or a live handle not used elsewhere during the call.
unsafe fn array_mut<'a>(array: *mut strata_ndarray) -> FfiResult<&'a mut NdArray> {
    // SAFETY: forwarded from the caller.
    Ok(unsafe { strata_ndarray::get_mut(array) }?.array_mut()?)
}

/// Appends `src` (`srclen` bytes: whole slabs, i.e. `k` times the items of every other
/// dimension, C order) along `axis`: the array grows by `k` items there. Only the chunks
/// holding the new items are written (a model writing one time step per call costs one
/// step, not a rewrite of the file). Returns the new length along `axis`, or
/// `STRATA_ERROR_INVALID_PARAM` (an axis past the last one, `srclen` not whole slabs),
/// `STRATA_ERROR_FILE_WRITE` (a read-only handle) — both before anything is written —
/// errors of compressing and writing.
///
/// # Safety
/// `array` NULL or a live handle not used elsewhere during the call; `src` readable for
/// `srclen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_append(
    array: *mut strata_ndarray,
    axis: i32,
    src: *const u8,
    srclen: usize,
) -> i64 {
    call(|| {
        // SAFETY: the caller guarantees the pointers.
        let (a, src) = unsafe { (array_mut(array)?, slice_in(src, srclen, "src")?) };
        Ok(count(a.append(axis_arg(axis)?, src)?))
    })
}

/// Inserts `src` (whole slabs, as `strata_ndarray_append`) along `axis` before item
/// `position`. At the end (`position` = the length along `axis`) this appends; elsewhere
/// `position` and the number of items inserted must be multiples of the chunkshape along
/// `axis` (whole chunks move). Returns the new length along `axis`, or the errors of
/// `strata_ndarray_append` (`STRATA_ERROR_INVALID_PARAM` also for a position past the end or
/// not whole chunks).
///
/// # Safety
/// As `strata_ndarray_append`.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_insert(
    array: *mut strata_ndarray,
    axis: i32,
    position: i64,
    src: *const u8,
    srclen: usize,
) -> i64 {
    call(|| {
        // SAFETY: the caller guarantees the pointers.
        let (a, src) = unsafe { (array_mut(array)?, slice_in(src, srclen, "src")?) };
        let at = usize::try_from(position)
            .map_err(|_| Error::range("insert position", position, Expected::AtLeast(0)))?;
        Ok(count(a.insert(axis_arg(axis)?, at, src)?))
    })
}

/// Deletes `len` items along `axis` from item `start`. At the end any range goes; elsewhere
/// `start` and `len` must be multiples of the chunkshape along `axis` (whole chunks go, the
/// ones after them move). Returns the new length along `axis`, or
/// `STRATA_ERROR_INVALID_PARAM` (an axis past the last one, a range past the end or not whole
/// chunks), `STRATA_ERROR_INVALID_INDEX` (a negative start or length),
/// `STRATA_ERROR_FILE_WRITE` (a read-only handle) — all before anything is written.
///
/// # Safety
/// `array` NULL or a live handle not used elsewhere during the call.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_delete(
    array: *mut strata_ndarray,
    axis: i32,
    start: i64,
    len: i64,
) -> i64 {
    call(|| {
        // SAFETY: the caller guarantees the pointer.
        let a = unsafe { array_mut(array) }?;
        let (start, len) = (index(start, "delete start")?, index(len, "delete length")?);
        Ok(count(a.delete(axis_arg(axis)?, start, len)?))
    })
}

/// Changes the shape to `new_shape` (`ndim` values, the array's number of dimensions) with
/// the change placed at `start` (`ndim` positions; NULL = at the end of each dimension, as
/// `strata_ndarray_resize`): where a dimension grows, zeros come in at `start` and the items
/// after it move up; where it shrinks, the items from `start` go. Away from a dimension's
/// end, `start` and the change must be multiples of the chunkshape. Returns 0, or
/// `STRATA_ERROR_INVALID_PARAM`, `STRATA_ERROR_FILE_WRITE` (a read-only handle) — before
/// anything is written — errors of writing.
///
/// # Safety
/// `array` NULL or a live handle not used elsewhere during the call; `new_shape` (and
/// `start` unless NULL) readable for `ndim` values.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_resize_at(
    array: *mut strata_ndarray,
    ndim: i32,
    new_shape: *const i64,
    start: *const i64,
) -> i32 {
    call_status(|| {
        let n = ndim_arg(ndim)?;
        // SAFETY: the caller guarantees the pointers.
        let (a, shape) = unsafe { (array_mut(array)?, slice_in(new_shape, n, "new_shape")?) };
        let shape = sizes("new_shape", shape)?;
        let start = if start.is_null() {
            None
        } else {
            // SAFETY: the caller guarantees `ndim` readable values.
            Some(sizes("start", unsafe { slice_in(start, n, "start") }?)?)
        };
        a.resize_at(&shape, start.as_deref())?;
        Ok(())
    })
}

/// Makes a new array joining `narrays` arrays (concatenated along `axis`, or stacked along
/// a new dimension `axis` when `stack`) at `urlpath`/`storage` (as `strata_ndarray_uninit`)
/// and writes its handle to `*out`.
///
/// # Safety
/// As `strata_ndarray_concatenate`.
unsafe fn join(
    arrays: *const *const strata_ndarray,
    narrays: usize,
    axis: i32,
    stack: bool,
    urlpath: *const c_char,
    storage: *const strata_storage,
    out: *mut *mut strata_ndarray,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (out, handles, storage) = unsafe {
            (
                arg_mut(out, "out")?,
                slice_in(arrays, narrays, "arrays")?,
                strata_storage::read_or_default(storage)?,
            )
        };
        let parts = handles
            .iter()
            // SAFETY: each entry NULL or a live handle, by the caller's guarantee.
            .map(|&h| unsafe { strata_ndarray::get(h) }.and_then(|a| Ok(a.array()?)))
            .collect::<FfiResult<Vec<&NdArray>>>()?;
        // SAFETY: forwarded from the caller.
        let loc = unsafe { location(urlpath, storage.sparse) }?;
        let joined = NdArray::join(
            &parts,
            axis_arg(axis)?,
            stack,
            &loc,
            (storage.overwrite, storage.sync),
        )?;
        strata_ndarray::hand_out(out, Held::B2nd(joined));
        Ok(())
    })
}

/// Makes a new array holding the `narrays` arrays one after the other along `axis` (same
/// number of dimensions, typesize, dtype, and shape except along `axis`), as
/// python-blosc2's `blosc2.concat`, and writes its handle to `*out`. It has the first
/// array's partitions, dtype and compression; a chunk that lies inside one array, on that
/// array's chunk grid with the same partitions, is copied as stored. `urlpath` and
/// `storage` say where it goes, as for `strata_ndarray_uninit`. Returns 0, or
/// `STRATA_ERROR_INVALID_PARAM` (no arrays, an axis past the last one, arrays that do not
/// agree), `STRATA_ERROR_NULL_POINTER` (a NULL entry), `STRATA_ERROR_FILE_OPEN`, errors of
/// reading and compressing.
///
/// # Safety
/// `arrays` readable for `narrays` pointers, each NULL or a live handle; `urlpath` NULL or
/// NUL-terminated; `storage` NULL or valid; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_concatenate(
    arrays: *const *const strata_ndarray,
    narrays: usize,
    axis: i32,
    urlpath: *const c_char,
    storage: *const strata_storage,
    out: *mut *mut strata_ndarray,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { join(arrays, narrays, axis, false, urlpath, storage, out) }
}

/// Makes a new array stacking the `narrays` arrays (all of one shape, typesize and dtype)
/// along a new dimension `axis` (0 to their number of dimensions), as python-blosc2's
/// `blosc2.stack`: each array is one item along it, with chunk and block length 1 there.
/// Otherwise as `strata_ndarray_concatenate`.
///
/// # Safety
/// As `strata_ndarray_concatenate`.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_stack(
    arrays: *const *const strata_ndarray,
    narrays: usize,
    axis: i32,
    urlpath: *const c_char,
    storage: *const strata_storage,
    out: *mut *mut strata_ndarray,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { join(arrays, narrays, axis, true, urlpath, storage, out) }
}
