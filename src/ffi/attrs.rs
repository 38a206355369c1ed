//! C functions for what an N-d array carries besides its items: its compression parameters,
//! its metalayers (fixed-size, in the frame header), its vlmetalayers (variable-length
//! attributes, python-blosc2's `vlmeta`) as raw msgpack bytes or through typed helpers for
//! int64, float64, string and numeric-array values; and the codec and filter name ↔ ID
//! lookups.
//!
//! Values are encoded as python-blosc2 encodes them ([`crate::schunk::values`]), so what a C
//! program writes reads back in Python as the same `int`, `float`, `str` or `list`.
//!
//! Format: C-Blosc2 `blosc/blosc2.c` (`blosc2_meta_get`, `blosc2_meta_update`,
//! `blosc2_vlmeta_*`, `blosc2_compname_to_compcode`, `blosc2_compcode_to_compname`);
//! python-blosc2 `src/blosc2/schunk.py` (`vlmeta`, `meta`).

#![allow(unsafe_code)]

use super::handle::Handle;
use super::ndarray::{create_with, strata_ndarray, strata_ndarray_params, Fill};
use super::params::{strata_cparams, strata_storage};
use super::{
    arg_mut, call, call_status, copy_out, count, name_out, slice_in, slice_out, str_in, FfiResult,
};
use crate::error::Error;
use crate::format::b2nd::{LEGACY_METALAYER, METALAYER};
use crate::format::ids::{CodecId, FilterId};
use crate::ndarray::{ArrayParams, NdArray};
use crate::registry::Registry;
use crate::schunk::values::{self, as_tuple, Value};
use std::ffi::c_char;

/// The b2nd array behind a handle (an HDF5 dataset's handle refuses).
///
/// # Safety
/// `array` NULL or a live handle.
unsafe fn array<'a>(array: *const strata_ndarray) -> FfiResult<&'a NdArray> {
    // SAFETY: forwarded from the caller.
    Ok(unsafe { strata_ndarray::get(array) }?.array()?)
}

/// The b2nd array behind a handle, to change.
///
/// # Safety
/// `array` NULL or a live handle not used elsewhere during the call.
unsafe fn array_mut<'a>(array: *mut strata_ndarray) -> FfiResult<&'a mut NdArray> {
    // SAFETY: forwarded from the caller.
    Ok(unsafe { strata_ndarray::get_mut(array) }?.array_mut()?)
}

/// Writes the compression parameters of the array's chunks (codec, codec meta, clevel,
/// splitmode, typesize, blocksize = one block's bytes, filters and their meta bytes, use_dict,
/// this handle's compression threads) into `*out`, its `size` set. Returns 0, or
/// `STRATA_ERROR_NULL_POINTER`, `STRATA_ERROR_INVALID_PARAM` (an HDF5 dataset's handle).
///
/// # Safety
/// `array` NULL or a live handle; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_get_cparams(
    array: *const strata_ndarray,
    out: *mut strata_cparams,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (a, out) = unsafe { (self::array(array)?, arg_mut(out, "out")?) };
        *out = strata_cparams::from(a.cparams());
        Ok(())
    })
}

/// A metalayer to store when an array is made (`strata_ndarray_zeros_with_meta`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct strata_metalayer {
    /// Its name, NUL-terminated, ≤ 31 bytes, not `"b2nd"` or `"caterva"`.
    pub name: *const c_char,
    /// Its content (python-blosc2 stores a msgpack value).
    pub content: *const u8,
    /// The content's length in bytes; later updates may not make it longer.
    pub contentlen: usize,
}

/// Creates an array of zeros as `strata_ndarray_zeros` does, with the `nmetalayers`
/// metalayers at `metalayers` after its own `"b2nd"` one, in order (metalayers can only be
/// added before an array has chunks). Returns as `strata_ndarray_zeros`, or
/// `STRATA_ERROR_INVALID_PARAM` (a bad or repeated name, more than 15).
///
/// # Safety
/// As `strata_ndarray_zeros`; `metalayers` readable for `nmetalayers` entries, each with a
/// NUL-terminated name and `contentlen` readable bytes of content.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_zeros_with_meta(
    urlpath: *const c_char,
    storage: *const strata_storage,
    params: *const strata_ndarray_params,
    dtype: *const c_char,
    metalayers: *const strata_metalayer,
    nmetalayers: usize,
    out: *mut *mut strata_ndarray,
) -> i32 {
    let more = |mut p: ArrayParams| {
        // SAFETY: the caller guarantees `nmetalayers` readable entries.
        for m in unsafe { slice_in(metalayers, nmetalayers, "metalayers") }? {
            // SAFETY: the caller guarantees each entry's name and content.
            let (name, content) = unsafe {
                (
                    str_in(m.name, "metalayer name")?,
                    slice_in(m.content, m.contentlen, "metalayer content")?,
                )
            };
            p = p.with_metalayer(name, content);
        }
        Ok(p)
    };
    // SAFETY: forwarded from the caller.
    unsafe {
        create_with(
            urlpath,
            storage,
            params,
            dtype,
            || Ok(Fill::Zeros),
            more,
            out,
        )
    }
}

/// Copies the content of metalayer `name` (`"b2nd"` is the array's own) into `dst`
/// (`dstlen` bytes; `NULL, 0` asks for the size). Returns its length, or
/// `STRATA_ERROR_METALAYER_NOT_FOUND`, `STRATA_ERROR_WRITE_BUFFER`.
///
/// # Safety
/// `array` NULL or a live handle; `name` NUL-terminated; `dst` NULL or writable for `dstlen`
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_meta_get(
    array: *const strata_ndarray,
    name: *const c_char,
    dst: *mut u8,
    dstlen: usize,
) -> i64 {
    call(|| {
        // SAFETY: the caller guarantees the pointers.
        let (a, name) = unsafe { (self::array(array)?, str_in(name, "name")?) };
        let content = a
            .schunk()
            .meta(name)
            .ok_or_else(|| Error::MetalayerNotFound { name: name.into() })?;
        // SAFETY: forwarded from the caller.
        unsafe { copy_out(content, dst, dstlen) }
    })
}

/// Overwrites metalayer `name` in place with `contentlen` bytes, not longer than its stored
/// content (a shorter one overwrites its first bytes, as C-Blosc2's `blosc2_meta_update`
/// does). Metalayers are added when the array is made (`strata_ndarray_zeros_with_meta`);
/// the array's own `"b2nd"` layer changes only through the array (resize). Returns 0, or
/// `STRATA_ERROR_METALAYER_NOT_FOUND`, `STRATA_ERROR_INVALID_PARAM` (longer content, the
/// `"b2nd"` layer), `STRATA_ERROR_FILE_WRITE` (read-only).
///
/// # Safety
/// `array` NULL or a live handle not used elsewhere during the call; `name` NUL-terminated;
/// `content` readable for `contentlen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_meta_set(
    array: *mut strata_ndarray,
    name: *const c_char,
    content: *const u8,
    contentlen: usize,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (a, name, content) = unsafe {
            (
                array_mut(array)?,
                str_in(name, "name")?,
                slice_in(content, contentlen, "content")?,
            )
        };
        if name == METALAYER || name == LEGACY_METALAYER {
            return Err(Error::Unsupported {
                what: "the array's own metalayer changes only through the array (resize)",
            }
            .into());
        }
        Ok(a.schunk_mut().meta_update(name, content)?)
    })
}

/// Number of metalayers (the `"b2nd"` one included), or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `array` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_meta_count(array: *const strata_ndarray) -> i64 {
    call(|| {
        // SAFETY: forwarded from the caller.
        let a = unsafe { self::array(array) }?;
        Ok(count(a.schunk().meta_names().len()))
    })
}

/// Copies the name of metalayer `i` (0-based, in stored order) NUL-terminated into `buf`
/// (`len` bytes, at least the name's length + 1; `NULL, 0` asks for the length). Returns the
/// length without the NUL, or `STRATA_ERROR_INVALID_INDEX`, `STRATA_ERROR_WRITE_BUFFER`.
///
/// # Safety
/// `array` NULL or a live handle; `buf` NULL or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_meta_name(
    array: *const strata_ndarray,
    i: i64,
    buf: *mut c_char,
    len: usize,
) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe { nth_name(array, i, buf, len, "metalayer", |a| a.schunk().meta_names()) }
}

/// Copies name `i` of `names(array)` (of `what`) NUL-terminated into `(buf, len)`.
///
/// # Safety
/// `array` NULL or a live handle; `buf` NULL or writable for `len` bytes.
unsafe fn nth_name(
    array: *const strata_ndarray,
    i: i64,
    buf: *mut c_char,
    len: usize,
    what: &'static str,
    names: impl FnOnce(&NdArray) -> Vec<&str>,
) -> i64 {
    call(|| {
        // SAFETY: forwarded from the caller.
        let names = names(unsafe { self::array(array) }?);
        let name = usize::try_from(i)
            .ok()
            .and_then(|k| names.get(k))
            .ok_or_else(|| Error::index(what, i, names.len()))?;
        // SAFETY: forwarded from the caller.
        unsafe { name_out(name, buf, len) }
    })
}

/// Sets vlmetalayer `name` (≤ 31 bytes) to `contentlen` bytes of `content` (a msgpack value
/// for python-blosc2 to read it), adding it or replacing its content; compressed as
/// python-blosc2 does (zstd, clevel 5). Returns 0, or `STRATA_ERROR_INVALID_PARAM` (bad
/// name, 16 already), `STRATA_ERROR_FILE_WRITE` (read-only, or a failed write).
///
/// # Safety
/// `array` NULL or a live handle not used elsewhere during the call; `name` NUL-terminated;
/// `content` readable for `contentlen` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_vlmeta_set(
    array: *mut strata_ndarray,
    name: *const c_char,
    content: *const u8,
    contentlen: usize,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe {
        set_with(array, name, || {
            // SAFETY: the caller guarantees `contentlen` readable bytes.
            Ok(slice_in(content, contentlen, "content")?.to_vec())
        })
    }
}

/// Copies the (decompressed) content of vlmetalayer `name` into `dst` (`dstlen` bytes;
/// `NULL, 0` asks for the size). Returns its length, or `STRATA_ERROR_METALAYER_NOT_FOUND`,
/// `STRATA_ERROR_WRITE_BUFFER`, decompression errors.
///
/// # Safety
/// `array` NULL or a live handle; `name` NUL-terminated; `dst` NULL or writable for `dstlen`
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_vlmeta_get(
    array: *const strata_ndarray,
    name: *const c_char,
    dst: *mut u8,
    dstlen: usize,
) -> i64 {
    call(|| {
        // SAFETY: the caller guarantees the pointers.
        let (a, name) = unsafe { (self::array(array)?, str_in(name, "name")?) };
        let content = a.schunk().vlmeta(name)?;
        // SAFETY: forwarded from the caller.
        unsafe { copy_out(&content, dst, dstlen) }
    })
}

/// Removes vlmetalayer `name`. Returns 0, or `STRATA_ERROR_METALAYER_NOT_FOUND`,
/// `STRATA_ERROR_FILE_WRITE`.
///
/// # Safety
/// `array` NULL or a live handle not used elsewhere during the call; `name` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_vlmeta_delete(
    array: *mut strata_ndarray,
    name: *const c_char,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (a, name) = unsafe { (array_mut(array)?, str_in(name, "name")?) };
        Ok(a.schunk_mut().vlmeta_delete(name)?)
    })
}

/// Number of vlmetalayers, or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `array` NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_vlmeta_count(array: *const strata_ndarray) -> i64 {
    call(|| {
        // SAFETY: forwarded from the caller.
        let a = unsafe { self::array(array) }?;
        Ok(count(a.schunk().vlmeta_names().len()))
    })
}

/// Copies the name of vlmetalayer `i` as `strata_ndarray_meta_name` does.
///
/// # Safety
/// As `strata_ndarray_meta_name`.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_vlmeta_name(
    array: *const strata_ndarray,
    i: i64,
    buf: *mut c_char,
    len: usize,
) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe {
        nth_name(array, i, buf, len, "vlmetalayer", |a| {
            a.schunk().vlmeta_names()
        })
    }
}

/// Sets vlmetalayer `name` to the bytes `content` makes (inside the call, so its errors are
/// reported).
///
/// # Safety
/// `array` NULL or a live handle not used elsewhere during the call; `name` NUL-terminated.
unsafe fn set_with(
    array: *mut strata_ndarray,
    name: *const c_char,
    content: impl FnOnce() -> FfiResult<Vec<u8>>,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let (a, name) = unsafe { (array_mut(array)?, str_in(name, "name")?) };
        let bytes = content()?;
        Ok(a.schunk_mut().vlmeta_set(name, &bytes, None)?)
    })
}

/// The msgpack value of vlmetalayer `name`.
///
/// # Safety
/// `array` NULL or a live handle; `name` NULL or NUL-terminated.
unsafe fn value_of(
    array: *const strata_ndarray,
    name: *const c_char,
) -> FfiResult<(Value, String)> {
    // SAFETY: forwarded from the caller.
    let (a, name) = unsafe { (self::array(array)?, str_in(name, "name")?) };
    let v = values::unpack(&a.schunk().vlmeta(name)?)?;
    Ok((v, format!("vlmetalayer {name:?}")))
}

/// What kind of value `v` is, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Nil => "nil",
        Value::Bool(_) => "a bool",
        Value::Int(_) => "an integer",
        Value::F32(_) | Value::F64(_) => "a float",
        Value::Str(_) => "a string",
        Value::Bin(_) => "bytes",
        Value::Array(_) => "an array",
        Value::Map(_) => "a map",
        Value::Ext(..) => "an extension value",
    }
}

/// `v` as an int64: an integer in its range.
fn int64_of(v: &Value, what: &str) -> crate::Result<i64> {
    match v {
        Value::Int(i) => i64::try_from(*i).ok(),
        _ => None,
    }
    .ok_or_else(|| Error::ValueKind {
        what: what.to_owned(),
        expected: "an int64",
        found: if matches!(v, Value::Int(_)) {
            "an integer out of the int64 range"
        } else {
            kind(v)
        },
    })
}

/// `v` as a float64: a float, or an integer a float64 holds exactly (|i| ≤ 2^53).
fn float64_of(v: &Value, what: &str) -> crate::Result<f64> {
    const EXACT: i128 = 1 << 53;
    match v {
        Value::F64(f) => Some(*f),
        Value::F32(f) => Some(f64::from(*f)),
        // Exact: |i| ≤ 2^53 converts without rounding.
        #[allow(clippy::cast_precision_loss)]
        Value::Int(i) if (-EXACT..=EXACT).contains(i) => Some(*i as f64),
        _ => None,
    }
    .ok_or_else(|| Error::ValueKind {
        what: what.to_owned(),
        expected: "a float64",
        found: if matches!(v, Value::Int(_)) {
            "an integer a float64 does not hold exactly"
        } else {
            kind(v)
        },
    })
}

/// The items of an array value (a list, or a python-blosc2 tuple).
fn items_of<'v>(v: &'v Value, what: &str) -> crate::Result<&'v [Value]> {
    if let Some(items) = as_tuple(v) {
        return Ok(items);
    }
    match v {
        Value::Array(items) => Ok(items),
        _ => Err(Error::ValueKind {
            what: what.to_owned(),
            expected: "an array",
            found: kind(v),
        }),
    }
}

/// Sets vlmetalayer `name` to the integer `value` (python-blosc2 reads an `int`). Returns as
/// `strata_ndarray_vlmeta_set`.
///
/// # Safety
/// As `strata_ndarray_vlmeta_delete`.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_vlmeta_set_int64(
    array: *mut strata_ndarray,
    name: *const c_char,
    value: i64,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { set_with(array, name, || Ok(values::pack(&Value::from(value)))) }
}

/// Writes the integer value of vlmetalayer `name` to `*out`. Returns 0, or
/// `STRATA_ERROR_METALAYER_NOT_FOUND`, `STRATA_ERROR_INVALID_PARAM` (another kind of value,
/// or an integer out of the int64 range; the message says which),
/// `STRATA_ERROR_INVALID_HEADER` (not msgpack).
///
/// # Safety
/// `array` NULL or a live handle; `name` NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_vlmeta_get_int64(
    array: *const strata_ndarray,
    name: *const c_char,
    out: *mut i64,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let ((v, what), out) = unsafe { (value_of(array, name)?, arg_mut(out, "out")?) };
        *out = int64_of(&v, &what)?;
        Ok(())
    })
}

/// Sets vlmetalayer `name` to the float `value` (a msgpack float64; python-blosc2 reads a
/// `float`). Returns as `strata_ndarray_vlmeta_set`.
///
/// # Safety
/// As `strata_ndarray_vlmeta_delete`.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_vlmeta_set_float64(
    array: *mut strata_ndarray,
    name: *const c_char,
    value: f64,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { set_with(array, name, || Ok(values::pack(&Value::from(value)))) }
}

/// Writes the float value of vlmetalayer `name` to `*out`: a float64, a float32 widened, or
/// an integer of magnitude ≤ 2^53 (which a float64 holds exactly). Returns as
/// `strata_ndarray_vlmeta_get_int64`.
///
/// # Safety
/// As `strata_ndarray_vlmeta_get_int64`.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_vlmeta_get_float64(
    array: *const strata_ndarray,
    name: *const c_char,
    out: *mut f64,
) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointers.
        let ((v, what), out) = unsafe { (value_of(array, name)?, arg_mut(out, "out")?) };
        *out = float64_of(&v, &what)?;
        Ok(())
    })
}

/// Sets vlmetalayer `name` to the NUL-terminated UTF-8 string `value` (a msgpack str;
/// python-blosc2 reads a `str`). Returns as `strata_ndarray_vlmeta_set`, or
/// `STRATA_ERROR_INVALID_PARAM` for a string that is not UTF-8.
///
/// # Safety
/// As `strata_ndarray_vlmeta_delete`; `value` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_vlmeta_set_string(
    array: *mut strata_ndarray,
    name: *const c_char,
    value: *const c_char,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe {
        set_with(array, name, || {
            // SAFETY: the caller guarantees a NUL-terminated string.
            let s = str_in(value, "value")?;
            Ok(values::pack(&Value::from(s)))
        })
    }
}

/// Copies the string value of vlmetalayer `name` NUL-terminated into `buf` (`len` bytes, at
/// least its length + 1; `NULL, 0` asks for the length). Returns its length in bytes without
/// the NUL, or the errors of `strata_ndarray_vlmeta_get_int64`, `STRATA_ERROR_WRITE_BUFFER`.
///
/// # Safety
/// `array` NULL or a live handle; `name` NUL-terminated; `buf` NULL or writable for `len`
/// bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_vlmeta_get_string(
    array: *const strata_ndarray,
    name: *const c_char,
    buf: *mut c_char,
    len: usize,
) -> i64 {
    call(|| {
        // SAFETY: the caller guarantees the pointers.
        let (v, what) = unsafe { value_of(array, name) }?;
        let s = v.as_str().ok_or_else(|| Error::ValueKind {
            what,
            expected: "a string",
            found: kind(&v),
        })?;
        // SAFETY: forwarded from the caller.
        unsafe { name_out(s, buf, len) }
    })
}

/// Sets vlmetalayer `name` to a msgpack array of the `n` integers at `values`
/// (python-blosc2 reads a `list` of `int`). Returns as `strata_ndarray_vlmeta_set`.
///
/// # Safety
/// As `strata_ndarray_vlmeta_delete`; `values` readable for `n` items.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_vlmeta_set_int64_array(
    array: *mut strata_ndarray,
    name: *const c_char,
    values: *const i64,
    n: usize,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe {
        set_with(array, name, || {
            // SAFETY: the caller guarantees `n` readable items.
            let items = slice_in(values, n, "values")?;
            let v = Value::Array(items.iter().map(|&i| Value::from(i)).collect());
            Ok(values::pack(&v))
        })
    }
}

/// Sets vlmetalayer `name` to a msgpack array of the `n` float64 values at `values`
/// (python-blosc2 reads a `list` of `float`). Returns as `strata_ndarray_vlmeta_set`.
///
/// # Safety
/// As `strata_ndarray_vlmeta_delete`; `values` readable for `n` items.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_vlmeta_set_float64_array(
    array: *mut strata_ndarray,
    name: *const c_char,
    values: *const f64,
    n: usize,
) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe {
        set_with(array, name, || {
            // SAFETY: the caller guarantees `n` readable items.
            let items = slice_in(values, n, "values")?;
            let v = Value::Array(items.iter().map(|&f| Value::from(f)).collect());
            Ok(values::pack(&v))
        })
    }
}

/// Converts the items of vlmetalayer `name`'s array value with `item` into `(dst, n)`
/// (`NULL, 0` asks for the count). Returns the number of items.
///
/// # Safety
/// `array` NULL or a live handle; `name` NUL-terminated; `dst` NULL or writable for `n`
/// items.
unsafe fn get_items<T: Copy>(
    array: *const strata_ndarray,
    name: *const c_char,
    dst: *mut T,
    n: usize,
    item: fn(&Value, &str) -> crate::Result<T>,
) -> i64 {
    call(|| {
        // SAFETY: forwarded from the caller.
        let (v, what) = unsafe { value_of(array, name) }?;
        let items = items_of(&v, &what)?;
        let got: Vec<T> = items
            .iter()
            .enumerate()
            .map(|(k, x)| item(x, &format!("{what} item {k}")))
            .collect::<crate::Result<_>>()?;
        if dst.is_null() && n == 0 {
            return Ok(count(got.len()));
        }
        // SAFETY: the caller guarantees `n` writable items.
        let out = unsafe { slice_out(dst, n, "dst") }?;
        let size = std::mem::size_of::<T>();
        let out = out.get_mut(..got.len()).ok_or(Error::DestinationTooSmall {
            needed: got.len() * size,
            available: n * size,
        })?;
        out.copy_from_slice(&got);
        Ok(count(got.len()))
    })
}

/// Copies the integers of vlmetalayer `name` (a msgpack array, or a python-blosc2 tuple, of
/// integers in the int64 range) into `dst` (`n` items; `NULL, 0` asks for the count). Returns
/// the number of items, or the errors of `strata_ndarray_vlmeta_get_int64` (naming the item
/// that is not an int64), `STRATA_ERROR_WRITE_BUFFER` (fewer than that many items).
///
/// # Safety
/// `array` NULL or a live handle; `name` NUL-terminated; `dst` NULL or writable for `n`
/// items.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_vlmeta_get_int64_array(
    array: *const strata_ndarray,
    name: *const c_char,
    dst: *mut i64,
    n: usize,
) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe { get_items(array, name, dst, n, int64_of) }
}

/// Copies the numbers of vlmetalayer `name` (a msgpack array or python-blosc2 tuple; each
/// item as `strata_ndarray_vlmeta_get_float64` reads it) into `dst` as float64 (`n` items;
/// `NULL, 0` asks for the count). Returns as `strata_ndarray_vlmeta_get_int64_array`.
///
/// # Safety
/// As `strata_ndarray_vlmeta_get_int64_array`.
#[no_mangle]
pub unsafe extern "C" fn strata_ndarray_vlmeta_get_float64_array(
    array: *const strata_ndarray,
    name: *const c_char,
    dst: *mut f64,
    n: usize,
) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe { get_items(array, name, dst, n, float64_of) }
}

/// The ID of the codec `name` (`"blosclz"`, `"lz4"`, `"lz4hc"`, `"zlib"`, `"zstd"`, the names
/// Blosc2 gives plugin IDs such as `"zfp_acc"`, or a registered or loadable plugin's own
/// name; ASCII case ignored for Blosc2's names), as `blosc2_compname_to_compcode`. Returns
/// the ID (0–255), or `STRATA_ERROR_INVALID_PARAM` (no codec has that name).
///
/// # Safety
/// `name` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn strata_codec_id(name: *const c_char) -> i32 {
    call_status_value(|| {
        // SAFETY: the caller guarantees the string.
        let name = unsafe { str_in(name, "name") }?;
        Ok(match CodecId::from_name(name) {
            Some(id) => id.0,
            None => Registry::global().codec_by_name(name)?.id().0,
        })
    })
}

/// Copies the name of codec `id` NUL-terminated into `buf` (`len` bytes; `NULL, 0` asks for
/// the length), as `blosc2_compcode_to_compname`: the registered codec's (a plugin is looked
/// for in the plugin search path), else the name Blosc2 gives the ID. Returns the length
/// without the NUL, or `STRATA_ERROR_CODEC_SUPPORT` (no codec has that ID),
/// `STRATA_ERROR_WRITE_BUFFER`.
///
/// # Safety
/// `buf` NULL or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_codec_name(id: u8, buf: *mut c_char, len: usize) -> i64 {
    call(|| {
        let name = match Registry::global().codec(CodecId(id)) {
            Ok(c) => c.name().to_owned(),
            Err(e) => CodecId(id).name().ok_or(e)?.to_owned(),
        };
        // SAFETY: forwarded from the caller.
        unsafe { name_out(&name, buf, len) }
    })
}

/// The ID of the filter `name` (`"nofilter"`, `"shuffle"`, `"bitshuffle"`, `"delta"`,
/// `"trunc_prec"`, `"bytedelta"`, Blosc2's other names, or a registered or loadable plugin's
/// own name). Returns the ID (0–255), or `STRATA_ERROR_INVALID_PARAM`.
///
/// # Safety
/// `name` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn strata_filter_id(name: *const c_char) -> i32 {
    call_status_value(|| {
        // SAFETY: the caller guarantees the string.
        let name = unsafe { str_in(name, "name") }?;
        Ok(match FilterId::from_name(name) {
            Some(id) => id.0,
            None => Registry::global().filter_by_name(name)?.id().0,
        })
    })
}

/// Copies the name of filter `id` NUL-terminated into `buf` as `strata_codec_name` does
/// (`"nofilter"` for 0). Returns the length without the NUL, or
/// `STRATA_ERROR_FILTER_PIPELINE` (no filter has that ID), `STRATA_ERROR_WRITE_BUFFER`.
///
/// # Safety
/// `buf` NULL or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn strata_filter_name(id: u8, buf: *mut c_char, len: usize) -> i64 {
    call(|| {
        let name = match FilterId(id).name() {
            Some(n) if id < 32 => n.to_owned(),
            known => match Registry::global().filter(FilterId(id)) {
                Ok(f) => f.name().to_owned(),
                Err(e) => known.ok_or(e)?.to_owned(),
            },
        };
        // SAFETY: forwarded from the caller.
        unsafe { name_out(&name, buf, len) }
    })
}

/// [`call`] for a function returning a small value (an ID) or a negative code as `int32_t`.
fn call_status_value(body: impl FnOnce() -> FfiResult<u8>) -> i32 {
    // An ID (0–255) or a code (small negative) fits.
    call(|| body().map(i64::from)) as i32
}
