//! The super-chunk ([`SChunk`]): an ordered sequence of chunks with one chunksize, their
//! compression parameters, fixed-size metalayers and variable-length vlmetalayers, kept in a
//! Blosc2 frame in memory, in a file or in a sparse directory.
//!
//! Every chunk but the last holds exactly `chunksize` bytes (the C-Blosc2 2.x rule, which
//! keeps frames readable by every C-Blosc2); chunks of zeros, NaNs or uninitialized values
//! are index entries without data bytes. Partial reads ([`SChunk::decompress_range`],
//! [`SChunk::getitem`]) read only the blocks they need from a file.
//!
//! This file holds the type, its creation, opening and copies, and its properties; the
//! methods live by what they do: `write` (append, insert, update, delete, special fills),
//! `read` (chunks, ranges, blocks, items, iteration) and `meta` (metalayers and
//! vlmetalayers). [`values`] encodes metalayer values as python-blosc2 does.
//!
//! Format: c-blosc2 `blosc/schunk.c`, `blosc/frame.c`; `docs/frame-format.md`. Writes
//! follow the crash-safe protocol of [`crate::frame`].
//!
//! ```
//! use strata::chunk::CParams;
//! use strata::schunk::{SChunk, SChunkOptions};
//! let opts = SChunkOptions::default().with_cparams(CParams::default().with_typesize(4));
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

mod meta;
mod read;
pub mod values;
mod write;

pub use meta::vlmeta_cparams;

use crate::chunk::{CParams, Context, DParams, SplitMode};
use crate::error::{Error, Expected, IoOp, Result};
use crate::format::frame::{
    check_name, ChunkLoc, FrameHeader, FrameType, Metalayer, Trailer, MAX_METALAYERS,
};
use crate::frame::{DirIo, FileIo, Frame, FrameIo, MemIo, OpenMode, SyncPolicy};
use std::path::{Path, PathBuf};

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

/// How a new super-chunk is made: built with [`SChunkOptions::default`] and the `with_*`
/// setters.
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
    /// The registry and runtime the super-chunk works on.
    pub context: Context,
}

impl SChunkOptions {
    /// These options with the compression parameters `cparams`.
    #[must_use]
    pub fn with_cparams(mut self, cparams: CParams) -> SChunkOptions {
        self.cparams = cparams;
        self
    }

    /// These options with the decompression parameters `dparams`.
    #[must_use]
    pub fn with_dparams(mut self, dparams: DParams) -> SChunkOptions {
        self.dparams = dparams;
        self
    }

    /// These options with one more metalayer `name` holding `content`.
    #[must_use]
    pub fn with_metalayer(mut self, name: &str, content: &[u8]) -> SChunkOptions {
        self.metalayers.push((name.to_owned(), content.to_vec()));
        self
    }

    /// These options cutting data into chunks of `chunksize` bytes (0: the runtime's
    /// recommendation).
    #[must_use]
    pub fn with_chunksize(mut self, chunksize: usize) -> SChunkOptions {
        self.chunksize = chunksize;
        self
    }

    /// These options with the sync policy `sync`.
    #[must_use]
    pub fn with_sync(mut self, sync: SyncPolicy) -> SChunkOptions {
        self.sync = sync;
        self
    }

    /// These options replacing (`true`) or refusing to replace an existing file or directory.
    #[must_use]
    pub fn with_overwrite(mut self, overwrite: bool) -> SChunkOptions {
        self.overwrite = overwrite;
        self
    }

    /// These options working on `context`.
    #[must_use]
    pub fn with_context(mut self, context: Context) -> SChunkOptions {
        self.context = context;
        self
    }
}

/// How a stored super-chunk or array is opened: the mode, the sync policy of its writes and
/// the context it works on. Built with [`OpenOptions::new`] and the `with_*` setters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OpenOptions {
    /// Read only, read-write or append.
    pub mode: OpenMode,
    /// When writes reach stable storage.
    pub sync: SyncPolicy,
    /// The registry and runtime it works on.
    pub context: Context,
}

impl OpenOptions {
    /// Opening in `mode`, syncing on close, on the global context.
    #[must_use]
    pub fn new(mode: OpenMode) -> OpenOptions {
        OpenOptions {
            mode,
            ..OpenOptions::default()
        }
    }

    /// These options with the sync policy `sync`.
    #[must_use]
    pub fn with_sync(mut self, sync: SyncPolicy) -> OpenOptions {
        self.sync = sync;
        self
    }

    /// These options working on `context`.
    #[must_use]
    pub fn with_context(mut self, context: Context) -> OpenOptions {
        self.context = context;
        self
    }
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
        .map_err(|_| Error::range("typesize", cparams.typesize, Expected::at_most(i32::MAX)))?;
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

impl SChunk {
    /// A new, empty super-chunk in memory (a contiguous frame).
    ///
    /// # Errors
    /// As [`SChunk::create`].
    pub fn new(opts: &SChunkOptions) -> Result<SChunk> {
        Self::create(&Location::Memory, opts)
    }

    /// A new, empty super-chunk at `location`, with the metalayers of `opts`.
    ///
    /// Format: `frame_from_schunk` (an empty frame: header and trailer).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for bad cparams ([`CParams::validate`]), metalayer names or too
    /// many metalayers; [`Error::Duplicate`] for a metalayer given twice;
    /// [`Error::Io`] when the file or directory cannot be made (or exists and `overwrite`
    /// is false).
    pub fn create(location: &Location, opts: &SChunkOptions) -> Result<SChunk> {
        let ctx = opts.context.clone();
        opts.cparams
            .validate_for(&ctx.codec_caps(opts.cparams.codec))?;
        let mut header = header_from(&opts.cparams, &opts.dparams, ctx.runtime().nthreads())?;
        if opts.metalayers.len() > MAX_METALAYERS {
            return Err(Error::range(
                "metalayers",
                opts.metalayers.len(),
                Expected::at_most(MAX_METALAYERS),
            ));
        }
        for (i, (name, content)) in opts.metalayers.iter().enumerate() {
            check_name(name)?;
            if opts.metalayers[..i].iter().any(|(n, _)| n == name) {
                return Err(Error::Duplicate {
                    what: "metalayer",
                    name: format!("{name:?}"),
                });
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
        let frame = Frame::open(io, true, opts.sync, ctx)?;
        let mut s = Self::wrap(frame, OpenMode::ReadWrite);
        s.cparams = CParams {
            nthreads: opts.cparams.nthreads,
            ..s.cparams
        };
        s.dparams = opts.dparams.clone();
        s.set_nd();
        if opts.chunksize > 0 {
            s.chunksize_hint = opts.chunksize;
        }
        Ok(s)
    }

    fn wrap(frame: Frame, mode: OpenMode) -> SChunk {
        let cparams = cparams_from(frame.header());
        let ts = cparams.typesize.max(1);
        let rec = crate::scheduler::sizing::recommended_chunksize(frame.ctx().runtime().topology());
        let chunksize_hint = (rec / ts).max(1) * ts;
        let mut s = SChunk {
            frame,
            mode,
            cparams,
            dparams: DParams::default(),
            chunksize_hint,
        };
        s.set_nd();
        s
    }

    /// Opens the frame file or sparse frame directory at `path` ([`SyncPolicy::OnClose`], the
    /// global context).
    ///
    /// # Errors
    /// As [`SChunk::open_with`].
    pub fn open(path: impl AsRef<Path>, mode: OpenMode) -> Result<SChunk> {
        Self::open_with(path, &OpenOptions::new(mode))
    }

    /// Opens the frame at `path` as `opts` say: a directory is a sparse frame, a file a
    /// contiguous one. An `http://` or `https://` URL opens a remote frame, read-only, with
    /// the options of [`crate::frame::RemoteOptions::from_env`] (see [`SChunk::open_remote`]).
    ///
    /// # Errors
    /// [`Error::Io`] when the path cannot be opened; [`Error::Frame`] /
    /// [`Error::FrameType`] naming the file for a malformed frame; for a URL, as
    /// [`SChunk::open_remote`].
    pub fn open_with(path: impl AsRef<Path>, opts: &OpenOptions) -> Result<SChunk> {
        let path = path.as_ref();
        if let Some(url) = path.to_str().filter(|p| crate::frame::is_url(p)) {
            #[cfg(feature = "remote")]
            return Self::open_remote(url, opts, &crate::frame::RemoteOptions::from_env()?);
            #[cfg(not(feature = "remote"))]
            return Err(Error::in_file(
                url,
                Error::Unsupported {
                    what: "this build of Strata reads no URLs (built without the `remote` feature)",
                },
            ));
        }
        let writable = opts.mode != OpenMode::Read;
        let io: Box<dyn FrameIo> = if path.is_dir() {
            Box::new(DirIo::open(path, writable)?)
        } else {
            Box::new(FileIo::open(path, writable)?)
        };
        Self::from_io(io, opts)
    }

    /// Opens the frame at `url` (a contiguous frame file, or a sparse frame directory) over
    /// HTTP(S) byte ranges ([`crate::frame::RemoteIo`]) as `remote` says, read-only, on the
    /// context of `opts`: reads fetch only the header, the offsets index and, for each chunk
    /// they touch, its header, `bstarts` and the blocks they need.
    ///
    /// # Errors
    /// [`Error::Unsupported`] (inside [`Error::InFile`] naming the URL) for a mode other than
    /// [`OpenMode::Read`] (a remote frame is read-only); [`Error::OutOfRange`] for a URL that
    /// is not `http(s)://`; [`Error::Remote`] naming the URL and the status when the server
    /// refuses or cannot be reached; as [`SChunk::from_io`] for a malformed frame.
    #[cfg(feature = "remote")]
    pub fn open_remote(
        url: &str,
        opts: &OpenOptions,
        remote: &crate::frame::RemoteOptions,
    ) -> Result<SChunk> {
        if opts.mode != OpenMode::Read {
            let what = "a remote frame opens read-only";
            return Err(Error::in_file(url, Error::Unsupported { what }));
        }
        let io = crate::frame::RemoteIo::open(url, remote)?;
        let read = OpenOptions::new(OpenMode::Read).with_context(opts.context.clone());
        Self::from_io(Box::new(io), &read)
    }

    /// Opens the frame held by `io` (any [`FrameIo`] backend, e.g.
    /// [`crate::frame::RemoteIo`]) as `opts` say.
    ///
    /// # Errors
    /// As [`SChunk::open_with`].
    pub fn from_io(io: Box<dyn FrameIo>, opts: &OpenOptions) -> Result<SChunk> {
        let ctx = opts.context.clone();
        // As C-Blosc2: a reopened frame records the process's default thread count.
        let nt = i16::try_from(ctx.runtime().nthreads()).unwrap_or(i16::MAX);
        let mut frame = Frame::open(io, opts.mode != OpenMode::Read, opts.sync, ctx)?;
        frame.set_header_nthreads(nt, nt);
        Ok(Self::wrap(frame, opts.mode))
    }

    /// A super-chunk over a copy of the contiguous frame `bytes`, in memory, read-write, on
    /// the global context; `frame_len` must equal `bytes.len()` (as
    /// `blosc2_schunk_from_buffer` requires).
    ///
    /// # Errors
    /// [`Error::Frame`] for a malformed frame or a length mismatch.
    pub fn from_cframe(bytes: Vec<u8>) -> Result<SChunk> {
        Self::from_cframe_with(bytes, &OpenOptions::new(OpenMode::ReadWrite))
    }

    /// [`SChunk::from_cframe`] in the mode and on the context of `opts` (a frame in memory
    /// has nothing to sync).
    ///
    /// # Errors
    /// As [`SChunk::from_cframe`].
    pub fn from_cframe_with(bytes: Vec<u8>, opts: &OpenOptions) -> Result<SChunk> {
        let len = bytes.len() as u64;
        let s = Self::from_io(
            Box::new(MemIo::from_frame(bytes)),
            &opts.clone().with_sync(SyncPolicy::None),
        )?;
        if s.frame.frame_len() != len {
            let frame_len = s.frame.frame_len();
            let buffer = Expected::Exactly(crate::error::to_i64(len));
            let what = "frame_len (the buffer's length)";
            return Err(Error::frame(
                "<memory>",
                Error::header(what, frame_len, buffer),
            ));
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
    /// parameters, metalayers, vlmetalayers, chunks and context are this one's, chunks copied
    /// as they are stored).
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
            context: self.ctx().clone(),
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
        let rt = self.ctx().runtime().nthreads();
        let nt = |n: usize| i16::try_from(if n == 0 { rt } else { n }).unwrap_or(i16::MAX);
        self.frame.set_header_nthreads(nt(compress), nt(decompress));
    }

    /// The registry and runtime this super-chunk works on.
    #[must_use]
    pub fn context(&self) -> &Context {
        self.frame.ctx()
    }

    /// [`SChunk::context`], for the modules of the super-chunk.
    fn ctx(&self) -> &Context {
        self.frame.ctx()
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

    /// True when the frame's store is reached over a network, where reads are gathered into
    /// few requests ([`FrameIo::batches_reads`]).
    #[must_use]
    pub fn batches_reads(&self) -> bool {
        self.frame.io().batches_reads()
    }

    /// Everything the frame's store moved since it was opened, for stores that count it (a
    /// remote frame); `None` for local files and memory.
    #[must_use]
    pub fn traffic(&self) -> Option<crate::frame::Traffic> {
        self.frame.io().traffic()
    }

    /// A selection of the b2nd array in this super-chunk, cut by the server the frame comes
    /// from ([`crate::frame::FrameIo::server_selection`]); `None` for local frames.
    ///
    /// # Errors
    /// The store's failure to reach its server.
    #[must_use]
    pub fn server_selection(
        &self,
        sel: &str,
        max_len: u64,
    ) -> Option<Result<(Vec<u8>, crate::frame::Traffic)>> {
        self.frame.io().server_selection(sel, max_len)
    }

    /// The identity (device, inode, size, times) of the frame's file — a sparse frame's
    /// index — when it was opened; `None` in memory. What names a dataset's version in
    /// caches, with the frame's state.
    #[must_use]
    pub fn identity(&self) -> Option<crate::frame::FileIdentity> {
        self.frame.io().identity()
    }

    /// For a remote frame, what names the version of its file when it was opened (URL,
    /// `ETag` or `Last-Modified`, length); `None` for local frames and for servers that send
    /// no validator. With the frame's state, it names the dataset's version in caches.
    #[must_use]
    pub fn validator(&self) -> Option<String> {
        self.frame.io().validator()
    }

    /// Refuses a change the open mode does not allow (`append`: the change only adds chunks
    /// at the end).
    /// Refuses (as a write would) when the super-chunk is not open read-write: for callers
    /// that check before a change of many steps.
    ///
    /// # Errors
    /// [`Error::Io`] (write, permission denied) in read or append mode.
    pub(crate) fn check_writable(&self) -> Result<()> {
        self.check_mode(false)
    }

    fn check_mode(&self, append: bool) -> Result<()> {
        match self.mode {
            OpenMode::ReadWrite => Ok(()),
            OpenMode::Append if append => Ok(()),
            m => Err(Error::refused(
                self.path(),
                IoOp::Write,
                std::io::ErrorKind::PermissionDenied,
                &format!("not allowed in {m:?} mode"),
            )),
        }
    }

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

#[cfg(test)]
pub(super) mod testkit {
    //! Super-chunks in memory for the tests of this module and its children.

    use super::{SChunk, SChunkOptions};
    use crate::chunk::CParams;
    use crate::format::ids::CodecId;

    /// Options for a super-chunk of u32 items in chunks of `chunk_items` items, 4 KiB blocks.
    pub fn opts(chunk_items: usize) -> SChunkOptions {
        SChunkOptions {
            cparams: CParams {
                codec: CodecId::LZ4,
                typesize: 4,
                blocksize: 4096,
                ..CParams::default()
            },
            chunksize: chunk_items * 4,
            ..SChunkOptions::default()
        }
    }

    /// The u32 items `from..to`, as bytes.
    pub fn items(from: u32, to: u32) -> Vec<u8> {
        (from..to).flat_map(u32::to_le_bytes).collect()
    }

    /// A super-chunk in memory holding the items `0..n` in chunks of `chunk_items`.
    pub fn counting(n: u32, chunk_items: usize) -> SChunk {
        let mut s = SChunk::new(&opts(chunk_items)).unwrap();
        s.append_data(&items(0, n)).unwrap();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::{counting, items, opts};
    use super::*;
    use crate::format::chunk::SpecialType;
    use crate::format::ids::{CodecId, FilterId};

    #[test]
    fn the_header_keeps_the_cparams() {
        let cp = CParams {
            codec: CodecId::ZSTD,
            codec_meta: 3,
            clevel: 7,
            typesize: 4,
            blocksize: 8192,
            splitmode: SplitMode::Never,
            filters: [0, 0, 0, 0, 3, 1].map(FilterId),
            filters_meta: [0, 0, 0, 0, 1, 0],
            use_dict: true,
            nthreads: 3,
            nd: None,
        };
        let h = header_from(&cp, &DParams::default(), 5).unwrap();
        assert_eq!((h.nthreads_c, h.nthreads_d), (3, 5));
        assert_eq!(h.other_flags2 & 1, 1);
        assert_eq!(cparams_from(&h), CParams { nthreads: 0, ..cp });
        let bad = CParams {
            typesize: 0,
            ..CParams::default()
        };
        assert!(header_from(&bad, &DParams::default(), 1).is_err());
    }

    #[test]
    fn creation_checks_the_metalayers() {
        let with = |names: &[&str]| SChunkOptions {
            metalayers: names.iter().map(|n| (n.to_string(), vec![1])).collect(),
            ..opts(100)
        };
        let e = SChunk::new(&with(&["a", "b", "a"])).unwrap_err();
        assert!(
            matches!(e, Error::Duplicate { ref name, .. } if name == "\"a\""),
            "{e}"
        );
        let names: Vec<String> = (0..=MAX_METALAYERS).map(|i| format!("m{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let e = SChunk::new(&with(&refs)).unwrap_err();
        assert_eq!(e, Error::range("metalayers", 17, Expected::AtMost(16)));
        assert!(SChunk::new(&with(&[&"x".repeat(32)])).is_err());
        let s = SChunk::new(&with(&refs[..MAX_METALAYERS])).unwrap();
        assert_eq!(s.header().metalayers.len(), MAX_METALAYERS);
        assert_eq!(
            (s.nchunks(), s.chunksize(), s.mode()),
            (0, None, OpenMode::ReadWrite)
        );
    }

    #[test]
    fn a_cframe_must_be_the_whole_frame() {
        let s = counting(1000, 300);
        let mut bytes = s.to_cframe().unwrap();
        assert_eq!(bytes.len() as u64, s.frame_len());
        let back = SChunk::from_cframe(bytes.clone()).unwrap();
        assert_eq!(back.decompress_all().unwrap(), items(0, 1000));
        bytes.push(0);
        let e = SChunk::from_cframe(bytes).unwrap_err();
        assert!(
            matches!(
                e.root(),
                Error::InvalidHeader {
                    value: 1354,
                    expected: Expected::Exactly(1355),
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn a_copy_is_the_same_frame() {
        let mut s = counting(1000, 300);
        s.fill_special(0, SpecialType::Zero, 1200).unwrap();
        s.vlmeta_set("v", b"value", None).unwrap();
        let copy = s
            .copy_to(&Location::Memory, &SChunkOptions::default())
            .unwrap();
        assert_eq!(copy.to_cframe().unwrap(), s.to_cframe().unwrap());
        assert_eq!(copy.vlmeta("v").unwrap(), b"value");
        assert_eq!(copy.cparams(), s.cparams());
    }

    #[test]
    fn the_open_mode_limits_the_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.b2frame");
        let s = counting(1000, 300);
        s.copy_to(&Location::File(path.clone()), &SChunkOptions::default())
            .unwrap()
            .close()
            .unwrap();
        let mut a = SChunk::open(&path, OpenMode::Append).unwrap();
        let chunk = a.chunk(3).unwrap();
        assert!(a.check_mode(true).is_ok());
        let e = a.update_chunk(0, &chunk).unwrap_err();
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
        assert!(a.meta_add("m", b"x").is_err());
        let mut r = SChunk::open(&path, OpenMode::Read).unwrap();
        assert!(r.check_mode(true).is_err());
        assert!(r.append_chunk(&chunk).is_err());
        assert_eq!(r.nchunks(), 4);
    }

    #[test]
    fn set_nthreads_is_recorded_in_the_header() {
        let mut s = counting(10, 10);
        s.set_nthreads(3, 2);
        assert_eq!((s.cparams().nthreads, s.dparams().nthreads), (3, 2));
        assert_eq!((s.header().nthreads_c, s.header().nthreads_d), (3, 2));
        s.set_nthreads(0, 0);
        let rt = s.ctx().runtime().nthreads() as i16;
        assert_eq!((s.header().nthreads_c, s.header().nthreads_d), (rt, rt));
    }
}
