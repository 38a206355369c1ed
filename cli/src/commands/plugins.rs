//! `strata plugins`: the codecs and filters this `strata` can use, where each comes from, and
//! where plugin libraries are looked for.

use crate::report::{self, Report};
use anyhow::Result;
use clap::Args;
use serde::{Serialize, Serializer};
use std::io::Write;
use strata::registry::{Origin, PluginKind, Registry};

/// Arguments of `strata plugins`.
#[derive(Debug, Args)]
pub struct PluginsArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// One directory of the plugin search path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchDir {
    /// The directory.
    pub path: String,
    /// Whether it exists (as a directory).
    pub exists: bool,
}

/// One registered codec or filter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plugin {
    /// The Blosc2 ID.
    pub id: u8,
    /// Its name.
    pub name: String,
    /// `built-in`, or the library it came from.
    pub origin: String,
}

/// What `strata plugins` lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PluginsReport {
    /// The plugin search path, in order (JSON: the paths).
    #[serde(serialize_with = "paths")]
    pub search_path: Vec<SearchDir>,
    /// Registered codecs.
    pub codecs: Vec<Plugin>,
    /// Registered filters.
    pub filters: Vec<Plugin>,
    /// Libraries and plugins refused, one line each.
    pub rejected: Vec<String>,
}

fn paths<S: Serializer>(dirs: &[SearchDir], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(dirs.iter().map(|d| &d.path))
}

impl PluginsReport {
    /// Loads every plugin library of the search path into `registry`, then lists all its
    /// codecs and filters; rejected libraries are listed, not fatal.
    #[must_use]
    pub fn of(registry: &Registry) -> PluginsReport {
        let rejected = registry.load_search_path();
        let entries = registry.list();
        let of = |kind: PluginKind| -> Vec<Plugin> {
            entries
                .iter()
                .filter(|e| e.kind == kind)
                .map(|e| Plugin {
                    id: e.id,
                    name: e.name.clone(),
                    origin: match &e.origin {
                        Origin::Builtin => "built-in".to_owned(),
                        other => other.to_string(),
                    },
                })
                .collect()
        };
        PluginsReport {
            search_path: registry
                .plugin_dirs()
                .iter()
                .map(|d| SearchDir {
                    path: d.display().to_string(),
                    exists: d.is_dir(),
                })
                .collect(),
            codecs: of(PluginKind::Codec),
            filters: of(PluginKind::Filter),
            rejected,
        }
    }
}

impl Report for PluginsReport {
    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "plugin search path (STRATA_PLUGIN_PATH, then the defaults):"
        )?;
        for d in &self.search_path {
            let note = if d.exists { "" } else { " (missing)" };
            writeln!(out, "  {}{note}", d.path)?;
        }
        for (title, list) in [("codecs", &self.codecs), ("filters", &self.filters)] {
            writeln!(out, "{title}:")?;
            for e in list {
                writeln!(out, "  {:>3}  {:<16} {}", e.id, e.name, e.origin)?;
            }
        }
        if !self.rejected.is_empty() {
            writeln!(out, "rejected:")?;
            for p in &self.rejected {
                writeln!(out, "  {p}")?;
            }
        }
        Ok(())
    }
}

/// Loads every plugin library of the search path, then lists all codecs and filters.
///
/// # Errors
/// Only when stdout cannot be written; rejected libraries are listed, not fatal.
pub fn run(args: &PluginsArgs) -> Result<()> {
    report::print(&PluginsReport::of(&Registry::global()), args.json)
}

#[cfg(test)]
mod tests {
    use super::{Plugin, PluginsReport, SearchDir};
    use crate::report::Report;
    use strata::registry::Registry;

    #[test]
    fn built_ins_are_listed() {
        let r = PluginsReport::of(&Registry::global());
        let zstd = r.codecs.iter().find(|c| c.name == "zstd").unwrap();
        assert_eq!((zstd.id, zstd.origin.as_str()), (5, "built-in"));
        let shuffle = r.filters.iter().find(|f| f.id == 1).unwrap();
        assert_eq!(shuffle.name, "shuffle");
        assert!(!r.search_path.is_empty());
    }

    #[test]
    fn text_and_json() {
        let r = PluginsReport {
            search_path: vec![
                SearchDir {
                    path: "/a".into(),
                    exists: true,
                },
                SearchDir {
                    path: "/b".into(),
                    exists: false,
                },
            ],
            codecs: vec![Plugin {
                id: 5,
                name: "zstd".into(),
                origin: "built-in".into(),
            }],
            filters: Vec::new(),
            rejected: vec!["/b/x.so: no descriptor".into()],
        };
        let mut text = Vec::new();
        r.write_text(&mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "plugin search path (STRATA_PLUGIN_PATH, then the defaults):\n  /a\n  /b (missing)\n\
             codecs:\n    5  zstd             built-in\nfilters:\nrejected:\n  /b/x.so: no descriptor\n"
        );
        let mut json = Vec::new();
        r.write_json(&mut json).unwrap();
        assert_eq!(
            String::from_utf8(json).unwrap(),
            "{\"codecs\":[{\"id\":5,\"name\":\"zstd\",\"origin\":\"built-in\"}],\"filters\":[],\
             \"rejected\":[\"/b/x.so: no descriptor\"],\"search_path\":[\"/a\",\"/b\"]}\n"
        );
    }
}
