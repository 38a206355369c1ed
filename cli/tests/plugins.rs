//! `strata plugins` and plugin codecs and filters on the command line: the C example codec
//! (plugins/examples/c-codec) built into a plugin directory named by STRATA_PLUGIN_PATH.

use std::path::Path;
use std::process::{Command, Output};
use tempfile::TempDir;

fn strata(plugins: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .env("STRATA_PLUGIN_PATH", plugins)
        .args(args)
        .output()
        .expect("the strata binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A plugin directory with the C example codec and a file that is not a library.
fn plugin_dir() -> TempDir {
    let dir = TempDir::new().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let lib = dir.path().join(format!(
        "{}example_rle.{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_EXTENSION
    ));
    let cc = Command::new("cc")
        .args(["-std=c11", "-O2", "-shared", "-fPIC", "-I"])
        .arg(root.join("include"))
        .arg(root.join("plugins/examples/c-codec/example_rle.c"))
        .arg("-o")
        .arg(&lib)
        .output()
        .expect("a C compiler (cc)");
    assert!(cc.status.success(), "{}", text(&cc.stderr));
    std::fs::write(
        dir.path()
            .join(format!("libjunk.{}", std::env::consts::DLL_EXTENSION)),
        b"junk",
    )
    .unwrap();
    dir
}

#[test]
fn plugins_lists_builtins_and_loaded_libraries_with_their_paths() {
    let dir = plugin_dir();
    let out = strata(dir.path(), &["plugins"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    assert!(
        listing.contains(&format!("  {}\n", dir.path().display())),
        "{listing}"
    );
    assert!(
        listing.contains("    5  zstd             built-in"),
        "{listing}"
    );
    assert!(listing.contains("  244  example_rle      "), "{listing}");
    assert!(listing.contains("libexample_rle."), "{listing}");
    assert!(
        listing.contains("   35  bytedelta        built-in"),
        "{listing}"
    );
    assert!(
        listing.contains("rejected:\n  plugin ") && listing.contains("libjunk"),
        "{listing}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&strata(dir.path(), &["plugins", "--json"]).stdout).unwrap();
    let rle = json["codecs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == 244)
        .unwrap();
    assert_eq!(rle["name"], "example_rle");
    assert!(rle["origin"].as_str().unwrap().ends_with(&format!(
        "libexample_rle.{}",
        std::env::consts::DLL_EXTENSION
    )));
    assert_eq!(json["search_path"][0], dir.path().display().to_string());
}

#[test]
fn codec_and_filter_options_take_plugin_names_and_ids() {
    let dir = plugin_dir();
    let work = TempDir::new().unwrap();
    let raw = work.path().join("in.raw");
    let data: Vec<u8> = (0..60_000u32).map(|i| (i / 500) as u8).collect();
    std::fs::write(&raw, &data).unwrap();
    for codec in ["example_rle", "244"] {
        let chunk = work.path().join(format!("{codec}.b2"));
        let back = work.path().join(format!("{codec}.raw"));
        let args = [
            "chunk",
            "compress",
            "--force",
            "--codec",
            codec,
            "--typesize",
            "1",
            "--filter",
            "0",
        ];
        let out = strata(
            dir.path(),
            &[&args[..], &[raw.to_str().unwrap(), chunk.to_str().unwrap()]].concat(),
        );
        assert!(out.status.success(), "{codec}: {}", text(&out.stderr));
        let bytes = std::fs::read(&chunk).unwrap();
        assert_eq!(bytes[22], 244);
        assert!(bytes.len() < 1000);
        let info = strata(
            dir.path(),
            &["chunk", "info", "--json", chunk.to_str().unwrap()],
        );
        let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
        assert_eq!(info["codec"], "example_rle");
        let out = strata(
            dir.path(),
            &[
                "chunk",
                "decompress",
                "--force",
                chunk.to_str().unwrap(),
                back.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert_eq!(std::fs::read(&back).unwrap(), data);
    }
    // An ID no plugin provides: named, with the directories searched.
    let out = strata(
        dir.path(),
        &[
            "chunk",
            "compress",
            "--force",
            "--codec",
            "250",
            raw.to_str().unwrap(),
            "x.b2",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("unknown codec ID 250"), "{err}");
    assert!(err.contains(&dir.path().display().to_string()), "{err}");
    // A chunk whose codec no plugin provides, read without the plugin directory.
    let empty = TempDir::new().unwrap();
    let chunk = work.path().join("244.b2");
    let out = strata(
        empty.path(),
        &[
            "chunk",
            "decompress",
            "--force",
            chunk.to_str().unwrap(),
            "y.raw",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("unknown codec ID 244"),
        "{}",
        text(&out.stderr)
    );
}

/// The C example's README builds and uses the plugin with a shell block: run as written
/// (a fresh home without the plugin directory, `strata` on the PATH, the repository's
/// `include` and `plugins` beside the input), it installs the codec and compresses with it.
#[test]
fn the_c_example_readme_commands_run_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let readme = std::fs::read_to_string(root.join("plugins/examples/c-codec/README.md")).unwrap();
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block in the README");
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    for dir in ["include", "plugins"] {
        std::os::unix::fs::symlink(root.join(dir), work.path().join(dir)).unwrap();
    }
    std::fs::write(work.path().join("input.raw"), vec![7u8; 5000]).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_strata")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", block])
        .current_dir(work.path())
        .env("HOME", home.path())
        .env("PATH", path)
        .env_remove("STRATA_PLUGIN_PATH")
        .output()
        .unwrap();
    assert!(out.status.success(), "{block}\n{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("example_rle"),
        "{}",
        text(&out.stdout)
    );
    let chunk = std::fs::read(work.path().join("output.b2")).unwrap();
    assert_eq!(chunk[4..8], 5000u32.to_le_bytes(), "nbytes of the chunk");
    assert!(home
        .path()
        .join(".local/lib/strata/plugins/libexample_rle.so")
        .exists());
}
