//! The one error type of the library, with stable integer codes.
//!
//! Every variant maps to one `i32` code ([`Error::code`]): the `BLOSC2_ERROR_*` value of
//! C-Blosc2 (`include/blosc2.h`) where the meaning is the same, otherwise a Strata code from
//! −1000 down. Codes are never renumbered; a retired code stays listed as a comment.

use std::fmt;

/// Result alias used throughout Strata.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in Strata.
///
/// Each variant has a stable code ([`Error::code`]). Variants carry what was expected and what
/// was found, so that a message names the problem without a debugger.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input ends before a structure it announces (code −5, `BLOSC2_ERROR_READ_BUFFER`).
    #[error("truncated input: {what} needs {needed} bytes, only {available} available")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes needed, counted from the start of the input.
        needed: usize,
        /// Bytes the input has.
        available: usize,
    },
    /// The destination buffer is too small (code −6, `BLOSC2_ERROR_WRITE_BUFFER`).
    #[error("destination too small: {needed} bytes needed, {available} given")]
    DestinationTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes available in the destination.
        available: usize,
    },
    /// A chunk header field is inconsistent (code −11, `BLOSC2_ERROR_INVALID_HEADER`).
    #[error("invalid chunk header: {0}")]
    InvalidHeader(String),
    /// The chunk format version is not one Strata reads (code −10, `BLOSC2_ERROR_VERSION_SUPPORT`).
    #[error("unsupported chunk format version {version} (Strata reads 1 to 6)")]
    VersionSupport {
        /// Version byte found.
        version: u8,
    },
    /// No codec is registered under this ID (code −7, `BLOSC2_ERROR_CODEC_SUPPORT`).
    #[error("unknown codec ID {id}")]
    UnknownCodec {
        /// The codec ID (Blosc2 `compcode`).
        id: u8,
    },
    /// No filter is registered under this ID (code −18, `BLOSC2_ERROR_FILTER_PIPELINE`).
    #[error("unknown filter ID {id}")]
    UnknownFilter {
        /// The filter ID.
        id: u8,
    },
    /// A codec was given a parameter it cannot use (code −8, `BLOSC2_ERROR_CODEC_PARAM`).
    #[error("codec parameter: {0}")]
    CodecParam(String),
    /// A dictionary problem (code −9, `BLOSC2_ERROR_CODEC_DICT`).
    #[error("codec dictionary: {0}")]
    CodecDict(String),
    /// A filter failed or was given data it cannot handle (code −18, `BLOSC2_ERROR_FILTER_PIPELINE`).
    #[error("filter {id}: {message}")]
    Filter {
        /// The filter ID.
        id: u8,
        /// What went wrong.
        message: String,
    },
    /// A compressed stream does not decode as announced (code −3, `BLOSC2_ERROR_DATA`).
    #[error("corrupt data: {0}")]
    Data(String),
    /// A run-length (special) stream or chunk is malformed (code −17, `BLOSC2_ERROR_RUN_LENGTH`).
    #[error("bad run-length encoding: {0}")]
    RunLength(String),
    /// A caller parameter is out of range (code −12, `BLOSC2_ERROR_INVALID_PARAM`).
    #[error("invalid parameter: {0}")]
    InvalidParam(String),
    /// An item index or range lies outside the data (code −33, `BLOSC2_ERROR_INVALID_INDEX`).
    #[error("index out of range: {0}")]
    InvalidIndex(String),
    /// A buffer exceeds the Blosc2 limit of `BLOSC2_MAX_BUFFERSIZE` bytes
    /// (code −35, `BLOSC2_ERROR_MAX_BUFSIZE_EXCEEDED`).
    #[error("{size} bytes exceed the Blosc2 chunk limit of {limit} bytes")]
    MaxBufsizeExceeded {
        /// Size given, in bytes.
        size: usize,
        /// The limit, in bytes.
        limit: usize,
    },
    /// Memory could not be reserved (code −4, `BLOSC2_ERROR_MEMORY_ALLOC`).
    #[error("could not allocate {0} bytes")]
    MemoryAlloc(usize),
    /// A frame (or a sparse frame's index) is malformed or inconsistent (code −11,
    /// `BLOSC2_ERROR_INVALID_HEADER`, the value C-Blosc2 returns for a bad frame).
    #[error("{path}: bad frame: {what}")]
    Frame {
        /// The file or directory, or `<memory>` for an in-memory frame.
        path: String,
        /// What is wrong.
        what: String,
    },
    /// The frame is of the other type: contiguous where sparse was expected or the reverse
    /// (code −24, `BLOSC2_ERROR_FRAME_TYPE`).
    #[error("{path}: frame type {found} where {expected} was expected")]
    FrameType {
        /// The file or directory.
        path: String,
        /// The type expected (`contiguous` or `sparse`).
        expected: &'static str,
        /// The frame type byte found.
        found: u8,
    },
    /// A file operation failed (code by operation: open −15 `BLOSC2_ERROR_FILE_OPEN`, read −13
    /// `BLOSC2_ERROR_FILE_READ`, write and sync −14 `BLOSC2_ERROR_FILE_WRITE`, truncate −25
    /// `BLOSC2_ERROR_FILE_TRUNCATE`, remove −31 `BLOSC2_ERROR_FILE_REMOVE`).
    #[error("{path}: cannot {op}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The operation.
        op: IoOp,
        /// The system's message.
        message: String,
    },
    /// A chunk cannot be appended (code −20, `BLOSC2_ERROR_CHUNK_APPEND`), e.g. it breaks the
    /// fixed chunksize.
    #[error("cannot append the chunk: {0}")]
    ChunkAppend(String),
    /// A chunk cannot be inserted (code −19, `BLOSC2_ERROR_CHUNK_INSERT`).
    #[error("cannot insert the chunk: {0}")]
    ChunkInsert(String),
    /// A chunk cannot be updated or deleted (code −21, `BLOSC2_ERROR_CHUNK_UPDATE`).
    #[error("cannot update the chunk: {0}")]
    ChunkUpdate(String),
    /// No metalayer or vlmetalayer of this name (code −34, `BLOSC2_ERROR_METALAYER_NOT_FOUND`).
    #[error("no metalayer named {name:?}")]
    MetalayerNotFound {
        /// The name asked for.
        name: String,
    },
    /// A special-value fill cannot be done (code −28, `BLOSC2_ERROR_FRAME_SPECIAL`).
    #[error("special fill: {0}")]
    FrameSpecial(String),
    /// A codec or filter plugin panicked (Strata code −1000).
    #[error("plugin {id} panicked")]
    PluginPanic {
        /// The plugin ID.
        id: u8,
    },
    /// No codec is registered under this ID and no plugin library provides it (code −7,
    /// `BLOSC2_ERROR_CODEC_SUPPORT`, as [`Error::UnknownCodec`]).
    #[error("unknown codec ID {id}: not built in, not registered, and no plugin provides it (searched {searched})")]
    CodecNotFound {
        /// The codec ID.
        id: u8,
        /// Every directory searched, and why each candidate library was rejected.
        searched: String,
    },
    /// No filter is registered under this ID and no plugin library provides it (code −18,
    /// `BLOSC2_ERROR_FILTER_PIPELINE`, as [`Error::UnknownFilter`]).
    #[error("unknown filter ID {id}: not built in, not registered, and no plugin provides it (searched {searched})")]
    FilterNotFound {
        /// The filter ID.
        id: u8,
        /// Every directory searched, and why each candidate library was rejected.
        searched: String,
    },
    /// A plugin could not be loaded or registered: the library does not open, lacks the entry
    /// symbol, or a descriptor has the wrong ABI version, kind, ID or name (Strata code −1002).
    /// Nothing from that library is registered.
    #[error("plugin {source_name}: {message}")]
    PluginLoad {
        /// The library path, or the descriptor's name for in-process registration.
        source_name: String,
        /// What is wrong.
        message: String,
    },
}

impl Error {
    /// The stable integer code of this error: the `BLOSC2_ERROR_*` value where the meaning is
    /// the same, a Strata code from −1000 down otherwise. Never 0, never positive.
    #[must_use]
    pub fn code(&self) -> i32 {
        match self {
            Error::Data(_) => -3,
            Error::MemoryAlloc(_) => -4,
            Error::Truncated { .. } => -5,
            Error::DestinationTooSmall { .. } => -6,
            Error::UnknownCodec { .. } | Error::CodecNotFound { .. } => -7,
            Error::CodecParam(_) => -8,
            Error::CodecDict(_) => -9,
            Error::VersionSupport { .. } => -10,
            Error::InvalidHeader(_) => -11,
            Error::InvalidParam(_) => -12,
            Error::RunLength(_) => -17,
            Error::UnknownFilter { .. } | Error::FilterNotFound { .. } | Error::Filter { .. } => {
                -18
            }
            Error::InvalidIndex(_) => -33,
            Error::MaxBufsizeExceeded { .. } => -35,
            Error::Frame { .. } => -11,
            Error::FrameType { .. } => -24,
            Error::Io { op, .. } => op.code(),
            Error::ChunkAppend(_) => -20,
            Error::ChunkInsert(_) => -19,
            Error::ChunkUpdate(_) => -21,
            Error::MetalayerNotFound { .. } => -34,
            Error::FrameSpecial(_) => -28,
            Error::PluginPanic { .. } => -1000,
            // -1001 is STRATA_ERROR_PANIC (a panic caught at the C boundary, src/ffi).
            Error::PluginLoad { .. } => -1002,
        }
    }

    /// This error as met while reading or writing the frame at `path`: header, format and
    /// truncation errors become [`Error::Frame`] naming the file; others are kept.
    #[must_use]
    pub fn in_frame(self, path: &str) -> Self {
        match self {
            Error::InvalidHeader(what) | Error::Data(what) => Error::Frame {
                path: path.to_string(),
                what,
            },
            Error::Truncated {
                what,
                needed,
                available,
            } => Error::Frame {
                path: path.to_string(),
                what: format!("truncated {what}: needs {needed} bytes, {available} available"),
            },
            Error::Frame { what, .. } => Error::Frame {
                path: path.to_string(),
                what,
            },
            other => other,
        }
    }

    /// Shorthand for [`Error::InvalidHeader`] from anything printable.
    pub(crate) fn header(msg: impl fmt::Display) -> Self {
        Error::InvalidHeader(msg.to_string())
    }
}

/// The file operation of an [`Error::Io`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IoOp {
    /// Open or create.
    Open,
    /// Read.
    Read,
    /// Write.
    Write,
    /// Flush to stable storage (fsync).
    Sync,
    /// Truncate or extend.
    Truncate,
    /// Remove or rename.
    Remove,
}

impl IoOp {
    /// The `BLOSC2_ERROR_FILE_*` code of a failure of this operation.
    #[must_use]
    pub fn code(self) -> i32 {
        match self {
            IoOp::Read => -13,
            IoOp::Write | IoOp::Sync => -14,
            IoOp::Open => -15,
            IoOp::Truncate => -25,
            IoOp::Remove => -31,
        }
    }
}

impl fmt::Display for IoOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IoOp::Open => "open",
            IoOp::Read => "read",
            IoOp::Write => "write",
            IoOp::Sync => "sync",
            IoOp::Truncate => "truncate",
            IoOp::Remove => "remove",
        })
    }
}
