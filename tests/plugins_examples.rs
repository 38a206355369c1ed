//! The third-party plugin examples, built and loaded as their READMEs tell users to:
//! plugins/examples/c-codec (a C codec, built with cc) and plugins/examples/rust-filter (a Rust
//! filter, built with cargo), dropped in a plugin directory and found by ID and by name.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use strata::chunk::{
    compress_ctx, decompress_vec_ctx, max_compressed_len, CParams, Context, DParams,
};
use strata::registry::{Origin, Registry};
use strata::scheduler::Runtime;
use strata::{CodecId, FilterId};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn lib_name(stem: &str) -> String {
    format!(
        "{}{stem}.{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_EXTENSION
    )
}

/// A fresh plugin directory holding both examples.
fn plugin_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("strata-plugin-examples-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cc = Command::new("cc")
        .args([
            "-std=c11",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-shared",
            "-fPIC",
            "-I",
        ])
        .arg(root().join("include"))
        .arg(root().join("plugins/examples/c-codec/example_rle.c"))
        .arg("-o")
        .arg(dir.join(lib_name("example_rle")))
        .output()
        .expect("a C compiler (cc)");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let mut cargo = Command::new(env!("CARGO"));
    cargo.args(["build", "--quiet", "-p", "strata-example-filter", "--lib"]);
    if profile_dir.file_name().and_then(|n| n.to_str()) == Some("release") {
        cargo.arg("--release");
    }
    assert!(cargo.status().unwrap().success());
    std::fs::copy(
        profile_dir.join(lib_name("strata_example_filter")),
        dir.join(lib_name("strata_example_filter")),
    )
    .unwrap();
    dir
}

fn compress(r: &Arc<Registry>, p: &CParams, src: &[u8]) -> Vec<u8> {
    let ctx = Context::new(Arc::clone(r), Runtime::global());
    let mut out = vec![0u8; max_compressed_len(src.len())];
    let n = compress_ctx(&ctx, p, src, &mut out).unwrap();
    out.truncate(n);
    out
}

fn decompress(r: &Arc<Registry>, chunk: &[u8]) -> Vec<u8> {
    let ctx = Context::new(Arc::clone(r), Runtime::global());
    decompress_vec_ctx(&ctx, &DParams::default(), chunk).unwrap()
}

#[test]
fn the_c_codec_and_the_rust_filter_load_from_a_plugin_directory() {
    let dir = plugin_dir();
    let r = Arc::new(Registry::with_builtins());
    r.set_plugin_dirs(Some(vec![dir.clone()]));

    // The C codec, by ID: a byte run-length coder.
    let runs: Vec<u8> = (0..100_000u32).map(|i| (i / 1000) as u8).collect();
    let p = CParams {
        codec: CodecId(244),
        typesize: 1,
        filters: [FilterId::NOFILTER; 6],
        ..CParams::default()
    };
    let chunk = compress(&r, &p, &runs);
    assert!(chunk.len() < 2000, "{} bytes", chunk.len());
    assert_eq!(decompress(&r, &chunk), runs);

    // The Rust filter, by name: timestamps one second apart become a run of ones.
    let times: Vec<u8> = (0..50_000u64)
        .map(|i| 1_700_000_000_000 + i * 1000 + i % 7)
        .flat_map(u64::to_le_bytes)
        .collect();
    let int_delta = r.filter_by_name("int_delta").unwrap().id();
    assert_eq!(int_delta, FilterId(161));
    let with = CParams {
        codec: CodecId::ZSTD,
        typesize: 8,
        filters: [
            int_delta,
            FilterId::SHUFFLE,
            FilterId::NOFILTER,
            FilterId::NOFILTER,
            FilterId::NOFILTER,
            FilterId::NOFILTER,
        ],
        ..CParams::default()
    };
    let without = CParams {
        filters: [0, 1, 0, 0, 0, 0].map(FilterId),
        ..with.clone()
    };
    let (a, b) = (compress(&r, &with, &times), compress(&r, &without, &times));
    assert!(
        a.len() * 3 < b.len(),
        "int_delta: {} bytes, without: {}",
        a.len(),
        b.len()
    );
    assert_eq!(decompress(&r, &a), times);

    let origins: Vec<_> = r
        .list()
        .into_iter()
        .filter(|e| e.id == 244 || e.id == 161)
        .map(|e| (e.id, e.name, e.origin))
        .collect();
    let canon = |stem| Origin::Library(dir.join(lib_name(stem)).canonicalize().unwrap());
    assert_eq!(
        origins,
        [
            (244, "example_rle".to_owned(), canon("example_rle")),
            (161, "int_delta".to_owned(), canon("strata_example_filter")),
        ]
    );
    // A typesize the filter does not handle is its error, with its message.
    let bad = CParams {
        typesize: 3,
        ..with
    };
    let ctx = Context::new(Arc::clone(&r), Runtime::global());
    let mut out = vec![0u8; max_compressed_len(300)];
    let err = compress_ctx(&ctx, &bad, &times[..300], &mut out).unwrap_err();
    assert_eq!(err.code(), -18);
    assert!(err.to_string().contains("not 3"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
