//! The plugin search path holding entries named like libraries that are none (a directory,
//! a FIFO, a symlink to nothing): the daemon starts, says each once in its log, opens none
//! of them, and serves; and a plugin library that is a symlink, loaded with the data roots'
//! symlinks off (the search path is configuration, not a client's input).

mod common;

use common::{data_root, floats, Daemon};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

#[test]
fn entries_that_are_no_library_are_skipped_with_one_warning_each() {
    let root = data_root();
    let plugins = tempfile::tempdir().unwrap();
    let p = plugins.path();
    std::fs::create_dir(p.join("dir.so")).unwrap();
    let fifo = CString::new(p.join("fifo.so").as_os_str().as_bytes()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path in our own temporary directory.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::os::unix::fs::symlink(p.join("nothing"), p.join("dangling.so")).unwrap();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("stderr.log");
    let mut d = Daemon::start_logged(
        &["--root", &format!("@public={}", root.path().display())],
        &[("STRATA_PLUGIN_PATH", p.to_str().unwrap())],
        &log,
    );
    for _ in 0..3 {
        let r = d.get("/v1/slice/@public/sub/line.b2nd?sel=10:13");
        assert_eq!((r.status, floats(&r.body)), (200, vec![5.0, 5.5, 6.0]));
    }
    assert!(d.terminate(std::time::Duration::from_secs(10)).is_some());
    let text = std::fs::read_to_string(&log).unwrap();
    let warnings: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("plugin search path: skipped, not a regular file"))
        .collect();
    assert_eq!(warnings.len(), 3, "{text}");
    for (name, what) in [
        ("dangling.so", "a symlink to nothing, or unreadable"),
        ("dir.so", "a directory"),
        ("fifo.so", "a FIFO"),
    ] {
        let path = p.join(name).display().to_string();
        assert_eq!(
            warnings
                .iter()
                .filter(|l| l.contains(&format!("path={path} ")) && l.contains(what))
                .count(),
            1,
            "{name}: {text}"
        );
    }
    assert!(!text.contains("panicked"), "{text}");
}

/// The plugin search path is the operator's configuration, not a client's input: a plugin
/// library there that is a symlink (as packages install `libx.so -> libx.so.1`) is followed
/// and loaded, also when the data roots' symlinks are off (the default), and says no warning.
#[test]
fn a_symlinked_plugin_library_is_loaded_with_symlinks_off() {
    use strata::ndarray::{ArrayParams, Location, NdArray};
    let root = data_root();
    let libs = tempfile::tempdir().unwrap();
    let real = libs.path().join("libexample_rle.so.1");
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cc = std::process::Command::new("cc")
        .args(["-std=c11", "-O2", "-shared", "-fPIC", "-I"])
        .arg(here.join("include"))
        .arg(here.join("plugins/examples/c-codec/example_rle.c"))
        .arg("-o")
        .arg(&real)
        .output()
        .expect("a C compiler (cc)");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    // A dataset compressed with the plugin's codec (244), written by this process.
    strata::registry::Registry::global()
        .load_plugin(&real)
        .unwrap();
    let params = ArrayParams::from_dtype(&[1000], "<f4").unwrap();
    let mut cparams = params.cparams.clone();
    cparams.codec = strata::CodecId(244);
    let params = params
        .with_cparams(&cparams)
        .with_chunkshape(&[100])
        .with_blockshape(&[25]);
    let path = root.path().join("rle.b2nd");
    NdArray::from_buffer(&params, &Location::File(path), &common::f32_items(1000))
        .unwrap()
        .close()
        .unwrap();
    let root_arg = format!("@public={}", root.path().display());
    // Without the plugin: 501.
    let empty = tempfile::tempdir().unwrap();
    let d = Daemon::start_env(
        &["--root", &root_arg],
        &[("STRATA_PLUGIN_PATH", empty.path().to_str().unwrap())],
    );
    let r = d.get("/v1/slice/@public/rle.b2nd?sel=10:13");
    assert_eq!(
        (r.status, r.detail().as_str()),
        (
            501,
            "the dataset needs codec ID 244, which this server has no plugin for"
        )
    );
    drop(d);
    // The search path holds only a symlink to the library.
    let plugins = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&real, plugins.path().join("libexample_rle.so")).unwrap();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("stderr.log");
    let mut d = Daemon::start_logged(
        &["--root", &root_arg],
        &[("STRATA_PLUGIN_PATH", plugins.path().to_str().unwrap())],
        &log,
    );
    let r = d.get("/v1/slice/@public/rle.b2nd?sel=10:13");
    assert_eq!((r.status, floats(&r.body)), (200, vec![5.0, 5.5, 6.0]));
    assert!(d.terminate(std::time::Duration::from_secs(10)).is_some());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("plugin search path: skipped"), "{text}");
}
