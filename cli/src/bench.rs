//! `strata bench`: cratio and speed of a sweep of parameters over one file, split into chunks
//! held in memory. Each configuration: one warm-up pass (which also checks the round trip),
//! then the median of `--runs` timed passes over all chunks. Speeds are in GB/s (10^9 bytes)
//! of uncompressed data.

use crate::human;
use crate::input::read_input;
use crate::options::{filter_slots, parse_codec, parse_filter, CodecChoice, FilterSpec};
use crate::progress::bytes_bar;
use anyhow::{bail, Context, Result};
use clap::{value_parser, Args};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use strata::chunk::{
    compress, decompress_ctx, max_compressed_len, CParams, Context as ChunkContext, DParams,
};
use strata::format::chunk::{filter_id, MAX_BUFFERSIZE};

/// Arguments of `strata bench`. For a raw or .npy file: every list option takes several
/// values, repeated or comma-separated (`--codec lz4,zstd`); the sweep is their product. For a
/// b2nd array (.b2nd): the whole array and hyperplanes along each axis, timed.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Raw bytes or a C-order .npy file (a sweep), or a .b2nd array (reads timed).
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
    chunk_bytes: u64,
    /// Timed passes per configuration, after one warm-up; the median is reported.
    #[arg(long, default_value_t = 5, value_parser = value_parser!(u64).range(1..))]
    runs: u64,
}

/// What one configuration measured.
struct Measurement {
    nbytes: usize,
    cbytes: usize,
    compress: Duration,
    decompress: Duration,
}

/// Runs the sweep and prints one table row or JSON line per configuration.
///
/// # Errors
/// Unreadable or empty input; a compression or decompression failure; a lossless round trip
/// that does not give the input back.
pub fn run(args: &BenchArgs) -> Result<()> {
    if crate::info_cmd::is_frame(&args.file)? {
        let nthreads = args.nthreads.first().copied().unwrap_or(0);
        return crate::bench_array::run(
            &args.file,
            args.npy.as_deref(),
            usize::try_from(args.runs)?,
            nthreads,
            args.cold,
            args.json,
        );
    }
    if args.npy.is_some() || args.cold {
        crate::usage_error("--npy and --cold go with a .b2nd array");
    }
    let input = read_input(&args.file, u64::MAX)?;
    let name = args.file.display();
    if input.data.is_empty() {
        bail!("{name}: the file holds no data to measure");
    }
    let chunk_bytes = usize::try_from(args.chunk_bytes)?;
    let chunks: Vec<&[u8]> = input.data.chunks(chunk_bytes).collect();
    let codecs = or_default(
        &args.codecs,
        &["blosclz", "lz4", "lz4hc", "zlib", "zstd"],
        parse_codec,
    );
    let filters = or_default(
        &args.filters,
        &["noshuffle", "shuffle", "bitshuffle"],
        parse_filter,
    );
    let clevels = if args.clevels.is_empty() {
        vec![1, 5, 9]
    } else {
        args.clevels.clone()
    };
    let typesizes: Vec<usize> = if args.typesizes.is_empty() {
        vec![input.typesize.unwrap_or(4)]
    } else {
        args.typesizes
            .iter()
            .map(|&t| usize::try_from(t).unwrap_or(usize::MAX))
            .collect()
    };
    let nthreads = if args.nthreads.is_empty() {
        vec![1]
    } else {
        args.nthreads.clone()
    };
    let blocksizes = if args.blocksizes.is_empty() {
        vec![0]
    } else {
        args.blocksizes.clone()
    };
    let runs = usize::try_from(args.runs)?;

    let mut out = std::io::stdout().lock();
    let (clevels, filters, typesizes, nthreads, blocksizes) =
        (&clevels, &filters, &typesizes, &nthreads, &blocksizes);
    let configs = codecs.iter().flat_map(|codec| {
        clevels.iter().flat_map(move |&clevel| {
            filters.iter().flat_map(move |filter| {
                typesizes.iter().flat_map(move |&typesize| {
                    nthreads.iter().flat_map(move |&nthreads| {
                        blocksizes.iter().map(move |&blocksize| {
                            (codec, clevel, filter, typesize, nthreads, blocksize)
                        })
                    })
                })
            })
        })
    });
    let configs: Vec<_> = configs.collect();
    let bar = bytes_bar("benchmarking", configs.len() as u64);
    let mut rows = Vec::with_capacity(configs.len());
    for (codec, clevel, filter, typesize, nthreads, blocksize) in configs {
        let (filters, filters_meta) = filter_slots(std::slice::from_ref(filter), typesize)?;
        let cparams = CParams {
            codec: codec.id,
            clevel,
            typesize,
            filters,
            filters_meta,
            nthreads,
            blocksize,
            ..CParams::default()
        };
        let config = format!(
            "{} clevel {clevel} {} typesize {typesize} nthreads {nthreads} blocksize {blocksize}",
            codec.name, filter.text
        );
        let lossy = filter.id == filter_id::TRUNC_PREC;
        let m =
            measure(&cparams, &chunks, runs, lossy).with_context(|| format!("{name}: {config}"))?;
        let gbps = |t: Duration| m.nbytes as f64 / t.as_secs_f64() / 1e9;
        rows.push(json!({
            "codec": codec.name,
            "clevel": clevel,
            "filter": filter.text,
            "typesize": typesize,
            "nthreads": nthreads,
            "chunk_bytes": chunk_bytes,
            "blocksize": blocksize,
            "nbytes": m.nbytes,
            "cbytes": m.cbytes,
            "cratio": m.nbytes as f64 / m.cbytes as f64,
            "compress_gbps": gbps(m.compress),
            "decompress_gbps": gbps(m.decompress),
        }));
        bar.inc(1);
    }
    bar.finish_and_clear();
    // The winner of each measure: highest cratio, fastest compression, fastest decompression.
    let mut best = vec![Vec::new(); rows.len()];
    for (key, label) in BEST {
        let top = (0..rows.len()).max_by(|&a, &b| {
            rows[a][key]
                .as_f64()
                .partial_cmp(&rows[b][key].as_f64())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        if let Some(i) = top {
            best[i].push(label);
        }
    }
    if args.json {
        for (mut row, best) in rows.into_iter().zip(best) {
            row["best"] = json!(best);
            writeln!(out, "{row}")?;
        }
        return Ok(());
    }
    writeln!(
        out,
        "{:<8} {:>6} {:<14} {:>8} {:>8} {:>10} {:>10} {:>10} {:>8} {:>10} {:>10}  best",
        "codec",
        "clevel",
        "filter",
        "typesize",
        "nthreads",
        "blocksize",
        "nbytes",
        "cbytes",
        "cratio",
        "comp GB/s",
        "decomp GB/s"
    )?;
    for (row, best) in rows.iter().zip(&best) {
        let num = |k: &str| row[k].as_f64().unwrap_or_default();
        let blocksize = match row["blocksize"].as_u64().unwrap_or_default() {
            0 => "auto".to_owned(),
            b => human::bytes(b),
        };
        writeln!(
            out,
            "{:<8} {:>6} {:<14} {:>8} {:>8} {:>10} {:>10} {:>10} {:>8.2} {:>10.3} {:>11.3}{}",
            row["codec"].as_str().unwrap_or_default(),
            num("clevel"),
            row["filter"].as_str().unwrap_or_default(),
            num("typesize"),
            num("nthreads"),
            blocksize,
            human::bytes(num("nbytes") as u64),
            human::bytes(num("cbytes") as u64),
            num("cratio"),
            num("compress_gbps"),
            num("decompress_gbps"),
            best.iter().map(|b| format!("  <- {b}")).collect::<String>(),
        )?;
    }
    for ((key, label), unit) in BEST.iter().zip(["", " GB/s", " GB/s"]) {
        if let Some((row, _)) = rows.iter().zip(&best).find(|(_, b)| b.contains(label)) {
            writeln!(
                out,
                "{label:<22} {} clevel {} {} ({:.2}{unit})",
                row["codec"].as_str().unwrap_or_default(),
                row["clevel"],
                row["filter"].as_str().unwrap_or_default(),
                row[*key].as_f64().unwrap_or_default()
            )?;
        }
    }
    Ok(())
}

/// The measures `bench` names a winner for: (JSON key, label).
const BEST: [(&str, &str); 3] = [
    ("cratio", "best ratio"),
    ("compress_gbps", "fastest compression"),
    ("decompress_gbps", "fastest decompression"),
];

/// The values given, or the defaults parsed with `parse`.
fn or_default<T: Clone>(
    given: &[T],
    defaults: &[&str],
    parse: fn(&str) -> Result<T, String>,
) -> Vec<T> {
    if given.is_empty() {
        defaults.iter().filter_map(|s| parse(s).ok()).collect()
    } else {
        given.to_vec()
    }
}

/// Compresses and decompresses every chunk with `cparams.nthreads` threads: a warm-up pass
/// (checking the round trip unless `lossy`), then `runs` timed passes each way.
fn measure(cparams: &CParams, chunks: &[&[u8]], runs: usize, lossy: bool) -> Result<Measurement> {
    let ctx = ChunkContext::global();
    let dparams = DParams {
        nthreads: cparams.nthreads,
        ..DParams::default()
    };
    let mut compressed: Vec<Vec<u8>> = chunks
        .iter()
        .map(|c| vec![0u8; max_compressed_len(c.len())])
        .collect();
    let mut sizes = vec![0usize; chunks.len()];
    compress_all(cparams, chunks, &mut compressed, &mut sizes)?;
    let mut compress_times = Vec::with_capacity(runs);
    for _ in 0..runs {
        compress_times.push(compress_all(cparams, chunks, &mut compressed, &mut sizes)?);
    }

    let mut scratch = vec![0u8; chunks.iter().map(|c| c.len()).max().unwrap_or(0)];
    for (nchunk, (chunk, (c, &size))) in
        chunks.iter().zip(compressed.iter().zip(&sizes)).enumerate()
    {
        let n = decompress_ctx(&ctx, &dparams, &c[..size], &mut scratch)?;
        if !lossy && scratch[..n] != **chunk {
            bail!("chunk {nchunk} does not decompress to its input");
        }
    }
    let mut decompress_times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        for (c, &size) in compressed.iter().zip(&sizes) {
            decompress_ctx(&ctx, &dparams, &c[..size], &mut scratch)?;
        }
        decompress_times.push(start.elapsed());
    }
    Ok(Measurement {
        nbytes: chunks.iter().map(|c| c.len()).sum(),
        cbytes: sizes.iter().sum(),
        compress: median(compress_times),
        decompress: median(decompress_times),
    })
}

fn compress_all(
    cparams: &CParams,
    chunks: &[&[u8]],
    out: &mut [Vec<u8>],
    sizes: &mut [usize],
) -> Result<Duration> {
    let start = Instant::now();
    for ((chunk, dst), size) in chunks.iter().zip(out.iter_mut()).zip(sizes.iter_mut()) {
        *size = compress(cparams, chunk, dst)?;
    }
    Ok(start.elapsed())
}

/// The median of `times` (the mean of the middle two for an even count); `times` is not empty.
fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    let mid = times.len() / 2;
    if times.len().is_multiple_of(2) {
        (times[mid - 1] + times[mid]) / 2
    } else {
        times[mid]
    }
}

#[cfg(test)]
mod tests {
    use super::median;
    use std::time::Duration;

    #[test]
    fn median_of_odd_and_even_counts() {
        let ms = |v: &[u64]| {
            v.iter()
                .map(|&m| Duration::from_millis(m))
                .collect::<Vec<_>>()
        };
        assert_eq!(median(ms(&[5, 1, 3])), Duration::from_millis(3));
        assert_eq!(
            median(ms(&[4, 1, 3, 2])),
            Duration::from_millis(2) + Duration::from_micros(500)
        );
    }
}
