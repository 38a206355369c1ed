//! Error codes and the per-thread last error message.
//!
//! The codes are the table [`crate::error::CODES`] (`BLOSC2_ERROR_*` values where the meaning
//! matches, Strata's from −1000 down); two of them only the boundary returns: a NULL argument
//! and a caught panic. The header's `STRATA_ERROR_*` macros are the same table (a test below
//! compares them line for line), and [`strata_error_name`] names every code in it.

#![allow(unsafe_code)]

use super::{call, name_out, slice_out};
use crate::error::{code, Error, Expected, CODES};
use std::cell::RefCell;
use std::ffi::c_char;

/// Code returned when a Rust panic was caught at the boundary (a bug in Strata).
pub const STRATA_ERROR_PANIC: i32 = code::PANIC;
/// Code returned when a required pointer argument is NULL (`BLOSC2_ERROR_NULL_POINTER`).
pub const STRATA_ERROR_NULL_POINTER: i32 = code::NULL_POINTER;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Sets this thread's last error message.
pub(super) fn set_last_error(msg: String) {
    LAST_ERROR.with(|e| *e.borrow_mut() = msg);
}

/// Records `err` as this thread's last error and returns its code.
pub(super) fn fail(err: &Error) -> i32 {
    set_last_error(err.to_string());
    err.code()
}

/// Copies this thread's last error message, NUL-terminated and truncated to fit, into `buf`
/// (`len` bytes). Returns the full message length in bytes (without the NUL), so a caller can
/// retry with a bigger buffer; 0 when no call has failed on this thread. A successful call
/// does not clear the message. Never fails.
///
/// # Safety
/// `buf` must be NULL or valid for writes of `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_last_error(buf: *mut c_char, len: usize) -> usize {
    let n = call(|| {
        LAST_ERROR.with(|e| {
            let msg = e.borrow();
            // SAFETY: the caller guarantees `buf` is NULL or writable for `len` bytes.
            if let Ok(out) = unsafe { slice_out(buf.cast::<u8>(), len, "buf") } {
                if let Some(room) = out.len().checked_sub(1) {
                    let n = msg.len().min(room);
                    out[..n].copy_from_slice(&msg.as_bytes()[..n]);
                    out[n] = 0;
                }
            }
            Ok(super::count(msg.len()))
        })
    });
    usize::try_from(n).unwrap_or(0)
}

/// The macro name of error code `code` (e.g. `"STRATA_ERROR_DATA"` for −3), copied
/// NUL-terminated into `buf` (`len` bytes; `NULL, 0` asks for the length). Returns the name's
/// length without the NUL, `STRATA_ERROR_INVALID_PARAM` for a code no function returns, or
/// `STRATA_ERROR_WRITE_BUFFER` when `len` is not more than the length.
///
/// # Safety
/// `buf` must be NULL or valid for writes of `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_error_name(code: i32, buf: *mut c_char, len: usize) -> i64 {
    call(|| {
        let name = CODES
            .iter()
            .find(|(c, _, _)| *c == code)
            .map(|(_, n, _)| format!("STRATA_ERROR_{n}"))
            .ok_or_else(|| {
                Error::range("error code", code, Expected::OneOf("a STRATA_ERROR_* code"))
            })?;
        // SAFETY: forwarded from the caller.
        unsafe { name_out(&name, buf, len) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header's macros (written in `cbindgen.toml`, which generates `include/strata.h`)
    /// are the table, line for line, with each code's meaning as its comment.
    #[test]
    fn the_header_macros_follow_the_table() {
        let config = include_str!("../../cbindgen.toml");
        let mut want = String::new();
        for (value, name, meaning) in CODES {
            want.push_str(&format!(
                "/* {meaning} */\n#define STRATA_ERROR_{name} {value}\n"
            ));
        }
        let lines: Vec<&str> = config.lines().collect();
        let found: String = lines
            .windows(2)
            .filter(|w| w[1].starts_with("#define STRATA_ERROR_"))
            .map(|w| format!("{}\n{}\n", w[0], w[1]))
            .collect();
        assert_eq!(
            found, want,
            "cbindgen.toml's STRATA_ERROR_* block differs from CODES"
        );
    }
}
