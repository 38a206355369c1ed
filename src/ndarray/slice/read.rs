//! Reads: the touched chunks fetched in batches as lazy chunks (only the touched blocks'
//! bytes, into buffers kept per thread), each parsed once (block 0 of a delta chunk decoded
//! once), then one task per block, or per group of blocks along the output's last dimension
//! when a block's rows are short, that decompresses and copies its box into the output.
//! Through a block cache, touched blocks come from it, or are decompressed into it.

use super::walk::{block_prefix, block_walk, gather, gather_planes};
use super::{batches, check_chunk, check_source, Counters, SliceStats};
use crate::alloc::zeroed;
use crate::cache::{Block, BlockCache, BlockKey, DatasetVersion};
use crate::chunk::{job_threads, Context, DParams, Decoder};
use crate::error::{Error, Result};
use crate::format::chunk::{ChunkHeader, SpecialType};
use crate::ndarray::geometry::{c_strides, Geometry};
use crate::ndarray::plan::{BlockPlan, ChunkPlan, SlicePlan};
use crate::ndarray::selection::{DimSelection, Selection};
use crate::ndarray::store::ChunkSource;
use crate::ndarray::view::{BoxMut, SliceOutput};
use std::ops::Range;

/// A block cache a read goes through, and the version of the dataset read (see
/// [`crate::cache`]): each block is looked up by (version, chunk, block) and decompressed
/// only when missing, once however many readers miss it together.
#[derive(Debug, Clone, Copy)]
pub struct Cached<'c> {
    /// The cache.
    pub cache: &'c BlockCache,
    /// The dataset's version.
    pub dataset: DatasetVersion,
}

/// Copies the selection `sel` of an array of geometry `geom`, whose chunks come from
/// `source`, into `out` as a C-order array of `sel.shape()`; returns what it did.
///
/// Only the touched blocks are decompressed, in parallel on `ctx.runtime()` with up to
/// `dparams.nthreads` threads (0 = the runtime's default). Bytes of `out` past the selection
/// are left alone.
///
/// # Errors
/// [`Error::DestinationTooSmall`] if `out` is shorter than the selection;
/// [`Error::Mismatch`] / [`Error::OutOfRange`] if the source's chunk count or the selection
/// does not match `geom`; [`Error::InvalidHeader`] if a chunk does not hold the array's chunk size; the
/// source's errors; otherwise as [`crate::chunk::decompress`].
pub fn get_slice<S: ChunkSource + ?Sized>(
    ctx: &Context,
    dparams: &DParams,
    geom: &Geometry,
    source: &S,
    sel: &Selection,
    out: &mut [u8],
) -> Result<SliceStats> {
    get_slice_cached(ctx, dparams, geom, source, sel, out, None)
}

/// [`get_slice`] reading the array's blocks through `cached` (when given): blocks already
/// there are copied from it, the others decompressed into it.
///
/// # Errors
/// As [`get_slice`]; [`Error::MemoryAlloc`] for a block buffer.
pub fn get_slice_cached<S: ChunkSource + ?Sized>(
    ctx: &Context,
    dparams: &DParams,
    geom: &Geometry,
    source: &S,
    sel: &Selection,
    out: &mut [u8],
    cached: Option<Cached<'_>>,
) -> Result<SliceStats> {
    check_source(geom, source)?;
    let plan = SlicePlan::new(geom, sel)?;
    let ts = geom.typesize();
    let needed = sel
        .nitems()
        .and_then(|n| n.checked_mul(ts))
        .ok_or(Error::Overflow {
            what: "the selection's size in bytes",
        })?;
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
        cached,
    };
    for batch in batches(plan.nchunks(), geom.chunksize()) {
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

/// One touched chunk ready for its block tasks: parsed (and partly decompressed), or every
/// touched block already in the cache (then its bytes were not even read).
enum Ready<'b> {
    Decoded(Prepared<'b>),
    /// The touched blocks, in the chunk's block order.
    Held(Vec<Block>),
}

/// A touched chunk parsed for its block tasks.
struct Prepared<'b> {
    /// Its chunk number.
    nchunk: usize,
    decoder: Decoder<'b>,
    /// The chunk decompressed whole, when its blocks are not the array's blocks.
    whole: Option<Vec<u8>>,
    /// Block 0, decompressed once, when the chunk uses delta and other blocks are read.
    block0: Option<Vec<u8>>,
}

struct Reader<'r> {
    ctx: &'r Context,
    dparams: &'r DParams,
    geom: &'r Geometry,
    plan: &'r SlicePlan,
    sels: Vec<DimSelection>,
    /// Byte strides of a block (C order over the blockshape).
    block_strides: Vec<usize>,
    output: &'r SliceOutput<'r, 'r>,
    counters: &'r Counters,
    cached: Option<Cached<'r>>,
}

impl Reader<'_> {
    /// Reads touched chunks `range` (plan order).
    fn batch<S: ChunkSource + ?Sized>(&self, source: &S, range: Range<usize>) -> Result<()> {
        let chunks: Vec<ChunkPlan<'_>> = range.clone().map(|t| self.plan.chunk(t)).collect();
        let rt = self.ctx.runtime();
        let nt = self.dparams.nthreads;
        // Chunks whose touched blocks are all in the cache are neither read nor parsed.
        let held: Vec<Option<Vec<Block>>> = chunks
            .iter()
            .map(|c| self.held_blocks(c))
            .collect::<Result<_>>()?;
        let fetched = held.iter().filter(|h| h.is_none()).count();
        let mut images = ImagePool::take(if fetched > 0 { chunks.len() } else { 0 });
        if fetched > 0 {
            self.fetch_batch(source, &chunks, &held, &mut images.0)?;
        }
        Counters::add(&self.counters.chunks_read, fetched);
        let mut decoded = if fetched > 0 {
            rt.map_index(chunks.len(), nt, |i| match held[i] {
                Some(_) => Ok(None),
                None => self.prepare(&chunks[i], &images.0[i]).map(Some),
            })?
        } else {
            Vec::new()
        };
        let preps: Vec<Ready<'_>> = held
            .into_iter()
            .enumerate()
            .map(|(i, h)| match h {
                Some(blocks) => Ok(Ready::Held(blocks)),
                None => decoded
                    .get_mut(i)
                    .and_then(Option::take)
                    .map(Ready::Decoded)
                    .ok_or(Error::Internal {
                        what: "a touched chunk was not prepared",
                    }),
            })
            .collect::<Result<_>>()?;
        let first = self.output.first_task(range.start);
        let ntasks = self.output.first_task(range.end) - first;
        let nblocks: usize = chunks.iter().map(ChunkPlan::nblocks).sum();
        let nthreads = job_threads(rt, nt, nblocks.saturating_mul(self.geom.blocksize()));
        rt.for_each_index_init(ntasks, nthreads, TaskScratch::default, |scratch, j| {
            let TaskScratch { plans, bufs, copy } = scratch;
            let t = self.output.task_chunk(first + j)?;
            let k = t.checked_sub(range.start).filter(|&k| k < chunks.len());
            let k = k.ok_or(Error::Internal {
                what: "a task outside its batch",
            })?;
            let mut task = self.output.task(first + j, &chunks[k], plans)?;
            match &preps[k] {
                Ready::Decoded(prep) => {
                    self.read_group(prep, task.blocks, &mut task.bx, bufs, copy)
                }
                Ready::Held(held) => {
                    let held = held.get(task.first_block..).unwrap_or_default();
                    self.read_held(held, task.blocks, &mut task.bx, copy)
                }
            }
        })
    }

    /// Reads the touched chunks of `chunks` not `held` into `images` (one per chunk).
    fn fetch_batch<S: ChunkSource + ?Sized>(
        &self,
        source: &S,
        chunks: &[ChunkPlan<'_>],
        held: &[Option<Vec<Block>>],
        images: &mut [Vec<u8>],
    ) -> Result<()> {
        let (rt, nt) = (self.ctx.runtime(), self.dparams.nthreads);
        if source.batches_reads() {
            // A network store: the reads of every chunk handed over at once.
            let todo: Vec<usize> = (0..chunks.len()).filter(|&i| held[i].is_none()).collect();
            let blocks: Vec<Vec<usize>> = todo
                .iter()
                .map(|&i| chunks[i].block_numbers().collect())
                .collect();
            let wants: Vec<(usize, &[usize])> = todo
                .iter()
                .zip(&blocks)
                .map(|(&i, b)| (chunks[i].nchunk(), &b[..]))
                .collect();
            let mut outs: Vec<Vec<u8>> = todo
                .iter()
                .map(|&i| std::mem::take(&mut images[i]))
                .collect();
            let r = source.chunk_blocks_many(&wants, &mut outs);
            for (&i, out) in todo.iter().zip(outs) {
                images[i] = out;
            }
            self.counters.moved(r?);
            for &i in &todo {
                self.whole_if_needed(source, &chunks[i], &mut images[i])?;
            }
        } else {
            rt.for_each_chunk_mut(images, 1, nt, |i, image| match held[i] {
                Some(_) => Ok(()),
                None => self.fetch(source, &chunks[i], &mut image[0]),
            })?;
        }
        Ok(())
    }

    /// Every touched block of `chunk` from the cache, in the chunk's block order, if all are
    /// there (none is counted otherwise).
    fn held_blocks(&self, chunk: &ChunkPlan<'_>) -> Result<Option<Vec<Block>>> {
        let Some(c) = self.cached else {
            return Ok(None);
        };
        let nchunk = chunk.nchunk() as u64;
        let keys = chunk
            .block_numbers()
            .map(|nblock| {
                let nblock = u32::try_from(nblock).map_err(|_| cache_key(nblock))?;
                Ok(BlockKey {
                    dataset: c.dataset,
                    nchunk,
                    nblock,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(c.cache.get_all(&keys))
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
        let nblocks: Vec<usize> = chunk.block_numbers().collect();
        self.counters
            .moved(source.chunk_blocks(chunk.nchunk(), &nblocks, image)?);
        self.whole_if_needed(source, chunk, image)
    }

    /// Makes the lazy chunk `image` of `chunk` whole (all its blocks read) when its blocks
    /// are not the array's (a chunk from another writer, decompressed whole).
    fn whole_if_needed<S: ChunkSource + ?Sized>(
        &self,
        source: &S,
        chunk: &ChunkPlan<'_>,
        image: &mut Vec<u8>,
    ) -> Result<()> {
        let h = ChunkHeader::parse(image)?;
        if !blocks_are_the_arrays(&h, self.geom) {
            let all: Vec<usize> = (0..h.nblocks()).collect();
            self.counters
                .moved(source.chunk_blocks(chunk.nchunk(), &all, image)?);
        }
        Ok(())
    }

    /// Parses chunk `chunk` and decompresses what its block tasks will share.
    fn prepare<'b>(&self, chunk: &ChunkPlan<'_>, bytes: &'b [u8]) -> Result<Prepared<'b>> {
        let geom = self.geom;
        let decoder = Decoder::new(self.ctx.registry(), bytes)?.with_nd(self.dparams.nd.clone());
        check_chunk(geom, &decoder)?;
        let h = &decoder.header;
        if !blocks_are_the_arrays(h, geom) {
            // Not the array's blocks (a chunk from another writer): decompress it whole.
            let mut whole = zeroed(geom.chunksize())?;
            decoder.decompress_on(self.ctx.runtime(), 1, &mut whole)?;
            Counters::add(&self.counters.blocks_decompressed, h.nblocks());
            return Ok(Prepared {
                nchunk: chunk.nchunk(),
                decoder,
                whole: Some(whole),
                block0: None,
            });
        }
        let other_blocks = chunk.nblocks() > 1 || chunk.block_number(0) > 0;
        let block0 = if decoder.needs_block0() && other_blocks {
            let mut b = zeroed(geom.blocksize())?;
            decoder.decompress_block(0, &mut b, None)?;
            Counters::add(&self.counters.blocks_decompressed, 1);
            Some(b)
        } else {
            None
        };
        Ok(Prepared {
            nchunk: chunk.nchunk(),
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
            let bnb = self.geom.blocksize();
            let range = nblock * bnb..(nblock + 1) * bnb;
            prep.decoder
                .decompress_range_on(self.ctx.runtime(), 1, range, dst)?;
            return Ok(());
        }
        prep.decoder
            .decompress_block(nblock, dst, prep.block0.as_deref())?;
        Ok(())
    }

    /// Block `nblock` of `prep`'s chunk from the cache `c`, decompressed into it if missing.
    fn cached_block(&self, c: Cached<'_>, prep: &Prepared<'_>, nblock: usize) -> Result<Block> {
        let key = BlockKey {
            dataset: c.dataset,
            nchunk: prep.nchunk as u64,
            nblock: u32::try_from(nblock).map_err(|_| cache_key(nblock))?,
        };
        let mut loaded = false;
        let b = c.cache.get_or_load(key, self.geom.blocksize(), |dst| {
            match (&prep.block0, nblock) {
                // Block 0 of a delta chunk is decompressed (and counted) once per read anyway.
                (Some(b0), 0) => dst.copy_from_slice(b0),
                _ => {
                    loaded = true;
                    self.decode_block(prep, nblock, dst)?;
                }
            }
            Ok(())
        })?;
        let counter = if loaded {
            &self.counters.blocks_decompressed
        } else {
            &self.counters.blocks_from_cache
        };
        Counters::add(counter, 1);
        Ok(b)
    }

    /// Copies a group of blocks of a chunk all of whose touched blocks were in the cache:
    /// `held` are the chunk's blocks from the group's first on.
    fn read_held(
        &self,
        held: &[Block],
        blocks: &[BlockPlan],
        bx: &mut BoxMut<'_>,
        copy: &mut CopyScratch,
    ) -> Result<()> {
        if held.len() < blocks.len() {
            return Err(Error::Internal {
                what: "a block of the group was not held",
            });
        }
        Counters::add(&self.counters.blocks_from_cache, blocks.len());
        self.copy_group(blocks, |j| (&held[j][..], false), bx, copy)
    }

    /// Decompresses a group of blocks (or finds them decompressed) and copies their box into
    /// the output, row by row across the group. A lone block that is exactly a contiguous
    /// run of the output is decompressed in place.
    fn read_group(
        &self,
        prep: &Prepared<'_>,
        blocks: &[BlockPlan],
        bx: &mut BoxMut<'_>,
        bufs: &mut BlockBufs,
        copy: &mut CopyScratch,
    ) -> Result<()> {
        let bnb = self.geom.blocksize();
        let ts = self.geom.typesize();
        let from_prep = |nblock: usize| -> Option<&[u8]> {
            match (&prep.whole, &prep.block0) {
                (Some(whole), _) => Some(&whole[nblock * bnb..(nblock + 1) * bnb]),
                (None, Some(b0)) if nblock == 0 => Some(b0),
                _ => None,
            }
        };
        // Through the cache: each block decompressed once into it, then shared (special
        // chunks, as cheap to rebuild as to copy, and chunks decompressed whole bypass it).
        let through_cache = self
            .cached
            .filter(|_| prep.whole.is_none() && prep.decoder.header.special == SpecialType::None);
        if let Some(c) = through_cache {
            bufs.held.clear();
            for block in blocks {
                bufs.held.push(self.cached_block(c, prep, block.nblock)?);
            }
            let held = &bufs.held;
            return self.copy_group(blocks, |j| (&held[j][..], false), bx, copy);
        }
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
        let BlockBufs {
            decoded, planes, ..
        } = bufs;
        planes.clear();
        let need = blocks.len() * bnb;
        if decoded.len() < need {
            decoded.resize(need, 0);
        }
        let nitems = self.geom.block_nitems();
        for (block, slot) in blocks.iter().zip(decoded.chunks_mut(bnb)) {
            if from_prep(block.nblock).is_some() {
                planes.push((bnb, false));
                continue;
            }
            Counters::add(&self.counters.blocks_decompressed, 1);
            let picked: usize = block.segments.iter().map(|s| s.count).product();
            // A block whose picked items all lie in its first items is decoded up to there
            // only (see `Decoder::decompress_block_prefix`), its items gathered from byte
            // planes when few of that prefix are picked. The decoder counts items of the
            // chunk's typesize, which differs from the array's for items of more than 255
            // bytes (stored as typesize 1, as C-Blosc2 does); byte planes are only those of
            // the array's items.
            let prefix = block_prefix(block, &self.sels, &self.block_strides, ts);
            let cts = prep.decoder.header.typesize.max(1);
            if prefix < nitems && (prefix * ts).is_multiple_of(cts) {
                let sparse = cts == ts && picked.saturating_mul(SPARSE_PREFIX) <= prefix;
                let cut = prep.decoder.decompress_block_prefix(
                    block.nblock,
                    prefix * ts / cts,
                    sparse,
                    slot,
                )?;
                if let Some(in_planes) = cut {
                    Counters::add(&self.counters.blocks_partial, 1);
                    planes.push((prefix * ts, in_planes));
                    continue;
                }
            }
            // A block of which few items are picked is left in byte planes when its only
            // filter is shuffle: its items are gathered from the planes, rather than the
            // whole block unshuffled for them.
            let in_planes = picked.saturating_mul(SPARSE) <= nitems
                && prep.decoder.shuffle_planes() == Some(ts);
            if in_planes {
                prep.decoder.decompress_block_planes(block.nblock, slot)?;
            } else {
                self.decode_block(prep, block.nblock, slot)?;
            }
            planes.push((bnb, in_planes));
        }
        // Where each block's bytes are: the chunk's shared parts, or the scratch.
        let (decoded, planes) = (&*decoded, &*planes);
        let src = |j: usize| {
            let (len, in_planes) = planes[j];
            let slot = &decoded[j * bnb..j * bnb + len];
            (from_prep(blocks[j].nblock).unwrap_or(slot), in_planes)
        };
        self.copy_group(blocks, src, bx, copy)
    }

    /// Copies the box of a group of blocks, whose bytes are `src(j)` for block `j` (and
    /// whether they are in byte planes), into the output, row by row across the group.
    fn copy_group<'s>(
        &self,
        blocks: &[BlockPlan],
        src: impl Fn(usize) -> (&'s [u8], bool),
        bx: &mut BoxMut<'_>,
        copy: &mut CopyScratch,
    ) -> Result<()> {
        let ts = self.geom.typesize();
        // Each block's piece of a box row, in output order along the last dimension.
        let last = bx.counts().len() - 1;
        let CopyScratch {
            pieces,
            steps,
            walk,
        } = copy;
        pieces.clear();
        for (j, block) in blocks.iter().enumerate() {
            let base = block_walk(block, &self.sels, &self.block_strides, walk);
            if j == 0 {
                // The blocks share their segments before the last dimension, and so their
                // steps along them; the box leaves out trailing dimensions of one item
                // (their offset is in `base`).
                steps.clear();
                steps.extend_from_slice(&walk[..last]);
            }
            let seg = &block.segments[last];
            pieces.push(Piece {
                out: seg.out,
                block: j,
                base,
                step: walk[last],
                len: seg.count * ts,
            });
        }
        pieces.sort_unstable_by_key(|p| p.out);
        // Each piece's block bytes, looked up once rather than row after row.
        let bytes: Vec<(&[u8], bool)> = pieces.iter().map(|p| src(p.block)).collect();
        let mut copied = 0;
        bx.for_each_row(0, steps, |rel, row| {
            let mut at = 0;
            for (p, &(bytes, in_planes)) in pieces.iter().zip(&bytes) {
                let dst = &mut row[at..at + p.len];
                if in_planes {
                    gather_planes(bytes, p.base + rel, p.step, dst, ts);
                } else {
                    gather(bytes, p.base + rel, p.step, dst, ts);
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
    h.special != SpecialType::None || (!h.vl_blocks() && h.blocksize == geom.blocksize())
}

/// What a block task keeps from one task to the next on its thread, so that once warm a
/// task allocates nothing: its block plans, its blocks' buffers and its row pieces.
#[derive(Default)]
struct TaskScratch {
    plans: Vec<BlockPlan>,
    bufs: BlockBufs,
    copy: CopyScratch,
}

/// The blocks of a task: decompressed into `decoded` (one blocksize apart; `planes` says
/// how many bytes of each and whether in byte planes), or shared from the cache (`held`).
#[derive(Default)]
struct BlockBufs {
    decoded: Vec<u8>,
    planes: Vec<(usize, bool)>,
    held: Vec<Block>,
}

/// The pieces of a group's rows (see [`Reader::copy_group`]), the box's steps in the
/// blocks, and one block's walk.
#[derive(Default)]
struct CopyScratch {
    pieces: Vec<Piece>,
    steps: Vec<isize>,
    walk: Vec<isize>,
}

/// One block's part of each row of a group's box (see [`Reader::copy_group`]).
struct Piece {
    /// Its first output index along the row.
    out: usize,
    /// The block's place in the group.
    block: usize,
    /// Byte offset in the block's bytes of the piece's first item in the box's first row.
    base: isize,
    /// Byte step in the block's bytes between the piece's items.
    step: isize,
    /// Bytes of the piece in a row.
    len: usize,
}

/// A block of which at most one item in this many is picked is read from its byte planes
/// (when shuffle is its only filter).
const SPARSE: usize = 32;

/// A block decoded only up to its last picked item ([`Decoder::decompress_block_prefix`])
/// is left in byte planes when at most one item in this many of that prefix is picked (when
/// shuffle is its only filter and it was split into one stream per byte); otherwise the
/// prefix is unshuffled. On float64 blocks of 20,000 items the two cost the same at about one
/// item in 8 picked (`docs/measurements.md`).
const SPARSE_PREFIX: usize = 8;

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
        (GROUP_BYTES / geom.blocksize().max(1)).max(1)
    }
}

/// Block `nblock` has no key in the block cache (keys number blocks with a `u32`).
fn cache_key(nblock: usize) -> Error {
    Error::index("block (for the block cache)", nblock, u32::MAX as usize + 1)
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{array, counting, cparams, geometry};
    use super::*;
    use crate::chunk::{compress_vec, CParams};
    use crate::ndarray::selection::Slice;

    fn read(geom: &Geometry, source: &dyn ChunkSource, slices: &[Slice]) -> (Vec<u8>, SliceStats) {
        let sel = Selection::new(geom.shape(), slices).unwrap();
        let mut out = vec![0u8; sel.nitems().unwrap()];
        let stats = get_slice(
            &Context::global(),
            &DParams::default(),
            geom,
            source,
            &sel,
            &mut out,
        )
        .unwrap();
        (out, stats)
    }

    #[test]
    fn only_the_touched_blocks_are_decompressed() {
        // 16 x 16 in chunks of 8 x 16 and blocks of 2 x 16 (whole rows).
        let g = geometry(&[16, 16], &[8, 16], &[2, 16]);
        let data = counting(&g);
        let chunks = array(&g, &data);
        // Rows 2 and 3: one block, exactly a run of the output, decompressed in place.
        let (out, s) = read(&g, &chunks, &[Slice::range(2, 4)]);
        assert_eq!(out, data[32..64]);
        assert_eq!(
            (s.chunks_read, s.blocks_decompressed, s.blocks_in_place),
            (1, 1, 1)
        );
        assert_eq!(s.bytes_copied, 32);
        // A column: every block of both chunks, none in place.
        let (out, s) = read(&g, &chunks, &[Slice::FULL, Slice::index(5)]);
        assert_eq!(out, (0..16).map(|r| data[r * 16 + 5]).collect::<Vec<_>>());
        assert_eq!(
            (s.chunks_read, s.blocks_decompressed, s.blocks_in_place),
            (2, 8, 0)
        );
        // Backwards, with a step.
        let (out, _) = read(
            &g,
            &chunks,
            &[Slice::new(None, None, -5), Slice::range(14, 16)],
        );
        let want: Vec<u8> = [15, 10, 5, 0]
            .iter()
            .flat_map(|&r| [data[r * 16 + 14], data[r * 16 + 15]])
            .collect();
        assert_eq!(out, want);
    }

    #[test]
    fn a_chunk_of_other_blocks_is_decompressed_whole() {
        let g = geometry(&[16, 16], &[8, 16], &[2, 16]);
        let data = counting(&g);
        let mut chunks = array(&g, &data);
        // Chunk 1 as another writer made it: one block for the whole chunk.
        assert!(!blocks_are_the_arrays(
            &ChunkHeader::parse(&compress_vec(&cparams(), &data[128..]).unwrap()).unwrap(),
            &g
        ));
        chunks.0[1] = compress_vec(
            &CParams {
                blocksize: 128,
                ..cparams()
            },
            &data[128..],
        )
        .unwrap();
        let (out, s) = read(&g, &chunks, &[Slice::index(9)]);
        assert_eq!(out, data[144..160]);
        assert_eq!((s.chunks_read, s.blocks_decompressed), (1, 1));
        let (out, s) = read(&g, &chunks, &[Slice::FULL, Slice::index(3)]);
        assert_eq!(out, (0..16).map(|r| data[r * 16 + 3]).collect::<Vec<_>>());
        assert_eq!(s.blocks_decompressed, 4 + 1);
    }

    #[test]
    fn short_rows_are_written_by_groups_of_blocks() {
        let g = geometry(&[64, 64], &[32, 32], &[8, 8]);
        let col = SlicePlan::new(
            &g,
            &Selection::new(g.shape(), &[Slice::FULL, Slice::range(0, 64)]).unwrap(),
        )
        .unwrap();
        assert_eq!(group_size(&g, &col), GROUP_BYTES / 64);
        let wide = geometry(&[64, 1024], &[32, 1024], &[8, 512]);
        let rows = SlicePlan::new(&wide, &Selection::full(wide.shape())).unwrap();
        assert_eq!(group_size(&wide, &rows), 1);
        let data = counting(&g);
        let (out, _) = read(
            &g,
            &array(&g, &data),
            &[Slice::range(3, 40), Slice::range(5, 60)],
        );
        let want: Vec<u8> = (3..40)
            .flat_map(|r| data[r * 64 + 5..r * 64 + 60].to_vec())
            .collect();
        assert_eq!(out, want);
    }

    #[test]
    fn hyperplanes_decode_block_prefixes_on_every_codec_and_filter() {
        use crate::chunk::SplitMode;
        use crate::format::b2nd::B2ndMeta;
        use crate::format::ids::{CodecId, FilterId};
        use crate::ndarray::slice::build_chunks;
        // float64 items, 12 x 10 x 9 in chunks of 8 x 6 x 9 and blocks of 4 x 3 x 3: edge
        // chunks, padded chunks, and blocks whose rows are part of a chunk's.
        let (shape, chunks, blocks) = ([12i64, 10, 9], [8i32, 6, 9], [4i32, 3, 3]);
        let meta = B2ndMeta::new(shape.to_vec(), chunks.to_vec(), blocks.to_vec(), "<f8").unwrap();
        let g = Geometry::new(&meta, 8).unwrap();
        let n = g.nitems();
        let data: Vec<u8> = (0..n)
            .flat_map(|i| (f64::from(i as u32 / 5) * 0.25).to_le_bytes())
            .collect();
        let item = |i: usize, j: usize, k: usize| &data[((i * 10 + j) * 9 + k) * 8..][..8];
        for codec in [CodecId::LZ4, CodecId::BLOSCLZ, CodecId::ZSTD] {
            for filter in [FilterId::NOFILTER, FilterId::SHUFFLE, FilterId::BITSHUFFLE] {
                for split in [SplitMode::Always, SplitMode::Never] {
                    let mut cp = CParams {
                        codec,
                        typesize: 8,
                        splitmode: split,
                        ..CParams::default()
                    };
                    cp.filters[5] = filter;
                    let mut source = super::super::testkit::Chunks::default();
                    build_chunks(&Context::global(), &cp, &g, &data, |batch| {
                        source.0.extend(batch.iter().map(|c| c.to_vec()));
                        Ok(())
                    })
                    .unwrap();
                    let what = format!("codec {} filter {} {split:?}", codec.0, filter.0);
                    let read = |slices: &[Slice]| {
                        let sel = Selection::new(g.shape(), slices).unwrap();
                        let mut out = vec![0u8; sel.nitems().unwrap() * 8];
                        let dp = DParams::default();
                        let s = get_slice(&Context::global(), &dp, &g, &source, &sel, &mut out);
                        (out, s.unwrap())
                    };
                    let mut partial = 0;
                    for i in [0usize, 1, 5, 7, 11] {
                        let (out, s) = read(&[Slice::index(i as i64)]);
                        let want: Vec<u8> = (0..10)
                            .flat_map(|j| (0..9).flat_map(move |k| item(i, j, k).to_vec()))
                            .collect();
                        assert_eq!(out, want, "{what} row {i}");
                        partial += s.blocks_partial;
                    }
                    for j in [0usize, 4, 9] {
                        let (out, _) = read(&[Slice::FULL, Slice::index(j as i64)]);
                        let want: Vec<u8> = (0..12)
                            .flat_map(|i| (0..9).flat_map(move |k| item(i, j, k).to_vec()))
                            .collect();
                        assert_eq!(out, want, "{what} axis 1 at {j}");
                    }
                    for k in [0usize, 2, 8] {
                        let (out, _) = read(&[Slice::FULL, Slice::FULL, Slice::index(k as i64)]);
                        let want: Vec<u8> = (0..12)
                            .flat_map(|i| (0..10).flat_map(move |j| item(i, j, k).to_vec()))
                            .collect();
                        assert_eq!(out, want, "{what} axis 2 at {k}");
                    }
                    // Backwards with a step, over the first rows of each block.
                    let (out, _) = read(&[
                        Slice::new(Some(10), None, -3),
                        Slice::range(0, 2),
                        Slice::new(None, None, -4),
                    ]);
                    let want: Vec<u8> = [10usize, 7, 4, 1]
                        .iter()
                        .flat_map(|&i| {
                            (0..2).flat_map(move |j| {
                                [8usize, 4, 0]
                                    .into_iter()
                                    .flat_map(move |k| item(i, j, k).to_vec())
                            })
                        })
                        .collect();
                    assert_eq!(out, want, "{what} stepped");
                    // Plain blocks can be cut, and shuffled ones split into byte streams: LZ4
                    // cuts them (other codecs only where streams are runs or stored raw).
                    let cuttable = filter == FilterId::NOFILTER
                        || (filter == FilterId::SHUFFLE && split == SplitMode::Always);
                    if !cuttable {
                        assert_eq!(partial, 0, "{what}");
                    } else if codec == CodecId::LZ4 {
                        assert!(partial > 0, "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn image_buffers_are_kept_per_thread() {
        let mut pool = ImagePool::take(2);
        pool.0[0].reserve(1000);
        pool.0[1].reserve(2000);
        drop(pool);
        let again = ImagePool::take(3);
        let caps: Vec<usize> = again.0.iter().map(Vec::capacity).collect();
        assert!(caps[0] >= 1000 && caps[1] >= 2000, "{caps:?}");
        assert_eq!(caps[2], 0);
        let e = {
            let g = geometry(&[4, 4], &[4, 4], &[2, 4]);
            let chunks = array(&g, &counting(&g));
            let sel = Selection::full(g.shape());
            get_slice(
                &Context::global(),
                &DParams::default(),
                &g,
                &chunks,
                &sel,
                &mut [0; 15],
            )
            .unwrap_err()
        };
        assert!(
            matches!(e, Error::DestinationTooSmall { needed: 16, .. }),
            "{e}"
        );
    }
}
