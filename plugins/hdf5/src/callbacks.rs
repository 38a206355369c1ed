//! What HDF5 calls: the two plugin entry points, and the filter class's `set_local` and
//! filter functions ([`strata::hdf5::filter::run`] on the host's allocator and error stack).
//! Each catches panics (none unwinds into HDF5), reports failures on HDF5's error stack (never
//! on stderr) and leaves HDF5's buffers as they were when it fails.
//!
//! Format: HDF5's `H5Zdevelop.h` (`H5Z_class2_t`, `H5Z_func_t`, `H5Z_set_local_func_t`) and
//! `H5PLextern.h` (the plugin entry points); `docs/hdf5.md`.
#![allow(unsafe_code)]

use crate::host::{self, Api, Herr};
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::panic::catch_unwind;
use strata::hdf5::cd::FILTER_ID;
use strata::hdf5::filter::{self, Hid};
/// `H5PL_TYPE_FILTER`.
const H5PL_TYPE_FILTER: c_int = 0;
/// `H5Z_CLASS_T_VERS`.
const H5Z_CLASS_T_VERS: c_int = 1;

type CanApply = unsafe extern "C" fn(Hid, Hid, Hid) -> Herr;
type SetLocal = unsafe extern "C" fn(Hid, Hid, Hid) -> Herr;
type FilterFn = unsafe extern "C" fn(
    c_uint,
    usize,
    *const c_uint,
    usize,
    *mut usize,
    *mut *mut c_void,
) -> usize;

/// HDF5's `H5Z_class2_t` (the same layout from 1.8.3 to 2.x).
#[repr(C)]
#[derive(Debug)]
pub struct H5ZClass2 {
    /// `H5Z_CLASS_T_VERS`.
    pub version: c_int,
    /// The filter ID.
    pub id: c_int,
    /// Whether the filter can compress.
    pub encoder_present: c_uint,
    /// Whether it can decompress.
    pub decoder_present: c_uint,
    /// Its name, as tools print it.
    pub name: *const c_char,
    /// Whether the filter applies to a dataset (NULL: always).
    pub can_apply: Option<CanApply>,
    /// Sets the dataset's `cd_values`.
    pub set_local: Option<SetLocal>,
    /// The filter function.
    pub filter: Option<FilterFn>,
}

/// The class HDF5 registers, in a `Sync` wrapper so that it can be a static.
struct Class(H5ZClass2);
// SAFETY: the class is immutable; its name points to a static string.
unsafe impl Sync for Class {}

static CLASS: Class = Class(H5ZClass2 {
    version: H5Z_CLASS_T_VERS,
    id: FILTER_ID,
    encoder_present: 1,
    decoder_present: 1,
    name: c"blosc2 (Strata)".as_ptr(),
    can_apply: None,
    set_local: Some(set_local),
    filter: Some(filter),
});

/// The plugin's kind: a filter. Cheap: HDF5 calls it for every library in its plugin
/// directories.
#[unsafe(no_mangle)]
pub extern "C" fn H5PLget_plugin_type() -> c_int {
    H5PL_TYPE_FILTER
}

/// The filter class, or NULL when the calling HDF5 is not one the plugin can use (older than
/// 1.10, or not found). Starts no thread.
#[unsafe(no_mangle)]
#[inline(never)]
pub extern "C" fn H5PLget_plugin_info() -> *const c_void {
    match catch_unwind(Api::caller) {
        Ok(Some(_)) => (&raw const CLASS.0).cast(),
        _ => std::ptr::null(),
    }
}

/// `set_local`: [`filter::set_local`] on the calling HDF5.
#[inline(never)]
unsafe extern "C" fn set_local(dcpl: Hid, type_id: Hid, _space: Hid) -> Herr {
    match catch_unwind(Api::caller) {
        Ok(Some(api)) => filter::set_local(api, dcpl, type_id),
        _ => -1,
    }
}

/// The filter function: [`filter::run`] on the calling HDF5.
#[inline(never)]
unsafe extern "C" fn filter(
    flags: c_uint,
    cd_nelmts: usize,
    cd_values: *const c_uint,
    nbytes: usize,
    buf_size: *mut usize,
    buf: *mut *mut c_void,
) -> usize {
    let Ok(Some(api)) = catch_unwind(Api::caller) else {
        return 0;
    };
    // Strata's worker threads start on the first chunk: the library must stay mapped.
    host::pin_plugin();
    // SAFETY: HDF5's own filter arguments, passed on unchanged; `api` is the calling HDF5.
    unsafe { filter::run(api, flags, cd_nelmts, cd_values, nbytes, buf_size, buf) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_class_has_hdf5s_layout() {
        use hdf5_metno_sys::h5z::H5Z_class2_t;
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(size_of::<H5ZClass2>(), size_of::<H5Z_class2_t>());
        assert_eq!(align_of::<H5ZClass2>(), align_of::<H5Z_class2_t>());
        assert_eq!(offset_of!(H5ZClass2, name), offset_of!(H5Z_class2_t, name));
        assert_eq!(
            offset_of!(H5ZClass2, filter),
            offset_of!(H5Z_class2_t, filter)
        );
        assert_eq!(
            hdf5_metno_sys::h5z::H5Z_FLAG_REVERSE,
            filter::H5Z_FLAG_REVERSE
        );
        assert_eq!(
            hdf5_metno_sys::h5z::H5Z_CLASS_T_VERS,
            H5Z_CLASS_T_VERS as u32
        );
    }

    #[test]
    fn plugin_type_is_filter() {
        assert_eq!(
            H5PLget_plugin_type(),
            hdf5_metno_sys::h5pl::H5PL_type_t::H5PL_TYPE_FILTER as c_int
        );
    }
}
