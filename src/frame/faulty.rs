//! [`FaultyIo`]: a [`FrameIo`] that dies at a chosen write, for durability tests.
//!
//! Every mutation (`write_at`, `set_len`, `replace`, `remove`) is numbered from 1. The
//! mutation numbered `fail_at` fails, and so does everything after it, as if the process had
//! been killed there. With `torn`, that last `write_at` first lands partly: the sectors (512
//! bytes, counted from the start of the object) before the last sector boundary inside the
//! write are written, the rest is not — the torn-write model of a disk that writes whole
//! sectors in order. A write inside one sector is atomic in this model (nothing lands).
//! A torn `replace` leaves the object as it was (only the temporary file was partly written).

use super::io::{FrameIo, Obj};
use crate::error::{Error, IoOp, Result};
use crate::format::frame::FrameType;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Sector size of the torn-write model, in bytes.
pub const SECTOR: u64 = 512;

/// When a [`FaultyIo`] fails; shared, so a test can read the count after a run.
#[derive(Debug)]
pub struct FaultPlan {
    fail_at: usize,
    torn: bool,
    count: AtomicUsize,
    dead: AtomicBool,
}

impl FaultPlan {
    /// A plan failing at mutation number `fail_at` (1-based; `usize::MAX` = never), torn or
    /// not.
    #[must_use]
    pub fn new(fail_at: usize, torn: bool) -> Arc<Self> {
        Arc::new(FaultPlan {
            fail_at,
            torn,
            count: AtomicUsize::new(0),
            dead: AtomicBool::new(false),
        })
    }

    /// Mutations attempted so far (the failing one included).
    #[must_use]
    pub fn mutations(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// True once the planned failure has happened.
    #[must_use]
    pub fn fired(&self) -> bool {
        self.dead.load(Ordering::SeqCst)
    }

    /// Counts one mutation: `Ok(None)` to perform it, `Ok(Some(torn))` when this is the one
    /// that fails, `Err` when the store is already dead.
    fn next(&self, path: &str) -> Result<Option<bool>> {
        if self.fired() {
            return Err(injected(path));
        }
        let n = self.count.fetch_add(1, Ordering::SeqCst) + 1;
        if n >= self.fail_at {
            self.dead.store(true, Ordering::SeqCst);
            return Ok(Some(self.torn));
        }
        Ok(None)
    }
}

fn injected(path: &str) -> Error {
    Error::refused(
        path,
        IoOp::Write,
        std::io::ErrorKind::Other,
        "injected fault (simulated crash)",
    )
}

/// A [`FrameIo`] wrapper that fails as its [`FaultPlan`] says.
pub struct FaultyIo {
    inner: Box<dyn FrameIo>,
    plan: Arc<FaultPlan>,
}

impl std::fmt::Debug for FaultyIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultyIo")
            .field("plan", &self.plan)
            .finish_non_exhaustive()
    }
}

impl FaultyIo {
    /// Wraps `inner`.
    #[must_use]
    pub fn new(inner: Box<dyn FrameIo>, plan: Arc<FaultPlan>) -> Self {
        FaultyIo { inner, plan }
    }
}

impl FrameIo for FaultyIo {
    fn read_at(&self, obj: Obj, pos: u64, buf: &mut [u8]) -> Result<()> {
        self.inner.read_at(obj, pos, buf)
    }

    fn len(&self, obj: Obj) -> Result<u64> {
        self.inner.len(obj)
    }

    fn write_at(&mut self, obj: Obj, pos: u64, data: &[u8]) -> Result<()> {
        match self.plan.next(&self.inner.path(obj))? {
            None => self.inner.write_at(obj, pos, data),
            Some(torn) => {
                let end = pos + data.len() as u64;
                let cut = (end - 1) / SECTOR * SECTOR;
                if torn && cut > pos {
                    self.inner
                        .write_at(obj, pos, &data[..(cut - pos) as usize])?;
                }
                Err(injected(&self.inner.path(obj)))
            }
        }
    }

    fn set_len(&mut self, obj: Obj, len: u64) -> Result<()> {
        match self.plan.next(&self.inner.path(obj))? {
            None => self.inner.set_len(obj, len),
            Some(_) => Err(injected(&self.inner.path(obj))),
        }
    }

    fn sync(&mut self, obj: Obj) -> Result<()> {
        if self.plan.fired() {
            return Err(injected(&self.inner.path(obj)));
        }
        self.inner.sync(obj)
    }

    fn replace(&mut self, obj: Obj, parts: &[&[u8]], durable: bool) -> Result<()> {
        match self.plan.next(&self.inner.path(obj))? {
            None => self.inner.replace(obj, parts, durable),
            Some(_) => Err(injected(&self.inner.path(obj))),
        }
    }

    fn remove(&mut self, obj: Obj) -> Result<()> {
        match self.plan.next(&self.inner.path(obj))? {
            None => self.inner.remove(obj),
            Some(_) => Err(injected(&self.inner.path(obj))),
        }
    }

    fn path(&self, obj: Obj) -> String {
        self.inner.path(obj)
    }

    fn frame_type(&self) -> FrameType {
        self.inner.frame_type()
    }
}
