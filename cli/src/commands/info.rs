//! `strata info FILE`: what a Blosc2 file holds — a chunk, a frame (file or sparse
//! directory) or a b2nd array — as text or one JSON object.
//!
//! [`report()`] builds it from a path, [`report_bytes`] from a file's bytes held in memory (what
//! the `info` fuzz target runs); both read a frame with the same [`FrameReport::of`] and a
//! chunk with the same [`ChunkReport::of`]. Every size computed from the file is checked: a
//! file whose sizes overflow is an error naming it, never a wrong number or a panic.

use super::chunk;
pub use super::chunk::{ChunkReport, FilterSlot};
use crate::human;
use crate::report::{self, Report};
use anyhow::{anyhow, Context, Result};
use clap::Args;
use serde::Serialize;
use serde_json::{json, Map, Value as Json};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use strata::format::b2nd::{B2ndMeta, LEGACY_METALAYER, METALAYER as B2ND};
use strata::format::chunk::SpecialType;
use strata::format::frame::ChunkLoc;
use strata::frame::{MemIo, OpenMode, SyncPolicy};
use strata::registry::Registry;
use strata::schunk::values::{as_tuple, Value};
use strata::schunk::SChunk;

/// The bytes every frame starts with: msgpack fixarray(14), fixstr(8) `"b2frame\0"`.
const FRAME_MAGIC: &[u8] = b"\x9e\xa8b2frame\0";

/// Arguments of `strata info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// A chunk file, a frame file (.b2frame, .b2nd) or a sparse frame directory.
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
}

impl Report for InfoReport {
    fn write_text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        match self {
            InfoReport::Chunk(r) => r.write_text(out),
            InfoReport::Frame(r) => r.write_text(out),
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
    if is_frame(path)? {
        let schunk =
            SChunk::open(path, OpenMode::Read).with_context(|| format!("cannot open {name}"))?;
        Ok(InfoReport::Frame(FrameReport::of(&name, &schunk)?))
    } else {
        Ok(InfoReport::Chunk(ChunkReport::of(
            &name,
            &chunk::read(path)?,
        )?))
    }
}

/// The report of a file whose bytes are `bytes` (a contiguous frame or a chunk), as
/// [`report()`] gives it for a file named `name` holding them.
///
/// # Errors
/// As [`report()`].
pub fn report_bytes(name: &str, bytes: &[u8]) -> Result<InfoReport> {
    if bytes.starts_with(FRAME_MAGIC) {
        let io = MemIo::from_frame(bytes.to_vec());
        let schunk = SChunk::from_io(Box::new(io), OpenMode::Read, SyncPolicy::None)
            .with_context(|| format!("cannot open {name}"))?;
        Ok(InfoReport::Frame(FrameReport::of(name, &schunk)?))
    } else {
        Ok(InfoReport::Chunk(ChunkReport::of(name, bytes)?))
    }
}

/// Whether `path` is a frame: a sparse frame directory, or a file that starts as frames do.
///
/// # Errors
/// The file cannot be opened or read.
pub fn is_frame(path: &Path) -> Result<bool> {
    if path.is_dir() {
        return Ok(true);
    }
    let mut head = [0u8; FRAME_MAGIC.len()];
    let mut file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let n = file
        .read(&mut head)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(head[..n] == *FRAME_MAGIC)
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
        Value::Boolean(b) => json!(b),
        Value::Integer(i) => i
            .as_i64()
            .map(Json::from)
            .or_else(|| i.as_u64().map(Json::from))
            .unwrap_or(Json::Null),
        Value::F32(f) => json!(f),
        Value::F64(f) => json!(f),
        Value::String(s) => json!(s.as_str().unwrap_or_default()),
        Value::Binary(b) => json!(hex(b)),
        Value::Array(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::Map(pairs) => {
            let mut m = Map::new();
            for (k, v) in pairs {
                let key = match k {
                    Value::String(s) => s.as_str().unwrap_or_default().to_owned(),
                    other => other.to_string(),
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
            codec_id: cp.codec,
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

    fn cparams() -> CParams {
        CParams {
            typesize: 4,
            codec: 1,
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
    fn array(shape: &[i64]) -> Vec<u8> {
        let nitems: i64 = shape.iter().product();
        let data: Vec<u8> = (0..nitems as u16).flat_map(u16::to_le_bytes).collect();
        let params = ArrayParams::new(shape, 2).dtype("<u2");
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
            (Value::from("a"), Value::Binary(vec![0xab, 0x01])),
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
}
