//! `strata chunk ...`: one Blosc2 chunk per file — compress, decompress, getitem, and
//! [`ChunkReport`], what its header says (also what `strata info` reports for a chunk).

use crate::formats::raw::read_input;
use crate::input;
use crate::options::{CompressOptions, NdArgs, Threads};
use crate::output::{self, Form, Staged};
use crate::report::{self, Report};
use crate::usage_error;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use strata::chunk::{compress_vec, decompress_vec_ctx, Context as ChunkContext, DParams, Decoder};
use strata::format::chunk::{
    ChunkHeader, B2FLAG_BIGENDIAN, B2FLAG_INSTR_CODEC, B2FLAG_LAZY, B2FLAG_USEDICT,
    EXTENDED_HEADER_LENGTH, FLAG_BITSHUFFLE, FLAG_DELTA, FLAG_DONT_SPLIT, FLAG_MEMCPYED,
    FLAG_SHUFFLE, MAX_BUFFERSIZE, MAX_FILTERS,
};
use strata::registry::Registry;
use strata::FilterId;

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
        /// Where to write the raw bytes (an existing file is kept unless --force; a character
        /// device or FIFO takes them as a stream).
        output: PathBuf,
        /// Replace OUTPUT if it is an existing regular file (nothing else is ever replaced).
        #[arg(long, short = 'f')]
        force: bool,
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
        /// Where to write the items' bytes (an existing file is kept unless --force; a
        /// character device or FIFO takes them as a stream).
        output: PathBuf,
        /// Replace OUTPUT if it is an existing regular file (nothing else is ever replaced).
        #[arg(long, short = 'f')]
        force: bool,
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
    /// Where to write the chunk (an existing file is kept unless --force; a character device
    /// or FIFO takes it as a stream).
    output: PathBuf,
    /// Replace OUTPUT if it is an existing regular file (nothing else is ever replaced).
    #[arg(long, short = 'f')]
    force: bool,
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
            force,
        } => {
            let chunk = input::read_chunk(&input)?;
            let dparams = DParams {
                nthreads: threads.nthreads,
                nd: nd.meta()?,
            };
            let data = decompress_vec_ctx(&ChunkContext::global(), &dparams, &chunk)
                .with_context(|| format!("cannot decompress {}", input.display()))?;
            write(&output, &input, force, &data)
        }
        ChunkCommand::Info { input, json } => {
            let chunk = input::read_chunk(&input)?;
            report::print(
                &ChunkReport::of(&input.display().to_string(), &chunk)?,
                json,
            )
        }
        ChunkCommand::Getitem {
            threads,
            nd,
            input,
            start,
            nitems,
            output,
            force,
        } => {
            let chunk = input::read_chunk(&input)?;
            let context = || format!("cannot get items from {}", input.display());
            let ctx = ChunkContext::global();
            let decoder = Decoder::new(ctx.registry(), &chunk)
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
                .getitem_on(ctx.runtime(), threads.nthreads, start, nitems, &mut items)
                .with_context(context)?;
            write(&output, &input, force, &items)
        }
    }
}

/// Writes `bytes` to `output`: a regular file there is replaced only with `force`, a device
/// or FIFO takes them as a stream (see [`output::check`]).
fn write(output: &Path, input: &Path, force: bool, bytes: &[u8]) -> Result<()> {
    let out = output::check(output, input, force, Form::Bytes)?;
    let staged = Staged::new(&out)?;
    staged
        .file()?
        .write_all(bytes)
        .with_context(|| format!("cannot write {}", output.display()))?;
    staged.commit()
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
    write(&args.output, &args.input, args.force, &chunk)
}

/// One used filter slot of a chunk or frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FilterSlot {
    /// The slot, 0 to 5.
    pub slot: usize,
    /// The Blosc2 filter ID.
    pub id: u8,
    /// The registry's name for it, or `id<N>` for an ID it does not know.
    pub name: String,
    /// The filter's meta byte.
    pub meta: u8,
}

impl FilterSlot {
    /// The slots holding a filter (ID not 0), named by the registry.
    #[must_use]
    pub fn used(filters: &[FilterId; MAX_FILTERS], metas: &[u8; MAX_FILTERS]) -> Vec<FilterSlot> {
        let registry = Registry::global();
        filters
            .iter()
            .zip(metas)
            .enumerate()
            .filter(|(_, (&id, _))| id != FilterId::NOFILTER)
            .map(|(slot, (&id, &meta))| FilterSlot {
                slot,
                id: id.0,
                name: registry
                    .filter(id)
                    .map_or_else(|_| format!("id{}", id.0), |f| f.name().to_owned()),
                meta,
            })
            .collect()
    }
}

/// What a chunk's header says (`strata chunk info`, and `strata info` of a chunk).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChunkReport {
    /// Format version.
    pub version: u8,
    /// Version of the codec's format.
    pub versionlz: u8,
    /// The `flags` byte.
    pub flags: u8,
    /// Names of its set bits, then `codec_format=N`.
    pub flag_names: Vec<String>,
    /// Header length: 16 (Blosc1) or 32 (extended).
    pub header_len: usize,
    /// Item size in bytes.
    pub typesize: usize,
    /// Uncompressed size.
    pub nbytes: usize,
    /// Compressed size, header included.
    pub cbytes: usize,
    /// Block size.
    pub blocksize: usize,
    /// Number of blocks.
    pub nblocks: usize,
    /// Codec name (a plugin's registered name when it is in the search path).
    pub codec: String,
    /// Codec ID (`compcode`).
    pub codec_id: u8,
    /// Codec meta byte.
    pub codec_meta: u8,
    /// The used filter slots.
    pub filters: Vec<FilterSlot>,
    /// The `blosc2_flags` byte.
    pub blosc2_flags: u8,
    /// Names of its set bits (`special=KIND` for a special chunk).
    pub blosc2_flag_names: Vec<String>,
    /// Special kind: none, zero, nan, value, uninit.
    pub special: &'static str,
    /// Whether blocks are split into one stream per byte of an item.
    pub split: bool,
}

impl ChunkReport {
    /// The report of `chunk`, the bytes of the file `name`.
    ///
    /// # Errors
    /// The bytes do not start with a valid chunk header; the message names `name`.
    pub fn of(name: &str, chunk: &[u8]) -> Result<ChunkReport> {
        let h = ChunkHeader::parse(chunk).with_context(|| format!("{name}: not a Blosc2 chunk"))?;
        // Plugin codecs by their registered name (loading the plugin if it is in the search path).
        let codec = Registry::global()
            .codec(h.compcode)
            .map_or_else(|_| format!("id{}", h.compcode.0), |c| c.name().to_owned());
        Ok(ChunkReport {
            version: h.version,
            versionlz: h.versionlz,
            flags: h.flags,
            flag_names: flag_names(&h),
            header_len: h.header_len,
            typesize: h.typesize,
            nbytes: h.nbytes,
            cbytes: h.cbytes,
            blocksize: h.blocksize,
            nblocks: h.nblocks(),
            codec,
            codec_id: h.compcode.0,
            codec_meta: h.compcode_meta,
            filters: FilterSlot::used(&h.filters, &h.filters_meta),
            blosc2_flags: h.blosc2_flags,
            blosc2_flag_names: blosc2_flag_names(&h),
            special: h.special.name(),
            split: !h.dont_split(),
        })
    }
}

impl Report for ChunkReport {
    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let filters = if self.filters.is_empty() {
            "none".to_owned()
        } else {
            let parts: Vec<String> = self
                .filters
                .iter()
                .map(|f| format!("slot {}: {} (id {}, meta {})", f.slot, f.name, f.id, f.meta))
                .collect();
            parts.join(", ")
        };
        // ChunkHeader::parse guarantees cbytes >= the header length.
        let cratio = self.nbytes as f64 / self.cbytes as f64;
        writeln!(
            out,
            "version:      {} (codec format version {}, {}-byte header)",
            self.version, self.versionlz, self.header_len
        )?;
        writeln!(
            out,
            "flags:        {:#04x}{}",
            self.flags,
            with_space(&self.flag_names.join(" "))
        )?;
        writeln!(
            out,
            "blosc2_flags: {:#04x}{}",
            self.blosc2_flags,
            with_space(&self.blosc2_flag_names.join(" "))
        )?;
        writeln!(out, "typesize:     {}", self.typesize)?;
        writeln!(out, "nbytes:       {}", self.nbytes)?;
        writeln!(out, "cbytes:       {} (cratio {cratio:.3})", self.cbytes)?;
        writeln!(out, "blocksize:    {}", self.blocksize)?;
        writeln!(out, "nblocks:      {}", self.nblocks)?;
        writeln!(
            out,
            "codec:        {} (id {}, meta {})",
            self.codec, self.codec_id, self.codec_meta
        )?;
        writeln!(out, "filters:      {filters}")?;
        writeln!(out, "special:      {}", self.special)?;
        writeln!(
            out,
            "split:        {}",
            if self.split { "yes" } else { "no" }
        )
    }
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

#[cfg(test)]
mod tests {
    use super::{ChunkReport, FilterSlot};
    use crate::report::Report;
    use strata::chunk::{compress_vec, CParams};
    use strata::{CodecId, FilterId};

    fn text(report: &ChunkReport) -> String {
        let mut out = Vec::new();
        report.write_text(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_chunk_reports_its_header() {
        let data: Vec<u8> = (0..4000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
        let cparams = CParams {
            typesize: 4,
            codec: CodecId::ZSTD,
            blocksize: 4096,
            filters: [0, 0, 0, 0, 3, 1].map(FilterId),
            filters_meta: [0, 0, 0, 0, 0, 0],
            ..CParams::default()
        };
        let chunk = compress_vec(&cparams, &data).unwrap();
        let r = ChunkReport::of("c.b2", &chunk).unwrap();
        assert_eq!((r.version, r.header_len, r.typesize), (5, 32, 4));
        assert_eq!(
            (r.nbytes, r.cbytes, r.blocksize, r.nblocks),
            (16_000, chunk.len(), 4096, 4)
        );
        assert_eq!((r.codec.as_str(), r.codec_id), ("zstd", 5));
        assert_eq!(r.filter_names(), ["delta", "shuffle"]);
        assert_eq!(r.filters[0].slot, 4);
        assert_eq!(r.special, "none");
        assert!(r.split);
        // Extended header (shuffle and bitshuffle bits), delta in the pipeline, zstd's format 4.
        assert_eq!(r.flag_names, ["extended_header", "delta", "codec_format=4"]);
        let text = text(&r);
        let cratio = 16_000.0 / chunk.len() as f64;
        assert!(
            text.contains(&format!(
                "cbytes:       {} (cratio {cratio:.3})\n",
                chunk.len()
            )),
            "{text}"
        );
        assert!(text.contains(
            "filters:      slot 4: delta (id 3, meta 0), slot 5: shuffle (id 1, meta 0)\n"
        ));
        assert!(
            text.contains("flags:        0x8d extended_header delta codec_format=4\n"),
            "{text}"
        );
        assert!(
            text.ends_with("special:      none\nsplit:        yes\n"),
            "{text}"
        );
    }

    #[test]
    fn unknown_filters_and_bad_headers() {
        let used = FilterSlot::used(&[0, 200, 0, 0, 0, 0].map(FilterId), &[0, 7, 0, 0, 0, 0]);
        assert_eq!(
            used,
            [FilterSlot {
                slot: 1,
                id: 200,
                name: "id200".into(),
                meta: 7
            }]
        );
        let e = format!("{:#}", ChunkReport::of("x.b2", b"tiny").unwrap_err());
        assert!(e.starts_with("x.b2: not a Blosc2 chunk: "), "{e}");
    }

    impl ChunkReport {
        fn filter_names(&self) -> Vec<&str> {
            self.filters.iter().map(|f| f.name.as_str()).collect()
        }
    }
}
