//! Writes: every touched chunk rebuilt and compressed again, in parallel over chunks (a chunk
//! the selection covers whole gathered block by block from the caller's data as it is
//! compressed, any other from its decompressed bytes), each touched block receiving its box
//! of the caller's data; and the chunks of a new array built from a buffer without reading
//! anything, each batch stored while the next is compressed.

use super::walk::{block_walk, for_each_row, row_start, scatter};
use super::{batches, check_chunk, check_source, Counters, SliceStats};
use crate::alloc::{resize, zeroed};
use crate::chunk::{
    compress_input, job_threads, max_compressed_len, take_scratch, CParams, Context, Decoder, Input,
};
use crate::error::{Error, Expected, Result};
use crate::ndarray::geometry::{c_strides, Geometry};
use crate::ndarray::plan::{BlockPlan, ChunkPlan, SlicePlan};
use crate::ndarray::selection::{DimSelection, Selection};
use crate::ndarray::store::{ChunkSource, ChunkStore};
use std::ops::Range;

/// Writes `data`, a C-order array of `sel.shape()`, into the selection `sel` of an array of
/// geometry `geom` whose chunks are in `store`; returns what it did.
///
/// Each touched chunk is rebuilt and compressed with `cparams` (typesize and blocksize set
/// from `geom`, see [`Geometry::chunk_cparams`]), in parallel over chunks. A chunk the
/// selection covers whole is rebuilt from zeros, any other from its decompressed bytes.
///
/// # Errors
/// [`Error::OutOfRange`] if `data` is shorter than the selection or the store does not
/// match `geom`; [`Error::InvalidHeader`] if a chunk to modify does not hold the array's chunk
/// size; the store's errors; otherwise as [`crate::chunk::compress`] and
/// [`crate::chunk::decompress`].
pub fn set_slice<S: ChunkStore + ?Sized>(
    ctx: &Context,
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
    check_data("bytes of data for the selection", needed, data)?;
    let counters = Counters::default();
    let writer = Writer::new(ctx, cparams, geom, &plan, data, &counters);
    for batch in batches(plan.nchunks(), geom.chunksize()) {
        let chunks: Vec<ChunkPlan<'_>> = batch.map(|i| plan.chunk(i)).collect();
        let built = writer.build_batch(Some(&*store), &chunks)?;
        store.update_chunks(chunks.iter().map(ChunkPlan::nchunk).zip(built).collect())?;
        Counters::add(&counters.chunks_written, chunks.len());
    }
    Ok(counters.stats())
}

/// Compresses the chunks of an array of geometry `geom` holding `data` (the whole array,
/// C order), in parallel, and hands them to `sink` in order (chunk 0 first), a batch at a
/// time; returns what it did. This is how a new array is filled: nothing is read. With more
/// than one batch, the sink runs on a thread of its own, taking each batch while the next
/// one is compressed (so a store writes while the runtime compresses).
///
/// # Errors
/// [`Error::OutOfRange`] if `data` is shorter than the array; the sink's errors; as
/// [`crate::chunk::compress`]. Batches before the failing one may have reached the sink.
pub(crate) fn build_chunks(
    ctx: &Context,
    cparams: &CParams,
    geom: &Geometry,
    data: &[u8],
    mut sink: impl FnMut(&[&[u8]]) -> Result<()> + Send,
) -> Result<SliceStats> {
    let sel = Selection::full(geom.shape());
    let plan = SlicePlan::new(geom, &sel)?;
    let needed = geom.nbytes();
    check_data("bytes of data for the array", needed, data)?;
    let counters = Counters::default();
    let writer = Writer::new(ctx, cparams, geom, &plan, data, &counters);
    // Each batch is compressed into buffers of batches already stored, when there are some:
    // fresh memory costs a page fault per page touched.
    let build = |batch: Range<usize>, spare: &mut Vec<Built>| {
        let first = batch.start;
        let chunks: Vec<ChunkPlan<'_>> = batch.map(|i| plan.chunk(i)).collect();
        debug_assert!(chunks.iter().zip(first..).all(|(c, i)| c.nchunk() == i));
        let mut built: Vec<Built> = (0..chunks.len())
            .map(|_| spare.pop().unwrap_or_default())
            .collect();
        writer.build_into::<dyn ChunkSource>(None, &chunks, &mut built)?;
        Ok::<_, Error>(built)
    };
    let mut sunk = |built: &[Built]| {
        let refs: Vec<&[u8]> = built.iter().map(Built::bytes).collect();
        sink(&refs)?;
        Counters::add(&counters.chunks_written, built.len());
        Ok::<_, Error>(())
    };
    let all = batches(plan.nchunks(), geom.chunksize());
    let mut spare = Vec::new();
    if all.len() <= 1 {
        for batch in all {
            sunk(&build(batch, &mut spare)?)?;
        }
        return Ok(counters.stats());
    }
    std::thread::scope(|s| {
        // One batch waits while the sink takes the one before: compressed bytes of at most
        // three batches are held at once. Stored batches come back for their buffers.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Built>>(1);
        let (back, returned) = std::sync::mpsc::channel::<Vec<Built>>();
        let sinking = s.spawn(move || {
            for built in rx {
                sunk(&built)?;
                // The builder may be gone (it failed): the buffers are then simply freed.
                let _ = back.send(built);
            }
            Ok(())
        });
        let mut made = Ok(());
        for batch in all {
            spare.extend(returned.try_iter().flatten());
            match build(batch, &mut spare) {
                // A closed channel: the sink failed, and says why below.
                Ok(built) => {
                    if tx.send(built).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    made = Err(e);
                    break;
                }
            }
        }
        drop(tx);
        let sunk = sinking
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        made.and(sunk)
    })?;
    Ok(counters.stats())
}

/// Compresses chunk `nchunk` of an array of geometry `geom` from `data`, the C-order items
/// of the part of the array the chunk covers ([`Geometry::chunk_extent`]); its padding is
/// zeros.
///
/// # Errors
/// [`Error::OutOfRange`] if `data` is shorter than that part; as
/// [`crate::chunk::compress`].
pub(crate) fn build_chunk(
    ctx: &Context,
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
    if plan.nchunks() != 1 {
        return Err(Error::Internal {
            what: "a chunk's extent touches another chunk",
        });
    }
    check_data("bytes of data for the chunk", needed, data)?;
    let counters = Counters::default();
    let writer = Writer::new(ctx, cparams, geom, &plan, data, &counters);
    let mut built = writer.build_batch::<dyn ChunkSource>(None, &[plan.chunk(0)])?;
    Ok(built.swap_remove(0))
}

/// A compressed chunk: the first `len` bytes of `buf`.
#[derive(Debug, Default)]
struct Built {
    buf: Vec<u8>,
    len: usize,
}

impl Built {
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

struct Writer<'w> {
    ctx: &'w Context,
    cparams: CParams,
    geom: &'w Geometry,
    sels: Vec<DimSelection>,
    block_strides: Vec<usize>,
    /// Byte strides of the caller's data (C order over the selection's shape).
    data_strides: Vec<usize>,
    /// The selection's shape over the internal dimensions (the caller's data).
    sel_shape: Vec<usize>,
    data: &'w [u8],
    counters: &'w Counters,
}

impl<'w> Writer<'w> {
    fn new(
        ctx: &'w Context,
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
            sel_shape: plan.inner_out().to_vec(),
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
        let mut built: Vec<Built> = (0..chunks.len()).map(|_| Built::default()).collect();
        self.build_into(source, chunks, &mut built)?;
        Ok(built
            .into_iter()
            .map(|b| {
                let mut v = b.buf;
                v.truncate(b.len);
                v
            })
            .collect())
    }

    /// [`Writer::build_batch`] into `built` (one per chunk; buffers of earlier chunks are
    /// reused as they are, without being cleared).
    fn build_into<S: ChunkSource + ?Sized>(
        &self,
        source: Option<&S>,
        chunks: &[ChunkPlan<'_>],
        built: &mut [Built],
    ) -> Result<()> {
        let rt = self.ctx.runtime();
        let bytes = chunks.len().saturating_mul(self.geom.chunksize());
        let outer = job_threads(rt, self.cparams.nthreads, bytes).min(chunks.len());
        // One chunk at a time uses the threads inside the chunk; several share them out.
        let inner = if outer > 1 { 1 } else { self.cparams.nthreads };
        rt.for_each_chunk_mut(built, 1, outer, |i, slot| {
            let b = &mut slot[0];
            b.len = self.build(source, &chunks[i], inner, &mut b.buf)?;
            Ok(())
        })
    }

    /// The new bytes of touched chunk `chunk`, compressed on up to `nthreads` threads. A
    /// chunk covered whole is gathered block by block from the caller's data by the threads
    /// that compress it; any other is decompressed, then its touched blocks receive theirs.
    /// Writes it at the start of `out` (grown to the most a chunk can take if shorter; a
    /// buffer that held an earlier chunk is not written again), and returns its length.
    fn build<S: ChunkSource + ?Sized>(
        &self,
        source: Option<&S>,
        chunk: &ChunkPlan<'_>,
        nthreads: usize,
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        let geom = self.geom;
        let cnb = geom.chunksize();
        let bnb = geom.blocksize();
        let cparams = CParams {
            nthreads,
            ..self.cparams.clone()
        };
        let ts = geom.typesize();
        let copied: usize = chunk
            .blocks()
            .map(|b| b.segments.iter().map(|s| s.count).product::<usize>() * ts)
            .sum();
        Counters::add(&self.counters.bytes_copied, copied);
        if out.len() < max_compressed_len(cnb) {
            *out = zeroed(max_compressed_len(cnb))?;
        }
        let n = if let Some(bytes) = self.contiguous(chunk) {
            compress_input(self.ctx, &cparams, &Input::Bytes(bytes), out)?
        } else if chunk.covered() {
            let mut blocks: Vec<Option<BlockPlan>> = vec![None; geom.nblocks()];
            for block in chunk.blocks() {
                let at = block.nblock;
                blocks[at] = Some(block);
            }
            let fill = |nblock: usize, dst: &mut [u8]| match &blocks[nblock] {
                Some(block) => {
                    // Items outside the array (padding) are zeros, as C-Blosc2 writes them.
                    if !block.segments.iter().all(|s| s.dense) {
                        dst.fill(0);
                    }
                    self.scatter_block(block, dst)
                }
                None => {
                    dst.fill(0);
                    Ok(())
                }
            };
            let input = Input::Blocks {
                nbytes: cnb,
                blocksize: bnb,
                fill: &fill,
            };
            compress_input(self.ctx, &cparams, &input, out)?
        } else {
            let source = source.ok_or(Error::Internal {
                what: "a chunk not covered whole is built without the chunk it replaces",
            })?;
            // A buffer kept by this thread from earlier chunks: the decompression writes
            // every byte of it, so it is neither allocated nor zero-filled again.
            let mut kept = take_scratch();
            let buf = &mut kept[0];
            resize(buf, cnb, 0)?;
            let old = source.chunk(chunk.nchunk())?;
            let decoder = Decoder::new(self.ctx.registry(), &old)?.with_nd(self.cparams.nd.clone());
            check_chunk(geom, &decoder)?;
            decoder.decompress_on(self.ctx.runtime(), nthreads, buf)?;
            Counters::add(&self.counters.chunks_read, 1);
            Counters::add(&self.counters.blocks_decompressed, decoder.header.nblocks());
            for block in chunk.blocks() {
                let at = block.nblock * bnb;
                self.scatter_block(&block, &mut buf[at..at + bnb])?;
            }
            compress_input(self.ctx, &cparams, &Input::Bytes(buf), out)?
        };
        Ok(n)
    }

    /// The bytes of `chunk` in the caller's data when they are exactly the chunk's bytes, to
    /// be compressed where they are: a chunk covered whole (forwards), without padding,
    /// whose blocks follow each other in C order and whose box is one run of the data (slabs
    /// of whole rows, as python-blosc2 partitions a C-order array).
    fn contiguous(&self, chunk: &ChunkPlan<'_>) -> Option<&'w [u8]> {
        let geom = self.geom;
        let (_, cshape, bshape) = geom.inner();
        let dense = geom.chunk_is_dense(&geom.chunk_coords(chunk.nchunk()));
        if !chunk.covered() || !dense || self.sels.iter().any(|s| s.step != 1) {
            return None;
        }
        // Blocks in C order: one item along every dimension before the last one that blocks
        // cut (they are whole along those after it).
        if let Some(k) = bshape.iter().zip(cshape).rposition(|(b, c)| b < c) {
            if bshape[..k].iter().any(|&b| b != 1) {
                return None;
            }
        }
        // One run of the data: after the first dimension longer than one item, the chunk
        // spans the data whole.
        if let Some(j) = cshape.iter().position(|&c| c > 1) {
            if cshape[j + 1..] != self.sel_shape[j + 1..] {
                return None;
            }
        }
        let first = chunk.block(0);
        let from: usize = first
            .segments
            .iter()
            .zip(&self.data_strides)
            .map(|(s, &stride)| s.out * stride)
            .sum();
        self.data.get(from..from + geom.chunksize())
    }

    /// Copies `block`'s box of the caller's data into `dst`, the block's bytes (the caller
    /// counts them, as a block may be gathered more than once).
    fn scatter_block(&self, block: &BlockPlan, dst: &mut [u8]) -> Result<()> {
        let ts = self.geom.typesize();
        let mut steps = Vec::with_capacity(self.sels.len());
        let base = block_walk(block, &self.sels, &self.block_strides, &mut steps);
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
            Ok(())
        })
    }
}

/// Checks that `data` holds the `needed` bytes (`None`: their count overflows).
fn check_data(what: &'static str, needed: Option<usize>, data: &[u8]) -> Result<()> {
    let needed = needed.ok_or(Error::Overflow { what })?;
    if data.len() < needed {
        return Err(Error::range(what, data.len(), Expected::at_least(needed)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{array, counting, cparams, geometry, Chunks};
    use super::*;
    use crate::chunk::{decompress_vec, DParams};
    use crate::ndarray::selection::Slice;
    use crate::ndarray::slice::get_slice;

    fn all(g: &Geometry, chunks: &Chunks) -> Vec<u8> {
        let mut out = vec![0u8; g.nitems()];
        get_slice(
            &Context::global(),
            &DParams::default(),
            g,
            chunks,
            &Selection::full(g.shape()),
            &mut out,
        )
        .unwrap();
        out
    }

    #[test]
    fn a_partial_write_reads_the_chunk_a_whole_one_does_not() {
        let g = geometry(&[16, 16], &[8, 8], &[4, 4]);
        let mut data = counting(&g);
        let mut chunks = array(&g, &data);
        let ctx = Context::global();
        // Rows 0..8, columns 0..8: chunk 0 exactly.
        let sel = Selection::new(g.shape(), &[Slice::range(0, 8), Slice::range(0, 8)]).unwrap();
        let s = set_slice(&ctx, &cparams(), &g, &mut chunks, &sel, &[9; 64]).unwrap();
        assert_eq!(
            (s.chunks_read, s.chunks_written, s.bytes_copied),
            (0, 1, 64)
        );
        for r in 0..8 {
            data[r * 16..r * 16 + 8].fill(9);
        }
        assert_eq!(all(&g, &chunks), data);
        // Row 10, columns 6..10: parts of chunks 2 and 3.
        let sel = Selection::new(g.shape(), &[Slice::index(10), Slice::range(6, 10)]).unwrap();
        let s = set_slice(&ctx, &cparams(), &g, &mut chunks, &sel, &[1, 2, 3, 4]).unwrap();
        assert_eq!(
            (s.chunks_read, s.chunks_written, s.blocks_decompressed),
            (2, 2, 8)
        );
        data[166..170].copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(all(&g, &chunks), data);
        let e = set_slice(&ctx, &cparams(), &g, &mut chunks, &sel, &[1, 2, 3]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::OutOfRange {
                    value: 3,
                    expected: Expected::AtLeast(4),
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn new_chunks_hold_the_array_and_zero_padding() {
        // 10 x 10 in chunks of 4 x 4: the edge chunks are padded.
        let g = geometry(&[10, 10], &[4, 4], &[2, 2]);
        let data = counting(&g);
        let chunks = array(&g, &data);
        assert_eq!(chunks.0.len(), 9);
        // Chunk 8 holds rows 8..10 and columns 8..10, then zeros.
        let last = decompress_vec(&chunks.0[8]).unwrap();
        let mut want = [0u8; 16];
        for (r, c) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            want[r * 4 + c] = data[(8 + r) * 10 + 8 + c];
        }
        // Blocks of 2 x 2 in C order inside the chunk: block 0 holds the four items.
        assert_eq!(last[..4], [want[0], want[1], want[4], want[5]]);
        assert!(last[4..].iter().all(|&b| b == 0));
        let extent: Vec<u8> = (8..10)
            .flat_map(|r| data[r * 10 + 8..r * 10 + 10].to_vec())
            .collect();
        assert_eq!(
            build_chunk(&Context::global(), &cparams(), &g, 8, &extent).unwrap(),
            chunks.0[8]
        );
        assert!(build_chunk(&Context::global(), &cparams(), &g, 8, &extent[..3]).is_err());
        let e =
            build_chunks(&Context::global(), &cparams(), &g, &data[1..], |_| Ok(())).unwrap_err();
        assert!(
            matches!(
                e,
                Error::OutOfRange {
                    what: "bytes of data for the array",
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(all(&g, &chunks), data);
    }

    /// Chunk `n` of `g` holding `data` (items of 8 bytes) as C-Blosc2 lays it out: its
    /// blocks in order, each in C order, zeros wherever the extended chunk lies outside the
    /// chunk or the array.
    fn padded(g: &Geometry, data: &[u8], n: usize) -> Vec<u8> {
        use crate::ndarray::geometry::{ravel, unravel};
        let (shape, cshape, bshape) = g.inner();
        let nd = shape.len();
        let coords = g.chunk_coords(n);
        let mut out = Vec::with_capacity(g.chunksize());
        for nblock in 0..g.nblocks() {
            let b = g.block_coords(nblock);
            for item in 0..g.block_nitems() {
                let i = unravel(item, bshape);
                let local: Vec<usize> = (0..nd).map(|d| b[d] * bshape[d] + i[d]).collect();
                let at: Vec<usize> = (0..nd).map(|d| coords[d] * cshape[d] + local[d]).collect();
                if (0..nd).all(|d| local[d] < cshape[d] && at[d] < shape[d]) {
                    let k = ravel(&at, shape);
                    out.extend_from_slice(&data[k * 8..k * 8 + 8]);
                } else {
                    out.extend_from_slice(&[0; 8]);
                }
            }
        }
        out
    }

    #[test]
    fn chunks_gathered_block_by_block_equal_their_padded_bytes_compressed() {
        use crate::chunk::compress_vec_ctx;
        use crate::format::b2nd::B2ndMeta;
        use crate::format::ids::{CodecId, FilterId};
        let lz4 = CParams::default().with_codec(CodecId::LZ4).with_typesize(8);
        let filters = |f: [FilterId; 6]| lz4.clone().with_filters(f, [0; 6]);
        let none = FilterId::NOFILTER;
        let cases = [
            lz4.clone(),
            filters([none, none, none, none, none, FilterId::BITSHUFFLE]),
            filters([none; 6]),
            filters([
                FilterId::SHUFFLE,
                none,
                none,
                none,
                none,
                FilterId::BITSHUFFLE,
            ]),
            // Delta reads the whole chunk, a dictionary is trained on it: gathered first.
            filters([none, none, none, none, FilterId::DELTA, FilterId::SHUFFLE]),
            CParams::default()
                .with_codec(CodecId::ZSTD)
                .with_typesize(8)
                .with_use_dict(true),
            lz4.clone().with_clevel(0),
        ];
        let geometries = [
            // Every dimension cut by the shape and by the chunkshape: edge chunks and edge
            // blocks hold padding, and some blocks lie wholly in it.
            (vec![11, 9, 13], vec![6, 5, 8], vec![4, 2, 3]),
            // Slabs of whole rows in blocks of half rows: each chunk is a run of the data,
            // compressed where it lies.
            (vec![12, 10], vec![3, 10], vec![1, 5]),
            // Slabs of whole rows in blocks of three half rows: not in C order.
            (vec![12, 10], vec![3, 10], vec![3, 5]),
        ];
        let ctx = Context::global();
        for (shape, chunkshape, blockshape) in geometries {
            let meta = B2ndMeta::new(shape, chunkshape, blockshape, "<u8").unwrap();
            let g = Geometry::new(&meta, 8).unwrap();
            let smooth: Vec<u8> = (0..g.nitems() as u64)
                .flat_map(|i| (i * i % 1000 + i / 7).to_le_bytes())
                .collect();
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            let noise: Vec<u8> = (0..g.nitems() * 8)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            for (data, what) in [(&smooth, "smooth"), (&noise, "noise")] {
                for cp in &cases {
                    for nthreads in [1, 2] {
                        let cp = cp.clone().with_nthreads(nthreads);
                        let mut built = Vec::new();
                        let stats = build_chunks(&ctx, &cp, &g, data, |b| {
                            built.extend(b.iter().map(|c| c.to_vec()));
                            Ok(())
                        })
                        .unwrap();
                        assert_eq!(stats.bytes_copied, data.len());
                        assert_eq!(built.len(), g.nchunks());
                        for (n, chunk) in built.iter().enumerate() {
                            let want = padded(&g, data, n);
                            let c = compress_vec_ctx(&ctx, &g.chunk_cparams(&cp), &want).unwrap();
                            assert!(*chunk == c, "{what} chunk {n} of {g:?}, {cp:?}");
                            assert_eq!(decompress_vec(chunk).unwrap(), want);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_covered_chunk_of_a_slab_is_compressed_from_the_callers_data() {
        // Rows 3..6 of a 12 x 10 array in chunks of 3 whole rows, blocks of half rows: the
        // selection's data is chunk 1's bytes exactly.
        let g = geometry(&[12, 10], &[3, 10], &[1, 5]);
        let mut data = counting(&g);
        let mut chunks = array(&g, &data);
        let sel = Selection::new(g.shape(), &[Slice::range(3, 6), Slice::FULL]).unwrap();
        let new: Vec<u8> = (100..130).collect();
        let ctx = Context::global();
        let back =
            Selection::new(g.shape(), &[Slice::new(Some(5), Some(2), -1), Slice::FULL]).unwrap();
        let counters = Counters::default();
        let contiguous = |g: &Geometry, sel: &Selection| {
            let plan = SlicePlan::new(g, sel).unwrap();
            let w = Writer::new(&ctx, &cparams(), g, &plan, &new, &counters);
            w.contiguous(&plan.chunk(0)).map(<[u8]>::as_ptr)
        };
        assert_eq!(contiguous(&g, &sel), Some(new.as_ptr()));
        assert_eq!(contiguous(&g, &back), None);
        let across = geometry(&[12, 10], &[3, 10], &[3, 5]);
        assert_eq!(contiguous(&across, &sel), None);
        let s = set_slice(&ctx, &cparams(), &g, &mut chunks, &sel, &new).unwrap();
        assert_eq!(
            (s.chunks_read, s.chunks_written, s.bytes_copied),
            (0, 1, 30)
        );
        assert_eq!(
            chunks.0[1],
            compress_ctx_vec(&g, &new),
            "the chunk is the selection's bytes compressed"
        );
        data[30..60].copy_from_slice(&new);
        assert_eq!(all(&g, &chunks), data);
        // Backwards, the same rows are not a run of the data in order: gathered instead.
        set_slice(&ctx, &cparams(), &g, &mut chunks, &back, &new).unwrap();
        let mut rows: Vec<u8> = new[20..30].to_vec();
        rows.extend_from_slice(&new[10..20]);
        rows.extend_from_slice(&new[..10]);
        data[30..60].copy_from_slice(&rows);
        assert_eq!(all(&g, &chunks), data);
    }

    fn compress_ctx_vec(g: &Geometry, chunk: &[u8]) -> Vec<u8> {
        crate::chunk::compress_vec_ctx(&Context::global(), &g.chunk_cparams(&cparams()), chunk)
            .unwrap()
    }

    #[test]
    fn batches_reach_the_sink_in_order_and_its_error_stops_the_build() {
        // More chunks than one batch holds: the sink takes them on a thread of its own.
        let n = super::super::MAX_BATCH_CHUNKS * 2 + 5;
        let g = geometry(&[n as i64], &[1], &[1]);
        let data = counting(&g);
        let ctx = Context::global();
        let mut seen = Vec::new();
        let stats = build_chunks(&ctx, &cparams(), &g, &data, |batch| {
            seen.push(batch.len());
            let first = seen.len() - 1;
            for (k, c) in batch.iter().enumerate() {
                let at = first * super::super::MAX_BATCH_CHUNKS + k;
                assert_eq!(decompress_vec(c).unwrap(), [data[at]]);
            }
            Ok(())
        })
        .unwrap();
        let m = super::super::MAX_BATCH_CHUNKS;
        assert_eq!(seen, [m, m, 5]);
        assert_eq!((stats.chunks_written, stats.bytes_copied), (n, n));
        let mut calls = 0;
        let e = build_chunks(&ctx, &cparams(), &g, &data, |_| {
            calls += 1;
            Err(Error::Unsupported {
                what: "a full disk",
            })
        })
        .unwrap_err();
        assert_eq!(
            e,
            Error::Unsupported {
                what: "a full disk"
            }
        );
        assert_eq!(calls, 1);
    }
}
