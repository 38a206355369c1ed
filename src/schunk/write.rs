//! Writing chunks: append (compressed chunks, buffers, data cut into chunks), insert,
//! update (one chunk or a batch in one commit), delete, and special fills.

use super::SChunk;
use crate::chunk::{compress_chunks, compress_vec_ctx};
use crate::error::{Error, Expected, Result};
use crate::format::chunk::{SpecialType, MAX_BUFFERSIZE};
use crate::frame::NewChunk;

impl SChunk {
    /// Appends a compressed chunk; returns the new number of chunks. Zero, NaN and
    /// uninitialized chunks are stored as index entries only.
    ///
    /// # Errors
    /// [`Error::ChunkSize`] when the chunk breaks the fixed chunksize (larger than it, or
    /// after a short last chunk); chunk parsing errors for a bad chunk; [`Error::Io`] for
    /// the store (the frame then refuses further writes until reopened).
    pub fn append_chunk(&mut self, chunk: &[u8]) -> Result<usize> {
        self.append_chunks(&[chunk])
    }

    /// Appends compressed chunks in one commit; returns the new number of chunks.
    ///
    /// # Errors
    /// As [`SChunk::append_chunk`].
    pub fn append_chunks(&mut self, chunks: &[&[u8]]) -> Result<usize> {
        self.check_mode(true)?;
        let parsed = chunks
            .iter()
            .map(|c| NewChunk::parse(self.frame.ctx().registry(), c))
            .collect::<Result<Vec<_>>>()?;
        self.frame.append(&parsed)?;
        Ok(self.nchunks())
    }

    /// Compresses `data` as one chunk with the super-chunk's cparams and appends it
    /// (`blosc2_schunk_append_buffer`); returns the new number of chunks.
    ///
    /// # Errors
    /// [`Error::MaxBufsizeExceeded`] for more than `BLOSC2_MAX_BUFFERSIZE` bytes; as
    /// [`SChunk::append_chunk`].
    pub fn append_buffer(&mut self, data: &[u8]) -> Result<usize> {
        self.check_mode(true)?;
        if data.len() > MAX_BUFFERSIZE {
            return Err(Error::MaxBufsizeExceeded {
                size: data.len(),
                limit: MAX_BUFFERSIZE,
            });
        }
        let chunk = compress_vec_ctx(self.ctx(), &self.cparams, data)?;
        self.append_chunk(&chunk)
    }

    /// Cuts `data` into chunks of the chunksize (before the first chunk: the options'
    /// chunksize), compresses them in parallel on the runtime and appends them, committing
    /// every 64 chunks; returns the new number of chunks.
    ///
    /// # Errors
    /// As [`SChunk::append_chunk`].
    pub fn append_data(&mut self, data: &[u8]) -> Result<usize> {
        self.check_mode(true)?;
        let cs = self.chunksize().unwrap_or(self.chunksize_hint);
        const BATCH: usize = 64;
        for piece in data.chunks(cs.saturating_mul(BATCH).max(1)) {
            let chunks = compress_chunks(self.ctx(), &self.cparams, piece, cs)?;
            let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
            self.append_chunks(&refs)?;
        }
        Ok(self.nchunks())
    }

    /// Inserts a compressed chunk before chunk `nchunk` (`nchunk == nchunks()` appends);
    /// returns the new number of chunks.
    ///
    /// # Errors
    /// [`Error::ChunkSize`] when it breaks the fixed chunksize (a chunk inserted before the
    /// end must hold exactly `chunksize` bytes); [`Error::InvalidIndex`]; as
    /// [`SChunk::append_chunk`].
    pub fn insert_chunk(&mut self, nchunk: usize, chunk: &[u8]) -> Result<usize> {
        self.check_mode(false)?;
        let c = NewChunk::parse(self.frame.ctx().registry(), chunk)?;
        self.frame.insert(nchunk, &c)?;
        Ok(self.nchunks())
    }

    /// Replaces chunk `nchunk` by a compressed chunk.
    ///
    /// # Errors
    /// [`Error::ChunkSize`] when it breaks the fixed chunksize; [`Error::InvalidIndex`];
    /// as [`SChunk::append_chunk`].
    pub fn update_chunk(&mut self, nchunk: usize, chunk: &[u8]) -> Result<()> {
        self.check_mode(false)?;
        let c = NewChunk::parse(self.frame.ctx().registry(), chunk)?;
        self.frame.update(nchunk, &c)
    }

    /// Replaces several chunks, `(nchunk, compressed chunk)` each, in one commit: on a file,
    /// the bytes after the first replaced chunk move once, not once per chunk, and a crash
    /// leaves either every chunk replaced or none. The result is byte for byte that of
    /// [`SChunk::update_chunk`] called on each in turn, except that in a sparse frame the
    /// new chunk files may be numbered otherwise (a batch does not reuse the number of a
    /// file it replaces before its commit). An empty batch writes nothing.
    ///
    /// # Errors
    /// As [`SChunk::update_chunk`], checked for every chunk before anything is written;
    /// [`Error::Duplicate`] when a chunk number appears twice.
    pub fn update_chunks(&mut self, updates: &[(usize, &[u8])]) -> Result<()> {
        self.check_mode(false)?;
        let parsed = updates
            .iter()
            .map(|&(n, chunk)| NewChunk::parse(self.frame.ctx().registry(), chunk).map(|c| (n, c)))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<(usize, &NewChunk<'_>)> = parsed.iter().map(|(n, c)| (*n, c)).collect();
        self.frame.update_many(&refs)
    }

    /// Compresses `data` and replaces chunk `nchunk` with it.
    ///
    /// # Errors
    /// As [`SChunk::update_chunk`] and [`SChunk::append_buffer`].
    pub fn update_buffer(&mut self, nchunk: usize, data: &[u8]) -> Result<()> {
        let chunk = compress_vec_ctx(self.ctx(), &self.cparams, data)?;
        self.update_chunk(nchunk, &chunk)
    }

    /// Removes chunk `nchunk`; returns the new number of chunks.
    ///
    /// # Errors
    /// [`Error::InvalidIndex`]; [`Error::Io`] for the store.
    pub fn delete_chunk(&mut self, nchunk: usize) -> Result<usize> {
        self.check_mode(false)?;
        self.frame.delete(nchunk)?;
        Ok(self.nchunks())
    }

    /// Fills an empty super-chunk with `nitems` items (of `typesize` bytes) of a special
    /// value — zeros, NaN or uninitialized — in chunks of `chunksize` bytes, without storing
    /// any chunk (`blosc2_schunk_fill_special`); returns the number of chunks.
    ///
    /// # Errors
    /// [`Error::FrameSpecial`] when the super-chunk is not empty or the index would be too
    /// large; [`Error::OutOfRange`] for a chunksize that is not a positive multiple of the
    /// typesize (up to `BLOSC2_MAX_BUFFERSIZE`), a kind other than zeros, NaN, uninit, or NaN
    /// items that are not 4 or 8 bytes.
    pub fn fill_special(
        &mut self,
        nitems: u64,
        kind: SpecialType,
        chunksize: usize,
    ) -> Result<usize> {
        self.check_mode(false)?;
        let ts = self.typesize();
        if chunksize > MAX_BUFFERSIZE {
            let limit = Expected::at_most(MAX_BUFFERSIZE);
            return Err(Error::range("chunksize", chunksize, limit));
        }
        if chunksize == 0 || !chunksize.is_multiple_of(ts) {
            let items = Expected::MultipleOf(ts as i64);
            return Err(Error::range("chunksize (whole items)", chunksize, items));
        }
        if !matches!(
            kind,
            SpecialType::Zero | SpecialType::Nan | SpecialType::Uninit
        ) {
            return Err(Error::range(
                "special kind to fill with",
                kind as u8,
                Expected::OneOf("1 (zeros), 2 (NaN) or 4 (uninit)"),
            ));
        }
        if kind == SpecialType::Nan && ts != 4 && ts != 8 {
            let float = Expected::OneOf("4 or 8");
            return Err(Error::range("typesize of NaN items", ts, float));
        }
        let nbytes = nitems
            .checked_mul(ts as u64)
            .filter(|&b| b <= i64::MAX as u64)
            .ok_or(Error::FrameSpecial {
                what: "items overflow nbytes",
                value: nitems,
            })?;
        if nbytes == 0 {
            return Ok(self.nchunks());
        }
        self.frame.fill_special(nbytes, kind, chunksize)?;
        Ok(self.nchunks())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{counting, items, opts};
    use super::*;
    use crate::chunk::compress_vec;

    #[test]
    fn append_data_cuts_at_the_chunksize() {
        let mut s = SChunk::new(&opts(1000)).unwrap();
        assert_eq!(s.append_data(&items(0, 2500)).unwrap(), 3);
        assert_eq!(s.chunksize(), Some(4000));
        let sizes: Vec<usize> = (0..3).map(|n| s.chunk_info(n).unwrap().nbytes).collect();
        assert_eq!(sizes, [4000, 4000, 2000]);
        // The last chunk is short: nothing may follow it.
        let e = s.append_data(&items(0, 10)).unwrap_err();
        assert_eq!(
            e,
            Error::ChunkSize {
                op: crate::error::ChunkOp::Append,
                nchunk: 2,
                nbytes: 2000,
                chunksize: 4000
            }
        );
        assert_eq!(s.decompress_all().unwrap(), items(0, 2500));
        // A chunk of exactly the chunksize replaces the short one.
        s.update_buffer(2, &items(2000, 3000)).unwrap();
        assert_eq!(s.append_buffer(&items(3000, 4000)).unwrap(), 4);
        assert_eq!(s.decompress_all().unwrap(), items(0, 4000));
    }

    #[test]
    fn insert_update_delete_keep_the_order() {
        let mut s = counting(3000, 1000);
        let cp = opts(1000).cparams;
        let c = |from| compress_vec(&cp, &items(from, from + 1000)).unwrap();
        assert_eq!(s.insert_chunk(1, &c(7000)).unwrap(), 4);
        assert_eq!(s.delete_chunk(0).unwrap(), 3);
        s.update_chunks(&[(2, &c(8000)), (0, &c(9000))]).unwrap();
        let all = s.decompress_all().unwrap();
        assert_eq!(
            all,
            [items(9000, 10000), items(1000, 2000), items(8000, 9000)].concat()
        );
        let e = s.update_chunks(&[(1, &c(0)), (1, &c(0))]).unwrap_err();
        assert!(
            matches!(e, Error::Duplicate { ref name, .. } if name == "1"),
            "{e}"
        );
        let e = s.update_chunks(&[(1, &c(0)), (3, &c(0))]).unwrap_err();
        assert_eq!(e, Error::index("chunk", 3, 3));
        assert_eq!(s.decompress_all().unwrap(), all);
        s.update_chunks(&[]).unwrap();
        assert_eq!(s.nchunks(), 3);
    }

    #[test]
    fn special_fills_check_their_arguments() {
        let mut s = SChunk::new(&opts(1000)).unwrap();
        for (nitems, kind, chunksize, what, value) in [
            (10, SpecialType::Zero, 0, "chunksize (whole items)", 0),
            (10, SpecialType::Zero, 6, "chunksize (whole items)", 6),
            (10, SpecialType::Value, 40, "special kind to fill with", 3),
            (10, SpecialType::None, 40, "special kind to fill with", 0),
        ] {
            let e = s.fill_special(nitems, kind, chunksize).unwrap_err();
            assert!(
                matches!(e, Error::OutOfRange { what: w, value: v, .. } if w == what && v == value),
                "{e}"
            );
        }
        let mut two = opts(1000);
        two.cparams.typesize = 2;
        let mut two = SChunk::new(&two).unwrap();
        let e = two.fill_special(10, SpecialType::Nan, 20).unwrap_err();
        assert!(
            matches!(
                e,
                Error::OutOfRange {
                    what: "typesize of NaN items",
                    value: 2,
                    ..
                }
            ),
            "{e}"
        );
        let e = s
            .fill_special(u64::MAX / 2, SpecialType::Zero, 40)
            .unwrap_err();
        assert!(
            matches!(e, Error::FrameSpecial { value, .. } if value == u64::MAX / 2),
            "{e}"
        );
        assert_eq!(s.fill_special(0, SpecialType::Zero, 40).unwrap(), 0);
        assert_eq!(s.fill_special(25, SpecialType::Nan, 40).unwrap(), 3);
        let nan = f32::NAN.to_le_bytes();
        assert_eq!(s.decompress_all().unwrap(), nan.repeat(25));
        assert_eq!(s.cbytes(), 0);
    }
}
