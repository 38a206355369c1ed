//! The data roots and the only way files are found under them.
//!
//! A root is a directory opened once (`O_PATH`) at start-up. Every request path is resolved
//! with `openat2(2)` relative to that descriptor, with `RESOLVE_BENEATH` (no `..` or absolute
//! symlink can leave the root) and, unless symlinks are allowed, `RESOLVE_NO_SYMLINKS` (no
//! symlink anywhere on the path); magic links (`/proc/…/fd`) are always refused. The result is
//! an `O_PATH` descriptor whose type is checked with `fstat` before anything is opened for
//! reading, so FIFOs and device files are never opened. Readers then open
//! `/proc/self/fd/<n>`: the very inode that was checked, whatever happened to the path since.
//!
//! Only datasets are served: `.b2nd` and `.b2frame` files and sparse frame directories (a
//! directory holding a `chunks.b2frame` file and nothing but regular files).

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The index file of a sparse frame directory.
pub const SPARSE_INDEX: &str = "chunks.b2frame";
/// Suffixes of the files served as datasets.
pub const DATASET_SUFFIXES: [&str; 2] = [".b2nd", ".b2frame"];
/// Deepest directory a listing descends into.
pub const MAX_LIST_DEPTH: usize = 32;

/// A data root.
#[derive(Debug)]
pub struct Root {
    /// The name clients use (`@public`).
    pub name: String,
    /// The directory, for logs only (never sent to clients).
    pub path: PathBuf,
    /// Readable without a token.
    pub public: bool,
    dir: OwnedFd,
}

/// Why a path cannot be served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FsError {
    /// Missing, a symlink (when they are off) or leaving the root, not a dataset, a FIFO or
    /// a device.
    NotFound,
    /// A listing with more entries than allowed.
    TooLarge,
    /// The system failed (permissions, I/O); the message is for the log.
    Io(String),
}

/// The identity of a stored dataset: device, inode, size, times (the library's; if any of it
/// changes, the dataset is another one).
pub use strata::cache::FileIdentity as Identity;

fn identity_of(st: &rfs::Stat) -> Identity {
    let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
    Identity {
        dev: st.st_dev,
        ino: st.st_ino,
        size: u64::try_from(st.st_size).unwrap_or(0),
        mtime_ns: ns(st.st_mtime, st.st_mtime_nsec as i64),
        ctime_ns: ns(st.st_ctime, st.st_ctime_nsec as i64),
    }
}

/// The modification time of `id`.
#[must_use]
pub fn mtime(id: &Identity) -> SystemTime {
    let ns = id.mtime_ns.max(0) as u128;
    UNIX_EPOCH + Duration::new((ns / 1_000_000_000) as u64, (ns % 1_000_000_000) as u32)
}

/// A resolved path beneath a root.
#[derive(Debug)]
pub enum Node {
    /// A `.b2nd` or `.b2frame` file.
    File {
        /// `O_PATH` descriptor of the file.
        fd: OwnedFd,
        /// Its identity.
        id: Identity,
    },
    /// A sparse frame directory.
    Sparse {
        /// `O_PATH` descriptor of the directory.
        fd: OwnedFd,
        /// The identity of its `chunks.b2frame`, with the later of its and the directory's
        /// times (so a chunk file renamed, removed or replaced changes it).
        id: Identity,
    },
    /// Another directory (a group of datasets).
    Dir {
        /// `O_PATH` descriptor of the directory.
        fd: OwnedFd,
        /// Its identity.
        id: Identity,
    },
}

impl Node {
    /// The descriptor's `/proc/self/fd` path: opening it opens the inode that was checked.
    #[must_use]
    pub fn proc_path(&self) -> PathBuf {
        let fd = match self {
            Node::File { fd, .. } | Node::Sparse { fd, .. } | Node::Dir { fd, .. } => fd,
        };
        proc_path(fd)
    }

    /// The node's identity.
    #[must_use]
    pub fn identity(&self) -> Identity {
        match self {
            Node::File { id, .. } | Node::Sparse { id, .. } | Node::Dir { id, .. } => *id,
        }
    }
}

/// The `/proc/self/fd` path of `fd`.
#[must_use]
pub fn proc_path(fd: &OwnedFd) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

fn errno(e: Errno) -> FsError {
    match e {
        Errno::NOENT | Errno::NOTDIR | Errno::LOOP | Errno::XDEV | Errno::NAMETOOLONG => {
            FsError::NotFound
        }
        other => FsError::Io(other.to_string()),
    }
}

fn is_dataset_name(name: &str) -> bool {
    DATASET_SUFFIXES
        .iter()
        .any(|s| name.len() > s.len() && name.ends_with(s))
}

impl Root {
    /// Opens the root directory `path` (symlinks in `path` itself are the operator's choice
    /// and are followed).
    ///
    /// # Errors
    /// A message when `path` is not a readable directory.
    pub fn open(name: &str, path: &Path, public: bool) -> Result<Root, String> {
        let canonical = std::fs::canonicalize(path)
            .map_err(|e| format!("root {name}: {}: {e}", path.display()))?;
        let dir = rfs::open(
            &canonical,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| format!("root {name}: {}: {e}", canonical.display()))?;
        Ok(Root {
            name: name.to_owned(),
            path: canonical,
            public,
            dir,
        })
    }

    /// Resolves `segments` (checked by [`crate::parse::request_path`]) beneath the root.
    ///
    /// # Errors
    /// [`FsError::NotFound`] for anything that is not a dataset or a directory of them.
    pub fn resolve(&self, segments: &[String], follow_symlinks: bool) -> Result<Node, FsError> {
        let rel = if segments.is_empty() {
            ".".to_owned()
        } else {
            segments.join("/")
        };
        let mut how = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        let mut flags = OFlags::PATH | OFlags::CLOEXEC;
        if !follow_symlinks {
            how |= ResolveFlags::NO_SYMLINKS;
            flags |= OFlags::NOFOLLOW;
        }
        let fd = rfs::openat2(&self.dir, &rel, flags, Mode::empty(), how).map_err(errno)?;
        let st = rfs::fstat(&fd).map_err(errno)?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => {
                let name = segments.last().map_or("", String::as_str);
                if !is_dataset_name(name) {
                    return Err(FsError::NotFound);
                }
                // A sparse frame's index is part of that dataset, not one of its own.
                if name == SPARSE_INDEX {
                    let parent = match &segments[..segments.len() - 1] {
                        [] => ".".to_owned(),
                        p => p.join("/"),
                    };
                    let dir = rfs::openat2(&self.dir, &parent, flags, Mode::empty(), how)
                        .map_err(errno)?;
                    if sparse_identity(&dir)?.is_some() {
                        return Err(FsError::NotFound);
                    }
                }
                Ok(Node::File {
                    fd,
                    id: identity_of(&st),
                })
            }
            FileType::Directory => match sparse_identity(&fd)? {
                // A chunk file renamed, removed or replaced (by a symlink, say) changes the
                // directory's times, not the index's: a handle opened before is not reused
                // for it, and the directory is checked again.
                Some(index) => {
                    let dir = identity_of(&st);
                    let id = Identity {
                        mtime_ns: index.mtime_ns.max(dir.mtime_ns),
                        ctime_ns: index.ctime_ns.max(dir.ctime_ns),
                        ..index
                    };
                    Ok(Node::Sparse { fd, id })
                }
                None => Ok(Node::Dir {
                    fd,
                    id: identity_of(&st),
                }),
            },
            _ => Err(FsError::NotFound),
        }
    }

    /// The datasets under `node` (a directory: recursively, relative to it, sorted; a
    /// dataset: its own `name`), and their total stored size, with at most `max` entries.
    ///
    /// # Errors
    /// [`FsError::TooLarge`] past `max` entries; [`FsError::Io`].
    pub fn list(&self, node: &Node, name: &str, max: usize) -> Result<(Vec<String>, u64), FsError> {
        match node {
            Node::File { id, .. } => Ok((vec![name.to_owned()], id.size)),
            Node::Sparse { fd, .. } => Ok((vec![name.to_owned()], sparse_bytes(fd)?)),
            Node::Dir { fd, .. } => {
                let mut out = Vec::new();
                let mut bytes = 0u64;
                walk(fd, "", 0, max, &mut out, &mut bytes)?;
                out.sort_unstable();
                Ok((out, bytes))
            }
        }
    }
}

/// Opens directory `name` of `parent` for reading its entries, refusing symlinks.
fn open_dir_at(parent: &OwnedFd, name: &str) -> Result<OwnedFd, FsError> {
    rfs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(errno)
}

/// The entries of directory `fd` (an `O_PATH` or readable descriptor): name and type, `.`,
/// `..`, hidden and non-UTF-8 names left out.
fn entries(fd: &OwnedFd) -> Result<Vec<(String, FileType)>, FsError> {
    let dir = open_dir_at(fd, ".")?;
    let mut it = rfs::Dir::read_from(dir.as_fd()).map_err(errno)?;
    let mut out = Vec::new();
    while let Some(entry) = it.read() {
        let entry = entry.map_err(errno)?;
        let Ok(name) = entry.file_name().to_str() else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let ft = match entry.file_type() {
            FileType::Unknown => {
                let st = rfs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(errno)?;
                FileType::from_raw_mode(st.st_mode)
            }
            ft => ft,
        };
        out.push((name.to_owned(), ft));
    }
    Ok(out)
}

/// For a directory that is a sparse frame (it holds a regular `chunks.b2frame`), the identity
/// of its index; `None` for another directory.
fn sparse_identity(fd: &OwnedFd) -> Result<Option<Identity>, FsError> {
    let st = match rfs::statat(fd, SPARSE_INDEX, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(errno(e)),
    };
    // Every commit of a sparse frame rewrites its index: the index's identity is the
    // dataset's.
    Ok((FileType::from_raw_mode(st.st_mode) == FileType::RegularFile).then(|| identity_of(&st)))
}

/// Checks that a sparse frame directory holds regular files only (no symlink, FIFO or device
/// a chunk could be read through).
///
/// # Errors
/// [`FsError::NotFound`] when it holds anything else.
pub fn check_sparse(fd: &OwnedFd) -> Result<(), FsError> {
    sparse_bytes(fd).map(|_| ())
}

/// Bytes of the files of sparse frame directory `fd`.
///
/// # Errors
/// [`FsError::NotFound`] when it holds anything but regular files.
fn sparse_bytes(fd: &OwnedFd) -> Result<u64, FsError> {
    let dir = open_dir_at(fd, ".")?;
    let mut it = rfs::Dir::read_from(dir.as_fd()).map_err(errno)?;
    let mut total = 0u64;
    while let Some(entry) = it.read() {
        let entry = entry.map_err(errno)?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let st = rfs::statat(&dir, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW).map_err(errno)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(FsError::NotFound);
        }
        total = total.saturating_add(u64::try_from(st.st_size).unwrap_or(0));
    }
    Ok(total)
}

fn walk(
    fd: &OwnedFd,
    prefix: &str,
    depth: usize,
    max: usize,
    out: &mut Vec<String>,
    bytes: &mut u64,
) -> Result<(), FsError> {
    if depth > MAX_LIST_DEPTH {
        return Ok(());
    }
    for (name, ft) in entries(fd)? {
        let rel = format!("{prefix}{name}");
        match ft {
            FileType::RegularFile if is_dataset_name(&name) => {
                let st =
                    rfs::statat(fd, name.as_str(), AtFlags::SYMLINK_NOFOLLOW).map_err(errno)?;
                *bytes = bytes.saturating_add(u64::try_from(st.st_size).unwrap_or(0));
                out.push(rel);
            }
            FileType::Directory => {
                let sub = match open_dir_at(fd, &name) {
                    Ok(sub) => sub,
                    Err(FsError::NotFound) => continue,
                    Err(e) => return Err(e),
                };
                if sparse_identity(&sub)?.is_some() {
                    // A sparse frame holding anything but regular files is not served.
                    if let Ok(n) = sparse_bytes(&sub) {
                        *bytes = bytes.saturating_add(n);
                        out.push(rel);
                    }
                } else {
                    walk(&sub, &format!("{rel}/"), depth + 1, max, out, bytes)?;
                }
            }
            _ => {}
        }
        if out.len() > max {
            return Err(FsError::TooLarge);
        }
    }
    Ok(())
}
