//! The sparse frame's side of every change: a sparse frame is an index (`chunks.b2frame`) and
//! one file per stored chunk (`%08X.chunk`). New chunk files are written first (no index names
//! them yet), then the index is replaced atomically, then the files it no longer names are
//! removed. An appended chunk takes the number after the highest in use, as C-Blosc2 does; an
//! updated one the lowest number the index does not use (C-Blosc2 would overwrite the old
//! file in place).

use super::commit::encode_offsets;
use super::{frame_parts, Frame, NewChunk};
use crate::error::Result;
use crate::format::frame::{encode_special, ChunkLoc, FrameHeader, Trailer};
use crate::frame::io::Obj;

impl Frame {
    fn next_sparse_id(&self) -> u64 {
        self.offsets
            .iter()
            .filter(|&&v| v >= 0)
            .max()
            .map_or(0, |&m| m as u64 + 1)
    }

    /// Inserts `chunks` at `n` of a sparse frame whose new header is `header` (chunksize and
    /// nbytes set): one new file per stored chunk, numbered from [`Frame::next_sparse_id`].
    pub(super) fn insert_sparse(
        &mut self,
        n: usize,
        chunks: &[NewChunk<'_>],
        mut header: FrameHeader,
    ) -> Result<()> {
        let mut id = self.next_sparse_id();
        let mut files = Vec::new();
        let mut entries = Vec::with_capacity(chunks.len());
        for c in chunks {
            entries.push(match c.special {
                Some(k) => encode_special(k)?,
                None => {
                    files.push((id, c.bytes));
                    header.cbytes += c.bytes.len() as i64;
                    id += 1;
                    (id - 1) as i64
                }
            });
        }
        let mut offsets = self.offsets.clone();
        offsets.splice(n..n, entries);
        self.commit_sparse(&files, offsets, header, self.trailer.clone(), &[], 0)
    }

    /// [`Frame::update_many`] for a sparse frame, the updates checked: new chunk files, one
    /// index, then the replaced files removed.
    pub(super) fn update_sparse(
        &mut self,
        updates: &[(usize, &NewChunk<'_>)],
        mut header: FrameHeader,
    ) -> Result<()> {
        let mut offsets = self.offsets.clone();
        // A new file takes the lowest number that neither the committed index nor an earlier
        // update of this batch uses: the committed files stay intact until the index changes,
        // and numbers stay small (C-Blosc2's reader refuses a sparse frame whose file numbers
        // exceed its cbytes − 32).
        let mut taken: std::collections::HashSet<u64> = self
            .offsets
            .iter()
            .filter_map(|&v| u64::try_from(v).ok())
            .collect();
        let mut free = 0u64;
        let mut files = Vec::new();
        let mut remove = Vec::new();
        for &(n, chunk) in updates {
            if let ChunkLoc::Stored(id) = self.chunk_loc(n)? {
                remove.push(id);
            }
            offsets[n] = match chunk.special {
                Some(kind) => encode_special(kind)?,
                None => {
                    while taken.contains(&free) {
                        free += 1;
                    }
                    taken.insert(free);
                    files.push((free, chunk.bytes));
                    header.cbytes += chunk.bytes.len() as i64;
                    free as i64
                }
            };
        }
        self.commit_sparse(&files, offsets, header, self.trailer.clone(), &remove, 0)
    }

    /// Removes chunk `n` of a sparse frame: the index `offsets` without it, under `header`,
    /// then its file when no other entry names it.
    pub(super) fn delete_sparse(
        &mut self,
        n: usize,
        offsets: Vec<i64>,
        header: FrameHeader,
    ) -> Result<()> {
        let remove = match self.chunk_loc(n)? {
            ChunkLoc::Stored(id) => Some(id),
            ChunkLoc::Special(_) => None,
        };
        self.commit_sparse(
            &[],
            offsets,
            header,
            self.trailer.clone(),
            remove.as_slice(),
            1,
        )
    }

    fn stored_len_sparse(&self, id: u64) -> Result<i64> {
        let (obj, pos, room) = self.stored_at(id)?;
        Ok(self.stored_header(obj, pos, room)?.1 as i64)
    }

    /// Commits a change of a sparse frame: new chunk files first (unreferenced until the
    /// index changes), then the index replaced atomically, then those of the chunk files
    /// `remove` that the new index no longer names removed (and no longer counted in
    /// `header.cbytes`).
    pub(super) fn commit_sparse(
        &mut self,
        files: &[(u64, &[u8])],
        offsets: Vec<i64>,
        mut header: FrameHeader,
        trailer: Trailer,
        remove: &[u64],
        room: usize,
    ) -> Result<()> {
        // The files to remove: those the new index no longer names (entries may share one).
        let kept: std::collections::HashSet<i64> =
            offsets.iter().copied().filter(|&v| v >= 0).collect();
        let mut remove: Vec<u64> = remove
            .iter()
            .copied()
            .filter(|&id| !kept.contains(&(id as i64)))
            .collect();
        remove.sort_unstable();
        remove.dedup();
        for &id in &remove {
            header.cbytes -= self.stored_len_sparse(id)?;
        }
        let durable = self.durable();
        for &(id, bytes) in files {
            self.mark(Obj::Chunk(id));
            let r = self.io.replace(Obj::Chunk(id), &[bytes], durable);
            self.fail(r)?;
        }
        if offsets.is_empty() {
            header.cbytes = 0;
        }
        header.has_vlmetalayers = !trailer.vlmetalayers.is_empty();
        let off_chunk = encode_offsets(&self.ctx, &offsets, room)?;
        let tbytes = trailer.to_bytes();
        frame_parts(&mut header, 0, &off_chunk, &tbytes);
        let hb = header.to_bytes();
        self.replace_frame(&[&hb, &off_chunk, &tbytes])?;
        self.install(header, trailer, tbytes, offsets, off_chunk);
        for &id in &remove {
            self.dirty.retain(|&o| o != Obj::Chunk(id));
            let r = self.io.remove(Obj::Chunk(id));
            self.fail(r)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{append, contents, crash_everywhere, empty, noisy, ramp, reopen};
    use super::*;
    use crate::chunk::special_chunk;
    use crate::format::chunk::SpecialType;
    use crate::format::frame::FrameType;
    use crate::frame::io::MemIo;

    fn files(io: &MemIo) -> Vec<u64> {
        io.snapshot().chunks.keys().copied().collect()
    }

    /// The header's cbytes equals the bytes of the chunk files.
    fn check_cbytes(f: &Frame, io: &MemIo) {
        let total: usize = io.snapshot().chunks.values().map(Vec::len).sum();
        assert_eq!(f.header().cbytes, total as i64);
        assert_eq!(
            reopen(io, FrameType::Sparse).unwrap().header().cbytes,
            total as i64
        );
    }

    fn chunk(bytes: &[u8]) -> NewChunk<'_> {
        NewChunk::parse(&crate::registry::Registry::global(), bytes).unwrap()
    }

    #[test]
    fn chunk_files_are_numbered_as_cblosc2_numbers_them() {
        let (mut f, io) = empty(FrameType::Sparse);
        for k in 0..3 {
            append(&mut f, &ramp(k * 1000, 1000));
        }
        assert_eq!(files(&io), [0, 1, 2]);
        check_cbytes(&f, &io);
        // A delete removes the file; an append takes the number after the highest.
        f.delete(1).unwrap();
        assert_eq!(files(&io), [0, 2]);
        check_cbytes(&f, &io);
        append(&mut f, &ramp(5000, 1000));
        assert_eq!(files(&io), [0, 2, 3]);
        assert_eq!(f.chunk_loc(2).unwrap(), ChunkLoc::Stored(3));
        // An update writes the lowest free number, then removes the old file.
        let big = noisy(1, 1000, 4096);
        f.update(0, &chunk(&big)).unwrap();
        assert_eq!(f.chunk_loc(0).unwrap(), ChunkLoc::Stored(1));
        assert_eq!(files(&io), [1, 2, 3]);
        check_cbytes(&f, &io);
        // In one batch, each new file takes a number neither the index nor the batch uses.
        f.update_many(&[(1, &chunk(&big)), (2, &chunk(&big))])
            .unwrap();
        assert_eq!(
            (f.chunk_loc(1).unwrap(), f.chunk_loc(2).unwrap()),
            (ChunkLoc::Stored(0), ChunkLoc::Stored(4))
        );
        assert_eq!(files(&io), [0, 1, 4]);
        check_cbytes(&f, &io);
        assert_eq!(
            contents(&reopen(&io, FrameType::Sparse).unwrap()),
            contents(&f)
        );
    }

    #[test]
    fn special_chunks_take_no_file() {
        let (mut f, io) = empty(FrameType::Sparse);
        let zeros = special_chunk(
            &super::super::testkit::cparams(0),
            SpecialType::Zero,
            4000,
            None,
        )
        .unwrap();
        append(&mut f, &ramp(0, 1000));
        append(&mut f, &zeros);
        assert_eq!(files(&io), [0]);
        assert_eq!(
            f.chunk_loc(1).unwrap(),
            ChunkLoc::Special(SpecialType::Zero)
        );
        // A special chunk replaced by data gets a file; a file replaced by zeros is removed.
        f.update_many(&[(1, &chunk(&ramp(0, 1000))), (0, &chunk(&zeros))])
            .unwrap();
        assert_eq!(
            f.chunk_loc(0).unwrap(),
            ChunkLoc::Special(SpecialType::Zero)
        );
        assert_eq!(f.chunk_loc(1).unwrap(), ChunkLoc::Stored(1));
        assert_eq!(files(&io), [1]);
        check_cbytes(&f, &io);
        f.delete(0).unwrap();
        assert_eq!(files(&io), [1]);
        assert_eq!(f.nchunks(), 1);
    }

    #[test]
    fn a_crash_anywhere_leaves_the_old_index_or_the_new_one() {
        let (mut f, io) = empty(FrameType::Sparse);
        for k in 0..3 {
            append(&mut f, &ramp(k * 1000, 1000));
        }
        drop(f);
        let base = io.snapshot();
        let kind = FrameType::Sparse;
        let big = noisy(1, 1000, 4096);
        let full = ramp(9000, 1000);
        // New file, index replaced.
        assert_eq!(
            crash_everywhere(&base, kind, |f| f.append(&[chunk(&full)])),
            2
        );
        // New file, index replaced, old file removed.
        assert_eq!(
            crash_everywhere(&base, kind, |f| f.update(1, &chunk(&big))),
            3
        );
        // Index replaced, old file removed.
        assert_eq!(crash_everywhere(&base, kind, |f| f.delete(0)), 2);
    }
}
