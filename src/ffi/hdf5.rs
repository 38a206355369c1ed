//! C functions for HDF5 files (`strata_ndarray_open_hdf5`, `strata_ndarray_export_hdf5`):
//! a dataset opened as an N-d array handle, read with the same slice calls as a b2nd array
//! (directly, chunk by chunk and block by block, where its chunks are Blosc2 frames; by HDF5
//! otherwise), and a b2nd array written as a dataset with HDF5's Blosc2 filter (32026).
//!
//! Both exist in every build; a library built without the `hdf5` feature returns
//! `STRATA_ERROR_INVALID_PARAM` saying so.
//!
//! Format: `docs/hdf5.md`.

#![allow(unsafe_code)]

use super::handle::Handle;
use super::ndarray::{strata_ndarray, Held};
use super::{arg_mut, call_status, str_in};
use std::ffi::c_char;

/// Opens dataset `dataset` (`/group/name`) of the HDF5 file `path` for reading and writes its
/// handle to `*out`: `strata_ndarray_get_slice`, `_get_info`, `_dtype`, `_set_nthreads` and
/// `_close`/`_free` work on it; calls that change an array, `_to_cframe` and `_save` return
/// `STRATA_ERROR_INVALID_PARAM`. Returns 0, or `STRATA_ERROR_FILE_OPEN` (the file or the
/// dataset cannot be opened), `STRATA_ERROR_INVALID_PARAM` (items of no fixed size; a build
/// without HDF5).
///
/// # Safety
/// `path`, `dataset` NULL or NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_open_hdf5(
    path: *const c_char,
    dataset: *const c_char,
    out: *mut *mut strata_ndarray,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (out, path, dataset) = unsafe {
            (
                arg_mut(out, "out")?,
                str_in(path, "path")?,
                str_in(dataset, "dataset")?,
            )
        };
        strata_ndarray::hand_out(out, open(path, dataset)?);
        Ok(())
    })
}

/// Writes the b2nd array `array` as dataset `dataset` of the HDF5 file `path` (made if
/// missing; its other datasets kept), with HDF5's Blosc2 filter: chunk dims its chunkshape,
/// each of its chunks stored as it is (ranks 1 to 8; above, decompressed and written again as
/// plain frames). h5py with hdf5plugin, PyTables, h5dump with Strata's plugin read it.
/// `overwrite` nonzero replaces an existing dataset. Returns 0, or `STRATA_ERROR_FILE_OPEN`
/// (an existing dataset, or the file cannot be written), `STRATA_ERROR_INVALID_PARAM` (a
/// dtype HDF5 cannot hold, an HDF5 handle, a build without HDF5).
///
/// # Safety
/// `array` NULL or a live handle; `path`, `dataset` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_export_hdf5(
    array: *const strata_ndarray,
    path: *const c_char,
    dataset: *const c_char,
    overwrite: i32,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (a, path, dataset) = unsafe {
            (
                strata_ndarray::get(array)?,
                str_in(path, "path")?,
                str_in(dataset, "dataset")?,
            )
        };
        export(a, path, dataset, overwrite != 0)
    })
}

#[cfg(feature = "hdf5")]
fn open(path: &str, dataset: &str) -> crate::Result<Held> {
    Ok(Held::Hdf5(crate::hdf5::H5Dataset::open(path, dataset)?))
}

#[cfg(feature = "hdf5")]
fn export(a: &Held, path: &str, dataset: &str, overwrite: bool) -> super::FfiResult<()> {
    let arr = a.array()?;
    crate::hdf5::export_array(arr, path, dataset, overwrite)?;
    Ok(())
}

#[cfg(not(feature = "hdf5"))]
fn unsupported() -> crate::Error {
    crate::Error::Unsupported {
        what: "this Strata was built without HDF5 (cargo feature hdf5)",
    }
}

#[cfg(not(feature = "hdf5"))]
fn open(_: &str, _: &str) -> crate::Result<Held> {
    Err(unsupported())
}

#[cfg(not(feature = "hdf5"))]
fn export(_: &Held, _: &str, _: &str, _: bool) -> super::FfiResult<()> {
    Err(unsupported().into())
}
