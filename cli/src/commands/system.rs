//! `strata system`: what Strata sees of this machine and how it will use it.

use crate::report::{self, Report};
use anyhow::Result;
use serde::ser::{Serialize, SerializeStruct, Serializer};
use std::io::Write;
use strata::scheduler::topology::CacheLevel;
use strata::scheduler::SystemInfo;

/// The runtime's cores, workers, pinning and cache sizes with the recommended chunk and block
/// sizes, and the SIMD level the filters use.
#[derive(Debug, Clone)]
pub struct SystemReport {
    /// What the runtime sees and chose.
    pub system: SystemInfo,
    /// The SIMD level of shuffle and bitshuffle.
    pub simd: &'static str,
}

impl SystemReport {
    /// This machine, as the global runtime sees it.
    #[must_use]
    pub fn detect() -> SystemReport {
        SystemReport {
            system: SystemInfo::detect(),
            simd: strata::filters::simd_level(),
        }
    }
}

/// A cache level as `{"bytes": N, "source": "sysfs"}`.
struct Cache<'a>(&'a CacheLevel);

impl Serialize for Cache<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("CacheLevel", 2)?;
        st.serialize_field("bytes", &self.0.bytes)?;
        st.serialize_field("source", &self.0.source.to_string())?;
        st.end()
    }
}

impl Serialize for SystemReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let i = &self.system;
        let mut st = s.serialize_struct("SystemReport", 11)?;
        st.serialize_field("logical_cores", &i.logical_cores)?;
        st.serialize_field("physical_cores", &i.physical_cores)?;
        st.serialize_field("workers", &i.workers)?;
        st.serialize_field("pinned", &i.pinned)?;
        st.serialize_field("nthreads", &i.nthreads)?;
        st.serialize_field("l1d", &Cache(&i.topology.l1d))?;
        st.serialize_field("l2", &Cache(&i.topology.l2))?;
        st.serialize_field("l3", &Cache(&i.topology.l3))?;
        st.serialize_field("chunksize", &i.chunksize)?;
        st.serialize_field("blocksize", &i.blocksize)?;
        st.serialize_field("simd", self.simd)?;
        st.end()
    }
}

impl Report for SystemReport {
    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "{}", self.system)?;
        writeln!(out, "SIMD:        {} (shuffle, bitshuffle)", self.simd)
    }
}

/// Prints the runtime's cores, workers, pinning and cache sizes with the recommended chunk
/// and block sizes, and the SIMD level the filters use.
///
/// # Errors
/// Stdout cannot be written.
pub fn run() -> Result<()> {
    report::print(&SystemReport::detect(), false)
}

#[cfg(test)]
mod tests {
    use super::SystemReport;
    use crate::report::Report;

    #[test]
    fn text_and_json_say_the_same() {
        let r = SystemReport::detect();
        let mut text = Vec::new();
        r.write_text(&mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.starts_with(&format!(
            "cores:       {} logical, {} physical\n",
            r.system.logical_cores, r.system.physical_cores
        )));
        assert!(text.ends_with(&format!("SIMD:        {} (shuffle, bitshuffle)\n", r.simd)));
        let mut json = Vec::new();
        r.write_json(&mut json).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(json["workers"], r.system.workers);
        assert_eq!(json["l2"]["bytes"], r.system.topology.l2.bytes);
        assert_eq!(
            json["l2"]["source"],
            r.system.topology.l2.source.to_string()
        );
        assert_eq!(json["simd"], r.simd);
    }
}
