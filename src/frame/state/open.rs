//! Opening a frame: the fixed header, then the whole header, the trailer and the offsets
//! index, each checked against the store's length and against each other before anything is
//! sized from it; and the bytes of a new, empty frame.

use super::{frame_parts, Frame};
use crate::chunk::{Context, DParams};
use crate::error::{Error, Expected, Result};
use crate::format::chunk::{ChunkHeader, EXTENDED_HEADER_LENGTH};
use crate::format::frame::{
    decode_offset, ChunkLoc, FrameHeader, FrameType, Trailer, HEADER_MINLEN, TRAILER_MINLEN,
};
use crate::frame::io::{FrameIo, Obj, ReadReq};
use crate::frame::SyncPolicy;
use std::sync::atomic::AtomicUsize;

impl Frame {
    /// The bytes of a new, empty frame with `header` (its `frame_len` and `header_len` are
    /// set) and `trailer`.
    pub fn initial_bytes(header: &mut FrameHeader, trailer: &Trailer) -> Vec<u8> {
        let t = trailer.to_bytes();
        header.nbytes = 0;
        header.cbytes = 0;
        header.has_vlmetalayers = !trailer.vlmetalayers.is_empty();
        frame_parts(header, 0, &[], &t);
        let mut out = header.to_bytes();
        out.extend_from_slice(&t);
        out
    }

    /// Opens the frame in `io`, its chunks to be handled on `ctx`.
    pub fn open(
        io: Box<dyn FrameIo>,
        writable: bool,
        sync: SyncPolicy,
        ctx: Context,
    ) -> Result<Frame> {
        let path = io.path(Obj::Frame);
        Self::open_inner(io, writable, sync, ctx).map_err(|e| e.in_frame(&path))
    }

    fn open_inner(
        io: Box<dyn FrameIo>,
        writable: bool,
        sync: SyncPolicy,
        ctx: Context,
    ) -> Result<Frame> {
        let kind = io.frame_type();
        let file_len = io.len(Obj::Frame)?;
        let mut fixed = vec![0u8; HEADER_MINLEN.min(file_len as usize)];
        io.read_at(Obj::Frame, 0, &mut fixed)?;
        let fixed_h = FrameHeader::parse_fixed(&fixed)?;
        if fixed_h.frame_type != kind as u8 {
            return Err(Error::FrameType {
                path: io.path(Obj::Frame),
                expected: kind.name(),
                found: fixed_h.frame_type,
            });
        }
        let frame_len = fixed_h.frame_len;
        if frame_len > file_len {
            return Err(Error::header(
                "frame_len (at most the bytes stored)",
                frame_len,
                Expected::at_most(file_len),
            ));
        }
        if frame_len < (HEADER_MINLEN + TRAILER_MINLEN) as u64 {
            return Err(Error::header(
                "frame_len",
                frame_len,
                Expected::AtLeast((HEADER_MINLEN + TRAILER_MINLEN) as i64),
            ));
        }
        let win = Window::read(&*io, fixed, &fixed_h, kind)?;
        let mut hbytes = crate::alloc::zeroed(fixed_h.header_len)?;
        win.read_at(0, &mut hbytes)?;
        let header = FrameHeader::parse(&hbytes)?;
        let mut tail = [0u8; TRAILER_MINLEN];
        win.read_at(frame_len - TRAILER_MINLEN as u64, &mut tail)?;
        let trailer_len = Trailer::len_from_tail(&tail, frame_len)? as u64;
        let trailer_pos = frame_len - trailer_len;
        let hl = header.header_len as u64;
        if trailer_pos < hl {
            return Err(Error::header(
                "trailer position (after the header)",
                trailer_pos,
                Expected::at_least(hl),
            ));
        }
        let nchunks = Self::header_nchunks(&header, &win, kind, trailer_pos)?;
        if nchunks == 0 && trailer_pos != hl {
            return Err(Error::header(
                "trailer position of an empty frame (right after the header)",
                trailer_pos,
                Expected::exactly(hl),
            ));
        }
        let mut trailer_bytes = crate::alloc::zeroed(trailer_len as usize)?;
        win.read_at(trailer_pos, &mut trailer_bytes)?;
        let trailer = Trailer::parse(&trailer_bytes)?;
        let (offsets, offsets_chunk) = if nchunks > 0 {
            let off_pos = Self::offsets_pos_of(&header, kind);
            Self::read_offsets(&ctx, &win, &header, kind, off_pos, trailer_pos, nchunks)?
        } else {
            (Vec::new(), Vec::new())
        };
        drop(win);
        let nblocks_hint = Self::nblocks_of(&header);
        Ok(Frame {
            io,
            kind,
            writable,
            sync,
            header,
            trailer,
            trailer_bytes,
            offsets,
            offsets_chunk,
            poisoned: false,
            dirty: Vec::new(),
            nblocks_hint: AtomicUsize::new(nblocks_hint),
            small_chunk_hint: AtomicUsize::new(0),
            ctx,
        })
    }

    fn offsets_pos_of(header: &FrameHeader, kind: FrameType) -> u64 {
        match kind {
            FrameType::Contiguous => header.header_len as u64 + header.cbytes as u64,
            FrameType::Sparse => header.header_len as u64,
        }
    }

    /// The number of chunks the header implies (reading the offsets chunk's header for
    /// variable-chunk frames).
    fn header_nchunks(
        h: &FrameHeader,
        io: &Window<'_>,
        kind: FrameType,
        trailer_pos: u64,
    ) -> Result<usize> {
        let n = h.announced_nchunks(|| {
            let pos = Self::offsets_pos_of(h, kind);
            if pos + EXTENDED_HEADER_LENGTH as u64 > trailer_pos {
                return Err(Error::Malformed {
                    what: "no room for the offsets chunk before the trailer",
                });
            }
            let mut b = [0u8; 4];
            io.read_at(pos + 4, &mut b)?;
            Ok(i32::from_le_bytes(b))
        })?;
        usize::try_from(n).map_err(|_| Error::header("chunks", n, Expected::at_most(usize::MAX)))
    }

    fn read_offsets(
        ctx: &Context,
        io: &Window<'_>,
        h: &FrameHeader,
        kind: FrameType,
        pos: u64,
        trailer_pos: u64,
        nchunks: usize,
    ) -> Result<(Vec<i64>, Vec<u8>)> {
        if pos + EXTENDED_HEADER_LENGTH as u64 > trailer_pos {
            return Err(Error::header(
                "offsets chunk header end (before the trailer)",
                pos + EXTENDED_HEADER_LENGTH as u64,
                Expected::at_most(trailer_pos),
            ));
        }
        let mut head = [0u8; EXTENDED_HEADER_LENGTH];
        io.read_at(pos, &mut head)?;
        let cb = i32::from_le_bytes([head[12], head[13], head[14], head[15]]);
        let cb = u64::try_from(cb)
            .ok()
            .filter(|&c| c >= EXTENDED_HEADER_LENGTH as u64 && pos + c <= trailer_pos)
            .ok_or_else(|| {
                Error::header(
                    "offsets chunk cbytes (from its start to the trailer)",
                    cb,
                    Expected::range(EXTENDED_HEADER_LENGTH, trailer_pos - pos),
                )
            })?;
        let mut chunk = crate::alloc::zeroed(cb as usize)?;
        io.read_at(pos, &mut chunk)?;
        let ch = ChunkHeader::parse(&chunk)?;
        if ch.nbytes != nchunks * 8 {
            return Err(Error::header(
                "offsets chunk nbytes (8 per chunk)",
                ch.nbytes,
                Expected::exactly(nchunks * 8),
            ));
        }
        let raw = crate::chunk::decompress_vec_ctx(ctx, &DParams::default(), &chunk)?;
        let offsets: Vec<i64> = raw
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            .collect();
        for (i, &v) in offsets.iter().enumerate() {
            match decode_offset(v)? {
                ChunkLoc::Stored(o)
                    if kind == FrameType::Contiguous
                        && o + EXTENDED_HEADER_LENGTH as u64 > h.cbytes as u64 =>
                {
                    let inside = Expected::AtMost(h.cbytes - EXTENDED_HEADER_LENGTH as i64);
                    let what = "offset (a chunk header inside the data section)";
                    return Err(Error::at("chunk", i, Error::header(what, o, inside)));
                }
                ChunkLoc::Special(_) if h.chunksize == 0 => {
                    let what = "special in a variable-chunksize frame";
                    return Err(Error::at("chunk", i, Error::Malformed { what }));
                }
                _ => {}
            }
        }
        Ok((offsets, chunk))
    }
}

/// The tail of a frame read at open in one go when it is at most this long.
const OPEN_TAIL_MAX: u64 = 16 << 20;

/// The bytes an open reads, gathered in one batch: the whole header (its fixed part already
/// read) and the frame's tail from where the offsets chunk should start (the header's
/// `cbytes` past the header in a contiguous frame, right after the header in a sparse
/// frame's index) to `frame_len`. Reads outside them go to the store, so a frame whose
/// fields disagree is still checked step by step.
struct Window<'a> {
    io: &'a dyn FrameIo,
    /// `(position, bytes)` of the parts held.
    parts: Vec<(u64, Vec<u8>)>,
}

impl<'a> Window<'a> {
    /// Reads the rest of the header of `h` (whose first bytes are `fixed`) and the tail of the
    /// frame, both bounded by `frame_len` (checked against the store's length by the caller).
    fn read(io: &'a dyn FrameIo, fixed: Vec<u8>, h: &FrameHeader, kind: FrameType) -> Result<Self> {
        let hl = h.header_len as u64;
        let end = h.frame_len;
        let tail_start = Frame::offsets_pos_of(h, kind)
            .max(hl)
            .min(end - TRAILER_MINLEN as u64)
            .max(end.saturating_sub(OPEN_TAIL_MAX));
        let at = fixed.len() as u64;
        let mut head = crate::alloc::zeroed((hl - at) as usize)?;
        let mut tail = crate::alloc::zeroed((end - tail_start) as usize)?;
        io.read_many(&mut [
            ReadReq {
                obj: Obj::Frame,
                pos: at,
                buf: &mut head,
            },
            ReadReq {
                obj: Obj::Frame,
                pos: tail_start,
                buf: &mut tail,
            },
        ])?;
        let mut header = fixed;
        header.extend_from_slice(&head);
        Ok(Window {
            io,
            parts: vec![(0, header), (tail_start, tail)],
        })
    }

    /// Fills `buf` with the frame's bytes at `pos`, from the parts held when they cover it.
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<()> {
        for (start, bytes) in &self.parts {
            let held = *start..*start + bytes.len() as u64;
            if pos >= held.start && pos + buf.len() as u64 <= held.end {
                let from = (pos - held.start) as usize;
                buf.copy_from_slice(&bytes[from..from + buf.len()]);
                return Ok(());
            }
        }
        self.io.read_at(Obj::Frame, pos, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{append, empty, ramp};
    use super::*;
    use crate::format::frame::Metalayer;
    use crate::frame::io::{MemIo, MemStore};

    fn open_bytes(bytes: Vec<u8>, kind: FrameType) -> Result<Frame> {
        let io = MemIo::new(
            MemStore {
                frame: bytes,
                chunks: Default::default(),
            },
            kind,
        );
        Frame::open(Box::new(io), false, SyncPolicy::None, Context::global())
    }

    /// `bytes` with its header rewritten by `f` (the header keeps its length).
    fn patch_header(bytes: &mut [u8], f: impl FnOnce(&mut FrameHeader)) {
        let mut h = FrameHeader::parse(bytes).unwrap();
        f(&mut h);
        let hb = h.to_bytes();
        bytes[..hb.len()].copy_from_slice(&hb);
    }

    #[test]
    fn a_new_frame_opens_empty() {
        let mut header = FrameHeader::new(8);
        header.metalayers.push(Metalayer {
            name: "b2nd".into(),
            content: vec![0x90],
        });
        let trailer = Trailer {
            vlmetalayers: vec![Metalayer {
                name: "v".into(),
                content: ramp(0, 10),
            }],
            ..Trailer::default()
        };
        let bytes = Frame::initial_bytes(&mut header, &trailer);
        assert_eq!(header.frame_len, bytes.len() as u64);
        assert_eq!(header.header_len, header.encoded_len());
        assert!(header.has_vlmetalayers);
        let f = open_bytes(bytes, FrameType::Contiguous).unwrap();
        assert_eq!(
            (f.nchunks(), f.header().nbytes, f.header().typesize),
            (0, 0, 8)
        );
        assert_eq!(f.header().metalayers, header.metalayers);
        assert_eq!(f.vlmetalayers(), &trailer.vlmetalayers[..]);
    }

    /// The error inside an [`Error::Frame`].
    fn bad_frame(e: Error) -> Error {
        match e {
            Error::Frame { source, .. } => *source,
            other => panic!("not a frame error: {other}"),
        }
    }

    #[test]
    fn lengths_are_checked_before_anything_is_read_from_them() {
        let mut header = FrameHeader::new(4);
        let bytes = Frame::initial_bytes(&mut header, &Trailer::default());
        // The store ends before the frame does.
        let short = bytes[..bytes.len() - 1].to_vec();
        let e = open_bytes(short, FrameType::Contiguous).unwrap_err();
        let len = bytes.len() as i64;
        assert_eq!(
            bad_frame(e),
            Error::header(
                "frame_len (at most the bytes stored)",
                len,
                Expected::AtMost(len - 1)
            )
        );
        // A frame_len too small for a header and a trailer (but not below the header).
        let mut tiny = bytes.clone();
        patch_header(&mut tiny, |h| h.frame_len = h.header_len as u64);
        let e = open_bytes(tiny, FrameType::Contiguous).unwrap_err();
        assert_eq!(
            bad_frame(e),
            Error::header(
                "frame_len",
                header.header_len,
                Expected::AtLeast((HEADER_MINLEN + TRAILER_MINLEN) as i64)
            )
        );
        // An empty frame with bytes between its header and its trailer.
        let hl = header.header_len;
        let mut gap = bytes[..hl].to_vec();
        gap.extend_from_slice(&[0; 8]);
        gap.extend_from_slice(&bytes[hl..]);
        patch_header(&mut gap, |h| h.frame_len += 8);
        let e = open_bytes(gap, FrameType::Contiguous).unwrap_err();
        assert_eq!(
            bad_frame(e),
            Error::header(
                "trailer position of an empty frame (right after the header)",
                hl + 8,
                Expected::exactly(hl)
            )
        );
        // A contiguous frame where the store holds a sparse one.
        let e = open_bytes(bytes, FrameType::Sparse).unwrap_err();
        assert!(matches!(e, Error::FrameType { found: 0, .. }), "{e}");
    }

    #[test]
    fn an_open_reads_the_fixed_header_then_one_batch() {
        use super::super::testkit::Recording;
        for kind in [FrameType::Contiguous, FrameType::Sparse] {
            let (mut f, io) = empty(kind);
            for k in 0..3 {
                append(&mut f, &ramp(k * 1000, 1000));
            }
            f.set_vlmetalayers(vec![Metalayer {
                name: "v".into(),
                content: vec![7; 300],
            }])
            .unwrap();
            drop(f);
            let (rec, log) = Recording::new(io.clone());
            let f = Frame::open(Box::new(rec), false, SyncPolicy::None, Context::global()).unwrap();
            assert_eq!(f.nchunks(), 3);
            assert_eq!(f.vlmetalayers()[0].content, [7; 300]);
            let log = log.lock().unwrap();
            assert_eq!((log.singles, &log.batches[..]), (1, &[2][..]), "{kind:?}");
            // The header, the offsets chunk and the trailer, each byte once.
            let h = f.header();
            let tail = h.frame_len - Frame::offsets_pos_of(h, kind);
            assert_eq!(log.read, h.header_len as u64 + tail, "{kind:?}");
        }
    }

    #[test]
    fn the_index_must_hold_the_chunks_the_header_implies() {
        let (mut f, io) = empty(FrameType::Contiguous);
        append(&mut f, &ramp(0, 1000));
        append(&mut f, &ramp(1000, 1000));
        let bytes = io.snapshot().frame;
        let f = open_bytes(bytes.clone(), FrameType::Contiguous).unwrap();
        assert_eq!((f.nchunks(), f.header().chunksize), (2, 4000));
        // nbytes for three chunks: the offsets index holds two.
        let mut more = bytes.clone();
        patch_header(&mut more, |h| h.nbytes = 12000);
        let e = open_bytes(more, FrameType::Contiguous).unwrap_err();
        assert_eq!(
            bad_frame(e),
            Error::header(
                "offsets chunk nbytes (8 per chunk)",
                16,
                Expected::Exactly(24)
            )
        );
        // A data section too short for the chunks the index points at: the offsets chunk
        // is then read from where the shorter section ends.
        let mut cut = bytes;
        patch_header(&mut cut, |h| h.cbytes -= 8);
        assert!(open_bytes(cut, FrameType::Contiguous).is_err());
    }
}
