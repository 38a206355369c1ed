//! A thin tool over `strata::schunk` for the interop tests (tests/interop/test_frames.py),
//! until the `strata` CLI grows frame commands.
//!
//! * `frame_tool dump <frame> <data-out>`: prints the frame as JSON (nchunks, chunksize,
//!   typesize, nbytes, cbytes, frame_len, cparams, metalayers and decompressed vlmetalayers
//!   as hex, each chunk's nbytes/cbytes/kind) and writes the decompressed data to
//!   `<data-out>`.
//! * `frame_tool write <spec.json> <raw> <out>`: builds a frame from the bytes of `<raw>`
//!   following the JSON spec: `location` (`file`, `dir` or `memory` = a cframe written to
//!   `<out>`), `cparams`, `metalayers` (name → hex), `sync`, and `ops`, a list of
//!   `{"op": "append"|"insert"|"update", "n", "start", "stop"}` (a byte range of `<raw>`,
//!   compressed as one chunk), `{"op": "append_data", "start", "stop"}`, `{"op": "special",
//!   "n"?, "kind", "nbytes", "how": "append"|"insert"|"update"}`, `{"op": "delete", "n"}`,
//!   `{"op": "fill_special", "nitems", "kind", "chunksize"}`, `{"op": "vlmeta", "name",
//!   "hex"}`, `{"op": "vlmeta_delete", "name"}`, `{"op": "meta_update", "name", "hex"}`,
//!   `{"op": "reopen"}`.
//! * `frame_tool crash <spec.json> <raw> <out> <k>`: builds the spec's frame in memory up to
//!   its last op, runs the last op on a store that fails at its `k`-th write, and writes what
//!   the store then holds to `<out>` (for checking that python-blosc2 opens every state).
//! * `frame_tool range <frame> <nchunk> <start> <stop> <out>`: a lazy partial read.

use serde_json::{json, Value as Json};
use std::path::PathBuf;
use strata::chunk::{special_chunk, CParams, SplitMode};
use strata::format::chunk::SpecialType;
use strata::format::frame::ChunkLoc;
use strata::frame::{FaultPlan, FaultyIo, MemIo, OpenMode, SyncPolicy};
use strata::schunk::{Location, OpenOptions, SChunk, SChunkOptions};
use strata::{CodecId, FilterId};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Res<Vec<u8>> {
    (0..s.len())
        .step_by(2)
        .map(|i| Ok(u8::from_str_radix(&s[i..i + 2], 16)?))
        .collect()
}

fn kind_name(k: SpecialType) -> &'static str {
    k.name()
}

fn kind_of(s: &str) -> Res<SpecialType> {
    Ok(match s {
        "zero" => SpecialType::Zero,
        "nan" => SpecialType::Nan,
        "uninit" => SpecialType::Uninit,
        other => return Err(format!("unknown special kind {other}").into()),
    })
}

fn dump(path: &str, out: &str) -> Res<()> {
    let s = SChunk::open(path, OpenMode::Read)?;
    let cp = s.cparams();
    let mut metas = serde_json::Map::new();
    for n in s.meta_names() {
        metas.insert(n.into(), json!(hex(s.meta(n).unwrap_or_default())));
    }
    let mut vl = serde_json::Map::new();
    for n in s.vlmeta_names() {
        vl.insert(n.into(), json!(hex(&s.vlmeta(n)?)));
    }
    let mut chunks = Vec::new();
    for i in 0..s.nchunks() {
        let info = s.chunk_info(i)?;
        let kind = match info.loc {
            ChunkLoc::Special(k) => kind_name(k),
            ChunkLoc::Stored(_) => "stored",
        };
        chunks.push(json!({"nbytes": info.nbytes, "cbytes": info.cbytes, "kind": kind}));
    }
    std::fs::write(out, s.decompress_all()?)?;
    let j = json!({
        "nchunks": s.nchunks(),
        "chunksize": s.chunksize(),
        "typesize": s.typesize(),
        "nbytes": s.nbytes(),
        "cbytes": s.cbytes(),
        "frame_len": s.frame_len(),
        "sparse": s.is_sparse(),
        "cparams": {
            "codec": cp.codec.0, "clevel": cp.clevel, "typesize": cp.typesize,
            "blocksize": cp.blocksize, "splitmode": cp.splitmode as u8,
            "filters": cp.filters.map(u8::from), "filters_meta": cp.filters_meta, "use_dict": cp.use_dict,
        },
        "metalayers": metas,
        "vlmetalayers": vl,
        "chunks": chunks,
    });
    println!("{j}");
    Ok(())
}

fn get_usize(j: &Json, k: &str) -> Res<usize> {
    j[k].as_u64()
        .map(|v| v as usize)
        .ok_or_else(|| format!("missing {k}").into())
}

fn cparams_of(j: &Json) -> Res<CParams> {
    let mut cp = CParams::default();
    if let Some(v) = j["codec"].as_u64() {
        cp.codec = CodecId(v as u8);
    }
    if let Some(v) = j["clevel"].as_u64() {
        cp.clevel = v as u8;
    }
    if let Some(v) = j["typesize"].as_u64() {
        cp.typesize = v as usize;
    }
    if let Some(v) = j["blocksize"].as_u64() {
        cp.blocksize = v as usize;
    }
    if let Some(v) = j["splitmode"].as_u64() {
        cp.splitmode = SplitMode::from_code(v as u8)?;
    }
    if let Some(a) = j["filters"].as_array() {
        for (i, f) in a.iter().enumerate().take(6) {
            cp.filters[i] = FilterId(f.as_u64().unwrap_or(0) as u8);
        }
    }
    if let Some(a) = j["filters_meta"].as_array() {
        for (i, f) in a.iter().enumerate().take(6) {
            cp.filters_meta[i] = f.as_u64().unwrap_or(0) as u8;
        }
    }
    cp.nthreads = j["nthreads"].as_u64().unwrap_or(1) as usize;
    Ok(cp)
}

fn write(spec: &str, raw: &str, out: &str) -> Res<()> {
    let spec: Json = serde_json::from_str(&std::fs::read_to_string(spec)?)?;
    let raw = std::fs::read(raw)?;
    let cparams = cparams_of(&spec["cparams"])?;
    let mut metalayers = Vec::new();
    if let Some(m) = spec["metalayers"].as_object() {
        for (k, v) in m {
            metalayers.push((k.clone(), unhex(v.as_str().unwrap_or(""))?));
        }
    }
    let sync = match spec["sync"].as_str().unwrap_or("onclose") {
        "none" => SyncPolicy::None,
        "every" => SyncPolicy::EveryWrite,
        _ => SyncPolicy::OnClose,
    };
    let mut opts = SChunkOptions::default()
        .with_cparams(cparams.clone())
        .with_dparams(strata::chunk::DParams::default().with_nthreads(cparams.nthreads))
        .with_chunksize(spec["chunksize"].as_u64().unwrap_or(0) as usize)
        .with_sync(sync)
        .with_overwrite(true);
    opts.metalayers = metalayers;
    let loc = spec["location"].as_str().unwrap_or("file");
    let location = match loc {
        "file" => Location::File(PathBuf::from(out)),
        "dir" => Location::Dir(PathBuf::from(out)),
        _ => Location::Memory,
    };
    let mut s = SChunk::create(&location, &opts)?;
    let empty = Vec::new();
    for op in spec["ops"].as_array().unwrap_or(&empty) {
        if op["op"].as_str() == Some("reopen") {
            if loc != "memory" {
                s.close()?;
                s = SChunk::open(out, OpenMode::ReadWrite)?;
            }
            continue;
        }
        apply(&mut s, op, &raw, &cparams)?;
    }
    if loc == "memory" {
        std::fs::write(out, s.to_cframe()?)?;
    }
    s.close()?;
    Ok(())
}

fn apply(s: &mut SChunk, op: &Json, raw: &[u8], cparams: &CParams) -> Res<()> {
    let range = || -> Res<&[u8]> { Ok(&raw[get_usize(op, "start")?..get_usize(op, "stop")?]) };
    match op["op"].as_str().unwrap_or("") {
        "append" => {
            s.append_buffer(range()?)?;
        }
        "append_data" => {
            s.append_data(range()?)?;
        }
        "insert" => {
            let c = strata::chunk::compress_vec(cparams, range()?)?;
            s.insert_chunk(get_usize(op, "n")?, &c)?;
        }
        "update" => s.update_buffer(get_usize(op, "n")?, range()?)?,
        "special" => {
            let c = special_chunk(
                cparams,
                kind_of(op["kind"].as_str().unwrap_or(""))?,
                get_usize(op, "nbytes")?,
                None,
            )?;
            match op["how"].as_str().unwrap_or("append") {
                "insert" => {
                    s.insert_chunk(get_usize(op, "n")?, &c)?;
                }
                "update" => s.update_chunk(get_usize(op, "n")?, &c)?,
                _ => {
                    s.append_chunk(&c)?;
                }
            }
        }
        "delete" => {
            s.delete_chunk(get_usize(op, "n")?)?;
        }
        "fill_special" => {
            s.fill_special(
                get_usize(op, "nitems")? as u64,
                kind_of(op["kind"].as_str().unwrap_or(""))?,
                get_usize(op, "chunksize")?,
            )?;
        }
        "vlmeta" => s.vlmeta_set(
            op["name"].as_str().unwrap_or(""),
            &unhex(op["hex"].as_str().unwrap_or(""))?,
            None,
        )?,
        "vlmeta_delete" => s.vlmeta_delete(op["name"].as_str().unwrap_or(""))?,
        "meta_update" => s.meta_update(
            op["name"].as_str().unwrap_or(""),
            &unhex(op["hex"].as_str().unwrap_or(""))?,
        )?,
        other => return Err(format!("unknown op {other}").into()),
    }
    Ok(())
}

/// Builds the spec's frame in memory up to its last op, then runs the last op on a store
/// that fails at mutation `k`, and writes what the store holds then to `out`. Prints
/// `fired` or `completed`.
fn crash(spec: &str, raw: &str, out: &str, k: &str) -> Res<()> {
    let spec_j: Json = serde_json::from_str(&std::fs::read_to_string(spec)?)?;
    let raw = std::fs::read(raw)?;
    let cparams = cparams_of(&spec_j["cparams"])?;
    let mut metalayers = Vec::new();
    if let Some(m) = spec_j["metalayers"].as_object() {
        for (name, v) in m {
            metalayers.push((name.clone(), unhex(v.as_str().unwrap_or(""))?));
        }
    }
    let opts = SChunkOptions {
        cparams: cparams.clone(),
        metalayers,
        ..SChunkOptions::default()
    };
    let ops = spec_j["ops"].as_array().ok_or("no ops")?;
    let (last, first) = ops.split_last().ok_or("no ops")?;
    let mut s = SChunk::new(&opts)?;
    for op in first {
        apply(&mut s, op, &raw, &cparams)?;
    }
    let mem = MemIo::from_frame(s.to_cframe()?);
    let plan = FaultPlan::new(k.parse()?, false);
    let faulty = FaultyIo::new(Box::new(mem.clone()), plan.clone());
    let mut s = SChunk::from_io(
        Box::new(faulty),
        &OpenOptions::new(OpenMode::ReadWrite).with_sync(SyncPolicy::None),
    )?;
    let _ = apply(&mut s, last, &raw, &cparams);
    drop(s);
    std::fs::write(out, mem.snapshot().frame)?;
    println!("{}", if plan.fired() { "fired" } else { "completed" });
    Ok(())
}

fn range(path: &str, n: &str, start: &str, stop: &str, out: &str) -> Res<()> {
    let s = SChunk::open(path, OpenMode::Read)?;
    let (start, stop): (usize, usize) = (start.parse()?, stop.parse()?);
    let mut buf = vec![0u8; stop.saturating_sub(start)];
    s.decompress_range(n.parse()?, start..stop, &mut buf)?;
    std::fs::write(out, buf)?;
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let r = match args.get(1).map(String::as_str) {
        Some("dump") if args.len() == 4 => dump(&args[2], &args[3]),
        Some("write") if args.len() == 5 => write(&args[2], &args[3], &args[4]),
        Some("crash") if args.len() == 6 => crash(&args[2], &args[3], &args[4], &args[5]),
        Some("range") if args.len() == 7 => range(&args[2], &args[3], &args[4], &args[5], &args[6]),
        _ => Err(
            "usage: frame_tool dump <frame> <data-out> | write <spec.json> <raw> <out> | \
                  range <frame> <nchunk> <start> <stop> <out>"
                .into(),
        ),
    };
    if let Err(e) = r {
        eprintln!("frame_tool: {e}");
        std::process::exit(1);
    }
}
