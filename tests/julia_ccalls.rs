//! The Julia bindings (bindings/julia) without Julia: no Julia toolchain can be installed
//! here, so this test reads the package's source and checks every
//! `ccall((:strata_..., libstrata), Ret, (Args...), values...)` against the committed header
//! and the built library:
//!
//! * the symbol is exported by libstrata.so and declared in include/strata.h;
//! * the return type and each argument type match the prototype (int32_t ↔ Int32/Cint,
//!   int64_t ↔ Int64, size_t ↔ Csize_t, uint8_t ↔ UInt8, pointers ↔ Ptr{...}/Ref{...},
//!   `const char *` ↔ Cstring, structs by name), and as many values as types are passed;
//! * every function of the header has a ccall, but those the README lists as left out;
//! * every struct the package mirrors has the header's fields, in order, with matching types;
//! * the package's `STRATA_*` constants equal the header's macros.
//!
//! A second test feeds the checker wrong ccalls to show it rejects them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

#[path = "clib/mod.rs"]
mod clib;
use clib::{header_defines, lib_dir, root, run};

/// Header functions the Julia package does not wrap, with the reason (also in its README).
const NOT_WRAPPED: &[(&str, &str)] = &[(
    "strata_register_plugin",
    "a plugin descriptor holds C function pointers; Julia users load plugin libraries",
)];

/// A C type: base name (`const` dropped), pointer depth, fixed array length.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CType {
    base: String,
    ptr: usize,
    array: Option<usize>,
}

fn c_type(text: &str) -> CType {
    let ptr = text.matches('*').count();
    let base = text
        .replace('*', " ")
        .split_whitespace()
        .filter(|w| *w != "const")
        .collect::<Vec<_>>()
        .join(" ");
    CType {
        base,
        ptr,
        array: None,
    }
}

/// The header without comments and preprocessor lines.
fn header_code() -> String {
    let h = std::fs::read_to_string(root().join("include/strata.h")).unwrap();
    let mut out = String::new();
    let mut in_block = false;
    for line in h.lines() {
        let t = line.trim();
        if in_block {
            in_block = !t.contains("*/");
            continue;
        }
        if t.starts_with("/*") {
            in_block = !t.contains("*/");
            continue;
        }
        // Comments, preprocessor lines, and C++'s `extern "C" {` ... `}`.
        if t.starts_with("//")
            || t.starts_with('#')
            || t.starts_with("extern \"C\"")
            || t.starts_with("}  //")
        {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Function prototypes of the header: name → (return type, argument types).
fn prototypes(code: &str) -> BTreeMap<String, (CType, Vec<CType>)> {
    let mut out = BTreeMap::new();
    for stmt in code.split(';') {
        let stmt = stmt.trim();
        let stmt = stmt.rsplit('}').next().unwrap().trim();
        if stmt.starts_with("typedef") || !stmt.ends_with(')') {
            continue;
        }
        let Some(open) = stmt.find('(') else { continue };
        let head = &stmt[..open];
        let Some(name) = head
            .split_whitespace()
            .last()
            .map(|n| n.trim_start_matches('*'))
        else {
            continue;
        };
        if !name.starts_with("strata_") {
            continue;
        }
        let ret = c_type(&head[..head.len() - name.len()]);
        let args_text = &stmt[open + 1..stmt.len() - 1];
        let args = if args_text.trim() == "void" {
            Vec::new()
        } else {
            args_text
                .split(',')
                .map(|a| {
                    // Drop the parameter name: the last word (after any '*').
                    let a = a.trim();
                    let cut = a.rfind(|c: char| c == '*' || c.is_whitespace()).unwrap();
                    c_type(&a[..=cut])
                })
                .collect()
        };
        out.insert(name.to_string(), (ret, args));
    }
    out
}

/// `typedef struct { fields } name;` of the header: name → fields (name, type).
fn structs(code: &str) -> BTreeMap<String, Vec<(String, CType)>> {
    let mut out = BTreeMap::new();
    let mut rest = code;
    while let Some(start) = rest.find("typedef struct {") {
        let body_start = start + "typedef struct {".len();
        let end = body_start + rest[body_start..].find('}').unwrap();
        let name_end = end + rest[end..].find(';').unwrap();
        let name = rest[end + 1..name_end].trim().to_string();
        let fields = rest[body_start..end]
            .split(';')
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(|f| {
                let (decl, array) = match f.split_once('[') {
                    Some((d, n)) => (d, Some(n.trim_end_matches(']').parse().unwrap())),
                    None => (f, None),
                };
                let cut = decl.rfind(|c: char| c == '*' || c.is_whitespace()).unwrap();
                let mut ty = c_type(&decl[..=cut]);
                ty.array = array;
                (decl[cut + 1..].trim().to_string(), ty)
            })
            .collect();
        out.insert(name, fields);
        rest = &rest[name_end..];
    }
    out
}

/// Splits `s` at commas outside brackets.
fn split_top(s: &str) -> Vec<String> {
    let (mut depth, mut cur, mut out) = (0i32, String::new(), Vec::new());
    for c in s.chars() {
        match c {
            '(' | '{' | '[' => depth += 1,
            ')' | '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// One `ccall` of the package.
#[derive(Debug)]
struct Ccall {
    symbol: String,
    library: String,
    ret: String,
    args: Vec<String>,
    values: usize,
    at: String,
}

/// Every `ccall(...)` in `src` (the text of `file`).
fn ccalls(file: &str, src: &str) -> Vec<Ccall> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = src[from..].find("ccall(") {
        let start = from + i + "ccall(".len();
        let mut depth = 1;
        let mut end = start;
        for (k, c) in src[start..].char_indices() {
            match c {
                '(' | '{' | '[' => depth += 1,
                ')' | '}' | ']' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                end = start + k;
                break;
            }
        }
        let parts = split_top(&src[start..end]);
        let line = src[..start].lines().count();
        let at = format!("{file}:{line}");
        assert!(parts.len() >= 3, "{at}: unreadable ccall");
        let target = split_top(parts[0].trim_start_matches('(').trim_end_matches(')'));
        assert_eq!(
            target.len(),
            2,
            "{at}: ccall target is not (:symbol, library)"
        );
        let tuple = parts[2].trim();
        assert!(
            tuple.starts_with('(') && tuple.ends_with(')'),
            "{at}: argument types are not a tuple"
        );
        out.push(Ccall {
            symbol: target[0].trim_start_matches(':').to_string(),
            library: target[1].clone(),
            ret: parts[1].clone(),
            args: split_top(&tuple[1..tuple.len() - 1]),
            values: parts.len() - 3,
            at,
        });
        from = end;
    }
    out
}

/// Whether Julia type `j` passes or returns C type `c` correctly.
fn compatible(c: &CType, j: &str) -> bool {
    if c.ptr == 0 {
        let allowed: &[&str] = match c.base.as_str() {
            "int32_t" => &["Int32", "Cint"],
            "int64_t" => &["Int64", "Clonglong"],
            "uint64_t" => &["UInt64", "Culonglong"],
            "uint32_t" => &["UInt32", "Cuint"],
            "uint8_t" => &["UInt8", "Cuchar"],
            "char" => &["UInt8", "Cchar", "Int8", "Cuchar"],
            "size_t" => &["Csize_t"],
            "double" => &["Float64", "Cdouble"],
            "void" => &["Cvoid", "Nothing"],
            other => return other.starts_with("strata_") && j == other,
        };
        return allowed.contains(&j);
    }
    if j == "Cstring" {
        return c.base == "char" && c.ptr == 1;
    }
    let inner = j
        .strip_prefix("Ptr{")
        .or_else(|| j.strip_prefix("Ref{"))
        .and_then(|r| r.strip_suffix('}'));
    let Some(inner) = inner else { return false };
    let pointee = CType {
        base: c.base.clone(),
        ptr: c.ptr - 1,
        array: None,
    };
    compatible(&pointee, inner)
}

/// Whether a Julia struct field type matches a C field (arrays as NTuple).
fn field_compatible(c: &CType, j: &str) -> bool {
    match c.array {
        Some(n) => {
            let Some(inner) = j
                .strip_prefix(&format!("NTuple{{{n},"))
                .and_then(|r| r.strip_suffix('}'))
            else {
                return false;
            };
            compatible(
                &CType {
                    array: None,
                    ..c.clone()
                },
                inner.trim(),
            )
        }
        None => compatible(c, j),
    }
}

/// Problems of one ccall against the prototypes and the exported symbols.
fn check_ccall(
    call: &Ccall,
    protos: &BTreeMap<String, (CType, Vec<CType>)>,
    exported: &BTreeSet<String>,
) -> Vec<String> {
    let mut bad = Vec::new();
    let at = &call.at;
    if call.library != "libstrata" {
        bad.push(format!("{at}: library {} is not libstrata", call.library));
    }
    if !exported.contains(&call.symbol) {
        bad.push(format!(
            "{at}: {} is not exported by libstrata.so",
            call.symbol
        ));
    }
    let Some((ret, args)) = protos.get(&call.symbol) else {
        bad.push(format!("{at}: {} is not in strata.h", call.symbol));
        return bad;
    };
    if !compatible(ret, &call.ret) {
        bad.push(format!(
            "{at}: {} returns {ret:?}, ccall says {}",
            call.symbol, call.ret
        ));
    }
    if args.len() != call.args.len() {
        bad.push(format!(
            "{at}: {} takes {} arguments, ccall declares {}",
            call.symbol,
            args.len(),
            call.args.len()
        ));
    }
    for (k, (c, j)) in args.iter().zip(&call.args).enumerate() {
        if !compatible(c, j) {
            bad.push(format!(
                "{at}: {} argument {k} is {c:?}, ccall says {j}",
                call.symbol
            ));
        }
    }
    if call.values != call.args.len() {
        bad.push(format!(
            "{at}: {} passes {} values for {} types",
            call.symbol,
            call.values,
            call.args.len()
        ));
    }
    bad
}

/// `struct NAME ... end` blocks of a Julia source: name → fields (name, type).
fn julia_structs(src: &str) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out = BTreeMap::new();
    let mut lines = src.lines();
    while let Some(line) = lines.next() {
        // Only the mirrors of C structs (`struct strata_...`).
        let Some(name) = line.strip_prefix("struct strata_") else {
            continue;
        };
        let name = format!("strata_{}", name.trim());
        let mut fields = Vec::new();
        for f in lines.by_ref() {
            let f = f.trim();
            if f == "end" {
                break;
            }
            if let Some((n, t)) = f.split_once("::") {
                fields.push((n.trim().to_string(), t.trim().to_string()));
            }
        }
        out.insert(name, fields);
    }
    out
}

fn julia_sources() -> Vec<(String, String)> {
    let dir: PathBuf = root().join("bindings/julia/src");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("jl"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

fn exported_symbols() -> BTreeSet<String> {
    let so = lib_dir().join("libstrata.so");
    run(Command::new("nm").args(["-D", "--defined-only"]).arg(&so))
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(str::to_string))
        .collect()
}

#[test]
fn julia_ccalls_match_the_header_and_the_library() {
    let code = header_code();
    let protos = prototypes(&code);
    // As many prototypes as lines that start a function declaration.
    let declared = code
        .lines()
        .filter(|l| {
            l.starts_with(|c: char| c.is_ascii_lowercase())
                && !l.starts_with("typedef")
                && l.split('(')
                    .next()
                    .is_some_and(|h| h.contains(" strata_") || h.contains("*strata_"))
        })
        .count();
    assert!(
        protos.len() >= 50 && protos.len() == declared,
        "read {} prototypes of {declared}",
        protos.len()
    );
    let exported = exported_symbols();
    let mut problems = Vec::new();
    let mut wrapped = BTreeSet::new();
    let mut jstructs = BTreeMap::new();
    let mut jconsts = BTreeMap::new();
    for (file, src) in julia_sources() {
        for call in ccalls(&file, &src) {
            problems.extend(check_ccall(&call, &protos, &exported));
            wrapped.insert(call.symbol);
        }
        jstructs.extend(julia_structs(&src));
        for line in src.lines() {
            if let Some((name, value)) = line
                .strip_prefix("const STRATA_")
                .and_then(|r| r.split_once(" = "))
            {
                jconsts.insert(format!("STRATA_{name}"), value.trim().to_string());
            }
        }
    }
    for name in protos.keys() {
        let excused = NOT_WRAPPED.iter().any(|(n, _)| n == name);
        if !wrapped.contains(name) && !excused {
            problems.push(format!("{name} has no ccall in bindings/julia/src"));
        }
    }
    // Structs the package mirrors: same fields, same order, same types.
    let cstructs = structs(&code);
    for (name, jfields) in &jstructs {
        let Some(cfields) = cstructs.get(name) else {
            problems.push(format!("Julia struct {name} is not a header struct"));
            continue;
        };
        if cfields.len() != jfields.len() {
            problems.push(format!(
                "{name}: {} fields in C, {} in Julia",
                cfields.len(),
                jfields.len()
            ));
        }
        for ((cn, ct), (jn, jt)) in cfields.iter().zip(jfields) {
            if cn != jn || !field_compatible(ct, jt) {
                problems.push(format!("{name}.{cn} is {ct:?}; Julia has {jn}::{jt}"));
            }
        }
    }
    // Every struct a ccall points to is mirrored.
    for (_, args) in protos.iter().filter(|(n, _)| wrapped.contains(*n)) {
        for a in &args.1 {
            if a.base.starts_with("strata_")
                && cstructs.contains_key(&a.base)
                && !jstructs.contains_key(&a.base)
            {
                problems.push(format!("struct {} is not mirrored in Julia", a.base));
            }
        }
    }
    // Constants.
    let header = header_defines();
    for (name, value) in &header {
        let wanted = [
            "STRATA_ERROR_",
            "STRATA_SYNC_",
            "STRATA_OPEN_",
            "STRATA_SPECIAL_",
            "STRATA_MAX_DIM",
        ];
        if wanted.iter().any(|p| name.starts_with(p)) {
            match jconsts.get(name) {
                Some(v) if v == value => {}
                Some(v) => problems.push(format!("{name} = {v} in Julia, {value} in strata.h")),
                None => problems.push(format!("{name} is missing from LibStrata")),
            }
        }
    }
    assert!(
        problems.is_empty(),
        "Julia bindings:\n{}",
        problems.join("\n")
    );
    assert!(wrapped.len() + NOT_WRAPPED.len() >= protos.len());
}

#[test]
fn the_checker_rejects_wrong_ccalls() {
    let protos = prototypes(&header_code());
    let exported = exported_symbols();
    let bad = [
        // int64_t returned as Int32
        "ccall((:strata_schunk_nchunks, libstrata), Int32, (Ptr{strata_schunk},), s)",
        // size_t passed as Int64
        "ccall((:strata_decompress, libstrata), Int64, (Ptr{UInt8}, Int64, Ptr{UInt8}, Csize_t), a, b, c, d)",
        // a missing argument
        "ccall((:strata_schunk_delete_chunk, libstrata), Int64, (Ptr{strata_schunk},), s)",
        // the wrong struct behind a pointer
        "ccall((:strata_cparams_default, libstrata), Int32, (Ptr{strata_dparams},), p)",
        // a symbol the library does not have
        "ccall((:strata_schunk_frobnicate, libstrata), Int32, (), )",
        // a value short
        "ccall((:strata_runtime_set_nthreads, libstrata), Int32, (Int32,))",
    ];
    for src in bad {
        let calls = ccalls("bad.jl", src);
        assert_eq!(calls.len(), 1, "{src}");
        assert!(
            !check_ccall(&calls[0], &protos, &exported).is_empty(),
            "accepted: {src}"
        );
    }
    let good = "ccall((:strata_schunk_nchunks, libstrata), Int64, (Ptr{strata_schunk},), s)";
    assert!(check_ccall(&ccalls("good.jl", good)[0], &protos, &exported).is_empty());
}
