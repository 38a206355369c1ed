//! `strata`: compress, decompress, inspect and benchmark Blosc2 chunks from the command line.
//!
//! A thin layer on the `strata` library: argument parsing, file I/O and printing; every byte
//! of a chunk is made and read by the library. Each subcommand lives in [`commands`] and
//! builds a report (what it measured or read) that [`report`] prints as text or JSON; the file
//! formats it reads and writes besides Blosc2's (`.npy`, netCDF-3, HDF5, raw bytes) are in
//! `formats`. What a path may be is decided in one place each way: `input` (regular files
//! and sparse frame directories; devices, FIFOs and sockets only with `--special-files`, read
//! no further than their Blosc2 headers allow) and `output` (links followed, streams into
//! devices and FIFOs, only regular files ever replaced). The binary is [`main`]; the library
//! side lets tests and fuzz targets run what a command runs (for instance
//! [`commands::info::report_bytes`]) without starting a process.
//!
//! Exit status: 0 on success, 1 on a runtime error (the message names the file and what is
//! wrong), 2 on a usage error.

pub mod commands;
mod formats;
mod human;
mod input;
mod options;
mod output;
mod progress;
pub mod report;
mod source;

use clap::{Parser, Subcommand};
use commands::{bench, chunk, compress, decompress, export, import, info, plugins, slice, system};
use std::process::ExitCode;

/// Compress, inspect and benchmark Blosc2 data; every chunk written opens in C-Blosc2 and
/// python-blosc2, and theirs open here.
#[derive(Debug, Parser)]
#[command(name = "strata", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Also read inputs that are devices, FIFOs or sockets, as streams: a Blosc2 chunk or
    /// frame, never more bytes than its header announces (info, decompress, export, slice,
    /// chunk decompress/info/getitem). Without it, inputs are regular files and sparse frame
    /// directories only (symbolic links followed).
    #[arg(long, global = true)]
    special_files: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compress a raw or .npy file into a Blosc2 frame (.b2frame, or a sparse directory).
    Compress(compress::CompressArgs),
    /// Decompress a Blosc2 frame (file or sparse directory) to raw bytes; a b2nd array to its
    /// items in C order (.npy or raw).
    Decompress(decompress::DecompressArgs),
    /// Describe a Blosc2 chunk, frame or b2nd array (sizes, ratio, codec, filters, special
    /// chunks, metalayers and vlmetalayers decoded), or the datasets of an HDF5 file.
    Info(info::InfoArgs),
    /// Import a netCDF-3 file (every numeric variable), an HDF5 file (every dataset, or
    /// FILE.h5:/path), a .npy file, or raw bytes (with --shape and --dtype) as b2nd arrays
    /// (.b2nd), with partitions derived from the caches.
    Import(import::ImportArgs),
    /// Write a b2nd array or an HDF5 dataset, or a slice of it, to a .npy file (shape and dtype
    /// kept), an HDF5 dataset (OUT.h5:/path, Blosc2 filter 32026) or raw bytes.
    Export(export::ExportArgs),
    /// Read a slice of a b2nd array or an HDF5 dataset (NumPy's start:stop:step per dimension),
    /// decompressing only the blocks it touches; print it, or write it with -o.
    Slice(slice::SliceCmdArgs),
    /// One Blosc2 chunk: compress, decompress, info, getitem.
    #[command(subcommand)]
    Chunk(chunk::ChunkCommand),
    /// Measure cratio and speed of a sweep of parameters over a file held in memory.
    Bench(bench::BenchArgs),
    /// Codecs and filters: ID, name, and whether built in or the plugin library it came from.
    ///
    /// Loads every plugin library in the search path first: the directories of
    /// STRATA_PLUGIN_PATH, ~/.local/lib/strata/plugins and <prefix>/lib/strata/plugins.
    Plugins(plugins::PluginsArgs),
    /// Cores, worker threads, pinning, cache sizes, recommended chunk and block sizes, SIMD.
    ///
    /// Set STRATA_NTHREADS (or BLOSC_NTHREADS), STRATA_PIN=0 and STRATA_L1D / STRATA_L2 /
    /// STRATA_L3 (bytes, K/M suffixes allowed) to change what it reports and uses.
    System,
}

/// The `strata` program: parses the command line (a usage error exits with 2), runs the
/// subcommand, and prints a runtime error as `strata: error: …` with exit status 1.
#[must_use]
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    input::allow_special_files(cli.special_files);
    let result = match cli.command {
        Command::Compress(args) => compress::run(&args),
        Command::Decompress(args) => decompress::run(&args),
        Command::Info(args) => info::run(&args),
        Command::Import(args) => import::run(&args),
        Command::Export(args) => export::run(&args),
        Command::Slice(args) => slice::run(&args),
        Command::Chunk(cmd) => chunk::run(cmd),
        Command::Bench(args) => bench::run(&args),
        Command::Plugins(args) => plugins::run(&args),
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

#[cfg(test)]
mod tests {
    use super::error_message;
    use anyhow::{anyhow, Context};

    #[test]
    fn a_name_said_once() {
        let e: anyhow::Result<()> = Err(anyhow!("f.b2frame: truncated"));
        let e = e.context("cannot open f.b2frame").unwrap_err();
        assert_eq!(error_message(&e), "cannot open f.b2frame: truncated");
        let e: anyhow::Result<()> = Err(anyhow!("g.b2: bad"));
        let e = e.context("f.b2frame: chunk 3").unwrap_err();
        assert_eq!(error_message(&e), "f.b2frame: chunk 3: g.b2: bad");
    }

    #[test]
    fn every_subcommand_parses_its_arguments() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
