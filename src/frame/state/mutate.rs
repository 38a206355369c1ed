//! Changes of a frame: each checks what it is given against the frame (the chunksize rules
//! of C-Blosc2 2.x, indices, metalayer sizes), then plans the new state and hands it to the
//! protocol: a [`Plan`] for a contiguous frame ([`super::commit`]), new chunk files and an
//! index for a sparse one ([`super::sparse`]). The layouts are C-Blosc2 3.3's: append and
//! insert put the chunk at the end of the data section, update rewrites it where it was (the
//! bytes after it move by the size difference), delete leaves the bytes in place; special
//! chunks (zeros, NaN, uninit) are index entries only.

use super::commit::{offsets_cparams, Piece, Plan};
use super::{frame_parts, Frame, NewChunk};
use crate::chunk::{special_chunk_ctx, CParams};
use crate::error::{to_i64, ChunkOp, Error, Expected, IoOp, Result};
use crate::format::chunk::{SpecialType, EXTENDED_HEADER_LENGTH, MAX_BUFFERSIZE};
use crate::format::frame::{
    encode_special, ChunkLoc, FrameHeader, FrameType, Metalayer, Trailer, HEADER_MINLEN,
};
use crate::frame::io::Obj;
use std::io::ErrorKind;

impl Frame {
    fn check_writable(&self) -> Result<()> {
        if !self.writable {
            return Err(Error::refused(
                self.path(),
                IoOp::Write,
                ErrorKind::PermissionDenied,
                "the frame is open read-only",
            ));
        }
        if self.poisoned {
            let what = "a write failed earlier: reopen the frame to see what was committed";
            return Err(Error::frame(self.path(), Error::Unsupported { what }));
        }
        if self.header.chunksize == 0 && self.header.nbytes > 0 {
            let what = "variable-chunksize frames (C-Blosc2 3.x) are read-only in Strata";
            return Err(Error::in_file(self.path(), Error::Unsupported { what }));
        }
        Ok(())
    }

    /// The last chunk's size, for the chunksize rules.
    fn last_nbytes(&self) -> usize {
        self.fixed_nbytes(self.nchunks().saturating_sub(1))
            .unwrap_or(0)
    }

    /// Checks that `chunks` may be appended (insert at the end follows the same rule) and
    /// returns the chunksize afterwards. Every chunk but the last must hold exactly
    /// `chunksize` bytes (C-Blosc2 2.x rule).
    fn append_chunksize(&self, chunks: &[NewChunk<'_>], op: ChunkOp) -> Result<i32> {
        let mut cs = self.header.chunksize;
        let mut last = self.last_nbytes();
        let refuse = |nchunk: usize, nbytes: usize, chunksize: u64| Error::ChunkSize {
            op,
            nchunk: nchunk as u64,
            nbytes: nbytes as u64,
            chunksize,
        };
        for (n, c) in (self.nchunks()..).zip(chunks) {
            if n == 0 || cs <= 0 {
                cs = i32::try_from(c.nbytes).map_err(|_| refuse(n, c.nbytes, i32::MAX as u64))?;
            } else {
                let csz = cs as usize;
                if last < csz {
                    return Err(refuse(n - 1, last, csz as u64));
                }
                if c.nbytes > csz {
                    return Err(refuse(n, c.nbytes, csz as u64));
                }
            }
            last = c.nbytes;
        }
        Ok(cs)
    }

    /// Appends `chunks` in one commit.
    pub fn append(&mut self, chunks: &[NewChunk<'_>]) -> Result<()> {
        self.check_writable()?;
        if chunks.is_empty() {
            return Ok(());
        }
        let cs = self.append_chunksize(chunks, ChunkOp::Append)?;
        self.insert_at(self.nchunks(), chunks, cs)
    }

    /// Inserts `chunk` at position `n` (0 ≤ n ≤ nchunks).
    pub fn insert(&mut self, n: usize, chunk: &NewChunk<'_>) -> Result<()> {
        self.check_writable()?;
        let nchunks = self.nchunks();
        if n > nchunks {
            return Err(Error::index("insert position", n, nchunks + 1));
        }
        let cs = if n == nchunks {
            self.append_chunksize(std::slice::from_ref(chunk), ChunkOp::Insert)?
        } else {
            let cs = self.header.chunksize;
            if chunk.nbytes as i64 != i64::from(cs) {
                return Err(Error::ChunkSize {
                    op: ChunkOp::Insert,
                    nchunk: n as u64,
                    nbytes: chunk.nbytes as u64,
                    chunksize: cs.max(0) as u64,
                });
            }
            cs
        };
        self.insert_at(n, std::slice::from_ref(chunk), cs)
    }

    fn insert_at(&mut self, n: usize, chunks: &[NewChunk<'_>], cs: i32) -> Result<()> {
        let mut header = self.header.clone();
        header.chunksize = cs;
        header.nbytes += chunks.iter().map(|c| c.nbytes as i64).sum::<i64>();
        match self.kind {
            FrameType::Contiguous => {
                let mut entries = Vec::with_capacity(chunks.len());
                let c0 = self.data_len();
                let mut at = c0;
                let mut pieces = Vec::new();
                for c in chunks {
                    entries.push(match c.special {
                        Some(k) => encode_special(k)?,
                        None => {
                            pieces.push(Piece::New(c.bytes));
                            let e = at as i64;
                            at += c.stored_len();
                            e
                        }
                    });
                }
                header.cbytes = at as i64;
                let mut offsets = self.offsets.clone();
                offsets.splice(n..n, entries);
                let trailer = self.trailer.clone();
                self.commit_contiguous(Plan {
                    p: self.header.header_len as u64 + c0,
                    pieces,
                    offsets: Some(offsets),
                    room: 0,
                    header,
                    trailer,
                })
            }
            FrameType::Sparse => self.insert_sparse(n, chunks, header),
        }
    }

    /// Replaces chunk `n` by `chunk`.
    pub fn update(&mut self, n: usize, chunk: &NewChunk<'_>) -> Result<()> {
        self.update_many(&[(n, chunk)])
    }

    /// Replaces several chunks in one commit: the store holds either the old frame or the
    /// new one, never a mix. The bytes are those of replacing the chunks one at a time, in
    /// the order given: each stored chunk is rewritten where it was (the bytes after it
    /// move), a chunk that was special, or whose bytes other index entries share, goes to
    /// the end of the data section (a new file in a sparse frame).
    pub fn update_many(&mut self, updates: &[(usize, &NewChunk<'_>)]) -> Result<()> {
        self.check_writable()?;
        if updates.is_empty() {
            return Ok(());
        }
        let nchunks = self.nchunks();
        let cs = self.header.chunksize;
        let mut header = self.header.clone();
        let mut seen = vec![false; nchunks];
        for &(n, chunk) in updates {
            let old_nbytes = self.chunk_nbytes(n)?;
            if std::mem::replace(&mut seen[n], true) {
                return Err(Error::Duplicate {
                    what: "chunk in one batch of updates",
                    name: n.to_string(),
                });
            }
            let too_big = chunk.nbytes as i64 > i64::from(cs) && nchunks > 1;
            if too_big || (n + 1 < nchunks && chunk.nbytes as i64 != i64::from(cs)) {
                return Err(Error::ChunkSize {
                    op: ChunkOp::Update,
                    nchunk: n as u64,
                    nbytes: chunk.nbytes as u64,
                    chunksize: cs.max(0) as u64,
                });
            }
            if nchunks == 1 {
                header.chunksize = chunk.nbytes as i32;
            }
            header.nbytes += chunk.nbytes as i64 - old_nbytes as i64;
        }
        match self.kind {
            FrameType::Contiguous => self.update_contiguous(updates, &seen, header),
            FrameType::Sparse => self.update_sparse(updates, header),
        }
    }

    /// [`Frame::update_many`] for a contiguous frame, the updates checked; `replaced[n]` says
    /// whether chunk `n` is one of them.
    fn update_contiguous(
        &mut self,
        updates: &[(usize, &NewChunk<'_>)],
        replaced: &[bool],
        mut header: FrameHeader,
    ) -> Result<()> {
        let hl = self.header.header_len as u64;
        let c0 = self.data_len();
        let mut offsets = self.offsets.clone();
        // Stored chunks replaced in place, by position: (offset, old stored length, update).
        let mut in_place = Vec::new();
        // Chunks replaced at the end of the data section, in the order given: those that
        // were special, and those whose bytes another index entry still shares.
        let mut appended = Vec::new();
        // Index entries per stored offset.
        let mut users = std::collections::HashMap::new();
        for &v in self.offsets.iter().filter(|&&v| v >= 0) {
            *users.entry(v).or_insert(0usize) += 1;
        }
        for (i, &(n, _)) in updates.iter().enumerate() {
            match self.chunk_loc(n)? {
                ChunkLoc::Special(_) => appended.push(i),
                ChunkLoc::Stored(o) => {
                    // As one update at a time would: the last sharer replaced goes in place.
                    let sharers = users.entry(o as i64).or_insert(1);
                    if *sharers > 1 {
                        *sharers -= 1;
                        appended.push(i);
                        continue;
                    }
                    let (obj, pos, room) = self.stored_at(o)?;
                    let (_, ocb) = self.stored_header(obj, pos, room)?;
                    // C-Blosc2 counts an old chunk of exactly 32 bytes as 0.
                    let ocb = if ocb == EXTENDED_HEADER_LENGTH {
                        0
                    } else {
                        ocb as u64
                    };
                    in_place.push((o, ocb, i));
                }
            }
        }
        in_place.sort_unstable_by_key(|&(o, _, _)| o);
        if let Some(w) = in_place.windows(2).find(|w| w[0].0 + w[0].1 > w[1].0) {
            let next = Expected::at_most(w[1].0);
            let end = Error::header(
                "end of a stored chunk (the next one's offset)",
                w[0].0 + w[0].1,
                next,
            );
            return Err(Error::frame(self.path(), end));
        }
        let p = in_place.first().map_or(c0, |&(o, _, _)| o);
        let mut pieces = Vec::new();
        let mut cursor = p;
        // Offsets at or past `ends[j]` move by `shifts[j]`, the growth of the chunks before.
        let mut ends = Vec::with_capacity(in_place.len());
        let mut shifts = Vec::with_capacity(in_place.len());
        let mut shift = 0i64;
        for &(o, ocb, i) in &in_place {
            if o > cursor {
                pieces.push(Piece::Old {
                    pos: hl + cursor,
                    len: o - cursor,
                });
            }
            let (n, chunk) = updates[i];
            offsets[n] = match chunk.special {
                Some(kind) => encode_special(kind)?,
                None => {
                    pieces.push(Piece::New(chunk.bytes));
                    o as i64 + shift
                }
            };
            shift += chunk.stored_len() as i64 - ocb as i64;
            cursor = o + ocb;
            ends.push(o);
            shifts.push(shift);
        }
        if cursor < c0 {
            pieces.push(Piece::Old {
                pos: hl + cursor,
                len: c0 - cursor,
            });
        }
        for (v, _) in offsets.iter_mut().zip(replaced).filter(|(_, &r)| !r) {
            if *v >= 0 {
                // The updated chunks that lie before this one (strictly).
                let k = ends.partition_point(|&o| (o as i64) < *v);
                if k > 0 {
                    *v += shifts[k - 1];
                }
            }
        }
        let mut end = (c0 as i64 + shift).max(0);
        for &i in &appended {
            let (n, chunk) = updates[i];
            offsets[n] = match chunk.special {
                Some(kind) => encode_special(kind)?,
                None => {
                    pieces.push(Piece::New(chunk.bytes));
                    let at = end;
                    end += chunk.bytes.len() as i64;
                    at
                }
            };
        }
        header.cbytes = end;
        let trailer = self.trailer.clone();
        self.commit_contiguous(Plan {
            p: hl + p,
            pieces,
            offsets: Some(offsets),
            room: 0,
            header,
            trailer,
        })
    }

    /// Removes chunk `n` from the index (contiguous frames keep its bytes, as C-Blosc2 does;
    /// sparse frames remove its file after the commit).
    pub fn delete(&mut self, n: usize) -> Result<()> {
        self.check_writable()?;
        let old_nbytes = self.chunk_nbytes(n)?;
        let mut header = self.header.clone();
        header.nbytes -= old_nbytes as i64;
        let mut offsets = self.offsets.clone();
        offsets.remove(n);
        match self.kind {
            FrameType::Contiguous => {
                if offsets.is_empty() {
                    header.cbytes = 0;
                }
                let trailer = self.trailer.clone();
                self.commit_contiguous(Plan {
                    p: self.header.header_len as u64 + self.data_len(),
                    pieces: Vec::new(),
                    offsets: Some(offsets),
                    room: 1,
                    header,
                    trailer,
                })
            }
            FrameType::Sparse => self.delete_sparse(n, offsets, header),
        }
    }

    /// Replaces the vlmetalayers (trailer) in one commit.
    pub fn set_vlmetalayers(&mut self, vlmetalayers: Vec<Metalayer>) -> Result<()> {
        self.check_writable()?;
        let mut header = self.header.clone();
        header.has_vlmetalayers = !vlmetalayers.is_empty();
        let trailer = Trailer {
            vlmetalayers,
            ..self.trailer.clone()
        };
        match self.kind {
            FrameType::Contiguous => self.commit_contiguous(Plan {
                p: self.header.header_len as u64 + self.data_len(),
                pieces: Vec::new(),
                offsets: None,
                room: 0,
                header,
                trailer,
            }),
            FrameType::Sparse => {
                let offsets = self.offsets.clone();
                self.commit_sparse(&[], offsets, header, trailer, &[], 0)
            }
        }
    }

    /// Rewrites the header with new metalayers or parameters; only while the frame holds no
    /// chunk (the header length may change). One atomic replace of the whole frame.
    pub fn set_header(&mut self, mut header: FrameHeader) -> Result<()> {
        self.check_writable()?;
        if !self.offsets.is_empty() {
            return Err(Error::Unsupported {
                what: "metalayers and parameters can only change before any chunk is added",
            });
        }
        header.nbytes = 0;
        header.cbytes = 0;
        let trailer = self.trailer.clone();
        match self.kind {
            FrameType::Contiguous => self.commit_contiguous(Plan {
                p: self.header.header_len as u64,
                pieces: Vec::new(),
                offsets: Some(Vec::new()),
                room: 0,
                header,
                trailer,
            }),
            FrameType::Sparse => self.commit_sparse(&[], Vec::new(), header, trailer, &[], 0),
        }
    }

    /// Overwrites the content of metalayer `index` in place with `content` (≤ its length;
    /// the tail keeps its old bytes, as C-Blosc2 does): one write inside the header.
    pub fn update_metalayer(&mut self, index: usize, content: &[u8]) -> Result<()> {
        self.check_writable()?;
        let h = &self.header;
        let old = &h.metalayers[index].content;
        if content.len() > old.len() {
            return Err(Error::range(
                "bytes of new metalayer content (a metalayer cannot grow)",
                content.len(),
                Expected::AtMost(to_i64(old.len())),
            ));
        }
        let bytes = h.to_bytes();
        let pos = Self::metalayer_content_pos(&bytes, index)?;
        self.write(Obj::Frame, pos as u64, content)?;
        self.barrier(Obj::Frame)?;
        self.header.metalayers[index].content[..content.len()].copy_from_slice(content);
        Ok(())
    }

    /// Position of the content of metalayer `index` in the header bytes.
    fn metalayer_content_pos(header: &[u8], index: usize) -> Result<usize> {
        let mut r = crate::format::msgpack::Reader::at(header, HEADER_MINLEN);
        r.marker(0x93, "metalayers")?;
        r.uint16("index size")?;
        let n = r.map16_len("map")?;
        let mut pos = None;
        for i in 0..n {
            r.fixstr("name")?;
            let off = r.int32("offset")?;
            if i == index {
                pos = Some(off as usize + 5);
            }
        }
        pos.ok_or(Error::Internal {
            what: "the header written has fewer metalayers than the frame holds",
        })
    }

    /// Fills an empty frame with `nchunks` special chunks of `chunksize` bytes (the last
    /// holding `nbytes − (nchunks−1)·chunksize`): one offsets chunk repeating one special
    /// entry, as `frame_fill_special` writes it.
    pub fn fill_special(&mut self, nbytes: u64, kind: SpecialType, chunksize: usize) -> Result<()> {
        self.check_writable()?;
        if !self.offsets.is_empty() || self.header.nbytes != 0 {
            return Err(Error::FrameSpecial {
                what: "chunks in the frame: it must be empty",
                value: self.offsets.len() as u64,
            });
        }
        let nchunks = nbytes.div_ceil(chunksize as u64);
        let off_nbytes = nchunks
            .checked_mul(8)
            .filter(|&b| b <= MAX_BUFFERSIZE as u64)
            .ok_or(Error::FrameSpecial {
                what: "chunks exceed the offsets index limit: use a larger chunksize",
                value: nchunks,
            })? as usize;
        let entry = encode_special(kind)?;
        let mut cp = offsets_cparams();
        cp.nthreads = 0;
        let off_chunk = special_chunk_ctx(
            &self.ctx,
            &cp,
            SpecialType::Value,
            off_nbytes,
            Some(&entry.to_le_bytes()),
        )?;
        let mut header = self.header.clone();
        header.nbytes = nbytes as i64;
        header.cbytes = 0;
        header.chunksize = chunksize as i32;
        let sample = CParams {
            typesize: header.typesize as usize,
            blocksize: usize::try_from(header.blocksize).unwrap_or(0),
            codec: header.codec,
            clevel: header.clevel,
            filters: header.filters,
            ..CParams::default()
        };
        let caps = self.ctx.codec_caps(sample.codec);
        header.blocksize = crate::chunk::compute_blocksize(&sample, &caps, chunksize) as i32;
        let offsets = vec![entry; nchunks as usize];
        let trailer = self.trailer.clone();
        let t = trailer.to_bytes();
        frame_parts(&mut header, 0, &off_chunk, &t);
        let hb = header.to_bytes();
        self.replace_frame(&[&hb, &off_chunk, &t])?;
        self.install(header, trailer, t, offsets, off_chunk);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{append, contents, empty, noisy, ramp, reopen};
    use super::*;
    use crate::chunk::decompress_vec;

    fn parse(chunk: &[u8]) -> NewChunk<'_> {
        NewChunk::parse(&crate::registry::Registry::global(), chunk).unwrap()
    }

    fn stored_at(f: &Frame, n: usize) -> u64 {
        match f.chunk_loc(n).unwrap() {
            ChunkLoc::Stored(o) => o,
            ChunkLoc::Special(k) => panic!("chunk {n} is {k:?}"),
        }
    }

    #[test]
    fn the_chunksize_rules_of_cblosc2_2x() {
        let (mut f, _) = empty(FrameType::Contiguous);
        let (full, short) = (ramp(0, 1000), ramp(0, 750));
        append(&mut f, &full);
        append(&mut f, &short);
        assert_eq!(f.header().chunksize, 4000);
        // Only the last chunk may be short.
        let e = f.append(&[parse(&full)]).unwrap_err();
        let rule = |op, nchunk, nbytes| Error::ChunkSize {
            op,
            nchunk,
            nbytes,
            chunksize: 4000,
        };
        assert_eq!(e, rule(ChunkOp::Append, 1, 3000));
        assert!(e.to_string().contains("3000 of 4000"), "{e}");
        let e = f.insert(0, &parse(&short)).unwrap_err();
        assert_eq!(e, rule(ChunkOp::Insert, 0, 3000));
        let e = f.update(0, &parse(&short)).unwrap_err();
        assert_eq!(e, rule(ChunkOp::Update, 0, 3000));
        let e = f.insert(3, &parse(&full)).unwrap_err();
        assert_eq!(e, Error::index("insert position", 3, 3));
        // The last chunk may become full, and then take a successor.
        f.update(1, &parse(&full)).unwrap();
        append(&mut f, &ramp(5, 200));
        let e = f.append(&[parse(&ramp(0, 1001))]).unwrap_err();
        assert_eq!(e, rule(ChunkOp::Append, 2, 800));
        let e = f
            .update_many(&[(0, &parse(&full)), (0, &parse(&full))])
            .unwrap_err();
        assert!(
            matches!(e, Error::Duplicate { ref name, .. } if name == "0"),
            "{e}"
        );
        assert_eq!(f.nchunks(), 3);
        assert_eq!(f.header().nbytes, 8800);
    }

    #[test]
    fn a_read_only_frame_refuses_every_change() {
        let (mut f, io) = empty(FrameType::Contiguous);
        append(&mut f, &ramp(0, 1000));
        let mut r = reopen(&io, FrameType::Contiguous).unwrap();
        let c = ramp(0, 1000);
        let read_only = |r: Result<()>| {
            let e = r.unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::Io {
                        op: IoOp::Write,
                        ..
                    }
                ),
                "{e}"
            );
            assert_eq!(e.io_kind(), Some(ErrorKind::PermissionDenied));
        };
        read_only(r.append(&[parse(&c)]));
        read_only(r.update(0, &parse(&c)));
        read_only(r.delete(0));
        read_only(r.set_vlmetalayers(Vec::new()));
        assert_eq!(r.nchunks(), 1);
    }

    #[test]
    fn an_update_moves_the_bytes_after_it() {
        let (mut f, io) = empty(FrameType::Contiguous);
        let (a, b, c) = (ramp(0, 1000), ramp(1000, 1000), ramp(2000, 1000));
        for chunk in [&a, &b, &c] {
            append(&mut f, chunk);
        }
        assert_eq!(
            (stored_at(&f, 1), stored_at(&f, 2)),
            (a.len() as u64, (a.len() + b.len()) as u64)
        );
        // Chunk 0 grows: chunks 1 and 2 move by the growth.
        let big = noisy(3, 1000, 4096);
        assert!(big.len() > a.len());
        f.update(0, &parse(&big)).unwrap();
        assert_eq!(stored_at(&f, 0), 0);
        assert_eq!(stored_at(&f, 1), big.len() as u64);
        assert_eq!(stored_at(&f, 2), (big.len() + b.len()) as u64);
        assert_eq!(f.header().cbytes as usize, big.len() + b.len() + c.len());
        // Chunks 0 and 2 together: 0 shrinks back, 2 grows; 1 moves back to where it was.
        let big2 = noisy(4, 1000, 4096);
        f.update_many(&[(2, &parse(&big2)), (0, &parse(&a))])
            .unwrap();
        assert_eq!(stored_at(&f, 1), a.len() as u64);
        assert_eq!(stored_at(&f, 2), (a.len() + b.len()) as u64);
        assert_eq!(f.header().cbytes as usize, a.len() + b.len() + big2.len());
        let reread = reopen(&io, FrameType::Contiguous).unwrap();
        assert_eq!(contents(&reread), contents(&f));
        assert_eq!(contents(&f)[2], decompress_vec(&big2).unwrap());
        assert_eq!(reread.read_chunk(1).unwrap(), b);
    }

    #[test]
    fn a_delete_keeps_the_bytes_and_drops_the_entry() {
        let (mut f, _) = empty(FrameType::Contiguous);
        let (a, b) = (ramp(0, 1000), ramp(1000, 1000));
        append(&mut f, &a);
        append(&mut f, &b);
        let cbytes = f.header().cbytes;
        f.delete(0).unwrap();
        assert_eq!(
            (f.nchunks(), f.header().cbytes, f.header().nbytes),
            (1, cbytes, 4000)
        );
        assert_eq!(stored_at(&f, 0), a.len() as u64);
        assert_eq!(f.read_chunk(0).unwrap(), b);
        f.delete(0).unwrap();
        assert_eq!((f.nchunks(), f.header().cbytes), (0, 0));
    }

    #[test]
    fn metalayers_are_overwritten_in_place_never_grown() {
        let (mut f, io) = empty(FrameType::Contiguous);
        let mut h = f.header().clone();
        h.metalayers.push(Metalayer {
            name: "m".into(),
            content: vec![1, 2, 3, 4],
        });
        f.set_header(h).unwrap();
        f.update_metalayer(0, &[9, 9]).unwrap();
        let e = f.update_metalayer(0, &[0; 5]).unwrap_err();
        assert!(e.to_string().contains("cannot grow"), "{e}");
        let r = reopen(&io, FrameType::Contiguous).unwrap();
        assert_eq!(r.header().metalayers[0].content, [9, 9, 3, 4]);
        append(&mut f, &ramp(0, 10));
        let e = f.set_header(r.header().clone()).unwrap_err();
        assert!(e.to_string().contains("before any chunk"), "{e}");
    }

    #[test]
    fn a_special_fill_is_one_index_entry_repeated() {
        let (mut f, io) = empty(FrameType::Contiguous);
        f.fill_special(10_000, SpecialType::Zero, 4000).unwrap();
        assert_eq!(
            (f.nchunks(), f.header().chunksize, f.header().cbytes),
            (3, 4000, 0)
        );
        assert_eq!(f.chunk_nbytes(2).unwrap(), 2000);
        let r = reopen(&io, FrameType::Contiguous).unwrap();
        assert_eq!(contents(&r), [vec![0; 4000], vec![0; 4000], vec![0; 2000]]);
        let e = f.fill_special(4000, SpecialType::Zero, 4000).unwrap_err();
        assert!(matches!(e, Error::FrameSpecial { value: 3, .. }), "{e}");
    }
}
