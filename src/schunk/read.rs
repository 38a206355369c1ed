//! Reading chunks: where a chunk is, its bytes, its header, lazy chunks; decompression of a
//! chunk, a byte range, blocks or items (reading only the blocks they need from a file); the
//! chunks in order and all the data at once.

use super::{ChunkInfo, SChunk};
use crate::chunk::decompress_chunks;
use crate::error::{Error, Result};
use crate::format::chunk::ChunkHeader;
use crate::format::frame::{ChunkLoc, FrameType};
use crate::frame::Traffic;
use std::ops::Range;

impl SChunk {
    /// Where chunk `nchunk` is and its sizes.
    ///
    /// # Errors
    /// [`Error::InvalidIndex`]; [`Error::Frame`] / [`Error::Io`] for the store.
    pub fn chunk_info(&self, nchunk: usize) -> Result<ChunkInfo> {
        let loc = self.frame.chunk_loc(nchunk)?;
        let nbytes = self.frame.chunk_nbytes(nchunk)?;
        let cbytes = match loc {
            ChunkLoc::Special(_) => 0,
            ChunkLoc::Stored(_) => self.frame.chunk_header(nchunk)?.cbytes,
        };
        Ok(ChunkInfo {
            nbytes,
            cbytes,
            loc,
        })
    }

    /// The offsets index as spans of the frame file: for each chunk, `(byte offset in the
    /// file, compressed length)` when it is stored in a contiguous frame, `None` for a special
    /// chunk (no bytes stored) or a chunk of a sparse frame (in its own file). What a reader
    /// needs to fetch chunks, or their blocks, as byte ranges of the file. Reads each stored
    /// chunk's header.
    ///
    /// # Errors
    /// [`Error::Frame`] / [`Error::Io`] for a chunk header that cannot be read.
    pub fn chunk_spans(&self) -> Result<Vec<Option<(u64, u64)>>> {
        let header_len = self.frame.header().header_len as u64;
        let contiguous = self.frame.kind() == FrameType::Contiguous;
        (0..self.nchunks())
            .map(|n| match self.frame.chunk_loc(n)? {
                ChunkLoc::Stored(off) if contiguous => {
                    let cbytes = self.frame.chunk_header(n)?.cbytes as u64;
                    Ok(Some((header_len + off, cbytes)))
                }
                _ => Ok(None),
            })
            .collect()
    }

    /// The compressed chunk `nchunk` (a special chunk comes back as the 32-byte chunk
    /// C-Blosc2 builds for it).
    ///
    /// # Errors
    /// [`Error::InvalidIndex`]; [`Error::Frame`] naming the file for a chunk that does not
    /// fit where the index says; [`Error::Io`].
    pub fn chunk(&self, nchunk: usize) -> Result<Vec<u8>> {
        self.frame.read_chunk(nchunk)
    }

    /// Chunk `nchunk` as a lazy chunk for reading blocks `nblocks` (the chunk's own block
    /// numbers), built in `out` (its capacity reused): its header, its `bstarts` and only
    /// those blocks' bytes (plus block 0 when it uses delta) are read from the store, into a
    /// compact image that [`crate::chunk::Decoder`] reads those blocks from (other blocks
    /// must not be read from it). Chunks that are special, up to 64 KiB, memcpyed, VL-block or
    /// use a dictionary come whole.
    ///
    /// Format: the lazy chunks of c-blosc2 `blosc/frame.c` (`frame_get_lazychunk`), here
    /// holding only the blocks asked for. Returns what the reads moved from the store.
    ///
    /// # Errors
    /// As [`SChunk::chunk`]; [`Error::Frame`] naming the file for `bstarts` outside the
    /// chunk.
    pub fn lazy_chunk(
        &self,
        nchunk: usize,
        nblocks: &[usize],
        out: &mut Vec<u8>,
    ) -> Result<Traffic> {
        self.frame.lazy_chunk(nchunk, nblocks, out)
    }

    /// The lazy chunks of `wants` (`(nchunk, nblocks)` each, as [`SChunk::lazy_chunk`]), one
    /// into each of `outs`, with the reads of all of them handed to the store together: at
    /// most three batches whatever their number (headers, `bstarts` longer than guessed,
    /// blocks), which a network store sends as few requests. Returns what the reads moved.
    ///
    /// # Errors
    /// As [`SChunk::lazy_chunk`]; [`Error::Mismatch`] when `outs` and `wants` differ in
    /// length.
    pub fn lazy_chunks(
        &self,
        wants: &[(usize, &[usize])],
        outs: &mut [Vec<u8>],
    ) -> Result<Traffic> {
        self.frame.lazy_chunks(wants, outs)
    }

    /// Decompresses chunk `nchunk` into `dst`; returns its size in bytes.
    ///
    /// # Errors
    /// As [`SChunk::chunk`] and [`crate::chunk::decompress`].
    pub fn decompress_chunk(&self, nchunk: usize, dst: &mut [u8]) -> Result<usize> {
        let c = self.chunk(nchunk)?;
        crate::chunk::decompress_ctx(self.ctx(), &self.dparams, &c, dst)
            .map_err(|e| e.in_frame(&self.path()))
    }

    /// Decompresses chunk `nchunk` into a new vector.
    ///
    /// # Errors
    /// As [`SChunk::decompress_chunk`].
    pub fn decompress_chunk_vec(&self, nchunk: usize) -> Result<Vec<u8>> {
        let c = self.chunk(nchunk)?;
        crate::chunk::decompress_vec_ctx(self.ctx(), &self.dparams, &c)
            .map_err(|e| e.in_frame(&self.path()))
    }

    /// Decompresses bytes `range` of chunk `nchunk` into `dst`, reading only the chunk
    /// header, its `bstarts` and the blocks holding the range (plus block 0 under delta);
    /// returns the bytes written.
    ///
    /// # Errors
    /// [`Error::InvalidIndex`] for a range outside the chunk; as [`SChunk::decompress_chunk`].
    pub fn decompress_range(
        &self,
        nchunk: usize,
        range: Range<usize>,
        dst: &mut [u8],
    ) -> Result<usize> {
        self.frame.read_range(&self.dparams, nchunk, range, dst)
    }

    /// Decompresses blocks `nblocks` of chunk `nchunk` (its bytes from `start·blocksize` to
    /// `min(end·blocksize, nbytes)`) into `dst`, reading only those blocks; returns the
    /// bytes written. `blocksize` is the chunk's own (see [`SChunk::chunk_header`]).
    ///
    /// # Errors
    /// As [`SChunk::decompress_range`].
    pub fn decompress_blocks(
        &self,
        nchunk: usize,
        nblocks: Range<usize>,
        dst: &mut [u8],
    ) -> Result<usize> {
        let h = self.chunk_header(nchunk)?;
        let lo = nblocks.start.saturating_mul(h.blocksize).min(h.nbytes);
        let hi = nblocks.end.saturating_mul(h.blocksize).min(h.nbytes);
        self.decompress_range(nchunk, lo..hi.max(lo), dst)
    }

    /// The header of chunk `nchunk` (32 bytes read; for a special chunk, the header
    /// C-Blosc2 rebuilds).
    ///
    /// # Errors
    /// As [`SChunk::chunk`].
    pub fn chunk_header(&self, nchunk: usize) -> Result<ChunkHeader> {
        self.frame.chunk_header(nchunk)
    }

    /// Copies items `[start, start + nitems)` of chunk `nchunk` into `dst`, reading only the
    /// blocks that hold them; returns the bytes written.
    ///
    /// # Errors
    /// As [`SChunk::decompress_range`].
    pub fn getitem(
        &self,
        nchunk: usize,
        start: usize,
        nitems: usize,
        dst: &mut [u8],
    ) -> Result<usize> {
        let ts = self.typesize();
        let lo = start.checked_mul(ts);
        let hi = start.checked_add(nitems).and_then(|e| e.checked_mul(ts));
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return Err(Error::InvalidRange {
                what: "items",
                start: start as u64,
                end: start.saturating_add(nitems) as u64,
                len: u64::MAX,
            });
        };
        self.decompress_range(nchunk, lo..hi, dst)
    }

    /// The decompressed chunks in order.
    pub fn iter(&self) -> impl Iterator<Item = Result<Vec<u8>>> + '_ {
        (0..self.nchunks()).map(move |n| self.decompress_chunk_vec(n))
    }

    /// All the data, decompressed: `nbytes` bytes, chunks decompressed in parallel.
    ///
    /// # Errors
    /// As [`SChunk::decompress_chunk`]; [`Error::MemoryAlloc`].
    pub fn decompress_all(&self) -> Result<Vec<u8>> {
        let n = usize::try_from(self.nbytes()).map_err(|_| Error::MemoryAlloc(usize::MAX))?;
        let mut out = crate::alloc::zeroed(n)?;
        let mut at = 0;
        const BATCH: usize = 64;
        let mut i = 0;
        while i < self.nchunks() {
            let end = (i + BATCH).min(self.nchunks());
            let chunks = (i..end)
                .map(|k| self.chunk(k))
                .collect::<Result<Vec<_>>>()?;
            let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
            at += decompress_chunks(self.ctx(), &self.dparams, &refs, &mut out[at..])
                .map_err(|e| e.in_frame(&self.path()))?;
            i = end;
        }
        if at != n {
            let nbytes = crate::error::Expected::Exactly(crate::error::to_i64(n));
            let what = "bytes the chunks hold (the header's nbytes)";
            return Err(Error::frame(self.path(), Error::header(what, at, nbytes)));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{counting, items};
    use super::*;
    use crate::format::chunk::SpecialType;

    #[test]
    fn items_ranges_and_blocks_by_position() {
        // Chunks of 3000 items (12000 bytes) in blocks of 4096 bytes.
        let s = counting(7000, 3000);
        let mut out = vec![0u8; 12000];
        assert_eq!(s.getitem(1, 10, 3, &mut out).unwrap(), 12);
        assert_eq!(out[..12], items(3010, 3013));
        assert_eq!(s.decompress_range(2, 4..12, &mut out).unwrap(), 8);
        assert_eq!(out[..8], items(6001, 6003));
        // Blocks 1 and 2 of chunk 0: bytes 4096..12000.
        assert_eq!(
            s.decompress_blocks(0, 1..3, &mut out).unwrap(),
            12000 - 4096
        );
        assert_eq!(out[..12000 - 4096], items(0, 3000)[4096..]);
        assert_eq!(s.decompress_blocks(2, 0..9, &mut out).unwrap(), 4000);
        let e = s.getitem(0, usize::MAX / 2, 2, &mut out).unwrap_err();
        assert!(
            matches!(e, Error::InvalidRange { what: "items", start, .. } if start == (usize::MAX / 2) as u64),
            "{e}"
        );
        let e = s.getitem(2, 999, 2, &mut out).unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidRange {
                    start: 3996,
                    end: 4004,
                    len: 4000,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn chunk_info_tells_stored_from_special() {
        let mut s = counting(100, 100);
        s.fill_special(0, SpecialType::Zero, 400).unwrap();
        let info = s.chunk_info(0).unwrap();
        assert_eq!(info.nbytes, 400);
        assert_eq!(info.cbytes, s.chunk(0).unwrap().len());
        assert_eq!(info.loc, ChunkLoc::Stored(0));
        let h = s.chunk_header(0).unwrap();
        assert_eq!((h.nbytes, h.cbytes, h.typesize), (400, info.cbytes, 4));
        assert!(s.chunk_info(1).is_err());
    }

    #[test]
    fn the_chunks_in_order() {
        let s = counting(2500, 1000);
        let chunks: Vec<Vec<u8>> = s.iter().collect::<Result<_>>().unwrap();
        assert_eq!(
            chunks,
            [items(0, 1000), items(1000, 2000), items(2000, 2500)]
        );
        let mut dst = vec![0u8; 4000];
        assert_eq!(s.decompress_chunk(2, &mut dst).unwrap(), 2000);
        assert_eq!(dst[..2000], items(2000, 2500));
        assert_eq!(s.decompress_chunk_vec(1).unwrap(), items(1000, 2000));
        assert_eq!(s.decompress_all().unwrap(), items(0, 2500));
        let mut lazy = Vec::new();
        s.lazy_chunk(0, &[0], &mut lazy).unwrap();
        assert_eq!(lazy, s.chunk(0).unwrap());
    }
}
