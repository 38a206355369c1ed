//! The write protocol: how a change reaches the store so that a crash at any point leaves
//! either the old frame or the new one, and when writes reach stable storage.
//!
//! A reader (C-Blosc2's and Strata's) trusts the header: `frame_len` says where the trailer
//! ends, `cbytes` where the offsets chunk starts; bytes past `frame_len` are ignored. The
//! header's fixed part (87 bytes, all in the first 512-byte sector) is therefore the commit
//! record: it is rewritten in **one write**, and only after everything it points to is in
//! place. C-Blosc2 writes a new chunk over the old offsets chunk and trailer before it
//! rewrites the header, which leaves no valid frame if it stops in between; Strata never
//! writes over bytes the committed header still points to:
//!
//! 1. **Relocate.** The live bytes from the first changed position `p` onwards that the new
//!    state puts elsewhere or overwrites (for append, insert, delete and vlmetalayer changes:
//!    only the offsets chunk and the trailer; for an update: also the replaced chunks and the
//!    chunks after the first one whose size changes) are copied past the end of both the old
//!    and the new frame, at `y = max(old frame_len, new frame_len)`, with the offsets that
//!    point into them redirected. Chunks that keep their position stay where they are.
//!    Commit: the header now says `cbytes = end of the copies − header_len`. This is the
//!    **old** content; the relocated bytes' first places are now dead. When no old byte from
//!    `p` on is kept (the last chunks rewritten, as appending into an array's partly filled
//!    last chunk does), phase 1 instead lays the **new** bytes, index and trailer at `y` and
//!    commits them: the new content, its old bytes from `p` on dead, and nothing read back.
//! 2. **Rewrite.** The new chunks, the moved bytes, the new offsets chunk and the new trailer
//!    are written at their places from `p` — inside the dead bytes, ending at or before `y`.
//!    Commit: the header of the new state. Then the file is truncated to the new `frame_len`.
//!
//! Several chunk updates (`SChunk::update_chunks`, which an array's `set_slice` uses) are one
//! change: the bytes after them move once, and a crash leaves all of them or none. An update
//! that keeps a chunk's stored size writes only that chunk, the offsets chunk and the trailer.
//!
//! At every instant the store holds either the old frame or the new one, each followed by
//! bytes that no reader looks at, so an interrupted append, insert, update, delete or
//! vlmetalayer change leaves a frame that opens with every completed operation intact; the
//! final bytes equal C-Blosc2's for the same operations. While the frame holds no chunk (or
//! a change leaves it with none), or its header length changes (adding a metalayer), the
//! new frame is written whole to a temporary file renamed over the old one. Sparse frames
//! write a new chunk file (unreferenced until the index changes: an appended chunk takes the
//! number after the highest, as C-Blosc2 does; an updated one the lowest number the index
//! does not use, where C-Blosc2 would overwrite the old file), then replace `chunks.b2frame`
//! the same way, then remove the chunk files no longer referenced.
//!
//! A metalayer update writes the new bytes over the old ones inside the header (the format
//! has no room for a second copy); it is atomic when those bytes lie in one 512-byte sector,
//! as the whole fixed header does.
//!
//! Sync points follow [`SyncPolicy`]: with [`SyncPolicy::EveryWrite`] each ordering point
//! (after the relocation, each header commit, each chunk file, each rename) is an fsync; with
//! the other policies [`Frame::flush`] syncs what was written, chunk files before the index.

use super::{frame_parts, Frame};
use crate::chunk::{CParams, Context, SplitMode};
use crate::error::{Error, Result};
use crate::format::frame::{FrameHeader, Trailer};
use crate::format::ids::CodecId;
use crate::frame::io::Obj;
use crate::frame::SyncPolicy;
use std::ops::Range;

/// Buffer size of in-file copies, in bytes.
const COPY_BUF: u64 = 8 << 20;

/// The parameters C-Blosc2 compresses the offsets index with on append, insert, update and
/// delete: BloscLZ clevel 5, shuffle, typesize 8, 16 KiB blocks, never split.
pub(super) fn offsets_cparams() -> CParams {
    CParams {
        codec: CodecId::BLOSCLZ,
        clevel: 5,
        typesize: 8,
        blocksize: 16 * 1024,
        splitmode: SplitMode::Never,
        nthreads: 1,
        ..CParams::default()
    }
}

/// The offsets chunk of `offsets` (empty when there is none), compressed into room for
/// `room` more entries than it holds: C-Blosc2's delete compresses the shortened index into
/// the buffer of the longer one, so its compressed output may exceed the raw size there, where
/// elsewhere it would be stored raw.
pub(super) fn encode_offsets(ctx: &Context, offsets: &[i64], room: usize) -> Result<Vec<u8>> {
    if offsets.is_empty() {
        return Ok(Vec::new());
    }
    let raw: Vec<u8> = offsets.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut out = vec![0u8; crate::chunk::max_compressed_len(raw.len() + 8 * room)];
    let n = crate::chunk::compress_ctx(ctx, &offsets_cparams(), &raw, &mut out)?;
    out.truncate(n);
    Ok(out)
}

/// Bytes laid down at the rewrite position of a contiguous frame.
pub(super) enum Piece<'a> {
    /// New bytes.
    New(&'a [u8]),
    /// Bytes of the current frame at `pos` (≥ the rewrite position), `len` long.
    Old { pos: u64, len: u64 },
}

/// A change of a contiguous frame: the new state, whose bytes before `p` are unchanged.
pub(super) struct Plan<'a> {
    /// Absolute position from which the data section changes.
    pub p: u64,
    /// What is laid down from `p` on, in order.
    pub pieces: Vec<Piece<'a>>,
    /// The new index; `None` keeps the stored offsets chunk as it is.
    pub offsets: Option<Vec<i64>>,
    /// Extra entries of room when compressing the index (1 for delete, as C-Blosc2).
    pub room: usize,
    /// The new header (its lengths are set by the commit).
    pub header: FrameHeader,
    /// The new trailer.
    pub trailer: Trailer,
}

impl Frame {
    pub(super) fn durable(&self) -> bool {
        self.sync == SyncPolicy::EveryWrite
    }

    pub(super) fn fail<T>(&mut self, r: Result<T>) -> Result<T> {
        if r.is_err() {
            self.poisoned = true;
        }
        r
    }

    pub(super) fn mark(&mut self, obj: Obj) {
        if !self.dirty.contains(&obj) {
            self.dirty.push(obj);
        }
    }

    pub(super) fn write(&mut self, obj: Obj, pos: u64, data: &[u8]) -> Result<()> {
        self.mark(obj);
        let r = self.io.write_at(obj, pos, data);
        self.fail(r)
    }

    /// An ordering point: with [`SyncPolicy::EveryWrite`], everything written so far reaches
    /// stable storage before anything after it is written.
    pub(super) fn barrier(&mut self, obj: Obj) -> Result<()> {
        if self.durable() {
            let r = self.io.sync(obj);
            self.fail(r)?;
            self.dirty.retain(|&o| o != obj);
        }
        Ok(())
    }

    pub(super) fn replace_frame(&mut self, parts: &[&[u8]]) -> Result<()> {
        self.mark(Obj::Frame);
        let durable = self.durable();
        let r = self.io.replace(Obj::Frame, parts, durable);
        self.fail(r)
    }

    fn copy(&mut self, src: u64, dst: u64, len: u64) -> Result<()> {
        let mut done = 0;
        let mut buf = Vec::new();
        while done < len {
            let n = (len - done).min(COPY_BUF) as usize;
            buf.resize(n, 0);
            let r = self.io.read_at(Obj::Frame, src + done, &mut buf);
            self.fail(r)?;
            self.write(Obj::Frame, dst + done, &buf)?;
            done += n as u64;
        }
        Ok(())
    }

    pub(super) fn install(
        &mut self,
        header: FrameHeader,
        trailer: Trailer,
        trailer_bytes: Vec<u8>,
        offsets: Vec<i64>,
        offsets_chunk: Vec<u8>,
    ) {
        self.header = header;
        self.trailer = trailer;
        self.trailer_bytes = trailer_bytes;
        self.offsets = offsets;
        self.offsets_chunk = offsets_chunk;
    }

    /// Commits a change of a contiguous frame (see the module docs for the protocol).
    pub(super) fn commit_contiguous(&mut self, plan: Plan<'_>) -> Result<()> {
        let room = plan.room;
        let Plan {
            p,
            pieces,
            offsets,
            mut header,
            trailer,
            ..
        } = plan;
        let (offsets, off_chunk) = match offsets {
            Some(v) => {
                let c = encode_offsets(&self.ctx, &v, room)?;
                (v, c)
            }
            None => (self.offsets.clone(), self.offsets_chunk.clone()),
        };
        let tbytes = trailer.to_bytes();
        let data_new: u64 = pieces
            .iter()
            .map(|pc| match pc {
                Piece::New(b) => b.len() as u64,
                Piece::Old { len, .. } => *len,
            })
            .sum();
        header.has_vlmetalayers = !trailer.vlmetalayers.is_empty();
        if offsets.is_empty() {
            header.cbytes = 0;
        }
        if self.offsets.is_empty()
            || offsets.is_empty()
            || header.header_len != self.header.header_len
        {
            // Empty before or after, or a new header length: the whole frame is small (or
            // only new chunks); replace it atomically.
            let mut parts: Vec<&[u8]> = Vec::new();
            for pc in &pieces {
                match pc {
                    Piece::New(b) => parts.push(b),
                    Piece::Old { .. } => {
                        return Err(Error::Internal {
                            what: "a whole-frame replace was planned with bytes of the old frame",
                        })
                    }
                }
            }
            frame_parts(&mut header, data_new, &off_chunk, &tbytes);
            let hb = header.to_bytes();
            let mut all: Vec<&[u8]> = vec![&hb];
            all.extend(parts);
            all.push(&off_chunk);
            all.push(&tbytes);
            self.replace_frame(&all)?;
            self.install(header, trailer, tbytes, offsets, off_chunk);
            return Ok(());
        }
        let hl = self.header.header_len as u64;
        let data_end0 = hl + self.data_len();
        let f0 = self.header.frame_len;
        let new_data_end = p + data_new;
        header.cbytes = (new_data_end - hl) as i64;
        header.frame_len = new_data_end + off_chunk.len() as u64 + tbytes.len() as u64;
        let e1 = header.frame_len;
        let y = f0.max(e1);
        // Phase 1: the old state, its bytes from `p` on that move relocated to `y`, one
        // segment (old range, new position) per gap between the bytes that stay; or, when
        // everything from `p` on is new (the last chunks rewritten, as appending along an
        // array's first axis does), the new state with its new bytes laid at `y`, so that no
        // old byte is copied.
        let ahead = p < data_end0 && pieces.iter().all(|pc| matches!(pc, Piece::New(_)));
        let segments = if ahead {
            self.commit_ahead(&pieces, &offsets, room, &header, &tbytes, (p, y))?;
            Vec::new()
        } else {
            self.relocate(&pieces, (p, y))?
        };
        // The segments are in order of their old ranges.
        let relocated_at = |abs: u64| {
            let k = segments.partition_point(|(r, _)| r.end <= abs);
            segments
                .get(k)
                .filter(|(r, _)| r.contains(&abs))
                .map(|(r, to)| to + (abs - r.start))
        };
        if !ahead {
            let shifted: Vec<i64> = self
                .offsets
                .iter()
                .map(
                    |&v| match u64::try_from(v).ok().and_then(|v| relocated_at(hl + v)) {
                        Some(abs) => (abs - hl) as i64,
                        None => v,
                    },
                )
                .collect();
            let old_off_chunk = if shifted == self.offsets {
                self.offsets_chunk.clone()
            } else {
                encode_offsets(&self.ctx, &shifted, 0)?
            };
            let to = segments.last().map_or(y, |(r, to)| to + (r.end - r.start));
            let old_trailer = self.trailer_bytes.clone();
            self.write(Obj::Frame, to, &old_off_chunk)?;
            self.write(Obj::Frame, to + old_off_chunk.len() as u64, &old_trailer)?;
            self.barrier(Obj::Frame)?;
            let mut relocated = self.header.clone();
            relocated.cbytes = (to - hl) as i64;
            relocated.frame_len = to + old_off_chunk.len() as u64 + old_trailer.len() as u64;
            self.write(Obj::Frame, 0, &relocated.fixed_bytes())?;
            self.barrier(Obj::Frame)?;
        }

        // Phase 2: the new state at `p`, moved bytes read from their relocated copies.
        let mut at = p;
        for pc in &pieces {
            match *pc {
                Piece::New(b) => {
                    self.write(Obj::Frame, at, b)?;
                    at += b.len() as u64;
                }
                Piece::Old { pos, len } => {
                    debug_assert!(pos >= p && pos + len <= data_end0);
                    if pos != at && len > 0 {
                        let src = relocated_at(pos).ok_or(Error::Internal {
                            what: "bytes that the plan moves were not relocated",
                        })?;
                        self.copy(src, at, len)?;
                    }
                    at += len;
                }
            }
        }
        self.write(Obj::Frame, at, &off_chunk)?;
        self.write(Obj::Frame, at + off_chunk.len() as u64, &tbytes)?;
        self.barrier(Obj::Frame)?;
        self.write(Obj::Frame, 0, &header.fixed_bytes())?;
        self.barrier(Obj::Frame)?;
        self.install(header, trailer, tbytes, offsets, off_chunk);
        let r = self.io.set_len(Obj::Frame, e1);
        self.fail(r)
    }

    /// Phase 1 of [`Frame::commit_contiguous`]: the live bytes from `p` on that the new
    /// state (`pieces` from `p`) overwrites or moves are copied to `y`; returns the copies,
    /// one (old range, new position) per gap between the old pieces that keep their place.
    fn relocate(
        &mut self,
        pieces: &[Piece<'_>],
        (p, y): (u64, u64),
    ) -> Result<Vec<(Range<u64>, u64)>> {
        let data_end0 = self.header.header_len as u64 + self.data_len();
        let mut stays = Vec::new();
        let mut at = p;
        for pc in pieces {
            match *pc {
                Piece::New(b) => at += b.len() as u64,
                Piece::Old { pos, len } => {
                    if pos == at && len > 0 {
                        stays.push(pos..pos + len);
                    }
                    at += len;
                }
            }
        }
        let mut segments = Vec::new();
        let mut to = y;
        let mut from = p;
        for r in stays.iter().chain(std::iter::once(&(data_end0..data_end0))) {
            if r.start > from {
                self.copy(from, to, r.start - from)?;
                segments.push((from..r.start, to));
                to += r.start - from;
            }
            from = r.end;
        }
        Ok(segments)
    }

    /// Phase 1 of [`Frame::commit_contiguous`] when every piece from `p` on is new: the new
    /// state is committed with those pieces laid at `y` (the index pointing there), behind
    /// which the old bytes from `p` on are dead, ready to be overwritten by phase 2.
    fn commit_ahead(
        &mut self,
        pieces: &[Piece<'_>],
        offsets: &[i64],
        room: usize,
        header: &FrameHeader,
        tbytes: &[u8],
        (p, y): (u64, u64),
    ) -> Result<()> {
        let hl = self.header.header_len as u64;
        let ahead: Vec<i64> = offsets
            .iter()
            .map(|&v| match u64::try_from(v) {
                Ok(o) if hl + o >= p => (o + (y - p)) as i64,
                _ => v,
            })
            .collect();
        let ahead_chunk = encode_offsets(&self.ctx, &ahead, room)?;
        let mut at = y;
        for pc in pieces {
            if let Piece::New(b) = *pc {
                self.write(Obj::Frame, at, b)?;
                at += b.len() as u64;
            }
        }
        self.write(Obj::Frame, at, &ahead_chunk)?;
        self.write(Obj::Frame, at + ahead_chunk.len() as u64, tbytes)?;
        self.barrier(Obj::Frame)?;
        let mut committed = header.clone();
        committed.cbytes = (at - hl) as i64;
        committed.frame_len = at + ahead_chunk.len() as u64 + tbytes.len() as u64;
        self.write(Obj::Frame, 0, &committed.fixed_bytes())?;
        self.barrier(Obj::Frame)
    }

    /// Flushes everything written to stable storage (unless the policy is
    /// [`SyncPolicy::None`]).
    pub fn flush(&mut self) -> Result<()> {
        if self.sync == SyncPolicy::None || !self.writable {
            return Ok(());
        }
        // Chunk files first: the index that refers to them last.
        self.dirty.sort_by_key(|&o| o == Obj::Frame);
        while let Some(&obj) = self.dirty.first() {
            let r = self.io.sync(obj);
            self.fail(r)?;
            self.dirty.remove(0);
        }
        Ok(())
    }
}

impl Drop for Frame {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{append, crash_everywhere, empty, noisy, ramp, Recording};
    use super::super::NewChunk;
    use super::*;
    use crate::format::frame::{FrameType, Metalayer};
    use crate::frame::io::MemStore;
    use crate::frame::{FaultPlan, FaultyIo};

    /// A contiguous frame of three chunks and a vlmetalayer.
    fn base() -> MemStore {
        built(&[ramp(0, 1000), ramp(1000, 1000), ramp(2000, 1000)])
    }

    /// A contiguous frame of `chunks` appended one by one, and a vlmetalayer.
    fn built(chunks: &[Vec<u8>]) -> MemStore {
        let (mut f, io) = empty(FrameType::Contiguous);
        for c in chunks {
            append(&mut f, c);
        }
        f.set_vlmetalayers(vec![Metalayer {
            name: "v".into(),
            content: ramp(7, 10),
        }])
        .unwrap();
        io.snapshot()
    }

    fn chunk(bytes: &[u8]) -> NewChunk<'_> {
        NewChunk::parse(&crate::registry::Registry::global(), bytes).unwrap()
    }

    #[test]
    fn a_crash_anywhere_leaves_the_old_frame_or_the_new_one() {
        let base = base();
        let (full, big, big2) = (ramp(9000, 1000), noisy(1, 1000, 4096), noisy(2, 1000, 4096));
        let kind = FrameType::Contiguous;
        let appended = crash_everywhere(&base, kind, |f| f.append(&[chunk(&full)]));
        let insert = crash_everywhere(&base, kind, |f| f.insert(0, &chunk(&full)));
        let grow = crash_everywhere(&base, kind, |f| f.update(0, &chunk(&big)));
        let same = crash_everywhere(&base, kind, |f| f.update(1, &chunk(&full)));
        let many = crash_everywhere(&base, kind, |f| {
            f.update_many(&[(2, &chunk(&big)), (0, &chunk(&big2))])
        });
        let last = crash_everywhere(&base, kind, |f| f.update(2, &chunk(&big)));
        let last_two = crash_everywhere(&base, kind, |f| {
            f.update_many(&[(2, &chunk(&big)), (1, &chunk(&big2))])
        });
        let delete = crash_everywhere(&base, kind, |f| f.delete(1));
        let vlmeta = crash_everywhere(&base, kind, |f| f.set_vlmetalayers(Vec::new()));
        // A frame left without chunks is replaced whole, in one mutation.
        let one = {
            let (mut f, io) = empty(kind);
            append(&mut f, &full);
            io.snapshot()
        };
        let emptied = crash_everywhere(&one, kind, |f| f.delete(0));
        // Relocation (the index and the trailer copied, the header), rewrite (the chunk, the
        // index, the trailer, the header), truncation; a delete or a vlmetalayer change
        // writes no chunk.
        assert_eq!((appended, insert, delete, vlmeta), (8, 8, 7, 7));
        // An update also relocates the chunks after the first one that changes size.
        assert!(grow > 8 && many > 8 && same >= 8, "{grow} {many} {same}");
        // Rewriting the last chunks: the new ones at the end (one write each), the index, the
        // trailer, the header; then the same in place, and the truncation.
        assert_eq!((last, last_two), (9, 11));
        assert_eq!(emptied, 1);
    }

    #[test]
    fn rewriting_the_last_chunk_reads_nothing_and_ends_as_in_place() {
        let (big, big2) = (noisy(1, 1000, 4096), noisy(2, 1000, 4096));
        let run = |updates: &[(usize, &[u8])]| {
            let (rec, log) =
                Recording::new(crate::frame::io::MemIo::new(base(), FrameType::Contiguous));
            let store = rec.inner.clone();
            let mut f =
                Frame::open(Box::new(rec), true, SyncPolicy::None, Context::global()).unwrap();
            let read0 = log.lock().unwrap().read;
            let parsed: Vec<(usize, NewChunk<'_>)> =
                updates.iter().map(|&(n, c)| (n, chunk(c))).collect();
            let refs: Vec<(usize, &NewChunk<'_>)> = parsed.iter().map(|(n, c)| (*n, c)).collect();
            f.update_many(&refs).unwrap();
            let read = log.lock().unwrap().read - read0;
            drop(f);
            (read, store.snapshot())
        };
        // The last chunk grows, then the last two change: of the old chunks only their
        // 32-byte headers are read (for their sizes), nothing is copied back.
        let (read, bytes) = run(&[(2, &big)]);
        assert_eq!(read, 32);
        let (read2, bytes2) = run(&[(2, &big), (1, &big2)]);
        assert_eq!(read2, 64);
        // The files equal those holding the new chunks from the start.
        assert_eq!(
            bytes,
            built(&[ramp(0, 1000), ramp(1000, 1000), big.clone()])
        );
        assert_eq!(bytes2, built(&[ramp(0, 1000), big2.clone(), big.clone()]));
        let reread = Frame::open(
            Box::new(crate::frame::io::MemIo::new(bytes2, FrameType::Contiguous)),
            false,
            SyncPolicy::None,
            Context::global(),
        )
        .unwrap();
        assert_eq!(reread.read_chunk(1).unwrap(), big2);
        assert_eq!(reread.read_chunk(2).unwrap(), big);
    }

    #[test]
    fn a_failed_write_poisons_the_frame() {
        let mem = crate::frame::io::MemIo::new(base(), FrameType::Contiguous);
        let plan = FaultPlan::new(2, false);
        let io = FaultyIo::new(Box::new(mem.clone()), plan);
        let mut f = Frame::open(Box::new(io), true, SyncPolicy::None, Context::global()).unwrap();
        let c = ramp(0, 1000);
        assert!(f.append(&[chunk(&c)]).is_err());
        let e = f.delete(0).unwrap_err();
        assert!(e.to_string().contains("a write failed earlier"), "{e}");
        assert_eq!(f.nchunks(), 3);
    }

    #[test]
    fn flush_syncs_chunk_files_before_the_index() {
        for (sync, expected) in [
            (SyncPolicy::None, vec![]),
            (
                SyncPolicy::OnClose,
                vec![Obj::Chunk(0), Obj::Chunk(1), Obj::Frame],
            ),
        ] {
            let (f, io) = empty(FrameType::Sparse);
            drop(f);
            let (rec, log) = Recording::new(io);
            let mut f = Frame::open(Box::new(rec), true, sync, Context::global()).unwrap();
            append(&mut f, &ramp(0, 1000));
            append(&mut f, &ramp(1000, 1000));
            assert!(log.lock().unwrap().synced.is_empty());
            f.flush().unwrap();
            assert_eq!(log.lock().unwrap().synced, expected, "{sync:?}");
            f.flush().unwrap();
            assert_eq!(log.lock().unwrap().synced, expected, "nothing left to sync");
        }
        // Every ordering point syncs at once: nothing is left for the flush.
        let (f, io) = empty(FrameType::Contiguous);
        drop(f);
        let (rec, log) = Recording::new(io);
        let mut f = Frame::open(
            Box::new(rec),
            true,
            SyncPolicy::EveryWrite,
            Context::global(),
        )
        .unwrap();
        append(&mut f, &ramp(0, 1000));
        append(&mut f, &ramp(1000, 1000));
        // The first append replaces the empty frame (durably); the second has four ordering
        // points: the relocated copies, their header, the new bytes, the new header.
        assert_eq!(log.lock().unwrap().synced, [Obj::Frame; 4]);
        f.flush().unwrap();
        assert_eq!(log.lock().unwrap().synced.len(), 4, "nothing left to sync");
    }
}
