//! `strata compress` and `strata decompress`: whole files to and from Blosc2 frames, chunk
//! by chunk, the chunks of each batch compressed in parallel on the runtime.

use crate::array_cmd;
use crate::human;
use crate::input::open_input;
use crate::options::{parse_bytes, CompressOptions};
use crate::output::{self, Staged};
use crate::progress::bytes_bar;
use crate::usage_error;
use anyhow::{Context, Result};
use clap::Args;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;
use std::time::Instant;
use strata::format::b2nd::{LEGACY_METALAYER, METALAYER};
use strata::format::chunk::MAX_BUFFERSIZE;
use strata::frame::{OpenMode, SyncPolicy};
use strata::scheduler::sizing::recommended_chunk_bytes;
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
    chunk_bytes: Option<usize>,
    /// Threads compressing chunks; 0 = one per core.
    #[arg(long, default_value_t = 0)]
    nthreads: usize,
    /// Write a sparse frame: a directory holding chunks.b2frame and one file per chunk.
    #[arg(long)]
    sparse: bool,
    /// Replace OUTPUT if it exists.
    #[arg(long, short = 'f')]
    force: bool,
    /// Fsync at every step of every write (survives a power loss at any point; slower).
    /// Without it, the frame is fsynced once when complete.
    #[arg(long)]
    sync: bool,
    /// Raw bytes, or a C-order .npy file (its dtype gives the typesize).
    input: PathBuf,
    /// The frame to write (.b2frame), or the directory with --sparse.
    output: PathBuf,
}

/// Arguments of `strata decompress`.
#[derive(Debug, Args)]
pub struct DecompressArgs {
    /// Threads decompressing the blocks of a chunk; 0 = one per core.
    #[arg(long, default_value_t = 0)]
    nthreads: usize,
    /// Replace OUTPUT if it exists.
    #[arg(long, short = 'f')]
    force: bool,
    /// A frame file (.b2frame) or sparse frame directory.
    input: PathBuf,
    /// Where to write the raw bytes; for a b2nd array, its items in C order, as a .npy file
    /// when the name ends in .npy.
    output: PathBuf,
}

/// Runs `strata compress`.
///
/// # Errors
/// Unreadable input, unwritable output, a compression failure; the message names the file.
pub fn compress(args: &CompressArgs) -> Result<()> {
    output::check(&args.output, &args.input, args.force)?;
    let mut input = open_input(&args.input)?;
    let cparams = args
        .options
        .cparams(input.npy.as_ref().map(|n| n.typesize), args.nthreads)
        .unwrap_or_else(|e| usage_error(e));
    let runtime = Runtime::global();
    let typesize = cparams.typesize;
    let wanted = args
        .chunk_bytes
        .unwrap_or_else(|| recommended_chunk_bytes(runtime.topology()));
    if wanted < typesize {
        usage_error(format!(
            "--chunk-bytes {wanted} is smaller than the typesize {typesize}"
        ));
    }
    let chunksize = wanted / typesize * typesize;
    if chunksize > MAX_BUFFERSIZE {
        usage_error(format!(
            "--chunk-bytes {wanted} is more than a chunk may hold ({MAX_BUFFERSIZE} bytes)"
        ));
    }
    let staged = Staged::new(&args.output)?;
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
    let out = args.output.display();
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
        crate::info_cmd::stored_bytes(&schunk),
        schunk.nchunks(),
    );
    schunk
        .close()
        .with_context(|| format!("cannot finish {out}"))?;
    staged.commit()?;
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "{}: {} -> {} (cratio {:.2}) in {nchunks} chunks, {} ({})",
        out,
        human::bytes(nbytes),
        human::bytes(cbytes),
        nbytes as f64 / cbytes.max(1) as f64,
        human::duration(seconds),
        human::speed(nbytes, seconds),
    );
    Ok(())
}

/// Runs `strata decompress`.
///
/// # Errors
/// An unreadable or corrupt frame, an unwritable output; the message names the file.
pub fn decompress(args: &DecompressArgs) -> Result<()> {
    output::check(&args.output, &args.input, args.force)?;
    let name = args.input.display();
    let mut schunk =
        SChunk::open(&args.input, OpenMode::Read).with_context(|| format!("cannot open {name}"))?;
    if [METALAYER, LEGACY_METALAYER]
        .iter()
        .any(|m| schunk.meta(m).is_some())
    {
        drop(schunk);
        return array_cmd::export_whole(&args.input, &args.output, args.nthreads, true);
    }
    schunk.set_nthreads(0, args.nthreads);
    let staged = Staged::new(&args.output)?;
    let file = File::create(staged.path())
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    let mut writer = BufWriter::new(file);
    let bar = bytes_bar("decompressing", schunk.nbytes());
    let start = Instant::now();
    let total = schunk.nbytes();
    let chunksize = schunk.chunksize().unwrap_or(0) as u64;
    let mut buf = Vec::new();
    for nchunk in 0..schunk.nchunks() {
        // Every chunk but the last holds chunksize bytes.
        let nbytes = chunksize.min(total - nchunk as u64 * chunksize) as usize;
        buf.resize(nbytes, 0);
        schunk
            .decompress_chunk(nchunk, &mut buf)
            .with_context(|| format!("{name}: cannot decompress chunk {nchunk}"))?;
        writer
            .write_all(&buf)
            .with_context(|| format!("cannot write {}", args.output.display()))?;
        bar.inc(nbytes as u64);
    }
    writer
        .flush()
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    drop(writer);
    staged.commit()?;
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "{}: {} in {} ({})",
        args.output.display(),
        human::bytes(schunk.nbytes()),
        human::duration(seconds),
        human::speed(schunk.nbytes(), seconds)
    );
    Ok(())
}
