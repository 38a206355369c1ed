//! [`FrameIo`]: the byte stores a frame lives in, and the library's only file I/O.
//!
//! A store holds named objects ([`Obj`]): the frame itself (a contiguous frame file, or a
//! sparse frame's `chunks.b2frame`) and, for sparse frames, one object per chunk file
//! (`%08X.chunk`). Backends: [`FileIo`] (a contiguous frame file), [`DirIo`] (a sparse frame
//! directory), [`MemIo`] (memory, either layout) and, for durability tests,
//! [`super::FaultyIo`], which fails after a chosen number of writes.
//!
//! Readers hand a store every byte range one step needs at once ([`FrameIo::read_many`]):
//! local stores read them one after the other, a network store coalesces them into few
//! requests.
//!
//! Files are regular files only: a device, FIFO or socket is refused when opened (without
//! waiting for a FIFO's writer), so that no frame is read from `/dev/zero` forever, and a
//! frame is never renamed over anything but a regular file. A writable frame opened through a
//! symbolic link is written at the link's target, which stays linked.

use crate::error::{Error, IoOp, Result};
use crate::format::frame::FrameType;
use std::collections::BTreeMap;
use std::fs::{self, File, FileType, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

/// One object of a frame store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Obj {
    /// The frame: a contiguous frame, or a sparse frame's `chunks.b2frame` index.
    Frame,
    /// Chunk file number `n` of a sparse frame (`%08X.chunk`).
    Chunk(u64),
}

/// One read of a batch handed to [`FrameIo::read_many`]: `buf.len()` bytes of `obj` at `pos`.
#[derive(Debug)]
pub struct ReadReq<'a> {
    /// The object read.
    pub obj: Obj,
    /// Where the bytes start in it.
    pub pos: u64,
    /// Filled with the bytes.
    pub buf: &'a mut [u8],
}

/// What reads moved from a store: bytes of the stored objects (for a network store, the
/// file bytes received, gaps between coalesced ranges included, protocol framing not), and
/// the reads (local stores) or requests (network stores) that moved them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Bytes moved.
    pub bytes: u64,
    /// Reads or requests.
    pub requests: u64,
}

impl std::ops::AddAssign for Traffic {
    fn add_assign(&mut self, other: Traffic) {
        self.bytes += other.bytes;
        self.requests += other.requests;
    }
}

/// A store of frame bytes: random-access objects that can be read, written, truncated,
/// flushed to stable storage, replaced whole atomically, and removed.
///
/// Reads take `&self` so that several threads may read at once; writes take `&mut self`.
pub trait FrameIo: Send + Sync {
    /// Fills `buf` with the bytes of `obj` at `pos`.
    ///
    /// # Errors
    /// [`Error::Frame`] when the object ends before `pos + buf.len()`; [`Error::Io`] (read or
    /// open) when the system fails.
    fn read_at(&self, obj: Obj, pos: u64, buf: &mut [u8]) -> Result<()>;
    /// Fills every request's buffer, and returns what that moved. The default reads them one
    /// by one with [`FrameIo::read_at`]; a network store sends them in as few requests as it
    /// can.
    ///
    /// # Errors
    /// As [`FrameIo::read_at`], for the first read that fails.
    fn read_many(&self, reqs: &mut [ReadReq<'_>]) -> Result<Traffic> {
        let mut moved = Traffic::default();
        for r in reqs.iter_mut() {
            self.read_at(r.obj, r.pos, r.buf)?;
            moved += Traffic {
                bytes: r.buf.len() as u64,
                requests: 1,
            };
        }
        Ok(moved)
    }
    /// True when one [`FrameIo::read_many`] of many ranges costs much less than as many
    /// single reads (a network store): readers then gather the ranges of many chunks into one
    /// call instead of reading chunks in parallel. False by default.
    fn batches_reads(&self) -> bool {
        false
    }
    /// Everything the store moved since it was opened, for stores that count it (network
    /// stores); `None` by default.
    fn traffic(&self) -> Option<Traffic> {
        None
    }
    /// The selection `sel` of the b2nd array this frame holds, cut by the server that holds
    /// the frame (a data service that slices arrays, as stratad and Caterva2 do) and sent as
    /// a b2nd contiguous frame of at most `max_len` bytes, with what the request moved.
    /// `sel` is one `start:stop` per dimension, joined by commas. `None` when the store
    /// cannot ask for that (local stores, servers that only send file bytes, an answer
    /// longer than `max_len`, a server that refused): the caller then reads the blocks
    /// itself. The default is `None`.
    ///
    /// # Errors
    /// A store's failure to reach its server ([`Error::Remote`]).
    fn server_selection(&self, sel: &str, max_len: u64) -> Option<Result<(Vec<u8>, Traffic)>> {
        let _ = (sel, max_len);
        None
    }
    /// The length of `obj` in bytes.
    ///
    /// # Errors
    /// [`Error::Io`] (open) when it does not exist.
    fn len(&self, obj: Obj) -> Result<u64>;
    /// Writes `data` at `pos` of `obj`, extending it if needed (creating a chunk object).
    ///
    /// # Errors
    /// [`Error::Io`] (write).
    fn write_at(&mut self, obj: Obj, pos: u64, data: &[u8]) -> Result<()>;
    /// Truncates or extends `obj` to `len` bytes.
    ///
    /// # Errors
    /// [`Error::Io`] (truncate).
    fn set_len(&mut self, obj: Obj, len: u64) -> Result<()>;
    /// Flushes `obj` to stable storage (fsync).
    ///
    /// # Errors
    /// [`Error::Io`] (sync).
    fn sync(&mut self, obj: Obj) -> Result<()>;
    /// Replaces the whole content of `obj` by the concatenation of `parts`, atomically: a
    /// reader sees the old content or the new one, never a mix (files: a temporary file
    /// renamed over the old one). With `durable`, the new content and the rename are on
    /// stable storage before this returns.
    ///
    /// # Errors
    /// [`Error::Io`] (write, sync or remove).
    fn replace(&mut self, obj: Obj, parts: &[&[u8]], durable: bool) -> Result<()>;
    /// Removes `obj` (chunk objects only; removing a missing one is not an error).
    ///
    /// # Errors
    /// [`Error::Io`] (remove).
    fn remove(&mut self, obj: Obj) -> Result<()>;
    /// The path of `obj` for messages (`<memory>` for memory stores).
    fn path(&self, obj: Obj) -> String;
    /// The frame layout this store holds.
    fn frame_type(&self) -> FrameType;
    /// The identity of the frame's file when the store was opened (a contiguous frame's file,
    /// a sparse frame's index); `None` for stores without a file.
    fn identity(&self) -> Option<FileIdentity> {
        None
    }
    /// What names the version of a remote frame's file as it was opened (its URL, `ETag` or
    /// `Last-Modified`, and length); `None` for local stores, and for a server that sends
    /// neither validator.
    fn validator(&self) -> Option<String> {
        None
    }
}

/// The identity of a file's content at one time: if any field changes, so may the content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FileIdentity {
    /// Device.
    pub dev: u64,
    /// Inode.
    pub ino: u64,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, ns since the epoch.
    pub mtime_ns: i128,
    /// Status change time, ns since the epoch.
    pub ctime_ns: i128,
}

impl FileIdentity {
    /// The identity in `meta` (from `File::metadata`, i.e. `fstat` of an open file).
    #[must_use]
    pub fn of(meta: &std::fs::Metadata) -> FileIdentity {
        use std::os::unix::fs::MetadataExt;
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        FileIdentity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
        }
    }
}

fn io_err(path: &Path, op: IoOp, e: std::io::Error) -> Error {
    Error::io(path.display().to_string(), op, e)
}

/// Reading `len` bytes at `pos` of an object of `have` bytes.
fn short_read(path: String, pos: u64, len: usize, have: u64) -> Error {
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    Error::frame(
        path,
        Error::Truncated {
            what: "the file",
            needed: size(pos.saturating_add(len as u64)),
            available: size(have),
        },
    )
}

/// What a file of type `kind` is, for messages: "a regular file", "a directory", "a
/// symbolic link", "a character device", "a block device", "a FIFO", "a socket".
#[must_use]
pub fn file_kind(kind: FileType) -> &'static str {
    if kind.is_file() {
        "a regular file"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

fn not_regular(path: &Path, kind: FileType) -> Error {
    Error::refused(
        path.display().to_string(),
        IoOp::Open,
        ErrorKind::InvalidInput,
        &format!(
            "{} is not a regular file, the only kind a frame is stored in",
            file_kind(kind)
        ),
    )
}

/// Opens the regular file `path`, following a symbolic link in its last component only when
/// `follow`; `create` makes a missing one. A FIFO is opened without waiting for its writer
/// (O_NONBLOCK, which regular files ignore) and, as any other non-regular file (a symbolic
/// link not followed included), refused.
fn open_regular(path: &Path, write: bool, create: bool, follow: bool) -> Result<File> {
    let flags = if follow {
        libc::O_NONBLOCK
    } else {
        libc::O_NONBLOCK | libc::O_NOFOLLOW
    };
    let file = OpenOptions::new()
        .read(true)
        .write(write)
        .create(create)
        .truncate(false)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| match fs::symlink_metadata(path) {
            Ok(m) if !follow && e.raw_os_error() == Some(libc::ELOOP) => {
                not_regular(path, m.file_type())
            }
            _ => io_err(path, IoOp::Open, e),
        })?;
    let kind = file
        .metadata()
        .map_err(|e| io_err(path, IoOp::Open, e))?
        .file_type();
    if !kind.is_file() {
        return Err(not_regular(path, kind));
    }
    Ok(file)
}

/// Refuses to replace `path` when it exists as anything but a regular file (a directory,
/// symbolic link, device, FIFO or socket): a frame is renamed into place, which would replace
/// that file itself.
fn check_replaceable(path: &Path) -> Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => Err(Error::refused(
            path.display().to_string(),
            IoOp::Open,
            ErrorKind::InvalidInput,
            &format!(
                "{} is not a regular file: a frame replaces only a regular file",
                file_kind(m.file_type())
            ),
        )),
        _ => Ok(()),
    }
}

fn read_file_at(file: &File, path: &Path, pos: u64, buf: &mut [u8]) -> Result<()> {
    match file.read_exact_at(buf, pos) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
            let have = file.metadata().map(|m| m.len()).unwrap_or(0);
            Err(short_read(path.display().to_string(), pos, buf.len(), have))
        }
        Err(e) => Err(io_err(path, IoOp::Read, e)),
    }
}

/// Writes `parts` to `tmp`, optionally fsyncs it, renames it to `path`, optionally fsyncs the
/// directory.
fn replace_file(path: &Path, parts: &[&[u8]], durable: bool) -> Result<()> {
    let mut name = path.as_os_str().to_owned();
    name.push(".strata-tmp");
    let tmp = PathBuf::from(name);
    check_replaceable(path)?;
    // A leftover of an interrupted write goes; whatever else has the name (a link planted
    // there) is not followed: the file is created new.
    if fs::symlink_metadata(&tmp).is_ok_and(|m| !m.is_dir()) {
        fs::remove_file(&tmp).map_err(|e| io_err(&tmp, IoOp::Remove, e))?;
    }
    let f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| io_err(&tmp, IoOp::Open, e))?;
    let mut pos = 0u64;
    for p in parts {
        f.write_all_at(p, pos)
            .map_err(|e| io_err(&tmp, IoOp::Write, e))?;
        pos += p.len() as u64;
    }
    if durable {
        f.sync_all().map_err(|e| io_err(&tmp, IoOp::Sync, e))?;
    }
    drop(f);
    fs::rename(&tmp, path).map_err(|e| io_err(path, IoOp::Remove, e))?;
    if durable {
        sync_dir(path)?;
    }
    Ok(())
}

/// Fsyncs the directory holding `path` (makes a rename or a new file durable).
fn sync_dir(path: &Path) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let d = File::open(dir).map_err(|e| io_err(dir, IoOp::Open, e))?;
    d.sync_all().map_err(|e| io_err(dir, IoOp::Sync, e))
}

/// A contiguous frame in one file (`.b2frame`, `.b2nd`).
#[derive(Debug)]
pub struct FileIo {
    path: PathBuf,
    file: File,
    writable: bool,
    identity: Option<FileIdentity>,
}

impl FileIo {
    /// Opens an existing regular file, for reading only or for reading and writing (through a
    /// symbolic link: its target, where the frame's rewrites then go).
    ///
    /// # Errors
    /// [`Error::Io`] (open) naming the file, also for a file that is not a regular file.
    pub fn open(path: impl AsRef<Path>, writable: bool) -> Result<Self> {
        let mut path = path.as_ref().to_path_buf();
        if writable && fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            path = fs::canonicalize(&path).map_err(|e| io_err(&path, IoOp::Open, e))?;
        }
        let file = open_regular(&path, writable, false, true)?;
        let identity = file.metadata().ok().map(|m| FileIdentity::of(&m));
        Ok(FileIo {
            path,
            file,
            writable,
            identity,
        })
    }

    /// Creates the file with `parts` as its content, atomically (through a temporary file),
    /// and opens it for reading and writing. Fails if the file exists and `overwrite` is false.
    ///
    /// # Errors
    /// [`Error::Io`] (open, write, sync) naming the file.
    pub fn create(
        path: impl AsRef<Path>,
        parts: &[&[u8]],
        overwrite: bool,
        durable: bool,
    ) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        if !overwrite && path.exists() {
            return Err(Error::refused(
                path.display().to_string(),
                IoOp::Open,
                ErrorKind::AlreadyExists,
                "already exists (remove it or allow overwriting)",
            ));
        }
        replace_file(&path, parts, durable)?;
        Self::open(path, true)
    }

    fn check(&self, obj: Obj) -> Result<()> {
        match obj {
            Obj::Frame => Ok(()),
            Obj::Chunk(_) => Err(Error::Internal {
                what: "a chunk file was asked of a contiguous frame",
            }),
        }
    }

    fn check_write(&self, obj: Obj) -> Result<()> {
        self.check(obj)?;
        if self.writable {
            Ok(())
        } else {
            Err(Error::refused(
                self.path.display().to_string(),
                IoOp::Write,
                ErrorKind::PermissionDenied,
                "opened read-only",
            ))
        }
    }
}

impl FrameIo for FileIo {
    fn read_at(&self, obj: Obj, pos: u64, buf: &mut [u8]) -> Result<()> {
        self.check(obj)?;
        read_file_at(&self.file, &self.path, pos, buf)
    }

    fn len(&self, obj: Obj) -> Result<u64> {
        self.check(obj)?;
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(|e| io_err(&self.path, IoOp::Read, e))
    }

    fn write_at(&mut self, obj: Obj, pos: u64, data: &[u8]) -> Result<()> {
        self.check_write(obj)?;
        self.file
            .write_all_at(data, pos)
            .map_err(|e| io_err(&self.path, IoOp::Write, e))
    }

    fn set_len(&mut self, obj: Obj, len: u64) -> Result<()> {
        self.check_write(obj)?;
        self.file
            .set_len(len)
            .map_err(|e| io_err(&self.path, IoOp::Truncate, e))
    }

    fn sync(&mut self, obj: Obj) -> Result<()> {
        self.check(obj)?;
        self.file
            .sync_data()
            .map_err(|e| io_err(&self.path, IoOp::Sync, e))?;
        sync_dir(&self.path)
    }

    fn replace(&mut self, obj: Obj, parts: &[&[u8]], durable: bool) -> Result<()> {
        self.check_write(obj)?;
        replace_file(&self.path, parts, durable)?;
        // The name now refers to the new file: reopen it.
        self.file = open_regular(&self.path, true, false, true)?;
        Ok(())
    }

    fn remove(&mut self, obj: Obj) -> Result<()> {
        self.check_write(obj)
    }

    fn path(&self, _obj: Obj) -> String {
        self.path.display().to_string()
    }

    fn frame_type(&self) -> FrameType {
        FrameType::Contiguous
    }

    fn identity(&self) -> Option<FileIdentity> {
        self.identity
    }
}

/// True when `s` is an `http://` or `https://` URL (what opens a remote frame).
#[must_use]
pub fn is_url(s: &str) -> bool {
    let lower = |n: usize| s.get(..n).map(str::to_ascii_lowercase);
    lower(7).as_deref() == Some("http://") || lower(8).as_deref() == Some("https://")
}

/// The name of the index file of a sparse frame.
pub const SFRAME_INDEX: &str = "chunks.b2frame";

/// A sparse frame: a directory holding `chunks.b2frame` and `%08X.chunk` files. Its chunk
/// files are opened without following a symbolic link in their name: one there is refused
/// as not a regular file.
#[derive(Debug)]
pub struct DirIo {
    dir: PathBuf,
    writable: bool,
    identity: Option<FileIdentity>,
}

impl DirIo {
    /// Opens an existing sparse frame directory.
    ///
    /// # Errors
    /// [`Error::Io`] (open) when the directory or its `chunks.b2frame` is missing.
    pub fn open(dir: impl AsRef<Path>, writable: bool) -> Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        let index = dir.join(SFRAME_INDEX);
        if !index.is_file() {
            return Err(Error::refused(
                index.display().to_string(),
                IoOp::Open,
                ErrorKind::NotFound,
                "no such file (not a sparse frame directory)",
            ));
        }
        let identity = fs::metadata(&index).ok().map(|m| FileIdentity::of(&m));
        Ok(DirIo {
            dir,
            writable,
            identity,
        })
    }

    /// Creates the directory (which must not exist unless `overwrite`, in which case its
    /// `chunks.b2frame` and chunk files are removed) with `index` as `chunks.b2frame`.
    ///
    /// # Errors
    /// [`Error::Io`] naming the directory.
    pub fn create(
        dir: impl AsRef<Path>,
        index: &[&[u8]],
        overwrite: bool,
        durable: bool,
    ) -> Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        if let Ok(m) = fs::symlink_metadata(&dir) {
            if !m.is_dir() {
                return Err(Error::refused(
                    dir.display().to_string(),
                    IoOp::Open,
                    ErrorKind::InvalidInput,
                    &format!(
                        "{} is not a directory: a sparse frame replaces only a directory",
                        file_kind(m.file_type())
                    ),
                ));
            }
            if !overwrite {
                return Err(Error::refused(
                    dir.display().to_string(),
                    IoOp::Open,
                    ErrorKind::AlreadyExists,
                    "already exists (remove it or allow overwriting)",
                ));
            }
            fs::remove_dir_all(&dir).map_err(|e| io_err(&dir, IoOp::Remove, e))?;
        }
        fs::create_dir_all(&dir).map_err(|e| io_err(&dir, IoOp::Open, e))?;
        replace_file(&dir.join(SFRAME_INDEX), index, durable)?;
        Ok(DirIo {
            dir,
            writable: true,
            identity: None,
        })
    }

    fn file(&self, obj: Obj) -> PathBuf {
        match obj {
            Obj::Frame => self.dir.join(SFRAME_INDEX),
            Obj::Chunk(n) => self.dir.join(format!("{n:08X}.chunk")),
        }
    }

    fn open_file(&self, obj: Obj, write: bool) -> Result<(PathBuf, File)> {
        let path = self.file(obj);
        if write && !self.writable {
            return Err(Error::refused(
                path.display().to_string(),
                IoOp::Write,
                ErrorKind::PermissionDenied,
                "opened read-only",
            ));
        }
        // The library writes a sparse frame's files by renaming them into place, never as
        // symbolic links: one found there is refused, not read through (a reader serving
        // the directory must not leave it).
        let f = open_regular(&path, write, write, false)?;
        Ok((path, f))
    }
}

impl FrameIo for DirIo {
    fn read_at(&self, obj: Obj, pos: u64, buf: &mut [u8]) -> Result<()> {
        let (path, f) = self.open_file(obj, false)?;
        read_file_at(&f, &path, pos, buf)
    }

    fn len(&self, obj: Obj) -> Result<u64> {
        let path = self.file(obj);
        let m = fs::symlink_metadata(&path).map_err(|e| io_err(&path, IoOp::Open, e))?;
        if !m.is_file() {
            return Err(not_regular(&path, m.file_type()));
        }
        Ok(m.len())
    }

    fn write_at(&mut self, obj: Obj, pos: u64, data: &[u8]) -> Result<()> {
        let (path, f) = self.open_file(obj, true)?;
        f.write_all_at(data, pos)
            .map_err(|e| io_err(&path, IoOp::Write, e))
    }

    fn set_len(&mut self, obj: Obj, len: u64) -> Result<()> {
        let (path, f) = self.open_file(obj, true)?;
        f.set_len(len).map_err(|e| io_err(&path, IoOp::Truncate, e))
    }

    fn sync(&mut self, obj: Obj) -> Result<()> {
        let (path, f) = self.open_file(obj, false)?;
        f.sync_all().map_err(|e| io_err(&path, IoOp::Sync, e))?;
        sync_dir(&path)
    }

    fn replace(&mut self, obj: Obj, parts: &[&[u8]], durable: bool) -> Result<()> {
        let path = self.file(obj);
        if !self.writable {
            return Err(Error::refused(
                path.display().to_string(),
                IoOp::Write,
                ErrorKind::PermissionDenied,
                "opened read-only",
            ));
        }
        replace_file(&path, parts, durable)
    }

    fn remove(&mut self, obj: Obj) -> Result<()> {
        let path = self.file(obj);
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err(&path, IoOp::Remove, e)),
        }
    }

    fn path(&self, obj: Obj) -> String {
        self.file(obj).display().to_string()
    }

    fn frame_type(&self) -> FrameType {
        FrameType::Sparse
    }

    fn identity(&self) -> Option<FileIdentity> {
        self.identity
    }
}

/// The objects of a [`MemIo`] store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemStore {
    /// The frame bytes.
    pub frame: Vec<u8>,
    /// Chunk objects of a sparse layout, by number.
    pub chunks: BTreeMap<u64, Vec<u8>>,
}

/// A frame in memory. Clones share the same bytes ([`MemIo::snapshot`] copies them), so a
/// test can look at what a writer left behind.
#[derive(Debug, Clone)]
pub struct MemIo {
    store: Arc<Mutex<MemStore>>,
    frame_type: FrameType,
}

impl MemIo {
    /// A store holding `store`, of layout `frame_type`.
    #[must_use]
    pub fn new(store: MemStore, frame_type: FrameType) -> Self {
        MemIo {
            store: Arc::new(Mutex::new(store)),
            frame_type,
        }
    }

    /// A contiguous frame held in `bytes`.
    #[must_use]
    pub fn from_frame(bytes: Vec<u8>) -> Self {
        Self::new(
            MemStore {
                frame: bytes,
                chunks: BTreeMap::new(),
            },
            FrameType::Contiguous,
        )
    }

    /// A copy of the current objects.
    #[must_use]
    pub fn snapshot(&self) -> MemStore {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MemStore> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn mem_obj(s: &MemStore, obj: Obj) -> Result<&Vec<u8>> {
    match obj {
        Obj::Frame => Ok(&s.frame),
        Obj::Chunk(n) => s.chunks.get(&n).ok_or_else(|| {
            Error::refused(
                format!("<memory>/{n:08X}.chunk"),
                IoOp::Open,
                ErrorKind::NotFound,
                "no such chunk object",
            )
        }),
    }
}

fn mem_obj_mut(s: &mut MemStore, obj: Obj) -> &mut Vec<u8> {
    match obj {
        Obj::Frame => &mut s.frame,
        Obj::Chunk(n) => s.chunks.entry(n).or_default(),
    }
}

impl FrameIo for MemIo {
    fn read_at(&self, obj: Obj, pos: u64, buf: &mut [u8]) -> Result<()> {
        let s = self.lock();
        let v = mem_obj(&s, obj)?;
        let start = usize::try_from(pos).unwrap_or(usize::MAX);
        match start
            .checked_add(buf.len())
            .and_then(|end| v.get(start..end))
        {
            Some(src) => {
                buf.copy_from_slice(src);
                Ok(())
            }
            None => Err(short_read(self.path(obj), pos, buf.len(), v.len() as u64)),
        }
    }

    fn len(&self, obj: Obj) -> Result<u64> {
        Ok(mem_obj(&self.lock(), obj)?.len() as u64)
    }

    fn write_at(&mut self, obj: Obj, pos: u64, data: &[u8]) -> Result<()> {
        let mut s = self.lock();
        let v = mem_obj_mut(&mut s, obj);
        let start = usize::try_from(pos).map_err(|_| Error::MemoryAlloc(usize::MAX))?;
        let end = start + data.len();
        if v.len() < end {
            crate::alloc::resize(v, end, 0)?;
        }
        v[start..end].copy_from_slice(data);
        Ok(())
    }

    fn set_len(&mut self, obj: Obj, len: u64) -> Result<()> {
        let mut s = self.lock();
        let len = usize::try_from(len).map_err(|_| Error::MemoryAlloc(usize::MAX))?;
        mem_obj_mut(&mut s, obj).resize(len, 0);
        Ok(())
    }

    fn sync(&mut self, _obj: Obj) -> Result<()> {
        Ok(())
    }

    fn replace(&mut self, obj: Obj, parts: &[&[u8]], _durable: bool) -> Result<()> {
        let mut s = self.lock();
        *mem_obj_mut(&mut s, obj) = parts.concat();
        Ok(())
    }

    fn remove(&mut self, obj: Obj) -> Result<()> {
        if let Obj::Chunk(n) = obj {
            self.lock().chunks.remove(&n);
        }
        Ok(())
    }

    fn path(&self, obj: Obj) -> String {
        match obj {
            Obj::Frame => "<memory>".into(),
            Obj::Chunk(n) => format!("<memory>/{n:08X}.chunk"),
        }
    }

    fn frame_type(&self) -> FrameType {
        self.frame_type
    }
}
