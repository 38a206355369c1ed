//! The C ABI from C: the committed header is what cbindgen generates, its version macros
//! match the crate, and every program in c-examples/ builds warning-free and runs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// target/<profile>/ of this test, with libstrata.a and libstrata.so built there: `cargo test`
/// builds only the rlib.
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps");
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .current_dir(root())
        .args(["build", "--quiet", "-p", "strata", "--lib"]);
    if dir.file_name().and_then(|n| n.to_str()) == Some("release") {
        cargo.arg("--release");
    }
    assert!(
        cargo.status().expect("cargo").success(),
        "building libstrata failed"
    );
    dir.to_path_buf()
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `cmd`, panicking with its output when it fails; returns its stdout.
fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

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
    let h = std::fs::read_to_string(root().join("include/strata.h")).unwrap();
    let define = |name: &str| -> String {
        h.lines()
            .find_map(|l| l.strip_prefix(&format!("#define {name} ")))
            .unwrap_or_else(|| panic!("{name} missing from strata.h"))
            .trim()
            .to_string()
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
        strata::ffi::STRATA_ABI_VERSION.to_string()
    );
    assert_eq!(
        define("STRATA_ERROR_PANIC"),
        strata::ffi::STRATA_ERROR_PANIC.to_string()
    );
    assert_eq!(
        define("STRATA_ERROR_NULL_POINTER"),
        strata::ffi::STRATA_ERROR_NULL_POINTER.to_string()
    );
    let cases = [
        (
            "STRATA_ERROR_READ_BUFFER",
            strata::Error::Truncated {
                what: "",
                needed: 0,
                available: 0,
            },
        ),
        (
            "STRATA_ERROR_WRITE_BUFFER",
            strata::Error::DestinationTooSmall {
                needed: 0,
                available: 0,
            },
        ),
        (
            "STRATA_ERROR_CODEC_SUPPORT",
            strata::Error::UnknownCodec { id: 0 },
        ),
        (
            "STRATA_ERROR_VERSION_SUPPORT",
            strata::Error::VersionSupport { version: 0 },
        ),
        (
            "STRATA_ERROR_INVALID_HEADER",
            strata::Error::InvalidHeader(String::new()),
        ),
        (
            "STRATA_ERROR_FILTER_PIPELINE",
            strata::Error::UnknownFilter { id: 0 },
        ),
        (
            "STRATA_ERROR_INVALID_INDEX",
            strata::Error::InvalidIndex(String::new()),
        ),
    ];
    for (name, err) in cases {
        assert_eq!(define(name), err.code().to_string(), "{name}");
    }
}

#[test]
fn c_examples_build_and_run() {
    let lib = lib_dir().join("libstrata.a");
    assert!(lib.exists(), "{} not built", lib.display());
    let out_dir = scratch("c-examples");
    let mut ran = 0;
    for entry in std::fs::read_dir(root().join("c-examples")).unwrap() {
        let src = entry.unwrap().path();
        if src.extension().and_then(|e| e.to_str()) != Some("c") {
            continue;
        }
        let exe = out_dir.join(src.file_stem().unwrap());
        let cc = Command::new("cc")
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I"])
            .arg(root().join("include"))
            .arg(&src)
            .arg(&lib)
            .args(["-lm", "-lpthread", "-ldl", "-o"])
            .arg(&exe)
            .output()
            .expect("a C compiler (cc)");
        assert!(
            cc.status.success(),
            "{}: {}",
            src.display(),
            String::from_utf8_lossy(&cc.stderr)
        );
        let run = Command::new(&exe).output().unwrap();
        assert!(
            run.status.success(),
            "{} failed:\n{}\n{}",
            src.display(),
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(String::from_utf8_lossy(&run.stdout).ends_with("ok\n"));
        ran += 1;
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    assert!(ran >= 1, "no C example found");
}

#[test]
fn only_strata_symbols_are_exported() {
    // Strata may share a process with libblosc2 or hdf5plugin's Blosc2 filter, which bundle
    // their own LZ4 and Zstd: nothing but strata_* may leak out of the shared library.
    let so = lib_dir().join("libstrata.so");
    let nm = run(Command::new("nm").args(["-D", "--defined-only"]).arg(&so));
    let names: Vec<&str> = nm.lines().filter_map(|l| l.split_whitespace().nth(2)).collect();
    assert!(names.contains(&"strata_compress"), "nm found no strata_compress:\n{nm}");
    let foreign: Vec<&&str> = names.iter().filter(|n| !n.starts_with("strata_")).collect();
    assert!(foreign.is_empty(), "exported beyond strata_*: {foreign:?}");
    let soname = run(Command::new("readelf").arg("-d").arg(&so));
    let want = format!("[libstrata.so.{}]", strata::ffi::STRATA_ABI_VERSION);
    assert!(soname.contains(&want), "no soname {want}:\n{soname}");
}

#[test]
fn make_install_gives_a_pkg_config_package() {
    let target = lib_dir();
    let Some(target_root) = target.parent().filter(|_| target.ends_with("release")) else {
        eprintln!("skipped: make install builds release libraries; run with --release");
        return;
    };
    let dir = scratch("install");
    let prefix = dir.join("prefix");
    run(Command::new("make")
        .current_dir(root())
        .arg("--quiet")
        .arg("install")
        .arg(format!("PREFIX={}", prefix.display()))
        .arg(format!("TARGET_DIR={}", target_root.display()))
        .env("CARGO", env!("CARGO")));
    for file in [
        "lib/libstrata.a",
        "lib/libstrata.so",
        "include/strata.h",
        "lib/pkgconfig/strata.pc",
    ] {
        assert!(prefix.join(file).exists(), "make install did not create {file}");
    }
    assert!(prefix.join("lib/strata/plugins").is_dir());
    let pkg_config = |args: &[&str]| {
        run(Command::new("pkg-config")
            .args(args)
            .arg("strata")
            .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig")))
    };
    assert_eq!(pkg_config(&["--modversion"]).trim(), env!("CARGO_PKG_VERSION"));
    let flags = format!("{} {}", pkg_config(&["--cflags"]), pkg_config(&["--libs"]));
    let exe = dir.join("compress");
    run(Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg(root().join("c-examples/compress.c"))
        .args(flags.split_whitespace())
        .arg("-lm")
        .arg("-o")
        .arg(&exe));
    let out = run(Command::new(&exe).env("LD_LIBRARY_PATH", prefix.join("lib")));
    assert!(out.ends_with("ok\n"), "{out}");
    let needed = run(Command::new("readelf").arg("-d").arg(&exe));
    assert!(needed.contains("libstrata.so."), "{needed}");
    let _ = std::fs::remove_dir_all(&dir);
}
