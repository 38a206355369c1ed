//! Where an array's compressed chunks live.
//!
//! [`ChunkSource`] is what reads need (a chunk by number, possibly borrowed, from any thread);
//! [`ChunkStore`] adds the super-chunk's mutations (update, insert, delete), which writes and
//! resizes use. [`VecStore`] keeps the chunks in memory, one `Vec<u8>` each; a super-chunk
//! (in memory or on disk) implements the same traits.
//!
//! Format: chunks as `shared/spec/chunk-format.md`; their order as c-blosc2 `blosc/schunk.c`
//! (`blosc2_schunk_update_chunk`, `_insert_chunk`, `_delete_chunk`).
#![forbid(unsafe_code)]

use crate::error::{Error, Result};
use std::borrow::Cow;

/// Compressed chunks by number, readable from many threads at once.
pub trait ChunkSource: Sync {
    /// Number of chunks.
    fn nchunks(&self) -> usize;

    /// The compressed chunk `nchunk`: a whole Blosc2 chunk (header, `bstarts`, streams).
    ///
    /// # Errors
    /// [`Error::InvalidIndex`] if there is no chunk `nchunk`; a source that reads storage
    /// returns its I/O or format errors.
    fn chunk(&self, nchunk: usize) -> Result<Cow<'_, [u8]>>;
}

/// A [`ChunkSource`] that can also replace, insert and delete chunks, as a super-chunk does.
pub trait ChunkStore: ChunkSource {
    /// Replaces chunk `nchunk` with `chunk`.
    ///
    /// # Errors
    /// [`Error::InvalidIndex`] if there is no chunk `nchunk`; a store's own errors.
    fn update_chunk(&mut self, nchunk: usize, chunk: Vec<u8>) -> Result<()>;

    /// Inserts `chunk` so that it becomes chunk `nchunk` (`nchunk <= nchunks()`).
    ///
    /// # Errors
    /// [`Error::InvalidIndex`] if `nchunk > nchunks()`; a store's own errors.
    fn insert_chunk(&mut self, nchunk: usize, chunk: Vec<u8>) -> Result<()>;

    /// Removes chunk `nchunk`; the chunks after it move down by one.
    ///
    /// # Errors
    /// [`Error::InvalidIndex`] if there is no chunk `nchunk`; a store's own errors.
    fn delete_chunk(&mut self, nchunk: usize) -> Result<()>;
}

/// Chunks kept in memory, one vector each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VecStore {
    chunks: Vec<Vec<u8>>,
}

impl VecStore {
    /// A store with no chunks.
    #[must_use]
    pub fn new() -> VecStore {
        VecStore::default()
    }

    /// A store holding `chunks`, chunk 0 first.
    #[must_use]
    pub fn from_chunks(chunks: Vec<Vec<u8>>) -> VecStore {
        VecStore { chunks }
    }

    /// The chunks, chunk 0 first.
    #[must_use]
    pub fn chunks(&self) -> &[Vec<u8>] {
        &self.chunks
    }

    /// The chunks, chunk 0 first, taken out of the store.
    #[must_use]
    pub fn into_chunks(self) -> Vec<Vec<u8>> {
        self.chunks
    }

    fn missing(&self, nchunk: usize) -> Error {
        Error::InvalidIndex(format!(
            "chunk {nchunk} of a store of {} chunks",
            self.chunks.len()
        ))
    }
}

impl ChunkSource for VecStore {
    fn nchunks(&self) -> usize {
        self.chunks.len()
    }

    fn chunk(&self, nchunk: usize) -> Result<Cow<'_, [u8]>> {
        self.chunks
            .get(nchunk)
            .map(|c| Cow::Borrowed(&c[..]))
            .ok_or_else(|| self.missing(nchunk))
    }
}

impl ChunkStore for VecStore {
    fn update_chunk(&mut self, nchunk: usize, chunk: Vec<u8>) -> Result<()> {
        let err = self.missing(nchunk);
        *self.chunks.get_mut(nchunk).ok_or(err)? = chunk;
        Ok(())
    }

    fn insert_chunk(&mut self, nchunk: usize, chunk: Vec<u8>) -> Result<()> {
        if nchunk > self.chunks.len() {
            return Err(self.missing(nchunk));
        }
        self.chunks.insert(nchunk, chunk);
        Ok(())
    }

    fn delete_chunk(&mut self, nchunk: usize) -> Result<()> {
        if nchunk >= self.chunks.len() {
            return Err(self.missing(nchunk));
        }
        self.chunks.remove(nchunk);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vec_store_mutations() {
        let mut s = VecStore::from_chunks(vec![vec![0], vec![1]]);
        s.insert_chunk(1, vec![9]).unwrap();
        s.update_chunk(0, vec![7]).unwrap();
        s.delete_chunk(2).unwrap();
        assert_eq!(s.chunks(), [vec![7], vec![9]]);
        assert_eq!(&*s.chunk(1).unwrap(), [9]);
        assert_eq!(s.chunk(2).unwrap_err().code(), -33);
        assert_eq!(s.update_chunk(2, vec![]).unwrap_err().code(), -33);
        assert_eq!(s.insert_chunk(3, vec![]).unwrap_err().code(), -33);
        assert_eq!(s.delete_chunk(2).unwrap_err().code(), -33);
        s.insert_chunk(2, vec![5]).unwrap();
        assert_eq!(s.nchunks(), 3);
        assert_eq!(s.into_chunks(), [vec![7], vec![9], vec![5]]);
    }
}
