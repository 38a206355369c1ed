//! Append throughput to a frame file under each sync policy, and the frame protocol's own
//! cost (chunks compressed beforehand): `cargo run --release --example frame_bench -- [nchunks]
//! [chunk KiB] [dir]`. benches/frames_vs_cblosc2.py runs it beside python-blosc2's appends.

use std::time::Instant;
use strata::chunk::{compress_vec, CParams};
use strata::frame::SyncPolicy;
use strata::schunk::{Location, SChunk, SChunkOptions};
use strata::CodecId;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let nchunks: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(200);
    let kib: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1024);
    let dir = args.get(3).map_or_else(std::env::temp_dir, Into::into);
    let cparams = CParams {
        typesize: 4,
        codec: CodecId::LZ4,
        nthreads: 1,
        ..CParams::default()
    };
    let n = kib * 1024;
    let data: Vec<u8> = (0..n as u32 / 4)
        .flat_map(|i| ((i / 3) ^ (i % 7)).to_le_bytes())
        .collect();
    let chunk = compress_vec(&cparams, &data).unwrap();
    println!(
        "{nchunks} appends of {kib} KiB (lz4, {} bytes compressed) to {}",
        chunk.len(),
        dir.display()
    );
    for (name, sync) in [
        ("none", SyncPolicy::None),
        ("on-close", SyncPolicy::OnClose),
        ("every-write", SyncPolicy::EveryWrite),
    ] {
        for precompressed in [false, true] {
            let path = dir.join(format!("bench-{name}.b2frame"));
            let o = SChunkOptions {
                cparams: cparams.clone(),
                sync,
                overwrite: true,
                ..SChunkOptions::default()
            };
            let t = Instant::now();
            let mut s = SChunk::create(&Location::File(path.clone()), &o).unwrap();
            for _ in 0..nchunks {
                if precompressed {
                    s.append_chunk(&chunk).unwrap();
                } else {
                    s.append_buffer(&data).unwrap();
                }
            }
            s.close().unwrap();
            let secs = t.elapsed().as_secs_f64();
            println!(
                "sync {name:<11} {:<13} {:>8.1} appends/s {:>8.1} MB/s",
                if precompressed {
                    "append_chunk"
                } else {
                    "append_buffer"
                },
                nchunks as f64 / secs,
                (nchunks * n) as f64 / secs / 1e6
            );
            std::fs::remove_file(&path).unwrap();
        }
    }
}
