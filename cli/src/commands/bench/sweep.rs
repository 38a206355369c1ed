//! The sweep of `strata bench` over a raw or `.npy` file, split into chunks held in memory.
//! Each configuration: one warm-up pass (which also checks the round trip), then the median of
//! `--runs` timed passes over all chunks. Speeds are in GB/s (10^9 bytes) of uncompressed data.

use super::BenchArgs;
use crate::formats::raw::read_input;
use crate::human;
use crate::options::{filter_slots, parse_codec, parse_filter};
use crate::progress::bytes_bar;
use crate::report::{self, json_line, Report};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::io::Write;
use std::time::{Duration, Instant};
use strata::chunk::{
    compress, decompress_ctx, max_compressed_len, CParams, Context as ChunkContext, DParams,
};
use strata::FilterId;

/// One configuration of the sweep and what it measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepRow {
    /// Codec name.
    pub codec: String,
    /// Compression level.
    pub clevel: u8,
    /// The filter (in slot 0), as given.
    pub filter: String,
    /// Item size.
    pub typesize: usize,
    /// Threads per chunk.
    pub nthreads: usize,
    /// Bytes per chunk.
    pub chunksize: usize,
    /// Block size; 0 for C-Blosc2's choice.
    pub blocksize: usize,
    /// Bytes compressed.
    pub nbytes: usize,
    /// Bytes of the compressed chunks.
    pub cbytes: usize,
    /// `nbytes` over `cbytes`.
    pub cratio: f64,
    /// Compression speed, GB/s of uncompressed data (median pass).
    pub compress_gbps: f64,
    /// Decompression speed, GB/s of uncompressed data (median pass).
    pub decompress_gbps: f64,
    /// The measures this configuration wins (`best ratio`, `fastest compression`...).
    pub best: Vec<&'static str>,
}

/// One measure of a row.
type Measure = fn(&SweepRow) -> f64;

/// The measures `bench` names a winner for: (label, the measure, its unit).
const BEST: [(&str, Measure, &str); 3] = [
    ("best ratio", |r| r.cratio, ""),
    ("fastest compression", |r| r.compress_gbps, " GB/s"),
    ("fastest decompression", |r| r.decompress_gbps, " GB/s"),
];

/// A measure as JSON holds it: `None` for NaN and infinities.
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// Every configuration of the sweep, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepReport {
    /// The configurations.
    pub rows: Vec<SweepRow>,
}

impl SweepReport {
    /// Marks in each row's `best` the measures it wins (the last of equal rows wins).
    fn mark_best(&mut self) {
        for (label, measure, _) in BEST {
            let rows = &self.rows;
            let top = (0..rows.len()).max_by(|&a, &b| {
                finite(measure(&rows[a]))
                    .partial_cmp(&finite(measure(&rows[b])))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            if let Some(i) = top {
                self.rows[i].best.push(label);
            }
        }
    }
}

impl Report for SweepReport {
    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
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
        let num = |v: f64| finite(v).unwrap_or_default();
        for row in &self.rows {
            let blocksize = match row.blocksize {
                0 => "auto".to_owned(),
                b => human::bytes(b as u64),
            };
            writeln!(
                out,
                "{:<8} {:>6} {:<14} {:>8} {:>8} {:>10} {:>10} {:>10} {:>8.2} {:>10.3} {:>11.3}{}",
                row.codec,
                row.clevel,
                row.filter,
                row.typesize,
                row.nthreads,
                blocksize,
                human::bytes(row.nbytes as u64),
                human::bytes(row.cbytes as u64),
                num(row.cratio),
                num(row.compress_gbps),
                num(row.decompress_gbps),
                row.best
                    .iter()
                    .map(|b| format!("  <- {b}"))
                    .collect::<String>(),
            )?;
        }
        for (label, measure, unit) in BEST {
            if let Some(row) = self.rows.iter().find(|r| r.best.contains(&label)) {
                writeln!(
                    out,
                    "{label:<22} {} clevel {} {} ({:.2}{unit})",
                    row.codec,
                    row.clevel,
                    row.filter,
                    num(measure(row))
                )?;
            }
        }
        Ok(())
    }

    /// One JSON object per configuration and line.
    fn write_json(&self, out: &mut dyn Write) -> Result<()> {
        self.rows.iter().try_for_each(|row| json_line(out, row))
    }
}

/// Runs the sweep and prints one table row or JSON line per configuration.
///
/// # Errors
/// Unreadable or empty input; a compression or decompression failure; a lossless round trip
/// that does not give the input back.
pub fn run(args: &BenchArgs) -> Result<()> {
    report::print(&sweep(args)?, args.json)
}

fn sweep(args: &BenchArgs) -> Result<SweepReport> {
    let input = read_input(&args.file, u64::MAX)?;
    let name = args.file.display();
    if input.data.is_empty() {
        bail!("{name}: the file holds no data to measure");
    }
    let chunksize = usize::try_from(args.chunksize)?;
    let chunks: Vec<&[u8]> = input.data.chunks(chunksize).collect();
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
        let (filters, filters_meta) = filter_slots(std::slice::from_ref(filter))?;
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
        let lossy = filter.id == FilterId::TRUNC_PREC;
        let m =
            measure(&cparams, &chunks, runs, lossy).with_context(|| format!("{name}: {config}"))?;
        let gbps = |t: Duration| m.nbytes as f64 / t.as_secs_f64() / 1e9;
        rows.push(SweepRow {
            codec: codec.name.clone(),
            clevel,
            filter: filter.text.clone(),
            typesize,
            nthreads,
            chunksize,
            blocksize,
            nbytes: m.nbytes,
            cbytes: m.cbytes,
            cratio: m.nbytes as f64 / m.cbytes as f64,
            compress_gbps: gbps(m.compress),
            decompress_gbps: gbps(m.decompress),
            best: Vec::new(),
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut report = SweepReport { rows };
    report.mark_best();
    Ok(report)
}

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

/// What one configuration measured.
struct Measurement {
    nbytes: usize,
    cbytes: usize,
    compress: Duration,
    decompress: Duration,
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
    use super::{median, sweep, SweepReport, SweepRow};
    use crate::commands::parse_args;
    use crate::report::Report;
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

    fn row(codec: &str, cratio: f64, compress_gbps: f64, decompress_gbps: f64) -> SweepRow {
        SweepRow {
            codec: codec.into(),
            clevel: 5,
            filter: "shuffle".into(),
            typesize: 4,
            nthreads: 1,
            chunksize: 65536,
            blocksize: 0,
            nbytes: 1 << 20,
            cbytes: 1 << 18,
            cratio,
            compress_gbps,
            decompress_gbps,
            best: Vec::new(),
        }
    }

    #[test]
    fn winners_are_marked_and_named() {
        let mut r = SweepReport {
            rows: vec![
                row("lz4", 2.0, 1.5, f64::INFINITY),
                row("zstd", 4.0, 0.5, 3.0),
                row("zlib", 4.0, 1.5, 1.0),
            ],
        };
        r.mark_best();
        // Ties go to the last row; an infinite speed counts as no measure.
        assert_eq!(r.rows[0].best, Vec::<&str>::new());
        assert_eq!(r.rows[1].best, ["fastest decompression"]);
        assert_eq!(r.rows[2].best, ["best ratio", "fastest compression"]);
        let mut out = Vec::new();
        r.write_text(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 7, "{text}");
        assert!(lines[0].starts_with("codec    clevel filter"));
        assert_eq!(
            lines[1],
            "lz4           5 shuffle               4        1       auto   1.00 MiB    256 KiB     2.00      1.500       0.000"
        );
        assert!(
            lines[3].ends_with("  <- best ratio  <- fastest compression"),
            "{text}"
        );
        assert_eq!(
            lines[4],
            "best ratio             zlib clevel 5 shuffle (4.00)"
        );
        assert_eq!(
            lines[6],
            "fastest decompression  zstd clevel 5 shuffle (3.00 GB/s)"
        );
        let mut json = Vec::new();
        r.write_json(&mut json).unwrap();
        let json = String::from_utf8(json).unwrap();
        assert_eq!(json.lines().count(), 3);
        assert!(json
            .lines()
            .next()
            .unwrap()
            .contains("\"decompress_gbps\":null"));
    }

    #[test]
    fn every_configuration_is_measured() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.raw");
        let data: Vec<u8> = (0..5000u32).flat_map(|i| (i / 4).to_le_bytes()).collect();
        std::fs::write(&input, &data).unwrap();
        let args = parse_args(&[
            "bench".as_ref(),
            "--codec".as_ref(),
            "lz4,zstd".as_ref(),
            "--filter".as_ref(),
            "noshuffle,shuffle".as_ref(),
            "--clevel".as_ref(),
            "5".as_ref(),
            "--chunksize".as_ref(),
            "8000".as_ref(),
            "--runs".as_ref(),
            "1".as_ref(),
            input.as_os_str(),
        ]);
        let r = sweep(&args).unwrap();
        let configs: Vec<(&str, &str)> = r
            .rows
            .iter()
            .map(|row| (row.codec.as_str(), row.filter.as_str()))
            .collect();
        assert_eq!(
            configs,
            [
                ("lz4", "noshuffle"),
                ("lz4", "shuffle"),
                ("zstd", "noshuffle"),
                ("zstd", "shuffle")
            ]
        );
        for row in &r.rows {
            assert_eq!((row.nbytes, row.chunksize, row.typesize), (20_000, 8000, 4));
            assert!(row.cbytes > 0 && row.cbytes < 20_000, "{row:?}");
            assert_eq!(row.cratio, 20_000.0 / row.cbytes as f64);
        }
        let winners: usize = r.rows.iter().map(|row| row.best.len()).sum();
        assert_eq!(winners, 3);
    }
}
