//! The host's HDF5: the `H5*` functions the filter calls, found at run time in the libhdf5 that
//! called into the plugin. The plugin links no libhdf5: a second copy (Debian's, beside the one
//! h5py bundles and loads privately) would not know the host's datatype and property-list
//! IDs.
//!
//! Which library called is found from the stack: the first return address outside this plugin
//! is in the HDF5 that runs the filter (or scans the plugin directory), and `dladdr` names its
//! file; `dlopen(RTLD_NOLOAD)` gives a handle on that very copy, whose `H5open` must lie in
//! it. Failing that (a frame without unwind information), the loaded `libhdf5*.so` objects
//! are searched, then the global scope. Each host found is kept, keyed by its load address,
//! so a process holding two HDF5 libraries (h5py's and PyTables') gets each its own functions.
//!
//! HDF5 1.10 or newer is required: 1.8's `hid_t` is 32 bits, so its callbacks have another ABI.
//! Only functions present from 1.10 through 2.x are used.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::{Mutex, OnceLock, PoisonError};
use strata::hdf5::cd::FILTER_ID;
use strata::hdf5::filter::{Hid, Host};

/// HDF5's `herr_t`.
pub type Herr = c_int;
/// `H5T_ARRAY`, HDF5's datatype class of fixed-size arrays.
pub const H5T_ARRAY: c_int = 10;

type TgetSize = unsafe extern "C" fn(Hid) -> usize;
type TgetClass = unsafe extern "C" fn(Hid) -> c_int;
type TgetSuper = unsafe extern "C" fn(Hid) -> Hid;
type Tclose = unsafe extern "C" fn(Hid) -> Herr;
type PgetChunk = unsafe extern "C" fn(Hid, c_int, *mut u64) -> c_int;
type PgetFilterById2 = unsafe extern "C" fn(
    Hid,
    c_int,
    *mut c_uint,
    *mut usize,
    *mut c_uint,
    usize,
    *mut c_char,
    *mut c_uint,
) -> Herr;
type PmodifyFilter = unsafe extern "C" fn(Hid, c_int, c_uint, usize, *const c_uint) -> Herr;
type Epush2 = unsafe extern "C" fn(
    Hid,
    *const c_char,
    *const c_char,
    c_uint,
    Hid,
    Hid,
    Hid,
    *const c_char,
    ...
) -> Herr;
// `hbool_t clear`: a C `bool` in some builds, an `int` in others; an int 0 or 1 reads the same
// either way.
type AllocateMemory = unsafe extern "C" fn(usize, c_int) -> *mut c_void;
type FreeMemory = unsafe extern "C" fn(*mut c_void) -> Herr;
type Open = unsafe extern "C" fn() -> Herr;
type GetLibversion = unsafe extern "C" fn(*mut c_uint, *mut c_uint, *mut c_uint) -> Herr;

/// The functions of one host libhdf5.
#[derive(Debug)]
pub struct Api {
    /// The library's load address (`dli_fbase`).
    base: usize,
    tget_size: TgetSize,
    tget_class: TgetClass,
    tget_super: TgetSuper,
    tclose: Tclose,
    pget_chunk: PgetChunk,
    pget_filter_by_id2: PgetFilterById2,
    pmodify_filter: PmodifyFilter,
    epush2: Epush2,
    allocate: AllocateMemory,
    free: FreeMemory,
    /// `H5E_ERR_CLS_g`, `H5E_PLINE_g`, `H5E_CALLBACK_g`: IDs the error stack needs.
    err_class: Hid,
    err_major: Hid,
    err_minor: Hid,
}

// SAFETY: the struct holds plain function pointers and integers; HDF5 serialises the calls.
unsafe impl Send for Api {}
// SAFETY: as above; nothing in it is mutated after resolution.
unsafe impl Sync for Api {}

/// `dladdr` of `addr`: (file name, load address) of the object that holds it.
fn object_of(addr: *const c_void) -> Option<(CString, usize)> {
    // SAFETY: Dl_info is plain data; dladdr only writes it.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr accepts any address and returns 0 when no object holds it.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fbase.is_null() {
        return None;
    }
    let name = if info.dli_fname.is_null() {
        CString::default()
    } else {
        // SAFETY: dladdr gives a NUL-terminated name that lives as long as the object.
        unsafe { CStr::from_ptr(info.dli_fname) }.to_owned()
    };
    Some((name, info.dli_fbase as usize))
}

/// This plugin's load address.
fn own_base() -> usize {
    static BASE: OnceLock<usize> = OnceLock::new();
    *BASE
        .get_or_init(|| object_of(own_base as fn() -> usize as *const c_void).map_or(0, |(_, b)| b))
}

#[repr(C)]
struct UnwindContext {
    _private: [u8; 0],
}
type UnwindTrace = extern "C" fn(*mut UnwindContext, *mut c_void) -> c_int;
// libgcc_s, which Rust's std links on Linux: the unwinder's stack walk.
unsafe extern "C" {
    fn _Unwind_Backtrace(trace: UnwindTrace, arg: *mut c_void) -> c_int;
    fn _Unwind_GetIP(ctx: *mut UnwindContext) -> usize;
}
const URC_NO_REASON: c_int = 0;
const URC_NORMAL_STOP: c_int = 4;
/// How many frames the walk looks at before giving up.
const MAX_FRAMES: usize = 48;

struct Walk {
    own: usize,
    frames: usize,
    /// The first return address outside the plugin (and the unwinder).
    foreign: Option<(CString, usize)>,
}

extern "C" fn visit(ctx: *mut UnwindContext, arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `Walk` that `caller_object` passed to `_Unwind_Backtrace`, alive
    // and not otherwise borrowed during the walk.
    let walk = unsafe { &mut *arg.cast::<Walk>() };
    walk.frames += 1;
    // SAFETY: `ctx` is the unwinder's context for this frame.
    let ip = unsafe { _Unwind_GetIP(ctx) };
    if ip == 0 || walk.frames > MAX_FRAMES {
        return URC_NORMAL_STOP;
    }
    // The return address points after the call; `ip - 1` lies inside the calling function.
    match object_of((ip - 1) as *const c_void) {
        Some((_, base)) if base == walk.own => URC_NO_REASON,
        Some((name, base)) if !name.to_bytes().windows(8).any(|w| w == b"libgcc_s") => {
            walk.foreign = Some((name, base));
            URC_NORMAL_STOP
        }
        _ => URC_NO_REASON,
    }
}

/// The object (file name, load address) of the first stack frame outside this plugin.
#[inline(never)]
fn caller_object() -> Option<(CString, usize)> {
    let mut walk = Walk {
        own: own_base(),
        frames: 0,
        foreign: None,
    };
    // SAFETY: `visit` only touches `walk` through `arg`, which outlives the call.
    unsafe { _Unwind_Backtrace(visit, (&raw mut walk).cast()) };
    walk.foreign
}

/// A handle on the loaded object `name` (the main program for an empty name), not loading
/// anything new.
fn noload(name: &CStr) -> *mut c_void {
    let path = if name.is_empty() {
        std::ptr::null()
    } else {
        name.as_ptr()
    };
    // SAFETY: RTLD_NOLOAD only returns objects already loaded, so no constructor runs.
    unsafe { libc::dlopen(path, libc::RTLD_LAZY | libc::RTLD_NOLOAD) }
}

fn sym(handle: *mut c_void, name: &CStr) -> Option<*mut c_void> {
    // SAFETY: `handle` is a dlopen handle or RTLD_DEFAULT; `name` is NUL-terminated.
    let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}

/// Resolves every function from `handle`; `base` is where `H5open` must lie (0: anywhere).
fn resolve(handle: *mut c_void, base: usize) -> Option<Api> {
    let open = sym(handle, c"H5open")?;
    let (_, open_base) = object_of(open)?;
    if base != 0 && open_base != base {
        return None;
    }
    macro_rules! func {
        ($name:literal, $ty:ty) => {{
            let p = sym(handle, $name)?;
            // SAFETY: the symbol is the HDF5 function of that name, whose C signature is `$ty`
            // in every HDF5 from 1.10 to 2.x.
            unsafe { std::mem::transmute::<*mut c_void, $ty>(p) }
        }};
    }
    let open = func!(c"H5open", Open);
    let libversion = func!(c"H5get_libversion", GetLibversion);
    let (mut major, mut minor, mut release) = (0, 0, 0);
    // SAFETY: H5open initialises the library (idempotent); the ID globals read below are
    // valid only after it. H5get_libversion writes three unsigned ints.
    if unsafe { open() } < 0 || unsafe { libversion(&mut major, &mut minor, &mut release) } < 0 {
        return None;
    }
    if (major, minor) < (1, 10) {
        return None;
    }
    let global = |name: &CStr| -> Option<Hid> {
        let p = sym(handle, name)?;
        // SAFETY: the symbol is one of HDF5's `hid_t` error-class globals, set by H5open.
        Some(unsafe { *p.cast::<Hid>() })
    };
    Some(Api {
        base: open_base,
        tget_size: func!(c"H5Tget_size", TgetSize),
        tget_class: func!(c"H5Tget_class", TgetClass),
        tget_super: func!(c"H5Tget_super", TgetSuper),
        tclose: func!(c"H5Tclose", Tclose),
        pget_chunk: func!(c"H5Pget_chunk", PgetChunk),
        pget_filter_by_id2: func!(c"H5Pget_filter_by_id2", PgetFilterById2),
        pmodify_filter: func!(c"H5Pmodify_filter", PmodifyFilter),
        epush2: func!(c"H5Epush2", Epush2),
        allocate: func!(c"H5allocate_memory", AllocateMemory),
        free: func!(c"H5free_memory", FreeMemory),
        err_class: global(c"H5E_ERR_CLS_g")?,
        err_major: global(c"H5E_PLINE_g")?,
        err_minor: global(c"H5E_CALLBACK_g")?,
    })
}

/// A loaded `libhdf5*.so*` (not the high-level, C++ or Fortran libraries), by its program
/// headers.
fn loaded_libhdf5() -> Option<CString> {
    extern "C" fn each(info: *mut libc::dl_phdr_info, _: usize, arg: *mut c_void) -> c_int {
        // SAFETY: the loader passes a valid dl_phdr_info; `arg` is the Option below.
        let (info, found) = unsafe { (&*info, &mut *arg.cast::<Option<CString>>()) };
        if info.dlpi_name.is_null() {
            return 0;
        }
        // SAFETY: dlpi_name is NUL-terminated while the object is loaded.
        let name = unsafe { CStr::from_ptr(info.dlpi_name) };
        let file = name
            .to_bytes()
            .rsplit(|&b| b == b'/')
            .next()
            .unwrap_or_default();
        let is_core = file.starts_with(b"libhdf5")
            && file.windows(3).any(|w| w == b".so")
            && ![&b"_hl"[..], b"cpp", b"fortran"]
                .iter()
                .any(|x| file.windows(x.len()).any(|w| w == *x));
        if is_core {
            *found = Some(name.to_owned());
            return 1;
        }
        0
    }
    let mut found: Option<CString> = None;
    // SAFETY: `each` only writes `found` through `arg`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(each), (&raw mut found).cast()) };
    found
}

fn hosts() -> &'static Mutex<Vec<&'static Api>> {
    static HOSTS: Mutex<Vec<&'static Api>> = Mutex::new(Vec::new());
    &HOSTS
}

impl Api {
    /// The HDF5 library that called into the plugin: from the calling frame, else the loaded
    /// `libhdf5`, else the global scope. `None` when none is found or it is older than 1.10.
    ///
    /// Must be called from the function HDF5 called (its stack is walked).
    #[inline(never)]
    pub fn caller() -> Option<&'static Api> {
        let caller = caller_object();
        let mut known = hosts().lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, base)) = &caller {
            if let Some(api) = known.iter().find(|a| a.base == *base) {
                return Some(*api);
            }
        }
        let by_caller = caller.and_then(|(name, base)| {
            let handle = noload(&name);
            let api = (!handle.is_null()).then(|| resolve(handle, base)).flatten();
            if api.is_none() && !handle.is_null() {
                // SAFETY: a handle from dlopen(RTLD_NOLOAD), released once.
                unsafe { libc::dlclose(handle) };
            }
            api
        });
        let api = by_caller
            .or_else(|| {
                let handle = noload(&loaded_libhdf5()?);
                (!handle.is_null()).then(|| resolve(handle, 0)).flatten()
            })
            .or_else(|| resolve(libc::RTLD_DEFAULT, 0))?;
        if let Some(same) = known.iter().find(|a| a.base == api.base) {
            return Some(*same);
        }
        let api: &'static Api = Box::leak(Box::new(api));
        known.push(api);
        Some(api)
    }

    fn type_size(&self, type_id: Hid) -> usize {
        // SAFETY: HDF5 checks the ID itself and returns 0 for a bad one.
        unsafe { (self.tget_size)(type_id) }
    }
}

impl Host for Api {
    fn filter_values(&self, dcpl: Hid) -> Option<(c_uint, Vec<u32>)> {
        let mut flags: c_uint = 0;
        let mut values = [0 as c_uint; strata::hdf5::cd::MAX_CD_VALUES];
        let mut n = values.len();
        let mut config: c_uint = 0;
        // SAFETY: `n` tells HDF5 how many values fit; the name buffer is not asked for.
        let r = unsafe {
            (self.pget_filter_by_id2)(
                dcpl,
                FILTER_ID,
                &mut flags,
                &mut n,
                values.as_mut_ptr(),
                0,
                std::ptr::null_mut(),
                &mut config,
            )
        };
        (r >= 0).then(|| (flags, values[..n.min(values.len())].to_vec()))
    }

    fn modify_filter(&self, dcpl: Hid, flags: c_uint, values: &[u32]) -> bool {
        // SAFETY: HDF5 copies `values.len()` values.
        unsafe { (self.pmodify_filter)(dcpl, FILTER_ID, flags, values.len(), values.as_ptr()) >= 0 }
    }

    fn chunk_dims(&self, dcpl: Hid) -> Option<Vec<u64>> {
        let mut dims = [0u64; 32];
        // SAFETY: HDF5 writes at most `max_ndims` (32, HDF5's own maximum) dims.
        let rank = unsafe { (self.pget_chunk)(dcpl, 32, dims.as_mut_ptr()) };
        let rank = usize::try_from(rank).ok().filter(|&r| r <= 32)?;
        Some(dims[..rank].to_vec())
    }

    fn type_sizes(&self, type_id: Hid) -> (usize, usize) {
        let size = self.type_size(type_id);
        // SAFETY: HDF5 checks the ID and returns a negative class for a bad one.
        if unsafe { (self.tget_class)(type_id) } != H5T_ARRAY {
            return (size, size);
        }
        // SAFETY: as above; the super type is a new ID, closed below.
        let base = unsafe { (self.tget_super)(type_id) };
        if base < 0 {
            return (size, 0);
        }
        let base_size = self.type_size(base);
        // SAFETY: `base` is the ID H5Tget_super returned, closed once.
        unsafe { (self.tclose)(base) };
        (size, base_size)
    }

    fn allocate(&self, len: usize) -> *mut u8 {
        // SAFETY: H5allocate_memory is malloc/calloc under HDF5's bookkeeping.
        unsafe { (self.allocate)(len.max(1), 1) }.cast()
    }

    unsafe fn free(&self, ptr: *mut c_void) {
        // SAFETY: the caller guarantees `ptr` is this allocator's.
        unsafe { (self.free)(ptr) };
    }

    fn push_error(&self, func: &CStr, message: &str) {
        let msg = CString::new(message.replace('\0', " ")).unwrap_or_default();
        // SAFETY: H5Epush2 takes a printf format; "%s" with one C string argument.
        unsafe {
            (self.epush2)(
                0, // H5E_DEFAULT
                c"plugins/hdf5".as_ptr(),
                func.as_ptr(),
                line!(),
                self.err_class,
                self.err_major,
                self.err_minor,
                c"%s".as_ptr(),
                msg.as_ptr(),
            )
        };
    }
}

/// Keeps this plugin mapped until the process ends (`RTLD_NODELETE`), before the first filter
/// call starts Strata's worker threads: HDF5 `dlclose`s its plugins at exit, and threads must
/// never outlive the code they run.
pub fn pin_plugin() {
    static PINNED: OnceLock<()> = OnceLock::new();
    PINNED.get_or_init(|| {
        if let Some((name, _)) = object_of(own_base as fn() -> usize as *const c_void) {
            // SAFETY: RTLD_NOLOAD: only raises the count of this loaded library, which
            // NODELETE then never unloads; the handle is kept on purpose.
            unsafe {
                libc::dlopen(
                    name.as_ptr(),
                    libc::RTLD_LAZY | libc::RTLD_NOLOAD | libc::RTLD_NODELETE,
                )
            };
        }
    });
}
