//! The slice engine: read or write a selection of a b2nd array, touching only the chunks and
//! blocks it needs.
//!
//! **Reads** ([`get_slice`]): the plan lists the touched chunks and, in each, the touched blocks.
//! Chunks are fetched from the [`ChunkSource`] in batches, as lazy chunks
//! ([`ChunkSource::chunk_blocks`]): from a frame file only the chunk header, the `bstarts` and
//! the touched blocks' bytes are read (adjacent blocks in one read), into buffers kept per
//! thread between reads. Each chunk's header is parsed once (and, for a chunk with delta,
//! block 0 decompressed once, as the other blocks refer to it). Then the touched blocks are
//! tasks on the runtime: a worker decompresses one block ([`Decoder::decompress_block`]) into
//! its scratch and copies the block's part of the selection straight into the caller's
//! buffer, through a [`SliceOutput`] that hands each task its own disjoint box. When a block's
//! rows of the output are short (a hyperplane across the last axes), the blocks along the
//! output's last dimension form one task, so each output row is written in one pass. A block
//! that is exactly a contiguous run of the output (picked whole, no padding, step 1) is
//! decompressed in place, with no copy. No chunk is decompressed whole unless every block of
//! it is needed (or its blocks are not the array's: a chunk from another writer).
//!
//! **Writes** ([`set_slice`]): every touched chunk is rebuilt and compressed again, in parallel
//! over chunks. A chunk the selection covers whole starts from zeros (so its padding is zeros,
//! as C-Blosc2 writes it) and needs no decompression; any other is decompressed first
//! (read-modify-write). Then each touched block receives its box of the caller's data.
//!
//! Reads may run concurrently from many threads on one source. A write that fails part-way
//! (a corrupt chunk, memory) may leave the chunks of earlier batches already replaced.
//!
//! Format: c-blosc2 `blosc/b2nd.c` (`get_set_slice`); `shared/spec/frames.md` §10. DESIGN.md,
//! "How a read flows".
//!
//! ```
//! use strata::chunk::{CParams, Context, DParams};
//! use strata::ndarray::slice::{get_slice, set_slice};
//! use strata::ndarray::{ArrayParams, Location, NdArray, Selection, Slice};
//! let params = ArrayParams::new(&[5, 7], 1).chunkshape(&[4, 4]).blockshape(&[2, 3]);
//! let arr = NdArray::zeros(&params, &Location::Memory)?;
//! let g = arr.geometry().clone();
//! let mut store = arr.into_store(); // a super-chunk of 4 zero chunks
//! let ctx = Context::global();
//! let all = Selection::full(g.shape());
//! let data: Vec<u8> = (1..=35).collect();
//! set_slice(&ctx, &CParams::default(), &g, &mut store, &all, &data)?;
//! let sel = Selection::new(g.shape(), &[Slice::range(3, 5), Slice::range(2, 5)])?;
//! let mut out = [0u8; 6];
//! let stats = get_slice(&ctx, &DParams::default(), &g, &store, &sel, &mut out)?;
//! assert_eq!(out, [24, 25, 26, 31, 32, 33]);
//! assert_eq!((stats.chunks_read, stats.blocks_decompressed), (4, 6));
//! # Ok::<(), strata::Error>(())
//! ```
#![forbid(unsafe_code)]

use super::geometry::{c_strides, Geometry};
use super::plan::{BlockPlan, ChunkPlan, SlicePlan};
use super::selection::{DimSelection, Selection};
use super::store::{ChunkSource, ChunkStore};
use super::view::{BoxMut, SliceOutput};
use crate::chunk::{
    compress_ctx, job_threads, max_compressed_len, CParams, Context, DParams, Decoder,
};
use crate::error::{Error, Result};
use crate::format::chunk::{ChunkHeader, SpecialType};
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What a slice read or write did, for tests and tuning.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SliceStats {
    /// Chunks fetched from the source (reads), or decompressed to be modified (writes).
    pub chunks_read: usize,
    /// Blocks decompressed; block 0 of a delta chunk counts once however many blocks use it.
    pub blocks_decompressed: usize,
    /// Of those, blocks decompressed straight into the destination, with no copy.
    pub blocks_in_place: usize,
    /// Bytes written to the destination (reads) or taken from the caller's data (writes).
    pub bytes_copied: usize,
    /// Chunks compressed and stored (writes).
    pub chunks_written: usize,
}

#[derive(Debug, Default)]
struct Counters {
    chunks_read: AtomicUsize,
    blocks_decompressed: AtomicUsize,
    blocks_in_place: AtomicUsize,
    bytes_copied: AtomicUsize,
    chunks_written: AtomicUsize,
}

impl Counters {
    fn add(counter: &AtomicUsize, n: usize) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    fn stats(&self) -> SliceStats {
        let get = |c: &AtomicUsize| c.load(Ordering::Relaxed);
        SliceStats {
            chunks_read: get(&self.chunks_read),
            blocks_decompressed: get(&self.blocks_decompressed),
            blocks_in_place: get(&self.blocks_in_place),
            bytes_copied: get(&self.bytes_copied),
            chunks_written: get(&self.chunks_written),
        }
    }
}

/// Uncompressed bytes of chunks handled per batch (bounds the memory of a write, and of reads
/// from chunks that must be decompressed whole).
const BATCH_BYTES: usize = 64 << 20;
/// Most chunks per batch.
const MAX_BATCH_CHUNKS: usize = 4096;

/// The planned chunks `0..nchunks`, of `chunk_nbytes` uncompressed bytes each, cut into
/// batches of at most [`BATCH_BYTES`] (at least one chunk, at most [`MAX_BATCH_CHUNKS`]).
fn batches(nchunks: usize, chunk_nbytes: usize) -> impl Iterator<Item = Range<usize>> {
    let per_batch = (BATCH_BYTES / chunk_nbytes.max(1)).clamp(1, MAX_BATCH_CHUNKS);
    (0..nchunks)
        .step_by(per_batch)
        .map(move |t| t..(t + per_batch).min(nchunks))
}

/// A vector of `n` zero bytes, or [`Error::MemoryAlloc`].
fn zeroed(n: usize) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::MemoryAlloc(n))?;
    v.resize(n, 0);
    Ok(v)
}

fn check_source<S: ChunkSource + ?Sized>(geom: &Geometry, source: &S) -> Result<()> {
    if source.nchunks() != geom.nchunks() {
        return Err(Error::InvalidParam(format!(
            "the store holds {} chunks, an array of shape {:?} in chunks of {:?} has {}",
            source.nchunks(),
            geom.shape(),
            geom.chunkshape(),
            geom.nchunks()
        )));
    }
    Ok(())
}

fn check_chunk(geom: &Geometry, nchunk: usize, d: &Decoder<'_>) -> Result<()> {
    if d.header.nbytes != geom.chunk_nbytes() {
        return Err(Error::InvalidHeader(format!(
            "chunk {nchunk} holds {} bytes, the array's chunks hold {}",
            d.header.nbytes,
            geom.chunk_nbytes()
        )));
    }
    Ok(())
}

/// Copies the selection `sel` of an array of geometry `geom`, whose chunks come from
/// `source`, into `out` as a C-order array of `sel.shape()`; returns what it did.
///
/// Only the touched blocks are decompressed, in parallel on `ctx.runtime` with up to
/// `dparams.nthreads` threads (0 = the runtime's default). Bytes of `out` past the selection
/// are left alone.
///
/// # Errors
/// [`Error::DestinationTooSmall`] if `out` is shorter than the selection;
/// [`Error::InvalidParam`] if the source's chunk count or the selection does not match
/// `geom`; [`Error::InvalidHeader`] if a chunk does not hold the array's chunk size; the
/// source's errors; otherwise as [`crate::chunk::decompress`].
pub fn get_slice<S: ChunkSource + ?Sized>(
    ctx: &Context<'_>,
    dparams: &DParams,
    geom: &Geometry,
    source: &S,
    sel: &Selection,
    out: &mut [u8],
) -> Result<SliceStats> {
    check_source(geom, source)?;
    let plan = SlicePlan::new(geom, sel)?;
    let ts = geom.typesize();
    let needed = sel
        .nitems()
        .and_then(|n| n.checked_mul(ts))
        .ok_or_else(|| Error::InvalidParam("the selection's size overflows".into()))?;
    if out.len() < needed {
        return Err(Error::DestinationTooSmall {
            needed,
            available: out.len(),
        });
    }
    let counters = Counters::default();
    if plan.nchunks() == 0 {
        return Ok(counters.stats());
    }
    let output = SliceOutput::new(&mut out[..needed], &plan, ts, group_size(geom, &plan))?;
    let reader = Reader {
        ctx,
        dparams,
        geom,
        plan: &plan,
        sels: plan.sels().copied().collect(),
        block_strides: c_strides(geom.inner().2).iter().map(|s| s * ts).collect(),
        output: &output,
        counters: &counters,
    };
    for batch in batches(plan.nchunks(), geom.chunk_nbytes()) {
        reader.batch(source, batch)?;
    }
    Ok(counters.stats())
}

/// Chunk images are kept per thread between reads (up to this many bytes of capacity), so
/// that reading chunk after chunk does not allocate, page-fault and zero-fill each image.
const POOL_BYTES: usize = 64 << 20;

thread_local! {
    static IMAGES: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Buffers for chunk images, borrowed from this thread's pool and given back when dropped.
struct ImagePool(Vec<Vec<u8>>);

impl ImagePool {
    fn take(n: usize) -> ImagePool {
        let mut v: Vec<Vec<u8>> = IMAGES.with(|p| {
            let mut p = p.borrow_mut();
            let k = p.len().saturating_sub(n);
            p.split_off(k)
        });
        v.resize_with(n, Vec::new);
        ImagePool(v)
    }
}

impl Drop for ImagePool {
    fn drop(&mut self) {
        let _ = IMAGES.try_with(|p| {
            let mut p = p.borrow_mut();
            let mut kept: usize = p.iter().map(Vec::capacity).sum();
            for image in self.0.drain(..) {
                if kept + image.capacity() <= POOL_BYTES {
                    kept += image.capacity();
                    p.push(image);
                }
            }
        });
    }
}

/// One touched chunk ready for its block tasks.
struct Prepared<'b> {
    decoder: Decoder<'b>,
    /// The chunk decompressed whole, when its blocks are not the array's blocks.
    whole: Option<Vec<u8>>,
    /// Block 0, decompressed once, when the chunk uses delta and other blocks are read.
    block0: Option<Vec<u8>>,
}

struct Reader<'r> {
    ctx: &'r Context<'r>,
    dparams: &'r DParams,
    geom: &'r Geometry,
    plan: &'r SlicePlan,
    sels: Vec<DimSelection>,
    /// Byte strides of a block (C order over the blockshape).
    block_strides: Vec<usize>,
    output: &'r SliceOutput<'r, 'r>,
    counters: &'r Counters,
}

impl Reader<'_> {
    /// Reads touched chunks `range` (plan order).
    fn batch<S: ChunkSource + ?Sized>(&self, source: &S, range: Range<usize>) -> Result<()> {
        let chunks: Vec<ChunkPlan<'_>> = range.clone().map(|t| self.plan.chunk(t)).collect();
        let rt = &self.ctx.runtime;
        let nt = self.dparams.nthreads;
        let mut images = ImagePool::take(chunks.len());
        rt.for_each_chunk_mut(&mut images.0, 1, nt, |i, image| {
            self.fetch(source, &chunks[i], &mut image[0])
        })?;
        Counters::add(&self.counters.chunks_read, chunks.len());
        let preps = rt.map_index(chunks.len(), nt, |i| self.prepare(&chunks[i], &images.0[i]))?;
        let first = self.output.first_task(range.start);
        let ntasks = self.output.first_task(range.end) - first;
        let nblocks: usize = chunks.iter().map(ChunkPlan::nblocks).sum();
        let nthreads = job_threads(rt, nt, nblocks.saturating_mul(self.geom.block_nbytes()));
        rt.for_each_index_init(ntasks, nthreads, Vec::new, |scratch, j| {
            let (t, blocks, mut bx) = self.output.task(first + j)?;
            self.read_group(&preps[t - range.start], &blocks, &mut bx, scratch)
        })
    }

    /// The bytes of touched chunk `chunk` that its blocks need, in `image`: a lazy chunk
    /// holding only the touched blocks when the source can make one, the whole chunk when its
    /// blocks are not the array's blocks (a chunk from another writer, decompressed whole).
    fn fetch<S: ChunkSource + ?Sized>(
        &self,
        source: &S,
        chunk: &ChunkPlan<'_>,
        image: &mut Vec<u8>,
    ) -> Result<()> {
        let nblocks: Vec<usize> = chunk.blocks().map(|b| b.nblock).collect();
        source.chunk_blocks(chunk.nchunk(), &nblocks, image)?;
        let h = ChunkHeader::parse(image)?;
        if !blocks_are_the_arrays(&h, self.geom) {
            let whole = source.chunk(chunk.nchunk())?;
            image.clear();
            image.extend_from_slice(&whole);
        }
        Ok(())
    }

    /// Parses chunk `chunk` and decompresses what its block tasks will share.
    fn prepare<'b>(&self, chunk: &ChunkPlan<'_>, bytes: &'b [u8]) -> Result<Prepared<'b>> {
        let geom = self.geom;
        let decoder = Decoder::new(self.ctx.registry, bytes)?.with_nd(self.dparams.nd.clone());
        check_chunk(geom, chunk.nchunk(), &decoder)?;
        let h = &decoder.header;
        if !blocks_are_the_arrays(h, geom) {
            // Not the array's blocks (a chunk from another writer): decompress it whole.
            let mut whole = zeroed(geom.chunk_nbytes())?;
            decoder.decompress_on(&self.ctx.runtime, 1, &mut whole)?;
            Counters::add(&self.counters.blocks_decompressed, h.nblocks());
            return Ok(Prepared {
                decoder,
                whole: Some(whole),
                block0: None,
            });
        }
        let other_blocks = chunk.nblocks() > 1 || chunk.block(0).nblock > 0;
        let block0 = if decoder.needs_block0() && other_blocks {
            let mut b = zeroed(geom.block_nbytes())?;
            decoder.decompress_block(0, &mut b, None)?;
            Counters::add(&self.counters.blocks_decompressed, 1);
            Some(b)
        } else {
            None
        };
        Ok(Prepared {
            decoder,
            whole: None,
            block0,
        })
    }

    /// Decompresses block `nblock` (the array's block) of `prep`'s chunk into `dst`.
    fn decode_block(&self, prep: &Prepared<'_>, nblock: usize, dst: &mut [u8]) -> Result<()> {
        if prep.decoder.header.special != SpecialType::None {
            // A special chunk's own blocksize may differ (a frame rebuilds it with the frame's):
            // its bytes are the same wherever they are read.
            let bnb = self.geom.block_nbytes();
            let range = nblock * bnb..(nblock + 1) * bnb;
            prep.decoder
                .decompress_range_on(&self.ctx.runtime, 1, range, dst)?;
            return Ok(());
        }
        prep.decoder
            .decompress_block(nblock, dst, prep.block0.as_deref())?;
        Ok(())
    }

    /// Decompresses a group of blocks (or finds them decompressed) and copies their box into
    /// the output, row by row across the group. A lone block that is exactly a contiguous
    /// run of the output is decompressed in place.
    fn read_group(
        &self,
        prep: &Prepared<'_>,
        blocks: &[BlockPlan],
        bx: &mut BoxMut<'_>,
        scratch: &mut Vec<u8>,
    ) -> Result<()> {
        let bnb = self.geom.block_nbytes();
        let ts = self.geom.typesize();
        let from_prep = |nblock: usize| -> Option<&[u8]> {
            match (&prep.whole, &prep.block0) {
                (Some(whole), _) => Some(&whole[nblock * bnb..(nblock + 1) * bnb]),
                (None, Some(b0)) if nblock == 0 => Some(b0),
                _ => None,
            }
        };
        if let [block] = blocks {
            if from_prep(block.nblock).is_none() && self.plan.contiguous(block) {
                if let Some(dst) = bx.contiguous_mut() {
                    self.decode_block(prep, block.nblock, dst)?;
                    Counters::add(&self.counters.blocks_decompressed, 1);
                    Counters::add(&self.counters.blocks_in_place, 1);
                    Counters::add(&self.counters.bytes_copied, dst.len());
                    return Ok(());
                }
            }
        }
        let need = blocks.len() * bnb;
        if scratch.len() < need {
            scratch.resize(need, 0);
        }
        // A block of which few items are picked is left in byte planes when its only filter
        // is shuffle: its items are gathered from the planes, rather than the whole block
        // unshuffled for them.
        let sparse = |block: &BlockPlan| {
            let picked: usize = block.segments.iter().map(|s| s.count).product();
            picked.saturating_mul(SPARSE) <= self.geom.block_nitems()
                && prep.decoder.shuffle_planes() == Some(ts)
        };
        let mut planes = Vec::with_capacity(blocks.len());
        for (block, slot) in blocks.iter().zip(scratch.chunks_mut(bnb)) {
            let in_planes = from_prep(block.nblock).is_none() && sparse(block);
            if in_planes {
                prep.decoder.decompress_block_planes(block.nblock, slot)?;
            } else if from_prep(block.nblock).is_none() {
                self.decode_block(prep, block.nblock, slot)?;
            }
            if from_prep(block.nblock).is_none() {
                Counters::add(&self.counters.blocks_decompressed, 1);
            }
            planes.push(in_planes);
        }
        // Each block's piece of a box row, in output order along the last dimension.
        let last = bx.counts().len() - 1;
        let mut steps = Vec::new();
        let mut pieces: Vec<Piece<'_>> = blocks
            .iter()
            .zip(scratch.chunks(bnb))
            .zip(planes)
            .map(|((block, slot), in_planes)| {
                let (base, s) = block_walk(block, &self.sels, &self.block_strides);
                let seg = &block.segments[last];
                if steps.is_empty() {
                    // The blocks share their segments before the last dimension, and so
                    // their steps along them; the box leaves out trailing dimensions of one
                    // item (their offset is in `base`).
                    steps = s[..last].to_vec();
                }
                Piece {
                    out: seg.out,
                    src: from_prep(block.nblock).unwrap_or(slot),
                    in_planes,
                    base,
                    step: s[last],
                    len: seg.count * ts,
                }
            })
            .collect();
        pieces.sort_unstable_by_key(|p| p.out);
        let mut copied = 0;
        bx.for_each_row(0, &steps, |rel, row| {
            let mut at = 0;
            for p in &pieces {
                let dst = &mut row[at..at + p.len];
                if p.in_planes {
                    gather_planes(p.src, p.base + rel, p.step, dst, ts);
                } else {
                    gather(p.src, p.base + rel, p.step, dst, ts);
                }
                at += p.len;
            }
            copied += row.len();
        })?;
        Counters::add(&self.counters.bytes_copied, copied);
        Ok(())
    }
}

/// Whether chunk `h`'s blocks are the array's blocks (so that blocks can be read one by one):
/// a regular chunk with a blocksize of one block of the array, or a special chunk (zeros,
/// NaN, uninit, a repeated value), whose every block is the same whatever its blocksize.
fn blocks_are_the_arrays(h: &ChunkHeader, geom: &Geometry) -> bool {
    h.special != SpecialType::None || (!h.vl_blocks() && h.blocksize == geom.block_nbytes())
}

/// One block's part of each row of a group's box (see [`Reader::read_group`]).
struct Piece<'s> {
    /// Its first output index along the row.
    out: usize,
    /// The block, decompressed (or left in byte planes).
    src: &'s [u8],
    in_planes: bool,
    /// Byte offset in `src` of the piece's first item in the box's first row.
    base: isize,
    /// Byte step in `src` between the piece's items.
    step: isize,
    /// Bytes of the piece in a row.
    len: usize,
}

/// A block of which at most one item in this many is picked is read from its byte planes
/// (when shuffle is its only filter).
const SPARSE: usize = 32;
/// Decompressed bytes of blocks grouped in one output task at most (see [`SliceOutput`]).
const GROUP_BYTES: usize = 512 << 10;
/// Rows of a block shorter than this (bytes along the output's last dimension) are written
/// in groups of blocks.
const SHORT_ROW: usize = 256;

/// Blocks per output task for `plan`: when a block's rows are short, the blocks along the
/// output's last dimension go together, so that each output row (a run of the caller's
/// buffer) is written in one pass rather than a few bytes per block at a time.
fn group_size(geom: &Geometry, plan: &SlicePlan) -> usize {
    let last = plan.row_dims() - 1;
    let block_items = geom.inner().2[last];
    let stride = plan.sels().nth(last).map_or(1, DimSelection::stride);
    if block_items.div_ceil(stride.max(1)) * geom.typesize() >= SHORT_ROW {
        1
    } else {
        (GROUP_BYTES / geom.block_nbytes().max(1)).max(1)
    }
}

/// Where a block's selected items sit in its C-order buffer: the byte offset of the item for
/// box position 0 and the signed byte step per box position along each dimension (negative
/// where the selection runs backwards, so that the box is filled in output order).
fn block_walk(
    block: &BlockPlan,
    sels: &[DimSelection],
    block_strides: &[usize],
) -> (isize, Vec<isize>) {
    let mut base = 0usize;
    let mut steps = Vec::with_capacity(sels.len());
    for ((seg, sel), &bstride) in block.segments.iter().zip(sels).zip(block_strides) {
        // With one item the step is never taken (and |step| may be huge).
        let stride = if seg.count > 1 { sel.stride() } else { 0 };
        let step = (stride * bstride) as isize;
        if sel.reversed() {
            base += (seg.offset + (seg.count - 1) * stride) * bstride;
            steps.push(-step);
        } else {
            base += seg.offset * bstride;
            steps.push(step);
        }
    }
    (base as isize, steps)
}

/// The byte offset of box row `outer` (all dimensions but the last) given [`block_walk`].
fn row_start(base: isize, steps: &[isize], outer: &[usize]) -> isize {
    base + outer
        .iter()
        .zip(steps)
        .map(|(&o, &s)| o as isize * s)
        .sum::<isize>()
}

/// Calls `f` with every index of `counts[..n-1]` in C order (once, with `[]`, for one
/// dimension or none).
fn for_each_row(counts: &[usize], mut f: impl FnMut(&[usize]) -> Result<()>) -> Result<()> {
    let outer = counts.len().saturating_sub(1);
    if counts.contains(&0) {
        return Ok(());
    }
    let mut idx = vec![0; outer];
    loop {
        f(&idx)?;
        let mut d = outer;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < counts[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Fills `row` (whole items) from `src`, item `q` from byte `at + q * step`.
fn gather(src: &[u8], at: isize, step: isize, row: &mut [u8], ts: usize) {
    if step == ts as isize {
        let a = at as usize;
        row.copy_from_slice(&src[a..a + row.len()]);
        return;
    }
    // Items of the common sizes are copied as fixed-size values, not by a call per item.
    match ts {
        1 => gather_items::<1>(src, at, step, row),
        2 => gather_items::<2>(src, at, step, row),
        4 => gather_items::<4>(src, at, step, row),
        8 => gather_items::<8>(src, at, step, row),
        16 => gather_items::<16>(src, at, step, row),
        _ => {
            for (q, item) in row.chunks_exact_mut(ts).enumerate() {
                let a = (at + q as isize * step) as usize;
                item.copy_from_slice(&src[a..a + ts]);
            }
        }
    }
}

/// [`gather`] from a block left in byte planes (see [`Decoder::decompress_block_planes`],
/// elements of `ts` bytes): byte `j` of the item at block byte `a` is at
/// `j * (src.len() / ts) + a / ts`.
fn gather_planes(src: &[u8], at: isize, step: isize, row: &mut [u8], ts: usize) {
    let n = src.len() / ts;
    for (q, item) in row.chunks_exact_mut(ts).enumerate() {
        let i = (at + q as isize * step) as usize / ts;
        for (j, b) in item.iter_mut().enumerate() {
            *b = src[j * n + i];
        }
    }
}

/// [`gather`] for items of `N` bytes.
fn gather_items<const N: usize>(src: &[u8], at: isize, step: isize, row: &mut [u8]) {
    for (q, item) in row.chunks_exact_mut(N).enumerate() {
        let a = (at + q as isize * step) as usize;
        let value: [u8; N] = src[a..a + N].try_into().unwrap_or([0; N]);
        item.copy_from_slice(&value);
    }
}

/// Spreads `row` (whole items) into `dst`, item `q` to byte `at + q * step`.
fn scatter(row: &[u8], dst: &mut [u8], at: isize, step: isize, ts: usize) {
    if step == ts as isize {
        let a = at as usize;
        dst[a..a + row.len()].copy_from_slice(row);
    } else {
        for (q, item) in row.chunks_exact(ts).enumerate() {
            let a = (at + q as isize * step) as usize;
            dst[a..a + ts].copy_from_slice(item);
        }
    }
}

/// Writes `data`, a C-order array of `sel.shape()`, into the selection `sel` of an array of
/// geometry `geom` whose chunks are in `store`; returns what it did.
///
/// Each touched chunk is rebuilt and compressed with `cparams` (typesize and blocksize set
/// from `geom`, see [`Geometry::chunk_cparams`]), in parallel over chunks. A chunk the
/// selection covers whole is rebuilt from zeros, any other from its decompressed bytes.
///
/// # Errors
/// [`Error::InvalidParam`] if `data` is shorter than the selection or the store does not
/// match `geom`; [`Error::InvalidHeader`] if a chunk to modify does not hold the array's chunk
/// size; the store's errors; otherwise as [`crate::chunk::compress`] and
/// [`crate::chunk::decompress`].
pub fn set_slice<S: ChunkStore + ?Sized>(
    ctx: &Context<'_>,
    cparams: &CParams,
    geom: &Geometry,
    store: &mut S,
    sel: &Selection,
    data: &[u8],
) -> Result<SliceStats> {
    check_source(geom, &*store)?;
    let plan = SlicePlan::new(geom, sel)?;
    let ts = geom.typesize();
    let needed = sel.nitems().and_then(|n| n.checked_mul(ts));
    if needed.is_none_or(|n| data.len() < n) {
        return Err(Error::InvalidParam(format!(
            "{} bytes of data for a selection of {:?} items of {ts} bytes",
            data.len(),
            sel.shape()
        )));
    }
    let counters = Counters::default();
    let writer = Writer::new(ctx, cparams, geom, &plan, data, &counters);
    for batch in batches(plan.nchunks(), geom.chunk_nbytes()) {
        let chunks: Vec<ChunkPlan<'_>> = batch.map(|i| plan.chunk(i)).collect();
        let built = writer.build_batch(Some(&*store), &chunks)?;
        store.update_chunks(chunks.iter().map(ChunkPlan::nchunk).zip(built).collect())?;
        Counters::add(&counters.chunks_written, chunks.len());
    }
    Ok(counters.stats())
}

/// Compresses the chunks of an array of geometry `geom` holding `data` (the whole array,
/// C order), in parallel, and hands them to `sink` in order (chunk 0 first), a batch at a
/// time; returns what it did. This is how a new array is filled: nothing is read.
///
/// # Errors
/// [`Error::InvalidParam`] if `data` is shorter than the array; the sink's errors; as
/// [`crate::chunk::compress`].
pub(crate) fn build_chunks(
    ctx: &Context<'_>,
    cparams: &CParams,
    geom: &Geometry,
    data: &[u8],
    mut sink: impl FnMut(Vec<Vec<u8>>) -> Result<()>,
) -> Result<SliceStats> {
    let sel = Selection::full(geom.shape());
    let plan = SlicePlan::new(geom, &sel)?;
    let needed = geom.nbytes();
    if needed.is_none_or(|n| data.len() < n) {
        return Err(Error::InvalidParam(format!(
            "{} bytes of data for an array of shape {:?} and typesize {}",
            data.len(),
            geom.shape(),
            geom.typesize()
        )));
    }
    let counters = Counters::default();
    let writer = Writer::new(ctx, cparams, geom, &plan, data, &counters);
    for batch in batches(plan.nchunks(), geom.chunk_nbytes()) {
        let first = batch.start;
        let chunks: Vec<ChunkPlan<'_>> = batch.map(|i| plan.chunk(i)).collect();
        debug_assert!(chunks.iter().zip(first..).all(|(c, i)| c.nchunk() == i));
        sink(writer.build_batch::<dyn ChunkSource>(None, &chunks)?)?;
        Counters::add(&counters.chunks_written, chunks.len());
    }
    Ok(counters.stats())
}

/// Compresses chunk `nchunk` of an array of geometry `geom` from `data`, the C-order items
/// of the part of the array the chunk covers ([`Geometry::chunk_extent`]); its padding is
/// zeros.
///
/// # Errors
/// [`Error::InvalidParam`] if `data` is shorter than that part; as
/// [`crate::chunk::compress`].
pub(crate) fn build_chunk(
    ctx: &Context<'_>,
    cparams: &CParams,
    geom: &Geometry,
    nchunk: usize,
    data: &[u8],
) -> Result<Vec<u8>> {
    let coords = geom.chunk_coords(nchunk);
    let extent = geom.chunk_extent(&coords);
    let (start, stop): (Vec<i64>, Vec<i64>) = (0..geom.ndim())
        .map(|d| {
            let a = coords[d] * geom.chunkshape()[d];
            (a as i64, (a + extent[d]) as i64)
        })
        .unzip();
    let sel = Selection::from_start_stop(geom.shape(), &start, &stop)?;
    let plan = SlicePlan::new(geom, &sel)?;
    let needed = sel.nitems().and_then(|n| n.checked_mul(geom.typesize()));
    if plan.nchunks() != 1 || needed.is_none_or(|n| data.len() < n) {
        return Err(Error::InvalidParam(format!(
            "{} bytes of data for chunk {nchunk} of {:?} items",
            data.len(),
            sel.shape()
        )));
    }
    let counters = Counters::default();
    let writer = Writer::new(ctx, cparams, geom, &plan, data, &counters);
    let mut built = writer.build_batch::<dyn ChunkSource>(None, &[plan.chunk(0)])?;
    Ok(built.swap_remove(0))
}

struct Writer<'w> {
    ctx: &'w Context<'w>,
    cparams: CParams,
    geom: &'w Geometry,
    sels: Vec<DimSelection>,
    block_strides: Vec<usize>,
    /// Byte strides of the caller's data (C order over the selection's shape).
    data_strides: Vec<usize>,
    data: &'w [u8],
    counters: &'w Counters,
}

impl<'w> Writer<'w> {
    fn new(
        ctx: &'w Context<'w>,
        cparams: &CParams,
        geom: &'w Geometry,
        plan: &SlicePlan,
        data: &'w [u8],
        counters: &'w Counters,
    ) -> Self {
        let ts = geom.typesize();
        Writer {
            ctx,
            cparams: geom.chunk_cparams(cparams),
            geom,
            sels: plan.sels().copied().collect(),
            block_strides: c_strides(geom.inner().2).iter().map(|s| s * ts).collect(),
            data_strides: c_strides(plan.inner_out()).iter().map(|s| s * ts).collect(),
            data,
            counters,
        }
    }

    /// The new bytes of touched chunks `chunks`, built in parallel; chunks not covered whole
    /// are read from `source` (which must then be given).
    fn build_batch<S: ChunkSource + ?Sized>(
        &self,
        source: Option<&S>,
        chunks: &[ChunkPlan<'_>],
    ) -> Result<Vec<Vec<u8>>> {
        let rt = &self.ctx.runtime;
        let bytes = chunks.len().saturating_mul(self.geom.chunk_nbytes());
        let outer = job_threads(rt, self.cparams.nthreads, bytes).min(chunks.len());
        // One chunk at a time uses the threads inside the chunk; several share them out.
        let inner = if outer > 1 { 1 } else { self.cparams.nthreads };
        rt.map_index(chunks.len(), outer, |i| {
            self.build(source, &chunks[i], inner)
        })
    }

    /// The new bytes of touched chunk `chunk`, compressed on up to `nthreads` threads.
    fn build<S: ChunkSource + ?Sized>(
        &self,
        source: Option<&S>,
        chunk: &ChunkPlan<'_>,
        nthreads: usize,
    ) -> Result<Vec<u8>> {
        let geom = self.geom;
        let cnb = geom.chunk_nbytes();
        let mut buf = zeroed(cnb)?;
        if !chunk.covered() {
            let source = source.ok_or_else(|| {
                Error::InvalidParam(format!("chunk {} is not covered whole", chunk.nchunk()))
            })?;
            let old = source.chunk(chunk.nchunk())?;
            let decoder = Decoder::new(self.ctx.registry, &old)?.with_nd(self.cparams.nd.clone());
            check_chunk(geom, chunk.nchunk(), &decoder)?;
            decoder.decompress_on(&self.ctx.runtime, nthreads, &mut buf)?;
            Counters::add(&self.counters.chunks_read, 1);
            Counters::add(&self.counters.blocks_decompressed, decoder.header.nblocks());
        }
        let bnb = geom.block_nbytes();
        let ts = geom.typesize();
        for block in chunk.blocks() {
            let dst = &mut buf[block.nblock * bnb..(block.nblock + 1) * bnb];
            let (base, steps) = block_walk(&block, &self.sels, &self.block_strides);
            let counts: Vec<usize> = block.segments.iter().map(|s| s.count).collect();
            let row_len = counts[counts.len() - 1] * ts;
            let last = steps.len() - 1;
            for_each_row(&counts, |outer| {
                let from: usize = block
                    .segments
                    .iter()
                    .zip(outer.iter().chain(std::iter::once(&0)))
                    .zip(&self.data_strides)
                    .map(|((s, &o), &stride)| (s.out + o) * stride)
                    .sum();
                let row = &self.data[from..from + row_len];
                scatter(row, dst, row_start(base, &steps, outer), steps[last], ts);
                Counters::add(&self.counters.bytes_copied, row_len);
                Ok(())
            })?;
        }
        let cparams = CParams {
            nthreads,
            ..self.cparams.clone()
        };
        let mut out = zeroed(max_compressed_len(cnb))?;
        let n = compress_ctx(self.ctx, &cparams, &buf, &mut out)?;
        out.truncate(n);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_in_c_order() {
        let mut seen = Vec::new();
        for_each_row(&[2, 3, 5], |o| {
            seen.push(o.to_vec());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.len(), 6);
        assert_eq!(seen[0], [0, 0]);
        assert_eq!(seen[5], [1, 2]);
        let mut n = 0;
        for_each_row(&[4], |o| {
            assert!(o.is_empty());
            n += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 1);
        for_each_row(&[2, 0, 3], |_| panic!("no rows")).unwrap();
    }

    #[test]
    fn gather_and_scatter_steps() {
        let src: Vec<u8> = (0..12).collect();
        let mut row = [0u8; 6];
        gather(&src, 10, -4, &mut row, 2);
        assert_eq!(row, [10, 11, 6, 7, 2, 3]);
        let mut dst = [0u8; 12];
        scatter(&row, &mut dst, 0, 4, 2);
        assert_eq!(dst, [10, 11, 0, 0, 6, 7, 0, 0, 2, 3, 0, 0]);
    }
}
