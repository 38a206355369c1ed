//! Frames on a store: the contiguous frame file (`.b2frame`, `.b2nd`), the in-memory
//! contiguous frame, and the sparse frame directory (`chunks.b2frame` + `%08X.chunk`), all
//! through [`FrameIo`], the library's only file I/O.
//!
//! Format: `docs/frame-format.md` (c-blosc2 `README_CFRAME_FORMAT.rst`, `README_SFRAME_FORMAT.rst`,
//! `blosc/frame.c`, `blosc/sframe.c`). The
//! layouts after each change are C-Blosc2 3.3's: append and insert write the chunk at the end
//! of the data section, update compacts (the bytes after the updated chunk move by the size
//! difference), delete leaves the bytes in place; special chunks (zeros, NaN, uninit) are
//! index entries only.
//!
//! # Crash safety
//!
//! Every change is committed so that at every instant the store holds either the old frame or
//! the new one (each followed by bytes no reader looks at): an interrupted append, insert,
//! update, delete or vlmetalayer change leaves a frame that opens with every completed
//! operation intact, and the final bytes equal C-Blosc2's for the same operations. The write
//! protocol is described with its code (`src/frame/state/commit.rs`) and in
//! `docs/frame-format.md`.
//!
//! # Sync policy
//!
//! The protocol orders writes; [`SyncPolicy`] says when they must reach stable storage:
//!
//! * [`SyncPolicy::None`]: never fsync. Safe against a crash of the process (the kernel keeps
//!   completed writes); after a power loss anything may be lost.
//! * [`SyncPolicy::OnClose`] (default): as `None` while writing, and `flush()` / close
//!   fsync everything (chunk files first, then the frame). After `flush()` returns, the
//!   frame survives a power loss.
//! * [`SyncPolicy::EveryWrite`]: an fsync at each ordering point (after the relocation, each
//!   header commit and each chunk file; renames with their directory). Every completed
//!   operation survives a power loss, and a power loss at any point leaves the old or the
//!   new frame (assuming, as databases do, that a write inside one 512-byte sector is
//!   atomic).

#[cfg(any(test, feature = "test-kit"))]
mod faulty;
mod io;
#[cfg(feature = "remote")]
mod remote;
mod state;

#[cfg(any(test, feature = "test-kit"))]
pub use faulty::{FaultPlan, FaultyIo, SECTOR};
pub use io::{
    file_kind, is_url, DirIo, FileIdentity, FileIo, FrameIo, MemIo, MemStore, Obj, ReadReq,
    Traffic, SFRAME_INDEX,
};
#[cfg(feature = "remote")]
pub use remote::{RemoteIo, RemoteOptions};
pub(crate) use state::{Frame, NewChunk};

/// When writes reach stable storage; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncPolicy {
    /// Never fsync.
    None,
    /// Fsync on flush and close.
    #[default]
    OnClose,
    /// Fsync at every ordering point of every write.
    EveryWrite,
}

/// How a frame is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpenMode {
    /// Read only.
    #[default]
    Read,
    /// Read and write every part: chunks, metalayers, vlmetalayers.
    ReadWrite,
    /// Read, and add chunks at the end only (appends); other changes are refused.
    Append,
}
