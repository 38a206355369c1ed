//! What commands read. An input is a regular file or, where a frame is read, a sparse frame
//! directory (symbolic links followed) or the `http://`/`https://` URL of one (read-only). Anything else — a device, a FIFO, a socket — is
//! refused unless `--special-files` is given; then the commands that read Blosc2 data (a
//! chunk or a frame) read it as a stream, never past what its own header announces: a chunk's
//! `cbytes` (at most `BLOSC2_MAX_BUFFERSIZE` + 32 bytes), a frame's `frame_len`. A regular
//! chunk file larger than a chunk can be is refused before it is read.

use anyhow::{anyhow, bail, Context, Result};
use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use strata::format::chunk::{MAX_BUFFERSIZE, MAX_OVERHEAD, MIN_HEADER_LENGTH};
use strata::format::frame::{FrameHeader, HEADER_MINLEN};
use strata::frame::{file_kind, MemIo, OpenMode, SyncPolicy};
use strata::ndarray::NdArray;
use strata::schunk::{OpenOptions, SChunk};

/// The bytes every frame starts with: msgpack fixarray(14), fixstr(8) `"b2frame\0"`.
pub const FRAME_MAGIC: &[u8] = b"\x9e\xa8b2frame\0";

/// The most bytes a chunk takes: `BLOSC2_MAX_BUFFERSIZE` of data and the largest overhead.
pub const MAX_CHUNK_BYTES: u64 = (MAX_BUFFERSIZE + MAX_OVERHEAD) as u64;

/// Whether `--special-files` was given.
static SPECIAL_FILES: AtomicBool = AtomicBool::new(false);

/// Lets the Blosc2 readers read devices, FIFOs and sockets as streams (`--special-files`).
pub fn allow_special_files(allow: bool) {
    SPECIAL_FILES.store(allow, Ordering::Relaxed);
}

/// What an input path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file of this many bytes.
    File(u64),
    /// A directory.
    Dir,
    /// A device, FIFO or socket, allowed by `--special-files`: read as a stream.
    Stream,
    /// An `http://` or `https://` URL: a remote frame, read lazily.
    Url,
}

/// What `path` is, following symbolic links.
///
/// # Errors
/// The path cannot be reached (missing, a symbolic link loop); it is a device, FIFO or socket
/// and `--special-files` was not given. The message names it.
pub fn kind(path: &Path) -> Result<Kind> {
    if path.to_str().is_some_and(strata::frame::is_url) {
        return Ok(Kind::Url);
    }
    let m = std::fs::metadata(path).with_context(|| format!("cannot open {}", path.display()))?;
    if m.is_file() {
        Ok(Kind::File(m.len()))
    } else if m.is_dir() {
        Ok(Kind::Dir)
    } else if SPECIAL_FILES.load(Ordering::Relaxed) {
        Ok(Kind::Stream)
    } else {
        bail!(
            "{}: {} is not a regular file; pass --special-files to read it as a stream",
            path.display(),
            file_kind(m.file_type())
        )
    }
}

/// The length of the data file `path`, which must be a regular file (raw bytes, `.npy` and
/// netCDF are read by position, and raw data has no size of its own to stop at): a stream is
/// refused even with `--special-files`.
///
/// # Errors
/// The path cannot be reached; it is not a regular file. The message names it.
pub fn regular_file(path: &Path) -> Result<u64> {
    let m = std::fs::metadata(path).with_context(|| format!("cannot open {}", path.display()))?;
    if !m.is_file() {
        bail!(
            "{}: {} is not a regular file; data files (raw, .npy, netCDF) are read from regular files only",
            path.display(),
            file_kind(m.file_type())
        );
    }
    Ok(m.len())
}

/// Appends to `out` what `reader` gives, up to `want` bytes in all (fewer at its end); the
/// buffer grows as the bytes come, so a stream that announces much and ends early costs
/// little.
fn read_into(reader: &mut impl Read, out: &mut Vec<u8>, want: usize, name: &str) -> Result<()> {
    let mut at = out.len();
    while at < want {
        if out.len() == at {
            let grow = (want - at).min(at.max(64 << 10));
            out.try_reserve_exact(grow)
                .map_err(|_| anyhow!("{name}: cannot allocate {want} bytes"))?;
            out.resize(at + grow, 0);
        }
        match reader.read(&mut out[at..]) {
            Ok(0) => break,
            Ok(n) => at += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e).with_context(|| format!("cannot read {name}")),
        }
    }
    out.truncate(at);
    Ok(())
}

/// One Blosc2 object read from a stream: a frame (bounded by its `frame_len`) or a chunk
/// (bounded by its `cbytes`), as the stream's first bytes say.
fn read_stream(path: &Path) -> Result<Vec<u8>> {
    let name = path.display().to_string();
    let mut file = File::open(path).with_context(|| format!("cannot open {name}"))?;
    let mut bytes = Vec::new();
    read_into(&mut file, &mut bytes, MIN_HEADER_LENGTH, &name)?;
    let total = if bytes.starts_with(FRAME_MAGIC) {
        read_into(&mut file, &mut bytes, HEADER_MINLEN, &name)?;
        let h = FrameHeader::parse_fixed(&bytes)
            .with_context(|| format!("{name}: not a Blosc2 frame"))?;
        usize::try_from(h.frame_len).unwrap_or(usize::MAX)
    } else if bytes.len() == MIN_HEADER_LENGTH {
        // A chunk's cbytes: bytes 12-15, little endian.
        let cbytes = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]);
        if u64::from(cbytes) > MAX_CHUNK_BYTES {
            bail!("{name}: a chunk of {cbytes} bytes, more than a chunk holds ({MAX_CHUNK_BYTES})");
        }
        cbytes as usize
    } else {
        bytes.len()
    };
    read_into(&mut file, &mut bytes, total, &name)?;
    Ok(bytes)
}

/// The bytes of the chunk file `path` (or, with `--special-files`, of the chunk a stream
/// holds).
///
/// # Errors
/// Unreadable; a directory; a file larger than any chunk. The message names the file.
pub fn read_chunk(path: &Path) -> Result<Vec<u8>> {
    let name = path.display().to_string();
    match kind(path)? {
        Kind::File(len) => {
            if len > MAX_CHUNK_BYTES {
                bail!("{name}: {len} bytes, more than a chunk holds ({MAX_CHUNK_BYTES})");
            }
            let mut file = File::open(path).with_context(|| format!("cannot open {name}"))?;
            let mut bytes = Vec::new();
            // The file is not read past the size checked above, even if it grows meanwhile.
            read_into(&mut file, &mut bytes, len as usize, &name)?;
            Ok(bytes)
        }
        Kind::Dir => bail!("{name}: a directory, not a chunk file"),
        Kind::Url => bail!("{name}: a URL names a remote frame, not a chunk file"),
        Kind::Stream => read_stream(path),
    }
}

/// Whether `path` holds a frame: a sparse frame directory, a URL (a remote frame), or a file
/// that starts as frames do. A stream is not looked into (reading it would consume it): `false`.
///
/// # Errors
/// As [`kind`]; the file cannot be read.
pub fn is_frame(path: &Path) -> Result<bool> {
    match kind(path)? {
        Kind::Dir | Kind::Url => Ok(true),
        Kind::Stream => Ok(false),
        Kind::File(_) => {
            let mut head = Vec::new();
            let mut file =
                File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
            read_into(
                &mut file,
                &mut head,
                FRAME_MAGIC.len(),
                &path.display().to_string(),
            )?;
            Ok(head == FRAME_MAGIC)
        }
    }
}

/// What a path given as a Blosc2 input holds.
pub enum Blosc2 {
    /// A frame: a file or sparse directory opened lazily, or a stream read into memory.
    Frame(Box<SChunk>),
    /// A chunk's bytes.
    Chunk(Vec<u8>),
}

/// Opens `path` as a frame or reads it as a chunk, whichever it holds.
///
/// # Errors
/// Unreadable input; a malformed frame. The message names the file.
pub fn open_blosc2(path: &Path) -> Result<Blosc2> {
    let name = path.display().to_string();
    if kind(path)? == Kind::Stream {
        let bytes = read_stream(path)?;
        return if bytes.starts_with(FRAME_MAGIC) {
            Ok(Blosc2::Frame(Box::new(frame_in_memory(bytes, &name)?)))
        } else {
            Ok(Blosc2::Chunk(bytes))
        };
    }
    if is_frame(path)? {
        let schunk =
            SChunk::open(path, OpenMode::Read).with_context(|| format!("cannot open {name}"))?;
        Ok(Blosc2::Frame(Box::new(schunk)))
    } else {
        Ok(Blosc2::Chunk(read_chunk(path)?))
    }
}

/// The contiguous frame `bytes` (of the file `name`) opened in memory for reading.
///
/// # Errors
/// A malformed frame; the message names `name`.
pub fn frame_in_memory(bytes: Vec<u8>, name: &str) -> Result<SChunk> {
    SChunk::from_io(
        Box::new(MemIo::from_frame(bytes)),
        &OpenOptions::new(OpenMode::Read).with_sync(SyncPolicy::None),
    )
    .with_context(|| format!("cannot open {name}"))
}

/// Opens the frame at `path` (a file, a sparse directory, a URL, or with `--special-files` a
/// stream) for reading.
///
/// # Errors
/// As [`open_blosc2`]; a chunk where a frame is wanted.
pub fn open_frame(path: &Path) -> Result<SChunk> {
    let name = path.display().to_string();
    match kind(path)? {
        Kind::Stream => match open_blosc2(path)? {
            Blosc2::Frame(s) => Ok(*s),
            Blosc2::Chunk(_) => bail!("cannot open {name}: not a Blosc2 frame"),
        },
        _ => SChunk::open(path, OpenMode::Read).with_context(|| format!("cannot open {name}")),
    }
}

/// Opens the b2nd array at `path` (as [`open_frame`]) for reading.
///
/// # Errors
/// As [`open_frame`]; a frame that is not a b2nd array.
pub fn open_array(path: &Path) -> Result<NdArray> {
    let name = path.display().to_string();
    match kind(path)? {
        Kind::Stream => {
            NdArray::from_schunk(open_frame(path)?).with_context(|| format!("cannot open {name}"))
        }
        _ => NdArray::open(path, OpenMode::Read).with_context(|| format!("cannot open {name}")),
    }
}

#[cfg(test)]
mod tests {
    use super::{is_frame, kind, read_chunk, read_into, Kind, MAX_CHUNK_BYTES};
    use std::path::Path;

    #[test]
    fn reads_stop_where_the_bytes_end() {
        let mut out = Vec::new();
        read_into(&mut &b"0123456789"[..], &mut out, 4, "x").unwrap();
        assert_eq!(out, b"0123");
        let mut out = b"ab".to_vec();
        read_into(&mut &b"cd"[..], &mut out, 1 << 40, "x").unwrap();
        assert_eq!(out, b"abcd");
    }

    #[test]
    fn a_chunk_file_larger_than_any_chunk_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.b2");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_CHUNK_BYTES + 1).unwrap();
        let e = format!("{:#}", read_chunk(&big).unwrap_err());
        assert_eq!(
            e,
            format!(
                "{}: 2147483648 bytes, more than a chunk holds (2147483647)",
                big.display()
            )
        );
    }

    #[test]
    fn a_url_is_a_remote_frame_never_a_chunk_file() {
        let url = Path::new("http://127.0.0.1:9/a.b2nd");
        assert_eq!(kind(url).unwrap(), Kind::Url);
        assert!(is_frame(url).unwrap());
        let e = format!("{:#}", read_chunk(url).unwrap_err());
        assert_eq!(
            e,
            "http://127.0.0.1:9/a.b2nd: a URL names a remote frame, not a chunk file"
        );
        // Not http(s): a path like any other.
        assert!(kind(Path::new("ftp://x/y")).is_err());
    }
}
