//! C functions for the process runtime: worker threads, pinning, the default thread count of
//! a job, and the cache sizes that chunk and block sizes are derived from.
//!
//! Format: none. Model: C-Blosc2's `blosc2_set_nthreads` and `BLOSC_NTHREADS`.

#![allow(unsafe_code)]

use super::{arg_mut, arg_ref, call_status};
use crate::error::{Error, Expected};
use crate::scheduler::topology::Topology;
use crate::scheduler::{Runtime, RuntimeConfig};

/// How the process runtime is made (`strata_runtime_configure`). Fill it with
/// `strata_runtime_config_default` (which sets `size`). Sizes in bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct strata_runtime_config {
    /// `sizeof(strata_runtime_config)` as the caller compiled it.
    pub size: usize,
    /// Worker threads: −1 = one per physical core (default); 0 = none, every job runs on its
    /// caller's thread.
    pub workers: i32,
    /// Threads a job uses when its parameters say 0 (the caller's included): 0 = default
    /// (`STRATA_NTHREADS`, else `BLOSC_NTHREADS`, else the number of workers).
    pub nthreads: i32,
    /// Pin each worker to its own core: −1 = default (on, unless `STRATA_PIN=0`), 0 off,
    /// 1 on.
    pub pin: i32,
    /// L1 data cache size; 0 = detected (sysfs, CPUID; `STRATA_L1D` overrides).
    pub l1d: usize,
    /// L2 cache size; 0 = detected (`STRATA_L2` overrides). Block sizes follow from it.
    pub l2: usize,
    /// L3 cache size; 0 = detected (`STRATA_L3` overrides). Chunk sizes follow from it.
    pub l3: usize,
}

/// What the process runtime is (`strata_runtime_get_info`). Sizes in bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct strata_runtime_info {
    /// Worker threads running.
    pub workers: i32,
    /// Threads a job uses when its parameters say 0 (the caller's included).
    pub nthreads: i32,
    /// 1 when every worker is pinned to its own core, else 0.
    pub pinned: i32,
    /// Logical CPUs the process may run on.
    pub logical_cores: i32,
    /// Physical cores among them.
    pub physical_cores: i32,
    /// L1 data cache size in use.
    pub l1d: usize,
    /// L2 cache size in use.
    pub l2: usize,
    /// L3 cache size in use.
    pub l3: usize,
}

fn defaults() -> strata_runtime_config {
    strata_runtime_config {
        size: std::mem::size_of::<strata_runtime_config>(),
        workers: -1,
        nthreads: 0,
        pin: -1,
        l1d: 0,
        l2: 0,
        l3: 0,
    }
}

impl strata_runtime_config {
    fn to_config(self) -> crate::Result<RuntimeConfig> {
        super::params::check_size(
            "strata_runtime_config.size (fill it with strata_runtime_config_default)",
            self.size,
            std::mem::size_of::<Self>(),
        )?;
        let workers = match self.workers {
            -1 => None,
            n => Some(
                usize::try_from(n)
                    .map_err(|_| Error::range("workers", n, Expected::OneOf("-1 or a count")))?,
            ),
        };
        let nthreads = match self.nthreads {
            0 => None,
            n => Some(
                usize::try_from(n)
                    .map_err(|_| Error::range("nthreads", n, Expected::AtLeast(0)))?,
            ),
        };
        let pin = match self.pin {
            -1 => None,
            0 => Some(false),
            1 => Some(true),
            n => return Err(Error::range("pin", n, Expected::OneOf("-1, 0 or 1"))),
        };
        let topology = (self.l1d != 0 || self.l2 != 0 || self.l3 != 0).then(|| {
            Topology::detect()
                .with_l1d(self.l1d)
                .with_l2(self.l2)
                .with_l3(self.l3)
        });
        Ok(RuntimeConfig {
            workers,
            nthreads,
            pin,
            topology,
            spin: None,
        })
    }
}

/// Writes the default runtime configuration (everything detected) into `*out`, with `size`
/// set. Returns 0 or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `out` NULL or writable for one `strata_runtime_config`.
#[no_mangle]
pub unsafe extern "C" fn strata_runtime_config_default(out: *mut strata_runtime_config) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointer.
        *unsafe { arg_mut(out, "out") }? = defaults();
        Ok(())
    })
}

/// Creates the process runtime (the worker pool every call shares) from `*config`. Call it
/// before anything else that compresses or decompresses: the first such call creates the
/// runtime with the defaults. Returns 0, or `STRATA_ERROR_INVALID_PARAM` for a bad field or
/// when the runtime already exists.
///
/// # Safety
/// `config` NULL or pointing to a `strata_runtime_config`.
#[no_mangle]
pub unsafe extern "C" fn strata_runtime_configure(config: *const strata_runtime_config) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointer.
        let config = unsafe { arg_ref(config, "config") }?.to_config()?;
        Runtime::configure_global(config)?;
        Ok(())
    })
}

/// Writes what the process runtime is (creating it with the defaults if no call has yet)
/// into `*out`. Returns 0 or `STRATA_ERROR_NULL_POINTER`.
///
/// # Safety
/// `out` NULL or writable for one `strata_runtime_info`.
#[no_mangle]
pub unsafe extern "C" fn strata_runtime_get_info(out: *mut strata_runtime_info) -> i32 {
    call_status(|| {
        // SAFETY: the caller guarantees the pointer.
        let out = unsafe { arg_mut(out, "out") }?;
        let rt = Runtime::global();
        let i = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
        let t = rt.topology();
        *out = strata_runtime_info {
            workers: i(rt.workers()),
            nthreads: i(rt.nthreads()),
            pinned: i32::from(rt.pinned()),
            logical_cores: i(rt.cores().logical),
            physical_cores: i(rt.cores().physical),
            l1d: t.l1d.bytes,
            l2: t.l2.bytes,
            l3: t.l3.bytes,
        };
        Ok(())
    })
}

/// Sets the threads a job uses when its parameters say 0 (the caller's included; at least
/// 1), for jobs started from now on, as C-Blosc2's `blosc2_set_nthreads`. Returns 0, or
/// `STRATA_ERROR_INVALID_PARAM` when `nthreads` < 1.
#[no_mangle]
pub extern "C" fn strata_runtime_set_nthreads(nthreads: i32) -> i32 {
    call_status(|| {
        let n = usize::try_from(nthreads)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| Error::range("nthreads", nthreads, Expected::AtLeast(1)))?;
        Runtime::global().set_nthreads(n);
        Ok(())
    })
}
