//! The `strata` binary end to end: every subcommand, usage errors (exit 2), runtime errors
//! (exit 1, message naming the file), `.npy` input, and no panic on corrupt chunks.

use std::process::{Command, Output};
use tempfile::TempDir;

fn strata(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .output()
        .expect("the strata binary runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[track_caller]
fn ok(out: &Output) -> String {
    assert!(out.status.success(), "strata failed: {}", stderr(out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[track_caller]
fn fails_with(out: &Output, code: i32, needle: &str) {
    assert_eq!(out.status.code(), Some(code), "stderr: {}", stderr(out));
    assert!(
        stderr(out).contains(needle),
        "{needle:?} not in stderr: {}",
        stderr(out)
    );
}

/// 40 000 little-endian u32 values with some structure.
fn sample() -> Vec<u8> {
    (0..40_000u32).flat_map(|i| (i / 3).to_le_bytes()).collect()
}

/// A version 1.0 `.npy` file as numpy writes it; `descr` is a Python literal.
fn npy(descr: &str, shape: &str, fortran: bool, data: &[u8]) -> Vec<u8> {
    let order = if fortran { "True" } else { "False" };
    let mut dict = format!("{{'descr': {descr}, 'fortran_order': {order}, 'shape': {shape}, }}");
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&u16::try_from(dict.len()).unwrap().to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.extend_from_slice(data);
    out
}

struct Dir(TempDir);

impl Dir {
    fn new() -> Self {
        Dir(tempfile::tempdir().unwrap())
    }
    /// Writes `bytes` to a new file; returns its path.
    fn file(&self, name: &str, bytes: &[u8]) -> String {
        let p = self.path(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
    fn path(&self, name: &str) -> String {
        self.0
            .path()
            .join(name)
            .to_str()
            .expect("temporary paths are UTF-8")
            .to_owned()
    }
}

fn read(p: &str) -> Vec<u8> {
    std::fs::read(p).unwrap()
}

fn info_json(chunk: &str) -> serde_json::Value {
    serde_json::from_str(&ok(&strata(&["chunk", "info", chunk, "--json"]))).unwrap()
}

#[test]
fn round_trip_every_codec_and_split_mode() {
    let d = Dir::new();
    let data = sample();
    let input = d.file("in.raw", &data);
    let (chunk, back) = (d.path("c.b2"), d.path("back.raw"));
    for codec in ["blosclz", "lz4", "lz4hc", "zlib", "zstd"] {
        for split in ["always", "never", "auto", "forward-compat"] {
            ok(&strata(&[
                "chunk",
                "compress",
                "--force",
                "--codec",
                codec,
                "--clevel",
                "9",
                "--typesize",
                "4",
                "--splitmode",
                split,
                &input,
                &chunk,
            ]));
            ok(&strata(&["chunk", "decompress", "--force", &chunk, &back]));
            assert_eq!(read(&back), data, "{codec} {split}");
            // LZ4HC writes the LZ4 format: the header's format code says lz4, byte 22 says lz4hc.
            let named = info_json(&chunk)["codec"].as_str().unwrap().to_owned();
            assert!(
                named == codec || (codec, named.as_str()) == ("lz4hc", "lz4"),
                "{codec} chunk named {named}"
            );
        }
    }
}

#[test]
fn compress_defaults_are_cblosc2_defaults() {
    let d = Dir::new();
    let input = d.file("in.raw", &sample());
    let chunk = d.path("c.b2");
    ok(&strata(&["chunk", "compress", "--force", &input, &chunk]));
    let info = info_json(&chunk);
    assert_eq!(info["codec"], "blosclz");
    assert_eq!(info["typesize"], 8);
    assert_eq!(info["version"], 5);
    assert_eq!(
        info["filters"],
        serde_json::json!([{"slot": 5, "id": 1, "name": "shuffle", "meta": 0}])
    );
}

#[test]
fn filters_fill_slots_from_zero() {
    let d = Dir::new();
    let data = sample();
    let input = d.file("in.raw", &data);
    let (chunk, back) = (d.path("c.b2"), d.path("back.raw"));
    ok(&strata(&[
        "chunk",
        "compress",
        "--force",
        "--typesize",
        "4",
        "--filter",
        "delta",
        "--filter",
        "shuffle",
        "--filter",
        "bytedelta",
        &input,
        &chunk,
    ]));
    let f = &info_json(&chunk)["filters"];
    let slots: Vec<(u64, &str, u64)> = f
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["slot"].as_u64().unwrap(),
                x["name"].as_str().unwrap(),
                x["meta"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        slots,
        [(0, "delta", 0), (1, "shuffle", 0), (2, "bytedelta", 4)]
    );
    ok(&strata(&["chunk", "decompress", "--force", &chunk, &back]));
    assert_eq!(read(&back), data);

    ok(&strata(&[
        "chunk",
        "compress",
        "--force",
        "--filter",
        "noshuffle",
        &input,
        &chunk,
    ]));
    assert_eq!(info_json(&chunk)["filters"], serde_json::json!([]));
    ok(&strata(&[
        "chunk",
        "compress",
        "--force",
        "--typesize",
        "4",
        "--filter",
        "trunc_prec:-3",
        &input,
        &chunk,
    ]));
    assert_eq!(info_json(&chunk)["filters"][0]["meta"], 253);
}

#[test]
fn clevel_zero_and_dict_and_blocksize() {
    let d = Dir::new();
    let data = sample();
    let input = d.file("in.raw", &data);
    let (chunk, back) = (d.path("c.b2"), d.path("back.raw"));
    ok(&strata(&[
        "chunk", "compress", "--force", "--clevel", "0", &input, &chunk,
    ]));
    assert_eq!(read(&chunk).len(), data.len() + 32);
    assert!(info_json(&chunk)["flag_names"]
        .as_array()
        .unwrap()
        .contains(&"memcpyed".into()));

    ok(&strata(&[
        "chunk",
        "compress",
        "--force",
        "--codec",
        "zstd",
        "--dict",
        "--typesize",
        "4",
        "--blocksize",
        "8192",
        "--nthreads",
        "1",
        &input,
        &chunk,
    ]));
    let info = info_json(&chunk);
    assert_eq!(info["blocksize"], 8192);
    assert_eq!(info["nblocks"], 20);
    ok(&strata(&["chunk", "decompress", "--force", &chunk, &back]));
    assert_eq!(read(&back), data);
}

#[test]
fn threads_change_nothing_but_speed() {
    let d = Dir::new();
    let data = sample();
    let input = d.file("in.raw", &data);
    let (one, many, back) = (d.path("one.b2"), d.path("many.b2"), d.path("back.raw"));
    let args = [
        "chunk",
        "compress",
        "--force",
        "--codec",
        "zstd",
        "--typesize",
        "4",
        "--blocksize",
        "4096",
    ];
    ok(&strata(
        &[&args[..], &["--nthreads", "1", &input, &one]].concat(),
    ));
    ok(&strata(
        &[&args[..], &["--nthreads", "2", &input, &many]].concat(),
    ));
    assert_eq!(read(&one), read(&many));
    ok(&strata(&[
        "chunk",
        "decompress",
        "--force",
        "--nthreads",
        "2",
        &many,
        &back,
    ]));
    assert_eq!(read(&back), data);
    ok(&strata(&[
        "chunk",
        "getitem",
        "--force",
        "--nthreads",
        "0",
        &many,
        "--start",
        "3",
        "--nitems",
        "30000",
        &back,
    ]));
    assert_eq!(read(&back), &data[12..120_012]);
}

#[test]
fn info_text_names_every_field() {
    let d = Dir::new();
    let input = d.file("in.raw", &sample());
    let chunk = d.path("c.b2");
    ok(&strata(&[
        "chunk",
        "compress",
        "--force",
        "--codec",
        "zstd",
        "--typesize",
        "4",
        &input,
        &chunk,
    ]));
    let text = ok(&strata(&["chunk", "info", &chunk]));
    for field in [
        "version:",
        "flags:",
        "typesize:     4",
        "nbytes:       160000",
        "cbytes:",
        "blocksize:",
        "nblocks:",
        "codec:        zstd",
        "filters:      slot 5: shuffle",
        "special:      none",
        "split:",
    ] {
        assert!(text.contains(field), "{field:?} missing from:\n{text}");
    }
}

#[test]
fn getitem_matches_slices() {
    let d = Dir::new();
    let data = sample();
    let input = d.file("in.raw", &data);
    let (chunk, items) = (d.path("c.b2"), d.path("items.raw"));
    // Small blocks and delta: items beyond block 0 need block 0 as reference.
    ok(&strata(&[
        "chunk",
        "compress",
        "--force",
        "--typesize",
        "4",
        "--blocksize",
        "4096",
        "--filter",
        "delta",
        "--filter",
        "shuffle",
        &input,
        &chunk,
    ]));
    for (start, nitems) in [(0usize, 1usize), (1000, 2048), (39_999, 1), (5, 0)] {
        ok(&strata(&[
            "chunk",
            "getitem",
            "--force",
            &chunk,
            "--start",
            &start.to_string(),
            "--nitems",
            &nitems.to_string(),
            &items,
        ]));
        assert_eq!(
            read(&items),
            &data[start * 4..(start + nitems) * 4],
            "start {start} nitems {nitems}"
        );
    }
    let out = strata(&[
        "chunk", "getitem", "--force", &chunk, "--start", "39999", "--nitems", "2", &items,
    ]);
    fails_with(&out, 1, "index out of range");
    let out = strata(&[
        "chunk",
        "getitem",
        "--force",
        &chunk,
        "--start",
        "0",
        "--nitems",
        &u64::MAX.to_string(),
        &items,
    ]);
    fails_with(&out, 1, "index out of range");
}

#[test]
fn npy_input_gives_the_typesize() {
    let d = Dir::new();
    let data = sample();
    let input = d.file("a.npy", &npy("'<f4'", "(200, 200)", false, &data));
    let (chunk, back) = (d.path("c.b2"), d.path("back.raw"));
    ok(&strata(&[
        "chunk", "compress", "--force", "--codec", "lz4", &input, &chunk,
    ]));
    assert_eq!(info_json(&chunk)["typesize"], 4);
    ok(&strata(&["chunk", "decompress", "--force", &chunk, &back]));
    assert_eq!(read(&back), data);
    // An explicit typesize wins.
    ok(&strata(&[
        "chunk",
        "compress",
        "--force",
        "--typesize",
        "2",
        &input,
        &chunk,
    ]));
    assert_eq!(info_json(&chunk)["typesize"], 2);
    // Structured dtypes count all their bytes.
    let rec = d.file(
        "rec.npy",
        &npy("[('a', '<i8'), ('b', '<f4')]", "(4,)", false, &[7; 48]),
    );
    ok(&strata(&["chunk", "compress", "--force", &rec, &chunk]));
    assert_eq!(info_json(&chunk)["typesize"], 12);
}

#[test]
fn bad_npy_files_are_runtime_errors() {
    let d = Dir::new();
    let data = sample();
    let chunk = d.path("c.b2");
    let fortran = d.file("f.npy", &npy("'<f4'", "(200, 200)", true, &data));
    fails_with(
        &strata(&["chunk", "compress", "--force", &fortran, &chunk]),
        1,
        "Fortran order",
    );
    let short = d.file("short.npy", &npy("'<f4'", "(200, 201)", false, &data));
    fails_with(
        &strata(&["chunk", "compress", "--force", &short, &chunk]),
        1,
        "short.npy: the .npy header announces",
    );
    let garbage = d.file("g.npy", b"\x93NUMPY\x01\x00\xff\xffnot a dict");
    fails_with(
        &strata(&["chunk", "compress", "--force", &garbage, &chunk]),
        1,
        "g.npy: bad .npy header",
    );
}

#[test]
fn input_over_the_chunk_limit_names_it() {
    let d = Dir::new();
    let big = d.path("big.raw");
    // Sparse: refused before a byte is read.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(2_147_483_616)
        .unwrap();
    let out = strata(&["chunk", "compress", "--force", &big, &d.path("c.b2")]);
    fails_with(
        &out,
        1,
        "big.raw: 2147483616 bytes exceed the Blosc2 chunk limit of 2147483615 bytes",
    );
}

#[test]
fn usage_errors_exit_2() {
    let d = Dir::new();
    let input = d.file("in.raw", &sample());
    let out = d.path("c.b2");
    let cases: [&[&str]; 11] = [
        &[],
        &["chunk"],
        &["chunk", "compress", "--force", &input],
        &[
            "chunk", "compress", "--force", "--codec", "snappy", &input, &out,
        ],
        &[
            "chunk", "compress", "--force", "--clevel", "10", &input, &out,
        ],
        &[
            "chunk", "compress", "--force", "--filter", "shufle", &input, &out,
        ],
        &[
            "chunk",
            "compress",
            "--force",
            "--filter",
            "trunc_prec:300",
            &input,
            &out,
        ],
        &[
            "chunk",
            "compress",
            "--force",
            "--splitmode",
            "sometimes",
            &input,
            &out,
        ],
        &[
            "chunk",
            "compress",
            "--force",
            "--typesize",
            "0",
            &input,
            &out,
        ],
        &[
            "chunk", "getitem", "--force", &out, "--start", "-1", "--nitems", "1", &out,
        ],
        &["bench", &input, "--runs", "0"],
    ];
    for args in cases {
        let res = strata(args);
        assert_eq!(res.status.code(), Some(2), "{args:?}: {}", stderr(&res));
    }
    let mut seven = vec!["chunk", "compress"];
    seven.extend(["--filter", "shuffle"].repeat(7));
    seven.extend([input.as_str(), out.as_str()]);
    fails_with(&strata(&seven), 2, "filter slots");
}

#[test]
fn missing_and_unwritable_files_are_named() {
    let d = Dir::new();
    let missing = d.path("missing.b2");
    for sub in ["decompress", "info"] {
        let out = if sub == "info" {
            strata(&["chunk", sub, &missing])
        } else {
            strata(&["chunk", sub, &missing, &d.path("o")])
        };
        fails_with(&out, 1, "missing.b2");
    }
    fails_with(
        &strata(&["chunk", "compress", "--force", &missing, &d.path("o")]),
        1,
        "cannot open",
    );
    fails_with(&strata(&["bench", &missing]), 1, "missing.b2");
    let input = d.file("in.raw", &sample());
    let nowhere = d.path("no/such/dir/c.b2");
    fails_with(
        &strata(&["chunk", "compress", "--force", &input, &nowhere]),
        1,
        "cannot write",
    );
    let empty = d.file("empty.raw", b"");
    fails_with(&strata(&["bench", &empty]), 1, "empty.raw");
}

#[test]
fn corrupt_chunks_fail_cleanly() {
    let d = Dir::new();
    let input = d.file("in.raw", &sample());
    let chunk = d.path("c.b2");
    ok(&strata(&[
        "chunk",
        "compress",
        "--force",
        "--codec",
        "zstd",
        "--typesize",
        "4",
        "--blocksize",
        "16384",
        &input,
        &chunk,
    ]));
    let good = read(&chunk);
    let truncated = d.file("t.b2", &good[..good.len() / 2]);
    for sub in ["decompress", "info"] {
        let out = if sub == "info" {
            strata(&["chunk", sub, &d.file("h.b2", &good[..20])])
        } else {
            strata(&["chunk", sub, &truncated, &d.path("o")])
        };
        fails_with(&out, 1, "truncated");
    }
    fails_with(
        &strata(&[
            "chunk",
            "decompress",
            "--force",
            &d.file("n.b2", b"not a chunk at all, not at all!!"),
            &d.path("o"),
        ]),
        1,
        "n.b2",
    );

    // Flip bytes all over the chunk: every run ends in success or a clean error, never a panic.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for i in 0..120 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mut bad = good.clone();
        let at = if i < 40 {
            i
        } else {
            usize::try_from(state % good.len() as u64).unwrap()
        };
        bad[at] ^= u8::try_from(state >> 56).unwrap() | 1;
        let bad_path = d.file("bad.b2", &bad);
        for sub in ["decompress", "getitem"] {
            let out = if sub == "getitem" {
                strata(&[
                    "chunk",
                    sub,
                    &bad_path,
                    "--start",
                    "100",
                    "--nitems",
                    "9000",
                    &d.path("o"),
                ])
            } else {
                strata(&["chunk", sub, &bad_path, &d.path("o")])
            };
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "{sub}, byte {at} flipped: {}",
                stderr(&out)
            );
        }
    }
}

#[test]
fn bench_reports_every_configuration() {
    let d = Dir::new();
    let input = d.file("a.npy", &npy("'<u4'", "(40000,)", false, &sample()));
    let sweep = "--codec lz4 --codec zstd --clevel 1 --filter shuffle --filter bitshuffle --nthreads 1 --nthreads 2";
    let mut args = vec![
        "bench",
        &input,
        "--json",
        "--chunksize",
        "65536",
        "--runs",
        "1",
    ];
    args.extend(sweep.split(' '));
    let out = ok(&strata(&args));
    let rows: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 8);
    let keys = [
        "codec",
        "clevel",
        "filter",
        "typesize",
        "nthreads",
        "chunksize",
        "cratio",
        "compress_gbps",
        "decompress_gbps",
    ];
    for row in &rows {
        for key in keys {
            assert!(!row[key].is_null(), "{key} missing in {row}");
        }
        assert_eq!(row["typesize"], 4);
        assert_eq!(row["chunksize"], 65536);
    }
    let nthreads: Vec<_> = rows
        .iter()
        .map(|r| r["nthreads"].as_u64().unwrap())
        .collect();
    assert_eq!(nthreads, [1, 2, 1, 2, 1, 2, 1, 2]);
    // Each measure has exactly one winner, and it is the row with the top value.
    for (key, label) in [
        ("cratio", "best ratio"),
        ("compress_gbps", "fastest compression"),
        ("decompress_gbps", "fastest decompression"),
    ] {
        let winners: Vec<_> = rows
            .iter()
            .filter(|r| r["best"].as_array().unwrap().iter().any(|b| b == label))
            .collect();
        assert_eq!(winners.len(), 1, "{label}");
        let top = rows
            .iter()
            .map(|r| r[key].as_f64().unwrap())
            .fold(0.0, f64::max);
        assert_eq!(winners[0][key].as_f64().unwrap(), top, "{label}");
    }
    // Comma-separated lists sweep the same way.
    let mut args = vec!["bench", &input, "--json", "--runs", "1"];
    args.extend("--codec lz4,zstd --clevel 1 --filter shuffle,bitshuffle".split(' '));
    assert_eq!(ok(&strata(&args)).lines().count(), 4);
    // One thread unless asked.
    let table = ok(&strata(&[
        "bench",
        &input,
        "--codec",
        "blosclz",
        "--clevel",
        "5",
        "--typesize",
        "2",
        "--runs",
        "1",
    ]));
    // A header, three rows (one per default filter), then the three winners.
    assert_eq!(table.lines().count(), 7, "{table}");
    assert!(table.starts_with("codec"));
    assert!(
        table
            .lines()
            .skip(1)
            .take(3)
            .all(|l| l.split_whitespace().nth(4) == Some("1")),
        "{table}"
    );
    for label in ["best ratio", "fastest compression", "fastest decompression"] {
        assert_eq!(table.matches(&format!("<- {label}")).count(), 1, "{table}");
        assert!(table.lines().any(|l| l.starts_with(label)), "{table}");
    }
}

#[test]
fn system_reports_cores_caches_and_overrides() {
    let out = ok(&strata(&["system"]));
    for field in [
        "cores:",
        "workers:",
        "nthreads:",
        "L1d:",
        "L2:",
        "L3:",
        "chunk size:",
        "block size:",
        "SIMD:",
    ] {
        assert!(out.contains(field), "{field} missing from:\n{out}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg("system")
        .env("STRATA_L2", "3M")
        .env("STRATA_PIN", "0")
        .env("STRATA_NTHREADS", "1")
        .output()
        .unwrap();
    let text = ok(&out);
    assert!(text.contains("L2:          3 MiB (env)"), "{text}");
    assert!(text.contains("(not pinned)"), "{text}");
    assert!(text.contains("nthreads:    1 "), "{text}");
    fails_with(&strata(&["system", "extra"]), 2, "unexpected argument");
}

/// `strata info --json` of a chunk, frame or array.
fn frame_json(path: &str) -> serde_json::Value {
    serde_json::from_str(&ok(&strata(&["info", "--json", path]))).unwrap()
}

#[test]
fn frames_round_trip_contiguous_and_sparse() {
    let d = Dir::new();
    let data = sample(); // 160 000 bytes
    let input = d.file("in.raw", &data);
    for sparse in [false, true] {
        let frame = d.path(if sparse { "s.b2frame" } else { "c.b2frame" });
        let back = d.path("back.raw");
        let mut args = vec![
            "compress",
            "--codec",
            "zstd",
            "--typesize",
            "4",
            "--chunksize",
            "64K",
        ];
        if sparse {
            args.push("--sparse");
        }
        args.extend([input.as_str(), frame.as_str()]);
        ok(&strata(&args));
        let info = frame_json(&frame);
        assert_eq!(info["nchunks"], 3, "{info}");
        assert_eq!(info["chunksize"], 65536);
        assert_eq!(info["nbytes"], 160_000);
        assert_eq!(info["typesize"], 4);
        assert_eq!(info["codec"], "zstd");
        assert_eq!(
            info["kind"],
            if sparse {
                "sparse frame"
            } else {
                "contiguous frame"
            }
        );
        if sparse {
            for file in ["chunks.b2frame", "00000000.chunk", "00000002.chunk"] {
                assert!(std::path::Path::new(&frame).join(file).exists(), "{file}");
            }
        }
        ok(&strata(&["decompress", "--force", &frame, &back]));
        assert_eq!(read(&back), data);
    }
}

#[test]
fn frame_of_zeros_is_special_chunks() {
    let d = Dir::new();
    let input = d.file("zeros.raw", &vec![0u8; 300_000]);
    let frame = d.path("z.b2frame");
    ok(&strata(&[
        "compress",
        "--chunksize",
        "100000",
        &input,
        &frame,
    ]));
    let info = frame_json(&frame);
    assert_eq!(info["special_chunks"]["zero"], 3, "{info}");
    assert_eq!(info["cbytes"], 0);
    assert!(std::fs::metadata(&frame).unwrap().len() < 400);
    // A zero chunk between data chunks decompresses to zeros (the command reuses one
    // buffer, which holds the previous chunk's data then).
    let mut mixed = sample()[..100_000].to_vec();
    mixed.extend(vec![0u8; 100_000]);
    mixed.extend(&sample()[..100_000]);
    let input = d.file("mixed.raw", &mixed);
    let (frame, back) = (d.path("m.b2frame"), d.path("m.raw"));
    ok(&strata(&[
        "compress",
        "--chunksize",
        "100000",
        &input,
        &frame,
    ]));
    assert_eq!(frame_json(&frame)["special_chunks"]["zero"], 1);
    ok(&strata(&["decompress", &frame, &back]));
    assert_eq!(read(&back), mixed);
}

#[test]
fn frame_commands_refuse_bad_input() {
    let d = Dir::new();
    let input = d.file("in.raw", &sample());
    let frame = d.path("f.b2frame");
    ok(&strata(&["compress", "--chunksize", "32K", &input, &frame]));
    // An existing output is kept unless --force.
    fails_with(&strata(&["compress", &input, &frame]), 1, "--force");
    fails_with(&strata(&["decompress", &frame, &input]), 1, "--force");
    // Usage errors exit with 2.
    fails_with(
        &strata(&["compress", "--chunksize", "12X", &input, &frame]),
        2,
        "12X",
    );
    fails_with(
        &strata(&[
            "compress",
            "--chunksize",
            "3",
            "--typesize",
            "4",
            "-f",
            &input,
            &frame,
        ]),
        2,
        "typesize",
    );
    // A missing file, and every truncation of a frame: an error naming the file, no panic.
    let missing = d.path("missing.b2frame");
    fails_with(&strata(&["info", &missing]), 1, "missing.b2frame");
    fails_with(
        &strata(&["decompress", &missing, &d.path("x")]),
        1,
        "missing.b2frame",
    );
    let whole = read(&frame);
    for len in [
        10,
        86,
        87,
        200,
        whole.len() / 2,
        whole.len() - 25,
        whole.len() - 1,
    ] {
        let cut = d.file("cut.b2frame", &whole[..len]);
        let out = strata(&["decompress", "-f", &cut, &d.path("x")]);
        fails_with(&out, 1, "cut.b2frame");
        // The file is named once, though both the command and the library name it.
        assert_eq!(
            stderr(&out).matches("cut.b2frame").count(),
            1,
            "{}",
            stderr(&out)
        );
        let out = strata(&["info", &cut]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "info of {len} bytes: {}",
            stderr(&out)
        );
    }
}

/// A small netCDF-3 classic file: `t(time=3, lat=4, lon=5)` int32 with a `_FillValue`, units
/// and a float32 `scale_factor`, the coordinate `lat(lat)` float64, and global attributes;
/// values are their C-order index.
fn netcdf_file(d: &Dir) -> String {
    use netcdf3::{DataSet, FileWriter, Version};
    let mut ds = DataSet::new();
    ds.add_fixed_dim("time", 3).unwrap();
    ds.add_fixed_dim("lat", 4).unwrap();
    ds.add_fixed_dim("lon", 5).unwrap();
    ds.add_var_i32("t", &["time", "lat", "lon"]).unwrap();
    ds.add_var_attr_i32("t", "_FillValue", vec![-999]).unwrap();
    ds.add_var_attr_string("t", "units", "K").unwrap();
    ds.add_var_attr_f32("t", "scale_factor", vec![0.1]).unwrap();
    ds.add_var_f64("lat", &["lat"]).unwrap();
    ds.add_global_attr_string("title", "small").unwrap();
    ds.add_global_attr_i16("levels", vec![1, 2]).unwrap();
    let path = d.path("small.nc");
    let mut w = FileWriter::create_new(&path).unwrap();
    w.set_def(&ds, Version::Classic, 0).unwrap();
    w.write_var_i32("t", &(0..60).collect::<Vec<i32>>())
        .unwrap();
    w.write_var_f64("lat", &[-45.0, -15.0, 15.0, 45.0]).unwrap();
    w.close().unwrap();
    path
}

/// The items of a little-endian `.npy` file (header skipped) and its header text.
fn npy_items(path: &str) -> (String, Vec<u8>) {
    let bytes = read(path);
    let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    (
        String::from_utf8(bytes[10..10 + len].to_vec()).unwrap(),
        bytes[10 + len..].to_vec(),
    )
}

#[test]
fn import_netcdf_then_export_slice_and_info() {
    let d = Dir::new();
    let nc = netcdf_file(&d);
    let out = d.path("arrays");
    let report = ok(&strata(&["import", "--json", &nc, &out]));
    let rows: Vec<serde_json::Value> = report
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["t", "lat"]);
    assert_eq!(rows[0]["shape"], serde_json::json!([3, 4, 5]));
    assert_eq!(rows[0]["dtype"], "<i4");
    let t = format!("{out}/t.b2nd");
    let info = frame_json(&t);
    assert_eq!(info["b2nd"]["shape"], serde_json::json!([3, 4, 5]));
    assert_eq!(info["b2nd"]["dtype"], "<i4");
    let vl: std::collections::HashMap<String, serde_json::Value> = info["vlmetalayers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["name"].as_str().unwrap().to_owned(), l["value"].clone()))
        .collect();
    assert_eq!(vl["dims"], serde_json::json!(["time", "lat", "lon"]));
    // Values as JSON-like msgpack, each number's netCDF type as a NumPy dtype beside them
    // (the float32 0.1 stored as the float64 of the same value); the file's own attributes
    // on every array.
    assert_eq!(
        vl["attrs"],
        serde_json::json!({"_FillValue": -999, "units": "K", "scale_factor": f64::from(0.1f32)})
    );
    assert_eq!(
        vl["attr_dtypes"],
        serde_json::json!({"_FillValue": "<i4", "scale_factor": "<f4"})
    );
    let global = serde_json::json!({"title": "small", "levels": [1, 2]});
    let global_dtypes = serde_json::json!({"levels": "<i2"});
    assert_eq!(
        (&vl["global_attrs"], &vl["global_attr_dtypes"]),
        (&global, &global_dtypes)
    );
    let lat = frame_json(&format!("{out}/lat.b2nd"));
    let lat_vl: std::collections::HashMap<&str, &serde_json::Value> = lat["vlmetalayers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["name"].as_str().unwrap(), &l["value"]))
        .collect();
    assert_eq!(lat_vl["attrs"], &serde_json::json!({}));
    assert_eq!(lat_vl["attr_dtypes"], &serde_json::json!({}));
    assert_eq!(
        (lat_vl["global_attrs"], lat_vl["global_attr_dtypes"]),
        (&global, &global_dtypes)
    );
    // The whole array in C order, then a slice with a step and a negative start.
    let whole = d.path("t.npy");
    ok(&strata(&["export", &t, &whole]));
    let (header, items) = npy_items(&whole);
    assert!(
        header.contains("'descr': '<i4'") && header.contains("'shape': (3, 4, 5)"),
        "{header}"
    );
    let want: Vec<u8> = (0..60i32).flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(items, want);
    let part = d.path("part.raw");
    ok(&strata(&[
        "export", "--start", "1,-2", "--stop", "3,4", "--step", "1,1,2", &t, &part,
    ]));
    let want: Vec<u8> = [1usize, 2]
        .iter()
        .flat_map(|&i| [2usize, 3].map(move |j| (i, j)))
        .flat_map(|(i, j)| [0usize, 2, 4].map(move |k| (i * 20 + j * 5 + k) as i32))
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(read(&part), want);
    // decompress gives the same C-order items.
    let back = d.path("back.npy");
    ok(&strata(&["decompress", &t, &back]));
    assert_eq!(npy_items(&back).1, npy_items(&whole).1);
    // slice prints small selections.
    let printed = ok(&strata(&[
        "slice", &t, "--start", "2,3,3", "--stop", "3,4,5",
    ]));
    assert_eq!(printed, "shape [1, 1, 2] <i4\n[[[58, 59]]]\n");
    let lat = ok(&strata(&[
        "slice",
        &format!("{out}/lat.b2nd"),
        "--start",
        "1",
        "--stop",
        "3",
    ]));
    assert_eq!(lat, "shape [2] <f8\n[-15, 15]\n");
    // The (5,5)[4:6,4:6] case through the CLI, and a selection wholly outside: empty.
    let outside = ok(&strata(&["slice", &t, "--start", "5", "--stop", "9"]));
    assert_eq!(outside, "shape [0, 4, 5] <i4\n[]\n");
}

#[test]
fn import_npy_and_raw_with_partitions() {
    let d = Dir::new();
    let data = sample(); // 40 000 u32
    let npy_in = d.file("a.npy", &npy("'<u4'", "(200, 200)", false, &data));
    let arr = d.path("a.b2nd");
    ok(&strata(&[
        "import",
        "--codec",
        "lz4",
        "--chunkshape",
        "100,64",
        "--blockshape",
        "25,16",
        &npy_in,
        &arr,
    ]));
    let info = frame_json(&arr);
    assert_eq!(info["b2nd"]["chunkshape"], serde_json::json!([100, 64]));
    assert_eq!(info["b2nd"]["blockshape"], serde_json::json!([25, 16]));
    assert_eq!(info["codec"], "lz4");
    assert_eq!(info["nchunks"], 8);
    let back = d.path("a.raw");
    ok(&strata(&["export", &arr, &back]));
    assert_eq!(read(&back), data);
    // Raw bytes need --shape and --dtype; the sizes must agree.
    let raw = d.file("a.bin", &data);
    let arr2 = d.path("b.b2nd");
    ok(&strata(&[
        "import", "--shape", "40000", "--dtype", "<u4", &raw, &arr2,
    ]));
    ok(&strata(&["export", "-f", &arr2, &back]));
    assert_eq!(read(&back), data);
    fails_with(
        &strata(&["import", &raw, &d.path("c.b2nd")]),
        2,
        "--shape and --dtype",
    );
    fails_with(
        &strata(&[
            "import",
            "--shape",
            "7",
            "--dtype",
            "<u4",
            &raw,
            &d.path("c.b2nd"),
        ]),
        1,
        "a.bin",
    );
    fails_with(
        &strata(&[
            "import",
            "--shape",
            "40000",
            "--dtype",
            "<q9",
            &raw,
            &d.path("c.b2nd"),
        ]),
        2,
        "<q9",
    );
    fails_with(
        &strata(&["import", "--chunkshape", "10", &npy_in, &d.path("c.b2nd")]),
        2,
        "--chunkshape",
    );
    fails_with(&strata(&["import", &npy_in, &arr]), 1, "--force");
    // The benchmark of an array reads the same hyperplanes as the .npy.
    let bench = ok(&strata(&[
        "bench", "--json", "--runs", "1", &arr, "--npy", &npy_in,
    ]));
    let b: serde_json::Value = serde_json::from_str(&bench).unwrap();
    assert_eq!(b["hyperplanes"].as_array().unwrap().len(), 2);
    // A row crosses 4 chunks of 64 columns: 4 blocks of 16 columns in each of the first three,
    // and 1 in the last, which holds columns 192..200.
    assert_eq!(b["hyperplanes"][0]["blocks_decompressed"], 13);
}

#[test]
fn array_commands_refuse_bad_input() {
    let d = Dir::new();
    let npy_in = d.file("a.npy", &npy("'<u4'", "(200, 200)", false, &sample()));
    let arr = d.path("a.b2nd");
    ok(&strata(&["import", &npy_in, &arr]));
    fails_with(&strata(&["slice", &arr]), 2, "--start");
    fails_with(&strata(&["slice", &arr, "--start", "0,0,0"]), 2, "3 values");
    fails_with(&strata(&["slice", &arr, "--step", "0"]), 2, "0");
    fails_with(
        &strata(&["slice", &arr, "--start", "0"]),
        1,
        "more than the 1000",
    );
    fails_with(
        &strata(&["export", &d.path("none.b2nd"), &d.path("x.npy")]),
        1,
        "none.b2nd",
    );
    fails_with(
        &strata(&["import", &d.path("none.nc"), &d.path("x")]),
        1,
        "none.nc",
    );
    // A netCDF file cut short, and a .b2nd cut short: errors naming the file.
    let nc = netcdf_file(&d);
    let whole = read(&nc);
    let cut = d.file("cut.nc", &whole[..whole.len() - 40]);
    fails_with(&strata(&["import", &cut, &d.path("cut")]), 1, "cut.nc");
    let bytes = read(&arr);
    for len in [50, 100, bytes.len() / 2, bytes.len() - 1] {
        let cut = d.file("cut.b2nd", &bytes[..len]);
        fails_with(
            &strata(&["export", "-f", &cut, &d.path("x.npy")]),
            1,
            "cut.b2nd",
        );
        fails_with(
            &strata(&["slice", &cut, "--start", "0,0", "--stop", "1,1"]),
            1,
            "cut.b2nd",
        );
    }
    fails_with(
        &strata(&[
            "bench",
            &arr,
            "--npy",
            &d.file("w.npy", &npy("'<u2'", "(10,)", false, &[0; 20])),
        ]),
        1,
        "w.npy",
    );
}

#[test]
fn outputs_are_staged_and_inputs_never_overwritten() {
    let d = Dir::new();
    let data = sample();
    let raw = d.file("in.raw", &data);
    let frame = d.path("f.b2frame");
    ok(&strata(&["compress", "--typesize", "4", &raw, &frame]));
    let good = read(&frame);
    // A compression that fails leaves the old output as it was, and no partial file.
    fails_with(
        &strata(&[
            "compress",
            "-f",
            "--typesize",
            "4",
            "--filter",
            "trunc_prec:99",
            &raw,
            &frame,
        ]),
        1,
        "",
    );
    assert_eq!(read(&frame), good);
    let names: Vec<String> = std::fs::read_dir(d.0.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains("partial")), "{names:?}");
    // The output may not be the input, whatever --force says, and under any name.
    fails_with(
        &strata(&["decompress", "-f", &frame, &frame]),
        1,
        "is the input",
    );
    let link = d.path("link.b2frame");
    std::fs::hard_link(&frame, &link).unwrap();
    fails_with(
        &strata(&["decompress", "-f", &frame, &link]),
        1,
        "is the input",
    );
    assert_eq!(read(&frame), good);
    let npy_in = d.file("a.npy", &npy("'<u4'", "(200, 200)", false, &data));
    let arr = d.path("a.b2nd");
    ok(&strata(&["import", &npy_in, &arr]));
    let arr_bytes = read(&arr);
    fails_with(&strata(&["export", "-f", &arr, &arr]), 1, "is the input");
    fails_with(
        &strata(&["slice", &arr, "--start", "0", "-o", &arr]),
        1,
        "is the input",
    );
    // slice -o keeps an existing file unless --force.
    let out = d.file("existing.npy", b"keep me");
    fails_with(
        &strata(&["slice", &arr, "--start", "0", "--stop", "1", "-o", &out]),
        1,
        "--force",
    );
    assert_eq!(read(&out), b"keep me");
    ok(&strata(&[
        "slice", &arr, "--start", "0", "--stop", "1", "-o", &out, "--force",
    ]));
    assert_eq!(npy_items(&out).1, data[..800]);
    assert_eq!(read(&arr), arr_bytes);
}

#[test]
fn lying_headers_are_errors_and_bad_arguments_usage_errors() {
    let d = Dir::new();
    // A .npy whose shape overflows 64 bits.
    let lie = d.file(
        "lie.npy",
        &npy(
            "'<f8'",
            "(4294967296, 4294967296, 4294967296)",
            false,
            &[0; 16],
        ),
    );
    for cmd in ["import", "compress"] {
        fails_with(&strata(&[cmd, &lie, &d.path("o")]), 1, "lie.npy");
    }
    // A netCDF header whose counts and lengths lie: errors, no huge allocation, no hang.
    let nc = read(&netcdf_file(&d));
    for (at, value) in [
        (12usize, 0x7fff_ffffu32),
        (12, 0x4000_0000),
        (20, 0x7fff_ffff),
        (40, 0x7fff_ffff),
    ] {
        let mut bad = nc.clone();
        bad[at..at + 4].copy_from_slice(&value.to_be_bytes());
        let path = d.file("bad.nc", &bad);
        let out = strata(&["import", "-f", &path, &d.path("bad")]);
        assert_eq!(out.status.code(), Some(1), "offset {at}: {}", stderr(&out));
        assert!(stderr(&out).contains("bad.nc"), "{}", stderr(&out));
    }
    // Arguments that cannot describe an array are usage errors (exit 2).
    let raw = d.file("a.raw", &sample());
    let arr = d.path("x.b2nd");
    for args in [
        vec!["--shape=-1", "--dtype", "<u4"],
        vec!["--shape", "4294967296,4294967296", "--dtype", "<u4"],
        vec!["--shape", "40000", "--dtype", "O"],
        vec!["--shape", "40000", "--dtype", "<u4", "--chunkshape", "0"],
        vec![
            "--shape",
            "40000",
            "--dtype",
            "<u4",
            "--chunkshape",
            "100",
            "--blockshape",
            "200",
        ],
        vec!["--shape", "40000", "--dtype", "<u4", "--typesize", "2"],
    ] {
        let mut cmd = vec!["import"];
        cmd.extend(args.iter().copied());
        cmd.extend([raw.as_str(), arr.as_str()]);
        let out = strata(&cmd);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
    fails_with(
        &strata(&["compress", "--chunksize", "5G", &raw, &d.path("y")]),
        2,
        "--chunksize",
    );
    assert!(!std::path::Path::new(&d.path("y")).exists());
}

/// `frame` with the first dimension of its b2nd metalayer's shape (an array of `ndim`
/// dimensions) set to `dim0`: the layer is `0x97, version, ndim, 0x90 + ndim, 0xd3, i64 BE...`.
fn with_dim0(frame: &[u8], ndim: u8, dim0: i64) -> Vec<u8> {
    let at = frame
        .windows(5)
        .position(|w| w[0] == 0x97 && w[2] == ndim && w[3] == 0x90 + ndim && w[4] == 0xd3)
        .expect("a b2nd metalayer")
        + 5;
    let mut out = frame.to_vec();
    out[at..at + 8].copy_from_slice(&dim0.to_be_bytes());
    out
}

#[test]
fn crafted_array_shapes_are_errors_naming_the_file() {
    let d = Dir::new();
    let raw = d.file(
        "in.raw",
        &(0..210u16).flat_map(u16::to_le_bytes).collect::<Vec<_>>(),
    );
    let good = d.path("a.b2nd");
    ok(&strata(&[
        "import", "--shape", "30,7", "--dtype", "<u2", &raw, &good,
    ]));
    assert_eq!(frame_json(&good)["nbytes"], 420);
    // One flipped bit (2^62) in the first dimension: the array's size overflows 64 bits.
    let crafted = d.file("x.b2nd", &with_dim0(&read(&good), 2, (1 << 62) + 30));
    for args in [vec!["info"], vec!["info", "--json"]] {
        let out = strata(&[&args[..], &[crafted.as_str()]].concat());
        fails_with(
            &out,
            1,
            &format!(
                "strata: error: {crafted}: the b2nd shape [4611686018427387934, 7] of 2-byte \
                 items is more bytes than 64 bits hold"
            ),
        );
        assert!(out.stdout.is_empty());
    }
    // The commands that open it as an array refuse it too.
    let o = d.path("o.npy");
    for args in [
        vec!["export", crafted.as_str(), o.as_str()],
        vec!["slice", "--start", "0", crafted.as_str()],
        vec!["decompress", crafted.as_str(), o.as_str()],
        vec!["bench", "--runs", "1", crafted.as_str()],
    ] {
        fails_with(
            &strata(&args),
            1,
            &format!("cannot open {crafted}: invalid parameter: b2nd: the item count overflows"),
        );
    }
    // A large shape that fits is reported as it is.
    let large = d.file("l.b2nd", &with_dim0(&read(&good), 2, 1 << 40));
    let info = frame_json(&large);
    assert_eq!(info["nbytes"], (1u64 << 40) * 14);
    assert_eq!(info["b2nd"]["shape"], serde_json::json!([1u64 << 40, 7]));
}

#[test]
fn chunk_commands_keep_an_existing_output_unless_forced() {
    let d = Dir::new();
    let data = sample();
    let input = d.file("in.raw", &data);
    let chunk = d.path("c.b2");
    ok(&strata(&[
        "chunk",
        "compress",
        "--typesize",
        "4",
        &input,
        &chunk,
    ]));
    let compressed = read(&chunk);
    let kept = d.file("kept.raw", b"do not touch");
    let runs: [&[&str]; 3] = [
        &["chunk", "compress", &input, &kept],
        &["chunk", "decompress", &chunk, &kept],
        &[
            "chunk", "getitem", &chunk, "--start", "0", "--nitems", "4", &kept,
        ],
    ];
    for args in runs {
        fails_with(
            &strata(args),
            1,
            "kept.raw exists; pass --force to replace it",
        );
        assert_eq!(read(&kept), b"do not touch", "{args:?}");
    }
    // With --force each replaces it.
    ok(&strata(&["chunk", "decompress", "--force", &chunk, &kept]));
    assert_eq!(read(&kept), data);
    ok(&strata(&[
        "chunk", "getitem", "-f", &chunk, "--start", "1", "--nitems", "2", &kept,
    ]));
    assert_eq!(read(&kept), data[4..12]);
    ok(&strata(&[
        "chunk",
        "compress",
        "--force",
        "--typesize",
        "4",
        &input,
        &kept,
    ]));
    assert_eq!(read(&kept), compressed);
}
