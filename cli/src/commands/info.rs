//! `strata info FILE`: what a Blosc2 file holds — a chunk, a frame (file or sparse
//! directory) or a b2nd array — or the datasets of an HDF5 file (`FILE.h5`, or one of them as
//! `FILE.h5:/path`), as text or one JSON object.
//!
//! [`report()`] builds it from a path, [`report_bytes`] from a file's bytes held in memory (what
//! the `info` fuzz target runs); both read a frame with the same [`FrameReport::of`] and a
//! chunk with the same [`ChunkReport::of`]. Every size computed from the file is checked: a
//! file whose sizes overflow is an error naming it, never a wrong number or a panic.

pub use super::chunk::{ChunkReport, FilterSlot};
use crate::formats::hdf5::is_hdf5;
use crate::human;
use crate::input::{self, Blosc2, FRAME_MAGIC};
use crate::report::{self, Report};
use crate::source::hdf5_spec;
use anyhow::{anyhow, Context, Result};
use clap::Args;
use serde::Serialize;
use serde_json::{json, Map, Value as Json};
use std::io::Write;
use std::path::{Path, PathBuf};
use strata::format::b2nd::{B2ndMeta, LEGACY_METALAYER, METALAYER as B2ND};
use strata::format::chunk::SpecialType;
use strata::format::frame::ChunkLoc;
use strata::registry::Registry;
use strata::schunk::values::{as_tuple, Value};
use strata::schunk::SChunk;

/// Arguments of `strata info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// A chunk file, a frame file (.b2frame, .b2nd), a sparse frame directory, an HDF5 file
    /// or one of its datasets (FILE.h5:/path), or the http(s):// URL of a frame.
    input: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `strata info`.
///
/// # Errors
/// Unreadable or invalid input; the message names the file and what is wrong.
pub fn run(args: &InfoArgs) -> Result<()> {
    report::print(&report(&args.input)?, args.json)
}

/// What `strata info` reports: a chunk's header, or a frame's contents.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum InfoReport {
    /// A file holding one chunk.
    Chunk(ChunkReport),
    /// A frame: a contiguous frame file, a sparse frame directory, or a b2nd array in either.
    Frame(FrameReport),
    /// An HDF5 file's datasets.
    Hdf5(Hdf5Report),
}

impl Report for InfoReport {
    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        match self {
            InfoReport::Chunk(r) => r.write_text(out),
            InfoReport::Frame(r) => r.write_text(out),
            InfoReport::Hdf5(r) => r.write_text(out),
        }
    }
}

/// The report of the file or sparse frame directory `path`. A frame is read as the library
/// reads it (lazily: only the index, metalayers and chunk headers); a chunk file whole.
///
/// # Errors
/// Unreadable or invalid input; the message names the file and what is wrong.
pub fn report(path: &Path) -> Result<InfoReport> {
    let name = path.display().to_string();
    if let Some((file, dataset)) = hdf5_spec(path) {
        return Ok(InfoReport::Hdf5(Hdf5Report::of(
            Path::new(file),
            Some(dataset),
        )?));
    }
    if matches!(input::kind(path)?, input::Kind::File(_)) && is_hdf5(path)? {
        return Ok(InfoReport::Hdf5(Hdf5Report::of(path, None)?));
    }
    match input::open_blosc2(path)? {
        Blosc2::Frame(schunk) => Ok(InfoReport::Frame(FrameReport::of(&name, &schunk)?)),
        Blosc2::Chunk(bytes) => Ok(InfoReport::Chunk(ChunkReport::of(&name, &bytes)?)),
    }
}

/// The report of a file whose bytes are `bytes` (a contiguous frame or a chunk), as
/// [`report()`] gives it for a file named `name` holding them.
///
/// # Errors
/// As [`report()`].
pub fn report_bytes(name: &str, bytes: &[u8]) -> Result<InfoReport> {
    if bytes.starts_with(FRAME_MAGIC) {
        let schunk = input::frame_in_memory(bytes.to_vec(), name)?;
        Ok(InfoReport::Frame(FrameReport::of(name, &schunk)?))
    } else {
        Ok(InfoReport::Chunk(ChunkReport::of(name, bytes)?))
    }
}

/// Bytes a frame takes on disk: the frame file, plus the chunk files of a sparse frame.
///
/// # Errors
/// The sum does not fit in 64 bits (a frame whose header lies); the message names `name`.
pub fn stored_bytes(name: &str, schunk: &SChunk) -> Result<u64> {
    let chunk_files = if schunk.is_sparse() {
        schunk.cbytes()
    } else {
        0
    };
    schunk
        .frame_len()
        .checked_add(chunk_files)
        .ok_or_else(|| {
            anyhow!(
                "{name}: the frame of {} bytes announces {chunk_files} bytes of chunks, more than 64 bits hold",
                schunk.frame_len()
            )
        })
}

/// A msgpack value as JSON: tuples as lists, binary as a hex string, maps with text keys.
fn to_json(v: &Value) -> Json {
    if let Some(items) = as_tuple(v) {
        return Json::Array(items.iter().map(to_json).collect());
    }
    match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => i64::try_from(*i)
            .map(Json::from)
            .or_else(|_| u64::try_from(*i).map(Json::from))
            .unwrap_or(Json::Null),
        Value::F32(f) => json!(f),
        Value::F64(f) => json!(f),
        Value::Str(s) => json!(s),
        Value::Bin(b) => json!(hex(b)),
        Value::Array(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Map(pairs) => {
            let mut m = Map::new();
            for (k, v) in pairs {
                let key = match k {
                    Value::Str(s) => s.clone(),
                    other => to_json(other).to_string(),
                };
                m.insert(key, to_json(v));
            }
            Json::Object(m)
        }
        Value::Ext(kind, bytes) => json!({"ext": kind, "data": hex(bytes)}),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One metalayer or vlmetalayer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Layer {
    /// Its name.
    pub name: String,
    /// Its size in bytes.
    pub size: usize,
    /// Its content decoded when it is msgpack, else its bytes as a hex string.
    pub value: Json,
}

impl Layer {
    fn new(name: &str, content: &[u8], value: Option<Value>) -> Layer {
        Layer {
            name: name.to_owned(),
            size: content.len(),
            value: value.as_ref().map_or_else(|| json!(hex(content)), to_json),
        }
    }
}

/// One dataset of an HDF5 file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatasetReport {
    /// Its path in the file (`/group/dataset`).
    pub name: String,
    /// Shape in items.
    pub shape: Vec<usize>,
    /// NumPy dtype of its items.
    pub dtype: String,
    /// Chunk dims (none for contiguous and compact datasets).
    pub chunks: Option<Vec<usize>>,
    /// The blocks of its chunks, when Strata reads it directly.
    pub blocks: Option<Vec<usize>>,
    /// The filter pipeline, in HDF5's order.
    pub filters: Vec<Hdf5Filter>,
    /// Bytes of its items.
    pub nbytes: u64,
    /// Bytes it takes in the file.
    pub stored_bytes: u64,
    /// `nbytes` over `stored_bytes`.
    pub cratio: f64,
    /// How Strata reads it: `direct` (chunks and blocks by Strata), else `hdf5: <why>`.
    pub read: String,
}

/// One filter of an HDF5 dataset's pipeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hdf5Filter {
    /// Its ID (32026 is Blosc2).
    pub id: i32,
    /// Its name, as stored.
    pub name: String,
    /// Its `cd_values`.
    pub cd_values: Vec<u32>,
}

/// An HDF5 file's datasets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hdf5Report {
    /// The file, as given.
    pub path: String,
    /// Its datasets, depth first.
    pub datasets: Vec<DatasetReport>,
}

impl Hdf5Report {
    /// The datasets of the HDF5 file `path`, or only `dataset`.
    ///
    /// # Errors
    /// The file or a dataset cannot be opened; the message names it.
    pub fn of(path: &Path, dataset: Option<&str>) -> Result<Hdf5Report> {
        let name = path.display().to_string();
        let names = match dataset {
            Some(d) => vec![d.to_owned()],
            None => {
                strata::hdf5::list_datasets(path).with_context(|| format!("cannot read {name}"))?
            }
        };
        let datasets = names
            .iter()
            .map(|d| {
                let ds = strata::hdf5::H5Dataset::open(path, d)
                    .with_context(|| format!("cannot open {name}:{d}"))?;
                let nbytes = ds
                    .shape()
                    .iter()
                    .fold(ds.typesize() as u64, |a, &n| a.saturating_mul(n as u64));
                let stored = ds.storage_size();
                Ok(DatasetReport {
                    name: if d.starts_with('/') {
                        d.clone()
                    } else {
                        format!("/{d}")
                    },
                    shape: ds.shape().to_vec(),
                    dtype: ds.dtype().to_owned(),
                    chunks: ds.chunkshape().map(<[usize]>::to_vec),
                    blocks: ds.blockshape().map(<[usize]>::to_vec),
                    filters: ds
                        .filters()
                        .iter()
                        .map(|f| Hdf5Filter {
                            id: f.id,
                            name: f.name.clone(),
                            cd_values: f.cd_values.clone(),
                        })
                        .collect(),
                    nbytes,
                    stored_bytes: stored,
                    cratio: nbytes as f64 / stored.max(1) as f64,
                    read: match ds.access() {
                        strata::hdf5::Access::Direct { .. } => "direct".to_owned(),
                        strata::hdf5::Access::Hdf5(why) => format!("hdf5: {why}"),
                    },
                })
            })
            .collect::<Result<_>>()?;
        Ok(Hdf5Report {
            path: name,
            datasets,
        })
    }
}

impl Report for Hdf5Report {
    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let n = self.datasets.len();
        writeln!(
            out,
            "{}: HDF5 file, {n} dataset{}",
            self.path,
            if n == 1 { "" } else { "s" }
        )?;
        for d in &self.datasets {
            let parts = match (&d.chunks, &d.blocks) {
                (Some(c), Some(b)) => format!(" (chunks {c:?}, blocks {b:?})"),
                (Some(c), None) => format!(" (chunks {c:?})"),
                _ => " (not chunked)".to_owned(),
            };
            writeln!(
                out,
                "  {}: {} {:?}{parts}: {} -> {} (cratio {:.2})",
                d.name,
                d.dtype,
                d.shape,
                human::bytes(d.nbytes),
                human::bytes(d.stored_bytes),
                d.cratio
            )?;
            for f in &d.filters {
                let values: Vec<String> = f.cd_values.iter().map(u32::to_string).collect();
                writeln!(
                    out,
                    "    filter {} {:?}: cd_values ({})",
                    f.id,
                    f.name,
                    values.join(", ")
                )?;
            }
            writeln!(out, "    read: {}", d.read)?;
        }
        Ok(())
    }
}

/// How many chunks of a frame are special, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SpecialChunks {
    /// All-zero chunks.
    pub zero: usize,
    /// All-NaN chunks.
    pub nan: usize,
    /// Uninitialised chunks (and any other special kind).
    pub uninit: usize,
}

/// The b2nd metalayer of an array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArrayShape {
    /// Shape in items.
    pub shape: Vec<i64>,
    /// Chunk shape in items.
    pub chunkshape: Vec<i32>,
    /// Block shape in items.
    pub blockshape: Vec<i32>,
    /// NumPy dtype string, when the layer has one.
    pub dtype: Option<String>,
}

/// What a frame holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameReport {
    /// The file or directory, as given.
    pub path: String,
    /// `contiguous frame` or `sparse frame`.
    pub kind: &'static str,
    /// Bytes of the frame file (`chunks.b2frame` of a sparse frame).
    pub frame_len: u64,
    /// Bytes on disk: the frame file plus a sparse frame's chunk files.
    pub stored_bytes: u64,
    /// Number of chunks.
    pub nchunks: usize,
    /// Bytes per chunk (all but the last), when the frame has one chunk size.
    pub chunksize: Option<usize>,
    /// Item size in bytes.
    pub typesize: usize,
    /// Uncompressed bytes: an array's items (not its padded chunks), else the frame's nbytes.
    pub nbytes: u64,
    /// Compressed bytes of the stored (non-special) chunks.
    pub cbytes: u64,
    /// `nbytes` over `stored_bytes`.
    pub cratio: f64,
    /// Codec name, or `id<N>` for a codec the registry does not know.
    pub codec: String,
    /// Codec ID.
    pub codec_id: u8,
    /// Codec meta byte.
    pub codec_meta: u8,
    /// Compression level.
    pub clevel: u8,
    /// Block size.
    pub blocksize: usize,
    /// The used filter slots.
    pub filters: Vec<FilterSlot>,
    /// Special chunks by kind.
    pub special_chunks: SpecialChunks,
    /// Metalayers, in the frame's order.
    pub metalayers: Vec<Layer>,
    /// Variable-length metalayers, in the frame's order.
    pub vlmetalayers: Vec<Layer>,
    /// The array's b2nd metalayer, for an array.
    pub b2nd: Option<ArrayShape>,
}

impl FrameReport {
    /// The report of `schunk`, opened from the file `name`.
    ///
    /// # Errors
    /// A chunk or vlmetalayer that cannot be read, a bad b2nd metalayer, or sizes that
    /// overflow 64 bits; the message names `name`.
    pub fn of(name: &str, schunk: &SChunk) -> Result<FrameReport> {
        let cp = schunk.cparams();
        let codec = Registry::global()
            .codec(cp.codec)
            .map_or_else(|_| format!("id{}", cp.codec), |c| c.name().to_owned());
        let mut special = SpecialChunks::default();
        let mut cbytes = 0u64;
        for nchunk in 0..schunk.nchunks() {
            let info = schunk
                .chunk_info(nchunk)
                .with_context(|| format!("{name}: chunk {nchunk}"))?;
            match info.loc {
                ChunkLoc::Special(SpecialType::Zero) => special.zero += 1,
                ChunkLoc::Special(SpecialType::Nan) => special.nan += 1,
                ChunkLoc::Special(_) => special.uninit += 1,
                ChunkLoc::Stored(_) => {
                    cbytes = cbytes
                        .checked_add(info.cbytes as u64)
                        .ok_or_else(|| anyhow!("{name}: the chunks' cbytes overflow 64 bits"))?;
                }
            }
        }
        let metalayers = schunk
            .meta_names()
            .into_iter()
            .map(|m| {
                let content = schunk.meta(m).unwrap_or_default();
                Layer::new(m, content, schunk.meta_value(m).ok())
            })
            .collect();
        let vlmetalayers = schunk
            .vlmeta_names()
            .into_iter()
            .map(|m| {
                let content = schunk
                    .vlmeta(m)
                    .with_context(|| format!("{name}: vlmetalayer {m}"))?;
                Ok(Layer::new(m, &content, schunk.vlmeta_value(m).ok()))
            })
            .collect::<Result<_>>()?;
        let b2nd = [B2ND, LEGACY_METALAYER]
            .iter()
            .find_map(|m| schunk.meta(m))
            .map(|bytes| {
                B2ndMeta::from_bytes(bytes).with_context(|| format!("{name}: bad b2nd metalayer"))
            })
            .transpose()?;
        // An array's size is its items', not its padded chunks'.
        let nbytes = match &b2nd {
            None => schunk.nbytes(),
            Some(m) => array_nbytes(&m.shape, schunk.typesize()).ok_or_else(|| {
                anyhow!(
                    "{name}: the b2nd shape {:?} of {}-byte items is more bytes than 64 bits hold",
                    m.shape,
                    schunk.typesize()
                )
            })?,
        };
        let stored_bytes = stored_bytes(name, schunk)?;
        Ok(FrameReport {
            path: name.to_owned(),
            kind: if schunk.is_sparse() {
                "sparse frame"
            } else {
                "contiguous frame"
            },
            frame_len: schunk.frame_len(),
            stored_bytes,
            nchunks: schunk.nchunks(),
            chunksize: schunk.chunksize(),
            typesize: schunk.typesize(),
            nbytes,
            cbytes,
            cratio: nbytes as f64 / stored_bytes.max(1) as f64,
            codec,
            codec_id: cp.codec.0,
            codec_meta: cp.codec_meta,
            clevel: cp.clevel,
            blocksize: cp.blocksize,
            filters: FilterSlot::used(&cp.filters, &cp.filters_meta),
            special_chunks: special,
            metalayers,
            vlmetalayers,
            b2nd: b2nd.map(|m| ArrayShape {
                shape: m.shape,
                chunkshape: m.chunkshape,
                blockshape: m.blockshape,
                dtype: m.dtype,
            }),
        })
    }
}

/// Bytes of the items of an array of `shape` (no negative entries) and `typesize`; `None`
/// when they overflow 64 bits.
fn array_nbytes(shape: &[i64], typesize: usize) -> Option<u64> {
    shape
        .iter()
        .try_fold(u64::try_from(typesize).ok()?, |acc, &d| {
            acc.checked_mul(u64::try_from(d).ok()?)
        })
}

impl Report for FrameReport {
    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(out, "{}: {}", self.path, self.kind)?;
        if let Some(m) = &self.b2nd {
            writeln!(out, "  shape:        {:?}", m.shape)?;
            writeln!(out, "  chunkshape:   {:?}", m.chunkshape)?;
            writeln!(out, "  blockshape:   {:?}", m.blockshape)?;
            writeln!(
                out,
                "  dtype:        {}",
                m.dtype.as_deref().unwrap_or("(none)")
            )?;
        }
        writeln!(
            out,
            "  nbytes:       {} ({} bytes)",
            human::bytes(self.nbytes),
            self.nbytes
        )?;
        writeln!(
            out,
            "  stored:       {} ({} bytes, cratio {:.2})",
            human::bytes(self.stored_bytes),
            self.stored_bytes,
            self.cratio
        )?;
        let s = &self.special_chunks;
        writeln!(
            out,
            "  chunks:       {} of {} (typesize {}); special: {} zero, {} NaN, {} uninit",
            self.nchunks,
            self.chunksize
                .map_or_else(|| "-".to_owned(), |c| human::bytes(c as u64)),
            self.typesize,
            s.zero,
            s.nan,
            s.uninit
        )?;
        writeln!(
            out,
            "  codec:        {} (id {}, clevel {}, meta {})",
            self.codec, self.codec_id, self.clevel, self.codec_meta
        )?;
        let filters: Vec<String> = self
            .filters
            .iter()
            .map(|f| format!("{} (meta {})", f.name, f.meta))
            .collect();
        writeln!(
            out,
            "  filters:      {}",
            if filters.is_empty() {
                "none".to_owned()
            } else {
                filters.join(", ")
            }
        )?;
        for (title, layers) in [
            ("metalayer", &self.metalayers),
            ("vlmetalayer", &self.vlmetalayers),
        ] {
            for l in layers {
                writeln!(out, "  {title} {}: {} bytes = {}", l.name, l.size, l.value)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{array_nbytes, report, report_bytes, to_json, InfoReport};
    use crate::commands::chunk::ChunkReport;
    use crate::report::Report;
    use serde_json::json;
    use strata::chunk::{compress_vec, special_chunk, CParams};
    use strata::format::chunk::SpecialType;
    use strata::ndarray::{ArrayParams, NdArray};
    use strata::schunk::values::Value;
    use strata::schunk::{Location, SChunk, SChunkOptions};
    use strata::CodecId;

    fn cparams() -> CParams {
        CParams {
            typesize: 4,
            codec: CodecId::LZ4,
            ..CParams::default()
        }
    }

    fn text(report: &InfoReport) -> String {
        let mut out = Vec::new();
        report.write_text(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// A contiguous frame: 2 stored chunks, a zero chunk and a NaN chunk; a metalayer and a
    /// vlmetalayer.
    fn frame() -> Vec<u8> {
        let opts = SChunkOptions {
            cparams: cparams(),
            chunksize: 4000,
            metalayers: vec![("grid".into(), vec![0x92, 0x0a, 0x14])],
            ..SChunkOptions::default()
        };
        let mut s = SChunk::new(&opts).unwrap();
        let data: Vec<u8> = (0..2000u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
        s.append_data(&data).unwrap();
        for kind in [SpecialType::Zero, SpecialType::Nan] {
            s.append_chunk(&special_chunk(&cparams(), kind, 4000, None).unwrap())
                .unwrap();
        }
        s.vlmeta_set("note", b"\xa2hi", None).unwrap();
        s.vlmeta_set("raw", b"\xa5hi", None).unwrap();
        s.to_cframe().unwrap()
    }

    /// The bytes of a b2nd array of `shape` u16 items.
    fn array(shape: &[usize]) -> Vec<u8> {
        let nitems: usize = shape.iter().product();
        let data: Vec<u8> = (0..nitems as u16).flat_map(u16::to_le_bytes).collect();
        let params = ArrayParams::new(shape, 2).with_dtype("<u2");
        let arr = NdArray::from_buffer(&params, &Location::Memory, &data).unwrap();
        arr.schunk().to_cframe().unwrap()
    }

    #[test]
    fn a_frame_reports_its_chunks_and_layers() {
        let bytes = frame();
        let InfoReport::Frame(r) = report_bytes("f.b2frame", &bytes).unwrap() else {
            panic!("not read as a frame");
        };
        assert_eq!((r.path.as_str(), r.kind), ("f.b2frame", "contiguous frame"));
        assert_eq!((r.nchunks, r.chunksize, r.typesize), (4, Some(4000), 4));
        assert_eq!(
            (r.nbytes, r.frame_len, r.stored_bytes),
            (16_000, bytes.len() as u64, bytes.len() as u64)
        );
        assert_eq!(
            (
                r.special_chunks.zero,
                r.special_chunks.nan,
                r.special_chunks.uninit
            ),
            (1, 1, 0)
        );
        assert!(r.cbytes > 0 && r.cbytes < bytes.len() as u64);
        assert_eq!(r.cratio, 16_000.0 / bytes.len() as f64);
        assert_eq!((r.codec.as_str(), r.codec_id, r.clevel), ("lz4", 1, 5));
        assert_eq!(r.metalayers[0].name, "grid");
        assert_eq!(
            (r.metalayers[0].size, &r.metalayers[0].value),
            (3, &json!([10, 20]))
        );
        assert_eq!(r.vlmetalayers[0].value, json!("hi"));
        // Not msgpack: the bytes as hex.
        assert_eq!(r.vlmetalayers[1].value, json!("a56869"));
        assert_eq!(r.b2nd, None);
        let text = text(&InfoReport::Frame(r));
        assert!(
            text.starts_with(
                "f.b2frame: contiguous frame\n  nbytes:       15.6 KiB (16000 bytes)\n"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "  chunks:       4 of 3.91 KiB (typesize 4); special: 1 zero, 1 NaN, 0 uninit\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("  filters:      shuffle (meta 0)\n"),
            "{text}"
        );
        assert!(text.ends_with("  metalayer grid: 3 bytes = [10,20]\n  vlmetalayer note: 3 bytes = \"hi\"\n  vlmetalayer raw: 3 bytes = \"a56869\"\n"), "{text}");
    }

    #[test]
    fn an_array_reports_its_items_not_its_padded_chunks() {
        let InfoReport::Frame(r) = report_bytes("a.b2nd", &array(&[30, 7])).unwrap() else {
            panic!("not read as a frame");
        };
        let m = r.b2nd.as_ref().unwrap();
        assert_eq!(
            (&m.shape[..], m.dtype.as_deref()),
            (&[30, 7][..], Some("<u2"))
        );
        assert_eq!(r.nbytes, 30 * 7 * 2);
        let text = text(&InfoReport::Frame(r));
        assert!(
            text.contains("a.b2nd: contiguous frame\n  shape:        [30, 7]\n"),
            "{text}"
        );
        assert!(
            text.contains("  dtype:        <u2\n  nbytes:       420 B (420 bytes)\n"),
            "{text}"
        );
    }

    #[test]
    fn a_shape_whose_size_overflows_is_an_error_naming_the_file() {
        // A float32 array of shape (30, 7) with one flipped bit: 30 becomes 2^62 + 30.
        let crafted =
            include_bytes!("../../../tests/data/fuzz-regressions/info-b2nd-shape-overflow.bin");
        let e = format!("{:#}", report_bytes("x.b2nd", crafted).unwrap_err());
        assert_eq!(
            e,
            "x.b2nd: the b2nd shape [4611686018427387934, 7] of 4-byte items is more bytes than 64 bits hold"
        );
        assert_eq!(array_nbytes(&[1 << 31, 1 << 30], 4), Some(1 << 63));
        assert_eq!(array_nbytes(&[1 << 31, 1 << 31], 4), None);
        assert_eq!(array_nbytes(&[-1], 4), None);
        assert_eq!(array_nbytes(&[], 8), Some(8));
        assert_eq!(array_nbytes(&[5, 0], 8), Some(0));
    }

    #[test]
    fn chunks_and_files_read_as_their_bytes() {
        let chunk = compress_vec(&cparams(), &[7u8; 1000]).unwrap();
        assert_eq!(
            report_bytes("c.b2", &chunk).unwrap(),
            InfoReport::Chunk(ChunkReport::of("c.b2", &chunk).unwrap())
        );
        let dir = tempfile::tempdir().unwrap();
        for (file, bytes) in [("c.b2", chunk), ("f.b2frame", frame())] {
            let path = dir.path().join(file);
            std::fs::write(&path, &bytes).unwrap();
            let name = path.display().to_string();
            assert_eq!(report(&path).unwrap(), report_bytes(&name, &bytes).unwrap());
        }
        let e = format!("{:#}", report_bytes("bad.b2", b"\x05\x01").unwrap_err());
        assert!(e.starts_with("bad.b2: not a Blosc2 chunk"), "{e}");
        let truncated = &frame()[..100];
        let e = format!("{:#}", report_bytes("cut.b2frame", truncated).unwrap_err());
        assert!(e.starts_with("cannot open cut.b2frame: "), "{e}");
    }

    #[test]
    fn msgpack_values_as_json() {
        let v = Value::Map(vec![
            (Value::from("a"), Value::Bin(vec![0xab, 0x01])),
            (
                Value::from(3),
                Value::Array(vec![Value::Nil, Value::from(-1), Value::from(u64::MAX)]),
            ),
            (Value::from("x"), Value::Ext(1, vec![2])),
        ]);
        assert_eq!(
            to_json(&v),
            json!({"a": "ab01", "3": [null, -1, u64::MAX], "x": {"ext": 1, "data": "02"}})
        );
    }

    #[test]
    fn an_hdf5_file_lists_its_datasets() {
        let dir = tempfile::tempdir().unwrap();
        let h5 = dir.path().join("f.h5");
        let data: Vec<u8> = (0..1000u32).flat_map(u32::to_le_bytes).collect();
        let params = strata::ArrayParams::new(&[1000], 4)
            .with_dtype("<i4")
            .with_chunkshape(&[300])
            .with_blockshape(&[100]);
        strata::hdf5::write_array(&h5, "/d", &params, &data).unwrap();
        let super::InfoReport::Hdf5(r) = super::report(&h5).unwrap() else {
            panic!("not an HDF5 report")
        };
        let [d] = &r.datasets[..] else {
            panic!("{r:?}")
        };
        assert_eq!(
            (d.name.as_str(), &d.shape[..], d.dtype.as_str()),
            ("/d", &[1000][..], "<i4")
        );
        assert_eq!(
            (d.chunks.as_deref(), d.read.as_str()),
            (Some(&[300][..]), "direct")
        );
        assert_eq!(d.filters[0].id, 32026);
        assert_eq!(d.filters[0].cd_values, [1, 0, 4, 1200, 5, 1, 0]);
        let mut text = Vec::new();
        crate::report::Report::write_text(&r, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.starts_with(&format!("{}: HDF5 file, 1 dataset\n  /d: <i4 [1000] (chunks [300], blocks [100]): 3.91 KiB -> ", h5.display())), "{text}");
        // One dataset by name.
        let spec = dir.path().join("f.h5:/d");
        assert!(matches!(
            super::report(&spec).unwrap(),
            super::InfoReport::Hdf5(_)
        ));
    }
}
