//! [`RegionIo`]: a read-only [`FrameIo`] over a byte range of a file, so that a frame stored
//! inside another file (an HDF5 chunk) opens as any frame does and reads lazily: the header,
//! the trailer and the offsets when opened, then only the chunk header, the `bstarts` and
//! the blocks a read needs.
#![forbid(unsafe_code)]

use crate::error::{Error, IoOp, Result};
use crate::format::frame::FrameType;
use crate::frame::{FrameIo, Obj};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

/// Bytes `offset..offset + len` of a file, as a contiguous frame's store.
#[derive(Debug, Clone)]
pub struct RegionIo {
    file: Arc<File>,
    name: Arc<str>,
    offset: u64,
    len: u64,
}

impl RegionIo {
    /// The `len` bytes at `offset` of `file` (named `name` in messages).
    pub fn new(file: Arc<File>, name: Arc<str>, offset: u64, len: u64) -> RegionIo {
        RegionIo {
            file,
            name,
            offset,
            len,
        }
    }

    /// All of the region's bytes.
    ///
    /// # Errors
    /// As [`FrameIo::read_at`]; [`Error::MemoryAlloc`].
    pub fn read_all(&self) -> Result<Vec<u8>> {
        let n = usize::try_from(self.len).map_err(|_| Error::MemoryAlloc(usize::MAX))?;
        let mut out = crate::alloc::zeroed(n)?;
        self.read_at(Obj::Frame, 0, &mut out)?;
        Ok(out)
    }

    fn read_only(&self) -> Error {
        Error::refused(
            self.name.to_string(),
            IoOp::Write,
            std::io::ErrorKind::PermissionDenied,
            "a frame inside another file is read only",
        )
    }
}

impl FrameIo for RegionIo {
    fn read_at(&self, obj: Obj, pos: u64, buf: &mut [u8]) -> Result<()> {
        let end = pos.checked_add(buf.len() as u64);
        if obj != Obj::Frame {
            return Err(Error::Internal {
                what: "a chunk file was asked of a frame inside another file",
            });
        }
        if end.is_none_or(|e| e > self.len) {
            let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
            let short = Error::Truncated {
                what: "the frame inside the file",
                needed: size(end.unwrap_or(u64::MAX)),
                available: size(self.len),
            };
            return Err(Error::frame(self.name.to_string(), short));
        }
        let at = self.offset + pos;
        self.file.read_exact_at(buf, at).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                let end = at + buf.len() as u64;
                let short = Error::Truncated {
                    what: "the file",
                    needed: usize::try_from(end).unwrap_or(usize::MAX),
                    available: usize::try_from(at).unwrap_or(usize::MAX),
                };
                Error::frame(self.name.to_string(), short)
            } else {
                Error::io(self.name.to_string(), IoOp::Read, e)
            }
        })
    }

    fn len(&self, _obj: Obj) -> Result<u64> {
        Ok(self.len)
    }

    fn write_at(&mut self, _: Obj, _: u64, _: &[u8]) -> Result<()> {
        Err(self.read_only())
    }

    fn set_len(&mut self, _: Obj, _: u64) -> Result<()> {
        Err(self.read_only())
    }

    fn sync(&mut self, _: Obj) -> Result<()> {
        Ok(())
    }

    fn replace(&mut self, _: Obj, _: &[&[u8]], _: bool) -> Result<()> {
        Err(self.read_only())
    }

    fn remove(&mut self, _: Obj) -> Result<()> {
        Err(self.read_only())
    }

    fn path(&self, _: Obj) -> String {
        self.name.to_string()
    }

    fn frame_type(&self) -> FrameType {
        FrameType::Contiguous
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{OpenMode, SyncPolicy};
    use crate::schunk::{OpenOptions, SChunk, SChunkOptions};
    use std::io::Write;

    #[test]
    fn a_frame_inside_a_file_opens_and_reads_only_its_region() {
        let mut s = SChunk::new(&SChunkOptions::default()).unwrap();
        let data: Vec<u8> = (0..40_000u32).flat_map(u32::to_le_bytes).collect();
        s.append_buffer(&data).unwrap();
        let frame = s.to_cframe().unwrap();
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&[7u8; 1000]).unwrap();
        f.write_all(&frame).unwrap();
        f.write_all(&[1, 2, 3, 4]).unwrap(); // a checksum after the frame
        let file = Arc::new(File::open(f.path()).unwrap());
        let io = RegionIo::new(file, "x.h5".into(), 1000, frame.len() as u64 + 4);
        assert_eq!(io.read_all().unwrap()[..frame.len()], frame[..]);
        let opts = OpenOptions::new(OpenMode::Read).with_sync(SyncPolicy::None);
        let s = SChunk::from_io(Box::new(io.clone()), &opts).unwrap();
        assert_eq!(s.decompress_chunk_vec(0).unwrap(), data);
        let mut buf = [0u8; 8];
        let e = io
            .read_at(Obj::Frame, frame.len() as u64, &mut buf)
            .unwrap_err();
        assert!(e.to_string().starts_with("x.h5: bad frame: "), "{e}");
        let (needed, available) = (frame.len() + 8, frame.len() + 4);
        assert_eq!(
            *e.root(),
            Error::Truncated {
                what: "the frame inside the file",
                needed,
                available
            }
        );
        let mut io = io;
        assert!(io.write_at(Obj::Frame, 0, &[0]).is_err());
    }
}
