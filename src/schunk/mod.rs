//! The super-chunk ([`SChunk`]): an ordered sequence of chunks with one chunksize, their
//! compression parameters, fixed-size metalayers and variable-length vlmetalayers, kept in a
//! Blosc2 frame in memory, in a file or in a sparse directory.
//!
//! Every chunk but the last holds exactly `chunksize` bytes (the C-Blosc2 2.x rule, which
//! keeps frames readable by every C-Blosc2); chunks of zeros, NaNs or uninitialized values
//! are index entries without data bytes. Partial reads ([`SChunk::decompress_range`],
//! [`SChunk::getitem`]) read only the blocks they need from a file.
//!
//! Format: c-blosc2 `blosc/schunk.c`, `blosc/frame.c`; `shared/spec/frames.md`. Writes
//! follow the crash-safe protocol of [`crate::frame`].
//!
//! ```
//! use strata::chunk::CParams;
//! use strata::schunk::{SChunk, SChunkOptions};
//! let opts = SChunkOptions { cparams: CParams { typesize: 4, ..CParams::default() }, ..Default::default() };
//! let mut s = SChunk::new(&opts).unwrap();
//! let data: Vec<u8> = (0..3000u32).flat_map(|i| i.to_le_bytes()).collect();
//! s.append_buffer(&data[..4000]).unwrap();
//! s.append_buffer(&data[4000..8000]).unwrap();
//! s.append_buffer(&data[8000..]).unwrap();
//! assert_eq!((s.nchunks(), s.chunksize(), s.nbytes()), (3, Some(4000), 12000));
//! let mut item = [0u8; 4];
//! s.getitem(1, 10, 1, &mut item).unwrap();
//! assert_eq!(u32::from_le_bytes(item), 1010);
//! let frame = s.to_cframe().unwrap();
//! let back = SChunk::from_cframe(frame).unwrap();
//! assert_eq!(back.decompress_all().unwrap(), data);
//! ```

pub mod values;

use crate::chunk::{
    compress_chunks, compress_vec, compress_vec_ctx, decompress_chunks, CParams, Context, DParams,
    SplitMode,
};
use crate::error::{Error, IoOp, Result};
use crate::format::chunk::{ChunkHeader, SpecialType, MAX_BUFFERSIZE};
use crate::format::frame::{
    check_name, ChunkLoc, FrameHeader, FrameType, Metalayer, Trailer, MAX_METALAYERS,
};
use crate::frame::{DirIo, FileIo, Frame, FrameIo, MemIo, NewChunk, OpenMode, SyncPolicy};
use std::ops::Range;
use std::path::{Path, PathBuf};
use values::Value;

/// Where a new super-chunk is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A contiguous frame in memory.
    Memory,
    /// A contiguous frame file (`.b2frame`, `.b2nd`).
    File(PathBuf),
    /// A sparse frame directory (`chunks.b2frame` + `%08X.chunk`).
    Dir(PathBuf),
}

/// How a new super-chunk is made.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SChunkOptions {
    /// Compression parameters of the chunks that [`SChunk::append_buffer`] and
    /// [`SChunk::append_data`] make; stored in the frame header.
    pub cparams: CParams,
    /// Decompression parameters.
    pub dparams: DParams,
    /// Metalayers (name ≤ 31 bytes, at most 16), written once with the header.
    pub metalayers: Vec<(String, Vec<u8>)>,
    /// Chunk size in bytes that [`SChunk::append_data`] cuts buffers into before the first
    /// chunk fixes it; 0 = the runtime's recommended chunk size (a multiple of the typesize).
    pub chunksize: usize,
    /// When writes reach stable storage.
    pub sync: SyncPolicy,
    /// Replace an existing file or directory.
    pub overwrite: bool,
}

/// What the index says about one chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkInfo {
    /// Uncompressed size in bytes.
    pub nbytes: usize,
    /// Bytes stored (0 for a special chunk).
    pub cbytes: usize,
    /// Where it is.
    pub loc: ChunkLoc,
}

/// A super-chunk: chunks, metalayers and vlmetalayers in a Blosc2 frame.
pub struct SChunk {
    frame: Frame,
    mode: OpenMode,
    cparams: CParams,
    dparams: DParams,
    chunksize_hint: usize,
    ctx: Context<'static>,
}

impl std::fmt::Debug for SChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SChunk")
            .field("frame", &self.frame)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

/// The header fields that `cparams` set.
fn header_from(
    cparams: &CParams,
    dparams: &DParams,
    runtime_threads: usize,
) -> Result<FrameHeader> {
    cparams.validate()?;
    let typesize = i32::try_from(cparams.typesize)
        .map_err(|_| Error::InvalidParam(format!("typesize {}", cparams.typesize)))?;
    let mut h = FrameHeader::new(typesize);
    h.codec = cparams.codec;
    h.codec_meta = cparams.codec_meta;
    h.clevel = cparams.clevel;
    h.other_flags = cparams.splitmode as u8 - 1;
    h.blocksize = i32::try_from(cparams.blocksize).unwrap_or(0);
    h.filters = cparams.filters;
    h.filters_meta = cparams.filters_meta;
    h.other_flags2 = u8::from(cparams.use_dict);
    let nt = |n: usize| i16::try_from(if n == 0 { runtime_threads } else { n }).unwrap_or(i16::MAX);
    h.nthreads_c = nt(cparams.nthreads);
    h.nthreads_d = nt(dparams.nthreads);
    Ok(h)
}

/// The cparams a frame header stores.
fn cparams_from(h: &FrameHeader) -> CParams {
    CParams {
        codec: h.codec,
        codec_meta: h.codec_meta,
        clevel: h.clevel.min(9),
        typesize: usize::try_from(h.typesize).unwrap_or(1),
        blocksize: usize::try_from(h.blocksize).unwrap_or(0),
        splitmode: SplitMode::from_code(h.splitmode()).unwrap_or_default(),
        filters: h.filters,
        filters_meta: h.filters_meta,
        use_dict: h.other_flags2 & 1 != 0,
        nthreads: 0,
        nd: None,
    }
}

/// The cparams python-blosc2 compresses vlmetalayers with: Zstd clevel 5, shuffle,
/// typesize 1.
#[must_use]
pub fn vlmeta_cparams() -> CParams {
    CParams {
        codec: 5,
        clevel: 5,
        typesize: 1,
        splitmode: SplitMode::Auto,
        ..CParams::default()
    }
}

impl SChunk {
    /// A new, empty super-chunk in memory (a contiguous frame).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for bad cparams or metalayers.
    pub fn new(opts: &SChunkOptions) -> Result<SChunk> {
        Self::create(&Location::Memory, opts)
    }

    /// A new, empty super-chunk at `location`, with the metalayers of `opts`.
    ///
    /// Format: `frame_from_schunk` (an empty frame: header and trailer).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for bad cparams, metalayer names or too many metalayers;
    /// [`Error::Io`] when the file or directory cannot be made (or exists and `overwrite`
    /// is false).
    pub fn create(location: &Location, opts: &SChunkOptions) -> Result<SChunk> {
        let ctx = Context::global();
        let mut header = header_from(&opts.cparams, &opts.dparams, ctx.runtime.nthreads())?;
        if opts.metalayers.len() > MAX_METALAYERS {
            return Err(Error::InvalidParam(format!(
                "{} metalayers (at most {MAX_METALAYERS})",
                opts.metalayers.len()
            )));
        }
        for (i, (name, content)) in opts.metalayers.iter().enumerate() {
            check_name(name)?;
            if opts.metalayers[..i].iter().any(|(n, _)| n == name) {
                return Err(Error::InvalidParam(format!(
                    "metalayer {name:?} given twice"
                )));
            }
            header.metalayers.push(Metalayer {
                name: name.clone(),
                content: content.clone(),
            });
        }
        if let Location::Dir(_) = location {
            header.frame_type = FrameType::Sparse as u8;
        }
        let bytes = Frame::initial_bytes(&mut header, &Trailer::default());
        let durable = opts.sync == SyncPolicy::EveryWrite;
        let io: Box<dyn FrameIo> = match location {
            Location::Memory => Box::new(MemIo::from_frame(bytes)),
            Location::File(p) => Box::new(FileIo::create(p, &[&bytes], opts.overwrite, durable)?),
            Location::Dir(p) => Box::new(DirIo::create(p, &[&bytes], opts.overwrite, durable)?),
        };
        let frame = Frame::open(io, true, opts.sync)?;
        let mut s = Self::wrap(frame, OpenMode::ReadWrite, ctx);
        s.cparams = CParams {
            nthreads: opts.cparams.nthreads,
            ..s.cparams
        };
        s.dparams = opts.dparams.clone();
        if opts.chunksize > 0 {
            s.chunksize_hint = opts.chunksize;
        }
        Ok(s)
    }

    fn wrap(frame: Frame, mode: OpenMode, ctx: Context<'static>) -> SChunk {
        let cparams = cparams_from(frame.header());
        let ts = cparams.typesize.max(1);
        let rec = crate::scheduler::sizing::recommended_chunk_bytes(ctx.runtime.topology());
        let chunksize_hint = (rec / ts).max(1) * ts;
        SChunk {
            frame,
            mode,
            cparams,
            dparams: DParams::default(),
            chunksize_hint,
            ctx,
        }
    }

    /// Opens the frame file or sparse frame directory at `path` ([`SyncPolicy::OnClose`]).
    ///
    /// # Errors
    /// As [`SChunk::open_with`].
    pub fn open(path: impl AsRef<Path>, mode: OpenMode) -> Result<SChunk> {
        Self::open_with(path, mode, SyncPolicy::default())
    }

    /// Opens the frame at `path`: a directory is a sparse frame, a file a contiguous one.
    ///
    /// # Errors
    /// [`Error::Io`] when the path cannot be opened; [`Error::Frame`] /
    /// [`Error::FrameType`] naming the file for a malformed frame.
    pub fn open_with(path: impl AsRef<Path>, mode: OpenMode, sync: SyncPolicy) -> Result<SChunk> {
        let path = path.as_ref();
        let writable = mode != OpenMode::Read;
        let io: Box<dyn FrameIo> = if path.is_dir() {
            Box::new(DirIo::open(path, writable)?)
        } else {
            Box::new(FileIo::open(path, writable)?)
        };
        Self::from_io(io, mode, sync)
    }

    /// Opens the frame held by `io` (any backend, e.g. [`crate::frame::FaultyIo`]).
    ///
    /// # Errors
    /// As [`SChunk::open_with`].
    pub fn from_io(io: Box<dyn FrameIo>, mode: OpenMode, sync: SyncPolicy) -> Result<SChunk> {
        let mut frame = Frame::open(io, mode != OpenMode::Read, sync)?;
        let ctx = Context::global();
        // As C-Blosc2: a reopened frame records the process's default thread count.
        let nt = i16::try_from(ctx.runtime.nthreads()).unwrap_or(i16::MAX);
        frame.set_header_nthreads(nt, nt);
        Ok(Self::wrap(frame, mode, ctx))
    }

    /// A super-chunk over a copy of the contiguous frame `bytes`, in memory, read-write;
    /// `frame_len` must equal `bytes.len()` (as `blosc2_schunk_from_buffer` requires).
    ///
    /// # Errors
    /// [`Error::Frame`] for a malformed frame or a length mismatch.
    pub fn from_cframe(bytes: Vec<u8>) -> Result<SChunk> {
        let len = bytes.len() as u64;
        let s = Self::from_io(
            Box::new(MemIo::from_frame(bytes)),
            OpenMode::ReadWrite,
            SyncPolicy::None,
        )?;
        if s.frame.frame_len() != len {
            return Err(Error::Frame {
                path: "<memory>".into(),
                what: format!(
                    "frame_len {} differs from the buffer's {len} bytes",
                    s.frame.frame_len()
                ),
            });
        }
        Ok(s)
    }

    /// The whole frame as one contiguous buffer (`frame_len` bytes); a sparse frame is
    /// converted.
    ///
    /// # Errors
    /// [`Error::Io`] / [`Error::Frame`] when the store cannot be read.
    pub fn to_cframe(&self) -> Result<Vec<u8>> {
        if self.frame.kind() == FrameType::Contiguous {
            let mut out = vec![
                0u8;
                usize::try_from(self.frame.frame_len())
                    .map_err(|_| Error::MemoryAlloc(usize::MAX))?
            ];
            self.frame
                .io()
                .read_at(crate::frame::Obj::Frame, 0, &mut out)?;
            return Ok(out);
        }
        self.copy_to(&Location::Memory, &SChunkOptions::default())?
            .to_cframe()
    }

    /// A copy of this super-chunk at `location` (`opts.sync` and `opts.overwrite` apply; the
    /// parameters, metalayers, vlmetalayers and chunks are this one's, chunks copied as they
    /// are stored).
    ///
    /// # Errors
    /// As [`SChunk::create`] and the reads.
    pub fn copy_to(&self, location: &Location, opts: &SChunkOptions) -> Result<SChunk> {
        let o = SChunkOptions {
            cparams: CParams {
                nthreads: self.cparams.nthreads,
                ..self.cparams.clone()
            },
            dparams: self.dparams.clone(),
            metalayers: self
                .frame
                .header()
                .metalayers
                .iter()
                .map(|m| (m.name.clone(), m.content.clone()))
                .collect(),
            chunksize: self.chunksize_hint,
            sync: opts.sync,
            overwrite: opts.overwrite,
        };
        let mut out = Self::create(location, &o)?;
        {
            let h = self.frame.header();
            let mut nh = out.frame.header().clone();
            nh.blocksize = h.blocksize;
            nh.nthreads_c = h.nthreads_c;
            nh.nthreads_d = h.nthreads_d;
            nh.other_flags = h.other_flags;
            nh.other_flags2 = h.other_flags2;
            out.frame.set_header(nh)?;
        }
        if !self.frame.vlmetalayers().is_empty() {
            out.frame
                .set_vlmetalayers(self.frame.vlmetalayers().to_vec())?;
        }
        const BATCH: usize = 64;
        let n = self.nchunks();
        let mut i = 0;
        while i < n {
            let end = (i + BATCH).min(n);
            let chunks = (i..end)
                .map(|k| self.chunk(k))
                .collect::<Result<Vec<_>>>()?;
            let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
            out.append_chunks(&refs)?;
            i = end;
        }
        Ok(out)
    }

    // ------------------------------------------------------------------ properties

    /// Number of chunks.
    #[must_use]
    pub fn nchunks(&self) -> usize {
        self.frame.nchunks()
    }

    /// Uncompressed size of all chunks, in bytes.
    #[must_use]
    pub fn nbytes(&self) -> u64 {
        self.frame.header().nbytes as u64
    }

    /// The header's `cbytes`: for a contiguous frame the length of its chunk data section
    /// (dead bytes of deleted chunks included); for a sparse frame the sum of the chunk
    /// files' sizes. In bytes.
    #[must_use]
    pub fn cbytes(&self) -> u64 {
        self.frame.header().cbytes as u64
    }

    /// Length of the frame (of `chunks.b2frame` for a sparse frame), in bytes.
    #[must_use]
    pub fn frame_len(&self) -> u64 {
        self.frame.frame_len()
    }

    /// Item size in bytes.
    #[must_use]
    pub fn typesize(&self) -> usize {
        self.cparams.typesize
    }

    /// Bytes of every chunk but the last; `None` before the first chunk, or for a
    /// variable-chunksize (C-Blosc2 3.x) frame.
    #[must_use]
    pub fn chunksize(&self) -> Option<usize> {
        usize::try_from(self.frame.header().chunksize)
            .ok()
            .filter(|&c| c > 0)
    }

    /// The compression parameters (the header's, with this handle's thread count).
    #[must_use]
    pub fn cparams(&self) -> &CParams {
        &self.cparams
    }

    /// The decompression parameters.
    #[must_use]
    pub fn dparams(&self) -> &DParams {
        &self.dparams
    }

    /// Sets the threads used to compress and decompress (0 = the runtime's default); the
    /// bytes written do not depend on them.
    pub fn set_nthreads(&mut self, compress: usize, decompress: usize) {
        self.cparams.nthreads = compress;
        self.dparams.nthreads = decompress;
        let rt = self.ctx.runtime.nthreads();
        let nt = |n: usize| i16::try_from(if n == 0 { rt } else { n }).unwrap_or(i16::MAX);
        self.frame.set_header_nthreads(nt(compress), nt(decompress));
    }

    /// The frame header as committed.
    #[must_use]
    pub fn header(&self) -> &FrameHeader {
        self.frame.header()
    }

    /// True for a sparse frame (directory).
    #[must_use]
    pub fn is_sparse(&self) -> bool {
        self.frame.kind() == FrameType::Sparse
    }

    /// The open mode.
    #[must_use]
    pub fn mode(&self) -> OpenMode {
        self.mode
    }

    /// The path of the frame (`chunks.b2frame` for a sparse frame; `<memory>`).
    #[must_use]
    pub fn path(&self) -> String {
        self.frame.path()
    }

    // ------------------------------------------------------------------ writes

    fn check_mode(&self, append: bool) -> Result<()> {
        match self.mode {
            OpenMode::ReadWrite => Ok(()),
            OpenMode::Append if append => Ok(()),
            m => Err(Error::Io {
                path: self.path(),
                op: IoOp::Write,
                message: format!("not allowed in {m:?} mode"),
            }),
        }
    }

    /// Appends a compressed chunk; returns the new number of chunks. Zero, NaN and
    /// uninitialized chunks are stored as index entries only.
    ///
    /// # Errors
    /// [`Error::ChunkAppend`] when the chunk breaks the fixed chunksize (larger than it, or
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
            .map(|c| NewChunk::parse(c))
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
        let chunk = compress_vec_ctx(&self.ctx, &self.cparams, data)?;
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
            let chunks = compress_chunks(&self.ctx, &self.cparams, piece, cs)?;
            let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
            self.append_chunks(&refs)?;
        }
        Ok(self.nchunks())
    }

    /// Inserts a compressed chunk before chunk `nchunk` (`nchunk == nchunks()` appends);
    /// returns the new number of chunks.
    ///
    /// # Errors
    /// [`Error::ChunkInsert`] when it breaks the fixed chunksize (a chunk inserted before the
    /// end must hold exactly `chunksize` bytes); [`Error::InvalidIndex`]; as
    /// [`SChunk::append_chunk`].
    pub fn insert_chunk(&mut self, nchunk: usize, chunk: &[u8]) -> Result<usize> {
        self.check_mode(false)?;
        let c = NewChunk::parse(chunk)?;
        self.frame.insert(nchunk, &c)?;
        Ok(self.nchunks())
    }

    /// Replaces chunk `nchunk` by a compressed chunk.
    ///
    /// # Errors
    /// [`Error::ChunkUpdate`] when it breaks the fixed chunksize; [`Error::InvalidIndex`];
    /// as [`SChunk::append_chunk`].
    pub fn update_chunk(&mut self, nchunk: usize, chunk: &[u8]) -> Result<()> {
        self.check_mode(false)?;
        let c = NewChunk::parse(chunk)?;
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
    /// [`Error::InvalidParam`] when a chunk number appears twice.
    pub fn update_chunks(&mut self, updates: &[(usize, &[u8])]) -> Result<()> {
        self.check_mode(false)?;
        let parsed = updates
            .iter()
            .map(|&(n, chunk)| NewChunk::parse(chunk).map(|c| (n, c)))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<(usize, &NewChunk<'_>)> = parsed.iter().map(|(n, c)| (*n, c)).collect();
        self.frame.update_many(&refs)
    }

    /// Compresses `data` and replaces chunk `nchunk` with it.
    ///
    /// # Errors
    /// As [`SChunk::update_chunk`] and [`SChunk::append_buffer`].
    pub fn update_buffer(&mut self, nchunk: usize, data: &[u8]) -> Result<()> {
        let chunk = compress_vec_ctx(&self.ctx, &self.cparams, data)?;
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
    /// large; [`Error::InvalidParam`] for a chunksize that is not a positive multiple of the
    /// typesize (up to `BLOSC2_MAX_BUFFERSIZE`) or a kind other than zeros, NaN, uninit.
    pub fn fill_special(
        &mut self,
        nitems: u64,
        kind: SpecialType,
        chunksize: usize,
    ) -> Result<usize> {
        self.check_mode(false)?;
        let ts = self.typesize();
        if chunksize == 0 || !chunksize.is_multiple_of(ts) || chunksize > MAX_BUFFERSIZE {
            return Err(Error::InvalidParam(format!(
                "chunksize {chunksize} must be a positive multiple of the typesize {ts}"
            )));
        }
        if !matches!(
            kind,
            SpecialType::Zero | SpecialType::Nan | SpecialType::Uninit
        ) {
            return Err(Error::InvalidParam(format!(
                "cannot fill with {} chunks",
                kind.name()
            )));
        }
        if kind == SpecialType::Nan && ts != 4 && ts != 8 {
            return Err(Error::InvalidParam(format!(
                "NaN needs typesize 4 or 8, not {ts}"
            )));
        }
        let nbytes = nitems
            .checked_mul(ts as u64)
            .filter(|&b| b <= i64::MAX as u64)
            .ok_or_else(|| Error::FrameSpecial(format!("{nitems} items overflow nbytes")))?;
        if nbytes == 0 {
            return Ok(self.nchunks());
        }
        self.frame.fill_special(nbytes, kind, chunksize)?;
        Ok(self.nchunks())
    }

    // ------------------------------------------------------------------ reads

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
    /// holding only the blocks asked for.
    ///
    /// # Errors
    /// As [`SChunk::chunk`]; [`Error::Frame`] naming the file for `bstarts` outside the
    /// chunk.
    pub fn lazy_chunk(&self, nchunk: usize, nblocks: &[usize], out: &mut Vec<u8>) -> Result<()> {
        self.frame.lazy_chunk(nchunk, nblocks, out)
    }

    /// Decompresses chunk `nchunk` into `dst`; returns its size in bytes.
    ///
    /// # Errors
    /// As [`SChunk::chunk`] and [`crate::chunk::decompress`].
    pub fn decompress_chunk(&self, nchunk: usize, dst: &mut [u8]) -> Result<usize> {
        let c = self.chunk(nchunk)?;
        crate::chunk::decompress_ctx(&self.ctx, &self.dparams, &c, dst)
            .map_err(|e| e.in_frame(&self.path()))
    }

    /// Decompresses chunk `nchunk` into a new vector.
    ///
    /// # Errors
    /// As [`SChunk::decompress_chunk`].
    pub fn decompress_chunk_vec(&self, nchunk: usize) -> Result<Vec<u8>> {
        let c = self.chunk(nchunk)?;
        crate::chunk::decompress_vec_ctx(&self.ctx, &self.dparams, &c)
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
        self.frame
            .read_range(&self.ctx, self.dparams.nthreads, nchunk, range, dst)
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
            return Err(Error::InvalidIndex(format!(
                "items {start}+{nitems} overflow"
            )));
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
        let mut out = Vec::new();
        out.try_reserve_exact(n)
            .map_err(|_| Error::MemoryAlloc(n))?;
        out.resize(n, 0);
        let mut at = 0;
        const BATCH: usize = 64;
        let mut i = 0;
        while i < self.nchunks() {
            let end = (i + BATCH).min(self.nchunks());
            let chunks = (i..end)
                .map(|k| self.chunk(k))
                .collect::<Result<Vec<_>>>()?;
            let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
            at += decompress_chunks(&self.ctx, &self.dparams, &refs, &mut out[at..])
                .map_err(|e| e.in_frame(&self.path()))?;
            i = end;
        }
        if at != n {
            return Err(Error::Frame {
                path: self.path(),
                what: format!("chunks hold {at} bytes, the header says {n}"),
            });
        }
        Ok(out)
    }

    // ------------------------------------------------------------------ metalayers

    /// The metalayers' names, in order.
    #[must_use]
    pub fn meta_names(&self) -> Vec<&str> {
        self.frame
            .header()
            .metalayers
            .iter()
            .map(|m| m.name.as_str())
            .collect()
    }

    /// The content of metalayer `name`, or `None`.
    #[must_use]
    pub fn meta(&self, name: &str) -> Option<&[u8]> {
        self.frame
            .header()
            .metalayers
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.content.as_slice())
    }

    /// The msgpack value of metalayer `name` (python-blosc2's encoding).
    ///
    /// # Errors
    /// [`Error::MetalayerNotFound`]; [`Error::Data`] when it is not msgpack.
    pub fn meta_value(&self, name: &str) -> Result<Value> {
        let c = self
            .meta(name)
            .ok_or_else(|| Error::MetalayerNotFound { name: name.into() })?;
        values::unpack(c)
    }

    /// Adds a metalayer; only before the first chunk (the header grows).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a bad or taken name, 16 metalayers already, or chunks
    /// present.
    pub fn meta_add(&mut self, name: &str, content: &[u8]) -> Result<()> {
        self.check_mode(false)?;
        check_name(name)?;
        let mut h = self.frame.header().clone();
        if h.metalayers.iter().any(|m| m.name == name) {
            return Err(Error::InvalidParam(format!(
                "metalayer {name:?} already exists"
            )));
        }
        if h.metalayers.len() >= MAX_METALAYERS {
            return Err(Error::InvalidParam(format!(
                "already {MAX_METALAYERS} metalayers"
            )));
        }
        h.metalayers.push(Metalayer {
            name: name.into(),
            content: content.to_vec(),
        });
        self.frame.set_header(h)
    }

    /// Overwrites metalayer `name` in place with `content`, which may not be longer than the
    /// stored value (a shorter one overwrites its first bytes; the rest keeps its old bytes,
    /// as `blosc2_meta_update` does).
    ///
    /// # Errors
    /// [`Error::MetalayerNotFound`]; [`Error::InvalidParam`] for longer content.
    pub fn meta_update(&mut self, name: &str, content: &[u8]) -> Result<()> {
        self.check_mode(false)?;
        let i = self
            .frame
            .header()
            .metalayers
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| Error::MetalayerNotFound { name: name.into() })?;
        self.frame.update_metalayer(i, content)
    }

    // ------------------------------------------------------------------ vlmetalayers

    /// The vlmetalayers' names, in order.
    #[must_use]
    pub fn vlmeta_names(&self) -> Vec<&str> {
        self.frame
            .vlmetalayers()
            .iter()
            .map(|m| m.name.as_str())
            .collect()
    }

    /// The stored (compressed) content of vlmetalayer `name`.
    #[must_use]
    pub fn vlmeta_chunk(&self, name: &str) -> Option<&[u8]> {
        self.frame
            .vlmetalayers()
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.content.as_slice())
    }

    /// The decompressed content of vlmetalayer `name`.
    ///
    /// # Errors
    /// [`Error::MetalayerNotFound`]; decompression errors (naming the frame) for a corrupt
    /// value.
    pub fn vlmeta(&self, name: &str) -> Result<Vec<u8>> {
        let c = self
            .vlmeta_chunk(name)
            .ok_or_else(|| Error::MetalayerNotFound { name: name.into() })?;
        let h = ChunkHeader::parse(c).map_err(|e| e.in_frame(&self.path()))?;
        if h.cbytes != c.len() {
            return Err(Error::Frame {
                path: self.path(),
                what: format!(
                    "vlmetalayer {name:?}: chunk of {} bytes stored in {}",
                    h.cbytes,
                    c.len()
                ),
            });
        }
        crate::chunk::decompress_vec_ctx(&self.ctx, &self.dparams, c)
            .map_err(|e| e.in_frame(&self.path()))
    }

    /// The msgpack value of vlmetalayer `name` (python-blosc2's encoding).
    ///
    /// # Errors
    /// As [`SChunk::vlmeta`]; [`Error::Data`] when it is not msgpack.
    pub fn vlmeta_value(&self, name: &str) -> Result<Value> {
        values::unpack(&self.vlmeta(name)?)
    }

    /// Adds vlmetalayer `name` or replaces its content, compressing `content` with
    /// `cparams` (`None`: python-blosc2's, [`vlmeta_cparams`]); one commit.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a bad name or a 17th vlmetalayer; compression errors;
    /// [`Error::Io`].
    pub fn vlmeta_set(
        &mut self,
        name: &str,
        content: &[u8],
        cparams: Option<&CParams>,
    ) -> Result<()> {
        self.check_mode(false)?;
        check_name(name)?;
        let cp = cparams.cloned().unwrap_or_else(vlmeta_cparams);
        let chunk = compress_vec(&cp, content)?;
        let mut layers = self.frame.vlmetalayers().to_vec();
        match layers.iter_mut().find(|m| m.name == name) {
            Some(m) => m.content = chunk,
            None => {
                if layers.len() >= MAX_METALAYERS {
                    return Err(Error::InvalidParam(format!(
                        "already {MAX_METALAYERS} vlmetalayers"
                    )));
                }
                layers.push(Metalayer {
                    name: name.into(),
                    content: chunk,
                });
            }
        }
        self.frame.set_vlmetalayers(layers)
    }

    /// Sets vlmetalayer `name` to the msgpack encoding of `value`, as python-blosc2 does.
    ///
    /// # Errors
    /// As [`SChunk::vlmeta_set`].
    pub fn vlmeta_set_value(&mut self, name: &str, value: &Value) -> Result<()> {
        self.vlmeta_set(name, &values::pack(value), None)
    }

    /// Removes vlmetalayer `name`.
    ///
    /// # Errors
    /// [`Error::MetalayerNotFound`]; [`Error::Io`].
    pub fn vlmeta_delete(&mut self, name: &str) -> Result<()> {
        self.check_mode(false)?;
        let mut layers = self.frame.vlmetalayers().to_vec();
        let i = layers
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| Error::MetalayerNotFound { name: name.into() })?;
        layers.remove(i);
        self.frame.set_vlmetalayers(layers)
    }

    // ------------------------------------------------------------------ lifetime

    /// Flushes written data to stable storage (unless the sync policy is `None`).
    ///
    /// # Errors
    /// [`Error::Io`] (sync).
    pub fn flush(&mut self) -> Result<()> {
        self.frame.flush()
    }

    /// Flushes and closes.
    ///
    /// # Errors
    /// As [`SChunk::flush`].
    pub fn close(mut self) -> Result<()> {
        self.flush()
    }
}
