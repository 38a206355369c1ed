//! `make install` as a C or Fortran user meets it: installed into a temporary prefix (and
//! staged with DESTDIR), stripped, without building again when a build exists; a C program
//! and a Fortran program built with nothing but the installed files and pkg-config start
//! without LD_LIBRARY_PATH, and a plugin library dropped into the installed plugin directory
//! is found by the C program, which lives outside the prefix.
//!
//! The Makefile installs release builds, so this runs with `cargo test --release`.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "clib/mod.rs"]
mod clib;
use clib::{lib_dir, root, run, scratch};

/// The cargo target directory holding `release/` (where the tests run from).
fn release_target() -> PathBuf {
    let target = lib_dir();
    assert!(
        target.ends_with("release"),
        "make install installs release builds; these tests run from {}: run with --release",
        target.display()
    );
    target.parent().unwrap().to_path_buf()
}

/// `make install` (or `uninstall`) with `vars`, `cargo` as the cargo it may call.
fn make(goal: &str, vars: &[String], cargo: &str) {
    run(Command::new("make")
        .current_dir(root())
        .arg("--quiet")
        .arg(goal)
        .args(vars)
        .env("CARGO", cargo));
}

/// `pkg-config ARGS PACKAGE` against the prefix's pkgconfig directory.
fn pkg_config(prefix: &Path, package: &str, args: &[&str]) -> Vec<String> {
    run(Command::new("pkg-config")
        .args(args)
        .arg(package)
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig")))
    .split_whitespace()
    .map(str::to_owned)
    .collect()
}

/// Runs `exe` as a program started outside the build: no LD_LIBRARY_PATH, no plugin path,
/// a HOME of its own.
fn run_clean(exe: &Path, home: &Path) -> std::process::Output {
    Command::new(exe)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("STRATA_PLUGIN_PATH")
        .env("HOME", home)
        .output()
        .unwrap()
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "make install installs the release build: run with --release"
)]
fn make_install_gives_programs_that_start_and_find_plugins() {
    let target_root = release_target();
    let release = target_root.join("release");
    let dir = scratch("install");
    let prefix = dir.join("prefix");
    let vars = |prefix: &str| {
        vec![
            format!("PREFIX={prefix}"),
            format!("TARGET_DIR={}", target_root.display()),
        ]
    };
    // The first install builds only what is missing (the strata command, the Fortran
    // module); the second finds everything built: with `false` as cargo, a build would fail.
    make(
        "install",
        &vars(&prefix.display().to_string()),
        env!("CARGO"),
    );
    make("install", &vars(&prefix.display().to_string()), "false");

    let version = env!("CARGO_PKG_VERSION");
    let abi = strata::capi::STRATA_ABI_VERSION;
    for file in [
        "bin/strata".to_string(),
        "include/strata.h".into(),
        "include/strata/fortran/strata.mod".into(),
        "include/strata/fortran/strata.f90".into(),
        "lib/libstrata.a".into(),
        format!("lib/libstrata.so.{version}"),
        format!("lib/libstrata.so.{abi}"),
        "lib/libstrata.so".into(),
        "lib/libstrata_fortran.a".into(),
        "lib/pkgconfig/strata.pc".into(),
        "lib/pkgconfig/strata-fortran.pc".into(),
    ] {
        assert!(prefix.join(&file).exists(), "make install made no {file}");
    }
    let plugins = prefix.join("lib/strata/plugins");
    assert!(plugins.is_dir());

    // Stripped: no symbol table or debug info left in the shared library and the command;
    // the archive keeps its symbols (the linker needs them) but no debug info.
    let so = prefix.join(format!("lib/libstrata.so.{version}"));
    for file in [&so, &prefix.join("bin/strata")] {
        let sections = run(Command::new("readelf").args(["-S", "--wide"]).arg(file));
        assert!(
            !sections.contains(".debug_info") && !sections.contains(".symtab"),
            "{} is not stripped:\n{sections}",
            file.display()
        );
    }
    let archive = run(Command::new("readelf")
        .args(["-S", "--wide"])
        .arg(prefix.join("lib/libstrata.a")));
    assert!(
        !archive.contains(".debug_info"),
        "libstrata.a keeps debug info"
    );
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    eprintln!(
        "libstrata.so {} -> {} bytes, libstrata.a {} -> {} bytes",
        size(&release.join("libstrata.so")),
        size(&so),
        size(&release.join("libstrata.a")),
        size(&prefix.join("lib/libstrata.a"))
    );
    let cli = run(Command::new(prefix.join("bin/strata")).arg("--version"));
    assert!(cli.contains(version), "{cli}");

    // A C program built from the installed files only, living outside the prefix.
    let mut cflags = pkg_config(&prefix, "strata", &["--cflags", "--libs"]);
    assert!(
        cflags.contains(&format!("-Wl,-rpath,{}", prefix.join("lib").display())),
        "no rpath for a prefix outside /usr: {cflags:?}"
    );
    let exe = dir.join("plugin_user");
    cflags.extend(["-o".into(), exe.display().to_string()]);
    run(Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg(root().join("tests/install/plugin_user.c"))
        .args(&cflags));
    // No plugin yet: codec 244 is not found, and the installed plugin directory was searched.
    let out = run_clean(&exe, &dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.starts_with("compress: -7: ") && stdout.contains(&plugins.display().to_string()),
        "{stdout}"
    );
    // The example codec dropped into the installed plugin directory is found.
    run(Command::new("cc")
        .args(["-std=c11", "-O2", "-shared", "-fPIC", "-I"])
        .arg(prefix.join("include"))
        .arg(root().join("plugins/examples/c-codec/example_rle.c"))
        .arg("-o")
        .arg(plugins.join("libexample_rle.so")));
    let out = run_clean(&exe, &dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success()
            && stdout.starts_with("codec example_rle: 6000 -> ")
            && stdout.ends_with("ok\n"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A Fortran program built from the installed module and strata-fortran.pc.
    let fexe = dir.join("prog");
    run(Command::new("gfortran")
        .args(["-std=f2008", "-Wall", "-Werror"])
        .arg(root().join("tests/install/prog.f90"))
        .args(pkg_config(
            &prefix,
            "strata-fortran",
            &["--cflags", "--libs"],
        ))
        .arg("-o")
        .arg(&fexe));
    let out = run_clean(&fexe, &dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout == format!("strata {version}\nok\n"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // DESTDIR stages the same files under another root, the .pc naming the final prefix; a
    // system libdir gets no rpath.
    let stage = dir.join("stage");
    let mut staged = vars("/opt/strata");
    staged.push(format!("DESTDIR={}", stage.display()));
    make("install", &staged, "false");
    let pc = std::fs::read_to_string(stage.join("opt/strata/lib/pkgconfig/strata.pc")).unwrap();
    assert!(
        pc.contains("libdir=/opt/strata/lib\n") && pc.contains("-Wl,-rpath,${libdir}"),
        "{pc}"
    );
    assert!(stage.join("opt/strata/lib/strata/plugins").is_dir());
    let mut system = vars("/usr");
    system.push(format!("DESTDIR={}", stage.display()));
    make("install", &system, "false");
    let pc = std::fs::read_to_string(stage.join("usr/lib/pkgconfig/strata.pc")).unwrap();
    assert!(
        pc.contains("libdir=/usr/lib\n") && !pc.contains("rpath"),
        "{pc}"
    );

    // Uninstall removes what install put there (the dropped plugin stays, with its directory).
    make("uninstall", &vars(&prefix.display().to_string()), "false");
    for file in [
        "lib/libstrata.so",
        "bin/strata",
        "lib/pkgconfig/strata-fortran.pc",
    ] {
        assert!(!prefix.join(file).exists(), "make uninstall left {file}");
    }
    assert!(plugins.join("libexample_rle.so").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
