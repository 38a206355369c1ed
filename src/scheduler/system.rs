//! [`SystemInfo`]: what `strata system` prints, a summary of the machine ([`super::topology`])
//! and of a [`Runtime`], with the sizes [`super::sizing`] derives from them.
//!
//! It sits above the runtime, the topology and the sizing rules, which know nothing of it:
//! the chain of imports runs one way (`system` → `runtime` → `topology`, `system` → `sizing`
//! → `topology`).
#![forbid(unsafe_code)]

use super::runtime::Runtime;
use super::sizing;
use super::topology::Topology;
use std::fmt;

/// A summary of the machine and of a runtime, for `strata system` and bug reports.
///
/// Its `Display` prints one `name: value` line per field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemInfo {
    /// Logical CPUs this process may run on.
    pub logical_cores: usize,
    /// Physical cores among them.
    pub physical_cores: usize,
    /// Worker threads of the runtime.
    pub workers: usize,
    /// Whether every worker is pinned to its core.
    pub pinned: bool,
    /// The runtime's default `nthreads` (caller included).
    pub nthreads: usize,
    /// Cache sizes and where they came from.
    pub topology: Topology,
    /// [`sizing::recommended_chunksize`] for this topology, in bytes.
    pub chunksize: usize,
    /// [`sizing::recommended_blocksize`] for this topology and typesize 8, in bytes.
    pub blocksize: usize,
}

impl SystemInfo {
    /// The summary for `runtime`.
    #[must_use]
    pub fn of(runtime: &Runtime) -> SystemInfo {
        let topology = *runtime.topology();
        SystemInfo {
            logical_cores: runtime.cores().logical,
            physical_cores: runtime.cores().physical,
            workers: runtime.workers(),
            pinned: runtime.pinned(),
            nthreads: runtime.nthreads(),
            topology,
            chunksize: sizing::recommended_chunksize(&topology),
            blocksize: sizing::recommended_blocksize(&topology, 8),
        }
    }

    /// The summary for the process-wide runtime ([`Runtime::global`], created if needed).
    #[must_use]
    pub fn detect() -> SystemInfo {
        SystemInfo::of(&Runtime::global())
    }
}

/// `bytes` in the largest binary unit that divides it (e.g. `48 KiB`, `2 MiB`, `1000 B`).
pub(crate) fn human_bytes(bytes: usize) -> String {
    const UNITS: [(&str, usize); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
    }
    format!("{bytes} B")
}

impl fmt::Display for SystemInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.topology;
        writeln!(
            f,
            "cores:       {} logical, {} physical",
            self.logical_cores, self.physical_cores
        )?;
        writeln!(
            f,
            "workers:     {} ({})",
            self.workers,
            if self.pinned { "pinned" } else { "not pinned" }
        )?;
        writeln!(
            f,
            "nthreads:    {} (default, caller included)",
            self.nthreads
        )?;
        writeln!(
            f,
            "L1d:         {} ({})",
            human_bytes(t.l1d.bytes),
            t.l1d.source
        )?;
        writeln!(
            f,
            "L2:          {} ({})",
            human_bytes(t.l2.bytes),
            t.l2.source
        )?;
        writeln!(
            f,
            "L3:          {} ({})",
            human_bytes(t.l3.bytes),
            t.l3.source
        )?;
        writeln!(
            f,
            "chunk size:  {} (recommended)",
            human_bytes(self.chunksize)
        )?;
        write!(
            f,
            "block size:  {} (recommended, typesize 8)",
            human_bytes(self.blocksize)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::RuntimeConfig;

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(48 << 10), "48 KiB");
        assert_eq!(human_bytes(480 << 20), "480 MiB");
        assert_eq!(human_bytes(3 << 30), "3 GiB");
        assert_eq!(human_bytes(1000), "1000 B");
        assert_eq!(human_bytes(1536), "1536 B");
    }

    #[test]
    fn summary_of_a_runtime() {
        let topology = Topology::from_sizes(48 << 10, 2 << 20, 30 << 20);
        let config = RuntimeConfig::default()
            .with_workers(1)
            .with_nthreads(3)
            .with_pin(false)
            .with_topology(topology);
        let rt = Runtime::new(config);
        let info = SystemInfo::of(&rt);
        assert_eq!((info.workers, info.nthreads, info.pinned), (1, 3, false));
        assert_eq!(info.topology, topology);
        assert_eq!(info.chunksize, 15 << 20);
        assert_eq!(info.blocksize, 512 << 10);
        let text = info.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 8, "{text}");
        assert_eq!(lines[1], "workers:     1 (not pinned)");
        assert_eq!(lines[2], "nthreads:    3 (default, caller included)");
        assert_eq!(lines[3], "L1d:         48 KiB (api)");
        assert_eq!(lines[5], "L3:          30 MiB (api)");
        assert_eq!(lines[6], "chunk size:  15 MiB (recommended)");
        assert_eq!(lines[7], "block size:  512 KiB (recommended, typesize 8)");
    }
}
