//! The plugin library as HDF5 sees it: it exports only the two plugin entry points (not
//! Strata's C ABI, not the LZ4 and Zstd it carries), needs no libhdf5 and names its own soname.
//! Checked with `nm` and `readelf` on the library Cargo built beside this test.

use std::path::PathBuf;
use std::process::Command;

fn plugin() -> PathBuf {
    // target/<profile>/deps/exports-<hash> → target/<profile>/libstrata_hdf5_filter.so
    let exe = std::env::current_exe().expect("the test's path");
    let lib = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>")
        .join("libstrata_hdf5_filter.so");
    assert!(lib.is_file(), "no {}", lib.display());
    lib
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("running a binutils tool");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

#[test]
fn only_the_two_plugin_entry_points_are_exported() {
    let nm = run(Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(plugin()));
    let mut names: Vec<&str> = nm
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["H5PLget_plugin_info", "H5PLget_plugin_type"],
        "{nm}"
    );
}

#[test]
fn no_libhdf5_is_needed_nor_any_hdf5_symbol() {
    let dynamic = run(Command::new("readelf").arg("-d").arg(plugin()));
    let needed: Vec<&str> = dynamic
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1)?.split(']').next())
        .collect();
    assert!(!needed.is_empty(), "{dynamic}");
    assert!(needed.iter().all(|n| !n.contains("hdf5")), "{needed:?}");
    assert!(
        dynamic.contains("Library soname: [libstrata_hdf5_filter.so]"),
        "{dynamic}"
    );
    let undefined = run(Command::new("nm")
        .args(["-D", "--undefined-only"])
        .arg(plugin()));
    let h5: Vec<&str> = undefined.lines().filter(|l| l.contains(" H5")).collect();
    assert!(h5.is_empty(), "undefined HDF5 symbols: {h5:?}");
}
