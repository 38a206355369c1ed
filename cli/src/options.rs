//! Command-line names → library parameters: codecs, filters and split modes, spelled as
//! C-Blosc2 and python-blosc2 spell them. Names are looked up in the library's registry, so
//! every registered codec and filter is reachable.

use anyhow::{anyhow, Result};
use clap::{value_parser, ValueEnum};
use std::sync::Arc;
use strata::chunk::{CParams, SplitMode};
use strata::format::b2nd::B2ndMeta;
use strata::format::chunk::MAX_FILTERS;
use strata::registry::{PluginKind, Registry};
use strata::scheduler::parse_size;
use strata::Error;
use strata::{CodecId, FilterId};

/// A codec chosen by name.
#[derive(Debug, Clone)]
pub struct CodecChoice {
    /// The codec's ID.
    pub id: CodecId,
    /// The name as given (and as the registry spells it).
    pub name: String,
}

/// Parses a codec name or ID (`blosclz`, `lz4`, `lz4hc`, `zlib`, `zstd`, a plugin's name such
/// as `zfp_acc`, or `0`–`255`); plugins are loaded from the plugin search path when needed.
pub fn parse_codec(s: &str) -> Result<CodecChoice, String> {
    let registry = Registry::global();
    let codec = registry.parse_codec(s).map_err(|e| match e {
        Error::NameNotFound { .. } => unknown("codec", s, &registry, PluginKind::Codec),
        e => e.to_string(),
    })?;
    let name = if s.parse::<u8>().is_ok() {
        codec.name().to_owned()
    } else {
        s.to_owned()
    };
    Ok(CodecChoice {
        id: codec.id(),
        name,
    })
}

/// The message for a `kind` name that nothing registered has, listing what is.
fn unknown(kind: &str, name: &str, registry: &Registry, of: PluginKind) -> String {
    let mut known: Vec<String> = registry
        .list()
        .into_iter()
        .filter(|r| r.kind == of)
        .map(|r| r.name)
        .collect();
    if of == PluginKind::Filter {
        known.insert(0, FilterId::NOFILTER.to_string());
    }
    format!("unknown {kind} {name:?} (known: {})", known.join(", "))
}

/// One filter slot chosen on the command line: `NAME[:META]`.
#[derive(Debug, Clone)]
pub struct FilterSpec {
    /// The filter ([`FilterId::NOFILTER`]: an empty slot).
    pub id: FilterId,
    /// The meta byte, if given.
    pub meta: Option<u8>,
    /// The text as given, for reports.
    pub text: String,
}

/// Parses `NAME[:META]`: `noshuffle` (or `nofilter`), `shuffle`, `bitshuffle`, `delta`,
/// `trunc_prec[:BITS]` (BITS an int8: > 0 mantissa bits kept, < 0 bits zeroed),
/// `bytedelta[:TYPESIZE]`, any plugin filter by name, or a filter ID (`0`–`255`). META is
/// 0–255, except for `trunc_prec`.
pub fn parse_filter(s: &str) -> Result<FilterSpec, String> {
    let (name, meta) = match s.split_once(':') {
        Some((name, meta)) => (name, Some(meta)),
        None => (s, None),
    };
    let registry = Registry::global();
    let id = registry.parse_filter(name).map_err(|e| match e {
        Error::NameNotFound { .. } => unknown("filter", name, &registry, PluginKind::Filter),
        e => e.to_string(),
    })?;
    let meta = match meta {
        None => None,
        Some(_) if id == FilterId::NOFILTER => {
            return Err(format!("{name} takes no meta, got {s:?}"))
        }
        Some(m) if id == FilterId::TRUNC_PREC => {
            let bits: i8 = m
                .parse()
                .map_err(|_| format!("trunc_prec meta {m:?} is not an int8 (-128 to 127)"))?;
            Some(bits.to_le_bytes()[0])
        }
        Some(m) => Some(
            m.parse()
                .map_err(|_| format!("{name} meta {m:?} is not 0 to 255"))?,
        ),
    };
    Ok(FilterSpec {
        id,
        meta,
        text: s.to_owned(),
    })
}

/// The filter slots for `specs`: slot 0 onwards in the order given, as python-blosc2 fills
/// them; no specs gives C-Blosc2's default (shuffle in slot 5). A filter without meta gets
/// meta 0 (for bytedelta: the typesize, which the library writes into the chunk).
///
/// # Errors
/// More than six specs.
pub fn filter_slots(specs: &[FilterSpec]) -> Result<([FilterId; MAX_FILTERS], [u8; MAX_FILTERS])> {
    if specs.is_empty() {
        let defaults = CParams::default();
        return Ok((defaults.filters, defaults.filters_meta));
    }
    if specs.len() > MAX_FILTERS {
        return Err(anyhow!(
            "{} filters given, a chunk has {MAX_FILTERS} filter slots",
            specs.len()
        ));
    }
    let mut filters = [FilterId::NOFILTER; MAX_FILTERS];
    let mut metas = [0; MAX_FILTERS];
    for (slot, spec) in specs.iter().enumerate() {
        filters[slot] = spec.id;
        metas[slot] = spec.meta.unwrap_or(0);
    }
    Ok((filters, metas))
}

/// The compression flags every writing command shares; defaults are C-Blosc2's.
#[derive(Debug, Clone, clap::Args)]
pub struct CompressOptions {
    /// Codec: blosclz, lz4, lz4hc, zlib, zstd, a plugin's name (zfp_acc...) or an ID.
    #[arg(long, default_value = "blosclz", value_parser = parse_codec)]
    pub codec: CodecChoice,
    /// The codec meta byte, -128 to 255 (ZFP_ACC: error exponent; ZFP_PREC: precision offset;
    /// ZFP_RATE: percent of the input size).
    #[arg(long, default_value = "0", value_parser = parse_codec_meta, allow_hyphen_values = true)]
    pub codec_meta: u8,
    /// Compression level, 0 (store raw) to 9.
    #[arg(long, default_value_t = 5, value_parser = value_parser!(u8).range(0..=9))]
    pub clevel: u8,
    /// A filter for the next slot, from slot 0: noshuffle, shuffle, bitshuffle, delta,
    /// trunc_prec[:BITS], bytedelta[:TYPESIZE], or a plugin's name. Without any: shuffle in
    /// slot 5.
    #[arg(long = "filter", value_name = "FILTER", value_parser = parse_filter)]
    pub filters: Vec<FilterSpec>,
    /// Item size in bytes [default: the .npy dtype's, else 8].
    #[arg(long, value_parser = value_parser!(u64).range(1..))]
    pub typesize: Option<u64>,
    /// Block size in bytes; 0 chooses it as C-Blosc2 does.
    #[arg(long, default_value_t = 0)]
    pub blocksize: usize,
    /// How blocks are split into streams.
    #[arg(long, value_enum, default_value_t = SplitArg::ForwardCompat)]
    pub splitmode: SplitArg,
    /// Train a zstd dictionary and store it in each chunk (zstd only).
    #[arg(long)]
    pub dict: bool,
}

impl CompressOptions {
    /// The cparams these flags give for data whose own item size (a .npy dtype's) is
    /// `data_typesize`, on `nthreads` threads.
    ///
    /// # Errors
    /// As [`filter_slots`].
    pub fn cparams(&self, data_typesize: Option<usize>, nthreads: usize) -> Result<CParams> {
        let typesize = match self.typesize {
            Some(t) => usize::try_from(t).unwrap_or(usize::MAX),
            None => data_typesize.unwrap_or(CParams::default().typesize),
        };
        let (filters, filters_meta) = filter_slots(&self.filters)?;
        Ok(CParams {
            codec: self.codec.id,
            codec_meta: self.codec_meta,
            clevel: self.clevel,
            typesize,
            blocksize: self.blocksize,
            splitmode: self.splitmode.into(),
            filters,
            filters_meta,
            use_dict: self.dict,
            nthreads,
            ..CParams::default()
        })
    }
}

/// Parses a size in bytes with an optional binary unit (`4096`, `64K`, `8M`, `1G`, also
/// `KiB`, `MiB`, `GiB`), as [`parse_size`] reads it; the message names the text given.
pub fn parse_bytes(s: &str) -> Result<usize, String> {
    parse_size(s).map_err(|e| format!("{s:?}: {e}"))
}

/// Parses a codec meta byte: 0 to 255, or −128 to −1 for codecs whose meta is an int8 (ZFP_ACC's
/// error exponent: −2 means 10^−2), stored as its two's-complement byte.
pub fn parse_codec_meta(s: &str) -> Result<u8, String> {
    match s.parse::<i16>() {
        Ok(v @ -128..=-1) => Ok(v.to_le_bytes()[0]),
        Ok(v @ 0..=255) => Ok(v.to_le_bytes()[0]),
        _ => Err(format!("codec meta {s:?} is not -128 to 255")),
    }
}

/// The N-d (b2nd) array a chunk belongs to, for codecs that need its blockshape (ZFP).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct NdArgs {
    /// Shape of the N-d array the chunk belongs to, in elements, comma-separated (e.g.
    /// 2161,4320); with --chunkshape and --blockshape it is handed to the codec, as the b2nd
    /// metalayer is in a b2nd array. The chunk holds blocks of --blockshape in C order.
    #[arg(long, value_delimiter = ',', requires_all = ["chunkshape", "blockshape"])]
    pub shape: Vec<i64>,
    /// Chunk shape of the N-d array, comma-separated.
    #[arg(long, value_delimiter = ',', requires = "shape")]
    pub chunkshape: Vec<i32>,
    /// Block shape of the N-d array, comma-separated.
    #[arg(long, value_delimiter = ',', requires = "shape")]
    pub blockshape: Vec<i32>,
    /// NumPy dtype of the N-d array (e.g. <f4); optional.
    #[arg(long, requires = "shape")]
    pub dtype: Option<String>,
}

impl NdArgs {
    /// The b2nd metalayer these options describe, if any.
    ///
    /// # Errors
    /// Shapes that disagree or are out of range.
    pub fn meta(&self) -> Result<Option<Arc<B2ndMeta>>> {
        if self.shape.is_empty() {
            return Ok(None);
        }
        let meta = B2ndMeta {
            shape: self.shape.clone(),
            chunkshape: self.chunkshape.clone(),
            blockshape: self.blockshape.clone(),
            dtype_format: strata::format::b2nd::DTYPE_FORMAT_NUMPY,
            dtype: self.dtype.clone(),
        };
        meta.validate()?;
        Ok(Some(Arc::new(meta)))
    }
}

/// `--nthreads`: threads (the caller's included) that work on the blocks of one chunk.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct Threads {
    /// Threads working on the blocks of a chunk; 0 = the runtime's default (STRATA_NTHREADS,
    /// else one per core). The bytes written are the same for every value.
    #[arg(long, default_value_t = 1)]
    pub nthreads: usize,
}

/// Blosc2 split modes, as `BLOSC_*_SPLIT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SplitArg {
    /// Always one stream per byte of the item.
    Always,
    /// Never split.
    Never,
    /// Split when it usually pays off.
    Auto,
    /// As auto; C-Blosc2's default.
    ForwardCompat,
}

impl From<SplitArg> for SplitMode {
    fn from(arg: SplitArg) -> Self {
        match arg {
            SplitArg::Always => SplitMode::Always,
            SplitArg::Never => SplitMode::Never,
            SplitArg::Auto => SplitMode::Auto,
            SplitArg::ForwardCompat => SplitMode::ForwardCompat,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> FilterSpec {
        parse_filter(s).unwrap()
    }

    #[test]
    fn filters_fill_from_slot_zero() {
        let (f, m) = filter_slots(&[spec("delta"), spec("shuffle")]).unwrap();
        assert_eq!((f, m), ([3, 1, 0, 0, 0, 0].map(FilterId), [0; 6]));
        let (f, m) = filter_slots(&[spec("noshuffle")]).unwrap();
        assert_eq!((f, m), ([FilterId::NOFILTER; 6], [0; 6]));
        assert_eq!(
            filter_slots(&[]).unwrap().0,
            [0, 0, 0, 0, 0, 1].map(FilterId)
        );
    }

    #[test]
    fn filter_metas() {
        assert_eq!(spec("trunc_prec:-3").meta, Some(0xfd));
        assert_eq!(spec("trunc_prec:10").meta, Some(10));
        let (f, m) = filter_slots(&[spec("shuffle"), spec("bytedelta")]).unwrap();
        assert_eq!((f[1], m[1]), (FilterId::BYTEDELTA, 0));
        assert_eq!(filter_slots(&[spec("bytedelta:2")]).unwrap().1[0], 2);
        assert!(parse_filter("trunc_prec:200").is_err());
        assert!(parse_filter("noshuffle:1").is_err());
        assert!(parse_filter("shuffl")
            .unwrap_err()
            .contains("known: nofilter, shuffle"));
        assert!(filter_slots(&vec![spec("shuffle"); 7]).is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("64K"), Ok(65536));
        assert_eq!(parse_bytes("8MiB"), Ok(8 << 20));
        assert_eq!(parse_bytes("1g"), Ok(1 << 30));
        assert!(parse_bytes("0").is_err());
        assert!(parse_bytes("12X").is_err());
        assert!(parse_bytes("").is_err());
        assert!(parse_bytes("99999999999999999999G").is_err());
        assert_eq!(
            parse_bytes("12X").unwrap_err(),
            "\"12X\": not a size (use a number with K, M or G)"
        );
        assert_eq!(
            parse_bytes("0").unwrap_err(),
            "\"0\": not a positive size in bytes"
        );
    }

    #[test]
    fn codecs_by_name() {
        assert_eq!(parse_codec("zstd").unwrap().id, CodecId::ZSTD);
        assert!(parse_codec("snappy").unwrap_err().contains("blosclz"));
    }

    #[test]
    fn codecs_and_filters_by_id() {
        assert_eq!(parse_codec("5").unwrap().name, "zstd");
        assert!(parse_codec("3").unwrap_err().contains("unknown codec ID 3"));
        assert_eq!(spec("35:4").id, FilterId::BYTEDELTA);
        assert_eq!(spec("1").id, FilterId::SHUFFLE);
        assert!(parse_filter("7")
            .unwrap_err()
            .contains("unknown filter ID 7"));
        assert_eq!(parse_codec_meta("-2"), Ok(0xfe));
        assert_eq!(parse_codec_meta("200"), Ok(200));
        assert!(parse_codec_meta("256").is_err());
    }
}
