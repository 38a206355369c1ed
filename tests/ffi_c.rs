//! The C ABI from C: the committed header is what cbindgen generates, its version macros
//! match the crate, and every program in c-examples/ builds warning-free and runs.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "clib/mod.rs"]
mod clib;
use clib::{hdf5_libs, header_defines, lib_dir, root, run, scratch};

#[test]
fn header_is_generated_from_the_source() {
    let out = std::env::temp_dir().join(format!("strata-header-{}.h", std::process::id()));
    let status = Command::new("cbindgen")
        .current_dir(root())
        .args([
            "--config",
            "cbindgen.toml",
            "--crate",
            "strata",
            "--quiet",
            "--output",
        ])
        .arg(&out)
        .status()
        .expect("cbindgen must be installed (scripts/test.sh installs it)");
    assert!(status.success());
    let fresh = std::fs::read_to_string(&out).unwrap();
    let committed = std::fs::read_to_string(root().join("include/strata.h")).unwrap();
    let _ = std::fs::remove_file(&out);
    assert!(fresh == committed, "include/strata.h is stale: run cbindgen --config cbindgen.toml --crate strata --output include/strata.h");
}

#[test]
fn header_macros_match_the_library() {
    let defines = header_defines();
    let define = |name: &str| -> String {
        defines
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name} missing from strata.h"))
            .1
            .clone()
    };
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(define("STRATA_VERSION"), format!("\"{version}\""));
    assert_eq!(
        define("STRATA_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MAJOR")
    );
    assert_eq!(
        define("STRATA_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_MINOR")
    );
    assert_eq!(
        define("STRATA_VERSION_PATCH"),
        env!("CARGO_PKG_VERSION_PATCH")
    );
    assert_eq!(
        define("STRATA_ABI_VERSION"),
        strata::capi::STRATA_ABI_VERSION.to_string()
    );
    assert_eq!(
        define("STRATA_ERROR_PANIC"),
        strata::capi::STRATA_ERROR_PANIC.to_string()
    );
    assert_eq!(
        define("STRATA_ERROR_NULL_POINTER"),
        strata::capi::STRATA_ERROR_NULL_POINTER.to_string()
    );

    // Every code the library names (`src/ffi/error.rs` checks that every error variant's code
    // is one of them) is a macro of that name and value, and every macro is such a code.
    let errors: Vec<(String, i32)> = defines
        .iter()
        .filter(|(n, _)| n.starts_with("STRATA_ERROR_"))
        .map(|(n, v)| (n.clone(), v.parse().unwrap_or_else(|_| panic!("{n} = {v}"))))
        .collect();
    let mut named = 0;
    for code in -2000..0 {
        let mut buf = [0u8; 64];
        // SAFETY: a 64-byte buffer.
        let n =
            unsafe { strata::capi::error::strata_error_name(code, buf.as_mut_ptr().cast(), 64) };
        let Ok(n) = usize::try_from(n) else { continue };
        let name = std::str::from_utf8(&buf[..n]).unwrap();
        assert_eq!(buf[n], 0);
        assert!(
            errors.iter().any(|(m, c)| m == name && *c == code),
            "{name} ({code}) is not defined as {code} in strata.h"
        );
        named += 1;
    }
    assert_eq!(
        named,
        errors.len(),
        "strata.h defines codes the library does not name"
    );
    let not_a_code = strata::error::code::INVALID_PARAM;
    // SAFETY: NULL, 0 is a size query.
    let rc = unsafe { strata::capi::error::strata_error_name(-9999, std::ptr::null_mut(), 0) };
    assert_eq!(rc, i64::from(not_a_code));

    use strata::capi::{chunk as c, params as p, schunk as s};
    for (name, value) in [
        ("STRATA_SYNC_NONE", p::STRATA_SYNC_NONE),
        ("STRATA_SYNC_ON_CLOSE", p::STRATA_SYNC_ON_CLOSE),
        ("STRATA_SYNC_EVERY_WRITE", p::STRATA_SYNC_EVERY_WRITE),
        ("STRATA_OPEN_READ", s::STRATA_OPEN_READ),
        ("STRATA_OPEN_READWRITE", s::STRATA_OPEN_READWRITE),
        ("STRATA_OPEN_APPEND", s::STRATA_OPEN_APPEND),
        ("STRATA_SPECIAL_NONE", c::STRATA_SPECIAL_NONE),
        ("STRATA_SPECIAL_ZERO", c::STRATA_SPECIAL_ZERO),
        ("STRATA_SPECIAL_NAN", c::STRATA_SPECIAL_NAN),
        ("STRATA_SPECIAL_VALUE", c::STRATA_SPECIAL_VALUE),
        ("STRATA_SPECIAL_UNINIT", c::STRATA_SPECIAL_UNINIT),
    ] {
        assert_eq!(define(name), value.to_string(), "{name}");
    }
    assert_eq!(
        define("STRATA_MAX_DIM"),
        strata::format::b2nd::MAX_DIM.to_string()
    );
}

/// The programs in c-examples/.
fn c_examples() -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = std::fs::read_dir(root().join("c-examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("c"))
        .collect();
    all.sort();
    assert!(all.len() >= 6, "C examples missing: {all:?}");
    all
}

/// Compiles `src` with `compiler` and `flags` against libstrata.a into `exe`.
fn build_c(compiler: &str, flags: &[&str], src: &Path, exe: &Path) {
    let lib = lib_dir().join("libstrata.a");
    assert!(lib.exists(), "{} not built", lib.display());
    let out = Command::new(compiler)
        .args(flags)
        .arg("-I")
        .arg(root().join("include"))
        .arg(src)
        .arg(&lib)
        .args(hdf5_libs())
        .args(["-lm", "-lpthread", "-ldl", "-o"])
        .arg(exe)
        .output()
        .unwrap_or_else(|e| panic!("{compiler}: {e}"));
    assert!(
        out.status.success(),
        "{compiler} {}: {}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs an example as `exe <scratch dir> <data dir>`; checks it ends with "ok" and returns
/// its stdout and stderr.
fn run_example(exe: &Path, dir: &Path, env: &[(&str, String)]) -> (String, String) {
    let out = Command::new(exe)
        .arg(dir)
        .arg(root().join("data"))
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success() && stdout.ends_with("ok\n"),
        "{} failed ({}):\n{stdout}\n{stderr}",
        exe.display(),
        out.status
    );
    (stdout, stderr)
}

const C_FLAGS: &[&str] = &["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"];

#[test]
fn c_examples_build_and_run() {
    let dir = scratch("c-examples");
    for src in c_examples() {
        let exe = dir.join(src.file_stem().unwrap());
        build_c("cc", C_FLAGS, &src, &exe);
        run_example(&exe, &dir, &[]);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_c_example_builds_and_runs_as_cpp() {
    let dir = scratch("c-examples-cpp");
    let exe = dir.join("frame-cpp");
    let flags = [
        "-std=c++17",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-pedantic",
        "-x",
        "c++",
    ];
    // `-x c++` applies to the files after it: the source, not the archive.
    let lib = lib_dir().join("libstrata.a");
    let out = Command::new("g++")
        .arg("-I")
        .arg(root().join("include"))
        .args(flags)
        .arg(root().join("c-examples/frame.c"))
        .args(["-x", "none"])
        .arg(&lib)
        .args(hdf5_libs())
        .args(["-lm", "-lpthread", "-ldl", "-o"])
        .arg(&exe)
        .output()
        .expect("g++");
    assert!(
        out.status.success(),
        "g++: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    run_example(&exe, &dir, &[]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Environment for a run under AddressSanitizer with LeakSanitizer on.
fn asan_env() -> [(&'static str, String); 1] {
    [("ASAN_OPTIONS", "detect_leaks=1:exitcode=23".to_string())]
}

const ASAN_FLAGS: &[&str] = &["-g", "-fsanitize=address", "-fno-omit-frame-pointer"];

#[test]
fn c_examples_are_clean_under_address_sanitizer() {
    // Every example again, built with AddressSanitizer (LeakSanitizer included) against the
    // same libstrata.a: out-of-bounds access, use after free, and handles or buffers still
    // allocated at exit, in the examples or in the library, make the run fail. No
    // suppression is needed: what the library keeps for the whole process (the runtime, the
    // registry, thread-local error messages) stays reachable, which LeakSanitizer accepts.
    let dir = scratch("c-examples-asan");
    let flags: Vec<&str> = C_FLAGS.iter().chain(ASAN_FLAGS).copied().collect();
    for src in c_examples() {
        let exe = dir.join(src.file_stem().unwrap());
        build_c("cc", &flags, &src, &exe);
        let (_, stderr) = run_example(&exe, &dir, &asan_env());
        assert!(
            !stderr.contains("Sanitizer"),
            "{}: AddressSanitizer reported:\n{stderr}",
            src.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A C program under valgrind's memcheck: no invalid or uninitialised access, no block lost,
/// and the pool's worker threads (alive until exit) the only "possibly lost" blocks, which
/// `c-examples/valgrind.supp` suppresses.
#[test]
fn a_c_program_is_clean_under_valgrind() {
    let dir = scratch("valgrind");
    let src = root().join("c-examples/compress.c");
    let exe = dir.join("compress");
    let flags: Vec<&str> = C_FLAGS.iter().chain(&["-g"]).copied().collect();
    build_c("cc", &flags, &src, &exe);
    let memcheck = |extra: &[&str]| {
        let out = Command::new("valgrind")
            .args([
                "--error-exitcode=9",
                "--leak-check=full",
                "--show-leak-kinds=definite,indirect,possible",
                "--errors-for-leak-kinds=definite,indirect,possible",
            ])
            .args(extra)
            .arg(&exe)
            .output()
            .expect("valgrind (scripts/setup-build-deps.sh installs it)");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), stderr)
    };
    let supp = root().join("c-examples/valgrind.supp");
    let (code, stderr) = memcheck(&[&format!("--suppressions={}", supp.display())]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("ERROR SUMMARY: 0 errors"), "{stderr}");
    // Without the file the workers' blocks are what is reported, and nothing else.
    let (code, stderr) = memcheck(&[]);
    assert_eq!(code, Some(9), "{stderr}");
    assert!(stderr.contains("possibly lost"), "{stderr}");
    assert!(stderr.contains("definitely lost: 0 bytes"), "{stderr}");
    assert!(!stderr.contains("uninitialised"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn address_sanitizer_sees_a_leaked_handle() {
    // The check above can fail: a program that never frees its super-chunk is caught.
    let dir = scratch("asan-leak");
    let src = dir.join("leak.c");
    std::fs::write(
        &src,
        "#include \"strata.h\"\n\
         static int leak(void) {\n\
           strata_schunk *s = 0;\n\
           if (strata_schunk_create(0, 0, 0, 0, &s) != 0) return 1;\n\
           int64_t n = strata_schunk_append_buffer(s, (const uint8_t *)\"abcdefgh\", 8);\n\
           s = 0; /* the only pointer to the handle is gone */\n\
           return n == 1 ? 0 : 1;\n\
         }\n\
         int main(void) { return leak(); }\n",
    )
    .unwrap();
    let exe = dir.join("leak");
    let flags: Vec<&str> = C_FLAGS.iter().chain(ASAN_FLAGS).copied().collect();
    build_c("cc", &flags, &src, &exe);
    // The slow unwinder gives the whole stack through Rust frames built without frame
    // pointers (the fast one stops at the first of them, in debug builds).
    let out = Command::new(&exe)
        .env(
            "ASAN_OPTIONS",
            "detect_leaks=1:exitcode=23:fast_unwind_on_malloc=0",
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(23), "{stderr}");
    assert!(
        stderr.contains("LeakSanitizer: detected memory leaks"),
        "{stderr}"
    );
    // The leak's stack names the C entry point that made the handle (inner frames differ
    // between debug and release builds).
    assert!(stderr.contains("in strata_schunk_create"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn only_strata_symbols_are_exported() {
    // Strata may share a process with libblosc2 or hdf5plugin's Blosc2 filter, which bundle
    // their own LZ4 and Zstd: nothing but strata_* may leak out of the shared library.
    let so = lib_dir().join("libstrata.so");
    let nm = run(Command::new("nm").args(["-D", "--defined-only"]).arg(&so));
    let names: Vec<&str> = nm
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert!(
        names.contains(&"strata_compress"),
        "nm found no strata_compress:\n{nm}"
    );
    let foreign: Vec<&&str> = names.iter().filter(|n| !n.starts_with("strata_")).collect();
    assert!(foreign.is_empty(), "exported beyond strata_*: {foreign:?}");
    let soname = run(Command::new("readelf").arg("-d").arg(&so));
    let want = format!("[libstrata.so.{}]", strata::capi::STRATA_ABI_VERSION);
    assert!(soname.contains(&want), "no soname {want}:\n{soname}");
}

#[test]
fn the_readme_links_a_program_against_the_build_tree() {
    let target = lib_dir();
    let Some(target_root) = target.parent().filter(|_| target.ends_with("release")) else {
        eprintln!("skipped: make builds release libraries; run with --release");
        return;
    };
    // The README's two lines, as written: `make`, then the `cc` line naming target/release.
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let cc_line = readme
        .lines()
        .find(|l| l.starts_with("cc prog.c ") && l.contains("target/release"))
        .expect("README.md shows a cc line linking against target/release");
    run(Command::new("make")
        .current_dir(root())
        .arg("--quiet")
        .arg(format!("TARGET_DIR={}", target_root.display()))
        .env("CARGO", env!("CARGO")));
    let dir = scratch("buildtree");
    let exe = dir.join("prog");
    let release = target_root.join("release");
    let line = cc_line
        .replace("target/release", &release.display().to_string())
        .replace("-o prog", &format!("-o {}", exe.display()))
        .replace(
            "prog.c",
            &root().join("c-examples/compress.c").display().to_string(),
        );
    // Run from the repository root, as the README's lines are; `$PWD` is expanded by sh.
    let line = line.replace(
        &format!("\"$PWD/{}\"", release.display()),
        &format!("\"{}\"", release.display()),
    );
    run(Command::new("sh").current_dir(root()).arg("-c").arg(&line));
    let out = Command::new(&exe)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{line}\n{exe:?}: {:?}\n{stderr}",
        out.status
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).ends_with("ok\n"),
        "{stderr}"
    );
    let soname = format!("libstrata.so.{}", strata::capi::STRATA_ABI_VERSION);
    let needed = run(Command::new("readelf").arg("-d").arg(&exe));
    assert!(needed.contains(&format!("[{soname}]")), "{needed}");
    assert_eq!(
        std::fs::read_link(release.join(&soname)).unwrap(),
        Path::new("libstrata.so")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The names a C header declares at file scope: typedef names, struct, union and enum tags,
/// enum constants and function names. Comments and preprocessor lines are left out (macros
/// are checked from the preprocessor itself); fields and parameters are not file-scope names.
fn declared_names(header: &str) -> Vec<String> {
    let mut text = String::new();
    let mut rest = header;
    while let Some(start) = rest.find("/*") {
        text.push_str(&rest[..start]);
        rest = rest[start..]
            .find("*/")
            .map_or("", |end| &rest[start + end + 2..]);
    }
    text.push_str(rest);
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap())
        .filter(|l| !l.trim_start().starts_with('#'))
        // The C++ guard's `extern "C" {` and its closing brace hold the declarations.
        .filter(|l| l.trim() != "}")
        .map(|l| l.replace("extern \"C\" {", " "))
        .collect::<Vec<_>>()
        .join("\n");
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
            .map(str::to_owned)
            .collect()
    };
    let mut names = Vec::new();
    // Split into file-scope declarations at `;` outside braces; a brace body is kept apart
    // (enum bodies declare constants, struct bodies only fields).
    let (mut depth, mut decl, mut body) = (0usize, String::new(), String::new());
    for c in code.chars() {
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    continue;
                }
            }
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    decl.push_str(" {} ");
                    continue;
                }
            }
            _ => {}
        }
        if depth > 0 {
            body.push(c);
            continue;
        }
        if c != ';' {
            decl.push(c);
            continue;
        }
        let d = std::mem::take(&mut decl);
        let b = std::mem::take(&mut body);
        let w = words(&d);
        for (i, word) in w.iter().enumerate() {
            if matches!(word.as_str(), "struct" | "union" | "enum") {
                if let Some(tag) = w.get(i + 1) {
                    names.push(tag.clone());
                }
            }
        }
        if w.iter().any(|x| x == "enum") {
            for constant in b.split(',') {
                if let Some(name) = words(constant).first() {
                    names.push(name.clone());
                }
            }
        }
        let declarator = if let Some(ptr) = d.find("(*") {
            // A function pointer type: the name inside `(*name)`.
            words(&d[ptr..]).into_iter().next()
        } else if let Some(paren) = d.find('(') {
            // A function: the word before its parameter list.
            words(&d[..paren]).pop()
        } else {
            // A typedef or variable: the last word.
            w.last().cloned()
        };
        names.extend(declarator);
    }
    names.retain(|n| n != "struct" && n != "union" && n != "enum");
    names.sort();
    names.dedup();
    names
}

/// The macros `include/strata.h` defines, as the C preprocessor sees them (those of the
/// system headers it includes left out).
fn header_macros() -> Vec<String> {
    let macros = |header: &Path| -> Vec<String> {
        run(Command::new("cc")
            .args(["-dM", "-E", "-x", "c"])
            .arg(header))
        .lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .filter_map(|l| l.split([' ', '(']).next())
        .map(str::to_owned)
        .collect()
    };
    let dir = scratch("header-macros");
    let system = dir.join("system.h");
    std::fs::write(&system, "#include <stddef.h>\n#include <stdint.h>\n").unwrap();
    let before = macros(&system);
    let mut after = macros(&root().join("include/strata.h"));
    after.retain(|m| !before.contains(m));
    let _ = std::fs::remove_dir_all(&dir);
    after
}

/// Whether `name` is in Strata's C namespace.
fn prefixed(name: &str) -> bool {
    name.starts_with("strata_") || name.starts_with("STRATA_")
}

#[test]
fn the_header_declares_only_prefixed_names() {
    let header = std::fs::read_to_string(root().join("include/strata.h")).unwrap();
    let names = declared_names(&header);
    for expected in [
        "strata_ndarray",
        "strata_cparams",
        "strata_compress",
        "strata_plugin_entry_fn",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not found in {names:?}"
        );
    }
    let leaks: Vec<&String> = names.iter().filter(|n| !prefixed(n)).collect();
    assert!(
        leaks.is_empty(),
        "strata.h declares names without the strata_ prefix: {leaks:?}"
    );

    let macros = header_macros();
    assert!(
        macros.iter().any(|m| m == "STRATA_ERROR_PANIC"),
        "{macros:?}"
    );
    let leaks: Vec<&String> = macros.iter().filter(|m| !prefixed(m)).collect();
    assert!(
        leaks.is_empty(),
        "strata.h defines macros without the STRATA_ prefix: {leaks:?}"
    );
}

#[test]
fn the_namespace_check_sees_every_kind_of_declaration() {
    // The check above can fail: each kind of file-scope name, unprefixed, is found, and
    // fields, parameters, comments and macros are not taken for declarations.
    let header = "/* typedef struct Comment Comment; */\n\
                  #define NOT_A_DECLARATION 1\n\
                  typedef struct Opaque Opaque; // typedef struct Line Line;\n\
                  typedef struct { int field; uint8_t arr[6]; } Plain;\n\
                  typedef enum Tag { RED = 1, GREEN } colour;\n\
                  typedef int32_t (*callback)(const uint8_t *src, size_t len);\n\
                  #ifdef __cplusplus\nextern \"C\" {\n#endif\n\
                  int64_t compress(const uint8_t *src, size_t len, strata_cparams *out);\n\
                  extern const int table;\n\
                  #ifdef __cplusplus\n}  // extern \"C\"\n#endif\n";
    assert_eq!(
        declared_names(header),
        ["GREEN", "Opaque", "Plain", "RED", "Tag", "callback", "colour", "compress", "table"]
    );
}
