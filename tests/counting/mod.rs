//! A frame store that counts the bytes read from it and written to it: how the tests prove
//! that a partial read fetches only the blocks it needs, and that an append writes only the
//! chunks it adds.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use strata::format::frame::FrameType;
use strata::frame::{FileIo, FrameIo, Obj};

/// A frame file read and written through counters of the bytes read and written.
pub struct Counting {
    inner: FileIo,
    read: Arc<AtomicU64>,
    written: Arc<AtomicU64>,
}

/// The counters of a [`Counting`] store: bytes read, bytes written (`write_at` and
/// `replace`).
pub type Counters = (Arc<AtomicU64>, Arc<AtomicU64>);

impl Counting {
    /// Opens the frame file at `path`, read-only or `writable`; the counters start at 0.
    pub fn open(path: &Path, writable: bool) -> (Counting, Counters) {
        let (read, written) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let io = Counting {
            inner: FileIo::open(path, writable).unwrap(),
            read: read.clone(),
            written: written.clone(),
        };
        (io, (read, written))
    }
}

impl FrameIo for Counting {
    fn read_at(&self, obj: Obj, pos: u64, buf: &mut [u8]) -> strata::Result<()> {
        self.read.fetch_add(buf.len() as u64, Ordering::SeqCst);
        self.inner.read_at(obj, pos, buf)
    }
    fn len(&self, obj: Obj) -> strata::Result<u64> {
        self.inner.len(obj)
    }
    fn write_at(&mut self, obj: Obj, pos: u64, data: &[u8]) -> strata::Result<()> {
        self.written.fetch_add(data.len() as u64, Ordering::SeqCst);
        self.inner.write_at(obj, pos, data)
    }
    fn set_len(&mut self, obj: Obj, len: u64) -> strata::Result<()> {
        self.inner.set_len(obj, len)
    }
    fn sync(&mut self, obj: Obj) -> strata::Result<()> {
        self.inner.sync(obj)
    }
    fn replace(&mut self, obj: Obj, parts: &[&[u8]], durable: bool) -> strata::Result<()> {
        let n: usize = parts.iter().map(|p| p.len()).sum();
        self.written.fetch_add(n as u64, Ordering::SeqCst);
        self.inner.replace(obj, parts, durable)
    }
    fn remove(&mut self, obj: Obj) -> strata::Result<()> {
        self.inner.remove(obj)
    }
    fn path(&self, obj: Obj) -> String {
        self.inner.path(obj)
    }
    fn frame_type(&self) -> FrameType {
        FrameType::Contiguous
    }
}
