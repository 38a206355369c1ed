//! Shared by the tests that use Strata as a C library (ffi_c.rs, fortran.rs, julia_ccalls.rs):
//! the repository root, the built libstrata.a / libstrata.so, scratch directories, commands.
#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// target/<profile>/ of this test, with libstrata.a and libstrata.so built there (with HDF5
/// support, as `make` builds them): `cargo test` builds only the rlib.
pub fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps");
    let mut cargo = Command::new(env!("CARGO"));
    cargo.current_dir(root()).args([
        "build",
        "--quiet",
        "-p",
        "strata",
        "--lib",
        "--features",
        "hdf5",
    ]);
    if dir.file_name().and_then(|n| n.to_str()) == Some("release") {
        cargo.arg("--release");
    }
    assert!(
        cargo.status().expect("cargo").success(),
        "building libstrata failed"
    );
    dir.to_path_buf()
}

/// The linker flags of Debian's libhdf5 (`pkg-config --libs hdf5`), which a program linking
/// libstrata.a statically needs.
pub fn hdf5_libs() -> Vec<String> {
    run(Command::new("pkg-config").args(["--libs", "hdf5"]))
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `cmd`, panicking with its output when it fails; returns its stdout.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `#define NAME VALUE` lines of the committed header, in order.
pub fn header_defines() -> Vec<(String, String)> {
    let h = std::fs::read_to_string(root().join("include/strata.h")).unwrap();
    h.lines()
        .filter_map(|l| {
            let mut words = l.strip_prefix("#define ")?.split_whitespace();
            Some((words.next()?.to_string(), words.next()?.to_string()))
        })
        .collect()
}
