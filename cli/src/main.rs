//! `strata`: compress, decompress, inspect and benchmark Blosc2 chunks from the command line.
//!
//! A thin layer on the `strata` library: argument parsing, file I/O and printing; every byte
//! of a chunk is made and read by the library.
//!
//! Exit status: 0 on success, 1 on a runtime error (the message names the file and what is
//! wrong), 2 on a usage error.

mod array_cmd;
mod bench;
mod bench_array;
mod chunk_cmd;
mod frame_cmd;
mod human;
mod info_cmd;
mod input;
mod netcdf;
mod npy;
mod options;
mod output;
mod plugins_cmd;
mod progress;
mod system;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Compress, inspect and benchmark Blosc2 data; every chunk written opens in C-Blosc2 and
/// python-blosc2, and theirs open here.
#[derive(Debug, Parser)]
#[command(name = "strata", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compress a raw or .npy file into a Blosc2 frame (.b2frame, or a sparse directory).
    Compress(frame_cmd::CompressArgs),
    /// Decompress a Blosc2 frame (file or sparse directory) to raw bytes; a b2nd array to its
    /// items in C order (.npy or raw).
    Decompress(frame_cmd::DecompressArgs),
    /// Describe a Blosc2 chunk, frame or b2nd array: sizes, ratio, codec, filters, special
    /// chunks, metalayers and vlmetalayers (decoded).
    Info {
        /// A chunk file, a frame file (.b2frame, .b2nd) or a sparse frame directory.
        input: std::path::PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Import a netCDF-3 file (every numeric variable), a .npy file, or raw bytes (with
    /// --shape and --dtype) as b2nd arrays (.b2nd), with partitions derived from the caches.
    Import(array_cmd::ImportArgs),
    /// Write a b2nd array, or a slice of it, to a .npy file (shape and dtype kept) or raw bytes.
    Export(array_cmd::ExportArgs),
    /// Read a slice of a b2nd array (NumPy's start:stop:step per dimension), decompressing only
    /// the blocks it touches; print it, or write it with -o.
    Slice(array_cmd::SliceCmdArgs),
    /// One Blosc2 chunk: compress, decompress, info, getitem.
    #[command(subcommand)]
    Chunk(chunk_cmd::ChunkCommand),
    /// Measure cratio and speed of a sweep of parameters over a file held in memory.
    Bench(bench::BenchArgs),
    /// Codecs and filters: ID, name, and whether built in or the plugin library it came from.
    ///
    /// Loads every plugin library in the search path first: the directories of
    /// STRATA_PLUGIN_PATH, ~/.local/lib/strata/plugins and <prefix>/lib/strata/plugins.
    Plugins(plugins_cmd::PluginsArgs),
    /// Cores, worker threads, pinning, cache sizes, recommended chunk and block sizes, SIMD.
    ///
    /// Set STRATA_NTHREADS (or BLOSC_NTHREADS), STRATA_PIN=0 and STRATA_L1D / STRATA_L2 /
    /// STRATA_L3 (bytes, K/M suffixes allowed) to change what it reports and uses.
    System,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Compress(args) => frame_cmd::compress(&args),
        Command::Decompress(args) => frame_cmd::decompress(&args),
        Command::Info { input, json } => info_cmd::run(&input, json),
        Command::Import(args) => array_cmd::import(&args),
        Command::Export(args) => array_cmd::export(&args),
        Command::Slice(args) => array_cmd::slice(&args),
        Command::Chunk(cmd) => chunk_cmd::run(cmd),
        Command::Bench(args) => bench::run(&args),
        Command::Plugins(args) => plugins_cmd::run(&args),
        Command::System => system::run(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("strata: error: {}", error_message(&e));
            ExitCode::from(1)
        }
    }
}

/// The error and its causes, outermost first, joined by ": ". The library names the file in
/// its own errors and the commands name it in their context, so a cause that begins with a
/// name already said ("f.b2frame: …") does not say it again.
fn error_message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let msg = cause.to_string();
        let msg = match msg.split_once(": ") {
            Some((name, rest))
                if out.contains(&format!("{name}: "))
                    || (!out.is_empty() && out.ends_with(name)) =>
            {
                rest.to_string()
            }
            _ => msg,
        };
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&msg);
    }
    out
}

/// Ends the program with a usage error (exit status 2), as clap does for bad arguments, for
/// the argument checks clap cannot express.
fn usage_error(msg: impl std::fmt::Display) -> ! {
    use clap::CommandFactory;
    Cli::command()
        .error(clap::error::ErrorKind::ValueValidation, msg)
        .exit()
}
