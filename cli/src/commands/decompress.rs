//! `strata decompress`: a Blosc2 frame back to its bytes, chunk by chunk; a b2nd array to its
//! items in C order, as `strata export` writes them.

use super::export;
use crate::human;
use crate::input;
use crate::output::{self, Form, Output, Staged};
use crate::progress::bytes_bar;
use crate::report::{self, Report};
use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use serde::Serialize;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;
use strata::format::b2nd::{LEGACY_METALAYER, METALAYER};
use strata::schunk::SChunk;

/// Arguments of `strata decompress`.
#[derive(Debug, Args)]
pub struct DecompressArgs {
    /// Threads decompressing the blocks of a chunk; 0 = one per core.
    #[arg(long, default_value_t = 0)]
    nthreads: usize,
    /// Replace OUTPUT if it exists (a regular file only: nothing else is ever replaced).
    #[arg(long, short = 'f')]
    force: bool,
    /// A frame file (.b2frame) or sparse frame directory, or its http(s):// URL.
    input: PathBuf,
    /// Where to write the raw bytes; for a b2nd array, its items in C order, as a .npy file
    /// when the name ends in .npy. A symbolic link is followed; a character device or FIFO
    /// (/dev/null, a pipe) takes the bytes as a stream.
    output: PathBuf,
}

/// What `strata decompress` wrote from a frame that is not an array.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecompressReport {
    /// The file written.
    pub path: String,
    /// Bytes written.
    pub nbytes: u64,
    /// Time taken, reading and writing included.
    pub seconds: f64,
}

impl Report for DecompressReport {
    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "{}: {} in {} ({})",
            self.path,
            human::bytes(self.nbytes),
            human::duration(self.seconds),
            human::speed(self.nbytes, self.seconds)
        )
    }
}

/// Runs `strata decompress`.
///
/// # Errors
/// An unreadable or corrupt frame, an unwritable output; the message names the file.
pub fn run(args: &DecompressArgs) -> Result<()> {
    let out = output::check(&args.output, &args.input, args.force, Form::Bytes)?;
    let schunk = input::open_frame(&args.input)?;
    if [METALAYER, LEGACY_METALAYER]
        .iter()
        .any(|m| schunk.meta(m).is_some())
    {
        drop(schunk);
        return export::export_whole(&args.input, &args.output, args.nthreads, true);
    }
    report::summary(&decompress(args, &out, schunk)?);
    Ok(())
}

fn decompress(args: &DecompressArgs, out: &Output, mut schunk: SChunk) -> Result<DecompressReport> {
    let name = args.input.display();
    schunk.set_nthreads(0, args.nthreads);
    let staged = Staged::new(out)?;
    let mut writer = BufWriter::new(staged.file()?);
    let bar = bytes_bar("decompressing", schunk.nbytes());
    let start = Instant::now();
    let total = schunk.nbytes();
    let mut written = 0u64;
    let mut buf = Vec::new();
    for nchunk in 0..schunk.nchunks() {
        // Each chunk by its own size: frames C-Blosc2 writes with chunks of different sizes
        // have no chunksize.
        let nbytes = schunk
            .chunk_info(nchunk)
            .with_context(|| format!("{name}: cannot read chunk {nchunk}"))?
            .nbytes;
        // One buffer for all chunks, zero-filled only when a chunk's size changes it: each
        // decompression writes all of its bytes.
        if buf.len() != nbytes {
            buf.clear();
            buf.try_reserve_exact(nbytes)
                .map_err(|_| anyhow!("{name}: chunk {nchunk}: cannot allocate {nbytes} bytes"))?;
            buf.resize(nbytes, 0);
        }
        schunk
            .decompress_chunk(nchunk, &mut buf)
            .with_context(|| format!("{name}: cannot decompress chunk {nchunk}"))?;
        writer
            .write_all(&buf)
            .with_context(|| format!("cannot write {}", args.output.display()))?;
        written += nbytes as u64;
        bar.inc(nbytes as u64);
    }
    if written != total {
        bail!("{name}: the chunks hold {written} bytes, the frame's header says {total}");
    }
    writer
        .flush()
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    drop(writer);
    staged.commit()?;
    bar.finish_and_clear();
    Ok(DecompressReport {
        path: args.output.display().to_string(),
        nbytes: schunk.nbytes(),
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::{decompress, DecompressReport};
    use crate::commands::parse_args;
    use crate::output;
    use crate::report::Report;
    use strata::chunk::CParams;
    use strata::schunk::{Location, SChunk, SChunkOptions};

    #[test]
    fn a_frame_becomes_its_bytes_again() {
        let dir = tempfile::tempdir().unwrap();
        let (frame, back) = (dir.path().join("f.b2frame"), dir.path().join("back.raw"));
        // 3 whole chunks and a short one.
        let data: Vec<u8> = (0..30_001u32).flat_map(|i| (i / 5).to_le_bytes()).collect();
        let opts = SChunkOptions {
            cparams: CParams {
                typesize: 4,
                ..CParams::default()
            },
            chunksize: 40_000,
            ..SChunkOptions::default()
        };
        let mut s = SChunk::create(&Location::File(frame.clone()), &opts).unwrap();
        s.append_data(&data).unwrap();
        s.close().unwrap();
        let args = parse_args(&["decompress".as_ref(), frame.as_os_str(), back.as_os_str()]);
        let schunk = SChunk::open(&frame, strata::frame::OpenMode::Read).unwrap();
        let out = output::check(&back, &frame, false, output::Form::Bytes).unwrap();
        let r = decompress(&args, &out, schunk).unwrap();
        assert_eq!(std::fs::read(&back).unwrap(), data);
        assert_eq!((r.path, r.nbytes), (back.display().to_string(), 120_004));
    }

    #[test]
    fn chunks_of_different_sizes_each_give_their_bytes() {
        // C-Blosc2 writes a frame without a chunksize when its chunks differ in size.
        let frame = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/data/peers/variable.b2frame");
        let dir = tempfile::tempdir().unwrap();
        let back = dir.path().join("back.raw");
        let schunk = SChunk::open(&frame, strata::frame::OpenMode::Read).unwrap();
        assert_eq!((schunk.chunksize(), schunk.nchunks()), (None, 3));
        let args = parse_args(&["decompress".as_ref(), frame.as_os_str(), back.as_os_str()]);
        let out = output::check(&back, &frame, false, output::Form::Bytes).unwrap();
        let r = decompress(&args, &out, schunk).unwrap();
        let pieces = [
            (0..100u8).collect::<Vec<u8>>().repeat(3),
            vec![b'x'; 5000],
            b"yz".repeat(700),
        ];
        assert_eq!(std::fs::read(&back).unwrap(), pieces.concat());
        assert_eq!(r.nbytes, 6700);
    }

    #[test]
    fn the_summary_line() {
        let r = DecompressReport {
            path: "out.raw".into(),
            nbytes: 1536,
            seconds: 2.0,
        };
        let mut out = Vec::new();
        r.write_text(&mut out).unwrap();
        assert_eq!(out, b"out.raw: 1.50 KiB in 2.00 s (0.00 GB/s)\n");
    }
}
