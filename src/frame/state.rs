//! An open frame: its header, trailer and offsets index held in memory, chunks read on
//! demand through a [`FrameIo`], and every change committed by the protocol of the module
//! docs ([`super`]).

use super::io::{FrameIo, Obj};
use super::SyncPolicy;
use crate::chunk::{special_chunk, CParams, Context, Decoder, SplitMode};
use crate::error::{Error, Result};
use crate::format::chunk::{
    filter_id, ChunkHeader, SpecialType, EXTENDED_HEADER_LENGTH, MAX_BUFFERSIZE,
};
use crate::format::frame::{
    decode_offset, encode_special, ChunkLoc, FrameHeader, FrameType, Metalayer, Trailer,
    HEADER_MINLEN, TRAILER_MINLEN,
};
use std::ops::Range;

/// Chunks up to this many bytes are read whole even for a partial read.
const LAZY_MIN: usize = 64 * 1024;
/// Buffer size of in-file copies, in bytes.
const COPY_BUF: u64 = 8 << 20;

/// The parameters C-Blosc2 compresses the offsets index with on append, insert, update and
/// delete: BloscLZ clevel 5, shuffle, typesize 8, 16 KiB blocks, never split.
fn offsets_cparams() -> CParams {
    CParams {
        codec: 0,
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
fn encode_offsets(offsets: &[i64], room: usize) -> Result<Vec<u8>> {
    if offsets.is_empty() {
        return Ok(Vec::new());
    }
    let raw: Vec<u8> = offsets.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut out = vec![0u8; crate::chunk::max_compressed_len(raw.len() + 8 * room)];
    let n = crate::chunk::compress(&offsets_cparams(), &raw, &mut out)?;
    out.truncate(n);
    Ok(out)
}

/// Makes `buf` `len` bytes long for bytes about to be read over it: the bytes it already
/// holds are kept rather than zeroed again (a reused buffer costs no fill).
fn set_len(buf: &mut Vec<u8>, len: usize) -> Result<()> {
    if len > buf.len() {
        buf.try_reserve_exact(len - buf.len())
            .map_err(|_| Error::MemoryAlloc(len))?;
    }
    buf.resize(len, 0);
    Ok(())
}

/// A chunk handed to a mutation, checked.
pub(crate) struct NewChunk<'a> {
    /// The chunk bytes (exactly `cbytes`).
    pub bytes: &'a [u8],
    /// Its uncompressed size in bytes.
    pub nbytes: usize,
    /// `Some` for zeros, NaN and uninit chunks, which are stored as index entries only.
    pub special: Option<SpecialType>,
}

impl<'a> NewChunk<'a> {
    /// Parses and checks `chunk`.
    pub fn parse(chunk: &'a [u8]) -> Result<Self> {
        let h = ChunkHeader::parse(chunk)?;
        if h.nbytes == 0 {
            return Err(Error::InvalidParam(
                "a frame cannot hold an empty chunk (nbytes 0)".into(),
            ));
        }
        if h.header_len != EXTENDED_HEADER_LENGTH {
            return Err(Error::InvalidParam(
                "frames hold Blosc2 chunks with a 32-byte header, not Blosc1 chunks".into(),
            ));
        }
        Decoder::new(crate::registry::Registry::global(), chunk)?;
        let special = match h.special {
            SpecialType::Zero | SpecialType::Nan | SpecialType::Uninit => Some(h.special),
            _ => None,
        };
        Ok(NewChunk {
            bytes: &chunk[..h.cbytes],
            nbytes: h.nbytes,
            special,
        })
    }

    fn stored_len(&self) -> u64 {
        if self.special.is_some() {
            0
        } else {
            self.bytes.len() as u64
        }
    }
}

/// Bytes laid down at the rewrite position of a contiguous frame.
enum Piece<'a> {
    /// New bytes.
    New(&'a [u8]),
    /// Bytes of the current frame at `pos` (≥ the rewrite position), `len` long.
    Old { pos: u64, len: u64 },
}

/// A change of a contiguous frame: the new state, whose bytes before `p` are unchanged.
struct Plan<'a> {
    /// Absolute position from which the data section changes.
    p: u64,
    pieces: Vec<Piece<'a>>,
    /// The new index; `None` keeps the stored offsets chunk as it is.
    offsets: Option<Vec<i64>>,
    /// Extra entries of room when compressing the index (1 for delete, as C-Blosc2).
    room: usize,
    header: FrameHeader,
    trailer: Trailer,
}

/// An open frame.
pub(crate) struct Frame {
    io: Box<dyn FrameIo>,
    kind: FrameType,
    writable: bool,
    sync: SyncPolicy,
    header: FrameHeader,
    trailer: Trailer,
    trailer_bytes: Vec<u8>,
    offsets: Vec<i64>,
    offsets_chunk: Vec<u8>,
    /// Set when a write failed: the in-memory state may no longer match the store.
    poisoned: bool,
    /// Objects written since the last sync.
    dirty: Vec<Obj>,
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame")
            .field("path", &self.path())
            .field("header", &self.header)
            .field("nchunks", &self.offsets.len())
            .finish_non_exhaustive()
    }
}

/// The bytes of a whole frame: header, data pieces, offsets chunk, trailer; sets
/// `header.header_len` and `header.frame_len`.
fn frame_parts(header: &mut FrameHeader, data_len: u64, offsets: &[u8], trailer: &[u8]) {
    header.header_len = header.encoded_len();
    header.frame_len =
        header.header_len as u64 + data_len + offsets.len() as u64 + trailer.len() as u64;
}

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

    /// Opens the frame in `io`.
    pub fn open(io: Box<dyn FrameIo>, writable: bool, sync: SyncPolicy) -> Result<Frame> {
        let path = io.path(Obj::Frame);
        Self::open_inner(io, writable, sync).map_err(|e| e.in_frame(&path))
    }

    fn open_inner(io: Box<dyn FrameIo>, writable: bool, sync: SyncPolicy) -> Result<Frame> {
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
            return Err(Error::header(format!(
                "frame_len {frame_len} exceeds the {file_len} bytes stored"
            )));
        }
        if frame_len < (HEADER_MINLEN + TRAILER_MINLEN) as u64 {
            return Err(Error::header(format!("frame_len {frame_len} is too small")));
        }
        let mut hbytes = vec![0u8; fixed_h.header_len];
        io.read_at(Obj::Frame, 0, &mut hbytes)?;
        let header = FrameHeader::parse(&hbytes)?;
        let mut tail = [0u8; TRAILER_MINLEN];
        io.read_at(Obj::Frame, frame_len - TRAILER_MINLEN as u64, &mut tail)?;
        let trailer_len = Trailer::len_from_tail(&tail, frame_len)? as u64;
        let trailer_pos = frame_len - trailer_len;
        let hl = header.header_len as u64;
        if trailer_pos < hl {
            return Err(Error::header(format!(
                "trailer at byte {trailer_pos} overlaps the {hl}-byte header"
            )));
        }
        let nchunks = Self::header_nchunks(&header, &*io, kind, trailer_pos)?;
        if nchunks == 0 && trailer_pos != hl {
            return Err(Error::header(format!(
                "an empty frame must have its trailer right after the header (byte {hl}), \
                 not at byte {trailer_pos}"
            )));
        }
        let mut trailer_bytes = vec![0u8; trailer_len as usize];
        io.read_at(Obj::Frame, trailer_pos, &mut trailer_bytes)?;
        let trailer = Trailer::parse(&trailer_bytes)?;
        let (offsets, offsets_chunk) = if nchunks > 0 {
            let off_pos = Self::offsets_pos_of(&header, kind);
            Self::read_offsets(&*io, &header, kind, off_pos, trailer_pos, nchunks)?
        } else {
            (Vec::new(), Vec::new())
        };
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
        io: &dyn FrameIo,
        kind: FrameType,
        trailer_pos: u64,
    ) -> Result<usize> {
        let n = h.announced_nchunks(|| {
            let pos = Self::offsets_pos_of(h, kind);
            if pos + EXTENDED_HEADER_LENGTH as u64 > trailer_pos {
                return Err(Error::header("no room for the offsets chunk"));
            }
            let mut b = [0u8; 4];
            io.read_at(Obj::Frame, pos + 4, &mut b)?;
            Ok(i32::from_le_bytes(b))
        })?;
        usize::try_from(n).map_err(|_| Error::header(format!("{n} chunks")))
    }

    fn read_offsets(
        io: &dyn FrameIo,
        h: &FrameHeader,
        kind: FrameType,
        pos: u64,
        trailer_pos: u64,
        nchunks: usize,
    ) -> Result<(Vec<i64>, Vec<u8>)> {
        if pos + EXTENDED_HEADER_LENGTH as u64 > trailer_pos {
            return Err(Error::header(format!(
                "offsets chunk at byte {pos} does not fit before the trailer at byte {trailer_pos}"
            )));
        }
        let mut head = [0u8; EXTENDED_HEADER_LENGTH];
        io.read_at(Obj::Frame, pos, &mut head)?;
        let cb = i32::from_le_bytes([head[12], head[13], head[14], head[15]]);
        let cb = u64::try_from(cb)
            .ok()
            .filter(|&c| c >= EXTENDED_HEADER_LENGTH as u64 && pos + c <= trailer_pos)
            .ok_or_else(|| {
                Error::header(format!(
                    "offsets chunk of {cb} bytes at byte {pos} does not fit before the trailer \
                     at byte {trailer_pos}"
                ))
            })?;
        let mut chunk = vec![0u8; cb as usize];
        io.read_at(Obj::Frame, pos, &mut chunk)?;
        let ch = ChunkHeader::parse(&chunk)?;
        if ch.nbytes != nchunks * 8 {
            return Err(Error::header(format!(
                "offsets chunk holds {} bytes, {nchunks} chunks need {}",
                ch.nbytes,
                nchunks * 8
            )));
        }
        let raw = crate::chunk::decompress_vec(&chunk)?;
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
                    return Err(Error::header(format!(
                        "chunk {i} at offset {o} lies outside the {}-byte data section",
                        h.cbytes
                    )));
                }
                ChunkLoc::Special(_) if h.chunksize == 0 => {
                    return Err(Error::header(format!(
                        "chunk {i} is special in a variable-chunksize frame"
                    )))
                }
                _ => {}
            }
        }
        Ok((offsets, chunk))
    }

    /// The path of the frame (or index) for messages.
    pub fn path(&self) -> String {
        self.io.path(Obj::Frame)
    }

    /// The committed header.
    pub fn header(&self) -> &FrameHeader {
        &self.header
    }

    /// Sets the informational thread counts that the next commit writes into the header.
    pub fn set_header_nthreads(&mut self, compress: i16, decompress: i16) {
        self.header.nthreads_c = compress;
        self.header.nthreads_d = decompress;
    }

    /// The vlmetalayers.
    pub fn vlmetalayers(&self) -> &[Metalayer] {
        &self.trailer.vlmetalayers
    }

    /// Number of chunks.
    pub fn nchunks(&self) -> usize {
        self.offsets.len()
    }

    /// The frame layout.
    pub fn kind(&self) -> FrameType {
        self.kind
    }

    /// The store.
    pub fn io(&self) -> &dyn FrameIo {
        &*self.io
    }

    /// Length of the frame (the index file for sparse frames), in bytes.
    pub fn frame_len(&self) -> u64 {
        self.header.frame_len
    }

    /// Where chunk `n` is.
    pub fn chunk_loc(&self, n: usize) -> Result<ChunkLoc> {
        let v = *self.offsets.get(n).ok_or_else(|| {
            Error::InvalidIndex(format!("chunk {n} of {} chunks", self.offsets.len()))
        })?;
        decode_offset(v).map_err(|e| e.in_frame(&self.path()))
    }

    /// The uncompressed size of chunk `n` as the header implies it (fixed chunksize).
    fn fixed_nbytes(&self, n: usize) -> Option<usize> {
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
            return Err(Error::InvalidIndex(format!(
                "chunk {n} of {} chunks",
                self.nchunks()
            )));
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
    fn stored_at(&self, off: u64) -> Result<(Obj, u64, u64)> {
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
    fn stored_header(&self, obj: Obj, pos: u64, room: u64) -> Result<([u8; 32], usize)> {
        let path = self.io.path(obj);
        if room < EXTENDED_HEADER_LENGTH as u64 {
            return Err(Error::Frame {
                path,
                what: format!("chunk at byte {pos} has no room for its header"),
            });
        }
        let mut h = [0u8; EXTENDED_HEADER_LENGTH];
        self.io.read_at(obj, pos, &mut h)?;
        let cb = i32::from_le_bytes([h[12], h[13], h[14], h[15]]);
        let cb = usize::try_from(cb)
            .ok()
            .filter(|&c| c >= EXTENDED_HEADER_LENGTH && c as u64 <= room)
            .ok_or_else(|| Error::Frame {
                path,
                what: format!("chunk at byte {pos} claims {cb} bytes, {room} are available to it"),
            })?;
        Ok((h, cb))
    }

    /// Stored chunk `n` at offset `off`: its object, position, 32-byte header and cbytes.
    /// In a fixed-chunksize frame the chunk must hold the bytes the frame gives it (the
    /// chunksize, less for the last chunk): a chunk whose header says otherwise is corrupt,
    /// and is refused before anything is sized from its header.
    fn stored_chunk(&self, n: usize, off: u64) -> Result<(Obj, u64, [u8; 32], usize)> {
        let (obj, pos, room) = self.stored_at(off)?;
        let (h32, cb) = self.stored_header(obj, pos, room)?;
        if let Some(want) = self.fixed_nbytes(n) {
            let nb = i32::from_le_bytes([h32[4], h32[5], h32[6], h32[7]]);
            if usize::try_from(nb).ok() != Some(want) {
                return Err(Error::Frame {
                    path: self.io.path(obj),
                    what: format!(
                        "chunk {n} holds {nb} bytes, the frame's chunksize gives it {want}"
                    ),
                });
            }
        }
        Ok((obj, pos, h32, cb))
    }

    /// The header of chunk `n` (32 bytes read for a stored chunk); `cbytes` is the stored
    /// size (32 for a special chunk rebuilt).
    pub fn chunk_header(&self, n: usize) -> Result<ChunkHeader> {
        match self.chunk_loc(n)? {
            ChunkLoc::Special(_) => ChunkHeader::parse(&self.read_chunk(n)?),
            ChunkLoc::Stored(off) => {
                let (obj, _, h32, cb) = self.stored_chunk(n, off)?;
                let mut probe = h32;
                probe[12..16].copy_from_slice(&(EXTENDED_HEADER_LENGTH as i32).to_le_bytes());
                let mut h =
                    ChunkHeader::parse(&probe).map_err(|e| e.in_frame(&self.io.path(obj)))?;
                h.cbytes = cb;
                Ok(h)
            }
        }
    }

    /// The compressed chunk `n` (a special chunk is rebuilt as a 32-byte chunk).
    pub fn read_chunk(&self, n: usize) -> Result<Vec<u8>> {
        match self.chunk_loc(n)? {
            ChunkLoc::Special(kind) => {
                let nb = self
                    .fixed_nbytes(n)
                    .ok_or_else(|| Error::header("special chunk in a variable-chunksize frame"))?;
                special_chunk(&self.special_cparams(), kind, nb, None)
                    .map_err(|e| Error::header(e).in_frame(&self.path()))
            }
            ChunkLoc::Stored(off) => {
                let (obj, pos, _, cb) = self.stored_chunk(n, off)?;
                let mut out = vec![0u8; cb];
                self.io.read_at(obj, pos, &mut out)?;
                Ok(out)
            }
        }
    }

    /// Decompresses bytes `range` of chunk `n` into `dst`, reading from the store only the
    /// chunk header, its `bstarts` and the blocks that hold the range (whole chunks when
    /// they are small, special, memcpyed, VL-block or use a dictionary).
    pub fn read_range(
        &self,
        ctx: &Context<'_>,
        nthreads: usize,
        n: usize,
        range: Range<usize>,
        dst: &mut [u8],
    ) -> Result<usize> {
        let (obj, pos, h32, cb) = match self.chunk_loc(n)? {
            ChunkLoc::Special(_) => {
                let c = self.read_chunk(n)?;
                return Decoder::new(ctx.registry, &c)?.decompress_range_on(
                    &ctx.runtime,
                    nthreads,
                    range,
                    dst,
                );
            }
            ChunkLoc::Stored(off) => self.stored_chunk(n, off)?,
        };
        let path = self.io.path(obj);
        let mut probe = h32;
        probe[12..16].copy_from_slice(&(EXTENDED_HEADER_LENGTH as i32).to_le_bytes());
        let hdr = ChunkHeader::parse(&probe).map_err(|e| e.in_frame(&path))?;
        if hdr.memcpyed() && hdr.special == SpecialType::None {
            if range.start > range.end || range.end > hdr.nbytes {
                return Err(Error::InvalidIndex(format!(
                    "bytes {}..{} are not inside the chunk's {} bytes",
                    range.start, range.end, hdr.nbytes
                )));
            }
            let len = range.len();
            if dst.len() < len {
                return Err(Error::DestinationTooSmall {
                    needed: len,
                    available: dst.len(),
                });
            }
            // The data follows the header, 16 bytes long in Blosc1-layout chunks.
            if hdr.header_len + hdr.nbytes > cb {
                return Err(Error::Frame {
                    path,
                    what: "memcpyed chunk shorter than its nbytes".into(),
                });
            }
            self.io.read_at(
                obj,
                pos + (hdr.header_len + range.start) as u64,
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
        self.stored_image(obj, pos, cb, &h32, &hdr, &needed, &mut image)?;
        Decoder::new(ctx.registry, &image)
            .map_err(|e| e.in_frame(&path))?
            .decompress_range_on(&ctx.runtime, nthreads, range, dst)
            .map_err(|e| e.in_frame(&path))
    }

    /// Chunk `n` as a lazy chunk, built in `out` (its capacity reused): an image holding its
    /// header, its `bstarts` and the bytes of blocks `nblocks` only (plus block 0 when the
    /// chunk uses delta), the other blocks' `bstarts` pointing at bytes that must not be read
    /// (see [`Frame::partial_image`]). Chunks that are special, small, memcpyed, VL-block or
    /// use a dictionary come whole.
    pub fn lazy_chunk(&self, n: usize, nblocks: &[usize], out: &mut Vec<u8>) -> Result<()> {
        let (obj, pos, h32, cb) = match self.chunk_loc(n)? {
            ChunkLoc::Special(_) => {
                *out = self.read_chunk(n)?;
                return Ok(());
            }
            ChunkLoc::Stored(off) => self.stored_chunk(n, off)?,
        };
        let mut probe = h32;
        probe[12..16].copy_from_slice(&(EXTENDED_HEADER_LENGTH as i32).to_le_bytes());
        let hdr = ChunkHeader::parse(&probe).map_err(|e| e.in_frame(&self.io.path(obj)))?;
        self.stored_image(obj, pos, cb, &h32, &hdr, nblocks, out)
    }

    /// The image of the stored chunk at `pos` (`cb` bytes, header `h32` parsed as `hdr`) for
    /// reading blocks `nblocks`, in `out`: compact when that saves reading, whole otherwise.
    #[allow(clippy::too_many_arguments)]
    fn stored_image(
        &self,
        obj: Obj,
        pos: u64,
        cb: usize,
        h32: &[u8; 32],
        hdr: &ChunkHeader,
        nblocks: &[usize],
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let regular = hdr.special == SpecialType::None
            && !hdr.memcpyed()
            && !hdr.vl_blocks()
            && !hdr.use_dict()
            && hdr.nbytes > 0;
        if !regular || cb <= LAZY_MIN {
            set_len(out, cb)?;
            return self.io.read_at(obj, pos, out);
        }
        self.partial_image(obj, pos, cb, h32, hdr, nblocks, out)
            .map_err(|e| e.in_frame(&self.io.path(obj)))
    }

    /// A compact image of a regular chunk holding only blocks `nblocks` (and block 0 when the
    /// chunk uses delta): the header (cbytes patched), `bstarts` pointing into the image
    /// (other blocks point at the first block byte and are never read), then the blocks'
    /// bytes. A block's bytes run from its `bstart` to the next larger one (or the chunk end),
    /// as C-Blosc2's lazy chunks size them; blocks stored back to back are read at once. The
    /// image is built in `image`, whose capacity is reused.
    #[allow(clippy::too_many_arguments)]
    fn partial_image(
        &self,
        obj: Obj,
        pos: u64,
        cb: usize,
        h32: &[u8; 32],
        hdr: &ChunkHeader,
        nblocks: &[usize],
        image: &mut Vec<u8>,
    ) -> Result<()> {
        let total = hdr.nblocks();
        let data_start = EXTENDED_HEADER_LENGTH + 4 * total;
        if data_start >= cb {
            return Err(Error::header("bstarts do not fit in the chunk"));
        }
        let mut bst = vec![0u8; data_start - EXTENDED_HEADER_LENGTH];
        self.io
            .read_at(obj, pos + EXTENDED_HEADER_LENGTH as u64, &mut bst)?;
        let starts: Vec<usize> = bst
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .map(|v| {
                usize::try_from(v)
                    .ok()
                    .filter(|&s| s >= data_start && s < cb)
                    .ok_or_else(|| Error::header(format!("bstart {v} outside the chunk")))
            })
            .collect::<Result<_>>()?;
        let mut sorted = starts.clone();
        sorted.sort_unstable();
        sorted.dedup();
        let mut needed: Vec<usize> = nblocks.iter().copied().filter(|&b| b < total).collect();
        if hdr.filters.contains(&filter_id::DELTA) {
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
        let mut runs: Vec<(usize, usize, Range<usize>)> = Vec::new();
        for (k, &(s, end, _)) in extents.iter().enumerate() {
            match runs.last_mut() {
                Some(run) if s <= run.1 => {
                    run.1 = run.1.max(end);
                    run.2.end = k + 1;
                }
                _ => runs.push((s, end, k..k + 1)),
            }
        }
        let len = data_start + runs.iter().map(|r| r.1 - r.0).sum::<usize>();
        set_len(image, len)?;
        image[..EXTENDED_HEADER_LENGTH].copy_from_slice(h32);
        let mut new_starts = vec![data_start; total];
        let mut at = data_start;
        for (run_start, run_end, members) in runs {
            let n = run_end - run_start;
            self.io
                .read_at(obj, pos + run_start as u64, &mut image[at..at + n])?;
            for &(s, _, b) in &extents[members] {
                new_starts[b] = at + (s - run_start);
            }
            at += n;
        }
        for (b, s) in new_starts.iter().enumerate() {
            let at = EXTENDED_HEADER_LENGTH + 4 * b;
            image[at..at + 4].copy_from_slice(&(*s as i32).to_le_bytes());
        }
        let len = image.len() as i32;
        image[12..16].copy_from_slice(&len.to_le_bytes());
        Ok(())
    }

    // ---------------------------------------------------------------- mutations

    fn check_writable(&self) -> Result<()> {
        if !self.writable {
            return Err(Error::Io {
                path: self.path(),
                op: crate::error::IoOp::Write,
                message: "the frame is open read-only".into(),
            });
        }
        if self.poisoned {
            return Err(Error::Frame {
                path: self.path(),
                what: "a write failed earlier: reopen the frame to see what was committed".into(),
            });
        }
        if self.header.chunksize == 0 && self.header.nbytes > 0 {
            return Err(Error::InvalidParam(format!(
                "{}: variable-chunksize frames (C-Blosc2 3.x) are read-only in Strata",
                self.path()
            )));
        }
        Ok(())
    }

    /// Bytes of the data section in use (0 while there is no chunk).
    fn data_len(&self) -> u64 {
        if self.offsets.is_empty() {
            0
        } else {
            self.header.cbytes as u64
        }
    }

    /// The last chunk's size, for the chunksize rules.
    fn last_nbytes(&self) -> usize {
        self.fixed_nbytes(self.nchunks().saturating_sub(1))
            .unwrap_or(0)
    }

    /// Checks that `chunks` may be appended (insert at the end follows the same rule) and
    /// returns the chunksize afterwards. Every chunk but the last must hold exactly
    /// `chunksize` bytes (C-Blosc2 2.x rule).
    fn append_chunksize(&self, chunks: &[NewChunk<'_>], err: fn(String) -> Error) -> Result<i32> {
        let mut cs = self.header.chunksize;
        let mut last = self.last_nbytes();
        for (n, c) in (self.nchunks()..).zip(chunks) {
            if n == 0 || cs <= 0 {
                cs = i32::try_from(c.nbytes).map_err(|_| err("chunk too large".into()))?;
            } else {
                let csz = cs as usize;
                if last < csz {
                    return Err(err(format!(
                        "the last chunk holds {last} of {csz} bytes: only the last chunk may be \
                         shorter than the chunksize"
                    )));
                }
                if c.nbytes > csz {
                    return Err(err(format!(
                        "chunk of {} bytes exceeds the chunksize {csz}",
                        c.nbytes
                    )));
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
        let cs = self.append_chunksize(chunks, Error::ChunkAppend)?;
        self.insert_at(self.nchunks(), chunks, cs)
    }

    /// Inserts `chunk` at position `n` (0 ≤ n ≤ nchunks).
    pub fn insert(&mut self, n: usize, chunk: &NewChunk<'_>) -> Result<()> {
        self.check_writable()?;
        let nchunks = self.nchunks();
        if n > nchunks {
            return Err(Error::InvalidIndex(format!(
                "cannot insert at {n}: {nchunks} chunks"
            )));
        }
        let cs = if n == nchunks {
            self.append_chunksize(std::slice::from_ref(chunk), Error::ChunkInsert)?
        } else {
            let cs = self.header.chunksize;
            if chunk.nbytes as i64 != i64::from(cs) {
                return Err(Error::ChunkInsert(format!(
                    "a chunk inserted before the end must hold the chunksize {cs} bytes, not {}",
                    chunk.nbytes
                )));
            }
            cs
        };
        self.insert_at(n, std::slice::from_ref(chunk), cs)
    }

    fn next_sparse_id(&self) -> u64 {
        self.offsets
            .iter()
            .filter(|&&v| v >= 0)
            .max()
            .map_or(0, |&m| m as u64 + 1)
    }

    fn insert_at(&mut self, n: usize, chunks: &[NewChunk<'_>], cs: i32) -> Result<()> {
        let mut header = self.header.clone();
        header.chunksize = cs;
        header.nbytes += chunks.iter().map(|c| c.nbytes as i64).sum::<i64>();
        let mut entries = Vec::with_capacity(chunks.len());
        match self.kind {
            FrameType::Contiguous => {
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
            FrameType::Sparse => {
                let mut id = self.next_sparse_id();
                let mut files = Vec::new();
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
                return Err(Error::InvalidParam(format!(
                    "chunk {n} is updated twice in one batch"
                )));
            }
            if n + 1 < nchunks && chunk.nbytes as i64 != i64::from(cs) {
                return Err(Error::ChunkUpdate(format!(
                    "chunk {n} is not the last: it must hold the chunksize {cs} bytes, not {}",
                    chunk.nbytes
                )));
            }
            if chunk.nbytes as i64 > i64::from(cs) && nchunks > 1 {
                return Err(Error::ChunkUpdate(format!(
                    "chunk of {} bytes exceeds the chunksize {cs}",
                    chunk.nbytes
                )));
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
            return Err(Error::Frame {
                path: self.path(),
                what: format!("the chunks at offsets {} and {} overlap", w[0].0, w[1].0),
            });
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

    /// [`Frame::update_many`] for a sparse frame, the updates checked: new chunk files, one
    /// index, then the replaced files removed.
    fn update_sparse(
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

    fn stored_len_sparse(&self, id: u64) -> Result<i64> {
        let (obj, pos, room) = self.stored_at(id)?;
        Ok(self.stored_header(obj, pos, room)?.1 as i64)
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
            FrameType::Sparse => {
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
            return Err(Error::InvalidParam(
                "metalayers and parameters can only change before any chunk is added".into(),
            ));
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
            return Err(Error::InvalidParam(format!(
                "metalayer {:?}: {} bytes exceed its {} bytes (a metalayer cannot grow)",
                h.metalayers[index].name,
                content.len(),
                old.len()
            )));
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
        pos.ok_or_else(|| Error::header("metalayer index out of range"))
    }

    /// Fills an empty frame with `nchunks` special chunks of `chunksize` bytes (the last
    /// holding `nbytes − (nchunks−1)·chunksize`): one offsets chunk repeating one special
    /// entry, as `frame_fill_special` writes it.
    pub fn fill_special(&mut self, nbytes: u64, kind: SpecialType, chunksize: usize) -> Result<()> {
        self.check_writable()?;
        if !self.offsets.is_empty() || self.header.nbytes != 0 {
            return Err(Error::FrameSpecial(
                "filling with special values only works on empty frames".into(),
            ));
        }
        let nchunks = nbytes.div_ceil(chunksize as u64);
        let off_nbytes = nchunks
            .checked_mul(8)
            .filter(|&b| b <= MAX_BUFFERSIZE as u64)
            .ok_or_else(|| {
                Error::FrameSpecial(format!(
                    "{nchunks} chunks exceed the offsets index limit: use a larger chunksize"
                ))
            })? as usize;
        let entry = encode_special(kind)?;
        let mut cp = offsets_cparams();
        cp.nthreads = 0;
        let off_chunk = special_chunk(
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
        header.blocksize = crate::chunk::compute_blocksize(&sample, chunksize) as i32;
        let offsets = vec![entry; nchunks as usize];
        let trailer = self.trailer.clone();
        let t = trailer.to_bytes();
        frame_parts(&mut header, 0, &off_chunk, &t);
        let hb = header.to_bytes();
        self.replace_frame(&[&hb, &off_chunk, &t])?;
        self.install(header, trailer, t, offsets, off_chunk);
        Ok(())
    }

    // ------------------------------------------------------------- the protocol

    fn durable(&self) -> bool {
        self.sync == SyncPolicy::EveryWrite
    }

    fn fail<T>(&mut self, r: Result<T>) -> Result<T> {
        if r.is_err() {
            self.poisoned = true;
        }
        r
    }

    fn mark(&mut self, obj: Obj) {
        if !self.dirty.contains(&obj) {
            self.dirty.push(obj);
        }
    }

    fn write(&mut self, obj: Obj, pos: u64, data: &[u8]) -> Result<()> {
        self.mark(obj);
        let r = self.io.write_at(obj, pos, data);
        self.fail(r)
    }

    /// An ordering point: with [`SyncPolicy::EveryWrite`], everything written so far reaches
    /// stable storage before anything after it is written.
    fn barrier(&mut self, obj: Obj) -> Result<()> {
        if self.durable() {
            let r = self.io.sync(obj);
            self.fail(r)?;
            self.dirty.retain(|&o| o != obj);
        }
        Ok(())
    }

    fn replace_frame(&mut self, parts: &[&[u8]]) -> Result<()> {
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

    fn install(
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
    fn commit_contiguous(&mut self, plan: Plan<'_>) -> Result<()> {
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
                let c = encode_offsets(&v, room)?;
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
                        return Err(Error::InvalidParam(
                            "internal: old bytes in a replace".into(),
                        ))
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

        // Old pieces that keep their position are left alone; every other live byte from
        // `p` on is relocated.
        let mut stays = Vec::new();
        let mut at = p;
        for pc in &pieces {
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
        // Phase 1: the old state, its bytes from `p` on that move relocated to `y`, one
        // segment (old range, new position) per gap between the bytes that stay.
        let mut segments: Vec<(Range<u64>, u64)> = Vec::new();
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
        // The segments are in order of their old ranges.
        let relocated_at = |abs: u64| {
            let k = segments.partition_point(|(r, _)| r.end <= abs);
            segments
                .get(k)
                .filter(|(r, _)| r.contains(&abs))
                .map(|(r, to)| to + (abs - r.start))
        };
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
            encode_offsets(&shifted, 0)?
        };
        let old_trailer = self.trailer_bytes.clone();
        self.write(Obj::Frame, to, &old_off_chunk)?;
        self.write(Obj::Frame, to + old_off_chunk.len() as u64, &old_trailer)?;
        self.barrier(Obj::Frame)?;
        let mut relocated = self.header.clone();
        relocated.cbytes = (to - hl) as i64;
        relocated.frame_len = to + old_off_chunk.len() as u64 + old_trailer.len() as u64;
        self.write(Obj::Frame, 0, &relocated.fixed_bytes())?;
        self.barrier(Obj::Frame)?;

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
                        let src = relocated_at(pos).ok_or_else(|| {
                            Error::InvalidParam("internal: moved bytes not relocated".into())
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

    /// Commits a change of a sparse frame: new chunk files first (unreferenced until the
    /// index changes), then the index replaced atomically, then those of the chunk files
    /// `remove` that the new index no longer names removed (and no longer counted in
    /// `header.cbytes`).
    fn commit_sparse(
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
        let off_chunk = encode_offsets(&offsets, room)?;
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
