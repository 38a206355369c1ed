//! A real `kill -9` of a process writing a frame file. The child (this test binary run again,
//! with `STRATA_KILL_CHILD` set) appends chunks, setting a vlmetalayer every seventh append,
//! and reports each completed append; the parent kills it and checks that the file opens with
//! every reported chunk intact (and at most the one completed but not yet reported besides),
//! that the vlmetalayer holds a value the reports allow, and that the file takes more appends.
//!
//! The moment of the kill is chosen two ways. After a number of appends, the kill lands
//! wherever the child happens to be, most often compressing the next chunk, so those runs
//! rarely stop a write half-way. So the child can also stop inside the write protocol: with
//! `STRATA_KILL_PAUSE=k` its store announces the `k`-th write (counted over every change after
//! the file is created) and waits there for the kill, and the parent kills it at every write of
//! the first appends and of a vlmetalayer change, the protocol's every step.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use strata::chunk::CParams;
use strata::format::frame::FrameType;
use strata::frame::{FileIo, FrameIo, Obj, OpenMode, SyncPolicy};
use strata::schunk::{Location, OpenOptions, SChunk, SChunkOptions};
use strata::CodecId;

const CHUNK: usize = 256 * 1024;

/// What the child prints when it stops before a write.
const PAUSED: &str = "paused before write";

fn piece(i: u64) -> Vec<u8> {
    let mut x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..CHUNK / 8)
        .flat_map(|k| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x % 4096) + k as u64).to_le_bytes()
        })
        .collect()
}

/// A frame file whose `pause_at`-th write (`write_at`, `set_len`, `replace`, `remove`; 0 =
/// never) announces itself on stdout and then waits for the process to be killed.
struct Pausing {
    inner: FileIo,
    pause_at: usize,
    writes: AtomicUsize,
}

impl Pausing {
    fn before_write(&self) {
        let n = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        if n == self.pause_at {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{PAUSED} {n}").unwrap();
            out.flush().unwrap();
            loop {
                std::thread::sleep(std::time::Duration::from_secs(1));
            }
        }
    }
}

impl FrameIo for Pausing {
    fn read_at(&self, obj: Obj, pos: u64, buf: &mut [u8]) -> strata::Result<()> {
        self.inner.read_at(obj, pos, buf)
    }
    fn len(&self, obj: Obj) -> strata::Result<u64> {
        self.inner.len(obj)
    }
    fn write_at(&mut self, obj: Obj, pos: u64, data: &[u8]) -> strata::Result<()> {
        self.before_write();
        self.inner.write_at(obj, pos, data)
    }
    fn set_len(&mut self, obj: Obj, len: u64) -> strata::Result<()> {
        self.before_write();
        self.inner.set_len(obj, len)
    }
    fn sync(&mut self, obj: Obj) -> strata::Result<()> {
        self.inner.sync(obj)
    }
    fn replace(&mut self, obj: Obj, parts: &[&[u8]], durable: bool) -> strata::Result<()> {
        self.before_write();
        self.inner.replace(obj, parts, durable)
    }
    fn remove(&mut self, obj: Obj) -> strata::Result<()> {
        self.before_write();
        self.inner.remove(obj)
    }
    fn path(&self, obj: Obj) -> String {
        self.inner.path(obj)
    }
    fn frame_type(&self) -> FrameType {
        self.inner.frame_type()
    }
}

#[test]
#[ignore = "the kill tests below run it as their child process"]
fn child_append_loop() {
    let Ok(path) = std::env::var("STRATA_KILL_CHILD") else {
        eprintln!("skipped: not started by a kill test (STRATA_KILL_CHILD is not set)");
        return;
    };
    let sync = match std::env::var("STRATA_KILL_SYNC").as_deref() {
        Ok("every") => SyncPolicy::EveryWrite,
        _ => SyncPolicy::None,
    };
    let pause_at = std::env::var("STRATA_KILL_PAUSE")
        .ok()
        .map_or(0, |v| v.parse().unwrap());
    let o = SChunkOptions {
        cparams: CParams {
            typesize: 8,
            codec: CodecId::LZ4,
            nthreads: 1,
            ..CParams::default()
        },
        sync,
        overwrite: true,
        ..SChunkOptions::default()
    };
    SChunk::create(&Location::File(path.clone().into()), &o)
        .unwrap()
        .close()
        .unwrap();
    let io = Pausing {
        inner: FileIo::open(&path, true).unwrap(),
        pause_at,
        writes: AtomicUsize::new(0),
    };
    let mut s = SChunk::from_io(
        Box::new(io),
        &OpenOptions::new(OpenMode::ReadWrite).with_sync(sync),
    )
    .unwrap();
    let out = std::io::stdout();
    for i in 0.. {
        s.append_buffer(&piece(i)).unwrap();
        if i % 7 == 3 {
            s.vlmeta_set("count", &i.to_le_bytes(), None).unwrap();
        }
        let mut o = out.lock();
        writeln!(o, "appended {i}").unwrap();
        o.flush().unwrap();
    }
}

fn spawn(path: &Path, sync: &str, pause_at: usize) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_append_loop",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("STRATA_KILL_CHILD", path)
        .env("STRATA_KILL_SYNC", sync)
        .env("STRATA_KILL_PAUSE", pause_at.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Runs a child and kills it after `appends` reported appends, or when it pauses before
/// write `pause_at` (0: never); returns the appends it reported and whether it paused.
fn kill_child(path: &Path, sync: &str, appends: u64, pause_at: usize) -> (u64, bool) {
    let mut child = spawn(path, sync, pause_at);
    let mut reported = 0;
    let mut paused = false;
    let mut killed = false;
    let rd = BufReader::new(child.stdout.take().unwrap());
    // After the kill, the lines the child wrote before it died are still in the pipe: read
    // them all, so that `reported` counts every append it reported. The first line the child
    // writes follows the harness's `test child_append_loop ... ` on the same line.
    for line in rd.lines() {
        let line = line.unwrap();
        if let Some((_, n)) = line.split_once("appended ") {
            reported = n.parse::<u64>().unwrap() + 1;
        } else if line.contains(PAUSED) {
            paused = true;
        }
        if !killed && (paused || reported >= appends) {
            child.kill().unwrap(); // SIGKILL
            killed = true;
        }
    }
    child.wait().unwrap();
    (reported, paused)
}

/// The largest `i < n` whose append is followed by a vlmetalayer change.
fn last_vlmeta(n: u64) -> Option<u64> {
    (0..n).rev().find(|i| i % 7 == 3)
}

/// What the child left at `path` after reporting `reported` appends: every reported chunk and
/// at most one more, a vlmetalayer value the reports allow, and room for one more append.
fn check_survivor(path: &Path, reported: u64, what: &str) {
    let s = SChunk::open(path, OpenMode::Read)
        .unwrap_or_else(|e| panic!("{what}: the frame does not open: {e}"));
    let n = s.nchunks() as u64;
    assert!(
        n >= reported && n <= reported + 1,
        "{what}: {n} chunks after {reported} reported appends"
    );
    for i in 0..n {
        assert_eq!(
            s.decompress_chunk_vec(i as usize).unwrap(),
            piece(i),
            "{what}: chunk {i}"
        );
    }
    // The value of every reported change is there; a later one may be too.
    let count = s
        .vlmeta("count")
        .ok()
        .map(|v| u64::from_le_bytes(v.try_into().unwrap()));
    let low = last_vlmeta(reported);
    let high = last_vlmeta(n);
    match count {
        None => assert_eq!(
            low, None,
            "{what}: the vlmetalayer of append {low:?} is lost"
        ),
        Some(c) => assert!(
            c % 7 == 3 && Some(c) >= low && Some(c) <= high,
            "{what}: vlmetalayer {c} with {n} chunks after {reported} reported appends"
        ),
    }
    drop(s);
    let mut s = SChunk::open(path, OpenMode::Append).unwrap();
    s.append_buffer(&piece(n)).unwrap();
    s.close().unwrap();
    let s = SChunk::open(path, OpenMode::Read).unwrap();
    assert_eq!(
        s.decompress_chunk_vec(n as usize).unwrap(),
        piece(n),
        "{what}"
    );
}

#[test]
fn kill_9_during_appends_keeps_every_completed_chunk() {
    let dir = tempfile::tempdir().unwrap();
    for (sync, appends) in [("none", 40), ("none", 113), ("every", 9), ("none", 257)] {
        let path = dir.path().join(format!("k{appends}.b2frame"));
        let (reported, _) = kill_child(&path, sync, appends, 0);
        assert!(
            reported >= appends,
            "{sync}: the child stopped after {reported} appends"
        );
        check_survivor(&path, reported, &format!("{sync}, {appends} appends"));
    }
}

/// Writes of the child's first changes: the first append replaces the empty frame (1 write),
/// each later append is 8 (the index and trailer relocated, their header, the chunk, the new
/// index and trailer, the new header, the truncation), and the vlmetalayer change after append
/// 3 is 7 (no chunk): writes 1–33 cover appends 0–3, the vlmetalayer change and the start of
/// append 4.
const PROTOCOL_WRITES: usize = 33;

#[test]
fn kill_9_at_every_step_of_the_write_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let every = [2, 5, 9, 13, 20, 27, 32];
    let runs = (1..=PROTOCOL_WRITES)
        .map(|k| ("none", k))
        .chain(every.iter().map(|&k| ("every", k)));
    for (sync, pause_at) in runs {
        let path = dir.path().join(format!("p{pause_at}-{sync}.b2frame"));
        let (reported, paused) = kill_child(&path, sync, 64, pause_at);
        let what = format!("killed before write {pause_at} ({sync})");
        assert!(paused, "{what}: the child never reached that write");
        check_survivor(&path, reported, &what);
    }
}
