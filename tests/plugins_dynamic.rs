//! Plugin libraries loaded by ID from the search path, and every way loading can fail: each
//! test builds C plugin libraries (tests/plugins/test_plugin.c, in good and bad variants) with
//! cc into its own directory and uses its own registry pointed there.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use strata::chunk::{
    compress_ctx, decompress_vec_ctx, max_compressed_len, CParams, Context, DParams,
};
use strata::registry::{Origin, PluginKind, Registry};
use strata::scheduler::Runtime;
use strata::{CodecId, FilterId};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh directory for one test.
fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-plugins-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Builds tests/plugins/test_plugin.c with `defines` into `dir/lib<stem>.so`.
fn build(dir: &Path, stem: &str, defines: &[&str]) -> PathBuf {
    let out = dir.join(format!(
        "{}{stem}.{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_EXTENSION
    ));
    let cc = Command::new("cc")
        .args([
            "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-I",
        ])
        .arg(root().join("include"))
        .args(defines.iter().map(|d| format!("-D{d}")))
        .arg(root().join("tests/plugins/test_plugin.c"))
        .arg("-o")
        .arg(&out)
        .output()
        .expect("a C compiler (cc)");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    out
}

fn registry(dirs: &[&Path]) -> Arc<Registry> {
    let r = Registry::with_builtins();
    r.set_plugin_dirs(Some(dirs.iter().map(|d| d.to_path_buf()).collect()));
    Arc::new(r)
}

/// Runs of bytes: what the test codec compresses.
fn runs() -> Vec<u8> {
    (0..40_000u32).map(|i| (i / 300) as u8).collect()
}

fn cparams(codec: u8) -> CParams {
    CParams {
        codec: CodecId(codec),
        typesize: 1,
        filters: [FilterId::NOFILTER; 6],
        nthreads: 1,
        ..CParams::default()
    }
}

fn compress_with(reg: &Arc<Registry>, cparams: &CParams, data: &[u8]) -> strata::Result<Vec<u8>> {
    let ctx = Context::new(Arc::clone(reg), Runtime::global());
    let mut out = vec![0u8; max_compressed_len(data.len())];
    let n = compress_ctx(&ctx, cparams, data, &mut out)?;
    out.truncate(n);
    Ok(out)
}

fn decompress_with(reg: &Arc<Registry>, chunk: &[u8]) -> strata::Result<Vec<u8>> {
    let ctx = Context::new(Arc::clone(reg), Runtime::global());
    decompress_vec_ctx(&ctx, &DParams::default(), chunk)
}

#[test]
fn an_unregistered_id_loads_from_the_search_path_and_round_trips() {
    let empty = tempdir("found-empty");
    let dir = tempdir("found");
    let lib = build(&dir, "strata_test_rle", &[]);
    let reg = registry(&[&empty, &dir]);
    let data = runs();
    let chunk = compress_with(&reg, &cparams(200), &data).unwrap();
    assert!(chunk.len() < data.len() / 10, "{} bytes", chunk.len());
    assert_eq!(chunk[22], 200, "compcode in the header");
    assert_eq!(decompress_with(&reg, &chunk).unwrap(), data);
    let entry = reg.list().into_iter().find(|r| r.id == 200).unwrap();
    assert_eq!(entry.kind, PluginKind::Codec);
    assert_eq!(entry.name, "test_rle");
    assert_eq!(entry.origin, Origin::Library(lib.canonicalize().unwrap()));
    // Another registry without the directory cannot read it: the ID is named, and where it looked.
    let other = registry(&[&empty]);
    let err = decompress_with(&other, &chunk).unwrap_err();
    assert_eq!(err.code(), -7);
    let msg = err.to_string();
    assert!(msg.contains("unknown codec ID 200"), "{msg}");
    assert!(msg.contains(&empty.display().to_string()), "{msg}");
}

#[test]
fn unknown_ids_name_the_id_and_every_directory_searched() {
    let a = tempdir("unknown-a");
    let missing = a.join("does-not-exist");
    let reg = registry(&[&a, &missing]);
    let err = reg.codec(CodecId(201)).err().unwrap();
    assert_eq!(err.code(), -7);
    let msg = err.to_string();
    assert!(msg.contains("201"), "{msg}");
    assert!(msg.contains(&a.display().to_string()), "{msg}");
    assert!(
        msg.contains(&format!("{} (missing)", missing.display())),
        "{msg}"
    );
    let err = reg.filter(FilterId(201)).err().unwrap();
    assert_eq!(err.code(), -18);
    assert!(err.to_string().contains("unknown filter ID 201"), "{err}");
    // Blosc built-in IDs are not searched for.
    assert_eq!(
        reg.codec(CodecId(3)).err().unwrap(),
        strata::Error::UnknownCodec { id: 3 }
    );
    // An empty search path says so.
    let none = registry(&[]);
    assert!(none
        .codec(CodecId(201))
        .err()
        .unwrap()
        .to_string()
        .contains("search path is empty"));
}

#[test]
fn plugins_are_found_by_name_too() {
    let dir = tempdir("by-name");
    build(
        &dir,
        "strata_named",
        &["TEST_ID=202", "TEST_NAME=\"named_rle\""],
    );
    let reg = registry(&[&dir]);
    assert_eq!(reg.codec_by_name("named_rle").unwrap().id(), CodecId(202));
    assert_eq!(reg.codec(CodecId(202)).unwrap().name(), "named_rle");
    assert!(reg.codec_by_name("nothing_here").is_err());
}

/// A library rejected for `reason`: lookups fail and say why, explicit loading fails with
/// code −1002, and nothing is registered.
fn assert_rejected(stem: &str, defines: &[&str], id: u8, reason: &str) {
    let dir = tempdir(stem);
    let lib = build(&dir, stem, defines);
    let reg = registry(&[&dir]);
    let before = reg.list();
    let err = reg.codec(CodecId(id)).err().unwrap();
    assert_eq!(err.code(), -7, "{err}");
    assert!(err.to_string().contains(reason), "{stem}: {err}");
    let err = reg.load_plugin(&lib).unwrap_err();
    assert_eq!(err.code(), -1002, "{err}");
    assert!(err.to_string().contains(reason), "{stem}: {err}");
    assert!(err
        .to_string()
        .contains(&lib.canonicalize().unwrap().display().to_string()));
    assert_eq!(reg.list(), before, "{stem}: something was registered");
}

#[test]
fn a_wrong_abi_version_is_rejected() {
    assert_rejected("strata_bad_abi", &["TEST_ABI=99"], 200, "ABI version 99");
}

#[test]
fn a_wrong_kind_is_rejected() {
    assert_rejected(
        "strata_bad_kind",
        &["TEST_KIND=7"],
        200,
        "kind 7 is neither",
    );
}

#[test]
fn an_id_blosc2_assigns_to_another_codec_is_rejected() {
    assert_rejected(
        "strata_bad_id",
        &["TEST_ID=33"],
        33,
        "Blosc2's zfp_acc, not test_rle",
    );
    assert_rejected("strata_builtin_id", &["TEST_ID=7"], 200, "built-in range");
    assert_rejected(
        "strata_unassigned",
        &["TEST_ID=100"],
        100,
        "assigns it to nothing",
    );
}

#[test]
fn a_bad_name_or_a_duplicate_is_rejected() {
    assert_rejected(
        "strata_bad_name",
        &["TEST_NAME=\"no spaces\""],
        200,
        "[A-Za-z0-9_]",
    );
    assert_rejected("strata_twice", &["TWICE"], 200, "lists codec ID 200 twice");
    // A name listed twice under two IDs is said as such, not as an ID listed twice.
    assert_rejected(
        "strata_same_name",
        &["SAME_NAME"],
        200,
        "lists two codecs named test_rle (IDs 200 and 201)",
    );
}

#[test]
fn a_null_descriptor_list_is_rejected_as_null() {
    assert_rejected(
        "strata_null_list",
        &["NULL_LIST"],
        200,
        "returned NULL instead of its descriptor list (count 1)",
    );
}

#[test]
fn a_name_without_its_nul_is_rejected_not_read_past() {
    // Eight bytes, then a page that cannot be read: reading on to find a NUL would crash.
    assert_rejected(
        "strata_name_at_end",
        &["NAME_AT_END=8"],
        200,
        "codec ID 200 has a name that is not readable memory after 8 bytes",
    );
    assert_rejected(
        "strata_name_long",
        &["NAME_AT_END=100"],
        200,
        "codec ID 200 has a name with no NUL within 64 bytes",
    );
}

#[test]
fn a_library_without_the_entry_symbol_is_rejected() {
    assert_rejected("strata_no_entry", &["NO_ENTRY"], 200, "not a Strata plugin");
}

#[test]
fn a_file_that_is_not_a_library_is_rejected() {
    let dir = tempdir("junk");
    let junk = dir.join(format!("libjunk.{}", std::env::consts::DLL_EXTENSION));
    std::fs::write(&junk, b"this is not an ELF file").unwrap();
    let reg = registry(&[&dir]);
    let err = reg.codec(CodecId(200)).err().unwrap();
    assert!(err.to_string().contains("cannot be loaded"), "{err}");
    let err = reg.load_plugin(&junk).unwrap_err();
    assert_eq!(err.code(), -1002);
    assert!(reg
        .list()
        .iter()
        .all(|r| r.id < 32 || r.id == 34 || r.id == 35));
}

#[test]
fn a_library_with_an_undefined_symbol_is_refused_when_opened() {
    // Bound lazily, it loaded and its first encode ended the process ("symbol lookup error",
    // status 127); bound at once, opening it fails with the linker's message.
    let reason = "undefined symbol: strata_test_undefined_function";
    assert_rejected("strata_undefined", &["UNDEFINED_SYMBOL"], 200, reason);
    let dir = tempdir("undefined-beside");
    build(&dir, "strata_a_undefined", &["UNDEFINED_SYMBOL"]);
    let reg = registry(&[&dir]);
    let err = compress_with(&reg, &cparams(200), &runs()).unwrap_err();
    assert_eq!(err.code(), -7, "{err}");
    assert!(err.to_string().contains(reason), "{err}");
    // The process goes on: a good library put beside it later is found and works.
    build(&dir, "strata_b_good", &[]);
    let reg = registry(&[&dir]);
    let data = runs();
    let chunk = compress_with(&reg, &cparams(200), &data).unwrap();
    assert_eq!(decompress_with(&reg, &chunk).unwrap(), data);
}

#[test]
fn a_good_library_beside_a_bad_one_is_still_found() {
    let dir = tempdir("mixed");
    build(&dir, "strata_a_bad", &["TEST_ABI=2"]);
    build(&dir, "strata_b_good", &[]);
    let reg = registry(&[&dir]);
    assert_eq!(reg.codec(CodecId(200)).unwrap().name(), "test_rle");
}

#[test]
fn a_negative_return_is_an_error_with_the_plugins_message() {
    let dir = tempdir("fail");
    build(&dir, "strata_fail", &["FAIL_CODE=-8"]);
    let reg = registry(&[&dir]);
    let err = compress_with(&reg, &cparams(200), &runs()).unwrap_err();
    assert_eq!(err.code(), -8, "{err}");
    assert!(err.to_string().contains("test failure in block 0"), "{err}");
    let dir = tempdir("fail-data");
    build(&dir, "strata_fail", &["FAIL_CODE=-42"]);
    let reg = registry(&[&dir]);
    let err = compress_with(&reg, &cparams(200), &runs()).unwrap_err();
    assert_eq!(err.code(), -3, "{err}");
    assert!(err.to_string().contains("code -42"), "{err}");
}

#[test]
fn a_plugin_reporting_a_panic_gives_the_panic_code() {
    let dir = tempdir("panic-code");
    build(
        &dir,
        "strata_panic",
        &["FAIL_CODE=STRATA_ERROR_PLUGIN_PANIC"],
    );
    let reg = registry(&[&dir]);
    let err = compress_with(&reg, &cparams(200), &runs()).unwrap_err();
    assert_eq!(err, strata::Error::PluginPanic { id: 200 });
    assert_eq!(err.code(), -1000);
}

#[test]
fn a_plugin_filter_runs_in_the_pipeline() {
    let dir = tempdir("filter");
    build(
        &dir,
        "strata_copy_filter",
        &[
            "TEST_KIND=STRATA_PLUGIN_FILTER",
            "TEST_ID=210",
            "TEST_NAME=\"copy\"",
        ],
    );
    let reg = registry(&[&dir]);
    let data = runs();
    let params = CParams {
        filters: [210, 0, 0, 0, 0, 0].map(FilterId),
        ..cparams(5)
    };
    let chunk = compress_with(&reg, &params, &data).unwrap();
    assert_eq!(chunk[16], 210);
    assert_eq!(decompress_with(&reg, &chunk).unwrap(), data);
    assert_eq!(reg.filter_by_name("copy").unwrap().id(), FilterId(210));
}

#[test]
fn many_threads_asking_for_an_unloaded_id_load_the_library_once() {
    let dir = tempdir("once");
    let log = dir.join("entry.log");
    let define = format!("LOG_PATH=\"{}\"", log.display());
    build(&dir, "strata_counted", &[&define, "TEST_ID=203"]);
    let reg = Arc::new(registry(&[&dir]));
    let data = runs();
    let barrier = Arc::new(std::sync::Barrier::new(16));
    let handles: Vec<_> = (0..16)
        .map(|_| {
            let (reg, barrier, data) = (reg.clone(), barrier.clone(), data.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let chunk = compress_with(&reg, &cparams(203), &data).unwrap();
                assert_eq!(decompress_with(&reg, &chunk).unwrap(), data);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls.lines().count(),
        1,
        "the entry point ran {} times",
        calls.lines().count()
    );
    assert_eq!(reg.list().iter().filter(|r| r.id == 203).count(), 1);
}

#[test]
fn explicit_loading_registers_everything_and_is_idempotent() {
    let dir = tempdir("explicit");
    let lib = build(&dir, "strata_explicit", &["TEST_ID=204"]);
    let reg = registry(&[]);
    let got = reg.load_plugin(&lib).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].id, got[0].name.as_str()), (204, "test_rle"));
    assert!(
        reg.load_plugin(&lib).unwrap().is_empty(),
        "loading again registers nothing new"
    );
    // Another library with the same ID is refused, and leaves the first in place.
    let other = build(
        &dir,
        "strata_explicit2",
        &["TEST_ID=204", "TEST_NAME=\"other\""],
    );
    let err = reg.load_plugin(&other).unwrap_err();
    assert!(
        err.to_string()
            .contains("codec ID 204 (other) is already taken in this registry by test_rle"),
        "{err}"
    );
    assert_eq!(reg.codec(CodecId(204)).unwrap().name(), "test_rle");
    // Another ID with a name that is taken: the name is the clash, not the ID.
    let namesake = build(&dir, "strata_namesake", &["TEST_ID=205"]);
    let err = reg.load_plugin(&namesake).unwrap_err();
    assert!(
        err.to_string().contains(
            "codec ID 205 (test_rle): the name test_rle is already taken in this registry by ID 204"
        ),
        "{err}"
    );
    assert!(reg.codec(CodecId(205)).is_err());
}

#[test]
fn the_search_path_comes_from_the_environment_by_default() {
    let dirs = strata::registry::dynamic::default_plugin_dirs();
    if let Some(home) = std::env::var_os("HOME") {
        assert!(dirs.contains(&PathBuf::from(home).join(".local/lib/strata/plugins")));
    }
    let exe = std::env::current_exe().unwrap();
    let prefix = exe.parent().unwrap().parent().unwrap();
    assert_eq!(dirs.last().unwrap(), &prefix.join("lib/strata/plugins"));
    assert_eq!(Registry::with_builtins().plugin_dirs(), dirs);
}

#[test]
fn a_refused_library_is_not_reopened_until_it_changes() {
    let dir = tempdir("refused-once");
    let log = dir.join("entry.log");
    let define = format!("LOG_PATH=\"{}\"", log.display());
    build(&dir, "strata_changes", &[&define, "TEST_ABI=9"]);
    let reg = registry(&[&dir]);
    for _ in 0..3 {
        let err = reg.codec(CodecId(200)).err().unwrap();
        assert!(err.to_string().contains("ABI version 9"), "{err}");
    }
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
    // Replaced by a good build (a new size or time), it is opened again and found.
    std::thread::sleep(std::time::Duration::from_millis(20));
    build(
        &dir,
        "strata_changes",
        &[&define, "TEST_ID=200", "TEST_NAME=\"fixed_rle\""],
    );
    assert_eq!(reg.codec(CodecId(200)).unwrap().name(), "fixed_rle");
}
