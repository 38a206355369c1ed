//! What the machine offers: cores (logical and physical) and cache sizes (L1d, L2, L3).
//!
//! Cache sizes come, per level, from the first source that knows them:
//! 1. Linux sysfs, `/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}` (data or
//!    unified caches only);
//! 2. on x86-64, CPUID (leaf 4 on Intel, leaf `0x8000_001D` on AMD and Hygon: ways × partitions
//!    × line size × sets);
//! 3. the defaults [`DEFAULT_L1D`], [`DEFAULT_L2`], [`DEFAULT_L3`] (a typical desktop core).
//!
//! Then the environment overrides them: `STRATA_L1D`, `STRATA_L2`, `STRATA_L3`, sizes as
//! [`parse_size`] reads them (`48K`, `8M`, `1 GiB`: binary multiples), and the
//! API overrides everything ([`Topology::with_l1d`] and friends, or
//! [`super::RuntimeConfig::topology`]). A value that does not parse is ignored.
//!
//! Physical cores are the distinct `(physical_package_id, core_id)` pairs of the logical CPUs
//! this process may run on (`/sys/devices/system/cpu/cpu*/topology/`), capped by
//! [`std::thread::available_parallelism`] (which also sees cgroup CPU quotas); without sysfs,
//! every allowed logical CPU counts as a core.
//!
//! ```
//! use strata::scheduler::topology::{Topology, Source};
//! let t = Topology::detect().with_l2(512 * 1024);
//! assert_eq!(t.l2.bytes, 512 * 1024);
//! assert_eq!(t.l2.source, Source::Api);
//! assert!(t.l1d.bytes > 0 && t.l3.bytes > 0);
//! ```
#![forbid(unsafe_code)]

use super::size::parse_size;
use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::path::Path;

/// L1 data cache size used when nothing reports it, in bytes (32 KiB).
pub const DEFAULT_L1D: usize = 32 * 1024;
/// L2 cache size used when nothing reports it, in bytes (1 MiB).
pub const DEFAULT_L2: usize = 1024 * 1024;
/// L3 cache size used when nothing reports it, in bytes (8 MiB).
pub const DEFAULT_L3: usize = 8 * 1024 * 1024;

/// Where a cache size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// Linux sysfs (`/sys/devices/system/cpu/cpu0/cache`).
    Sysfs,
    /// The x86 CPUID instruction.
    Cpuid,
    /// Nothing reported it: the documented default.
    Default,
    /// The `STRATA_L1D` / `STRATA_L2` / `STRATA_L3` environment variable.
    Env,
    /// Set through the API.
    Api,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::Sysfs => "sysfs",
            Source::Cpuid => "cpuid",
            Source::Default => "default",
            Source::Env => "env",
            Source::Api => "api",
        })
    }
}

/// One cache level: its size in bytes and where that number came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheLevel {
    /// Size in bytes (per instance: per core for L1d/L2 on most CPUs, shared for L3).
    pub bytes: usize,
    /// Where `bytes` came from.
    pub source: Source,
}

/// The cache sizes the sizing rules ([`super::sizing`]) work from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Topology {
    /// Level-1 data cache.
    pub l1d: CacheLevel,
    /// Level-2 cache.
    pub l2: CacheLevel,
    /// Level-3 (last-level) cache.
    pub l3: CacheLevel,
}

impl Topology {
    /// Detects the cache sizes (sysfs, then CPUID, then defaults) and applies the
    /// `STRATA_L1D` / `STRATA_L2` / `STRATA_L3` environment overrides.
    #[must_use]
    pub fn detect() -> Topology {
        Self::detect_hardware().with_env()
    }

    /// Detects the cache sizes from the machine only (no environment overrides).
    #[must_use]
    pub fn detect_hardware() -> Topology {
        let sysfs = read_sysfs_caches(Path::new("/sys/devices/system/cpu/cpu0/cache"));
        // CPUID only for what sysfs lacks: where sysfs has every level (Linux), the
        // instruction is never run, so tools that emulate it (valgrind) see no guesses.
        let cpuid = if sysfs.iter().all(Option::is_some) {
            [None; 3]
        } else {
            cpuid_caches()
        };
        let pick = |i: usize, default: usize| {
            if let Some(bytes) = sysfs[i] {
                CacheLevel {
                    bytes,
                    source: Source::Sysfs,
                }
            } else if let Some(bytes) = cpuid[i] {
                CacheLevel {
                    bytes,
                    source: Source::Cpuid,
                }
            } else {
                CacheLevel {
                    bytes: default,
                    source: Source::Default,
                }
            }
        };
        Topology {
            l1d: pick(0, DEFAULT_L1D),
            l2: pick(1, DEFAULT_L2),
            l3: pick(2, DEFAULT_L3),
        }
    }

    /// The given sizes, in bytes, all marked [`Source::Api`].
    #[must_use]
    pub fn from_sizes(l1d: usize, l2: usize, l3: usize) -> Topology {
        Topology::defaults().with_l1d(l1d).with_l2(l2).with_l3(l3)
    }

    /// The documented defaults, marked [`Source::Default`].
    #[must_use]
    pub fn defaults() -> Topology {
        let level = |bytes| CacheLevel {
            bytes,
            source: Source::Default,
        };
        Topology {
            l1d: level(DEFAULT_L1D),
            l2: level(DEFAULT_L2),
            l3: level(DEFAULT_L3),
        }
    }

    /// This topology with the L1d size set to `bytes` ([`Source::Api`]); 0 keeps the old value.
    #[must_use]
    pub fn with_l1d(mut self, bytes: usize) -> Topology {
        set(&mut self.l1d, bytes, Source::Api);
        self
    }

    /// This topology with the L2 size set to `bytes` ([`Source::Api`]); 0 keeps the old value.
    #[must_use]
    pub fn with_l2(mut self, bytes: usize) -> Topology {
        set(&mut self.l2, bytes, Source::Api);
        self
    }

    /// This topology with the L3 size set to `bytes` ([`Source::Api`]); 0 keeps the old value.
    #[must_use]
    pub fn with_l3(mut self, bytes: usize) -> Topology {
        set(&mut self.l3, bytes, Source::Api);
        self
    }

    /// This topology with `STRATA_L1D`, `STRATA_L2` and `STRATA_L3` applied where they are set
    /// and parse ([`Source::Env`]).
    #[must_use]
    pub fn with_env(mut self) -> Topology {
        for (var, level) in [
            ("STRATA_L1D", &mut self.l1d),
            ("STRATA_L2", &mut self.l2),
            ("STRATA_L3", &mut self.l3),
        ] {
            if let Some(bytes) = std::env::var(var).ok().and_then(|v| parse_size(&v).ok()) {
                set(level, bytes, Source::Env);
            }
        }
        self
    }
}

fn set(level: &mut CacheLevel, bytes: usize, source: Source) {
    if bytes > 0 {
        *level = CacheLevel { bytes, source };
    }
}

/// L1d, L2, L3 sizes from a sysfs `cache` directory (`index*/{level,type,size}`).
fn read_sysfs_caches(dir: &Path) -> [Option<usize>; 3] {
    // The largest size per level, 0 for none yet: plain integers, not `Option`s compared in
    // place (optimised code then branches on a `None`'s undefined payload, which valgrind
    // reports as a read of uninitialised memory).
    let mut found = [0usize; 3];
    let Ok(entries) = fs::read_dir(dir) else {
        return [None; 3];
    };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("index") {
            continue;
        }
        let read = |name: &str| fs::read_to_string(entry.path().join(name)).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        let kind = kind.trim();
        if kind != "Data" && kind != "Unified" {
            continue;
        }
        let slot = match level.trim() {
            "1" => 0,
            "2" => 1,
            "3" => 2,
            _ => continue,
        };
        if let Ok(bytes) = parse_size(&size) {
            found[slot] = found[slot].max(bytes);
        }
    }
    found.map(|b| (b > 0).then_some(b))
}

/// L1d, L2, L3 sizes from CPUID (x86-64 only; not under Miri, which cannot run CPUID).
#[cfg(all(target_arch = "x86_64", not(miri)))]
fn cpuid_caches() -> [Option<usize>; 3] {
    use super::sys::cpuid;
    let mut found = [None; 3];
    let [max_basic, ebx, ecx, edx] = cpuid(0, 0);
    let vendor: Vec<u8> = [ebx, edx, ecx]
        .iter()
        .flat_map(|r| r.to_le_bytes())
        .collect();
    let leaf = match vendor.as_slice() {
        b"GenuineIntel" if max_basic >= 4 => 4,
        b"AuthenticAMD" | b"HygonGenuine" if cpuid(0x8000_0000, 0)[0] >= 0x8000_001D => 0x8000_001D,
        _ => return found,
    };
    for subleaf in 0..16 {
        let [eax, ebx, ecx, _] = cpuid(leaf, subleaf);
        let kind = eax & 0x1f; // 0 none, 1 data, 2 instruction, 3 unified
        if kind == 0 {
            break;
        }
        if kind == 2 {
            continue;
        }
        let level = (eax >> 5) & 0x7;
        let ways = ((ebx >> 22) & 0x3ff) as usize + 1;
        let partitions = ((ebx >> 12) & 0x3ff) as usize + 1;
        let line = (ebx & 0xfff) as usize + 1;
        let sets = ecx as usize + 1;
        let bytes = ways * partitions * line * sets;
        if (1..=3).contains(&level) {
            found[level as usize - 1] = Some(bytes);
        }
    }
    found
}

/// L1d, L2, L3 sizes from CPUID (x86-64 only; not under Miri, which cannot run CPUID).
#[cfg(any(not(target_arch = "x86_64"), miri))]
fn cpuid_caches() -> [Option<usize>; 3] {
    [None; 3]
}

/// The cores this process may run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cores {
    /// Logical CPUs (hardware threads) this process may run on.
    pub logical: usize,
    /// Physical cores among them (≤ `logical`).
    pub physical: usize,
    /// One logical CPU id per physical core (the first allowed one), the CPUs workers are pinned
    /// to; empty when the allowed CPUs cannot be read (pinning is then skipped).
    pub pin_cpus: Vec<usize>,
}

impl Cores {
    /// Detects the logical CPUs the process may run on and groups them into physical cores
    /// through sysfs.
    ///
    /// The allowed CPUs are the process's (`Cpus_allowed_list` in `/proc/self/status`, the
    /// main thread's mask, so a runtime created from a pinned worker still sees every core),
    /// else the calling thread's affinity mask.
    #[must_use]
    pub fn detect() -> Cores {
        let quota = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        let from_proc = fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|status| {
                let line = status
                    .lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
                parse_cpu_list(line)
            });
        let allowed = from_proc.or_else(|| {
            core_affinity::get_core_ids().map(|ids| ids.into_iter().map(|c| c.id).collect())
        });
        let Some(allowed) = allowed.filter(|ids: &Vec<usize>| !ids.is_empty()) else {
            return Cores {
                logical: quota,
                physical: quota,
                pin_cpus: Vec::new(),
            };
        };
        let mut pin_cpus = group_physical(&allowed, Path::new("/sys/devices/system/cpu"))
            .unwrap_or_else(|| allowed.clone());
        pin_cpus.truncate(quota.max(1));
        Cores {
            logical: allowed.len(),
            physical: pin_cpus.len(),
            pin_cpus,
        }
    }
}

/// Parses a Linux CPU list such as `0-3,8,10-11`; `None` if malformed or absurdly large.
fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    const MAX_CPU: usize = 1 << 16;
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (lo.trim().parse().ok()?, hi.trim().parse().ok()?),
            None => {
                let cpu: usize = part.trim().parse().ok()?;
                (cpu, cpu)
            }
        };
        if lo > hi || hi >= MAX_CPU {
            return None;
        }
        cpus.extend(lo..=hi);
    }
    Some(cpus)
}

/// The first logical CPU of each physical core among `cpus`, in order; `None` if sysfs does
/// not describe one of them.
fn group_physical(cpus: &[usize], sys_cpu: &Path) -> Option<Vec<usize>> {
    let mut seen = HashSet::new();
    let mut firsts = Vec::new();
    for &cpu in cpus {
        let topo = sys_cpu.join(format!("cpu{cpu}/topology"));
        let read = |name: &str| -> Option<i64> {
            fs::read_to_string(topo.join(name))
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        let key = (read("physical_package_id")?, read("core_id")?);
        if seen.insert(key) {
            firsts.push(cpu);
        }
    }
    Some(firsts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_layout_is_read() {
        let dir = std::env::temp_dir().join(format!("strata-cache-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        for (i, level, kind, size) in [
            (0, "1", "Data", "48K"),
            (1, "1", "Instruction", "64K"),
            (2, "2", "Unified", "2048K"),
            (3, "3", "Unified", "30720K"),
        ] {
            let index = dir.join(format!("index{i}"));
            fs::create_dir_all(&index).unwrap();
            fs::write(index.join("level"), format!("{level}\n")).unwrap();
            fs::write(index.join("type"), format!("{kind}\n")).unwrap();
            fs::write(index.join("size"), format!("{size}\n")).unwrap();
        }
        let found = read_sysfs_caches(&dir);
        assert_eq!(found, [Some(48 << 10), Some(2 << 20), Some(30 << 20)]);
        assert_eq!(read_sysfs_caches(&dir.join("missing")), [None; 3]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn physical_grouping() {
        let dir = std::env::temp_dir().join(format!("strata-cpus-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        // cpu0/cpu2 share core 0, cpu1/cpu3 share core 1 (SMT siblings).
        for (cpu, core) in [(0, 0), (1, 1), (2, 0), (3, 1)] {
            let topo = dir.join(format!("cpu{cpu}/topology"));
            fs::create_dir_all(&topo).unwrap();
            fs::write(topo.join("physical_package_id"), "0\n").unwrap();
            fs::write(topo.join("core_id"), format!("{core}\n")).unwrap();
        }
        assert_eq!(group_physical(&[0, 1, 2, 3], &dir), Some(vec![0, 1]));
        assert_eq!(group_physical(&[2, 3], &dir), Some(vec![2, 3]));
        assert_eq!(group_physical(&[0, 7], &dir), None);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-1\n"), Some(vec![0, 1]));
        assert_eq!(
            parse_cpu_list("0-3,8,10-11"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list("5"), Some(vec![5]));
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
        assert_eq!(parse_cpu_list("0-99999999"), None);
    }

    #[test]
    fn detection_is_sane() {
        let t = Topology::detect_hardware();
        for level in [t.l1d, t.l2, t.l3] {
            assert!(level.bytes >= 1024, "{t:?}");
            assert!(matches!(
                level.source,
                Source::Sysfs | Source::Cpuid | Source::Default
            ));
        }
        let cores = Cores::detect();
        assert!(cores.physical >= 1 && cores.physical <= cores.logical.max(cores.physical));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn cpuid_reports_an_l1d() {
        // Every x86-64 CPU Strata targets reports its caches through CPUID; a hypervisor may
        // hide them, so only check plausibility when present.
        match cpuid_caches()[0] {
            Some(l1d) => assert!((4 << 10..=1 << 20).contains(&l1d), "{l1d}"),
            None => eprintln!("skipped: CPUID reports no L1d size here (a hypervisor hides it)"),
        }
    }
}
