//! `strata compress`: a whole file into a Blosc2 frame, chunk by chunk, the chunks of each
//! batch compressed in parallel on the runtime.

use super::info::stored_bytes;
use crate::formats::raw::open_input;
use crate::human;
use crate::options::{parse_bytes, CompressOptions};
use crate::output::{self, Form, Staged};
use crate::progress::bytes_bar;
use crate::report::{self, Report};
use crate::usage_error;
use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Instant;
use strata::format::chunk::MAX_BUFFERSIZE;
use strata::frame::SyncPolicy;
use strata::scheduler::sizing::recommended_chunksize;
use strata::scheduler::Runtime;
use strata::schunk::{Location, SChunk, SChunkOptions};

/// Arguments of `strata compress`.
#[derive(Debug, Args)]
pub struct CompressArgs {
    #[command(flatten)]
    options: CompressOptions,
    /// Bytes per chunk (K/M/G suffixes), rounded down to a multiple of the typesize
    /// [default: from the L3 cache size, see `strata system`].
    #[arg(long, value_parser = parse_bytes)]
    chunksize: Option<usize>,
    /// Threads compressing chunks; 0 = one per core.
    #[arg(long, default_value_t = 0)]
    nthreads: usize,
    /// Write a sparse frame: a directory holding chunks.b2frame and one file per chunk.
    #[arg(long)]
    sparse: bool,
    /// Replace OUTPUT if it exists (a regular file, or with --sparse a directory; nothing else
    /// is ever replaced).
    #[arg(long, short = 'f')]
    force: bool,
    /// Fsync at every step of every write (survives a power loss at any point; slower).
    /// Without it, the frame is fsynced once when complete.
    #[arg(long)]
    sync: bool,
    /// Raw bytes, or a C-order .npy file (its dtype gives the typesize).
    input: PathBuf,
    /// The frame to write (.b2frame), or the directory with --sparse; a regular file (a
    /// symbolic link is followed to its target), never a device or FIFO: frames are written
    /// in place.
    output: PathBuf,
}

/// What `strata compress` wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompressReport {
    /// The frame written.
    pub path: String,
    /// Bytes compressed.
    pub nbytes: u64,
    /// Bytes the frame takes on disk.
    pub cbytes: u64,
    /// `nbytes` over `cbytes`.
    pub cratio: f64,
    /// Chunks written.
    pub nchunks: usize,
    /// Time taken, reading and writing included.
    pub seconds: f64,
}

impl Report for CompressReport {
    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "{}: {} -> {} (cratio {:.2}) in {} chunks, {} ({})",
            self.path,
            human::bytes(self.nbytes),
            human::bytes(self.cbytes),
            self.cratio,
            self.nchunks,
            human::duration(self.seconds),
            human::speed(self.nbytes, self.seconds),
        )
    }
}

/// Runs `strata compress`.
///
/// # Errors
/// Unreadable input, unwritable output, a compression failure; the message names the file.
pub fn run(args: &CompressArgs) -> Result<()> {
    report::summary(&compress(args)?);
    Ok(())
}

fn compress(args: &CompressArgs) -> Result<CompressReport> {
    let form = if args.sparse { Form::Dir } else { Form::Frame };
    let out = output::check(&args.output, &args.input, args.force, form)?;
    let mut input = open_input(&args.input)?;
    let cparams = args
        .options
        .cparams(input.npy.as_ref().map(|n| n.typesize), args.nthreads)
        .unwrap_or_else(|e| usage_error(e));
    let runtime = Runtime::global();
    let typesize = cparams.typesize;
    let wanted = args
        .chunksize
        .unwrap_or_else(|| recommended_chunksize(runtime.topology()));
    if wanted < typesize {
        usage_error(format!(
            "--chunksize {wanted} is smaller than the typesize {typesize}"
        ));
    }
    let chunksize = wanted / typesize * typesize;
    if chunksize > MAX_BUFFERSIZE {
        usage_error(format!(
            "--chunksize {wanted} is more than a chunk may hold ({MAX_BUFFERSIZE} bytes)"
        ));
    }
    let staged = Staged::new(&out)?;
    let location = if args.sparse {
        Location::Dir(staged.path().to_owned())
    } else {
        Location::File(staged.path().to_owned())
    };
    let opts = SChunkOptions {
        cparams,
        chunksize,
        sync: if args.sync {
            SyncPolicy::EveryWrite
        } else {
            SyncPolicy::OnClose
        },
        overwrite: true,
        ..SChunkOptions::default()
    };
    let out = args.output.display().to_string();
    let mut schunk =
        SChunk::create(&location, &opts).with_context(|| format!("cannot create {out}"))?;
    // Enough chunks per batch to keep every thread busy, few enough to bound memory.
    let threads = if args.nthreads == 0 {
        runtime.nthreads()
    } else {
        args.nthreads
    };
    let batch = chunksize.saturating_mul(2 * threads.max(1));
    let bar = bytes_bar("compressing", input.nbytes);
    let start = Instant::now();
    let mut buf = vec![0u8; batch.min(usize::try_from(input.nbytes).unwrap_or(usize::MAX))];
    let mut left = input.nbytes;
    while left > 0 {
        let n = usize::try_from(left.min(batch as u64)).unwrap_or(batch);
        input
            .reader
            .read_exact(&mut buf[..n])
            .with_context(|| format!("cannot read {}", args.input.display()))?;
        schunk
            .append_data(&buf[..n])
            .with_context(|| format!("cannot append to {out}"))?;
        left -= n as u64;
        bar.inc(n as u64);
    }
    let (nbytes, cbytes, nchunks) = (
        schunk.nbytes(),
        stored_bytes(&out, &schunk)?,
        schunk.nchunks(),
    );
    schunk
        .close()
        .with_context(|| format!("cannot finish {out}"))?;
    staged.commit()?;
    bar.finish_and_clear();
    Ok(CompressReport {
        path: out,
        nbytes,
        cbytes,
        cratio: nbytes as f64 / cbytes.max(1) as f64,
        nchunks,
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::{compress, CompressReport};
    use crate::commands::parse_args;
    use crate::report::Report;

    #[test]
    fn a_file_becomes_a_frame_of_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let (input, frame) = (dir.path().join("in.raw"), dir.path().join("f.b2frame"));
        let data: Vec<u8> = (0..25_000u32).flat_map(|i| (i / 9).to_le_bytes()).collect();
        std::fs::write(&input, &data).unwrap();
        let args = parse_args(&[
            "compress".as_ref(),
            "--typesize".as_ref(),
            "4".as_ref(),
            "--chunksize".as_ref(),
            "32K".as_ref(),
            input.as_os_str(),
            frame.as_os_str(),
        ]);
        let r = compress(&args).unwrap();
        assert_eq!(r.path, frame.display().to_string());
        assert_eq!((r.nbytes, r.nchunks), (100_000, 4));
        assert_eq!(r.cbytes, std::fs::metadata(&frame).unwrap().len());
        assert_eq!(r.cratio, 100_000.0 / r.cbytes as f64);
        // An existing output is kept.
        let e = format!("{:#}", compress(&args).unwrap_err());
        assert!(e.contains("exists; pass --force"), "{e}");
    }

    #[test]
    fn the_summary_line() {
        let r = CompressReport {
            path: "f.b2frame".into(),
            nbytes: 3 << 20,
            cbytes: 1 << 20,
            cratio: 3.0,
            nchunks: 4,
            seconds: 0.5,
        };
        let mut out = Vec::new();
        r.write_text(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "f.b2frame: 3.00 MiB -> 1.00 MiB (cratio 3.00) in 4 chunks, 500.0 ms (0.01 GB/s)\n"
        );
    }
}
