//! `strata bench`: for a raw or `.npy` file, cratio and speed of a sweep of parameters
//! ([`sweep`]); for a b2nd array, how fast it reads whole and by hyperplanes ([`array`]).

mod array;
mod sweep;

use crate::input::is_frame;
use crate::options::{parse_codec, parse_filter, CodecChoice, FilterSpec};
use crate::source::hdf5_spec;
use crate::usage_error;
use anyhow::Result;
use clap::{value_parser, Args};
use std::path::PathBuf;
use strata::format::chunk::MAX_BUFFERSIZE;

/// Arguments of `strata bench`. For a raw or .npy file: every list option takes several
/// values, repeated or comma-separated (`--codec lz4,zstd`); the sweep is their product. For a
/// b2nd array (.b2nd): the whole array and hyperplanes along each axis, timed.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Raw bytes or a C-order .npy file (a sweep), or a .b2nd array (local, or an http(s)://
    /// URL) or an HDF5 dataset (FILE.h5:/path) (reads timed).
    file: PathBuf,
    /// With a .b2nd array: the same data as a .npy file, whose hyperplanes are read (and
    /// checked) side by side.
    #[arg(long, value_name = "NPY")]
    npy: Option<PathBuf>,
    /// With a .b2nd array: drop the files from the page cache before every read, so reads
    /// come from the disk.
    #[arg(long)]
    cold: bool,
    /// One JSON object per configuration and line (with `best` naming what it wins), instead
    /// of a table.
    #[arg(long)]
    json: bool,
    /// Codecs to sweep [default: blosclz, lz4, lz4hc, zlib, zstd].
    #[arg(long = "codec", value_name = "CODEC", value_parser = parse_codec, value_delimiter = ',')]
    codecs: Vec<CodecChoice>,
    /// Compression levels to sweep [default: 1, 5, 9].
    #[arg(long = "clevel", value_name = "CLEVEL", value_parser = value_parser!(u8).range(0..=9), value_delimiter = ',')]
    clevels: Vec<u8>,
    /// Filters to sweep, one per configuration, in slot 0 [default: noshuffle, shuffle, bitshuffle].
    #[arg(long = "filter", value_name = "FILTER", value_parser = parse_filter, value_delimiter = ',')]
    filters: Vec<FilterSpec>,
    /// Item sizes to sweep [default: the .npy dtype's, else 4].
    #[arg(long = "typesize", value_name = "TYPESIZE", value_parser = value_parser!(u64).range(1..), value_delimiter = ',')]
    typesizes: Vec<u64>,
    /// Threads per chunk to sweep; 0 = the runtime's default [default: 1].
    #[arg(long = "nthreads", value_name = "NTHREADS", value_delimiter = ',')]
    nthreads: Vec<usize>,
    /// Block sizes in bytes to sweep; 0 = C-Blosc2's choice [default: 0].
    #[arg(long = "blocksize", value_name = "BYTES", value_delimiter = ',')]
    blocksizes: Vec<usize>,
    /// Bytes per chunk (the last chunk may be shorter).
    #[arg(long, default_value_t = 4 << 20, value_parser = value_parser!(u64).range(1..=MAX_BUFFERSIZE as u64))]
    chunksize: u64,
    /// Timed passes per configuration, after one warm-up; the median is reported.
    #[arg(long, default_value_t = 5, value_parser = value_parser!(u64).range(1..))]
    runs: u64,
}

/// Runs `strata bench`: the array benchmark for a frame, else the sweep.
///
/// # Errors
/// As [`sweep::run`] and [`array::run`].
pub fn run(args: &BenchArgs) -> Result<()> {
    if hdf5_spec(&args.file).is_some() || is_frame(&args.file)? {
        if args.cold && args.file.to_str().is_some_and(strata::frame::is_url) {
            usage_error("--cold drops local files from the page cache: give a file, not a URL");
        }
        return array::run(args);
    }
    if args.npy.is_some() || args.cold {
        usage_error("--npy and --cold go with a .b2nd array");
    }
    sweep::run(args)
}

#[cfg(test)]
mod tests {
    use super::BenchArgs;
    use crate::commands::parse_args;
    use strata::CodecId;

    #[test]
    fn defaults_and_lists() {
        let args: BenchArgs = parse_args(&["bench".as_ref(), "in.raw".as_ref()]);
        assert_eq!((args.chunksize, args.runs), (4 << 20, 5));
        assert!(args.codecs.is_empty() && args.nthreads.is_empty() && !args.cold);
        let args: BenchArgs = parse_args(&[
            "bench".as_ref(),
            "--codec".as_ref(),
            "lz4,zstd".as_ref(),
            "--clevel".as_ref(),
            "1".as_ref(),
            "--clevel".as_ref(),
            "9".as_ref(),
            "in.raw".as_ref(),
        ]);
        let codecs: Vec<CodecId> = args.codecs.iter().map(|c| c.id).collect();
        assert_eq!(
            (codecs, args.clevels),
            (vec![CodecId::LZ4, CodecId::ZSTD], vec![1, 9])
        );
    }
}
