//! Where an array's compressed chunks live.
//!
//! [`ChunkSource`] is what reads need (a chunk by number, whole or as a lazy chunk holding
//! only some blocks, from any thread); [`ChunkStore`] adds the super-chunk's mutations
//! (update, insert, delete), which writes and resizes use. The super-chunk ([`SChunk`], in
//! memory, in a `.b2nd` file or in a sparse directory) implements both; its lazy chunks read
//! from the file only the chunk header, the `bstarts` and the blocks a slice needs.
//!
//! Format: chunks as `docs/chunk-format.md`; their order as c-blosc2 `blosc/schunk.c`
//! (`blosc2_schunk_update_chunk`, `_insert_chunk`, `_delete_chunk`); lazy chunks as
//! `blosc/frame.c` (`frame_get_lazychunk`).
#![forbid(unsafe_code)]

use crate::error::Result;
use crate::frame::Traffic;
use crate::schunk::SChunk;
use std::borrow::Cow;

/// Compressed chunks by number, readable from many threads at once.
pub trait ChunkSource: Sync {
    /// Number of chunks.
    fn nchunks(&self) -> usize;

    /// The compressed chunk `nchunk`: a whole Blosc2 chunk (header, `bstarts`, streams).
    ///
    /// # Errors
    /// [`crate::Error::InvalidIndex`] if there is no chunk `nchunk`; a source that reads
    /// storage returns its I/O or format errors.
    fn chunk(&self, nchunk: usize) -> Result<Cow<'_, [u8]>>;

    /// Chunk `nchunk` for reading blocks `nblocks` (block numbers of the chunk, as its own
    /// `blocksize` counts them), written into `out` (whose capacity is reused): a chunk image
    /// in which at least the header, the `bstarts`, those blocks and, for a chunk with delta,
    /// block 0 are intact. Other blocks may be absent (their `bstarts` then point at bytes
    /// that are not theirs), so only the blocks asked for may be decoded from it. The default
    /// copies the whole chunk.
    ///
    /// Returns what the read moved from storage (nothing for a source in memory).
    ///
    /// # Errors
    /// As [`ChunkSource::chunk`].
    fn chunk_blocks(&self, nchunk: usize, nblocks: &[usize], out: &mut Vec<u8>) -> Result<Traffic> {
        let _ = nblocks;
        let chunk = self.chunk(nchunk)?;
        out.clear();
        out.extend_from_slice(&chunk);
        Ok(Traffic::default())
    }

    /// [`ChunkSource::chunk_blocks`] for each of `wants` (`(nchunk, nblocks)`), into the
    /// matching buffer of `outs`. A source whose reads go over a network gathers the reads of
    /// all of them into few requests; the default reads them one by one.
    ///
    /// # Errors
    /// As [`ChunkSource::chunk_blocks`]; [`crate::Error::Mismatch`] when `outs` and
    /// `wants` differ in length.
    fn chunk_blocks_many(
        &self,
        wants: &[(usize, &[usize])],
        outs: &mut [Vec<u8>],
    ) -> Result<Traffic> {
        if wants.len() != outs.len() {
            let what = "buffers for the chunks asked for";
            return Err(crate::Error::mismatch(what, wants.len(), outs.len()));
        }
        let mut moved = Traffic::default();
        for (&(nchunk, nblocks), out) in wants.iter().zip(outs) {
            moved += self.chunk_blocks(nchunk, nblocks, out)?;
        }
        Ok(moved)
    }

    /// True when [`ChunkSource::chunk_blocks_many`] of many chunks costs much less than as
    /// many [`ChunkSource::chunk_blocks`] (a network store): readers then fetch a batch of
    /// chunks in one call rather than chunk by chunk in parallel. False by default.
    fn batches_reads(&self) -> bool {
        false
    }

    /// The selection `sel` (`start:stop` per dimension, joined by commas) cut by the server
    /// the chunks come from, as a b2nd contiguous frame of at most `max_len` bytes, and what
    /// the request moved; `None` when the source has no such server (see
    /// [`crate::frame::FrameIo::server_selection`]). The default is `None`.
    ///
    /// # Errors
    /// The source's failure to reach its server.
    fn server_selection(&self, sel: &str, max_len: u64) -> Option<Result<(Vec<u8>, Traffic)>> {
        let _ = (sel, max_len);
        None
    }
}

/// A [`ChunkSource`] that can also replace, insert and delete chunks, as a super-chunk does.
pub trait ChunkStore: ChunkSource {
    /// Whether the store takes writes at all, asked before any work is done for one (a
    /// store opened read-only refuses here, not after the chunks are compressed).
    ///
    /// # Errors
    /// The store's refusal; the default takes writes.
    fn check_writable(&self) -> Result<()> {
        Ok(())
    }

    /// Replaces chunk `nchunk` with `chunk`.
    ///
    /// # Errors
    /// [`crate::Error::InvalidIndex`] if there is no chunk `nchunk`; a store's own errors.
    fn update_chunk(&mut self, nchunk: usize, chunk: Vec<u8>) -> Result<()>;

    /// Replaces several chunks, `(nchunk, chunk)` each. A store that persists them commits
    /// once for all; the default replaces them one at a time.
    ///
    /// # Errors
    /// As [`ChunkStore::update_chunk`].
    fn update_chunks(&mut self, updates: Vec<(usize, Vec<u8>)>) -> Result<()> {
        for (nchunk, chunk) in updates {
            self.update_chunk(nchunk, chunk)?;
        }
        Ok(())
    }

    /// Inserts `chunk` so that it becomes chunk `nchunk` (`nchunk <= nchunks()`).
    ///
    /// # Errors
    /// [`crate::Error::InvalidIndex`] if `nchunk > nchunks()`; a store's own errors.
    fn insert_chunk(&mut self, nchunk: usize, chunk: Vec<u8>) -> Result<()>;

    /// Removes chunk `nchunk`; the chunks after it move down by one.
    ///
    /// # Errors
    /// [`crate::Error::InvalidIndex`] if there is no chunk `nchunk`; a store's own errors.
    fn delete_chunk(&mut self, nchunk: usize) -> Result<()>;
}

impl ChunkSource for SChunk {
    fn nchunks(&self) -> usize {
        SChunk::nchunks(self)
    }

    fn chunk(&self, nchunk: usize) -> Result<Cow<'_, [u8]>> {
        SChunk::chunk(self, nchunk).map(Cow::Owned)
    }

    fn chunk_blocks(&self, nchunk: usize, nblocks: &[usize], out: &mut Vec<u8>) -> Result<Traffic> {
        self.lazy_chunk(nchunk, nblocks, out)
    }

    fn chunk_blocks_many(
        &self,
        wants: &[(usize, &[usize])],
        outs: &mut [Vec<u8>],
    ) -> Result<Traffic> {
        self.lazy_chunks(wants, outs)
    }

    fn batches_reads(&self) -> bool {
        SChunk::batches_reads(self)
    }

    fn server_selection(&self, sel: &str, max_len: u64) -> Option<Result<(Vec<u8>, Traffic)>> {
        SChunk::server_selection(self, sel, max_len)
    }
}

impl ChunkStore for SChunk {
    fn check_writable(&self) -> Result<()> {
        SChunk::check_writable(self)
    }

    fn update_chunk(&mut self, nchunk: usize, chunk: Vec<u8>) -> Result<()> {
        SChunk::update_chunk(self, nchunk, &chunk)
    }

    fn update_chunks(&mut self, updates: Vec<(usize, Vec<u8>)>) -> Result<()> {
        let refs: Vec<(usize, &[u8])> = updates.iter().map(|(n, c)| (*n, c.as_slice())).collect();
        SChunk::update_chunks(self, &refs)
    }

    fn insert_chunk(&mut self, nchunk: usize, chunk: Vec<u8>) -> Result<()> {
        SChunk::insert_chunk(self, nchunk, &chunk).map(|_| ())
    }

    fn delete_chunk(&mut self, nchunk: usize) -> Result<()> {
        SChunk::delete_chunk(self, nchunk).map(|_| ())
    }
}
