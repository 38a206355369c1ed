//! The saved inputs of the `info` fuzz target (`tests/data/fuzz-regressions/info-*.bin`),
//! replayed through the target's own oracle, and given as files to `strata info` itself: each
//! is reported or refused with exit status 1 and a message naming the file, never a panic.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../fuzz/src/info.rs"]
mod info;

fn regressions() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/fuzz-regressions");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("info-") && n.ends_with(".bin"))
        })
        .collect();
    found.sort();
    assert!(!found.is_empty(), "no info-*.bin in {}", dir.display());
    found
}

#[test]
fn saved_inputs_pass_the_oracle() {
    for path in regressions() {
        info::check_info(&std::fs::read(&path).unwrap());
    }
}

#[test]
fn saved_inputs_as_files_exit_0_or_1() {
    for path in regressions() {
        for json in [false, true] {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
            cmd.arg("info");
            if json {
                cmd.arg("--json");
            }
            let out = cmd.arg(&path).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            match out.status.code() {
                Some(0) => assert!(!out.stdout.is_empty(), "{}", path.display()),
                Some(1) => assert!(
                    stderr.starts_with("strata: error: ")
                        && stderr.contains(&path.display().to_string()),
                    "{}: {stderr}",
                    path.display()
                ),
                other => panic!("{}: exit {other:?}: {stderr}", path.display()),
            }
        }
    }
}

/// The input the `info` target was made for: a b2nd array whose shape's size overflows 64
/// bits (bit 62 of its first dimension set; `strata info` panicked on it).
#[test]
fn the_shape_overflow_is_refused() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data/fuzz-regressions/info-b2nd-shape-overflow.bin");
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg("info")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains(
        "the b2nd shape [4611686018427387934, 7] of 4-byte items is more bytes than 64 bits hold"
    ));
}
