//! The C ABI from C: the committed header is what cbindgen generates, its version macros
//! match the crate, and every program in c-examples/ builds warning-free and runs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// libstrata.a of this test's profile (target/<profile>/), built here: `cargo test` builds
/// only the rlib.
fn static_lib() -> PathBuf {
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
        "building libstrata.a failed"
    );
    dir.join("libstrata.a")
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
    let lib = static_lib();
    assert!(lib.exists(), "{} not built", lib.display());
    let out_dir = std::env::temp_dir().join(format!("strata-c-examples-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).unwrap();
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
