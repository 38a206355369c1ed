//! The callbacks of the Blosc2 filter class, for any libhdf5 that runs them: the plugin
//! library (`plugins/hdf5`, which finds its host's functions at run time) and Strata's own
//! registration in the libhdf5 it links (feature `hdf5`) both call [`set_local`] and [`run`]
//! with a [`Host`].
//!
//! `set_local` stores a new dataset's `cd_values` ([`super::cd::set_local`]): the revision,
//! typesize, chunk bytes, C-Blosc2's defaults where the user gave none, and the chunk's rank
//! and dims for ranks 2 to 8.
//!
//! The filter takes HDF5's buffer `*buf` (`nbytes` valid bytes) and, on success, frees it with
//! the host's allocator, puts a buffer from the same allocator in its place, sets `*buf_size`
//! to that buffer's size (never less than the bytes returned: HDF5 2.2 checks) and returns the
//! valid bytes in it. On failure it returns 0 with `*buf` and `*buf_size` untouched and the
//! reason on HDF5's error stack (never on stderr). No panic unwinds into HDF5.
//!
//! Format: HDF5's `H5Zdevelop.h` (`H5Z_func_t`); `docs/hdf5.md`.
#![allow(unsafe_code)]

use super::cd;
use super::chunk::{decode, encode, Output};
use crate::error::{Error, Result};
use std::ffi::{c_int, c_uint, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// `H5Z_FLAG_REVERSE`: the filter runs on read (decompresses).
pub const H5Z_FLAG_REVERSE: c_uint = 0x0100;
/// HDF5's `hid_t` (64-bit since 1.10).
pub type Hid = i64;

/// What the filter needs from the libhdf5 that runs it.
pub trait Host {
    /// The flags and `cd_values` of filter [`cd::FILTER_ID`] in the dataset creation property
    /// list `dcpl` (`H5Pget_filter_by_id2`), at most [`cd::MAX_CD_VALUES`] of them.
    fn filter_values(&self, dcpl: Hid) -> Option<(c_uint, Vec<u32>)>;

    /// Replaces them (`H5Pmodify_filter`); false on failure.
    fn modify_filter(&self, dcpl: Hid, flags: c_uint, values: &[u32]) -> bool;

    /// The chunk dims of `dcpl` (`H5Pget_chunk`).
    fn chunk_dims(&self, dcpl: Hid) -> Option<Vec<u64>>;

    /// The size of datatype `type_id` and of its base type when it is an array type (else the
    /// same size twice); 0 on failure.
    fn type_sizes(&self, type_id: Hid) -> (usize, usize);

    /// A zeroed buffer of `len` bytes (at least 1) from HDF5's allocator; null on failure.
    fn allocate(&self, len: usize) -> *mut u8;

    /// Frees a buffer from HDF5's allocator.
    ///
    /// # Safety
    /// `ptr` comes from this host's allocator and is not used afterwards.
    unsafe fn free(&self, ptr: *mut c_void);

    /// Pushes `message` on HDF5's error stack, as a pipeline failure of `func`.
    fn push_error(&self, func: &CStr, message: &str);
}

/// `set_local` (HDF5's `H5Z_set_local_func_t`): 1 on success, -1 with the reason on HDF5's
/// error stack.
pub fn set_local(host: &dyn Host, dcpl: Hid, type_id: Hid) -> c_int {
    let body = || -> std::result::Result<(), String> {
        let (flags, given) = host
            .filter_values(dcpl)
            .ok_or("cannot read the filter's cd_values")?;
        let dims = host.chunk_dims(dcpl).ok_or("the dataset is not chunked")?;
        let (type_size, base_size) = host.type_sizes(type_id);
        let values =
            cd::set_local(&given, base_size, type_size, &dims).map_err(|e| e.to_string())?;
        if host.modify_filter(dcpl, flags, &values) {
            Ok(())
        } else {
            Err("cannot store the filter's cd_values".into())
        }
    };
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => 1,
        Ok(Err(e)) => {
            host.push_error(c"blosc2_set_local", &e);
            -1
        }
        Err(_) => {
            host.push_error(
                c"blosc2_set_local",
                "Strata panicked (a bug; please report it)",
            );
            -1
        }
    }
}

/// A buffer from the host's allocator, freed on drop unless taken.
struct HostBuffer<'a> {
    host: &'a dyn Host,
    ptr: *mut u8,
    len: usize,
}

impl<'a> HostBuffer<'a> {
    fn new(host: &'a dyn Host) -> Self {
        HostBuffer {
            host,
            ptr: std::ptr::null_mut(),
            len: 0,
        }
    }

    fn release(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: `ptr` came from this host's allocator and is no longer borrowed.
            unsafe { self.host.free(self.ptr.cast()) };
            self.ptr = std::ptr::null_mut();
        }
    }

    /// The buffer and its size, no longer owned here.
    fn take(mut self) -> (*mut u8, usize) {
        let out = (self.ptr, self.len);
        self.ptr = std::ptr::null_mut();
        out
    }
}

impl Output for HostBuffer<'_> {
    fn alloc(&mut self, len: usize) -> Result<&mut [u8]> {
        self.release();
        let ptr = self.host.allocate(len);
        if ptr.is_null() {
            return Err(Error::MemoryAlloc(len));
        }
        self.ptr = ptr;
        self.len = len;
        // SAFETY: `ptr` is a fresh, zeroed allocation of at least `len` bytes, owned here.
        Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
    }
}

impl Drop for HostBuffer<'_> {
    fn drop(&mut self) {
        self.release();
    }
}

/// The filter function (HDF5's `H5Z_func_t`): decodes (`H5Z_FLAG_REVERSE` in `flags`) or
/// encodes the chunk in `*buf` ([`decode`], [`encode`]).
///
/// # Safety
/// The arguments are those HDF5 passes a filter: `cd_values` points to `cd_nelmts` values (or
/// `cd_nelmts` is 0), `*buf` is a buffer of `host`'s allocator holding `nbytes` valid bytes,
/// and `buf_size` and `buf` may be written.
pub unsafe fn run(
    host: &dyn Host,
    flags: c_uint,
    cd_nelmts: usize,
    cd_values: *const c_uint,
    nbytes: usize,
    buf_size: *mut usize,
    buf: *mut *mut c_void,
) -> usize {
    let body = || -> Option<usize> {
        let cd: &[u32] = if cd_values.is_null() || cd_nelmts == 0 {
            &[]
        } else {
            // SAFETY: HDF5 passes `cd_nelmts` values at `cd_values`.
            unsafe { std::slice::from_raw_parts(cd_values, cd_nelmts) }
        };
        // SAFETY: HDF5's chunk buffer, valid for `nbytes` bytes and HDF5's until replaced.
        let input = unsafe { std::slice::from_raw_parts((*buf).cast::<u8>(), nbytes) };
        let (func, result): (&CStr, _) = if flags & H5Z_FLAG_REVERSE != 0 {
            let mut out = HostBuffer::new(host);
            let r = decode(cd, input, &mut out).map(|n| (out.take(), n));
            (c"blosc2_filter (decompress)", r)
        } else {
            let r = encode(cd, input).and_then(|frame| {
                let mut out = HostBuffer::new(host);
                out.alloc(frame.len())?.copy_from_slice(&frame);
                Ok((out.take(), frame.len()))
            });
            (c"blosc2_filter (compress)", r)
        };
        match result {
            Ok(((ptr, len), n)) => {
                // SAFETY: `*buf` is HDF5's buffer from `host`'s allocator, replaced by ours
                // (`len` >= `n` bytes); `*buf_size` says how large ours is.
                unsafe {
                    host.free(*buf);
                    *buf = ptr.cast();
                    *buf_size = len;
                }
                Some(n)
            }
            Err(e) => {
                host.push_error(func, &e.to_string());
                None
            }
        }
    };
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(n) => n.unwrap_or(0),
        Err(_) => {
            host.push_error(
                c"blosc2_filter",
                "Strata panicked (a bug; please report it)",
            );
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A host over the system allocator that records what it was told.
    #[derive(Default)]
    struct TestHost {
        live: RefCell<Vec<usize>>,
        errors: RefCell<Vec<String>>,
    }

    impl Host for TestHost {
        fn filter_values(&self, _: Hid) -> Option<(c_uint, Vec<u32>)> {
            Some((1, vec![0, 0, 0, 0, 9, 2, 5]))
        }

        fn modify_filter(&self, _: Hid, flags: c_uint, values: &[u32]) -> bool {
            self.errors
                .borrow_mut()
                .push(format!("modified {flags} {values:?}"));
            true
        }

        fn chunk_dims(&self, dcpl: Hid) -> Option<Vec<u64>> {
            (dcpl > 0).then(|| vec![50, 60])
        }

        fn type_sizes(&self, _: Hid) -> (usize, usize) {
            (8, 8)
        }

        fn allocate(&self, len: usize) -> *mut u8 {
            // SAFETY: calloc of at least one byte.
            let p = unsafe { libc::calloc(len.max(1), 1) }.cast::<u8>();
            self.live.borrow_mut().push(p as usize);
            p
        }

        unsafe fn free(&self, ptr: *mut c_void) {
            self.live.borrow_mut().retain(|&p| p != ptr as usize);
            // SAFETY: the caller passes a pointer from `allocate` (or the test's own calloc).
            unsafe { libc::free(ptr) };
        }

        fn push_error(&self, func: &CStr, message: &str) {
            self.errors
                .borrow_mut()
                .push(format!("{}: {message}", func.to_string_lossy()));
        }
    }

    #[test]
    fn set_local_stores_the_values_or_says_why_not() {
        let host = TestHost::default();
        assert_eq!(set_local(&host, 1, 2), 1);
        assert_eq!(set_local(&host, 0, 2), -1);
        assert_eq!(
            *host.errors.borrow(),
            [
                "modified 1 [1, 0, 8, 24000, 9, 2, 5, 2, 50, 60]",
                "blosc2_set_local: the dataset is not chunked"
            ]
        );
    }

    fn hdf5_buffer(host: &TestHost, bytes: &[u8]) -> *mut c_void {
        let p = host.allocate(bytes.len());
        // SAFETY: `p` holds at least `bytes.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        p.cast()
    }

    #[test]
    fn a_chunk_goes_through_both_directions_with_the_buffer_replaced() {
        let host = TestHost::default();
        let cd = [1u32, 0, 4, 12_000, 5, 1, 5, 2, 50, 60];
        let data: Vec<u8> = (0..3000u32)
            .flat_map(|i| (i as f32).to_le_bytes())
            .collect();
        let mut buf = hdf5_buffer(&host, &data);
        let mut size = data.len();
        // SAFETY: the arguments as HDF5 passes them.
        let n = unsafe {
            run(
                &host,
                0,
                cd.len(),
                cd.as_ptr(),
                data.len(),
                &mut size,
                &mut buf,
            )
        };
        assert!(n > 0 && n < data.len() && size >= n);
        // SAFETY: as above, reading back what the filter wrote.
        let n = unsafe {
            run(
                &host,
                H5Z_FLAG_REVERSE,
                cd.len(),
                cd.as_ptr(),
                n,
                &mut size,
                &mut buf,
            )
        };
        assert_eq!(n, data.len());
        assert!(size >= n);
        // SAFETY: `buf` holds `n` bytes the filter wrote.
        let decoded = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), n) };
        assert_eq!(decoded, &data[..]);
        assert_eq!(host.live.borrow().len(), 1, "only the last buffer is alive");
        // SAFETY: the last buffer, from the host.
        unsafe { host.free(buf) };
    }

    #[test]
    fn tiny_chunks_report_the_frame_size_and_failures_leave_the_buffer() {
        let host = TestHost::default();
        let cd = [1u32, 0, 4, 4, 5, 1, 0];
        let mut buf = hdf5_buffer(&host, &1.5f32.to_le_bytes());
        let mut size = 4;
        // SAFETY: the arguments as HDF5 passes them.
        let n = unsafe { run(&host, 0, cd.len(), cd.as_ptr(), 4, &mut size, &mut buf) };
        assert!(
            n > 4 && size >= n,
            "a frame larger than the item: {n} in {size}"
        );
        let before = (buf, size);
        // Decoding 10 bytes of that frame fails: nothing is replaced, the reason is kept.
        // SAFETY: as above; 10 <= n bytes are valid.
        let r = unsafe {
            run(
                &host,
                H5Z_FLAG_REVERSE,
                cd.len(),
                cd.as_ptr(),
                10,
                &mut size,
                &mut buf,
            )
        };
        assert_eq!((r, buf, size), (0, before.0, before.1));
        let errors = host.errors.borrow();
        assert!(
            errors[0].starts_with("blosc2_filter (decompress): "),
            "{errors:?}"
        );
        // SAFETY: the buffer the host still owns.
        unsafe { host.free(buf) };
    }
}
