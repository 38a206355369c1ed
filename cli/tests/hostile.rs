//! `strata` against hostile files, as an attacker or an unlucky user would give them:
//!
//! * a campaign over bit-flipped, overwritten and truncated variants of frames, b2nd arrays,
//!   sparse frames and chunks written by Strata and by python-blosc2 (tests/data/peers, made
//!   by its gen.py), each run by every command that opens that kind of file (info, decompress,
//!   export, slice, bench, chunk info/decompress/getitem) in a process limited in time and
//!   address space: exit status 0, or 1 with a message naming the file and no output left
//!   behind — never a panic (101), a signal, a hang, or an allocation the limit refuses;
//! * special files — /dev/zero, a FIFO, a socket, a directory, a symbolic link loop — as the
//!   inputs and outputs of every command; with `--special-files`, chunks and frames read from
//!   a FIFO; outputs through symbolic links, into /dev/null and FIFOs, never replacing a device.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Longest a run may take: every input here is a few KiB.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Address space of a run (RLIMIT_AS): far above what a few-KiB file needs, far below what
/// a lying size field would ask for.
const MEMORY: u64 = 1 << 30;

fn peers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/peers")
}

/// What one run of `strata` did.
struct Run {
    status: Option<ExitStatus>,
    stderr: String,
    took: Duration,
}

impl Run {
    fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }
}

/// Starts `strata args` with the time and memory limits, stdin closed.
fn spawn(args: &[OsString], stdout: Stdio) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .env("STRATA_NTHREADS", "2");
    let limit = rustix::process::Rlimit {
        current: Some(MEMORY),
        maximum: Some(MEMORY),
    };
    // SAFETY: the closure runs in the child between fork and exec and only makes the
    // setrlimit system call, which is async-signal-safe; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::setrlimit(rustix::process::Resource::As, limit)
                .map_err(std::io::Error::from)
        });
    }
    cmd.spawn().expect("the strata binary runs")
}

/// Runs `strata args` to its end or the timeout (then kills it: `status` is None).
fn run(args: &[OsString]) -> Run {
    let start = Instant::now();
    let mut child = spawn(args, Stdio::null());
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stderr.read_to_end(&mut s);
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let stderr = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    Run {
        status,
        stderr,
        took: start.elapsed(),
    }
}

fn with_paths(args: &[&str], input: &Path, output: &Path) -> Vec<OsString> {
    args.iter()
        .map(|&a| match a {
            "IN" => input.as_os_str().to_owned(),
            "OUT" => output.as_os_str().to_owned(),
            _ => OsString::from(a),
        })
        .collect()
}

/// A deterministic xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// `bytes` damaged the `k`-th way: one bit flipped (in the headers or anywhere), a few bits,
/// a 4-byte field overwritten with an extreme value, or cut short.
fn damage(bytes: &[u8], rng: &mut Rng, k: usize) -> Vec<u8> {
    let mut v = bytes.to_vec();
    let n = v.len();
    match k % 10 {
        0..=2 => {
            let at = rng.below(n.min(160));
            v[at] ^= 1 << rng.below(8);
        }
        3..=4 => {
            let at = rng.below(n);
            v[at] ^= 1 << rng.below(8);
        }
        5..=6 => {
            for _ in 0..2 + rng.below(6) {
                let at = rng.below(n);
                v[at] ^= 1 << rng.below(8);
            }
        }
        7 => {
            let at = rng.below(n.saturating_sub(4).max(1));
            let value: [u8; 4] = match rng.below(4) {
                0 => [0xff; 4],
                1 => 0x7fff_ffffu32.to_le_bytes(),
                2 => 0x8000_0000u32.to_le_bytes(),
                _ => [0; 4],
            };
            for (i, b) in value.iter().enumerate().take(n - at) {
                v[at + i] = *b;
            }
        }
        _ => {
            const CUTS: [usize; 8] = [0, 1, 15, 16, 31, 32, 87, 100];
            let cut = if rng.below(3) == 0 {
                CUTS[rng.below(CUTS.len())].min(n - 1)
            } else {
                rng.below(n)
            };
            v.truncate(cut);
        }
    }
    v
}

/// What a seed file is, which decides the commands that read its variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Chunk,
    Frame,
    Array,
}

/// The commands run on every variant of a kind (IN: the variant, OUT: a fresh output), and
/// those run on every 8th variant only (benchmarks time several passes).
fn commands(
    kind: Kind,
) -> (
    &'static [&'static [&'static str]],
    &'static [&'static [&'static str]],
) {
    match kind {
        Kind::Chunk => (
            &[
                &["info", "IN"],
                &["chunk", "info", "--json", "IN"],
                &["chunk", "decompress", "--force", "IN", "OUT"],
                &[
                    "chunk", "getitem", "--force", "--start", "3", "--nitems", "50", "IN", "OUT",
                ],
            ],
            &[&[
                "bench", "--runs", "1", "--codec", "lz4", "--clevel", "1", "--filter", "shuffle",
                "IN",
            ]],
        ),
        Kind::Frame => (
            &[
                &["info", "--json", "IN"],
                &["decompress", "IN", "OUT"],
                &["export", "IN", "OUT"],
            ],
            &[],
        ),
        Kind::Array => (
            &[
                &["info", "IN"],
                &["decompress", "IN", "OUT"],
                &["export", "--start", "1", "--step", "2", "IN", "OUT"],
                &[
                    "slice", "--start", "1,2", "--stop", "9,7", "--step", "2,3", "IN",
                ],
            ],
            &[&["bench", "--runs", "1", "IN"]],
        ),
    }
}

/// A seed: a file (or sparse directory) and its kind.
struct Seed {
    name: String,
    path: PathBuf,
    kind: Kind,
}

fn strata_ok(args: &[&OsStr]) {
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The seeds: files Strata writes (made here with the CLI) and python-blosc2's.
fn seeds(dir: &Path) -> Vec<Seed> {
    let mut seeds = Vec::new();
    let raw = dir.join("data.raw");
    let values: Vec<u8> = (0..12_000u32)
        .flat_map(|i| (((i as f32) / 300.0).sin() * 1000.0 + (i % 7) as f32).to_le_bytes())
        .collect();
    std::fs::write(&raw, &values).unwrap();
    let p = |name: &str| dir.join(name);
    for (name, flags) in [
        ("s-blosclz.b2", &["--typesize", "4"][..]),
        (
            "s-lz4-bitshuffle.b2",
            &[
                "--codec",
                "lz4",
                "--filter",
                "bitshuffle",
                "--typesize",
                "4",
            ],
        ),
        (
            "s-zstd-delta.b2",
            &[
                "--codec",
                "zstd",
                "--filter",
                "delta",
                "--filter",
                "shuffle",
                "--typesize",
                "4",
            ],
        ),
        (
            "s-zlib-bytedelta.b2",
            &[
                "--codec",
                "zlib",
                "--filter",
                "shuffle",
                "--filter",
                "bytedelta",
                "--typesize",
                "4",
            ],
        ),
        (
            "s-lz4hc-split.b2",
            &[
                "--codec",
                "lz4hc",
                "--splitmode",
                "always",
                "--blocksize",
                "4096",
                "--typesize",
                "4",
            ],
        ),
        (
            "s-zstd-dict.b2",
            &[
                "--codec",
                "zstd",
                "--dict",
                "--blocksize",
                "8192",
                "--typesize",
                "4",
            ],
        ),
        ("s-memcpyed.b2", &["--clevel", "0", "--typesize", "4"]),
    ] {
        let mut args: Vec<&OsStr> = vec!["chunk".as_ref(), "compress".as_ref()];
        args.extend(flags.iter().map(OsStr::new));
        let out = p(name);
        args.extend([raw.as_os_str(), out.as_os_str()]);
        strata_ok(&args);
        seeds.push(Seed {
            name: name.into(),
            path: out,
            kind: Kind::Chunk,
        });
    }
    let frame = p("s.b2frame");
    strata_ok(&[
        "compress".as_ref(),
        "--typesize".as_ref(),
        "4".as_ref(),
        "--chunksize".as_ref(),
        "12K".as_ref(),
        "--codec".as_ref(),
        "zstd".as_ref(),
        raw.as_os_str(),
        frame.as_os_str(),
    ]);
    seeds.push(Seed {
        name: "s.b2frame".into(),
        path: frame,
        kind: Kind::Frame,
    });
    let sparse = p("s-sparse.b2frame");
    strata_ok(&[
        "compress".as_ref(),
        "--sparse".as_ref(),
        "--typesize".as_ref(),
        "4".as_ref(),
        "--chunksize".as_ref(),
        "16K".as_ref(),
        raw.as_os_str(),
        sparse.as_os_str(),
    ]);
    seeds.push(Seed {
        name: "s-sparse.b2frame".into(),
        path: sparse,
        kind: Kind::Frame,
    });
    for (name, flags) in [
        (
            "s.b2nd",
            &["--chunkshape", "20,20", "--blockshape", "10,10"][..],
        ),
        (
            "s-zstd.b2nd",
            &[
                "--codec",
                "zstd",
                "--filter",
                "delta",
                "--chunkshape",
                "32,16",
                "--blockshape",
                "8,16",
            ],
        ),
    ] {
        let out = p(name);
        let mut args: Vec<&OsStr> = vec!["import".as_ref()];
        args.extend(flags.iter().map(OsStr::new));
        args.extend(["--shape", "120,100", "--dtype", "<f4"].map(OsStr::new));
        args.extend([raw.as_os_str(), out.as_os_str()]);
        strata_ok(&args);
        seeds.push(Seed {
            name: name.into(),
            path: out,
            kind: Kind::Array,
        });
    }
    for entry in std::fs::read_dir(peers()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let kind = match path.extension().and_then(OsStr::to_str) {
            Some("b2") => Kind::Chunk,
            Some("b2frame") => Kind::Frame,
            Some("b2nd") => Kind::Array,
            _ => continue,
        };
        seeds.push(Seed {
            name: format!("py-{name}"),
            path,
            kind,
        });
    }
    seeds.sort_by(|a, b| a.name.cmp(&b.name));
    seeds
}

/// Writes variant `k` of `seed` under `dir`: a damaged copy of the file, or of a sparse
/// frame directory with its index or one of its chunk files damaged.
fn write_variant(seed: &Seed, dir: &Path, k: usize, rng: &mut Rng) -> PathBuf {
    let dest = dir.join(format!("{}-{k}", seed.name));
    if seed.path.is_dir() {
        std::fs::create_dir(&dest).unwrap();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&seed.path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        let victim = if k.is_multiple_of(2) {
            seed.path.join("chunks.b2frame")
        } else {
            files[rng.below(files.len())].clone()
        };
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let bytes = if *f == victim {
                damage(&bytes, rng, k / 2)
            } else {
                bytes
            };
            std::fs::write(dest.join(f.file_name().unwrap()), bytes).unwrap();
        }
    } else {
        let bytes = std::fs::read(&seed.path).unwrap();
        std::fs::write(&dest, damage(&bytes, rng, k)).unwrap();
    }
    dest
}

/// Variants per seed: over 2,000 in all.
const VARIANTS: usize = 100;

#[test]
fn bit_flipped_and_truncated_files_fail_cleanly() {
    let start = Instant::now();
    let work = tempfile::tempdir().unwrap();
    let seeds = seeds(work.path());
    let variants_dir = work.path().join("variants");
    std::fs::create_dir(&variants_dir).unwrap();
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut jobs = Vec::new();
    for seed in &seeds {
        for k in 0..VARIANTS {
            let path = write_variant(seed, &variants_dir, k, &mut rng);
            let (every, some) = commands(seed.kind);
            for cmd in every.iter().chain(some.iter().filter(|_| k % 8 == 0)) {
                jobs.push((path.clone(), *cmd));
            }
        }
    }
    let nvariants = seeds.len() * VARIANTS;
    assert!(nvariants >= 2000, "{nvariants} variants");
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let counts = Mutex::new([0usize; 2]);
    let slowest = Mutex::new(Duration::ZERO);
    std::thread::scope(|s| {
        for w in 0..2 {
            let (jobs, next, failures, counts, slowest) =
                (&jobs, &next, &failures, &counts, &slowest);
            let out_dir = work.path().join(format!("out-{w}"));
            std::fs::create_dir(&out_dir).unwrap();
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((input, cmd)) = jobs.get(i) else {
                    break;
                };
                let out = out_dir.join(
                    if cmd.contains(&"slice") || cmd[0] == "decompress" || cmd[0] == "export" {
                        "out.npy"
                    } else {
                        "out.raw"
                    },
                );
                let r = run(&with_paths(cmd, input, &out));
                let named = r.stderr.contains(&*input.to_string_lossy());
                let problem = match r.code() {
                    Some(0) => None,
                    Some(1) if !named => Some("the message does not name the file"),
                    Some(1) if !r.stderr.starts_with("strata: error: ") => {
                        Some("not a strata error")
                    }
                    Some(1) if out.exists() => Some("a failed run left an output"),
                    Some(1) => None,
                    Some(101) => Some("panicked"),
                    Some(_) => Some("unexpected exit status"),
                    None if r.status.is_none() => Some("hung (killed after the timeout)"),
                    None => Some("killed by a signal"),
                };
                counts.lock().unwrap()[usize::from(r.code() == Some(1))] += 1;
                {
                    let mut worst = slowest.lock().unwrap();
                    *worst = (*worst).max(r.took);
                }
                if let Some(why) = problem {
                    let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hostile-failures");
                    std::fs::create_dir_all(&keep).unwrap();
                    let name = input.file_name().unwrap();
                    let _ = std::fs::copy(input, keep.join(name));
                    failures.lock().unwrap().push(format!(
                        "{why}: strata {} (status {:?}; input kept in {}): {}",
                        cmd.join(" "),
                        r.status,
                        keep.display(),
                        r.stderr.trim()
                    ));
                }
                let _ = std::fs::remove_file(&out);
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    let [ok, errors] = counts.into_inner().unwrap();
    eprintln!(
        "hostile campaign: {} seeds, {nvariants} variants, {} runs ({ok} exit 0, {errors} exit 1), slowest run {:?}, {:?} in all",
        seeds.len(),
        jobs.len(),
        slowest.into_inner().unwrap(),
        start.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} bad runs:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Damage is mostly noticed: the campaign is not a round of successful reads.
    assert!(
        errors > jobs.len() / 3,
        "{errors} errors in {} runs",
        jobs.len()
    );
}

/// Special files in a fresh directory: a FIFO, a socket (listening), a symbolic link loop, a
/// directory; and /dev/zero.
struct Specials {
    dir: tempfile::TempDir,
    _socket: std::os::unix::net::UnixListener,
}

impl Specials {
    fn new() -> Specials {
        let dir = tempfile::tempdir().unwrap();
        let made = Command::new("mkfifo")
            .arg(dir.path().join("fifo"))
            .status()
            .unwrap();
        assert!(made.success());
        let socket = std::os::unix::net::UnixListener::bind(dir.path().join("socket")).unwrap();
        std::os::unix::fs::symlink("loop-b", dir.path().join("loop-a")).unwrap();
        std::os::unix::fs::symlink("loop-a", dir.path().join("loop-b")).unwrap();
        std::fs::create_dir(dir.path().join("dir")).unwrap();
        Specials {
            dir,
            _socket: socket,
        }
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    /// Each special input with the start of the message it gets.
    fn inputs(&self) -> Vec<(PathBuf, &'static str)> {
        vec![
            (
                PathBuf::from("/dev/zero"),
                "a character device is not a regular file",
            ),
            (self.path("fifo"), "a FIFO is not a regular file"),
            (self.path("socket"), "a socket is not a regular file"),
            (self.path("loop-a"), "Too many levels of symbolic links"),
            (self.path("dir"), ""),
        ]
    }
}

/// Every command that opens an input file, IN the input, OUT a fresh output.
const EVERY_COMMAND: &[&[&str]] = &[
    &["info", "IN"],
    &["decompress", "IN", "OUT"],
    &["export", "IN", "OUT"],
    &["slice", "--start", "0", "IN"],
    &["bench", "--runs", "1", "IN"],
    &["compress", "IN", "OUT"],
    &["import", "--shape", "4", "--dtype", "<f4", "IN", "OUT"],
    &["chunk", "info", "IN"],
    &["chunk", "decompress", "--force", "IN", "OUT"],
    &[
        "chunk", "getitem", "--force", "--start", "0", "--nitems", "1", "IN", "OUT",
    ],
    &["chunk", "compress", "--force", "IN", "OUT"],
];

#[test]
fn special_files_as_inputs_of_every_command() {
    let sp = Specials::new();
    let out = sp.path("out.npy");
    let mut runs = 0;
    for cmd in EVERY_COMMAND {
        for (input, why) in sp.inputs() {
            let r = run(&with_paths(cmd, &input, &out));
            let what = format!("strata {} on {}", cmd.join(" "), input.display());
            assert_eq!(r.code(), Some(1), "{what}: {:?} {}", r.status, r.stderr);
            assert!(
                r.stderr.starts_with("strata: error: "),
                "{what}: {}",
                r.stderr
            );
            assert!(
                r.stderr.contains(&*input.to_string_lossy()),
                "{what}: {}",
                r.stderr
            );
            assert!(r.stderr.contains(why), "{what}: {}", r.stderr);
            assert!(r.took < Duration::from_secs(5), "{what} took {:?}", r.took);
            assert!(!out.exists(), "{what} left an output");
            runs += 1;
        }
    }
    assert_eq!(runs, EVERY_COMMAND.len() * 5);
    // The FIFO is refused, not read: it is still there, unopened by anyone.
    assert!(std::fs::symlink_metadata(sp.path("fifo"))
        .unwrap()
        .file_type()
        .is_fifo());
    let zero = Path::new("/dev/zero");
    let r = run(&with_paths(&["info", "IN"], zero, &out));
    assert_eq!(
        r.stderr,
        "strata: error: /dev/zero: a character device is not a regular file; pass --special-files to read it as a stream\n"
    );
    let r = run(&with_paths(&["compress", "IN", "OUT"], zero, &out));
    assert_eq!(
        r.stderr,
        "strata: error: /dev/zero: a character device is not a regular file; data files (raw, .npy, netCDF) are read from regular files only\n"
    );
}

/// Writes `bytes` into the FIFO `fifo` from a thread (as a producer process would).
fn feed(fifo: &Path, bytes: Vec<u8>) -> std::thread::JoinHandle<()> {
    let fifo = fifo.to_owned();
    std::thread::spawn(move || {
        let mut f = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        let _ = f.write_all(&bytes);
    })
}

#[test]
fn with_special_files_chunks_and_frames_are_read_from_streams() {
    let sp = Specials::new();
    let fifo = sp.path("fifo");
    let out = sp.path("out.raw");
    // A chunk, then a frame, then an array, through the FIFO: the same as from their files.
    let chunk = peers().join("chunk-lz4-shuffle.b2");
    let writer = feed(&fifo, std::fs::read(&chunk).unwrap());
    let mut child = spawn(
        &with_paths(
            &["--special-files", "chunk", "info", "--json", "IN"],
            &fifo,
            &out,
        ),
        Stdio::piped(),
    );
    let mut got = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut got)
        .unwrap();
    assert!(child.wait().unwrap().success());
    writer.join().unwrap();
    let file_json = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["chunk", "info", "--json"])
        .arg(&chunk)
        .output()
        .unwrap()
        .stdout;
    assert_eq!(got.as_bytes(), file_json);
    for (name, args) in [
        (
            "frame.b2frame",
            &["--special-files", "decompress", "IN", "OUT"][..],
        ),
        ("f8.b2nd", &["export", "--special-files", "IN", "OUT"]),
    ] {
        let file = peers().join(name);
        let from_file = sp.path("from-file.raw");
        let plain: Vec<&str> = args
            .iter()
            .copied()
            .filter(|&a| a != "--special-files")
            .collect();
        let r = run(&with_paths(&plain, &file, &from_file));
        assert_eq!(r.code(), Some(0), "{}", r.stderr);
        let writer = feed(&fifo, std::fs::read(&file).unwrap());
        let r = run(&with_paths(args, &fifo, &out));
        writer.join().unwrap();
        assert_eq!(r.code(), Some(0), "{name}: {}", r.stderr);
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(&from_file).unwrap(),
            "{name}"
        );
        std::fs::remove_file(&out).unwrap();
        std::fs::remove_file(&from_file).unwrap();
    }
    // /dev/zero never ends: the stream is read no further than a chunk header, then refused.
    let r = run(&with_paths(
        &["--special-files", "info", "IN"],
        Path::new("/dev/zero"),
        &out,
    ));
    assert_eq!(
        r.stderr,
        "strata: error: /dev/zero: not a Blosc2 chunk: unsupported chunk format version 0 (Strata reads 1 to 6)\n"
    );
    // A frame stream cut short is an error naming it, after what the stream held.
    let frame = std::fs::read(peers().join("frame.b2frame")).unwrap();
    let writer = feed(&fifo, frame[..frame.len() / 2].to_vec());
    let r = run(&with_paths(
        &["--special-files", "decompress", "IN", "OUT"],
        &fifo,
        &out,
    ));
    writer.join().unwrap();
    assert_eq!(r.code(), Some(1), "{}", r.stderr);
    assert!(r.stderr.contains(&*fifo.to_string_lossy()), "{}", r.stderr);
    assert!(!out.exists());
}

/// A character device like /dev/null, made in `dir` (root only), else None.
fn null_device(dir: &Path) -> Option<PathBuf> {
    let node = dir.join("null");
    let made = Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .ok()?;
    made.success().then_some(node)
}

#[test]
fn special_files_as_outputs() {
    let sp = Specials::new();
    let frame = peers().join("frame.b2frame");
    let array = peers().join("f8.b2nd");
    let chunk = peers().join("chunk-zstd-delta.b2");
    let data = peers().join("chunk-memcpyed.b2");
    let want_frame = run(&with_paths(
        &["decompress", "IN", "OUT"],
        &frame,
        &sp.path("frame.raw"),
    ));
    assert_eq!(want_frame.code(), Some(0));
    let frame_bytes = std::fs::read(sp.path("frame.raw")).unwrap();
    // Byte outputs of every command that writes them, into /dev/null.
    let byte_commands: &[(&[&str], &Path)] = &[
        (&["decompress", "IN", "OUT"], &frame),
        (&["export", "IN", "OUT"], &array),
        (&["slice", "--start", "1", "IN", "-o", "OUT"], &array),
        (&["chunk", "decompress", "--force", "IN", "OUT"], &chunk),
        (
            &[
                "chunk", "getitem", "--force", "--start", "1", "--nitems", "9", "IN", "OUT",
            ],
            &chunk,
        ),
        (&["chunk", "compress", "--force", "IN", "OUT"], &data),
    ];
    for (cmd, input) in byte_commands {
        let r = run(&with_paths(cmd, input, Path::new("/dev/null")));
        assert_eq!(
            r.code(),
            Some(0),
            "strata {} into /dev/null: {}",
            cmd.join(" "),
            r.stderr
        );
    }
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    // A device node, with --force: written into, never replaced by a file.
    match null_device(sp.dir.path()) {
        Some(node) => {
            for (cmd, input) in [
                (&["decompress", "-f", "IN", "OUT"][..], &frame),
                (&["export", "-f", "IN", "OUT"], &array),
            ] {
                let r = run(&with_paths(cmd, input, &node));
                assert_eq!(r.code(), Some(0), "{}", r.stderr);
                assert!(std::fs::symlink_metadata(&node)
                    .unwrap()
                    .file_type()
                    .is_char_device());
            }
            let r = run(&with_paths(&["compress", "-f", "IN", "OUT"], &data, &node));
            assert_eq!(
                r.stderr,
                format!(
                    "strata: error: {} is a character device: a frame is written in place, give a regular file or a new name\n",
                    node.display()
                )
            );
            assert!(std::fs::symlink_metadata(&node)
                .unwrap()
                .file_type()
                .is_char_device());
        }
        None => eprintln!("1 check not run: mknod needs root (a device node with --force)"),
    }
    // A FIFO: no reader is an error, not a wait; with a reader it gets the bytes.
    let fifo = sp.path("fifo");
    let r = run(&with_paths(&["decompress", "IN", "OUT"], &frame, &fifo));
    assert_eq!(
        r.stderr,
        format!(
            "strata: error: cannot write {}: no process reads this FIFO\n",
            fifo.display()
        )
    );
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut got = Vec::new();
            std::fs::File::open(&fifo)
                .unwrap()
                .read_to_end(&mut got)
                .unwrap();
            got
        })
    };
    // The reader opens its end first.
    let deadline = Instant::now() + TIMEOUT;
    let r = loop {
        let r = run(&with_paths(&["decompress", "IN", "OUT"], &frame, &fifo));
        if r.code() == Some(0) || Instant::now() > deadline {
            break r;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    assert_eq!(reader.join().unwrap(), frame_bytes);
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    // Frames are not streamed: a FIFO, a socket, a directory are refused as frame outputs.
    for (out, kind) in [
        (&fifo, "a FIFO"),
        (&sp.path("socket"), "a socket"),
        (&sp.path("dir"), "a directory"),
    ] {
        let r = run(&with_paths(&["compress", "-f", "IN", "OUT"], &data, out));
        assert_eq!(r.code(), Some(1), "{}", r.stderr);
        assert!(
            r.stderr.contains(&format!("{} is {kind}", out.display())),
            "{}",
            r.stderr
        );
    }
    let r = run(&with_paths(
        &["decompress", "-f", "IN", "OUT"],
        &frame,
        &sp.path("dir"),
    ));
    assert_eq!(
        r.stderr,
        format!(
            "strata: error: {} is a directory, not a regular file: strata does not replace it\n",
            sp.path("dir").display()
        )
    );
    // A symbolic link is followed: its target is written, the link stays.
    let target = sp.path("target.raw");
    std::fs::write(&target, b"old").unwrap();
    let link = sp.path("link.raw");
    std::os::unix::fs::symlink("target.raw", &link).unwrap();
    let r = run(&with_paths(&["decompress", "IN", "OUT"], &frame, &link));
    assert_eq!(
        r.stderr,
        format!(
            "strata: error: {} exists; pass --force to replace it\n",
            link.display()
        )
    );
    let r = run(&with_paths(
        &["decompress", "-f", "IN", "OUT"],
        &frame,
        &link,
    ));
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), frame_bytes);
    let dangling = sp.path("dangling.b2frame");
    std::os::unix::fs::symlink("new.b2frame", &dangling).unwrap();
    let r = run(&with_paths(
        &["compress", "--typesize", "4", "IN", "OUT"],
        &sp.path("frame.raw"),
        &dangling,
    ));
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    assert!(std::fs::symlink_metadata(&dangling)
        .unwrap()
        .file_type()
        .is_symlink());
    let r = run(&with_paths(
        &["decompress", "IN", "OUT"],
        &sp.path("new.b2frame"),
        &sp.path("again.raw"),
    ));
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    assert_eq!(std::fs::read(sp.path("again.raw")).unwrap(), frame_bytes);
    // A link loop is an error naming it.
    let r = run(&with_paths(
        &["decompress", "IN", "OUT"],
        &frame,
        &sp.path("loop-a"),
    ));
    assert_eq!(
        r.stderr,
        format!(
            "strata: error: {}: more than 40 symbolic links (a loop?)\n",
            sp.path("loop-a").display()
        )
    );
    // Every writing command, on every special output: exit 0 (a stream) or 1, never a wait.
    for cmd in EVERY_COMMAND.iter().filter(|c| c.contains(&"OUT")) {
        let input = match cmd[0] {
            "decompress" => &frame,
            "export" => &array,
            "compress" | "import" => &data,
            _ if cmd[1] == "compress" => &data,
            _ => &chunk,
        };
        for out in [
            sp.path("fifo"),
            sp.path("socket"),
            sp.path("loop-a"),
            sp.path("dir"),
            PathBuf::from("/dev/null"),
        ] {
            let r = run(&with_paths(cmd, input, &out));
            let what = format!("strata {} into {}", cmd.join(" "), out.display());
            assert!(
                matches!(r.code(), Some(0 | 1)),
                "{what}: {:?} {}",
                r.status,
                r.stderr
            );
            assert!(r.took < Duration::from_secs(5), "{what} took {:?}", r.took);
            if r.code() == Some(1) {
                assert!(
                    r.stderr.contains(&*out.to_string_lossy()),
                    "{what}: {}",
                    r.stderr
                );
            }
        }
    }
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    assert!(std::fs::symlink_metadata(sp.path("fifo"))
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(std::fs::symlink_metadata(sp.path("socket"))
        .unwrap()
        .file_type()
        .is_socket());
}

#[test]
fn the_flag_is_in_the_help() {
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--special-files"), "{help}");
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["info", "--help"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("--special-files"));
}
