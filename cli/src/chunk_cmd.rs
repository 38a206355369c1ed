//! `strata chunk ...`: one Blosc2 chunk per file.

use crate::input::read_input;
use crate::options::{CompressOptions, NdArgs, Threads};
use crate::usage_error;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde_json::json;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use strata::chunk::{compress_vec, decompress_vec_ctx, Context as ChunkContext, DParams, Decoder};
use strata::format::chunk::{
    ChunkHeader, B2FLAG_BIGENDIAN, B2FLAG_INSTR_CODEC, B2FLAG_LAZY, B2FLAG_USEDICT,
    EXTENDED_HEADER_LENGTH, FLAG_BITSHUFFLE, FLAG_DELTA, FLAG_DONT_SPLIT, FLAG_MEMCPYED,
    FLAG_SHUFFLE, MAX_BUFFERSIZE,
};
use strata::registry::Registry;

/// The `chunk` subcommands.
#[derive(Debug, Subcommand)]
pub enum ChunkCommand {
    /// Compress a raw or .npy file into one Blosc2 chunk.
    Compress(CompressArgs),
    /// Decompress one chunk (any version C-Blosc2 reads, Blosc1 included) to raw bytes.
    Decompress {
        #[command(flatten)]
        threads: Threads,
        #[command(flatten)]
        nd: NdArgs,
        /// The chunk file.
        input: PathBuf,
        /// Where to write the raw bytes.
        output: PathBuf,
    },
    /// Print what a chunk's header says.
    Info {
        /// The chunk file.
        input: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Decompress items [start, start + nitems) of a chunk, reading only the blocks that hold them.
    Getitem {
        #[command(flatten)]
        threads: Threads,
        #[command(flatten)]
        nd: NdArgs,
        /// The chunk file.
        input: PathBuf,
        /// First item (items are typesize bytes, as the header stores it).
        #[arg(long)]
        start: usize,
        /// Number of items.
        #[arg(long)]
        nitems: usize,
        /// Where to write the items' bytes.
        output: PathBuf,
    },
}

/// Arguments of `strata chunk compress`.
#[derive(Debug, Args)]
pub struct CompressArgs {
    #[command(flatten)]
    options: CompressOptions,
    #[command(flatten)]
    nd: NdArgs,
    #[command(flatten)]
    threads: Threads,
    /// Raw bytes, or a C-order .npy file.
    input: PathBuf,
    /// Where to write the chunk.
    output: PathBuf,
}

/// Runs one `chunk` subcommand.
///
/// # Errors
/// Unreadable or invalid input, unwritable output; the message names the file.
pub fn run(cmd: ChunkCommand) -> Result<()> {
    match cmd {
        ChunkCommand::Compress(args) => compress(&args),
        ChunkCommand::Decompress {
            threads,
            nd,
            input,
            output,
        } => {
            let chunk = read(&input)?;
            let dparams = DParams {
                nthreads: threads.nthreads,
                nd: nd.meta()?,
            };
            let data = decompress_vec_ctx(&ChunkContext::global(), &dparams, &chunk)
                .with_context(|| format!("cannot decompress {}", input.display()))?;
            write(&output, &data)
        }
        ChunkCommand::Info { input, json } => info(&input, json),
        ChunkCommand::Getitem {
            threads,
            nd,
            input,
            start,
            nitems,
            output,
        } => {
            let chunk = read(&input)?;
            let context = || format!("cannot get items from {}", input.display());
            let ctx = ChunkContext::global();
            let decoder = Decoder::new(ctx.registry, &chunk)
                .with_context(context)?
                .with_nd(nd.meta()?);
            // A range beyond the chunk gets no buffer: the library reports it as an index error.
            let h = &decoder.header;
            let len = nitems
                .checked_mul(h.typesize)
                .filter(|&n| n <= h.nbytes)
                .unwrap_or(0);
            let mut items = vec![0u8; len];
            decoder
                .getitem_on(&ctx.runtime, threads.nthreads, start, nitems, &mut items)
                .with_context(context)?;
            write(&output, &items)
        }
    }
}

fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

fn compress(args: &CompressArgs) -> Result<()> {
    let input = read_input(&args.input, MAX_BUFFERSIZE as u64)?;
    let mut cparams = args
        .options
        .cparams(input.typesize, args.threads.nthreads)
        .unwrap_or_else(|e| usage_error(e));
    cparams.nd = args.nd.meta()?;
    let chunk = compress_vec(&cparams, &input.data)
        .with_context(|| format!("cannot compress {}", args.input.display()))?;
    write(&args.output, &chunk)
}

/// Names of the set bits of the header's `flags` byte.
fn flag_names(h: &ChunkHeader) -> Vec<String> {
    let mut names = Vec::new();
    if h.header_len == EXTENDED_HEADER_LENGTH {
        names.push("extended_header".to_owned());
    } else {
        for (bit, name) in [(FLAG_SHUFFLE, "shuffle"), (FLAG_BITSHUFFLE, "bitshuffle")] {
            if h.flags & bit != 0 {
                names.push(name.to_owned());
            }
        }
    }
    for (bit, name) in [
        (FLAG_MEMCPYED, "memcpyed"),
        (FLAG_DELTA, "delta"),
        (FLAG_DONT_SPLIT, "dont_split"),
    ] {
        if h.flags & bit != 0 {
            names.push(name.to_owned());
        }
    }
    names.push(format!("codec_format={}", h.flags >> 5));
    names
}

/// `text` after a space, or nothing when it is empty (no trailing blanks in `info`).
fn with_space(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(" {text}")
    }
}

/// Names of the set bits of the header's `blosc2_flags` byte.
fn blosc2_flag_names(h: &ChunkHeader) -> Vec<String> {
    let bits = [
        (B2FLAG_USEDICT, "use_dict"),
        (B2FLAG_BIGENDIAN, "big_endian"),
        (B2FLAG_LAZY, "lazy"),
        (B2FLAG_INSTR_CODEC, "instr_codec"),
    ];
    let mut names: Vec<String> = bits
        .iter()
        .filter(|(bit, _)| h.blosc2_flags & bit != 0)
        .map(|(_, name)| (*name).to_owned())
        .collect();
    if (h.blosc2_flags >> 4) & 0x07 != 0 {
        names.push(format!("special={}", h.special.name()));
    }
    names
}

pub fn info(path: &Path, as_json: bool) -> Result<()> {
    let chunk = read(path)?;
    let h = ChunkHeader::parse(&chunk)
        .with_context(|| format!("{}: not a Blosc2 chunk", path.display()))?;
    let registry = Registry::global();
    let filters: Vec<(usize, u8, String, u8)> = h
        .filters
        .iter()
        .zip(&h.filters_meta)
        .enumerate()
        .filter(|(_, (&id, _))| id != 0)
        .map(|(slot, (&id, &meta))| {
            let name = registry
                .filter(id)
                .map_or_else(|_| format!("id{id}"), |f| f.name().to_owned());
            (slot, id, name, meta)
        })
        .collect();
    let split = !h.dont_split();
    // Plugin codecs by their registered name (loading the plugin if it is in the search path).
    let codec_name = registry
        .codec(h.compcode)
        .map_or_else(|_| h.codec_name(), |c| c.name().to_owned());
    let mut out = std::io::stdout().lock();
    if as_json {
        let filters: Vec<_> = filters
            .iter()
            .map(|(slot, id, name, meta)| json!({"slot": slot, "id": id, "name": name, "meta": meta}))
            .collect();
        let obj = json!({
            "version": h.version,
            "versionlz": h.versionlz,
            "flags": h.flags,
            "flag_names": flag_names(&h),
            "header_len": h.header_len,
            "typesize": h.typesize,
            "nbytes": h.nbytes,
            "cbytes": h.cbytes,
            "blocksize": h.blocksize,
            "nblocks": h.nblocks(),
            "codec": codec_name,
            "codec_id": h.compcode,
            "codec_meta": h.compcode_meta,
            "filters": filters,
            "blosc2_flags": h.blosc2_flags,
            "blosc2_flag_names": blosc2_flag_names(&h),
            "special": h.special.name(),
            "split": split,
        });
        writeln!(out, "{obj}")?;
        return Ok(());
    }
    let filters = if filters.is_empty() {
        "none".to_owned()
    } else {
        let parts: Vec<String> = filters
            .iter()
            .map(|(slot, id, name, meta)| format!("slot {slot}: {name} (id {id}, meta {meta})"))
            .collect();
        parts.join(", ")
    };
    // parse() guarantees cbytes >= the header length.
    let cratio = h.nbytes as f64 / h.cbytes as f64;
    writeln!(
        out,
        "version:      {} (codec format version {}, {}-byte header)",
        h.version, h.versionlz, h.header_len
    )?;
    writeln!(
        out,
        "flags:        {:#04x}{}",
        h.flags,
        with_space(&flag_names(&h).join(" "))
    )?;
    writeln!(
        out,
        "blosc2_flags: {:#04x}{}",
        h.blosc2_flags,
        with_space(&blosc2_flag_names(&h).join(" "))
    )?;
    writeln!(out, "typesize:     {}", h.typesize)?;
    writeln!(out, "nbytes:       {}", h.nbytes)?;
    writeln!(out, "cbytes:       {} (cratio {cratio:.3})", h.cbytes)?;
    writeln!(out, "blocksize:    {}", h.blocksize)?;
    writeln!(out, "nblocks:      {}", h.nblocks())?;
    writeln!(
        out,
        "codec:        {} (id {}, meta {})",
        codec_name, h.compcode, h.compcode_meta
    )?;
    writeln!(out, "filters:      {filters}")?;
    writeln!(out, "special:      {}", h.special.name())?;
    writeln!(out, "split:        {}", if split { "yes" } else { "no" })?;
    Ok(())
}
