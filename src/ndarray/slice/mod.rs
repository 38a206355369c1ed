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
//! buffer, through an output view that hands each task its own disjoint box. When a block's
//! rows of the output are short (a hyperplane across the last axes), the blocks along the
//! output's last dimension form one task, so each output row is written in one pass. A block
//! that is exactly a contiguous run of the output (picked whole, no padding, step 1) is
//! decompressed in place, with no copy. No chunk is decompressed whole unless every block of
//! it is needed (or its blocks are not the array's: a chunk from another writer).
//!
//! A read may go through a shared [`BlockCache`](crate::cache::BlockCache)
//! ([`get_slice_cached`]): each touched block is looked up by (dataset version, chunk,
//! block) and decompressed into the cache only when missing; a chunk whose touched blocks
//! are all there is neither read nor parsed, and its blocks are looked up once, together.
//!
//! The plan of each touched chunk is made once per batch; a task plans its blocks into
//! buffers it keeps (with its decompression scratch and its row pieces) from one task to the
//! next on its thread, so that a read allocates per chunk, not per block.
//!
//! **Writes** ([`set_slice`]): every touched chunk is rebuilt and compressed again, in parallel
//! over chunks. A chunk the selection covers whole needs no decompression: each of its blocks
//! is gathered from the caller's data by the thread that compresses it, straight into that
//! thread's scratch (padding zeros, as C-Blosc2 writes it), with no chunk-sized buffer; any
//! other is decompressed first (read-modify-write), then each touched block receives its box
//! of the caller's data. A new array's batches of chunks reach the store on a thread of their
//! own while the next batch is compressed.
//!
//! Reads may run concurrently from many threads on one source. A write that fails part-way
//! (a corrupt chunk, memory) may leave the chunks of earlier batches already replaced.
//!
//! The engine lives in three files: `read` (the batches of lazy chunks and the block tasks
//! of a read), `write` (chunks rebuilt and compressed again, or built for a new array) and
//! `walk` (where a block's selected items sit, and the row copies that gather them out of a
//! block or scatter them into one).
//!
//! Format: c-blosc2 `blosc/b2nd.c` (`get_set_slice`); `docs/b2nd.md` (data layout, and how a
//! slice is read and written).
//!
//! ```
//! use strata::chunk::{CParams, Context, DParams};
//! use strata::ndarray::slice::{get_slice, set_slice};
//! use strata::ndarray::{ArrayParams, Location, NdArray, Selection, Slice};
//! let params = ArrayParams::new(&[5, 7], 1).with_chunkshape(&[4, 4]).with_blockshape(&[2, 3]);
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

mod read;
mod walk;
mod write;

pub use read::{get_slice, get_slice_cached, Cached};
pub use write::set_slice;
pub(crate) use write::{build_chunk, build_chunks};

use super::geometry::Geometry;
use super::store::ChunkSource;
use crate::chunk::Decoder;
use crate::error::{to_i64, Error, Expected, Result};
use crate::frame::Traffic;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What a slice read or write did, for tests and tuning.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SliceStats {
    /// Chunks fetched from the source (reads), or decompressed to be modified (writes).
    pub chunks_read: usize,
    /// Blocks decompressed; block 0 of a delta chunk counts once however many blocks use it.
    pub blocks_decompressed: usize,
    /// Of those, blocks decompressed straight into the destination, with no copy.
    pub blocks_in_place: usize,
    /// Of those, blocks decoded only up to their last picked item
    /// ([`Decoder::decompress_block_prefix`]).
    pub blocks_partial: usize,
    /// Blocks read from a block cache instead of being decompressed (reads through
    /// [`Cached`]).
    pub blocks_from_cache: usize,
    /// Bytes written to the destination (reads) or taken from the caller's data (writes).
    pub bytes_copied: usize,
    /// Chunks compressed and stored (writes).
    pub chunks_written: usize,
    /// Bytes read from the store for the touched chunks (reads): for a frame file, the lazy
    /// chunks' bytes; for a remote array, the file bytes that came over the network (0 for
    /// sources that do not count them: memory, chunks read through libhdf5).
    pub bytes_read: u64,
    /// Reads (a file) or requests (a remote array) that moved them.
    pub requests: u64,
}

#[derive(Debug, Default)]
struct Counters {
    chunks_read: AtomicUsize,
    blocks_decompressed: AtomicUsize,
    blocks_in_place: AtomicUsize,
    blocks_partial: AtomicUsize,
    blocks_from_cache: AtomicUsize,
    bytes_copied: AtomicUsize,
    chunks_written: AtomicUsize,
    bytes_read: AtomicU64,
    requests: AtomicU64,
}

impl Counters {
    pub(super) fn add(counter: &AtomicUsize, n: usize) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub(super) fn stats(&self) -> SliceStats {
        let get = |c: &AtomicUsize| c.load(Ordering::Relaxed);
        SliceStats {
            chunks_read: get(&self.chunks_read),
            blocks_decompressed: get(&self.blocks_decompressed),
            blocks_in_place: get(&self.blocks_in_place),
            blocks_partial: get(&self.blocks_partial),
            blocks_from_cache: get(&self.blocks_from_cache),
            bytes_copied: get(&self.bytes_copied),
            chunks_written: get(&self.chunks_written),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            requests: self.requests.load(Ordering::Relaxed),
        }
    }

    /// Counts what reads from the store moved.
    pub(super) fn moved(&self, t: Traffic) {
        self.bytes_read.fetch_add(t.bytes, Ordering::Relaxed);
        self.requests.fetch_add(t.requests, Ordering::Relaxed);
    }
}

/// Uncompressed bytes of chunks handled per batch (bounds the memory of a write, and of reads
/// from chunks that must be decompressed whole).
const BATCH_BYTES: usize = 64 << 20;

/// Most chunks per batch.
const MAX_BATCH_CHUNKS: usize = 4096;

/// The planned chunks `0..nchunks`, of `chunksize` uncompressed bytes each, cut into
/// batches of at most [`BATCH_BYTES`] (at least one chunk, at most [`MAX_BATCH_CHUNKS`]).
pub(super) fn batches(
    nchunks: usize,
    chunksize: usize,
) -> impl ExactSizeIterator<Item = Range<usize>> {
    let per_batch = (BATCH_BYTES / chunksize.max(1)).clamp(1, MAX_BATCH_CHUNKS);
    (0..nchunks)
        .step_by(per_batch)
        .map(move |t| t..(t + per_batch).min(nchunks))
}

fn check_source<S: ChunkSource + ?Sized>(geom: &Geometry, source: &S) -> Result<()> {
    if source.nchunks() != geom.nchunks() {
        let what = "chunks in the store (those of the array)";
        return Err(Error::mismatch(what, geom.nchunks(), source.nchunks()));
    }
    Ok(())
}

fn check_chunk(geom: &Geometry, d: &Decoder<'_>) -> Result<()> {
    if d.header.nbytes != geom.chunksize() {
        let array = Expected::Exactly(to_i64(geom.chunksize()));
        return Err(Error::header(
            "chunk nbytes (those of the array's chunks)",
            d.header.nbytes,
            array,
        ));
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod testkit {
    //! Arrays in memory for the tests of this module and its children.

    use super::build_chunks;
    use crate::chunk::{CParams, Context};
    use crate::error::{Error, Result};
    use crate::format::b2nd::B2ndMeta;
    use crate::format::ids::CodecId;
    use crate::ndarray::geometry::Geometry;
    use crate::ndarray::store::{ChunkSource, ChunkStore};
    use std::borrow::Cow;

    /// Compressed chunks in a vector.
    #[derive(Debug, Default)]
    pub struct Chunks(pub Vec<Vec<u8>>);

    impl ChunkSource for Chunks {
        fn nchunks(&self) -> usize {
            self.0.len()
        }
        fn chunk(&self, nchunk: usize) -> Result<Cow<'_, [u8]>> {
            self.0
                .get(nchunk)
                .map(|c| Cow::Borrowed(&c[..]))
                .ok_or_else(|| Error::index("chunk", nchunk, self.0.len()))
        }
    }

    impl ChunkStore for Chunks {
        fn update_chunk(&mut self, nchunk: usize, chunk: Vec<u8>) -> Result<()> {
            self.0[nchunk] = chunk;
            Ok(())
        }
        fn insert_chunk(&mut self, nchunk: usize, chunk: Vec<u8>) -> Result<()> {
            self.0.insert(nchunk, chunk);
            Ok(())
        }
        fn delete_chunk(&mut self, nchunk: usize) -> Result<()> {
            self.0.remove(nchunk);
            Ok(())
        }
    }

    /// The geometry of a u8 array.
    pub fn geometry(shape: &[i64], chunks: &[i32], blocks: &[i32]) -> Geometry {
        let meta = B2ndMeta::new(shape.to_vec(), chunks.to_vec(), blocks.to_vec(), "|u1").unwrap();
        Geometry::new(&meta, 1).unwrap()
    }

    /// LZ4 and shuffle.
    pub fn cparams() -> CParams {
        CParams {
            codec: CodecId::LZ4,
            typesize: 1,
            ..CParams::default()
        }
    }

    /// The chunks of an array of `geom` holding `data` (C order).
    pub fn array(geom: &Geometry, data: &[u8]) -> Chunks {
        let mut chunks = Chunks::default();
        build_chunks(&Context::global(), &cparams(), geom, data, |batch| {
            chunks.0.extend(batch.iter().map(|c| c.to_vec()));
            Ok(())
        })
        .unwrap();
        chunks
    }

    /// The bytes `0, 1, 2, …` (wrapping) of an array of `geom`.
    pub fn counting(geom: &Geometry) -> Vec<u8> {
        (0..geom.nitems()).map(|i| i as u8).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::{array, counting, geometry};
    use super::*;

    #[test]
    fn batches_bound_bytes_and_chunks() {
        let all: Vec<Range<usize>> = batches(10, BATCH_BYTES / 3).collect();
        assert_eq!(all, [0..3, 3..6, 6..9, 9..10]);
        // A chunk larger than a batch goes alone; tiny chunks by MAX_BATCH_CHUNKS at most.
        assert_eq!(
            batches(2, 2 * BATCH_BYTES).collect::<Vec<_>>(),
            [0..1, 1..2]
        );
        let tiny: Vec<Range<usize>> = batches(MAX_BATCH_CHUNKS + 5, 1).collect();
        assert_eq!(
            tiny,
            [0..MAX_BATCH_CHUNKS, MAX_BATCH_CHUNKS..MAX_BATCH_CHUNKS + 5]
        );
        assert_eq!(batches(0, 100).count(), 0);
    }

    #[test]
    fn the_store_must_match_the_geometry() {
        let g = geometry(&[10, 10], &[5, 5], &[5, 5]);
        let mut chunks = array(&g, &counting(&g));
        check_source(&g, &chunks).unwrap();
        let last = chunks.0.pop().unwrap();
        let e = check_source(&g, &chunks).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Mismatch {
                    expected: 4,
                    found: 3,
                    ..
                }
            ),
            "{e}"
        );
        let other = geometry(&[10, 10], &[5, 10], &[5, 10]);
        let d = Decoder::new(&crate::registry::Registry::global(), &last).unwrap();
        check_chunk(&g, &d).unwrap();
        let e = check_chunk(&other, &d).unwrap_err();
        assert!(
            matches!(e, Error::InvalidHeader { expected: Expected::Exactly(n), .. } if n == other.chunksize() as i64),
            "{e}"
        );
    }

    #[test]
    fn counters_add_up() {
        let c = Counters::default();
        Counters::add(&c.blocks_decompressed, 3);
        Counters::add(&c.blocks_decompressed, 2);
        Counters::add(&c.chunks_written, 1);
        let s = c.stats();
        assert_eq!(
            (s.blocks_decompressed, s.chunks_written, s.chunks_read),
            (5, 1, 0)
        );
    }
}
