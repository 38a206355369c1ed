//! `strata plugins`: the codecs and filters this `strata` can use, where each comes from, and
//! where plugin libraries are looked for.

use anyhow::Result;
use clap::Args;
use serde_json::json;
use std::io::Write;
use strata::registry::{Origin, PluginKind, Registered, Registry};

/// Arguments of `strata plugins`.
#[derive(Debug, Args)]
pub struct PluginsArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

fn origin(o: &Origin) -> String {
    match o {
        Origin::Builtin => "built-in".to_owned(),
        other => other.to_string(),
    }
}

/// Loads every plugin library of the search path, then lists all codecs and filters.
///
/// # Errors
/// Only when stdout cannot be written; rejected libraries are listed, not fatal.
pub fn run(args: &PluginsArgs) -> Result<()> {
    let registry = Registry::global();
    let problems = registry.load_search_path();
    let entries = registry.list();
    let dirs = registry.plugin_dirs();
    let of = |kind: PluginKind| -> Vec<&Registered> {
        entries.iter().filter(|e| e.kind == kind).collect()
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let list = |kind| {
            of(kind)
                .iter()
                .map(|e| json!({"id": e.id, "name": e.name, "origin": origin(&e.origin)}))
                .collect::<Vec<_>>()
        };
        let obj = json!({
            "search_path": dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>(),
            "codecs": list(PluginKind::Codec),
            "filters": list(PluginKind::Filter),
            "rejected": problems,
        });
        writeln!(out, "{obj}")?;
        return Ok(());
    }
    writeln!(
        out,
        "plugin search path (STRATA_PLUGIN_PATH, then the defaults):"
    )?;
    for d in &dirs {
        let note = if d.is_dir() { "" } else { " (missing)" };
        writeln!(out, "  {}{note}", d.display())?;
    }
    for (kind, title) in [
        (PluginKind::Codec, "codecs"),
        (PluginKind::Filter, "filters"),
    ] {
        writeln!(out, "{title}:")?;
        for e in of(kind) {
            writeln!(out, "  {:>3}  {:<16} {}", e.id, e.name, origin(&e.origin))?;
        }
    }
    if !problems.is_empty() {
        writeln!(out, "rejected:")?;
        for p in &problems {
            writeln!(out, "  {p}")?;
        }
    }
    Ok(())
}
