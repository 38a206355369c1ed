//! Frames on a store: the contiguous frame file (`.b2frame`, `.b2nd`), the in-memory
//! contiguous frame, and the sparse frame directory (`chunks.b2frame` + `%08X.chunk`), all
//! through [`FrameIo`], the library's only file I/O.
//!
//! Format: `shared/spec/frames.md` §1–§8 (c-blosc2 `blosc/frame.c`, `blosc/sframe.c`). The
//! layouts after each change are C-Blosc2 3.3's: append and insert write the chunk at the end
//! of the data section, update compacts (the bytes after the updated chunk move by the size
//! difference), delete leaves the bytes in place; special chunks (zeros, NaN, uninit) are
//! index entries only.
//!
//! # Write protocol (crash safety)
//!
//! A reader (C-Blosc2's and Strata's) trusts the header: `frame_len` says where the trailer
//! ends, `cbytes` where the offsets chunk starts; bytes past `frame_len` are ignored. The
//! header's fixed part (87 bytes, all in the first 512-byte sector) is therefore the commit
//! record: it is rewritten in **one write**, and only after everything it points to is in
//! place. C-Blosc2 writes a new chunk over the old offsets chunk and trailer before it
//! rewrites the header, which leaves no valid frame if it stops in between; Strata never
//! writes over bytes the committed header still points to:
//!
//! 1. **Relocate.** The live bytes from the first changed position `p` onwards that the new
//!    state puts elsewhere or overwrites (for append, insert, delete and vlmetalayer changes:
//!    only the offsets chunk and the trailer; for an update: also the replaced chunks and the
//!    chunks after the first one whose size changes) are copied past the end of both the old
//!    and the new frame, at `y = max(old frame_len, new frame_len)`, with the offsets that
//!    point into them redirected. Chunks that keep their position stay where they are.
//!    Commit: the header now says `cbytes = end of the copies − header_len`. This is the
//!    **old** content; the relocated bytes' first places are now dead.
//! 2. **Rewrite.** The new chunks, the moved bytes, the new offsets chunk and the new trailer
//!    are written at their places from `p` — inside the dead bytes, ending at or before `y`.
//!    Commit: the header of the new state. Then the file is truncated to the new `frame_len`.
//!
//! Several chunk updates (`SChunk::update_chunks`, which an array's `set_slice` uses) are one
//! change: the bytes after them move once, and a crash leaves all of them or none. An update
//! that keeps a chunk's stored size writes only that chunk, the offsets chunk and the trailer.
//!
//! At every instant the store holds either the old frame or the new one, each followed by
//! bytes that no reader looks at, so an interrupted append, insert, update, delete or
//! vlmetalayer change leaves a frame that opens with every completed operation intact; the
//! final bytes equal C-Blosc2's for the same operations. While the frame holds no chunk (or
//! a change leaves it with none), or its header length changes (adding a metalayer), the
//! new frame is written whole to a temporary file renamed over the old one. Sparse frames
//! write a new chunk file (unreferenced until the index changes: an appended chunk takes the
//! number after the highest, as C-Blosc2 does; an updated one the lowest number the index
//! does not use, where C-Blosc2 would overwrite the old file), then replace `chunks.b2frame`
//! the same way, then remove the chunk files no longer referenced.
//!
//! A metalayer update writes the new bytes over the old ones inside the header (the format
//! has no room for a second copy); it is atomic when those bytes lie in one 512-byte sector,
//! as the whole fixed header does.
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

mod faulty;
mod io;
mod state;

pub use faulty::{FaultPlan, FaultyIo, SECTOR};
pub use io::{DirIo, FileIo, FrameIo, MemIo, MemStore, Obj, SFRAME_INDEX};
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
