//! Error codes and the per-thread last error message.
//!
//! The codes are [`crate::Error::code`]'s (`BLOSC2_ERROR_*` values where the meaning matches,
//! Strata's from −1000 down), plus two that only the boundary returns: a NULL argument and a
//! caught panic. The header's `STRATA_ERROR_*` macros list the same codes; a test checks
//! that every code any error can have is a macro, and every macro a name
//! [`strata_error_name`] knows.

#![allow(unsafe_code)]

use super::{call, name_out, slice_out};
use crate::error::Error;
use std::cell::RefCell;
use std::ffi::c_char;

/// Code returned when a Rust panic was caught at the boundary (a bug in Strata).
pub const STRATA_ERROR_PANIC: i32 = -1001;
/// Code returned when a required pointer argument is NULL (`BLOSC2_ERROR_NULL_POINTER`).
pub const STRATA_ERROR_NULL_POINTER: i32 = -32;

/// Every code a C function can return, with its macro name (`STRATA_` + C-Blosc2's
/// `BLOSC2_ERROR_*` name where the code is C-Blosc2's).
const CODES: &[(i32, &str)] = &[
    (-3, "STRATA_ERROR_DATA"),
    (-4, "STRATA_ERROR_MEMORY_ALLOC"),
    (-5, "STRATA_ERROR_READ_BUFFER"),
    (-6, "STRATA_ERROR_WRITE_BUFFER"),
    (-7, "STRATA_ERROR_CODEC_SUPPORT"),
    (-8, "STRATA_ERROR_CODEC_PARAM"),
    (-9, "STRATA_ERROR_CODEC_DICT"),
    (-10, "STRATA_ERROR_VERSION_SUPPORT"),
    (-11, "STRATA_ERROR_INVALID_HEADER"),
    (-12, "STRATA_ERROR_INVALID_PARAM"),
    (-13, "STRATA_ERROR_FILE_READ"),
    (-14, "STRATA_ERROR_FILE_WRITE"),
    (-15, "STRATA_ERROR_FILE_OPEN"),
    (-17, "STRATA_ERROR_RUN_LENGTH"),
    (-18, "STRATA_ERROR_FILTER_PIPELINE"),
    (-19, "STRATA_ERROR_CHUNK_INSERT"),
    (-20, "STRATA_ERROR_CHUNK_APPEND"),
    (-21, "STRATA_ERROR_CHUNK_UPDATE"),
    (-24, "STRATA_ERROR_FRAME_TYPE"),
    (-25, "STRATA_ERROR_FILE_TRUNCATE"),
    (-28, "STRATA_ERROR_FRAME_SPECIAL"),
    (-31, "STRATA_ERROR_FILE_REMOVE"),
    (STRATA_ERROR_NULL_POINTER, "STRATA_ERROR_NULL_POINTER"),
    (-33, "STRATA_ERROR_INVALID_INDEX"),
    (-34, "STRATA_ERROR_METALAYER_NOT_FOUND"),
    (-35, "STRATA_ERROR_MAX_BUFSIZE_EXCEEDED"),
    (-1000, "STRATA_ERROR_PLUGIN_PANIC"),
    (STRATA_ERROR_PANIC, "STRATA_ERROR_PANIC"),
    (-1002, "STRATA_ERROR_PLUGIN_LOAD"),
];

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
            .find(|(c, _)| *c == code)
            .map(|(_, n)| *n)
            .ok_or_else(|| Error::InvalidParam(format!("{code} is not a Strata error code")))?;
        // SAFETY: forwarded from the caller.
        unsafe { name_out(name, buf, len) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::IoOp;

    /// One error of every variant. The match below has no wildcard, so adding a variant to
    /// [`Error`] fails to compile here until it is listed (and its code checked).
    fn one_of_each() -> Vec<Error> {
        let s = String::new;
        let all = vec![
            Error::Truncated {
                what: "",
                needed: 0,
                available: 0,
            },
            Error::DestinationTooSmall {
                needed: 0,
                available: 0,
            },
            Error::InvalidHeader(s()),
            Error::VersionSupport { version: 0 },
            Error::UnknownCodec { id: 0 },
            Error::UnknownFilter { id: 0 },
            Error::CodecParam(s()),
            Error::CodecDict(s()),
            Error::Filter {
                id: 0,
                message: s(),
            },
            Error::Data(s()),
            Error::RunLength(s()),
            Error::InvalidParam(s()),
            Error::InvalidIndex(s()),
            Error::MaxBufsizeExceeded { size: 0, limit: 0 },
            Error::MemoryAlloc(0),
            Error::Frame {
                path: s(),
                what: s(),
            },
            Error::FrameType {
                path: s(),
                expected: "",
                found: 0,
            },
            Error::ChunkAppend(s()),
            Error::ChunkInsert(s()),
            Error::ChunkUpdate(s()),
            Error::MetalayerNotFound { name: s() },
            Error::FrameSpecial(s()),
            Error::PluginPanic { id: 0 },
            Error::CodecNotFound {
                id: 0,
                searched: s(),
            },
            Error::FilterNotFound {
                id: 0,
                searched: s(),
            },
            Error::PluginLoad {
                source_name: s(),
                message: s(),
            },
        ];
        let mut with_io = all;
        for op in [
            IoOp::Open,
            IoOp::Read,
            IoOp::Write,
            IoOp::Sync,
            IoOp::Truncate,
            IoOp::Remove,
        ] {
            with_io.push(Error::Io {
                path: s(),
                op,
                message: s(),
            });
        }
        for e in &with_io {
            match e {
                Error::Truncated { .. }
                | Error::DestinationTooSmall { .. }
                | Error::InvalidHeader(_)
                | Error::VersionSupport { .. }
                | Error::UnknownCodec { .. }
                | Error::UnknownFilter { .. }
                | Error::CodecParam(_)
                | Error::CodecDict(_)
                | Error::Filter { .. }
                | Error::Data(_)
                | Error::RunLength(_)
                | Error::InvalidParam(_)
                | Error::InvalidIndex(_)
                | Error::MaxBufsizeExceeded { .. }
                | Error::MemoryAlloc(_)
                | Error::Frame { .. }
                | Error::FrameType { .. }
                | Error::Io { .. }
                | Error::ChunkAppend(_)
                | Error::ChunkInsert(_)
                | Error::ChunkUpdate(_)
                | Error::MetalayerNotFound { .. }
                | Error::FrameSpecial(_)
                | Error::PluginPanic { .. }
                | Error::CodecNotFound { .. }
                | Error::FilterNotFound { .. }
                | Error::PluginLoad { .. } => {}
            }
        }
        with_io
    }

    #[test]
    fn every_error_code_has_a_name() {
        for e in one_of_each() {
            assert!(
                CODES.iter().any(|(c, _)| *c == e.code()),
                "{e:?} has code {} with no STRATA_ERROR_* name",
                e.code()
            );
        }
    }

    #[test]
    fn names_are_unique_and_codes_negative() {
        for (i, (c, n)) in CODES.iter().enumerate() {
            assert!(*c < 0, "{n}");
            assert!(n.starts_with("STRATA_ERROR_"), "{n}");
            assert!(
                CODES[..i].iter().all(|(c2, n2)| c2 != c && n2 != n),
                "{n} twice"
            );
        }
    }
}
