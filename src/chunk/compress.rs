//! Compression of one chunk: blocks → filters → streams → codec, written as C-Blosc2 2.x/3.x
//! writes a version-5 chunk with the 32-byte extended header.
//!
//! Format: c-blosc2 `blosc/blosc2.c` (`blosc_compress_context`, `write_compression_header`,
//! `blosc_c`); `docs/chunk-format.md`.

use super::blocksize::{compute_blocksize, split_block};
use super::params::CParams;
use super::{job_threads, Context};
use crate::block::BlockContext;
use crate::codecs::Codec;
use crate::error::{Error, Result};
use crate::filters::Filter;
use crate::format::chunk::{
    ChunkHeader, SpecialType, B2FLAG_USEDICT, EXTENDED_HEADER_LENGTH, FLAG_BITSHUFFLE, FLAG_DELTA,
    FLAG_DONT_SPLIT, FLAG_MEMCPYED, FLAG_SHUFFLE, MAX_BUFFERSIZE, MAX_DICT_SIZE, MAX_FILTERS,
    MAX_TYPESIZE, MIN_BUFFERSIZE, VERSION_FORMAT_STABLE,
};
use crate::format::ids::FilterId;
use crate::scheduler::Runtime;
use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// A block's record always fits the worst-case size [`max_block_record`] gives it.
const BLOCK_TOO_BIG: Error = Error::Internal {
    what: "a block did not fit in its worst-case size",
};

/// The most bytes a chunk of `nbytes` input bytes can take: `nbytes + BLOSC2_MAX_OVERHEAD`.
#[must_use]
pub fn max_compressed_len(nbytes: usize) -> usize {
    nbytes + crate::format::chunk::MAX_OVERHEAD
}

/// Compresses `src` into one chunk written at the start of `dst`; returns the chunk's size
/// in bytes (`cbytes`).
///
/// With `dst.len() >= max_compressed_len(src.len())` this always succeeds. A smaller `dst`
/// works when the chunk fits; if compression does not fit the data is stored raw (memcpyed)
/// when that fits, as C-Blosc2 does.
///
/// # Errors
/// [`Error::MaxBufsizeExceeded`] for more than `BLOSC2_MAX_BUFFERSIZE` bytes;
/// The errors of [`CParams::validate`] for bad parameters;
/// [`Error::UnknownCodec`] / [`Error::UnknownFilter`] for unregistered IDs;
/// [`Error::DestinationTooSmall`] when nothing fits; a filter's or codec's own error.
pub fn compress(cparams: &CParams, src: &[u8], dst: &mut [u8]) -> Result<usize> {
    compress_ctx(&Context::global(), cparams, src, dst)
}

/// [`compress`] into a new vector of exactly `cbytes` bytes.
///
/// # Errors
/// As [`compress`].
pub fn compress_vec(cparams: &CParams, src: &[u8]) -> Result<Vec<u8>> {
    compress_vec_ctx(&Context::global(), cparams, src)
}

/// [`compress_vec`] on the registry and runtime of `ctx`.
///
/// # Errors
/// As [`compress`]; [`Error::MemoryAlloc`] when the output cannot be allocated.
pub fn compress_vec_ctx(ctx: &Context, cparams: &CParams, src: &[u8]) -> Result<Vec<u8>> {
    let cap = max_compressed_len(src.len());
    let mut out = crate::alloc::zeroed(cap)?;
    let n = compress_ctx(ctx, cparams, src, &mut out)?;
    out.truncate(n);
    Ok(out)
}

/// Everything about one chunk that is fixed before its blocks are compressed.
struct Plan<'a> {
    cparams: &'a CParams,
    codec: Arc<dyn Codec>,
    filters: Vec<(Arc<dyn Filter>, u8)>,
    /// Item size used by the filters and the split (a typesize > 255 acts as 1).
    typesize: usize,
    blocksize: usize,
    nblocks: usize,
    split: bool,
}

/// [`compress`] with an explicit registry and runtime.
///
/// # Errors
/// As [`compress`].
pub fn compress_ctx(ctx: &Context, cparams: &CParams, src: &[u8], dst: &mut [u8]) -> Result<usize> {
    compress_input(ctx, cparams, &Input::Bytes(src), dst)
}

/// Writes block `nblock` of a chunk into all of its second argument; see [`Input::Blocks`].
pub(crate) type FillBlock<'a> = dyn Fn(usize, &mut [u8]) -> Result<()> + Sync + 'a;

/// A chunk's uncompressed bytes as compression reads them: one buffer, or blocks the caller
/// writes on demand, each straight into the scratch of the thread that compresses it (an
/// array's chunk gathered from the caller's items: no chunk-sized copy first).
pub(crate) enum Input<'a> {
    /// The chunk's bytes.
    Bytes(&'a [u8]),
    /// `nbytes` bytes in blocks of `blocksize` (the last one may be shorter): `fill(n, out)`
    /// writes every byte of block `n` into `out`.
    Blocks {
        nbytes: usize,
        blocksize: usize,
        fill: &'a FillBlock<'a>,
    },
}

impl Input<'_> {
    fn len(&self) -> usize {
        match self {
            Input::Bytes(b) => b.len(),
            Input::Blocks { nbytes, .. } => *nbytes,
        }
    }

    /// The whole chunk, when it is one buffer.
    fn bytes(&self) -> Option<&[u8]> {
        match self {
            Input::Bytes(b) => Some(b),
            Input::Blocks { .. } => None,
        }
    }

    /// Writes the whole chunk into `out` (`len()` bytes), on up to `nthreads` threads.
    fn write_to(&self, runtime: &Runtime, nthreads: usize, out: &mut [u8]) -> Result<()> {
        match self {
            Input::Bytes(b) => out.copy_from_slice(b),
            Input::Blocks {
                blocksize, fill, ..
            } => runtime.for_each_chunk_mut(out, (*blocksize).max(1), nthreads, |n, block| {
                fill(n, block)
            })?,
        }
        Ok(())
    }
}

/// [`compress_ctx`] of `input`.
///
/// # Errors
/// As [`compress`]; the errors of an [`Input::Blocks`]'s `fill`.
pub(crate) fn compress_input(
    ctx: &Context,
    cparams: &CParams,
    input: &Input<'_>,
    dst: &mut [u8],
) -> Result<usize> {
    cparams.validate()?;
    let registry = ctx.registry();
    let nbytes = input.len();
    if nbytes > MAX_BUFFERSIZE {
        return Err(Error::MaxBufsizeExceeded {
            size: nbytes,
            limit: MAX_BUFFERSIZE,
        });
    }
    if dst.len() < EXTENDED_HEADER_LENGTH {
        return Err(Error::DestinationTooSmall {
            needed: EXTENDED_HEADER_LENGTH,
            available: dst.len(),
        });
    }
    let codec = registry.codec(cparams.codec)?;
    let caps = codec.capabilities();
    cparams.validate_for(&caps)?;
    let typesize = if cparams.typesize > MAX_TYPESIZE {
        1
    } else {
        cparams.typesize
    };
    let filters_meta = resolved_filters_meta(cparams, typesize);
    let mut filters = Vec::with_capacity(MAX_FILTERS);
    for (&id, &meta) in cparams.filters.iter().zip(&filters_meta) {
        if id != FilterId::NOFILTER {
            filters.push((registry.filter(id)?, meta));
        }
    }
    let blocksize = compute_blocksize(cparams, &caps, nbytes);
    let nblocks = nbytes.div_ceil(blocksize);
    let split = split_block(cparams, &caps, typesize, blocksize);
    let nthreads = job_threads(ctx.runtime(), cparams.nthreads, nbytes);

    let mut header = ChunkHeader {
        version: VERSION_FORMAT_STABLE,
        versionlz: codec.version(),
        flags: FLAG_SHUFFLE | FLAG_BITSHUFFLE,
        typesize,
        nbytes,
        blocksize,
        cbytes: 0,
        header_len: EXTENDED_HEADER_LENGTH,
        filters: cparams.filters,
        filters_meta,
        compcode: cparams.codec,
        compcode_meta: cparams.codec_meta,
        blosc2_flags: 0,
        blosc2_flags2: 0,
        special: SpecialType::None,
    };

    // Raw storage from the start: clevel 0, tiny buffers, or fewer bytes than one item.
    if cparams.clevel == 0 || nbytes < MIN_BUFFERSIZE || nbytes < cparams.typesize {
        header.flags |= FLAG_MEMCPYED;
        return write_memcpyed(&mut header, input, ctx.runtime(), nthreads, dst);
    }
    if let Input::Blocks { blocksize: cut, .. } = input {
        // Delta refers to the whole chunk, a dictionary is trained on it, and blocks cut
        // otherwise than compressed would straddle: such chunks are gathered first.
        if *cut != blocksize || cparams.use_dict || cparams.filters.contains(&FilterId::DELTA) {
            let mut whole = crate::alloc::zeroed(nbytes)?;
            input.write_to(ctx.runtime(), nthreads, &mut whole)?;
            return compress_input(ctx, cparams, &Input::Bytes(&whole), dst);
        }
    }

    if cparams.filters.contains(&FilterId::DELTA) {
        header.flags |= FLAG_DELTA;
    }
    if !split {
        header.flags |= FLAG_DONT_SPLIT;
    }
    header.flags |= codec.format_code() << 5;

    let plan = Plan {
        cparams,
        codec,
        filters,
        typesize,
        blocksize,
        nblocks,
        split,
    };
    // A dictionary needs compression: clevel 0 stored the chunk raw above.
    let dict = match input.bytes() {
        Some(src) if cparams.use_dict => train_dict(&plan, src)?,
        _ => None,
    };
    if dict.is_some() {
        header.blosc2_flags |= B2FLAG_USEDICT;
    }
    match compress_blocks(&plan, input, dst, dict.as_deref(), ctx.runtime(), nthreads)? {
        Some(Written {
            cbytes,
            all_zero_runs,
        }) => {
            if all_zero_runs && dict.is_none() {
                // Every stream is a zero run: C-Blosc2 rewrites the chunk as special zeros.
                header.blosc2_flags |= (SpecialType::Zero as u8) << 4;
                header.special = SpecialType::Zero;
                header.cbytes = EXTENDED_HEADER_LENGTH;
            } else {
                header.cbytes = cbytes;
            }
            header.write(dst);
            Ok(header.cbytes)
        }
        None => {
            // Compression did not fit: store raw, keeping the flags computed so far.
            header.flags |= FLAG_MEMCPYED;
            header.blosc2_flags = 0;
            write_memcpyed(&mut header, input, ctx.runtime(), nthreads, dst)
        }
    }
}

/// The filter metas a chunk stores: BYTEDELTA's meta 0 ("the typesize") becomes the typesize
/// `typesize` itself, as python-blosc2 writes it. C-Blosc2 reads meta 0 as the typesize of
/// the super-chunk a chunk is decoded in, and refuses it for a chunk decoded on its own; the
/// typesize written in the meta decodes the same either way.
fn resolved_filters_meta(cparams: &CParams, typesize: usize) -> [u8; MAX_FILTERS] {
    let mut metas = cparams.filters_meta;
    for (meta, &id) in metas.iter_mut().zip(&cparams.filters) {
        if *meta == 0 && matches!(id, FilterId::BYTEDELTA | FilterId::BYTEDELTA_BUGGY) {
            // typesize <= MAX_TYPESIZE (255) here.
            *meta = u8::try_from(typesize).unwrap_or(1);
        }
    }
    metas
}

fn write_memcpyed(
    header: &mut ChunkHeader,
    input: &Input<'_>,
    runtime: &Runtime,
    nthreads: usize,
    dst: &mut [u8],
) -> Result<usize> {
    let cbytes = EXTENDED_HEADER_LENGTH + input.len();
    if dst.len() < cbytes {
        return Err(Error::DestinationTooSmall {
            needed: cbytes,
            available: dst.len(),
        });
    }
    header.cbytes = cbytes;
    header.write(dst);
    input.write_to(runtime, nthreads, &mut dst[EXTENDED_HEADER_LENGTH..cbytes])?;
    Ok(cbytes)
}

struct Written {
    cbytes: usize,
    all_zero_runs: bool,
}

/// Bytes of block `nblock`: `blocksize`, or the leftover for a short last block.
fn block_range(plan: &Plan<'_>, nbytes: usize, nblock: usize) -> std::ops::Range<usize> {
    let start = nblock * plan.blocksize;
    start..(start + plan.blocksize).min(nbytes)
}

/// Runs the filters forward over one block; returns the filtered bytes (the block of the
/// input itself when it is one buffer and there are no filters). A block on demand is
/// written into `scratch[1]` first.
fn filter_block<'b>(
    plan: &Plan<'_>,
    input: &'b Input<'_>,
    nblock: usize,
    scratch: &'b mut [Vec<u8>; 2],
) -> Result<&'b [u8]> {
    let range = block_range(plan, input.len(), nblock);
    let len = range.len();
    let [a, b] = scratch;
    if let Input::Blocks { fill, .. } = input {
        crate::alloc::resize(b, len, 0)?;
        fill(nblock, &mut b[..len])?;
    }
    let Some(((first, meta), rest)) = plan.filters.split_first() else {
        return Ok(match input {
            Input::Bytes(src) => &src[range],
            Input::Blocks { .. } => &b[..len],
        });
    };
    let ctx = |meta: u8| BlockContext {
        typesize: plan.typesize,
        meta,
        nblock,
        offset: range.start,
        version: VERSION_FORMAT_STABLE,
        // Only delta reads it, and a chunk with delta is one buffer (`compress_input`).
        dref: input.bytes().unwrap_or(&[]),
        nd: plan.cparams.nd.as_deref(),
        ..BlockContext::default()
    };
    crate::alloc::resize(a, len, 0)?;
    let block = match input {
        Input::Bytes(src) => &src[range.clone()],
        Input::Blocks { .. } => &b[..len],
    };
    first.forward(block, &mut a[..len], &ctx(*meta))?;
    if !rest.is_empty() {
        crate::alloc::resize(b, len, 0)?;
    }
    for (filter, meta) in rest {
        filter.forward(&a[..len], &mut b[..len], &ctx(*meta))?;
        std::mem::swap(a, b);
    }
    Ok(&a[..len])
}

/// The streams of a block: `typesize` equal parts when split (never for a short last block).
fn nstreams(plan: &Plan<'_>, len: usize) -> usize {
    if plan.split && len == plan.blocksize {
        plan.typesize
    } else {
        1
    }
}

/// Compresses every block and writes them, with their `bstarts` (and the dict section), after
/// the header; `None` when the chunk does not fit in `dst`.
///
/// The result equals C-Blosc2's serial compression whatever the thread count: blocks are
/// compressed on their own (in parallel when asked), each codec call offered `neblock` bytes,
/// then laid out in order. A block that lands within reach of the end of `dst` is compressed
/// again in place, with the codec offered only the room left, as C-Blosc2's serial path does
/// (some codecs give up, rather than shrink, when offered less room).
fn compress_blocks(
    plan: &Plan<'_>,
    src: &Input<'_>,
    dst: &mut [u8],
    dict: Option<&[u8]>,
    runtime: &Runtime,
    nthreads: usize,
) -> Result<Option<Written>> {
    let bstarts_at = EXTENDED_HEADER_LENGTH;
    let mut pos = bstarts_at + 4 * plan.nblocks;
    if let Some(d) = dict {
        pos += 4 + d.len();
    }
    if pos > dst.len() {
        return Ok(None);
    }
    if let Some(d) = dict {
        let at = bstarts_at + 4 * plan.nblocks;
        dst[at..at + 4].copy_from_slice(&le32(d.len()));
        dst[at + 4..at + 4 + d.len()].copy_from_slice(d);
    }
    if nthreads > 1 && plan.nblocks > 1 {
        return compress_blocks_parallel(plan, src, dst, pos, dict, runtime, nthreads);
    }
    // Straight into the destination, as C-Blosc2's serial path: each stream is offered the
    // room left, so the bytes are those of a chunk compressed block after block.
    let mut scratch = super::scratch::take();
    let mut all_zero_runs = true;
    for nblock in 0..plan.nblocks {
        dst[bstarts_at + 4 * nblock..bstarts_at + 4 * nblock + 4].copy_from_slice(&le32(pos));
        let Some((n, zero_runs)) =
            compress_block(plan, src, nblock, dict, &mut scratch, &mut dst[pos..])?
        else {
            return Ok(None);
        };
        pos += n;
        all_zero_runs &= zero_runs;
    }
    Ok(Some(Written {
        cbytes: pos,
        all_zero_runs,
    }))
}

/// Where the blocks compressed so far by a parallel compression are laid out in the chunk.
struct Layout<'d> {
    dst: &'d mut [u8],
    /// The next block to lay out, at `pos`.
    next: usize,
    pos: usize,
    all_zero_runs: bool,
}

impl Layout<'_> {
    /// Lays block `next` (its records `block`, compressed on their own) out at `pos`: copied
    /// when its worst case fits before the end of `dst`, else compressed again in place with
    /// the codec offered only the room left, as C-Blosc2's serial path does (some codecs give
    /// up, rather than shrink, when offered less room). `None` when it does not fit.
    fn place(
        &mut self,
        plan: &Plan<'_>,
        src: &Input<'_>,
        dict: Option<&[u8]>,
        block: &[u8],
        zero_runs: bool,
        scratch: &mut [Vec<u8>; 2],
    ) -> Result<Option<()>> {
        let (nblock, pos) = (self.next, self.pos);
        let at = EXTENDED_HEADER_LENGTH + 4 * nblock;
        self.dst[at..at + 4].copy_from_slice(&le32(pos));
        let written = if pos + max_block_record(plan, nblock, src.len()) <= self.dst.len() {
            self.dst[pos..pos + block.len()].copy_from_slice(block);
            Some((block.len(), zero_runs))
        } else {
            compress_block(plan, src, nblock, dict, scratch, &mut self.dst[pos..])?
        };
        Ok(written.map(|(n, zero_runs)| {
            self.next += 1;
            self.pos += n;
            self.all_zero_runs &= zero_runs;
        }))
    }
}

/// [`compress_blocks`] on up to `nthreads` threads, the blocks' records starting at `pos`.
///
/// Each block is compressed on its own into a worst-case slot of an arena (reused from call
/// to call on this thread: no allocation, zero-fill or page faults per block), its codec calls
/// offered `neblock` bytes, so the bytes equal a serial compression's. The blocks are laid out
/// in order while the others are still being compressed: after finishing a block, a thread
/// that finds the layout free copies every block that is next in line. It never waits for
/// the layout (a thread preempted while copying holds up no other's compression), so the
/// copies overlap the compression instead of following it; what is left is laid out when all
/// are compressed. Once a block does not fit, the blocks not yet started are skipped.
fn compress_blocks_parallel(
    plan: &Plan<'_>,
    src: &Input<'_>,
    dst: &mut [u8],
    pos: usize,
    dict: Option<&[u8]>,
    runtime: &Runtime,
    nthreads: usize,
) -> Result<Option<Written>> {
    let slot = max_block_record(plan, 0, src.len());
    let mut arena = super::scratch::take();
    let buf = &mut arena[0];
    if buf.len() < slot * plan.nblocks {
        buf.resize(slot * plan.nblocks, 0);
    }
    // Each slot is written by the task of its block, then read by whoever lays it out; the
    // locks are never contended (the flags below say when a slot is ready).
    let slots: Vec<Mutex<&mut [u8]>> = buf[..slot * plan.nblocks]
        .chunks_mut(slot)
        .map(Mutex::new)
        .collect();
    // Per block: its records' length and whether they are all zero runs, once compressed.
    let compressed: Vec<(AtomicBool, AtomicUsize, AtomicBool)> = (0..plan.nblocks)
        .map(|_| {
            (
                AtomicBool::new(false),
                AtomicUsize::new(0),
                AtomicBool::new(false),
            )
        })
        .collect();
    let is_ready = |nblock: usize| compressed[nblock].0.load(Ordering::Acquire);
    let layout = Mutex::new(Layout {
        dst,
        next: 0,
        pos,
        all_zero_runs: true,
    });
    // Set once a block did not fit in the room left: the chunk does not fit in `dst`, and
    // the blocks not yet started are not compressed.
    let full = AtomicBool::new(false);
    // Lays out the blocks next in line that are ready. Returns the block then next in line,
    // so that one finished while the layout was held is not left for the end.
    let lay_out_ready = |layout: &mut Layout<'_>, scratch: &mut [Vec<u8>; 2]| -> Result<usize> {
        while layout.next < plan.nblocks && !full.load(Ordering::Relaxed) && is_ready(layout.next) {
            let nblock = layout.next;
            let n = compressed[nblock].1.load(Ordering::Relaxed);
            let zero_runs = compressed[nblock].2.load(Ordering::Relaxed);
            let block = slots[nblock].lock().unwrap_or_else(PoisonError::into_inner);
            if layout
                .place(plan, src, dict, &block[..n], zero_runs, scratch)?
                .is_none()
            {
                full.store(true, Ordering::Relaxed);
            }
        }
        Ok(layout.next)
    };
    runtime.for_each_index_init(
        plan.nblocks,
        nthreads,
        super::scratch::take,
        |scratch, nblock| {
            if full.load(Ordering::Relaxed) {
                // The chunk cannot fit: the caller stores it raw, whatever this block gives.
                return Ok(());
            }
            {
                let mut out = slots[nblock].lock().unwrap_or_else(PoisonError::into_inner);
                let (n, z) = compress_block(plan, src, nblock, dict, scratch, &mut out)?
                    .ok_or(BLOCK_TOO_BIG)?;
                compressed[nblock].1.store(n, Ordering::Relaxed);
                compressed[nblock].2.store(z, Ordering::Relaxed);
            }
            compressed[nblock].0.store(true, Ordering::Release);
            // Pairs with the fence after the layout is released below: either this thread
            // finds the layout free, or its holder sees this block ready once it lets go.
            // Only speed depends on it: a block missed all the same is laid out after the job.
            fence(Ordering::SeqCst);
            while let Ok(mut held) = layout.try_lock() {
                let next = lay_out_ready(&mut held, scratch)?;
                drop(held);
                fence(Ordering::SeqCst);
                if full.load(Ordering::Relaxed) || next == plan.nblocks || !is_ready(next) {
                    break;
                }
            }
            Ok(())
        },
    )?;
    // Every task has ended: lay out what is left, in order.
    let mut layout = layout.into_inner().unwrap_or_else(PoisonError::into_inner);
    lay_out_ready(&mut layout, &mut super::scratch::take())?;
    if full.load(Ordering::Relaxed) {
        return Ok(None);
    }
    if layout.next != plan.nblocks {
        return Err(Error::Internal {
            what: "a parallel compression ended with blocks not laid out",
        });
    }
    Ok(Some(Written {
        cbytes: layout.pos,
        all_zero_runs: layout.all_zero_runs,
    }))
}

/// The most bytes block `nblock`'s stream records can take: every stream stored raw
/// (`4 + neblock` bytes) or as a run (at most 5 bytes).
fn max_block_record(plan: &Plan<'_>, nblock: usize, nbytes: usize) -> usize {
    let len = block_range(plan, nbytes, nblock).len();
    let ns = nstreams(plan, len);
    ns * (4 + (len / ns).max(1))
}

/// Filters block `nblock` and writes its stream records at the start of `out`; returns their
/// length and whether every stream is a zero run, or `None` when they do not fit in `out`.
fn compress_block(
    plan: &Plan<'_>,
    src: &Input<'_>,
    nblock: usize,
    dict: Option<&[u8]>,
    scratch: &mut [Vec<u8>; 2],
    out: &mut [u8],
) -> Result<Option<(usize, bool)>> {
    let filtered = filter_block(plan, src, nblock, scratch)?;
    let ns = nstreams(plan, filtered.len());
    let neblock = filtered.len() / ns;
    let ctx = BlockContext {
        clevel: plan.cparams.clevel,
        meta: plan.cparams.codec_meta,
        typesize: plan.typesize,
        blocksize: plan.blocksize,
        nblock,
        offset: nblock * plan.blocksize,
        dict,
        nd: plan.cparams.nd.as_deref(),
        ..BlockContext::default()
    };
    let mut pos = 0;
    let mut all_zero_runs = true;
    for stream in filtered.chunks_exact(neblock) {
        let Some((n, zero_run)) =
            compress_stream(plan.codec.as_ref(), stream, &mut out[pos..], &ctx)?
        else {
            return Ok(None);
        };
        pos += n;
        all_zero_runs &= zero_run;
    }
    Ok(Some((pos, all_zero_runs)))
}

/// Whether every byte of `bytes` is `value`: 64 bytes at a time without a branch inside
/// (which the compiler turns into vector compares), as a stream is checked for a run before
/// every codec call.
fn is_run(bytes: &[u8], value: u8) -> bool {
    let mut words = bytes.chunks_exact(64);
    words
        .by_ref()
        .all(|w| w.iter().fold(0, |acc, &b| acc | (b ^ value)) == 0)
        && words.remainder().iter().all(|&b| b == value)
}

fn le32(v: usize) -> [u8; 4] {
    // Every size here is below BLOSC2_MAX_BUFFERSIZE + overhead, which fits an i32.
    i32::try_from(v).unwrap_or(i32::MAX).to_le_bytes()
}

/// Writes one stream record (`int32 csize` + payload) at the start of `out`; returns its
/// length and whether it is a zero run, or `None` when it does not fit. The codec is offered
/// `min(neblock, out.len() - 4)` bytes, as in C-Blosc2 (`blosc_c`).
fn compress_stream(
    codec: &dyn Codec,
    stream: &[u8],
    out: &mut [u8],
    ctx: &BlockContext<'_>,
) -> Result<Option<(usize, bool)>> {
    let neblock = stream.len();
    if out.len() < 4 {
        return Ok(None);
    }
    // Runs of one byte value are stored without calling the codec.
    if let Some((&first, rest)) = stream.split_first() {
        if is_run(rest, first) {
            if first == 0 {
                out[..4].copy_from_slice(&0i32.to_le_bytes());
                return Ok(Some((4, true)));
            }
            if out.len() < 5 {
                return Ok(None);
            }
            out[..4].copy_from_slice(&(-i32::from(first)).to_le_bytes());
            out[4] = 1;
            return Ok(Some((5, false)));
        }
    }
    let maxout = neblock.min(out.len() - 4);
    if maxout == 0 {
        return Ok(None);
    }
    let cbytes = codec.compress(stream, &mut out[4..4 + maxout], ctx)?;
    if cbytes == 0 || cbytes >= neblock {
        // Not compressible: store the stream raw, if that fits.
        if out.len() < 4 + neblock {
            return Ok(None);
        }
        out[..4].copy_from_slice(&le32(neblock));
        out[4..4 + neblock].copy_from_slice(stream);
        return Ok(Some((4 + neblock, false)));
    }
    out[..4].copy_from_slice(&le32(cbytes));
    Ok(Some((4 + cbytes, false)))
}

/// Trains a zstd dictionary as C-Blosc2 does (`blosc_compress_context` with `use_dict`): on
/// the filtered chunk, blocks in order, cut into `max(8, nblocks × streams per block)`
/// samples of `nbytes / nsamples / 16` bytes taken from its start; the dictionary holds at
/// most `min(128 KiB, nbytes / 20)` bytes. `None` when zstd cannot train on so little data
/// (the chunk is then written without a dictionary, where C-Blosc2 reports an error).
fn train_dict(plan: &Plan<'_>, src: &[u8]) -> Result<Option<Vec<u8>>> {
    let maxsize = MAX_DICT_SIZE.min(src.len() / 20);
    let streams_per_block = if plan.split { plan.typesize } else { 1 };
    let nsamples = (plan.nblocks * streams_per_block).max(8);
    let sample_size = src.len() / nsamples / 16;
    if maxsize == 0 || sample_size == 0 {
        return Ok(None);
    }
    let mut filtered = Vec::with_capacity(nsamples * sample_size);
    let mut scratch = super::scratch::take();
    let src = Input::Bytes(src);
    for nblock in 0..plan.nblocks {
        if filtered.len() >= nsamples * sample_size {
            break;
        }
        filtered.extend_from_slice(filter_block(plan, &src, nblock, &mut scratch)?);
    }
    filtered.truncate(nsamples * sample_size);
    Ok(zstd::dict::from_continuous(&filtered, &vec![sample_size; nsamples], maxsize).ok())
}

#[cfg(test)]
mod tests {
    use super::is_run;

    #[test]
    fn a_run_is_found_at_every_length_and_a_stray_byte_anywhere_breaks_it() {
        for n in [0, 1, 63, 64, 65, 130, 200] {
            let run = vec![7u8; n];
            assert!(is_run(&run, 7), "{n}");
            assert_eq!(is_run(&run, 0), n == 0, "{n}");
            for at in 0..n {
                let mut v = run.clone();
                v[at] = 6;
                assert!(!is_run(&v, 7), "{n} {at}");
            }
        }
    }
}
