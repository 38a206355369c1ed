//! The library's layers, as `docs/design.md`'s table gives them: each top-level module of
//! `src/` names (`crate::x`) only the modules its row lists, besides `error` and `alloc`,
//! which every layer uses. A module missing from the table, or an upward import, fails.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The backticked names of one table cell.
fn names(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// The layers table: module → the modules it may use, in the table's order.
fn table() -> Vec<(String, BTreeSet<String>)> {
    let design = std::fs::read_to_string(root().join("docs/design.md")).unwrap();
    let mut rows: Vec<(String, BTreeSet<String>)> = Vec::new();
    for line in design.lines().skip_while(|l| !l.starts_with("| layer |")) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (layer, uses) = (cells[1], cells[3]);
        if !layer.starts_with('`') {
            continue;
        }
        let allowed: BTreeSet<String> = if uses == "everything above" {
            rows.iter().map(|(m, _)| m.clone()).collect()
        } else {
            names(uses).into_iter().collect()
        };
        for module in names(layer) {
            rows.push((module, allowed.clone()));
        }
    }
    rows
}

/// The module an item the crate root re-exports (`crate::Error`...) comes from; a module's
/// own name otherwise.
fn reexported(name: &str) -> &str {
    match name {
        "Error" | "Result" => "error",
        "CodecId" | "FilterId" => "format",
        "ArrayParams" | "NdArray" => "ndarray",
        other => other,
    }
}

/// The top-level modules each `src/` module names in code (comments left out).
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let src = root().join("src");
    let mut found = BTreeMap::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" {
            continue;
        }
        let mut paths = Vec::new();
        if p.is_dir() {
            files(&p, &mut paths);
        } else {
            paths.push(p.clone());
        }
        let mut used = BTreeSet::new();
        for path in paths {
            for line in std::fs::read_to_string(&path).unwrap().lines() {
                let code = line.split("//").next().unwrap_or("");
                for (i, _) in code.match_indices("crate::") {
                    let rest = &code[i + "crate::".len()..];
                    let end = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(rest.len());
                    let module = reexported(&rest[..end]);
                    if end > 0 && module != name {
                        used.insert(module.to_owned());
                    }
                }
            }
        }
        found.insert(name, used);
    }
    found
}

#[test]
fn each_module_imports_only_the_layers_below_it() {
    let table: BTreeMap<String, BTreeSet<String>> = table().into_iter().collect();
    assert!(
        table.len() >= 12,
        "the layers table was not found: {table:?}"
    );
    let shared = ["error", "alloc"];
    let mut problems = Vec::new();
    for (module, used) in imports() {
        if shared.contains(&module.as_str()) {
            continue;
        }
        let Some(allowed) = table.get(&module) else {
            problems.push(format!(
                "{module}: not in the layers table of docs/design.md"
            ));
            continue;
        };
        for u in used {
            if !allowed.contains(&u) && !shared.contains(&u.as_str()) {
                problems.push(format!("{module} uses crate::{u}, not a layer below it"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn an_upward_import_is_seen() {
    // The check itself: `format` may use nothing, and the scan sees `crate::` paths.
    let table: BTreeMap<String, BTreeSet<String>> = table().into_iter().collect();
    assert_eq!(table.get("format"), Some(&BTreeSet::new()));
    let used = &imports()["chunk"];
    assert!(
        used.contains("codecs") && used.contains("registry"),
        "{used:?}"
    );
    assert!(!table["format"].contains("chunk"));
}
