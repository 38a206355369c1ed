//! The oracles of Strata's fuzz targets, and the layout of their inputs.
//!
//! Every chunk is untrusted: whatever the bytes, decompression returns `Ok` or a typed
//! [`strata::Error`], never panics, and the different ways of reading one chunk agree.
//! `tests/bad_input.rs` includes this file (`#[path]`) to replay saved crashes through the
//! same checks, so it uses nothing but `strata` and `std`.
//!
//! Input layouts (the prefix is followed by the chunk bytes):
//! * `decompress`: `fill: u8`, `slack: i16 LE`. The destination holds `nbytes + slack` bytes
//!   (clamped to `0..=MAX_OUT`), every one `fill` beforehand.
//! * `getitem`: `start: u32 LE`, `nitems: u16 LE`; `u32::MAX` / `u16::MAX` mean `usize::MAX`.

use strata::chunk::{
    decompress, decompress_ctx, decompress_vec, decompress_vec_ctx, getitem, getitem_ctx, Context,
    DParams,
};
use strata::format::chunk::{ChunkHeader, SpecialType};

/// Length of the `decompress` input prefix.
pub const DECOMPRESS_PREFIX: usize = 3;
/// Length of the `getitem` input prefix.
pub const GETITEM_PREFIX: usize = 6;
/// Largest buffer, in bytes, the checks allocate. Chunks whose header announces more are
/// still parsed and decoded into a smaller buffer, but never decompressed whole: a 32-byte
/// special chunk may rightly stand for 2 GiB of zeros.
pub const MAX_OUT: usize = 4 << 20;

/// A `decompress` input: prefix, then `chunk`.
#[must_use]
pub fn decompress_input(fill: u8, slack: i16, chunk: &[u8]) -> Vec<u8> {
    let mut v = vec![fill];
    v.extend_from_slice(&slack.to_le_bytes());
    v.extend_from_slice(chunk);
    v
}

/// A `getitem` input: prefix, then `chunk`.
#[must_use]
pub fn getitem_input(start: u32, nitems: u16, chunk: &[u8]) -> Vec<u8> {
    let mut v = start.to_le_bytes().to_vec();
    v.extend_from_slice(&nitems.to_le_bytes());
    v.extend_from_slice(chunk);
    v
}

/// Decoding on one thread and on several must give the same bytes and the same error.
#[allow(clippy::needless_update)] // DParams may gain fields.
fn threads(nthreads: usize) -> DParams {
    DParams {
        nthreads,
        ..DParams::default()
    }
}

/// The outcome of a decode, comparable across thread counts: the bytes, or the error code.
fn outcome(r: &strata::Result<Vec<u8>>) -> Result<&[u8], i32> {
    r.as_ref().map(Vec::as_slice).map_err(strata::Error::code)
}

/// Every error code a decoder may return (`strata::Error::code`).
const KNOWN_CODES: [i32; 13] = [-3, -4, -5, -6, -7, -8, -9, -10, -11, -17, -18, -33, -1000];

fn check_error(e: &strata::Error) {
    let code = e.code();
    assert!(
        KNOWN_CODES.contains(&code),
        "unexpected error code {code}: {e}"
    );
    // The message must format without panicking.
    assert!(!e.to_string().is_empty());
}

/// True when decoding this chunk whole could need more than [`MAX_OUT`] bytes.
fn too_big(h: &ChunkHeader) -> bool {
    h.nbytes > MAX_OUT
}

/// True when a getitem on this chunk may allocate more than [`MAX_OUT`] bytes (one block, or
/// the whole chunk for variable-length blocks).
fn getitem_too_big(h: &ChunkHeader) -> bool {
    if h.special != SpecialType::None || h.memcpyed() {
        return false;
    }
    if h.vl_blocks() {
        h.nbytes > MAX_OUT
    } else {
        h.blocksize.min(h.nbytes) > MAX_OUT
    }
}

/// The `decompress` oracle.
///
/// # Panics
/// When the library misbehaves: a panic inside it, an `Ok` with the wrong length, bytes
/// written past `nbytes`, output that depends on the destination's previous contents, or
/// `decompress` and `decompress_vec` disagreeing.
pub fn check_decompress(data: &[u8]) {
    if data.len() < DECOMPRESS_PREFIX {
        return;
    }
    let fill = data[0];
    let slack = isize::from(i16::from_le_bytes([data[1], data[2]]));
    let chunk = &data[DECOMPRESS_PREFIX..];
    let header = ChunkHeader::parse(chunk).ok();
    let nbytes = header.as_ref().map(|h| h.nbytes);

    let whole = match &header {
        Some(h) if !too_big(h) => Some(decompress_vec(chunk)),
        _ => None,
    };
    if let Some(r) = &whole {
        match r {
            Ok(v) => assert_eq!(Some(v.len()), nbytes, "decompress_vec length"),
            Err(e) => check_error(e),
        }
        let ctx = Context::global();
        let serial = decompress_vec_ctx(&ctx, &threads(1), chunk);
        let parallel = decompress_vec_ctx(&ctx, &threads(4), chunk);
        assert_eq!(
            outcome(&serial),
            outcome(&parallel),
            "decompress_vec: 1 thread and 4 differ"
        );
        assert_eq!(
            outcome(&serial),
            outcome(r),
            "decompress_vec: 1 thread and the default differ"
        );
        if let Some(n) = nbytes {
            let (mut a, mut b) = (vec![0u8; n], vec![0u8; n]);
            let ra = decompress_ctx(&ctx, &threads(1), chunk, &mut a).map_err(|e| e.code());
            let rb = decompress_ctx(&ctx, &threads(4), chunk, &mut b).map_err(|e| e.code());
            assert_eq!(ra, rb, "decompress: 1 thread and 4 differ");
            assert!(
                ra.is_err() || a == b,
                "decompress: 1 thread and 4 give different bytes"
            );
        }
    }

    let base = nbytes.unwrap_or(chunk.len()).min(MAX_OUT);
    let len = base.saturating_add_signed(slack).min(MAX_OUT);
    let mut dst = vec![fill; len];
    match decompress(chunk, &mut dst) {
        Ok(n) => {
            assert_eq!(
                Some(n),
                nbytes,
                "decompress returned a length other than nbytes"
            );
            assert!(
                dst[n..].iter().all(|&b| b == fill),
                "decompress wrote past nbytes"
            );
            match &whole {
                Some(Ok(v)) => assert!(dst[..n] == v[..], "decompress and decompress_vec differ"),
                Some(Err(e)) => panic!("decompress succeeded but decompress_vec failed: {e}"),
                None => {}
            }
        }
        Err(e) => {
            check_error(&e);
            let small = nbytes.is_some_and(|n| len < n);
            match &whole {
                Some(Ok(_)) => {
                    assert!(
                        small && e.code() == -6,
                        "decompress failed ({e}) where decompress_vec succeeded"
                    );
                }
                Some(Err(ev)) => assert!(
                    e.code() == ev.code() || (small && e.code() == -6),
                    "decompress failed with {e} but decompress_vec with {ev}"
                ),
                None => {}
            }
        }
    }
}

/// The `getitem` oracle.
///
/// # Panics
/// When the library misbehaves: a panic inside it, an `Ok` of the wrong length, bytes
/// written past the items, or items that differ from the whole decompressed chunk.
pub fn check_getitem(data: &[u8]) {
    if data.len() < GETITEM_PREFIX {
        return;
    }
    let start = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    let nitems = u16::from_le_bytes([data[4], data[5]]);
    let start = if start == u32::MAX {
        usize::MAX
    } else {
        start as usize
    };
    let nitems = if nitems == u16::MAX {
        usize::MAX
    } else {
        usize::from(nitems)
    };
    let chunk = &data[GETITEM_PREFIX..];
    let header = ChunkHeader::parse(chunk).ok();
    if header.as_ref().is_some_and(getitem_too_big) {
        return;
    }
    let typesize = header.as_ref().map_or(1, |h| h.typesize);
    let want = nitems.checked_mul(typesize);
    let len = want.unwrap_or(usize::MAX).min(MAX_OUT);
    const FILL: u8 = 0xa5;
    let mut dst = vec![FILL; len];
    let got = getitem(chunk, start, nitems, &mut dst);
    {
        let ctx = Context::global();
        let (mut a, mut b) = (vec![FILL; len], vec![FILL; len]);
        let ra = getitem_ctx(&ctx, &threads(1), chunk, start, nitems, &mut a).map_err(|e| e.code());
        let rb = getitem_ctx(&ctx, &threads(4), chunk, start, nitems, &mut b).map_err(|e| e.code());
        assert_eq!(ra, rb, "getitem: 1 thread and 4 differ");
        assert!(
            ra.is_err() || a == b,
            "getitem: 1 thread and 4 give different bytes"
        );
        assert_eq!(
            ra,
            got.as_ref().copied().map_err(strata::Error::code),
            "getitem: 1 thread and the default differ"
        );
    }

    let whole = match &header {
        Some(h) if !too_big(h) => decompress_vec(chunk).ok(),
        _ => None,
    };
    // The item range in bytes, when it lies inside the chunk.
    let range = header.as_ref().and_then(|h| {
        let lo = start.checked_mul(typesize)?;
        let hi = start.checked_add(nitems)?.checked_mul(typesize)?;
        (hi <= h.nbytes).then_some(lo..hi)
    });
    match got {
        Ok(n) => {
            assert_eq!(
                Some(n),
                want,
                "getitem returned a length other than nitems * typesize"
            );
            assert!(
                range.is_some(),
                "getitem succeeded for items outside the chunk"
            );
            assert!(
                dst[n..].iter().all(|&b| b == FILL),
                "getitem wrote past its items"
            );
            if let (Some(v), Some(r)) = (&whole, range) {
                assert!(
                    dst[..n] == v[r],
                    "getitem differs from the decompressed chunk"
                );
            }
        }
        Err(e) => {
            check_error(&e);
            if whole.is_some() {
                // The chunk decodes, so the only acceptable failures are about the request.
                match range {
                    None => assert_eq!(e.code(), -33, "out-of-range getitem gave {e}"),
                    Some(r) => {
                        assert!(
                            r.len() > len && e.code() == -6,
                            "getitem failed ({e}) on a chunk that decodes"
                        );
                    }
                }
            }
        }
    }
}

// Sample chunks and data, shared by the corpus generator and tests/bad_input.rs.

/// Deterministic data: little-endian `u32` items on a slow ramp with a little noise, so
/// that shuffled streams compress and others fall back to raw copies.
pub fn field(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    let mut out: Vec<u8> = (0..n.div_ceil(4) as u32)
        .flat_map(|k| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (k.wrapping_mul(3).wrapping_add(seed) / 5 + x % 2).to_le_bytes()
        })
        .collect();
    out.truncate(n);
    out
}

/// Text-like data that zstd can train a dictionary on.
pub fn text(n: usize) -> Vec<u8> {
    let words = [
        "temperature",
        "pressure",
        "humidity",
        "wind",
        "grid",
        "cell",
        "lat",
        "lon",
        "2024",
        "-12.5",
    ];
    let mut out = Vec::with_capacity(n);
    let mut i = 0usize;
    while out.len() < n {
        out.extend_from_slice(words[(i * 7 + i / 3) % words.len()].as_bytes());
        out.push(if i.is_multiple_of(11) { b'\n' } else { b' ' });
        i += 1;
    }
    out.truncate(n);
    out
}

pub fn le32(v: usize) -> [u8; 4] {
    i32::try_from(v).expect("small").to_le_bytes()
}

/// A special chunk (zeros 1, NaN 2, value 3, uninit 4) as C-Blosc2's constructors write it.
pub fn special(kind: u8, typesize: u8, nbytes: usize, value: &[u8]) -> Vec<u8> {
    let mut c = vec![0u8; 32];
    c[0] = 5;
    c[1] = 1;
    c[2] = 0x05;
    c[3] = typesize;
    c[4..8].copy_from_slice(&le32(nbytes));
    c[8..12].copy_from_slice(&le32(nbytes.clamp(1, 4096)));
    c[12..16].copy_from_slice(&le32(32 + value.len()));
    c[31] = kind << 4;
    c.extend_from_slice(value);
    c
}

/// Most chunks a fuzzed frame may announce: its offsets index is allocated whole.
pub const MAX_FRAME_CHUNKS: i64 = 1 << 16;

/// The number of chunks a frame's bytes announce ([`FrameHeader::announced_nchunks`], the
/// offsets chunk read where a contiguous frame has it); 0 when the bytes do not say. The
/// library allocates the offsets index whole (a consistent frame may announce up to
/// BLOSC2_MAX_BUFFERSIZE / 8 chunks, mostly special), so the fuzzer skips large ones to keep
/// its memory small.
///
/// [`FrameHeader::announced_nchunks`]: strata::format::frame::FrameHeader::announced_nchunks
fn announced_chunks(data: &[u8]) -> i64 {
    let Ok(h) = strata::format::frame::FrameHeader::parse_fixed(data) else {
        return 0;
    };
    let offsets_nbytes = || {
        usize::try_from(h.cbytes)
            .ok()
            .and_then(|c| c.checked_add(h.header_len + 4))
            .and_then(|at| data.get(at..at.checked_add(4)?))
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or(strata::Error::Malformed {
                what: "no offsets chunk",
            })
    };
    h.announced_nchunks(offsets_nbytes)
        .map_or(0, |n| i64::try_from(n).unwrap_or(i64::MAX))
}

/// True when `data` is a frame announcing more than [`MAX_FRAME_CHUNKS`] chunks: the targets
/// that open frames skip it to keep their memory small.
#[must_use]
pub fn frame_too_big(data: &[u8]) -> bool {
    announced_chunks(data) > MAX_FRAME_CHUNKS
}

/// `frame` fuzz target: opens the bytes as a contiguous frame (read-only, in memory) and reads
/// everything it holds — metalayers, vlmetalayers, every chunk whole, compressed and in part —
/// checking that the ways of reading a chunk agree and that errors are typed, never panics.
pub fn check_frame(data: &[u8]) {
    use strata::frame::{MemIo, OpenMode, SyncPolicy};
    use strata::schunk::{OpenOptions, SChunk};
    if frame_too_big(data) {
        return;
    }
    let io = MemIo::from_frame(data.to_vec());
    let s = match SChunk::from_io(
        Box::new(io),
        &OpenOptions::new(OpenMode::Read).with_sync(SyncPolicy::None),
    ) {
        Ok(s) => s,
        Err(e) => return check_frame_error(&e),
    };
    for name in s.meta_names() {
        let _ = s.meta_value(name);
    }
    for name in s.vlmeta_names() {
        if let Err(e) = s.vlmeta(name) {
            check_frame_error(&e);
        }
    }
    for n in 0..s.nchunks().min(64) {
        let info = match s.chunk_info(n) {
            Ok(i) => i,
            Err(e) => {
                check_frame_error(&e);
                continue;
            }
        };
        if info.nbytes > MAX_OUT {
            continue;
        }
        let whole = s.decompress_chunk_vec(n);
        let mut part = vec![0u8; info.nbytes / 2];
        let lo = info.nbytes / 4;
        let partial = s.decompress_range(n, lo..lo + part.len(), &mut part);
        match (&whole, &partial) {
            (Ok(w), Ok(_)) => assert_eq!(&w[lo..lo + part.len()], &part[..], "chunk {n}"),
            (Err(e), _) | (_, Err(e)) => check_frame_error(e),
        }
    }
}

fn check_frame_error(e: &strata::Error) {
    const FRAME_CODES: [i32; 8] = [-11, -13, -15, -24, -33, -34, -28, -12];
    let code = e.code();
    assert!(
        KNOWN_CODES.contains(&code) || FRAME_CODES.contains(&code),
        "unexpected error code {code}: {e}"
    );
    assert!(!e.to_string().is_empty());
}

/// Seed frames for the `frame` target: contiguous frames with stored, special and updated
/// chunks, metalayers and vlmetalayers, made by the library.
#[must_use]
pub fn frames() -> Vec<(String, Vec<u8>)> {
    use strata::chunk::{special_chunk, CParams};
    use strata::format::chunk::SpecialType;
    use strata::schunk::{SChunk, SChunkOptions};
    let mut out = Vec::new();
    for (codec, filters) in [
        (0u8, [0, 0, 0, 0, 0, 1]),
        (1, [0, 0, 0, 0, 3, 1]),
        (5, [0, 0, 0, 0, 0, 2]),
    ] {
        let cparams = CParams {
            typesize: 4,
            codec: strata::CodecId(codec),
            filters: filters.map(strata::FilterId),
            blocksize: 1024,
            nthreads: 1,
            ..CParams::default()
        };
        let o = SChunkOptions {
            cparams: cparams.clone(),
            metalayers: vec![(
                "b2nd".into(),
                vec![0x97, 0, 1, 0x91, 0xd3, 0, 0, 0, 0, 0, 0, 0x27, 0x10],
            )],
            chunksize: 4096,
            ..SChunkOptions::default()
        };
        let mut s = SChunk::new(&o).expect("schunk");
        let data = field(4 * 4096, 4);
        s.append_data(&data[..4096 * 3]).expect("append");
        s.append_chunk(&special_chunk(&cparams, SpecialType::Zero, 4096, None).expect("zeros"))
            .expect("append zeros");
        s.update_buffer(1, &text(4096)).expect("update");
        s.append_buffer(&data[..1000]).expect("append short");
        s.vlmeta_set("vl", b"\xa5hello", None).expect("vlmeta");
        out.push((
            format!("frame-codec{codec}"),
            s.to_cframe().expect("cframe"),
        ));
    }
    let mut s = SChunk::new(&SChunkOptions {
        cparams: CParams {
            typesize: 8,
            ..CParams::default()
        },
        ..SChunkOptions::default()
    })
    .expect("schunk");
    s.fill_special(5000, SpecialType::Nan, 8 * 512)
        .expect("fill");
    out.push(("frame-fill-nan".into(), s.to_cframe().expect("cframe")));
    out
}
