//! [`FrameIo`]: the byte stores a frame lives in, and the library's only file I/O.
//!
//! A store holds named objects ([`Obj`]): the frame itself (a contiguous frame file, or a
//! sparse frame's `chunks.b2frame`) and, for sparse frames, one object per chunk file
//! (`%08X.chunk`). Backends: [`FileIo`] (a contiguous frame file), [`DirIo`] (a sparse frame
//! directory), [`MemIo`] (memory, either layout) and, for durability tests,
//! [`super::FaultyIo`], which fails after a chosen number of writes.

use crate::error::{Error, IoOp, Result};
use crate::format::frame::FrameType;
use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
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
}

fn io_err(path: &Path, op: IoOp, e: &std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        op,
        message: e.to_string(),
    }
}

fn short_read(path: String, pos: u64, len: usize, have: u64) -> Error {
    Error::Frame {
        path,
        what: format!(
            "truncated: reading {len} bytes at byte {pos} needs {} bytes, the file has {have}",
            pos.saturating_add(len as u64)
        ),
    }
}

fn read_file_at(file: &File, path: &Path, pos: u64, buf: &mut [u8]) -> Result<()> {
    match file.read_exact_at(buf, pos) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            let have = file.metadata().map(|m| m.len()).unwrap_or(0);
            Err(short_read(path.display().to_string(), pos, buf.len(), have))
        }
        Err(e) => Err(io_err(path, IoOp::Read, &e)),
    }
}

/// Writes `parts` to `tmp`, optionally fsyncs it, renames it to `path`, optionally fsyncs the
/// directory.
fn replace_file(path: &Path, parts: &[&[u8]], durable: bool) -> Result<()> {
    let mut name = path.as_os_str().to_owned();
    name.push(".strata-tmp");
    let tmp = PathBuf::from(name);
    let f = File::create(&tmp).map_err(|e| io_err(&tmp, IoOp::Open, &e))?;
    let mut pos = 0u64;
    for p in parts {
        f.write_all_at(p, pos)
            .map_err(|e| io_err(&tmp, IoOp::Write, &e))?;
        pos += p.len() as u64;
    }
    if durable {
        f.sync_all().map_err(|e| io_err(&tmp, IoOp::Sync, &e))?;
    }
    drop(f);
    fs::rename(&tmp, path).map_err(|e| io_err(path, IoOp::Remove, &e))?;
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
    let d = File::open(dir).map_err(|e| io_err(dir, IoOp::Open, &e))?;
    d.sync_all().map_err(|e| io_err(dir, IoOp::Sync, &e))
}

/// A contiguous frame in one file (`.b2frame`, `.b2nd`).
#[derive(Debug)]
pub struct FileIo {
    path: PathBuf,
    file: File,
    writable: bool,
}

impl FileIo {
    /// Opens an existing file, for reading only or for reading and writing.
    ///
    /// # Errors
    /// [`Error::Io`] (open) naming the file.
    pub fn open(path: impl AsRef<Path>, writable: bool) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new()
            .read(true)
            .write(writable)
            .open(&path)
            .map_err(|e| io_err(&path, IoOp::Open, &e))?;
        Ok(FileIo {
            path,
            file,
            writable,
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
            return Err(Error::Io {
                path: path.display().to_string(),
                op: IoOp::Open,
                message: "already exists (remove it or allow overwriting)".into(),
            });
        }
        replace_file(&path, parts, durable)?;
        Self::open(path, true)
    }

    fn check(&self, obj: Obj) -> Result<()> {
        match obj {
            Obj::Frame => Ok(()),
            Obj::Chunk(n) => Err(Error::InvalidParam(format!(
                "{}: a contiguous frame has no chunk file {n}",
                self.path.display()
            ))),
        }
    }

    fn check_write(&self, obj: Obj) -> Result<()> {
        self.check(obj)?;
        if self.writable {
            Ok(())
        } else {
            Err(Error::Io {
                path: self.path.display().to_string(),
                op: IoOp::Write,
                message: "opened read-only".into(),
            })
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
            .map_err(|e| io_err(&self.path, IoOp::Read, &e))
    }

    fn write_at(&mut self, obj: Obj, pos: u64, data: &[u8]) -> Result<()> {
        self.check_write(obj)?;
        self.file
            .write_all_at(data, pos)
            .map_err(|e| io_err(&self.path, IoOp::Write, &e))
    }

    fn set_len(&mut self, obj: Obj, len: u64) -> Result<()> {
        self.check_write(obj)?;
        self.file
            .set_len(len)
            .map_err(|e| io_err(&self.path, IoOp::Truncate, &e))
    }

    fn sync(&mut self, obj: Obj) -> Result<()> {
        self.check(obj)?;
        self.file
            .sync_data()
            .map_err(|e| io_err(&self.path, IoOp::Sync, &e))?;
        sync_dir(&self.path)
    }

    fn replace(&mut self, obj: Obj, parts: &[&[u8]], durable: bool) -> Result<()> {
        self.check_write(obj)?;
        replace_file(&self.path, parts, durable)?;
        // The name now refers to the new file: reopen it.
        self.file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.path)
            .map_err(|e| io_err(&self.path, IoOp::Open, &e))?;
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
}

/// The name of the index file of a sparse frame.
pub const SFRAME_INDEX: &str = "chunks.b2frame";

/// A sparse frame: a directory holding `chunks.b2frame` and `%08X.chunk` files.
#[derive(Debug)]
pub struct DirIo {
    dir: PathBuf,
    writable: bool,
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
            return Err(Error::Io {
                path: index.display().to_string(),
                op: IoOp::Open,
                message: "no such file (not a sparse frame directory)".into(),
            });
        }
        Ok(DirIo { dir, writable })
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
        if dir.exists() {
            if !overwrite {
                return Err(Error::Io {
                    path: dir.display().to_string(),
                    op: IoOp::Open,
                    message: "already exists (remove it or allow overwriting)".into(),
                });
            }
            fs::remove_dir_all(&dir).map_err(|e| io_err(&dir, IoOp::Remove, &e))?;
        }
        fs::create_dir_all(&dir).map_err(|e| io_err(&dir, IoOp::Open, &e))?;
        replace_file(&dir.join(SFRAME_INDEX), index, durable)?;
        Ok(DirIo {
            dir,
            writable: true,
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
            return Err(Error::Io {
                path: path.display().to_string(),
                op: IoOp::Write,
                message: "opened read-only".into(),
            });
        }
        let f = OpenOptions::new()
            .read(true)
            .write(write)
            .create(write)
            .truncate(false)
            .open(&path)
            .map_err(|e| io_err(&path, IoOp::Open, &e))?;
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
        fs::metadata(&path)
            .map(|m| m.len())
            .map_err(|e| io_err(&path, IoOp::Open, &e))
    }

    fn write_at(&mut self, obj: Obj, pos: u64, data: &[u8]) -> Result<()> {
        let (path, f) = self.open_file(obj, true)?;
        f.write_all_at(data, pos)
            .map_err(|e| io_err(&path, IoOp::Write, &e))
    }

    fn set_len(&mut self, obj: Obj, len: u64) -> Result<()> {
        let (path, f) = self.open_file(obj, true)?;
        f.set_len(len)
            .map_err(|e| io_err(&path, IoOp::Truncate, &e))
    }

    fn sync(&mut self, obj: Obj) -> Result<()> {
        let (path, f) = self.open_file(obj, false)?;
        f.sync_all().map_err(|e| io_err(&path, IoOp::Sync, &e))?;
        sync_dir(&path)
    }

    fn replace(&mut self, obj: Obj, parts: &[&[u8]], durable: bool) -> Result<()> {
        let path = self.file(obj);
        if !self.writable {
            return Err(Error::Io {
                path: path.display().to_string(),
                op: IoOp::Write,
                message: "opened read-only".into(),
            });
        }
        replace_file(&path, parts, durable)
    }

    fn remove(&mut self, obj: Obj) -> Result<()> {
        let path = self.file(obj);
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err(&path, IoOp::Remove, &e)),
        }
    }

    fn path(&self, obj: Obj) -> String {
        self.file(obj).display().to_string()
    }

    fn frame_type(&self) -> FrameType {
        FrameType::Sparse
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
        Obj::Chunk(n) => s.chunks.get(&n).ok_or_else(|| Error::Io {
            path: format!("<memory>/{n:08X}.chunk"),
            op: IoOp::Open,
            message: "no such chunk object".into(),
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
            v.try_reserve(end - v.len())
                .map_err(|_| Error::MemoryAlloc(end))?;
            v.resize(end, 0);
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
