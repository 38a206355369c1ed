//! NumPy arrays' memory borrowed as bytes, so that the library works on it in place with the
//! GIL released: a read decodes straight into its destination ([`Destination`]), a write
//! compresses straight from its data ([`Source`]), and no copy of the items is made.
//!
//! The stable ABI of CPython 3.9 has no buffer protocol (`PyObject_GetBuffer` joined the
//! limited API in 3.11), so an array's memory is found through NumPy's own description of it,
//! `__array_interface__["data"]` (address, read-only flag), after checking with NumPy's flags
//! that the object is exactly a `numpy.ndarray` (a subclass or any other object could
//! describe memory it does not have) and C-contiguous, and, for a destination, writeable.
//! `docs/python.md` says why this is sound.

use crate::exception;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use strata::error::code::INVALID_PARAM;

/// What a borrowed array is for: its role in the error messages, and whether it is written.
#[derive(Clone, Copy)]
enum Role {
    Destination,
    Source,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Destination => "destination",
            Role::Source => "data",
        }
    }
}

/// The `ParamError` for an array that cannot be used as it is.
fn refused(py: Python<'_>, message: String) -> PyErr {
    exception(py, "ParamError", message, INVALID_PARAM)
}

/// The address and length in bytes of the memory of `arr`, checked to be exactly a
/// `numpy.ndarray`, C-contiguous and, for a destination, writeable; the address is 0 for an
/// empty array.
///
/// # Errors
/// `TypeError` when `arr` is not exactly a `numpy.ndarray`; `ParamError` (code
/// `INVALID_PARAM`) when it is not C-contiguous, or is read-only and a destination.
fn memory(arr: &Bound<'_, PyAny>, role: Role) -> PyResult<(usize, usize)> {
    let py = arr.py();
    let what = role.name();
    let ndarray = py.import("numpy")?.getattr("ndarray")?;
    if !arr.get_type().is(&ndarray) {
        let name = arr.get_type().name()?;
        return Err(PyTypeError::new_err(format!(
            "the {what} must be a numpy.ndarray, not {name}"
        )));
    }
    let flags = arr.getattr("flags")?;
    let writes = matches!(role, Role::Destination);
    if writes && !flags.getattr("writeable")?.extract::<bool>()? {
        return Err(refused(py, format!("the {what} array is read-only")));
    }
    if !flags.getattr("c_contiguous")?.extract::<bool>()? {
        return Err(refused(py, format!("the {what} array is not C-contiguous")));
    }
    let len: usize = arr.getattr("nbytes")?.extract()?;
    let (addr, readonly): (usize, bool) = arr
        .getattr("__array_interface__")?
        .get_item("data")?
        .extract()?;
    if writes && readonly {
        return Err(refused(py, format!("the {what} array is read-only")));
    }
    if len == 0 {
        return Ok((0, 0));
    }
    if addr == 0 {
        return Err(refused(py, format!("the {what} array has no memory")));
    }
    Ok((addr, len))
}

/// The bytes of a writeable, C-contiguous `numpy.ndarray`, borrowed for as long as the
/// reference to the array they come from.
pub(crate) struct Destination<'a> {
    bytes: &'a mut [u8],
}

impl<'a> Destination<'a> {
    /// The memory of `out`, which must be a `numpy.ndarray` (not a subclass), writeable and
    /// C-contiguous, and which no other thread may use until the borrow ends.
    ///
    /// # Errors
    /// `TypeError` when `out` is not exactly a `numpy.ndarray`; `ParamError` (code
    /// `INVALID_PARAM`) when it is read-only or not C-contiguous.
    #[allow(unsafe_code)]
    pub(crate) fn of(out: &'a Bound<'_, PyAny>) -> PyResult<Self> {
        let (addr, len) = memory(out, Role::Destination)?;
        if len == 0 {
            return Ok(Destination { bytes: &mut [] });
        }
        // SAFETY: `memory` checked that `out` is exactly a `numpy.ndarray` (so its
        // `__array_interface__` is NumPy's own), writeable and C-contiguous with `len` > 0
        // bytes at the non-null `addr`: NumPy's description says that `addr..addr + len` is
        // one allocation it may write (bytes need no alignment). The slice lives as long as
        // the borrowed reference `out`, which keeps the array alive, and with it the object
        // that owns the memory (NumPy's `base`); NumPy neither frees nor moves the memory of
        // an array while another reference to it exists (`resize` refuses). No other Rust
        // reference to these bytes exists. What Rust cannot check is that no other Python
        // thread uses the array while the GIL is released: the package's only caller
        // (`Array._read_box`) passes an array it has just made and not yet shown to anyone.
        let bytes = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, len) };
        Ok(Destination { bytes })
    }

    /// The array's bytes.
    pub(crate) fn bytes(&mut self) -> &mut [u8] {
        self.bytes
    }
}

/// The bytes of a C-contiguous `numpy.ndarray`, borrowed for reading for as long as the
/// reference to the array they come from.
pub(crate) struct Source<'a> {
    bytes: &'a [u8],
}

impl<'a> Source<'a> {
    /// The memory of `data`, which must be a `numpy.ndarray` (not a subclass) and
    /// C-contiguous, and which no other thread may write until the borrow ends.
    ///
    /// # Errors
    /// `TypeError` when `data` is not exactly a `numpy.ndarray`; `ParamError` (code
    /// `INVALID_PARAM`) when it is not C-contiguous.
    #[allow(unsafe_code)]
    pub(crate) fn of(data: &'a Bound<'_, PyAny>) -> PyResult<Self> {
        let (addr, len) = memory(data, Role::Source)?;
        if len == 0 {
            return Ok(Source { bytes: &[] });
        }
        // SAFETY: as in `Destination::of`, `addr..addr + len` is one live allocation NumPy
        // describes for this exactly-`numpy.ndarray`, C-contiguous array (non-null, `len` >
        // 0, no alignment needed), kept alive with its owner by the borrowed reference
        // `data` for the slice's whole life; it is only read. What Rust cannot check is that
        // no other Python thread writes the array while the GIL is released; the package's
        // writes pass arrays they made or were given by the caller for this call, as NumPy's
        // own functions that release the GIL do.
        let bytes = unsafe { std::slice::from_raw_parts(addr as *const u8, len) };
        Ok(Source { bytes })
    }

    /// The array's bytes.
    pub(crate) fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
}
