//! `strata info FILE`: what a Blosc2 file holds — a chunk, a frame (file or sparse
//! directory) or a b2nd array — as text or one JSON object.

use crate::chunk_cmd;
use crate::human;
use anyhow::{Context, Result};
use serde_json::{json, Map, Value as Json};
use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use strata::format::b2nd::{B2ndMeta, LEGACY_METALAYER, METALAYER as B2ND};
use strata::format::chunk::SpecialType;
use strata::format::frame::ChunkLoc;
use strata::frame::OpenMode;
use strata::registry::Registry;
use strata::schunk::values::{as_tuple, Value};
use strata::schunk::SChunk;

/// The bytes every frame starts with: msgpack fixarray(14), fixstr(8) `"b2frame\0"`.
const FRAME_MAGIC: &[u8] = b"\x9e\xa8b2frame\0";

/// Runs `strata info`.
///
/// # Errors
/// Unreadable or invalid input; the message names the file and what is wrong.
pub fn run(path: &Path, as_json: bool) -> Result<()> {
    if is_frame(path)? {
        frame(path, as_json)
    } else {
        chunk_cmd::info(path, as_json)
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
pub fn stored_bytes(schunk: &SChunk) -> u64 {
    schunk.frame_len()
        + if schunk.is_sparse() {
            schunk.cbytes()
        } else {
            0
        }
}

/// A msgpack value as JSON: tuples as lists, binary as a hex string, maps with text keys.
pub fn to_json(v: &Value) -> Json {
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

/// One metalayer or vlmetalayer for the report: its size and its value when it is msgpack.
fn layer_json(name: &str, content: &[u8], value: Option<Value>) -> Json {
    json!({
        "name": name,
        "size": content.len(),
        "value": value.as_ref().map_or_else(|| json!(hex(content)), to_json),
    })
}

fn frame(path: &Path, as_json: bool) -> Result<()> {
    let name = path.display();
    let schunk =
        SChunk::open(path, OpenMode::Read).with_context(|| format!("cannot open {name}"))?;
    let registry = Registry::global();
    let cp = schunk.cparams();
    let filters: Vec<Json> = cp
        .filters
        .iter()
        .zip(&cp.filters_meta)
        .enumerate()
        .filter(|(_, (&id, _))| id != 0)
        .map(|(slot, (&id, &meta))| {
            let fname = registry
                .filter(id)
                .map_or_else(|_| format!("id{id}"), |f| f.name().to_owned());
            json!({"slot": slot, "id": id, "name": fname, "meta": meta})
        })
        .collect();
    let codec = registry
        .codec(cp.codec)
        .map_or_else(|_| format!("id{}", cp.codec), |c| c.name().to_owned());
    let (mut zeros, mut nans, mut uninit, mut stored_cbytes) = (0usize, 0usize, 0usize, 0u64);
    for nchunk in 0..schunk.nchunks() {
        let info = schunk
            .chunk_info(nchunk)
            .with_context(|| format!("{name}: chunk {nchunk}"))?;
        match info.loc {
            ChunkLoc::Special(SpecialType::Zero) => zeros += 1,
            ChunkLoc::Special(SpecialType::Nan) => nans += 1,
            ChunkLoc::Special(_) => uninit += 1,
            ChunkLoc::Stored(_) => stored_cbytes += info.cbytes as u64,
        }
    }
    let metalayers: Vec<Json> = schunk
        .meta_names()
        .into_iter()
        .map(|m| {
            let content = schunk.meta(m).unwrap_or_default();
            layer_json(m, content, schunk.meta_value(m).ok())
        })
        .collect();
    let vlmetalayers: Vec<Json> = schunk
        .vlmeta_names()
        .into_iter()
        .map(|m| {
            let content = schunk
                .vlmeta(m)
                .with_context(|| format!("{name}: vlmetalayer {m}"))?;
            Ok(layer_json(m, &content, schunk.vlmeta_value(m).ok()))
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
    let nbytes = b2nd.as_ref().map_or(schunk.nbytes(), |m| {
        m.shape.iter().map(|&d| d.max(0) as u64).product::<u64>() * schunk.typesize() as u64
    });
    let frame_len = stored_bytes(&schunk);
    let obj = json!({
        "path": name.to_string(),
        "kind": if schunk.is_sparse() { "sparse frame" } else { "contiguous frame" },
        "frame_len": schunk.frame_len(),
        "stored_bytes": frame_len,
        "nchunks": schunk.nchunks(),
        "chunksize": schunk.chunksize(),
        "typesize": schunk.typesize(),
        "nbytes": nbytes,
        "cbytes": stored_cbytes,
        "cratio": nbytes as f64 / frame_len.max(1) as f64,
        "codec": codec,
        "codec_id": cp.codec,
        "codec_meta": cp.codec_meta,
        "clevel": cp.clevel,
        "blocksize": cp.blocksize,
        "filters": filters,
        "special_chunks": {"zero": zeros, "nan": nans, "uninit": uninit},
        "metalayers": metalayers,
        "vlmetalayers": vlmetalayers,
        "b2nd": b2nd.as_ref().map(|m| json!({
            "shape": m.shape,
            "chunkshape": m.chunkshape,
            "blockshape": m.blockshape,
            "dtype": m.dtype,
        })),
    });
    let mut out = std::io::stdout().lock();
    if as_json {
        writeln!(out, "{obj}")?;
        return Ok(());
    }
    writeln!(
        out,
        "{}: {}",
        name,
        obj["kind"].as_str().unwrap_or_default()
    )?;
    if let Some(m) = &b2nd {
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
        "  nbytes:       {} ({nbytes} bytes)",
        human::bytes(nbytes)
    )?;
    writeln!(
        out,
        "  stored:       {} ({frame_len} bytes, cratio {:.2})",
        human::bytes(frame_len),
        obj["cratio"].as_f64().unwrap_or_default()
    )?;
    writeln!(
        out,
        "  chunks:       {} of {} (typesize {}); special: {zeros} zero, {nans} NaN, {uninit} uninit",
        schunk.nchunks(),
        schunk
            .chunksize()
            .map_or_else(|| "-".to_owned(), |c| human::bytes(c as u64)),
        schunk.typesize()
    )?;
    writeln!(
        out,
        "  codec:        {codec} (id {}, clevel {}, meta {})",
        cp.codec, cp.clevel, cp.codec_meta
    )?;
    let filter_text: Vec<String> = filters
        .iter()
        .map(|f| {
            format!(
                "{} (meta {})",
                f["name"].as_str().unwrap_or_default(),
                f["meta"]
            )
        })
        .collect();
    writeln!(
        out,
        "  filters:      {}",
        if filter_text.is_empty() {
            "none".to_owned()
        } else {
            filter_text.join(", ")
        }
    )?;
    for (title, layers) in [("metalayer", &metalayers), ("vlmetalayer", &vlmetalayers)] {
        for l in layers {
            writeln!(
                out,
                "  {title} {}: {} bytes = {}",
                l["name"].as_str().unwrap_or_default(),
                l["size"],
                l["value"]
            )?;
        }
    }
    Ok(())
}
