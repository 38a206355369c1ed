//! A real `kill -9` in the middle of a long append loop: the child (this test binary, run
//! again with `STRATA_KILL_CHILD` set) appends chunks and reports each completed append; the
//! parent kills it at several moments and checks that the file opens with every reported
//! chunk intact (and at most the one completed but not yet reported besides).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use strata::chunk::CParams;
use strata::frame::{OpenMode, SyncPolicy};
use strata::schunk::{Location, SChunk, SChunkOptions};

const CHUNK: usize = 256 * 1024;

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

#[test]
fn child_append_loop() {
    let Ok(path) = std::env::var("STRATA_KILL_CHILD") else {
        return;
    };
    let sync = match std::env::var("STRATA_KILL_SYNC").as_deref() {
        Ok("every") => SyncPolicy::EveryWrite,
        _ => SyncPolicy::None,
    };
    let o = SChunkOptions {
        cparams: CParams {
            typesize: 8,
            codec: 1,
            nthreads: 1,
            ..CParams::default()
        },
        sync,
        overwrite: true,
        ..SChunkOptions::default()
    };
    let mut s = SChunk::create(&Location::File(path.into()), &o).unwrap();
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

fn kill_after(path: &std::path::Path, sync: &str, appends: u64) -> u64 {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_append_loop",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("STRATA_KILL_CHILD", path)
        .env("STRATA_KILL_SYNC", sync)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut last = None;
    let mut killed = false;
    let rd = BufReader::new(child.stdout.take().unwrap());
    // After the kill, the lines the child wrote before it died are still in the pipe: read
    // them all, so that `last` is the last append it reported.
    for line in rd.lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("appended ") {
            let n: u64 = n.parse().unwrap();
            last = Some(n);
            if n + 1 >= appends && !killed {
                child.kill().unwrap(); // SIGKILL
                killed = true;
            }
        }
    }
    child.wait().unwrap();
    last.expect("the child reported no append") + 1
}

#[test]
fn kill_9_during_appends_keeps_every_completed_chunk() {
    let dir = tempfile::tempdir().unwrap();
    for (sync, appends) in [("none", 40), ("none", 113), ("every", 9), ("none", 257)] {
        let path = dir.path().join(format!("k{appends}.b2frame"));
        let done = kill_after(&path, sync, appends);
        let s = SChunk::open(&path, OpenMode::Read).unwrap();
        let n = s.nchunks() as u64;
        // Every reported append is there, and at most the one completed but not reported.
        assert!(
            n >= done && n <= done + 1,
            "{sync}: {n} chunks after {done} reported appends"
        );
        for i in 0..n {
            assert_eq!(
                s.decompress_chunk_vec(i as usize).unwrap(),
                piece(i),
                "chunk {i}"
            );
        }
        if let Ok(v) = s.vlmeta("count") {
            let c = u64::from_le_bytes(v.try_into().unwrap());
            assert!(c < n && c % 7 == 3);
        }
        // And it takes more appends.
        drop(s);
        let mut s = SChunk::open(&path, OpenMode::Append).unwrap();
        s.append_buffer(&piece(n)).unwrap();
        s.close().unwrap();
        let s = SChunk::open(&path, OpenMode::Read).unwrap();
        assert_eq!(s.decompress_chunk_vec(n as usize).unwrap(), piece(n));
    }
}
