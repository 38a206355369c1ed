//! Reading a frame's chunks: where a chunk is, its header (32 bytes read) and its bytes,
//! checked against the room the frame gives it; partial reads and lazy chunks that read only
//! the chunk header, its `bstarts` and the blocks asked for.

use super::Frame;
use crate::chunk::{special_chunk_ctx, CParams, DParams, Decoder};
use crate::error::{Error, Expected, Result};
use crate::format::chunk::{ChunkHeader, SpecialType, EXTENDED_HEADER_LENGTH};
use crate::format::frame::{decode_offset, ChunkLoc, FrameHeader, FrameType};
use crate::format::ids::FilterId;
use crate::frame::io::{Obj, ReadReq, Traffic};
use std::ops::Range;
use std::sync::atomic::Ordering;

/// Chunks up to this many bytes are read whole even for a partial read.
const LAZY_MIN: usize = 64 * 1024;

/// A stored chunk located and its header read (nothing else of it).
#[derive(Debug, Clone, Copy)]
struct Stored {
    /// The object that holds it.
    obj: Obj,
    /// Its position in that object.
    pos: u64,
    /// Its 32 header bytes as stored.
    h32: [u8; 32],
    /// Its cbytes, checked against the room it has.
    cb: usize,
}

impl Frame {
    /// Where chunk `n` is.
    pub fn chunk_loc(&self, n: usize) -> Result<ChunkLoc> {
        let v = *self
            .offsets
            .get(n)
            .ok_or_else(|| Error::index("chunk", n, self.offsets.len()))?;
        decode_offset(v).map_err(|e| e.in_frame(&self.path()))
    }

    /// The uncompressed size of chunk `n` as the header implies it (fixed chunksize).
    pub(super) fn fixed_nbytes(&self, n: usize) -> Option<usize> {
        let cs = usize::try_from(self.header.chunksize)
            .ok()
            .filter(|&c| c > 0)?;
        let total = self.header.nbytes as u64;
        let start = n as u64 * cs as u64;
        Some((total.saturating_sub(start)).min(cs as u64) as usize)
    }

    /// The uncompressed size of chunk `n`, in bytes.
    pub fn chunk_nbytes(&self, n: usize) -> Result<usize> {
        if n >= self.nchunks() {
            return Err(Error::index("chunk", n, self.nchunks()));
        }
        if let Some(nb) = self.fixed_nbytes(n) {
            return Ok(nb);
        }
        Ok(ChunkHeader::parse(&self.read_chunk(n)?)?.nbytes)
    }

    /// The cparams that rebuild special chunks: C-Blosc2's defaults with the frame's
    /// typesize and blocksize.
    fn special_cparams(&self) -> CParams {
        CParams {
            typesize: self.header.typesize as usize,
            blocksize: usize::try_from(self.header.blocksize).unwrap_or(0),
            ..CParams::default()
        }
    }

    /// The object, position and room of stored chunk `off`.
    pub(super) fn stored_at(&self, off: u64) -> Result<(Obj, u64, u64)> {
        match self.kind {
            FrameType::Contiguous => {
                let room = (self.header.cbytes as u64).saturating_sub(off);
                Ok((Obj::Frame, self.header.header_len as u64 + off, room))
            }
            FrameType::Sparse => Ok((Obj::Chunk(off), 0, self.io.len(Obj::Chunk(off))?)),
        }
    }

    /// Reads the 32-byte header of a stored chunk; returns it and the chunk's cbytes,
    /// checked against the room it has.
    pub(super) fn stored_header(&self, obj: Obj, pos: u64, room: u64) -> Result<([u8; 32], usize)> {
        if room < EXTENDED_HEADER_LENGTH as u64 {
            return Err(no_room(self.io.path(obj), room));
        }
        let mut h = [0u8; EXTENDED_HEADER_LENGTH];
        self.io.read_at(obj, pos, &mut h)?;
        let cb = self.checked_cbytes(obj, room, &h)?;
        Ok((h, cb))
    }

    /// The cbytes of a stored chunk of `obj` whose header is `h`, checked against the `room`
    /// it has.
    fn checked_cbytes(&self, obj: Obj, room: u64, h: &[u8; 32]) -> Result<usize> {
        let cb = i32::from_le_bytes([h[12], h[13], h[14], h[15]]);
        usize::try_from(cb)
            .ok()
            .filter(|&c| c >= EXTENDED_HEADER_LENGTH && c as u64 <= room)
            .ok_or_else(|| {
                let room = Expected::range(EXTENDED_HEADER_LENGTH, room);
                Error::frame(
                    self.io.path(obj),
                    Error::header("stored chunk cbytes", cb, room),
                )
            })
    }

    /// Stored chunk `n` at offset `off`, located and its header read.
    fn stored_chunk(&self, n: usize, off: u64) -> Result<Stored> {
        let (obj, pos, room) = self.stored_at(off)?;
        let (h32, cb) = self.stored_header(obj, pos, room)?;
        let c = Stored { obj, pos, h32, cb };
        self.check_nbytes(n, &c)?;
        Ok(c)
    }

    /// In a fixed-chunksize frame, stored chunk `n` must hold the bytes the frame gives it
    /// (the chunksize, less for the last chunk): a chunk whose header says otherwise is
    /// corrupt, and is refused before anything is sized from its header.
    fn check_nbytes(&self, n: usize, c: &Stored) -> Result<()> {
        if let Some(want) = self.fixed_nbytes(n) {
            let h = &c.h32;
            let nb = i32::from_le_bytes([h[4], h[5], h[6], h[7]]);
            if usize::try_from(nb).ok() != Some(want) {
                let given = Expected::exactly(want);
                let what = "nbytes (as the frame's chunksize gives it)";
                let e = Error::at("chunk", n, Error::header(what, nb, given));
                return Err(Error::frame(self.io.path(c.obj), e));
            }
        }
        Ok(())
    }

    /// How many blocks a chunk of a frame with `header` has when its blocksize is the
    /// frame's (0 when the header does not say), at most as many as `bstarts` fit in a
    /// chunk read whole.
    pub(super) fn nblocks_of(header: &FrameHeader) -> usize {
        match (
            usize::try_from(header.chunksize),
            usize::try_from(header.blocksize),
        ) {
            (Ok(c), Ok(b)) if c > 0 && b > 0 => c.div_ceil(b).min(LAZY_MIN / 4),
            _ => 0,
        }
    }

    /// The header of stored chunk `c`, parsed on its own (its `cbytes` are checked by
    /// [`Frame::stored_chunk`]: the chunk's other bytes are not read).
    fn parse_stored(&self, c: &Stored) -> Result<ChunkHeader> {
        let mut probe = c.h32;
        probe[12..16].copy_from_slice(&(EXTENDED_HEADER_LENGTH as i32).to_le_bytes());
        ChunkHeader::parse(&probe).map_err(|e| e.in_frame(&self.io.path(c.obj)))
    }

    /// The header of chunk `n` (32 bytes read for a stored chunk); `cbytes` is the stored
    /// size (32 for a special chunk rebuilt).
    pub fn chunk_header(&self, n: usize) -> Result<ChunkHeader> {
        match self.chunk_loc(n)? {
            ChunkLoc::Special(_) => ChunkHeader::parse(&self.read_chunk(n)?),
            ChunkLoc::Stored(off) => {
                let c = self.stored_chunk(n, off)?;
                let mut h = self.parse_stored(&c)?;
                h.cbytes = c.cb;
                Ok(h)
            }
        }
    }

    /// The compressed chunk `n` (a special chunk is rebuilt as a 32-byte chunk).
    pub fn read_chunk(&self, n: usize) -> Result<Vec<u8>> {
        match self.chunk_loc(n)? {
            ChunkLoc::Special(kind) => {
                let nb = self.fixed_nbytes(n).ok_or_else(|| {
                    let what = "a variable-chunksize frame has a special chunk";
                    Error::frame(self.path(), Error::Malformed { what })
                })?;
                special_chunk_ctx(&self.ctx, &self.special_cparams(), kind, nb, None)
                    .map_err(|e| Error::frame(self.path(), e))
            }
            ChunkLoc::Stored(off) => {
                let c = self.stored_chunk(n, off)?;
                let mut out = crate::alloc::zeroed(c.cb)?;
                self.io.read_at(c.obj, c.pos, &mut out)?;
                Ok(out)
            }
        }
    }

    /// Decompresses bytes `range` of chunk `n` into `dst`, reading from the store only the
    /// chunk header, its `bstarts` and the blocks that hold the range (whole chunks when
    /// they are small, special, memcpyed, VL-block or use a dictionary); `dparams` gives the
    /// threads and the N-d array handed to the codec and filters.
    pub fn read_range(
        &self,
        dparams: &DParams,
        n: usize,
        range: Range<usize>,
        dst: &mut [u8],
    ) -> Result<usize> {
        let ctx = &self.ctx;
        let c = match self.chunk_loc(n)? {
            ChunkLoc::Special(_) => {
                let c = self.read_chunk(n)?;
                return Decoder::new(ctx.registry(), &c)?
                    .with_nd(dparams.nd.clone())
                    .decompress_range_on(ctx.runtime(), dparams.nthreads, range, dst);
            }
            ChunkLoc::Stored(off) => self.stored_chunk(n, off)?,
        };
        let path = self.io.path(c.obj);
        let hdr = self.parse_stored(&c)?;
        if hdr.memcpyed() && hdr.special == SpecialType::None {
            Error::check_range("bytes", &range, hdr.nbytes)?;
            let len = range.len();
            if dst.len() < len {
                return Err(Error::DestinationTooSmall {
                    needed: len,
                    available: dst.len(),
                });
            }
            // The data follows the header, 16 bytes long in Blosc1-layout chunks.
            if hdr.header_len + hdr.nbytes > c.cb {
                return Err(Error::frame(
                    path,
                    Error::Malformed {
                        what: "a memcpyed chunk is shorter than its nbytes",
                    },
                ));
            }
            self.io.read_at(
                c.obj,
                c.pos + (hdr.header_len + range.start) as u64,
                &mut dst[..len],
            )?;
            return Ok(len);
        }
        let needed = if range.is_empty() || hdr.blocksize == 0 || range.end > hdr.nbytes {
            Vec::new()
        } else {
            (range.start / hdr.blocksize..=(range.end - 1) / hdr.blocksize).collect()
        };
        let mut image = Vec::new();
        self.lazy_chunk(n, &needed, &mut image)?;
        Decoder::new(ctx.registry(), &image)
            .map_err(|e| e.in_frame(&path))?
            .with_nd(dparams.nd.clone())
            .decompress_range_on(ctx.runtime(), dparams.nthreads, range, dst)
            .map_err(|e| e.in_frame(&path))
    }

    /// Chunk `n` as a lazy chunk, built in `out` (its capacity reused): an image holding its
    /// header, its `bstarts` and the bytes of blocks `nblocks` only (plus block 0 when the
    /// chunk uses delta), the other blocks' `bstarts` pointing at bytes that must not be read
    /// (see [`Frame::lazy_chunks`]). Chunks that are special, small, memcpyed, VL-block or
    /// use a dictionary come whole. Returns what the reads moved.
    pub fn lazy_chunk(&self, n: usize, nblocks: &[usize], out: &mut Vec<u8>) -> Result<Traffic> {
        self.lazy_chunks(&[(n, nblocks)], std::slice::from_mut(out))
    }

    /// The lazy chunks of `wants` (`(chunk number, blocks)` each, as [`Frame::lazy_chunk`]),
    /// one into each of `outs` (capacities reused), in at most three batches of reads
    /// ([`FrameIo::read_many`]) whatever their number: the chunks' headers with as many
    /// `bstarts` as the chunks read last had, the `bstarts` that turned out longer, then the
    /// blocks asked for (and the chunks read whole). After a chunk small enough to be read
    /// whole, the first read takes its size and a quarter more (a small chunk file of a
    /// sparse frame, all of it), so an array of small chunks reads each in one read instead
    /// of two dependent ones. Returns what the reads moved.
    ///
    /// An image holds the header (cbytes patched to the image's length), `bstarts` pointing
    /// into the image (blocks not asked for point at the first block byte and are never
    /// read), then the blocks' bytes. A block's bytes run from its `bstart` to the next
    /// larger one (or the chunk end), as C-Blosc2's lazy chunks size them; blocks stored back
    /// to back are one read.
    pub fn lazy_chunks(
        &self,
        wants: &[(usize, &[usize])],
        outs: &mut [Vec<u8>],
    ) -> Result<Traffic> {
        if wants.len() != outs.len() {
            let what = "buffers for the lazy chunks asked for";
            return Err(Error::mismatch(what, wants.len(), outs.len()));
        }
        let mut moved = Traffic::default();
        let guess = EXTENDED_HEADER_LENGTH + 4 * self.nblocks_hint.load(Ordering::Relaxed);
        let small = self.small_chunk_hint.load(Ordering::Relaxed);
        let guess = guess.max(small + small / 4);
        let mut heads = Vec::new();
        for (i, &(n, _)) in wants.iter().enumerate() {
            match self.chunk_loc(n)? {
                ChunkLoc::Special(_) => outs[i] = self.read_chunk(n)?,
                ChunkLoc::Stored(off) => {
                    let (obj, pos, room) = self.stored_at(off)?;
                    if room < EXTENDED_HEADER_LENGTH as u64 {
                        return Err(no_room(self.io.path(obj), room));
                    }
                    // A chunk file of a sparse frame is exactly the chunk: read whole when
                    // it is small.
                    let len = match self.kind {
                        FrameType::Sparse if room <= LAZY_MIN as u64 => room,
                        _ => room.min(guess as u64),
                    } as usize;
                    heads.push((i, obj, pos, room, crate::alloc::zeroed(len)?));
                }
            }
        }
        if !heads.is_empty() {
            moved += self.io.read_many(
                &mut heads
                    .iter_mut()
                    .map(|(_, obj, pos, _, buf)| ReadReq {
                        obj: *obj,
                        pos: *pos,
                        buf,
                    })
                    .collect::<Vec<_>>(),
            )?;
        }
        // Each header checked; the chunk read whole, or its `bstarts` completed.
        let mut chunks = Vec::with_capacity(heads.len());
        for (i, obj, pos, room, mut bytes) in heads {
            let mut h32 = [0u8; EXTENDED_HEADER_LENGTH];
            h32.copy_from_slice(&bytes[..EXTENDED_HEADER_LENGTH]);
            let cb = self.checked_cbytes(obj, room, &h32)?;
            let c = Stored { obj, pos, h32, cb };
            self.check_nbytes(wants[i].0, &c)?;
            let hdr = self.parse_stored(&c)?;
            let regular = hdr.special == SpecialType::None
                && !hdr.memcpyed()
                && !hdr.vl_blocks()
                && !hdr.use_dict()
                && hdr.nbytes > 0;
            let need = if regular && cb > LAZY_MIN {
                let data_start = EXTENDED_HEADER_LENGTH + 4 * hdr.nblocks();
                if data_start >= cb {
                    let at_least = Expected::at_least(data_start + 1);
                    let e = Error::header("chunk cbytes (with its bstarts)", cb, at_least);
                    return Err(Error::frame(self.io.path(obj), e));
                }
                self.nblocks_hint.store(hdr.nblocks(), Ordering::Relaxed);
                Some(data_start)
            } else {
                None
            };
            let small = if need.is_none() && cb <= LAZY_MIN {
                cb
            } else {
                0
            };
            self.small_chunk_hint.store(small, Ordering::Relaxed);
            bytes.truncate(need.unwrap_or(cb));
            chunks.push((i, c, hdr, need, bytes));
        }
        let mut reqs = Vec::new();
        for (_, c, _, need, bytes) in &mut chunks {
            if let Some(data_start) = *need {
                let from = bytes.len();
                if from < data_start {
                    crate::alloc::resize(bytes, data_start, 0)?;
                    reqs.push(ReadReq {
                        obj: c.obj,
                        pos: c.pos + from as u64,
                        buf: &mut bytes[from..],
                    });
                }
            }
        }
        if !reqs.is_empty() {
            moved += self.io.read_many(&mut reqs)?;
        }
        drop(reqs);
        // The images laid out, then every block (or whole chunk) read into them at once.
        let mut reqs = Vec::new();
        let mut chunks = chunks.iter().peekable();
        for (i, out) in outs.iter_mut().enumerate() {
            let Some((_, c, hdr, need, head)) = chunks.next_if(|ch| ch.0 == i) else {
                continue;
            };
            let reads = match need {
                None => {
                    crate::alloc::resize(out, c.cb, 0)?;
                    out[..head.len()].copy_from_slice(head);
                    vec![(head.len(), c.cb, head.len())]
                }
                Some(_) => {
                    let layout = Layout::new(hdr, head, wants[i].1, c.cb)
                        .map_err(|e| e.in_frame(&self.io.path(c.obj)))?;
                    layout.write_head(&c.h32, out)?;
                    layout.reads()
                }
            };
            let mut rest: &mut [u8] = out;
            let mut at = 0;
            for (start, end, into) in reads {
                let (_, tail) = std::mem::take(&mut rest).split_at_mut(into - at);
                let (buf, tail) = tail.split_at_mut(end - start);
                if !buf.is_empty() {
                    reqs.push(ReadReq {
                        obj: c.obj,
                        pos: c.pos + start as u64,
                        buf,
                    });
                }
                rest = tail;
                at = end - start + into;
            }
        }
        if !reqs.is_empty() {
            moved += self.io.read_many(&mut reqs)?;
        }
        Ok(moved)
    }
}

/// The error for a chunk whose place in the frame cannot hold its header.
fn no_room(path: String, room: u64) -> Error {
    let what = "room for a chunk (its header at least)";
    Error::frame(
        path,
        Error::header(what, room, Expected::at_least(EXTENDED_HEADER_LENGTH)),
    )
}

/// How a lazy chunk image is laid out: the header and `bstarts`, then runs of the chunk's
/// stored bytes one after the other.
struct Layout {
    /// Where the block bytes start, in the chunk and in the image.
    data_start: usize,
    /// `(start, end)` in the chunk of each run, in storage order.
    runs: Vec<(usize, usize)>,
    /// Each block's `bstart` in the image.
    starts: Vec<usize>,
}

impl Layout {
    /// The layout for blocks `nblocks` (and block 0 when the chunk uses delta) of a regular
    /// chunk of `cb` bytes and header `hdr`, whose first bytes (header and `bstarts`) are
    /// `head`.
    fn new(hdr: &ChunkHeader, head: &[u8], nblocks: &[usize], cb: usize) -> Result<Layout> {
        let total = hdr.nblocks();
        let data_start = EXTENDED_HEADER_LENGTH + 4 * total;
        let starts: Vec<usize> = head[EXTENDED_HEADER_LENGTH..data_start]
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .map(|v| {
                usize::try_from(v)
                    .ok()
                    .filter(|&s| s >= data_start && s < cb)
                    .ok_or_else(|| {
                        let inside = Expected::range(data_start, cb - 1);
                        Error::header("bstart", v, inside)
                    })
            })
            .collect::<Result<_>>()?;
        let mut sorted = starts.clone();
        sorted.sort_unstable();
        sorted.dedup();
        let mut needed: Vec<usize> = nblocks.iter().copied().filter(|&b| b < total).collect();
        if hdr.filters.contains(&FilterId::DELTA) {
            needed.push(0);
        }
        // Each needed block's stored extent, in storage order; equal starts share bytes.
        let mut extents: Vec<(usize, usize, usize)> = needed
            .iter()
            .map(|&b| {
                let s = starts[b];
                let i = sorted.partition_point(|&x| x <= s);
                (s, sorted.get(i).copied().unwrap_or(cb), b)
            })
            .collect();
        extents.sort_unstable();
        extents.dedup_by_key(|e| e.2);
        // Runs of blocks whose bytes follow each other in the chunk: one read each.
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut new_starts = vec![data_start; total];
        let mut at = data_start;
        for &(s, end, b) in &extents {
            match runs.last_mut() {
                Some(run) if s <= run.1 => {
                    let grown = end.max(run.1);
                    at += grown - run.1;
                    run.1 = grown;
                }
                _ => {
                    runs.push((s, end));
                    at += end - s;
                }
            }
            let run = runs[runs.len() - 1];
            let run_at = at - (run.1 - run.0);
            new_starts[b] = run_at + (s - run.0);
        }
        Ok(Layout {
            data_start,
            runs,
            starts: new_starts,
        })
    }

    /// The image's length.
    fn len(&self) -> usize {
        self.data_start + self.runs.iter().map(|r| r.1 - r.0).sum::<usize>()
    }

    /// Makes `out` the image's length and writes its header (from the stored 32 bytes
    /// `h32`, cbytes patched) and `bstarts`; the runs' bytes are left to be read.
    fn write_head(&self, h32: &[u8; EXTENDED_HEADER_LENGTH], out: &mut Vec<u8>) -> Result<()> {
        let len = self.len();
        crate::alloc::resize(out, len, 0)?;
        out[..EXTENDED_HEADER_LENGTH].copy_from_slice(h32);
        out[12..16].copy_from_slice(&(len as i32).to_le_bytes());
        for (b, s) in self.starts.iter().enumerate() {
            let at = EXTENDED_HEADER_LENGTH + 4 * b;
            out[at..at + 4].copy_from_slice(&(*s as i32).to_le_bytes());
        }
        Ok(())
    }

    /// The reads that fill the image: `(start, end)` in the chunk and where they go in the
    /// image, in image order.
    fn reads(&self) -> Vec<(usize, usize, usize)> {
        let mut at = self.data_start;
        self.runs
            .iter()
            .map(|&(s, e)| {
                at += e - s;
                (s, e, at - (e - s))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{append, cparams, empty, noisy, noisy_items, ramp, Recording};
    use super::*;
    use crate::chunk::{compress_vec, decompress_vec, special_chunk, Context};
    use crate::format::frame::FrameHeader;
    use crate::frame::io::FrameIo;
    use crate::frame::SyncPolicy;
    use crate::registry::Registry;

    #[test]
    fn chunks_read_back_as_stored() {
        for kind in [FrameType::Contiguous, FrameType::Sparse] {
            let (mut f, _) = empty(kind);
            let a = ramp(0, 1000);
            let zeros = special_chunk(&cparams(0), SpecialType::Zero, 4000, None).unwrap();
            append(&mut f, &a);
            append(&mut f, &zeros);
            assert_eq!(f.read_chunk(0).unwrap(), a);
            assert_eq!(f.chunk_nbytes(0).unwrap(), 4000);
            let h = f.chunk_header(0).unwrap();
            assert_eq!((h.nbytes, h.cbytes), (4000, a.len()));
            assert!(matches!(f.chunk_loc(0).unwrap(), ChunkLoc::Stored(_)));
            // A special chunk is an index entry, rebuilt on read with the frame's parameters.
            assert_eq!(
                f.chunk_loc(1).unwrap(),
                ChunkLoc::Special(SpecialType::Zero)
            );
            let z = f.read_chunk(1).unwrap();
            assert_eq!(decompress_vec(&z).unwrap(), vec![0; 4000]);
            assert_eq!(f.chunk_header(1).unwrap().special, SpecialType::Zero);
            let e = f.read_chunk(2).unwrap_err();
            assert_eq!(e, Error::index("chunk", 2, 2));
            assert!(f.chunk_nbytes(2).is_err());
        }
    }

    #[test]
    fn a_chunk_that_does_not_fit_its_place_is_refused() {
        let (mut f, io) = empty(FrameType::Contiguous);
        let a = ramp(0, 1000);
        append(&mut f, &a);
        append(&mut f, &ramp(1000, 1000));
        let ChunkLoc::Stored(off1) = f.chunk_loc(1).unwrap() else {
            panic!("chunk 1 is stored")
        };
        let at = f.header().header_len as u64 + off1;
        let mut w = io.clone();
        // Chunk 1 says it holds 3996 bytes: the frame's chunksize gives it 4000.
        w.write_at(Obj::Frame, at + 4, &3996i32.to_le_bytes())
            .unwrap();
        // The header field a refusal names: (what, value, expected).
        let lie = |e: Error| match *e.root() {
            Error::InvalidHeader {
                what,
                value,
                expected,
            } => (what, value, expected),
            ref other => panic!("not a header error: {other}"),
        };
        let e = f.read_chunk(1).unwrap_err();
        assert!(e.to_string().contains("chunk 1: "), "{e}");
        let what = "nbytes (as the frame's chunksize gives it)";
        assert_eq!(lie(e), (what, 3996, Expected::Exactly(4000)));
        assert!(f.chunk_header(1).is_err());
        // Chunk 1 claims more bytes than the data section has after it.
        w.write_at(Obj::Frame, at + 4, &4000i32.to_le_bytes())
            .unwrap();
        w.write_at(Obj::Frame, at + 12, &1_000_000i32.to_le_bytes())
            .unwrap();
        let (what, value, _) = lie(f.read_chunk(1).unwrap_err());
        assert_eq!((what, value), ("stored chunk cbytes", 1_000_000));
        assert_eq!(f.read_chunk(0).unwrap(), a);
    }

    #[test]
    fn lazy_chunks_read_only_the_blocks_asked_for() {
        // 64 blocks of 4 KiB that shrink to about half: far above the whole-read size.
        let items = noisy_items(7, 64 * 1024);
        let mut delta = cparams(4096);
        delta.filters[4] = FilterId::DELTA;
        for chunk in [
            noisy(7, 64 * 1024, 4096),
            compress_vec(&delta, &items).unwrap(),
        ] {
            assert!(chunk.len() > 2 * LAZY_MIN);
            let (mut f, io) = empty(FrameType::Contiguous);
            append(&mut f, &chunk);
            let (rec, log) = Recording::new(io.clone());
            let f = Frame::open(Box::new(rec), false, SyncPolicy::None, Context::global()).unwrap();
            log.lock().unwrap().read = 0;
            let mut image = Vec::new();
            f.lazy_chunk(0, &[3, 4, 40], &mut image).unwrap();
            let read = log.lock().unwrap().read;
            assert!(
                read as usize <= chunk.len() / 8,
                "{read} of {} bytes read",
                chunk.len()
            );
            // Header, bstarts and the three blocks, each byte read once.
            assert_eq!(image.len() as u64, read);
            let d = Decoder::new(&Registry::global(), &image).unwrap();
            assert_eq!(d.header.cbytes, image.len());
            let mut block = vec![0u8; 4096];
            for b in [3, 4, 40] {
                d.decompress_block(b, &mut block, None).unwrap();
                assert_eq!(block, items[b * 4096..(b + 1) * 4096], "block {b}");
            }
            // A range inside block 10: that block read, and decoded, alone.
            let one = DParams::default().with_nthreads(1);
            let mut out = vec![0u8; 100];
            let r = 10 * 4096 + 50..10 * 4096 + 150;
            assert_eq!(f.read_range(&one, 0, r.clone(), &mut out).unwrap(), 100);
            assert_eq!(out, items[r]);
        }
    }

    #[test]
    fn lazy_chunks_of_a_batch_are_read_in_three_batches_then_two() {
        let (mut f, io) = empty(FrameType::Contiguous);
        let items: Vec<Vec<u8>> = (0..3).map(|k| noisy_items(k, 64 * 1024)).collect();
        for it in &items {
            append(&mut f, &compress_vec(&cparams(4096), it).unwrap());
        }
        let zeros = special_chunk(&cparams(4096), SpecialType::Zero, 1 << 18, None).unwrap();
        append(&mut f, &zeros);
        let (rec, log) = Recording::new(io.clone());
        let f = Frame::open(Box::new(rec), false, SyncPolicy::None, Context::global()).unwrap();
        let wants: [(usize, &[usize]); 4] = [(0, &[3]), (1, &[5, 6]), (2, &[63, 0]), (3, &[1])];
        for (round, batches) in [(0, vec![3, 3, 4]), (1, vec![3, 4])] {
            *log.lock().unwrap() = Default::default();
            let mut outs = vec![Vec::new(); 4];
            let moved = f.lazy_chunks(&wants, &mut outs).unwrap();
            let log = log.lock().unwrap();
            // Headers, then (the first time only: the frame's header does not give the
            // blocksize) the bstarts, then the blocks: block 0 and 63 are two reads, 5 and 6
            // one.
            assert_eq!(log.batches, batches, "round {round}");
            assert_eq!(log.singles, 0);
            assert_eq!(moved.bytes, log.read);
            let read: usize = outs[..3].iter().map(Vec::len).sum();
            assert_eq!(moved.bytes, read as u64, "each byte read once");
            let mut block = vec![0u8; 4096];
            for (k, &(_, blocks)) in wants[..3].iter().enumerate() {
                let d = Decoder::new(&Registry::global(), &outs[k]).unwrap();
                for &b in blocks {
                    d.decompress_block(b, &mut block, None).unwrap();
                    assert_eq!(block, items[k][b * 4096..(b + 1) * 4096]);
                }
            }
            assert_eq!(decompress_vec(&outs[3]).unwrap(), vec![0; 1 << 18]);
        }
        let e = f.lazy_chunks(&wants, &mut [Vec::new()]).unwrap_err();
        assert!(matches!(e.root(), Error::Mismatch { .. }), "{e}");
    }

    #[test]
    fn small_chunks_after_a_small_one_come_in_one_read() {
        for kind in [FrameType::Contiguous, FrameType::Sparse] {
            let (mut f, io) = empty(kind);
            let items: Vec<Vec<u8>> = (0..4).map(|k| noisy_items(k, 16 * 1024)).collect();
            let chunks: Vec<Vec<u8>> = items
                .iter()
                .map(|it| compress_vec(&cparams(4096), it).unwrap())
                .collect();
            for c in &chunks {
                assert!(c.len() <= LAZY_MIN);
                append(&mut f, c);
            }
            let (rec, log) = Recording::new(io.clone());
            let f = Frame::open(Box::new(rec), false, SyncPolicy::None, Context::global()).unwrap();
            for (n, chunk) in chunks.iter().enumerate() {
                *log.lock().unwrap() = Default::default();
                let mut image = Vec::new();
                let moved = f.lazy_chunk(n, &[1], &mut image).unwrap();
                assert_eq!(&image, chunk, "{kind:?} chunk {n} comes whole");
                let log = log.lock().unwrap();
                // A sparse frame's chunk file is read whole at once; in a contiguous frame
                // the first chunk's header says how long it is, and the chunks after it
                // come in one read of a quarter more than it.
                let batches = if n == 0 && kind == FrameType::Contiguous {
                    vec![1, 1]
                } else {
                    vec![1]
                };
                assert_eq!(log.batches, batches, "{kind:?} chunk {n}");
                assert_eq!(moved.bytes, log.read);
                assert!(
                    log.read as usize <= chunk.len() * 5 / 4 + 4,
                    "{kind:?} chunk {n}"
                );
            }
        }
    }

    #[test]
    fn small_and_special_chunks_come_whole() {
        let (mut f, io) = empty(FrameType::Contiguous);
        let small = ramp(0, 1000);
        append(&mut f, &small);
        let mut image = vec![0xee; 3];
        f.lazy_chunk(0, &[0], &mut image).unwrap();
        assert_eq!(image, small);
        let mut out = [0u8; 8];
        let one = DParams::default().with_nthreads(1);
        f.read_range(&one, 0, 400..408, &mut out).unwrap();
        assert_eq!(out, [100, 0, 0, 0, 101, 0, 0, 0]);
        let e = f.read_range(&one, 0, 3999..4001, &mut out).unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidRange {
                    start: 3999,
                    end: 4001,
                    len: 4000,
                    ..
                }
            ),
            "{e}"
        );
        drop(f);
        let h = FrameHeader::parse(&io.snapshot().frame).unwrap();
        assert_eq!(h.cbytes, small.len() as i64);
    }
}
