//! A NumPy array as the destination of a read: its memory, borrowed as a byte slice so that
//! the slice engine decodes straight into it, with the GIL released.
//!
//! The stable ABI of CPython 3.9 has no buffer protocol (`PyObject_GetBuffer` joined the
//! limited API in 3.11), so the array's memory is found through NumPy's own description of it,
//! `__array_interface__["data"][0]`, after checking with NumPy's flags that the object is
//! exactly a `numpy.ndarray` (a subclass or any other object could describe memory it does
//! not have), writeable and C-contiguous. `docs/python.md` says why this is sound.

use crate::exception;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use strata::error::code::INVALID_PARAM;

/// The `ParamError` for a destination that cannot be written as it is.
fn refused(py: Python<'_>, message: &str) -> PyErr {
    exception(py, "ParamError", message.to_string(), INVALID_PARAM)
}

/// The bytes of a writeable, C-contiguous `numpy.ndarray`, borrowed for as long as the
/// reference to the array they come from.
pub(crate) struct Destination<'a> {
    bytes: &'a mut [u8],
}

impl<'a> Destination<'a> {
    /// The memory of `out`, which must be a `numpy.ndarray` (not a subclass), writeable and
    /// C-contiguous.
    ///
    /// # Errors
    /// `TypeError` when `out` is not exactly a `numpy.ndarray`; `ParamError` (code
    /// `INVALID_PARAM`) when it is read-only or not C-contiguous.
    #[allow(unsafe_code)]
    pub(crate) fn of(out: &'a Bound<'_, PyAny>) -> PyResult<Self> {
        let py = out.py();
        let ndarray = py.import("numpy")?.getattr("ndarray")?;
        if !out.get_type().is(&ndarray) {
            let name = out.get_type().name()?;
            return Err(PyTypeError::new_err(format!(
                "the destination must be a numpy.ndarray, not {name}"
            )));
        }
        let flags = out.getattr("flags")?;
        if !flags.getattr("writeable")?.extract::<bool>()? {
            return Err(refused(py, "the destination array is read-only"));
        }
        if !flags.getattr("c_contiguous")?.extract::<bool>()? {
            return Err(refused(py, "the destination array is not C-contiguous"));
        }
        let len: usize = out.getattr("nbytes")?.extract()?;
        let (addr, readonly): (usize, bool) = out
            .getattr("__array_interface__")?
            .get_item("data")?
            .extract()?;
        if readonly {
            return Err(refused(py, "the destination array is read-only"));
        }
        if len == 0 {
            return Ok(Destination { bytes: &mut [] });
        }
        if addr == 0 {
            return Err(refused(py, "the destination array has no memory"));
        }
        // SAFETY: `out` is exactly a `numpy.ndarray` (checked above, so its
        // `__array_interface__` is NumPy's own), writeable and C-contiguous with `len` > 0
        // bytes: NumPy's description says that `addr..addr + len` is one allocation it may
        // write (non-null; bytes need no alignment). The slice lives as long as the borrowed
        // reference `out`, which keeps the array alive, and with it the object that owns
        // the memory (NumPy's `base`); NumPy cannot free or move the memory of an array
        // while another reference to it exists (`resize` refuses). No other Rust reference
        // to these bytes exists. The one condition Rust cannot check is that no other
        // Python thread writes or reads the array while the GIL is released: the package's
        // only caller (`Array._read_box`) passes an array it has just made and has not yet
        // shown to anyone.
        let bytes = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, len) };
        Ok(Destination { bytes })
    }

    /// The array's bytes.
    pub(crate) fn bytes(&mut self) -> &mut [u8] {
        self.bytes
    }
}
