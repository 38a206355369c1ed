//! The plugin search path holding entries named like libraries that are none (a directory,
//! a FIFO, a symlink to nothing): the daemon starts, says each once in its log, opens none
//! of them, and serves.

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
