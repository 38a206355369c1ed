//! The Fortran bindings (bindings/fortran): the module and every example build with
//! `gfortran -std=f2008 -Wall -Werror` against libstrata.a and run; the module's constants
//! equal the header's macros. gfortran is required (scripts/setup-build-deps.sh installs it):
//! without it these tests fail, they do not skip.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "clib/mod.rs"]
mod clib;
use clib::{hdf5_libs, header_defines, lib_dir, root, scratch};

const FFLAGS: &[&str] = &["-std=f2008", "-Wall", "-Werror"];

fn fortran_dir() -> PathBuf {
    root().join("bindings/fortran")
}

fn gfortran() -> Command {
    let found = Command::new("gfortran").arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "gfortran is not installed: run scripts/setup-build-deps.sh (as root it installs \
         Debian's gfortran)"
    );
    Command::new("gfortran")
}

/// Compiles strata.f90 into `dir` (module file and object); returns the object.
fn build_module(dir: &Path) -> PathBuf {
    let obj = dir.join("strata.o");
    let out = gfortran()
        .args(FFLAGS)
        .arg("-J")
        .arg(dir)
        .arg("-c")
        .arg(fortran_dir().join("strata.f90"))
        .arg("-o")
        .arg(&obj)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "strata.f90: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    obj
}

#[test]
fn fortran_examples_build_and_run() {
    let dir = scratch("fortran");
    let obj = build_module(&dir);
    let lib = lib_dir().join("libstrata.a");
    let mut examples: Vec<PathBuf> = std::fs::read_dir(fortran_dir().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("f90"))
        .collect();
    examples.sort();
    assert!(
        !examples.is_empty(),
        "Fortran examples missing: {examples:?}"
    );
    for src in examples {
        let exe = dir.join(src.file_stem().unwrap());
        let out = gfortran()
            .args(FFLAGS)
            .arg("-I")
            .arg(&dir)
            .arg(&src)
            .arg(&obj)
            .arg(&lib)
            .args(hdf5_libs())
            .args(["-lm", "-lpthread", "-ldl", "-o"])
            .arg(&exe)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            src.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let run = Command::new(&exe)
            .arg(&dir)
            .arg(root().join("data"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(
            run.status.success() && stdout.ends_with("ok\n"),
            "{} failed ({}):\n{stdout}\n{}",
            src.display(),
            run.status,
            String::from_utf8_lossy(&run.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fortran_constants_equal_the_header_macros() {
    let module = std::fs::read_to_string(fortran_dir().join("strata.f90")).unwrap();
    let fortran: Vec<(String, String)> = module
        .lines()
        .filter_map(|l| {
            let (_, rest) = l.split_once(", parameter, public :: ")?;
            let (name, value) = rest.split_once('=')?;
            Some((name.trim().to_string(), value.trim().to_string()))
        })
        .collect();
    let header = header_defines();
    let mut checked = 0;
    for (name, value) in &header {
        let wanted = [
            "STRATA_ERROR_",
            "STRATA_SYNC_",
            "STRATA_OPEN_",
            "STRATA_SPECIAL_",
            "STRATA_MAX_DIM",
        ];
        if !wanted.iter().any(|p| name.starts_with(p)) {
            continue;
        }
        let f = fortran
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name} is missing from strata.f90"));
        assert_eq!(&f.1, value, "{name}");
        checked += 1;
    }
    assert_eq!(
        checked,
        fortran.len(),
        "strata.f90 has constants the header lacks"
    );
    assert!(checked >= 40, "only {checked} constants");
}
