//! The libhdf5 calls of the direct path (feature `hdf5`, Debian's HDF5 1.10.8 or newer through
//! `hdf5-metno-sys`): each under hdf5-metno's library lock (HDF5 builds without thread safety
//! must not be entered twice), each identifier released on drop, each failure an [`Error`]
//! carrying HDF5's own message.
//!
//! Format: HDF5's reference manual for `H5Dget_chunk_info_by_coord`, `H5Dread_chunk`,
//! `H5Dwrite_chunk`, `H5Pget_filter2`, `H5Pget_fill_value`, `H5Zregister`; `docs/hdf5.md`.
#![allow(unsafe_code)]

use super::cd::{FILTER_ID, MAX_CD_VALUES};
use super::filter::{self, Hid, Host};
use crate::error::{Error, Expected, IoOp, Result};
use hdf5_metno::sync::sync;
use hdf5_metno_sys::h5::{haddr_t, hsize_t, H5allocate_memory, H5free_memory, H5get_libversion};
use hdf5_metno_sys::h5d::{self, H5D_fill_value_t, H5D_layout_t};
use hdf5_metno_sys::h5e::{H5Epush2, H5E_CALLBACK, H5E_DEFAULT, H5E_ERR_CLS, H5E_PLINE};
use hdf5_metno_sys::h5i::H5Idec_ref;
use hdf5_metno_sys::h5p::{self, H5P_CLS_DATASET_CREATE, H5P_DEFAULT};
use hdf5_metno_sys::h5s::{self, H5S_seloper_t, H5S_ALL};
use hdf5_metno_sys::h5t::{self, H5T_class_t, H5T_order_t, H5T_sign_t};
use hdf5_metno_sys::h5z::{self, H5Z_class2_t, H5Z_FLAG_OPTIONAL};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

/// HDF5's "no address": a chunk that is not stored.
const HADDR_UNDEF: haddr_t = haddr_t::MAX;

/// An HDF5 error: what was being done, and HDF5's message from its error stack.
fn h5_error(context: &str, what: &str) -> Error {
    let message = hdf5_metno::Error::query().map_or_else(|e| e.to_string(), |e| e.to_string());
    let message = format!("{what}: {message}");
    Error::refused(context, IoOp::Read, std::io::ErrorKind::Other, &message)
}

fn check(r: c_int, context: &str, what: &str) -> Result<c_int> {
    if r < 0 {
        Err(h5_error(context, what))
    } else {
        Ok(r)
    }
}

/// An HDF5 identifier owned here, released (`H5Idec_ref`) on drop.
#[derive(Debug)]
pub(super) struct Id(Hid);

impl Id {
    fn new(id: Hid, context: &str, what: &str) -> Result<Id> {
        if id < 0 {
            Err(h5_error(context, what))
        } else {
            Ok(Id(id))
        }
    }

    /// The raw identifier, valid while `self` lives.
    pub(super) fn raw(&self) -> Hid {
        self.0
    }
}

impl Drop for Id {
    fn drop(&mut self) {
        // SAFETY: the identifier is owned here and released once.
        sync(|| unsafe { H5Idec_ref(self.0) });
    }
}

/// The version of the linked libhdf5 (major, minor, release).
pub(super) fn lib_version() -> (u32, u32, u32) {
    let (mut major, mut minor, mut release) = (0, 0, 0);
    // SAFETY: H5get_libversion writes three unsigned ints.
    sync(|| unsafe { H5get_libversion(&mut major, &mut minor, &mut release) });
    (major, minor, release)
}

/// Whether this libhdf5 reports chunk addresses relative to the end of the user block (the
/// base address) rather than from the start of the file: HDF5 before 1.14.4.
pub(super) fn addresses_after_userblock() -> bool {
    lib_version() < (1, 14, 4)
}

/// A dataset's type, space extent and creation properties.
#[derive(Debug)]
pub(super) struct Described {
    pub(super) type_id: Id,
    pub(super) shape: Vec<usize>,
    pub(super) dcpl: Id,
}

/// The type, shape and creation property list of dataset `ds`.
pub(super) fn describe(ds: Hid, context: &str) -> Result<Described> {
    sync(|| {
        // SAFETY: `ds` is an open dataset; each returned identifier is owned by an `Id`.
        let type_id = Id::new(unsafe { h5d::H5Dget_type(ds) }, context, "H5Dget_type")?;
        // SAFETY: as above.
        let space = Id::new(unsafe { h5d::H5Dget_space(ds) }, context, "H5Dget_space")?;
        // SAFETY: as above.
        let dcpl = Id::new(
            unsafe { h5d::H5Dget_create_plist(ds) },
            context,
            "H5Dget_create_plist",
        )?;
        let mut dims = [0 as hsize_t; 32];
        // SAFETY: HDF5 writes at most 32 dims (its own maximum rank); maxdims not asked for.
        let rank = unsafe {
            h5s::H5Sget_simple_extent_dims(space.raw(), dims.as_mut_ptr(), std::ptr::null_mut())
        };
        let rank = usize::try_from(check(rank, context, "H5Sget_simple_extent_dims")?)
            .unwrap_or(0)
            .min(32);
        let shape = dims[..rank]
            .iter()
            .map(|&d| {
                usize::try_from(d).map_err(|_| {
                    let dim = Error::range("dim", d, Expected::at_most(usize::MAX));
                    Error::in_file(context, dim)
                })
            })
            .collect::<Result<_>>()?;
        Ok(Described {
            type_id,
            shape,
            dcpl,
        })
    })
}

/// The size of datatype `type_id` in bytes (`H5Tget_size`; 0 on failure).
pub(super) fn type_size(type_id: Hid) -> usize {
    // SAFETY: HDF5 checks the identifier and returns 0 for a bad one.
    sync(|| unsafe { h5t::H5Tget_size(type_id) })
}

/// Bytes dataset `ds` takes in the file (`H5Dget_storage_size`).
pub(super) fn storage_size(ds: Hid) -> u64 {
    // SAFETY: `ds` is an open dataset; HDF5 returns 0 on failure.
    sync(|| unsafe { h5d::H5Dget_storage_size(ds) })
}

/// The chunk dims of `dcpl` when the dataset is chunked.
pub(super) fn chunk_dims(dcpl: Hid) -> Option<Vec<u64>> {
    sync(|| {
        // SAFETY: `dcpl` is an open dataset creation property list.
        if unsafe { h5p::H5Pget_layout(dcpl) } != H5D_layout_t::H5D_CHUNKED {
            return None;
        }
        let mut dims = [0 as hsize_t; 32];
        // SAFETY: HDF5 writes at most 32 dims.
        let rank = unsafe { h5p::H5Pget_chunk(dcpl, 32, dims.as_mut_ptr()) };
        let rank = usize::try_from(rank).ok().filter(|&r| r <= 32)?;
        Some(dims[..rank].to_vec())
    })
}

/// One filter of a dataset's pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    /// The filter ID (1 deflate, 2 shuffle, 3 Fletcher32, 32026 Blosc2…).
    pub id: i32,
    /// Its name as stored in the file.
    pub name: String,
    /// `H5Z_FLAG_OPTIONAL` and friends.
    pub flags: u32,
    /// Its `cd_values`.
    pub cd_values: Vec<u32>,
}

/// The filter pipeline of `dcpl`, in the order HDF5 applies it on write.
pub(super) fn filters(dcpl: Hid, context: &str) -> Result<Vec<Filter>> {
    sync(|| {
        // SAFETY: `dcpl` is an open dataset creation property list.
        let r = unsafe { h5p::H5Pget_nfilters(dcpl) };
        let n = check(r, context, "H5Pget_nfilters")?;
        (0..n as c_uint)
            .map(|i| {
                let mut flags: c_uint = 0;
                let mut values = [0 as c_uint; MAX_CD_VALUES];
                let mut nvalues = values.len();
                let mut name = [0 as c_char; 256];
                // SAFETY: the buffers' sizes are passed; HDF5 NUL-terminates the name.
                let id = unsafe {
                    h5p::H5Pget_filter2(
                        dcpl,
                        i,
                        &mut flags,
                        &mut nvalues,
                        values.as_mut_ptr(),
                        name.len(),
                        name.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                };
                let id = check(id, context, "H5Pget_filter2")?;
                // SAFETY: HDF5 wrote a NUL-terminated name into `name`.
                let name = unsafe { CStr::from_ptr(name.as_ptr()) }
                    .to_string_lossy()
                    .into_owned();
                Ok(Filter {
                    id,
                    name,
                    flags,
                    cd_values: values[..nvalues.min(values.len())].to_vec(),
                })
            })
            .collect()
    })
}

/// The fill value of a dataset (`H5Pget_fill_value` in its own type), zeros when undefined.
pub(super) fn fill_value(dcpl: Hid, type_id: Hid, size: usize, context: &str) -> Result<Vec<u8>> {
    sync(|| {
        let mut state = H5D_fill_value_t::H5D_FILL_VALUE_ERROR;
        // SAFETY: `dcpl` is open; HDF5 writes the state.
        let r = unsafe { h5p::H5Pfill_value_defined(dcpl, &mut state) };
        check(r, context, "H5Pfill_value_defined")?;
        let mut value = vec![0u8; size];
        if state != H5D_fill_value_t::H5D_FILL_VALUE_UNDEFINED {
            // SAFETY: `value` holds one item of `type_id` (`size` = H5Tget_size(type_id)).
            let r = unsafe { h5p::H5Pget_fill_value(dcpl, type_id, value.as_mut_ptr().cast()) };
            check(r, context, "H5Pget_fill_value")?;
        }
        Ok(value)
    })
}

/// Where a stored chunk is: its address as this libhdf5 reports it, its stored size and its
/// filter mask (bit `i` set: filter `i` of the pipeline was skipped for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ChunkInfo {
    pub(super) addr: u64,
    pub(super) size: u64,
    pub(super) filter_mask: u32,
}

/// Marks the descriptor through which HDF5 reads `file` close-on-exec (that of the default
/// `sec2` driver; files of other drivers are left as they are). HDF5 opens files without
/// `O_CLOEXEC` and locks them with `flock`, a lock that lasts while any process holds the
/// descriptor: a child process started while the file is open would keep it locked after
/// Strata has closed it, and the next open for writing would fail ("unable to lock file").
pub(super) fn close_on_exec(file: &hdf5_metno::File) {
    let sec2 = file.access_plist().is_ok_and(|fapl| {
        matches!(
            fapl.get_driver(),
            Ok(hdf5_metno::plist::file_access::FileDriver::Sec2)
        )
    });
    if !sec2 {
        return;
    }
    sync(|| {
        let mut handle: *mut c_void = std::ptr::null_mut();
        // SAFETY: `file` is an open file; HDF5 writes the driver's handle into `handle`.
        let r =
            unsafe { hdf5_metno_sys::h5f::H5Fget_vfd_handle(file.id(), H5P_DEFAULT, &mut handle) };
        if r < 0 || handle.is_null() {
            return;
        }
        // SAFETY: the sec2 driver's handle points to its `int` file descriptor, alive while
        // the file is open (it is: `file` is borrowed).
        let fd = unsafe { *handle.cast::<c_int>() };
        // SAFETY: fcntl on a descriptor the process holds reads and sets only its flags.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    });
}

/// The chunk that starts at item `offset` of dataset `ds`, by coordinate
/// (`H5Dget_chunk_info_by_coord`); `None` when it is not stored.
pub(super) fn chunk_info(ds: Hid, offset: &[u64], context: &str) -> Result<Option<ChunkInfo>> {
    sync(|| {
        let (mut mask, mut addr, mut size) = (0 as c_uint, HADDR_UNDEF, 0 as hsize_t);
        // SAFETY: `offset` has one entry per dimension of `ds`; HDF5 writes the three values.
        let r = unsafe {
            h5d::H5Dget_chunk_info_by_coord(ds, offset.as_ptr(), &mut mask, &mut addr, &mut size)
        };
        check(r, context, "H5Dget_chunk_info_by_coord")?;
        Ok((addr != HADDR_UNDEF).then_some(ChunkInfo {
            addr,
            size,
            filter_mask: mask,
        }))
    })
}

/// Stores `bytes` as the chunk at `offset` with `filter_mask` (`H5Dwrite_chunk`).
pub(super) fn write_chunk(
    ds: Hid,
    offset: &[u64],
    filter_mask: u32,
    bytes: &[u8],
    context: &str,
) -> Result<()> {
    sync(|| {
        // SAFETY: HDF5 reads `bytes.len()` bytes; `offset` has one entry per dimension.
        let r = unsafe {
            h5d::H5Dwrite_chunk(
                ds,
                H5P_DEFAULT,
                filter_mask,
                offset.as_ptr(),
                bytes.len(),
                bytes.as_ptr().cast(),
            )
        };
        check(r, context, "H5Dwrite_chunk").map(|_| ())
    })
}

/// The items `start + k * stride` (`k < count`, per dimension) of dataset `ds`, read by
/// HDF5 itself (its filters, its chunk cache) in the dataset's own type, C order.
pub(super) fn read_selection(
    ds: Hid,
    type_id: Hid,
    typesize: usize,
    start: &[u64],
    stride: &[u64],
    count: &[u64],
    context: &str,
) -> Result<Vec<u8>> {
    let n = count
        .iter()
        .try_fold(typesize, |a, &c| a.checked_mul(usize::try_from(c).ok()?))
        .ok_or(Error::MemoryAlloc(usize::MAX))?;
    let mut out = crate::alloc::zeroed(n)?;
    if n == 0 {
        return Ok(out);
    }
    sync(|| {
        // SAFETY: `ds` is open; the identifiers returned are owned by `Id`s.
        let file_space = Id::new(unsafe { h5d::H5Dget_space(ds) }, context, "H5Dget_space")?;
        let rank = c_int::try_from(count.len()).unwrap_or(c_int::MAX);
        // SAFETY: `count` has `rank` entries.
        let mem_space = Id::new(
            unsafe { h5s::H5Screate_simple(rank, count.as_ptr(), std::ptr::null()) },
            context,
            "H5Screate_simple",
        )?;
        if !count.is_empty() {
            // SAFETY: start, stride and count have one entry per dimension of the dataset.
            let r = unsafe {
                h5s::H5Sselect_hyperslab(
                    file_space.raw(),
                    H5S_seloper_t::H5S_SELECT_SET,
                    start.as_ptr(),
                    stride.as_ptr(),
                    count.as_ptr(),
                    std::ptr::null(),
                )
            };
            check(r, context, "H5Sselect_hyperslab")?;
        }
        let (mspace, fspace) = if count.is_empty() {
            (H5S_ALL, H5S_ALL)
        } else {
            (mem_space.raw(), file_space.raw())
        };
        // SAFETY: `out` holds the selection's items in `type_id`, the dataset's own type.
        let r = unsafe {
            h5d::H5Dread(
                ds,
                type_id,
                mspace,
                fspace,
                H5P_DEFAULT,
                out.as_mut_ptr().cast(),
            )
        };
        check(r, context, "H5Dread")?;
        Ok(out)
    })
}

/// The NumPy dtype string of HDF5 datatype `type_id`: `"<f4"`, `"|u1"`, `"|S10"`, `"|V16"`
/// (opaque, bitfield, time and reference types), `"('<f4', (3,))"` for array types, the
/// base type of an enum, and for compounds NumPy's list form when the members are packed in
/// order, the dict form with offsets otherwise.
///
/// # Errors
/// [`Error::Unsupported`] (in an [`Error::InFile`] naming the dataset) for types without
/// fixed-size items (variable-length strings and sequences).
pub(super) fn numpy_dtype(type_id: Hid, context: &str) -> Result<String> {
    sync(|| dtype_of(type_id, context))
}

fn dtype_of(t: Hid, context: &str) -> Result<String> {
    // SAFETY: `t` is an open datatype; each call only reads it.
    let (class, size) = unsafe { (h5t::H5Tget_class(t), h5t::H5Tget_size(t)) };
    // SAFETY: as above.
    let order = || match unsafe { h5t::H5Tget_order(t) } {
        _ if size == 1 => '|',
        H5T_order_t::H5T_ORDER_BE => '>',
        _ => '<',
    };
    let unsupported =
        |what: &'static str| Err(Error::in_file(context, Error::Unsupported { what }));
    Ok(match class {
        H5T_class_t::H5T_INTEGER => {
            // SAFETY: as above.
            let signed = unsafe { h5t::H5Tget_sign(t) } == H5T_sign_t::H5T_SGN_2;
            format!("{}{}{size}", order(), if signed { 'i' } else { 'u' })
        }
        H5T_class_t::H5T_FLOAT => format!("{}f{size}", order()),
        H5T_class_t::H5T_STRING => {
            // SAFETY: as above.
            if unsafe { h5t::H5Tis_variable_str(t) } > 0 {
                return unsupported("variable-length strings have no fixed-size items");
            }
            format!("|S{size}")
        }
        H5T_class_t::H5T_VLEN => {
            return unsupported("variable-length sequences have no fixed-size items")
        }
        H5T_class_t::H5T_ENUM | H5T_class_t::H5T_ARRAY => {
            // SAFETY: enums and arrays have a base type, a new identifier owned by `Id`.
            let base = Id::new(unsafe { h5t::H5Tget_super(t) }, context, "H5Tget_super")?;
            let base_dtype = dtype_of(base.raw(), context)?;
            if class == H5T_class_t::H5T_ENUM {
                base_dtype
            } else {
                // SAFETY: `t` is an array type.
                let ndims = unsafe { h5t::H5Tget_array_ndims(t) };
                let mut dims = [0 as hsize_t; 32];
                if !(0..=32).contains(&ndims) {
                    return Err(h5_error(context, "H5Tget_array_ndims"));
                }
                // SAFETY: `dims` holds the array type's `ndims` <= 32 dims.
                let r = unsafe { h5t::H5Tget_array_dims2(t, dims.as_mut_ptr()) };
                check(r, context, "H5Tget_array_dims2")?;
                format!(
                    "({}, {})",
                    quoted(&base_dtype),
                    tuple(&dims[..ndims as usize])
                )
            }
        }
        H5T_class_t::H5T_COMPOUND => compound_dtype(t, size, context)?,
        _ => format!("|V{size}"),
    })
}

/// `'<f4'` for a typestr, the repr itself for a structured or subarray dtype.
fn quoted(dtype: &str) -> String {
    if dtype.starts_with(['[', '{', '(']) {
        dtype.to_string()
    } else {
        format!("'{dtype}'")
    }
}

fn tuple(dims: &[u64]) -> String {
    match dims {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            dims.iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn compound_dtype(t: Hid, size: usize, context: &str) -> Result<String> {
    // SAFETY: `t` is a compound type.
    let r = unsafe { h5t::H5Tget_nmembers(t) };
    let n = check(r, context, "H5Tget_nmembers")?;
    let mut fields = Vec::new();
    for i in 0..n as c_uint {
        // SAFETY: member `i` < n exists; the name is HDF5-allocated, freed below.
        let name_ptr = unsafe { h5t::H5Tget_member_name(t, i) };
        if name_ptr.is_null() {
            return Err(h5_error(context, "H5Tget_member_name"));
        }
        // SAFETY: a NUL-terminated string from HDF5.
        let name = unsafe { CStr::from_ptr(name_ptr) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: HDF5 allocated the name; it is freed once.
        unsafe { H5free_memory(name_ptr.cast()) };
        // SAFETY: as above.
        let offset = unsafe { h5t::H5Tget_member_offset(t, i) };
        // SAFETY: a new identifier, owned by `Id`.
        let member = Id::new(
            unsafe { h5t::H5Tget_member_type(t, i) },
            context,
            "H5Tget_member_type",
        )?;
        // SAFETY: as above.
        let msize = unsafe { h5t::H5Tget_size(member.raw()) };
        fields.push((
            name.replace('\'', "\\'"),
            offset,
            msize,
            dtype_of(member.raw(), context)?,
        ));
    }
    let mut packed_end = 0;
    let packed = fields.iter().all(|(_, off, msize, _)| {
        let ok = *off == packed_end;
        packed_end += msize;
        ok
    }) && packed_end == size;
    if packed {
        let items: Vec<String> = fields
            .iter()
            .map(
                |(name, _, _, d)| match d.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
                    // A subarray member: ('name', '<f4', (3,))
                    Some(inner) if !d.starts_with("((") => format!("('{name}', {inner})"),
                    _ => format!("('{name}', {})", quoted(d)),
                },
            )
            .collect();
        return Ok(format!("[{}]", items.join(", ")));
    }
    let names: Vec<String> = fields.iter().map(|(n, ..)| format!("'{n}'")).collect();
    let formats: Vec<String> = fields.iter().map(|(.., d)| quoted(d)).collect();
    let offsets: Vec<String> = fields.iter().map(|(_, o, ..)| o.to_string()).collect();
    Ok(format!(
        "{{'names': [{}], 'formats': [{}], 'offsets': [{}], 'itemsize': {size}}}",
        names.join(", "),
        formats.join(", "),
        offsets.join(", ")
    ))
}

/// A new HDF5 datatype for the NumPy typestr `dtype`: integers, floats (`f4`, `f8`), booleans
/// (an enum of `i1` as h5py writes them), complex (a compound of `r` and `i`, as h5py), fixed
/// strings `S<n>` and opaque `V<n>`, in either byte order.
///
/// # Errors
/// [`Error::Dtype`] for other dtypes (structured, Unicode, datetime, half floats).
pub(super) fn h5_type(dtype: &str) -> Result<Id> {
    let bad = || Error::Dtype {
        dtype: dtype.to_owned(),
        why: "has no HDF5 type Strata writes".into(),
        at: None,
    };
    let (order, rest) = match dtype.chars().next() {
        Some(c @ ('<' | '>' | '|' | '=')) => (c, &dtype[1..]),
        _ => ('=', dtype),
    };
    let big = order == '>' || (order == '=' && cfg!(target_endian = "big"));
    let kind = rest.chars().next().ok_or_else(bad)?;
    let size: usize = rest[1..].parse().map_err(|_| bad())?;
    sync(|| {
        let predefined = |le: Hid, be: Hid| -> Result<Id> {
            // SAFETY: a predefined type, valid after H5open (which hdf5-metno's lock runs),
            // copied into a new identifier owned by `Id`.
            let t = unsafe { h5t::H5Tcopy(if big { be } else { le }) };
            Id::new(t, dtype, "H5Tcopy")
        };
        use hdf5_metno_sys::h5t::*;
        Ok(match (kind, size) {
            ('i', 1) => predefined(*H5T_STD_I8LE, *H5T_STD_I8BE)?,
            ('i', 2) => predefined(*H5T_STD_I16LE, *H5T_STD_I16BE)?,
            ('i', 4) => predefined(*H5T_STD_I32LE, *H5T_STD_I32BE)?,
            ('i', 8) => predefined(*H5T_STD_I64LE, *H5T_STD_I64BE)?,
            ('u', 1) => predefined(*H5T_STD_U8LE, *H5T_STD_U8BE)?,
            ('u', 2) => predefined(*H5T_STD_U16LE, *H5T_STD_U16BE)?,
            ('u', 4) => predefined(*H5T_STD_U32LE, *H5T_STD_U32BE)?,
            ('u', 8) => predefined(*H5T_STD_U64LE, *H5T_STD_U64BE)?,
            ('f', 4) => predefined(*H5T_IEEE_F32LE, *H5T_IEEE_F32BE)?,
            ('f', 8) => predefined(*H5T_IEEE_F64LE, *H5T_IEEE_F64BE)?,
            ('b', 1) => {
                // SAFETY: a new enum type over int8, owned by `Id`; members inserted by value.
                let t = Id::new(
                    unsafe { H5Tenum_create(*H5T_STD_I8LE) },
                    dtype,
                    "H5Tenum_create",
                )?;
                for (name, value) in [(c"FALSE", 0i8), (c"TRUE", 1i8)] {
                    // SAFETY: `value` is one int8, the enum's base type.
                    let r = unsafe {
                        H5Tenum_insert(t.raw(), name.as_ptr(), (&raw const value).cast())
                    };
                    check(r, dtype, "H5Tenum_insert")?;
                }
                t
            }
            ('c', 8 | 16) => {
                let part = if size == 8 {
                    predefined(*H5T_IEEE_F32LE, *H5T_IEEE_F32BE)?
                } else {
                    predefined(*H5T_IEEE_F64LE, *H5T_IEEE_F64BE)?
                };
                // SAFETY: a new compound type of `size` bytes, owned by `Id`.
                let t = Id::new(
                    unsafe { H5Tcreate(H5T_class_t::H5T_COMPOUND, size) },
                    dtype,
                    "H5Tcreate",
                )?;
                for (name, offset) in [(c"r", 0), (c"i", size / 2)] {
                    // SAFETY: the member fits in the compound (offset + size / 2 <= size).
                    let r = unsafe { H5Tinsert(t.raw(), name.as_ptr(), offset, part.raw()) };
                    check(r, dtype, "H5Tinsert")?;
                }
                t
            }
            ('S', n) if n > 0 => {
                let t = predefined(*H5T_C_S1, *H5T_C_S1)?;
                // SAFETY: `t` is a copied string type, modified in place.
                check(unsafe { H5Tset_size(t.raw(), n) }, dtype, "H5Tset_size")?;
                // SAFETY: as above.
                let r = unsafe { H5Tset_strpad(t.raw(), H5T_str_t::H5T_STR_NULLPAD) };
                check(r, dtype, "H5Tset_strpad")?;
                t
            }
            ('V', n) if n > 0 => {
                // SAFETY: a new opaque type of `n` bytes, owned by `Id`.
                let t = unsafe { H5Tcreate(H5T_class_t::H5T_OPAQUE, n) };
                Id::new(t, dtype, "H5Tcreate")?
            }
            _ => return Err(bad()),
        })
    })
}

/// Creates dataset `name` under `loc` (a file or group; missing groups on the way are
/// created) of `type_id`, `shape` and chunks `chunk_dims`, whose pipeline is the Blosc2 filter
/// (optional, as h5py and hdf5plugin add it) with `cd_values`; the chunks are written
/// directly afterwards. No fill value is written (`H5D_FILL_TIME_NEVER`) and chunks are
/// allocated as they come.
pub(super) fn create_dataset(
    loc: Hid,
    name: &str,
    type_id: Hid,
    shape: &[u64],
    chunk_dims: &[u64],
    cd_values: &[u32],
    context: &str,
) -> Result<Id> {
    let cname = CString::new(name).map_err(|_| Error::Unsupported {
        what: "a dataset name holds a NUL byte",
    })?;
    let rank = c_int::try_from(shape.len())
        .map_err(|_| Error::range("rank", shape.len(), Expected::at_most(c_int::MAX)))?;
    sync(|| {
        // SAFETY: `shape` has `rank` entries; the identifiers returned are owned by `Id`s.
        let space = Id::new(
            unsafe { h5s::H5Screate_simple(rank, shape.as_ptr(), std::ptr::null()) },
            context,
            "H5Screate_simple",
        )?;
        // SAFETY: the class global is valid after H5open.
        let dcpl = Id::new(
            unsafe { h5p::H5Pcreate(*H5P_CLS_DATASET_CREATE) },
            context,
            "H5Pcreate",
        )?;
        // SAFETY: `chunk_dims` has `rank` entries.
        let r = unsafe { h5p::H5Pset_chunk(dcpl.raw(), rank, chunk_dims.as_ptr()) };
        check(r, context, "H5Pset_chunk")?;
        // SAFETY: HDF5 copies `cd_values.len()` values; an optional filter may be unregistered.
        let r = unsafe {
            h5p::H5Pset_filter(
                dcpl.raw(),
                FILTER_ID,
                H5Z_FLAG_OPTIONAL,
                cd_values.len(),
                cd_values.as_ptr(),
            )
        };
        check(r, context, "H5Pset_filter")?;
        // SAFETY: `dcpl` is a dataset creation property list.
        let r =
            unsafe { h5p::H5Pset_fill_time(dcpl.raw(), h5d::H5D_fill_time_t::H5D_FILL_TIME_NEVER) };
        check(r, context, "H5Pset_fill_time")?;
        // SAFETY: the class global is valid after H5open.
        let lcpl = Id::new(
            unsafe { h5p::H5Pcreate(*h5p::H5P_CLS_LINK_CREATE) },
            context,
            "H5Pcreate",
        )?;
        // SAFETY: `lcpl` is a link creation property list: groups on the way are created.
        let r = unsafe { h5p::H5Pset_create_intermediate_group(lcpl.raw(), 1) };
        check(r, context, "H5Pset_create_intermediate_group")?;
        // SAFETY: `loc`, `type_id`, `space`, `lcpl` and `dcpl` are open; the name is
        // NUL-terminated.
        let ds = unsafe {
            h5d::H5Dcreate2(
                loc,
                cname.as_ptr(),
                type_id,
                space.raw(),
                lcpl.raw(),
                dcpl.raw(),
                H5P_DEFAULT,
            )
        };
        Id::new(ds, context, "H5Dcreate2")
    })
}

/// The Blosc2 filter's host when Strata itself registers the filter in the libhdf5 it links.
struct Linked;

impl Host for Linked {
    fn filter_values(&self, dcpl: Hid) -> Option<(c_uint, Vec<u32>)> {
        let mut flags: c_uint = 0;
        let mut values = [0 as c_uint; MAX_CD_VALUES];
        let mut n = values.len();
        // SAFETY: `n` tells HDF5 how many values fit; the name buffer is not asked for.
        let r = unsafe {
            h5p::H5Pget_filter_by_id2(
                dcpl,
                FILTER_ID,
                &mut flags,
                &mut n,
                values.as_mut_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        (r >= 0).then(|| (flags, values[..n.min(values.len())].to_vec()))
    }

    fn modify_filter(&self, dcpl: Hid, flags: c_uint, values: &[u32]) -> bool {
        // SAFETY: HDF5 copies `values.len()` values.
        unsafe { h5p::H5Pmodify_filter(dcpl, FILTER_ID, flags, values.len(), values.as_ptr()) >= 0 }
    }

    fn chunk_dims(&self, dcpl: Hid) -> Option<Vec<u64>> {
        chunk_dims(dcpl)
    }

    fn type_sizes(&self, type_id: Hid) -> (usize, usize) {
        // SAFETY: HDF5 checks the identifier and returns 0 / a negative class for bad ones.
        let (size, class) = unsafe { (h5t::H5Tget_size(type_id), h5t::H5Tget_class(type_id)) };
        if class != H5T_class_t::H5T_ARRAY {
            return (size, size);
        }
        // SAFETY: an array type has a base type, a new identifier closed by `Id`.
        match Id::new(unsafe { h5t::H5Tget_super(type_id) }, "", "H5Tget_super") {
            // SAFETY: as above.
            Ok(base) => (size, unsafe { h5t::H5Tget_size(base.raw()) }),
            Err(_) => (size, 0),
        }
    }

    fn allocate(&self, len: usize) -> *mut u8 {
        // SAFETY: HDF5's malloc (calloc: `clear` set).
        unsafe { H5allocate_memory(len.max(1), 1 as _) }.cast()
    }

    unsafe fn free(&self, ptr: *mut c_void) {
        // SAFETY: the caller passes a pointer from HDF5's allocator.
        unsafe { H5free_memory(ptr) };
    }

    fn push_error(&self, func: &CStr, message: &str) {
        let msg = CString::new(message.replace('\0', " ")).unwrap_or_default();
        // SAFETY: a printf format "%s" with one C string; the class and message IDs are
        // HDF5's globals, valid after H5open.
        unsafe {
            H5Epush2(
                H5E_DEFAULT,
                c"strata/hdf5".as_ptr(),
                func.as_ptr(),
                line!(),
                *H5E_ERR_CLS,
                *H5E_PLINE,
                *H5E_CALLBACK,
                c"%s".as_ptr(),
                msg.as_ptr(),
            )
        };
    }
}

extern "C" fn linked_set_local(dcpl: Hid, type_id: Hid, _space: Hid) -> c_int {
    filter::set_local(&Linked, dcpl, type_id)
}

extern "C" fn linked_filter(
    flags: c_uint,
    cd_nelmts: usize,
    cd_values: *const c_uint,
    nbytes: usize,
    buf_size: *mut usize,
    buf: *mut *mut c_void,
) -> usize {
    // SAFETY: only HDF5 calls this (it is the registered class's filter), with the
    // arguments `filter::run` requires, passed on unchanged.
    unsafe { filter::run(&Linked, flags, cd_nelmts, cd_values, nbytes, buf_size, buf) }
}

/// Registers Strata's Blosc2 filter in the linked libhdf5, unless a filter 32026 is already
/// there (a plugin loaded earlier), so that HDF5's own reads and writes of 32026 datasets
/// work in this process: the direct path's fallback, datasets with other filters.
pub(super) fn register_filter() -> Result<()> {
    struct Class(H5Z_class2_t);
    // SAFETY: the class is immutable; its name points to a static string.
    unsafe impl Sync for Class {}
    static CLASS: Class = Class(H5Z_class2_t {
        version: h5z::H5Z_CLASS_T_VERS as c_int,
        id: FILTER_ID,
        encoder_present: 1,
        decoder_present: 1,
        name: c"blosc2 (Strata)".as_ptr(),
        can_apply: None,
        set_local: Some(linked_set_local),
        filter: Some(linked_filter),
    });
    sync(|| {
        // SAFETY: H5Zfilter_avail only looks the ID up.
        if unsafe { h5z::H5Zfilter_avail(FILTER_ID) } > 0 {
            return Ok(());
        }
        // SAFETY: HDF5 copies the class, which is static anyway.
        let r = unsafe { h5z::H5Zregister((&raw const CLASS.0).cast()) };
        check(r, "HDF5", "H5Zregister").map(|_| ())
    })
}
