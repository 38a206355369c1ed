//! The one error type of the library, with stable integer codes.
//!
//! Every variant says which thing failed in typed fields (`what` names the parameter, field
//! or structure; numbers stay numbers), so that a caller can match on it and a message names
//! the problem without a debugger. Every variant maps to one `i32` code ([`Error::code`]) from
//! the table [`CODES`]: the `BLOSC2_ERROR_*` value of C-Blosc2 (`include/blosc2.h`) where the
//! meaning is the same, otherwise a Strata code from −1000 down. Codes are never renumbered;
//! a retired code stays listed as a comment. The C header's `STRATA_ERROR_*` macros and
//! `strata_error_name` follow the same table.

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::sync::Arc;

/// Result alias used throughout Strata.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Defines the code constants ([`code`]) and the table [`CODES`] from one list.
macro_rules! codes {
    ($($name:ident = $value:literal: $meaning:literal,)*) => {
        /// The stable error codes, by name (the C header's `STRATA_ERROR_<name>`).
        pub mod code {
            $(
                #[doc = concat!($meaning, " (", stringify!($value), ").")]
                pub const $name: i32 = $value;
            )*
        }

        /// Every error code: value, name (the C macro is `STRATA_ERROR_` + name) and meaning,
        /// in ascending order of magnitude.
        pub const CODES: &[(i32, &str, &str)] = &[$(($value, stringify!($name), $meaning)),*];
    };
}

codes! {
    DATA = -3: "Corrupt compressed data",
    MEMORY_ALLOC = -4: "Memory could not be reserved",
    READ_BUFFER = -5: "Input ends early (truncated)",
    WRITE_BUFFER = -6: "Destination buffer too small",
    CODEC_SUPPORT = -7: "Unknown codec ID (no plugin provides it)",
    CODEC_PARAM = -8: "A codec parameter it cannot use",
    CODEC_DICT = -9: "Dictionary problem",
    VERSION_SUPPORT = -10: "Unsupported chunk format version",
    INVALID_HEADER = -11: "Bad chunk header or bad frame",
    INVALID_PARAM = -12: "Argument out of range",
    FILE_READ = -13: "File read failed",
    FILE_WRITE = -14: "File write or sync failed, or read-only",
    FILE_OPEN = -15: "File open or create failed",
    RUN_LENGTH = -17: "Bad special (run-length) chunk",
    FILTER_PIPELINE = -18: "Unknown filter, or a filter failed",
    CHUNK_INSERT = -19: "Chunk cannot be inserted",
    CHUNK_APPEND = -20: "Chunk cannot be appended (chunksize)",
    CHUNK_UPDATE = -21: "Chunk cannot be updated or deleted",
    FRAME_TYPE = -24: "Contiguous where sparse expected, or back",
    FILE_TRUNCATE = -25: "File truncate failed",
    FRAME_SPECIAL = -28: "Special-value fill impossible",
    FILE_REMOVE = -31: "File remove or rename failed",
    NULL_POINTER = -32: "A required pointer argument is NULL",
    INVALID_INDEX = -33: "Index or range outside the data",
    METALAYER_NOT_FOUND = -34: "No (vl)metalayer of that name",
    MAX_BUFSIZE_EXCEEDED = -35: "Buffer above the 2 GiB chunk limit",
    PLUGIN_PANIC = -1000: "A Rust plugin panicked",
    PANIC = -1001: "A bug in Strata, caught at the boundary",
    PLUGIN_LOAD = -1002: "Plugin library or descriptor rejected",
    INTERNAL = -1003: "A broken internal invariant (a bug in Strata)",
    REMOTE = -1004: "A remote frame: HTTP error, connection failure or changed file",
}

/// The values a number should have had: the accepted set of an [`Error::OutOfRange`],
/// [`Error::InvalidHeader`] or [`Error::RunLength`]. Displays as the predicate the value
/// broke ("is not 0 to 9", "exceeds 16").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Expected {
    /// `min` to `max`, both included.
    Range {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
    },
    /// `min` or more.
    AtLeast(i64),
    /// `max` or less.
    AtMost(i64),
    /// Less than this (a position inside something of this length).
    Below(i64),
    /// Exactly this.
    Exactly(i64),
    /// A positive multiple of this.
    MultipleOf(i64),
    /// One of a few values, as the user spells them (e.g. `"1, 2, 4 or 8"`).
    OneOf(&'static str),
}

impl Expected {
    /// `min` to `max` (both saturated into `i64`).
    #[must_use]
    pub fn range(min: impl TryInto<i64>, max: impl TryInto<i64>) -> Self {
        Expected::Range {
            min: to_i64(min),
            max: to_i64(max),
        }
    }

    /// `min` or more.
    #[must_use]
    pub fn at_least(min: impl TryInto<i64>) -> Self {
        Expected::AtLeast(to_i64(min))
    }

    /// `max` or less.
    #[must_use]
    pub fn at_most(max: impl TryInto<i64>) -> Self {
        Expected::AtMost(to_i64(max))
    }

    /// Exactly `v`.
    #[must_use]
    pub fn exactly(v: impl TryInto<i64>) -> Self {
        Expected::Exactly(to_i64(v))
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Range { min, max } => write!(f, "is not {min} to {max}"),
            Expected::AtLeast(min) => write!(f, "is below {min}"),
            Expected::AtMost(max) => write!(f, "exceeds {max}"),
            Expected::Below(end) => write!(f, "is not below {end}"),
            Expected::Exactly(v) => write!(f, "is not {v}"),
            Expected::MultipleOf(v) => write!(f, "is not a positive multiple of {v}"),
            Expected::OneOf(set) => write!(f, "is not {set}"),
        }
    }
}

/// Everything that can go wrong in Strata.
///
/// Each variant has a stable code ([`Error::code`], table [`CODES`]). Variants carry what
/// failed (`what`: the parameter, field or structure), the value found and what was expected,
/// so that a message names the problem without a debugger.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    // --- Stored data: chunks, frames, metalayers ---
    /// The input ends before a structure it announces (code −5, `BLOSC2_ERROR_READ_BUFFER`).
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes needed, counted from the start of the input.
        needed: usize,
        /// Bytes the input has.
        available: usize,
    },
    /// A field of a stored structure (chunk header, frame header or trailer, offsets index,
    /// b2nd or msgpack metadata) has a value its format forbids (code −11,
    /// `BLOSC2_ERROR_INVALID_HEADER`).
    InvalidHeader {
        /// The structure and field, e.g. `"chunk blocksize"`.
        what: &'static str,
        /// The value found.
        value: i64,
        /// What the format allows.
        expected: Expected,
    },
    /// A stored structure breaks a rule of its format that no single field shows (code −11,
    /// `BLOSC2_ERROR_INVALID_HEADER`).
    Malformed {
        /// The rule broken, e.g. `"VL-block bstarts are not increasing"`.
        what: &'static str,
    },
    /// A msgpack-encoded structure (frame header, trailer, metalayer index) has another
    /// marker at a field than its layout says, or ends before it (code −11,
    /// `BLOSC2_ERROR_INVALID_HEADER`).
    Msgpack {
        /// The field, e.g. `"frame_len"`.
        what: &'static str,
        /// Its position, in bytes from the start of the structure.
        at: usize,
        /// What the layout has there.
        expected: Marker,
        /// The marker found; `None` where the bytes end.
        found: Option<u8>,
    },
    /// The chunk format version is not one Strata reads (code −10, `BLOSC2_ERROR_VERSION_SUPPORT`).
    VersionSupport {
        /// Version byte found.
        version: u8,
    },
    /// A frame (or a sparse frame's index or chunk file) is malformed or inconsistent (code
    /// −11, `BLOSC2_ERROR_INVALID_HEADER`, the value C-Blosc2 returns for a bad frame).
    Frame {
        /// The file or directory, or `<memory>` for an in-memory frame.
        path: String,
        /// What is wrong.
        source: Box<Error>,
    },
    /// An error about one of many things, e.g. a chunk of a frame or a block of a chunk; the
    /// code is the source's.
    At {
        /// What is counted, e.g. `"chunk"`.
        what: &'static str,
        /// Which one.
        index: u64,
        /// What is wrong with it.
        source: Box<Error>,
    },
    /// An error about the file or dataset at `path`; the code is the source's.
    InFile {
        /// The file (or directory, or HDF5 dataset).
        path: String,
        /// What is wrong with it.
        source: Box<Error>,
    },
    /// The frame is of the other type: contiguous where sparse was expected or the reverse
    /// (code −24, `BLOSC2_ERROR_FRAME_TYPE`).
    FrameType {
        /// The file or directory.
        path: String,
        /// The type expected (`contiguous` or `sparse`).
        expected: &'static str,
        /// The frame type byte found.
        found: u8,
    },
    /// A run-length (special) stream or chunk is malformed (code −17, `BLOSC2_ERROR_RUN_LENGTH`).
    RunLength {
        /// The field, e.g. `"typesize of a NaN chunk"`.
        what: &'static str,
        /// The value found.
        value: i64,
        /// What the format allows.
        expected: Expected,
    },

    // --- Codecs, filters, plugins ---
    /// No codec is registered under this ID (code −7, `BLOSC2_ERROR_CODEC_SUPPORT`).
    UnknownCodec {
        /// The codec ID (Blosc2 `compcode`).
        id: u8,
    },
    /// No filter is registered under this ID (code −18, `BLOSC2_ERROR_FILTER_PIPELINE`).
    UnknownFilter {
        /// The filter ID.
        id: u8,
    },
    /// No codec is registered under this ID and no plugin library provides it (code −7,
    /// `BLOSC2_ERROR_CODEC_SUPPORT`, as [`Error::UnknownCodec`]).
    CodecNotFound {
        /// The codec ID.
        id: u8,
        /// Every directory searched, and why each candidate library was rejected.
        searched: String,
    },
    /// No filter is registered under this ID and no plugin library provides it (code −18,
    /// `BLOSC2_ERROR_FILTER_PIPELINE`, as [`Error::UnknownFilter`]).
    FilterNotFound {
        /// The filter ID.
        id: u8,
        /// Every directory searched, and why each candidate library was rejected.
        searched: String,
    },
    /// A codec's stream does not decode (code −3, `BLOSC2_ERROR_DATA`).
    Codec {
        /// The codec ID.
        id: u8,
        /// The codec's own words (a library's or plugin's message).
        message: String,
    },
    /// Decoding produced another size than announced (code −3, `BLOSC2_ERROR_DATA`).
    Decoded {
        /// What was decoded, e.g. `"VL block"`.
        what: &'static str,
        /// Bytes announced.
        expected: u64,
        /// Bytes produced.
        found: u64,
    },
    /// A codec was given a parameter it cannot use (code −8, `BLOSC2_ERROR_CODEC_PARAM`).
    CodecParam {
        /// The codec ID.
        id: u8,
        /// What the codec cannot use.
        message: String,
    },
    /// A dictionary problem (code −9, `BLOSC2_ERROR_CODEC_DICT`).
    CodecDict {
        /// The codec ID.
        id: u8,
        /// What is wrong with the dictionary.
        message: String,
    },
    /// A filter failed or was given data it cannot handle (code −18, `BLOSC2_ERROR_FILTER_PIPELINE`).
    Filter {
        /// The filter ID.
        id: u8,
        /// What went wrong.
        message: String,
    },
    /// A codec or filter plugin panicked (Strata code −1000).
    PluginPanic {
        /// The plugin ID.
        id: u8,
    },
    /// A plugin could not be loaded: the library does not open, lacks the entry symbol, or a
    /// descriptor has the wrong ABI version, kind, ID or name (Strata code −1002). Nothing
    /// from that library is registered.
    PluginLoad {
        /// The library path, or the descriptor's name for in-process registration.
        source_name: String,
        /// What is wrong.
        message: String,
    },
    /// A plugin codec refused an argument for a reason other than a codec parameter (its
    /// `ERROR_INVALID_PARAM`; code −12, `BLOSC2_ERROR_INVALID_PARAM`).
    PluginParam {
        /// The plugin's ID.
        id: u8,
        /// The plugin's own words.
        message: String,
    },
    /// A codec or filter cannot be registered under this ID and name (code −12,
    /// `BLOSC2_ERROR_INVALID_PARAM`).
    PluginId {
        /// `"codec"` or `"filter"`.
        kind: &'static str,
        /// The ID asked for.
        id: u8,
        /// The name asked for.
        name: String,
        /// Which rule it breaks.
        problem: PluginIdProblem,
    },

    // --- The caller's parameters ---
    /// A parameter outside the values accepted (code −12, `BLOSC2_ERROR_INVALID_PARAM`).
    OutOfRange {
        /// The parameter, e.g. `"clevel"`.
        what: &'static str,
        /// The value given.
        value: i64,
        /// The values accepted.
        expected: Expected,
    },
    /// Two quantities that must agree do not, e.g. the bytes of data given for a selection
    /// (code −12, `BLOSC2_ERROR_INVALID_PARAM`).
    Mismatch {
        /// What was counted, e.g. `"bytes of data for the selection"`.
        what: &'static str,
        /// The count required.
        expected: u64,
        /// The count given.
        found: u64,
    },
    /// Two shapes that must agree do not (code −12, `BLOSC2_ERROR_INVALID_PARAM`).
    ShapeMismatch {
        /// What has the shape, e.g. `"the chunk's b2nd frame"`.
        what: &'static str,
        /// The shape required.
        expected: Vec<usize>,
        /// The shape given.
        found: Vec<usize>,
    },
    /// A dimension's shape, chunkshape and blockshape break the b2nd rules: shape ≥ 0 and
    /// 1 ≤ blockshape ≤ chunkshape, or 0 for both in an empty dimension (code −12,
    /// `BLOSC2_ERROR_INVALID_PARAM`).
    Partition {
        /// The dimension, outermost first.
        dim: usize,
        /// Its length.
        shape: i64,
        /// Its chunk length.
        chunkshape: i64,
        /// Its block length.
        blockshape: i64,
    },
    /// A dtype string Strata cannot size: not a NumPy typestr or a structured dtype repr
    /// (code −12, `BLOSC2_ERROR_INVALID_PARAM`).
    Dtype {
        /// The dtype as given.
        dtype: String,
        /// What is wrong with it.
        why: Cow<'static, str>,
        /// Where, in bytes from its start, when a position says more.
        at: Option<usize>,
    },
    /// An environment variable's value does not parse (code −12,
    /// `BLOSC2_ERROR_INVALID_PARAM`).
    EnvVar {
        /// The variable, e.g. `"STRATA_HTTP_RETRIES"`.
        name: &'static str,
        /// Its value.
        value: String,
        /// What it should be, e.g. `"a count"`.
        expected: &'static str,
    },
    /// A string argument is not UTF-8 (code −12, `BLOSC2_ERROR_INVALID_PARAM`).
    NotUtf8 {
        /// The argument, e.g. `"urlpath"`.
        what: &'static str,
    },
    /// A size computed from the parameters overflows (code −12, `BLOSC2_ERROR_INVALID_PARAM`).
    Overflow {
        /// What overflows, e.g. `"the selection's size"`.
        what: &'static str,
    },
    /// A request that breaks a rule of Strata's or of the object's state (code −12,
    /// `BLOSC2_ERROR_INVALID_PARAM`).
    Unsupported {
        /// The rule, e.g. `"a sparse frame needs a urlpath"`.
        what: &'static str,
    },
    /// A name or number given twice, or one that is already taken (code −12,
    /// `BLOSC2_ERROR_INVALID_PARAM`).
    Duplicate {
        /// What must be unique, e.g. `"metalayer"`.
        what: &'static str,
        /// The name or number given twice.
        name: String,
    },
    /// Nothing of this kind has this name (code −12, `BLOSC2_ERROR_INVALID_PARAM`).
    NameNotFound {
        /// What was looked for, e.g. `"codec"`.
        what: &'static str,
        /// The name asked for.
        name: String,
        /// Where plugin libraries were looked for, and why each was rejected (empty when
        /// no search was made).
        searched: String,
    },
    /// A (vl)metalayer's msgpack value is not of the kind asked for, e.g. a string read as
    /// an integer (code −12, `BLOSC2_ERROR_INVALID_PARAM`).
    ValueKind {
        /// Whose value, e.g. `vlmetalayer "units"`.
        what: String,
        /// The kind asked for, e.g. `"an int64"`.
        expected: &'static str,
        /// The kind found, e.g. `"a string"`.
        found: &'static str,
    },
    /// No (vl)metalayer of this name (code −34, `BLOSC2_ERROR_METALAYER_NOT_FOUND`).
    MetalayerNotFound {
        /// The name asked for.
        name: String,
    },
    /// An index lies outside the data (code −33, `BLOSC2_ERROR_INVALID_INDEX`).
    InvalidIndex {
        /// What is indexed, e.g. `"chunk"`.
        what: &'static str,
        /// The index given (negative when a C caller passed a negative one).
        index: i64,
        /// How many there are (0 when unknown, for a negative index).
        len: u64,
    },
    /// A range lies outside the data (code −33, `BLOSC2_ERROR_INVALID_INDEX`).
    InvalidRange {
        /// What the range counts, e.g. `"bytes"`.
        what: &'static str,
        /// First in the range.
        start: u64,
        /// One past the last in the range (saturated when it overflows).
        end: u64,
        /// How many there are.
        len: u64,
    },
    /// The destination buffer is too small (code −6, `BLOSC2_ERROR_WRITE_BUFFER`).
    DestinationTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes available in the destination.
        available: usize,
    },
    /// A buffer exceeds the Blosc2 limit of `BLOSC2_MAX_BUFFERSIZE` bytes
    /// (code −35, `BLOSC2_ERROR_MAX_BUFSIZE_EXCEEDED`).
    MaxBufsizeExceeded {
        /// Size given, in bytes.
        size: usize,
        /// The limit, in bytes.
        limit: usize,
    },

    // --- Writes ---
    /// A chunk breaks the frame's chunksize rule: every chunk but the last holds exactly
    /// `chunksize` bytes (code by operation: append −20 `BLOSC2_ERROR_CHUNK_APPEND`, insert −19
    /// `BLOSC2_ERROR_CHUNK_INSERT`, update −21 `BLOSC2_ERROR_CHUNK_UPDATE`).
    ChunkSize {
        /// The operation refused.
        op: ChunkOp,
        /// The chunk that breaks the rule (the new one, or the short last one it would follow).
        nchunk: u64,
        /// Its size in bytes.
        nbytes: u64,
        /// The frame's chunksize.
        chunksize: u64,
    },
    /// A special-value fill cannot be done (code −28, `BLOSC2_ERROR_FRAME_SPECIAL`).
    FrameSpecial {
        /// What the count `value` is of, and why it is refused.
        what: &'static str,
        /// The count.
        value: u64,
    },

    // --- The system ---
    /// Memory could not be reserved (code −4, `BLOSC2_ERROR_MEMORY_ALLOC`).
    MemoryAlloc(usize),
    /// A file operation failed (code by operation: open −15 `BLOSC2_ERROR_FILE_OPEN`, read −13
    /// `BLOSC2_ERROR_FILE_READ`, write and sync −14 `BLOSC2_ERROR_FILE_WRITE`, truncate −25
    /// `BLOSC2_ERROR_FILE_TRUNCATE`, remove −31 `BLOSC2_ERROR_FILE_REMOVE`).
    Io {
        /// The file.
        path: String,
        /// The operation.
        op: IoOp,
        /// The system's error (its [`io::ErrorKind`] kept), or one Strata made for a refusal
        /// such as a read-only handle.
        source: IoSource,
    },
    /// An invariant of Strata's own code does not hold: a bug, not the caller's fault
    /// (Strata code −1003).
    Internal {
        /// The invariant broken.
        what: &'static str,
    },
    /// A remote frame could not be read: the server answered an error status, the
    /// connection failed (after the retries), the answer was malformed, or the file changed
    /// since it was opened (Strata code −1004).
    Remote {
        /// The URL asked for.
        url: String,
        /// The HTTP status of the answer, when there was one.
        status: Option<u16>,
        /// What went wrong.
        message: String,
    },
}

impl Error {
    /// The stable integer code of this error (table [`CODES`]): the `BLOSC2_ERROR_*` value
    /// where the meaning is the same, a Strata code from −1000 down otherwise. Never 0,
    /// never positive.
    #[must_use]
    pub fn code(&self) -> i32 {
        match self {
            Error::At { source, .. } | Error::InFile { source, .. } => source.code(),
            Error::Codec { .. } | Error::Decoded { .. } => code::DATA,
            Error::MemoryAlloc(_) => code::MEMORY_ALLOC,
            Error::Truncated { .. } => code::READ_BUFFER,
            Error::DestinationTooSmall { .. } => code::WRITE_BUFFER,
            Error::UnknownCodec { .. } | Error::CodecNotFound { .. } => code::CODEC_SUPPORT,
            Error::CodecParam { .. } => code::CODEC_PARAM,
            Error::CodecDict { .. } => code::CODEC_DICT,
            Error::VersionSupport { .. } => code::VERSION_SUPPORT,
            Error::InvalidHeader { .. }
            | Error::Malformed { .. }
            | Error::Msgpack { .. }
            | Error::Frame { .. } => code::INVALID_HEADER,
            Error::OutOfRange { .. }
            | Error::Mismatch { .. }
            | Error::ShapeMismatch { .. }
            | Error::Partition { .. }
            | Error::Dtype { .. }
            | Error::EnvVar { .. }
            | Error::NotUtf8 { .. }
            | Error::Overflow { .. }
            | Error::Unsupported { .. }
            | Error::Duplicate { .. }
            | Error::NameNotFound { .. }
            | Error::ValueKind { .. }
            | Error::PluginParam { .. }
            | Error::PluginId { .. } => code::INVALID_PARAM,
            Error::RunLength { .. } => code::RUN_LENGTH,
            Error::UnknownFilter { .. } | Error::FilterNotFound { .. } | Error::Filter { .. } => {
                code::FILTER_PIPELINE
            }
            Error::InvalidIndex { .. } | Error::InvalidRange { .. } => code::INVALID_INDEX,
            Error::MaxBufsizeExceeded { .. } => code::MAX_BUFSIZE_EXCEEDED,
            Error::FrameType { .. } => code::FRAME_TYPE,
            Error::Io { op, .. } => op.code(),
            Error::ChunkSize { op, .. } => op.code(),
            Error::MetalayerNotFound { .. } => code::METALAYER_NOT_FOUND,
            Error::FrameSpecial { .. } => code::FRAME_SPECIAL,
            Error::PluginPanic { .. } => code::PLUGIN_PANIC,
            Error::PluginLoad { .. } => code::PLUGIN_LOAD,
            Error::Internal { .. } => code::INTERNAL,
            Error::Remote { .. } => code::REMOTE,
        }
    }

    /// The [`io::ErrorKind`] of an [`Error::Io`] (also inside an [`Error::Frame`]); `None`
    /// for every other error.
    #[must_use]
    pub fn io_kind(&self) -> Option<io::ErrorKind> {
        match self.root() {
            Error::Io { source, .. } => Some(source.kind()),
            _ => None,
        }
    }

    /// The innermost error: the source of an [`Error::Frame`] or [`Error::At`], itself
    /// otherwise. Match on it to tell what failed wherever it was found.
    #[must_use]
    pub fn root(&self) -> &Error {
        match self {
            Error::Frame { source, .. }
            | Error::At { source, .. }
            | Error::InFile { source, .. } => source.root(),
            other => other,
        }
    }

    /// This error as met while reading or writing the frame at `path`: errors of the stored
    /// bytes (headers, truncation, streams) become [`Error::Frame`] naming the file (an
    /// [`Error::Frame`] is renamed); others are kept.
    #[must_use]
    pub fn in_frame(self, path: &str) -> Self {
        if let Error::Frame { source, .. } = self {
            return Error::Frame {
                path: path.to_string(),
                source,
            };
        }
        // Bad headers, truncation and undecodable streams: what is wrong is the stored bytes.
        let stored = matches!(
            self.root().code(),
            code::INVALID_HEADER | code::READ_BUFFER | code::DATA
        );
        if stored {
            Error::frame(path, self)
        } else {
            self
        }
    }

    /// An [`Error::InFile`]: `source` about the file at `path`.
    pub(crate) fn in_file(path: impl Into<String>, source: Error) -> Self {
        Error::InFile {
            path: path.into(),
            source: Box::new(source),
        }
    }

    /// An [`Error::At`]: `source` about `what` number `index`.
    pub(crate) fn at(what: &'static str, index: usize, source: Error) -> Self {
        Error::At {
            what,
            index: index as u64,
            source: Box::new(source),
        }
    }

    /// An [`Error::Frame`] at `path` caused by `source`.
    pub(crate) fn frame(path: impl Into<String>, source: Error) -> Self {
        Error::Frame {
            path: path.into(),
            source: Box::new(source),
        }
    }

    /// An [`Error::InvalidHeader`].
    pub(crate) fn header(what: &'static str, value: impl TryInto<i64>, expected: Expected) -> Self {
        Error::InvalidHeader {
            what,
            value: to_i64(value),
            expected,
        }
    }

    /// An [`Error::OutOfRange`].
    pub(crate) fn range(what: &'static str, value: impl TryInto<i64>, expected: Expected) -> Self {
        Error::OutOfRange {
            what,
            value: to_i64(value),
            expected,
        }
    }

    /// An [`Error::Mismatch`].
    pub(crate) fn mismatch(what: &'static str, expected: usize, found: usize) -> Self {
        Error::Mismatch {
            what,
            expected: expected as u64,
            found: found as u64,
        }
    }

    /// An [`Error::ShapeMismatch`].
    pub(crate) fn shapes(what: &'static str, expected: &[usize], found: &[usize]) -> Self {
        Error::ShapeMismatch {
            what,
            expected: expected.to_vec(),
            found: found.to_vec(),
        }
    }

    /// An [`Error::InvalidIndex`].
    pub(crate) fn index(what: &'static str, index: impl TryInto<i64>, len: usize) -> Self {
        Error::InvalidIndex {
            what,
            index: to_i64(index),
            len: len as u64,
        }
    }

    /// Checks that `range` of `what` lies inside `0..len`.
    ///
    /// # Errors
    /// [`Error::InvalidRange`] otherwise (also for a reversed range).
    pub(crate) fn check_range(
        what: &'static str,
        range: &std::ops::Range<usize>,
        len: usize,
    ) -> Result<()> {
        if range.start > range.end || range.end > len {
            return Err(Error::InvalidRange {
                what,
                start: range.start as u64,
                end: range.end as u64,
                len: len as u64,
            });
        }
        Ok(())
    }

    /// An [`Error::Decoded`]: `what` decoded to `found` bytes where `expected` were due.
    pub(crate) fn decoded(what: &'static str, expected: usize, found: usize) -> Self {
        Error::Decoded {
            what,
            expected: expected as u64,
            found: found as u64,
        }
    }

    /// An [`Error::Io`]: `op` on `path` failed with `e`.
    pub(crate) fn io(path: impl Into<String>, op: IoOp, e: io::Error) -> Self {
        Error::Io {
            path: path.into(),
            op,
            source: IoSource::from(e),
        }
    }

    /// An [`Error::Io`] that Strata makes itself (no system call failed), e.g. for a
    /// read-only handle, or that a library reported in its own words (`why`).
    pub(crate) fn refused(
        path: impl Into<String>,
        op: IoOp,
        kind: io::ErrorKind,
        why: &str,
    ) -> Self {
        Error::io(path, op, io::Error::new(kind, why))
    }

    /// The message without the words naming the error's class (e.g. without "invalid
    /// parameter: "), for a message that already says it.
    pub(crate) fn detail(&self) -> String {
        struct Body<'a>(&'a Error);
        impl fmt::Display for Body<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.body(f)
            }
        }
        Body(self).to_string()
    }

    /// The message without the prefix naming the error's class.
    fn body(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated {
                what,
                needed,
                available,
            } => write!(f, "{what} needs {needed} bytes, only {available} available"),
            Error::InvalidHeader {
                what,
                value,
                expected,
            }
            | Error::RunLength {
                what,
                value,
                expected,
            }
            | Error::OutOfRange {
                what,
                value,
                expected,
            } => write!(f, "{what} {value} {expected}"),
            Error::Malformed { what } | Error::Unsupported { what } => f.write_str(what),
            Error::ValueKind {
                what,
                expected,
                found,
            } => write!(f, "{what} holds {found}, not {expected}"),
            Error::Msgpack {
                what,
                at,
                expected,
                found,
            } => {
                write!(f, "{what}: expected {expected} at byte {at}, found ")?;
                match found {
                    Some(m) => write!(f, "{m:#04x}"),
                    None => f.write_str("the end of the bytes"),
                }
            }
            Error::VersionSupport { version } => write!(
                f,
                "unsupported chunk format version {version} (Strata reads 1 to 6)"
            ),
            Error::Frame { path, source } => write!(f, "{path}: bad frame: {source}"),
            Error::At {
                what,
                index,
                source,
            } => write!(f, "{what} {index}: {source}"),
            Error::InFile { path, source } => write!(f, "{path}: {source}"),
            Error::FrameType {
                path,
                expected,
                found,
            } => write!(
                f,
                "{path}: frame type {found} where {expected} was expected"
            ),
            Error::UnknownCodec { id } => write!(f, "unknown codec ID {id}"),
            Error::UnknownFilter { id } => write!(f, "unknown filter ID {id}"),
            Error::CodecNotFound { id, searched } => write!(
                f,
                "unknown codec ID {id}: not built in, not registered, and no plugin provides it \
                 (searched {searched})"
            ),
            Error::FilterNotFound { id, searched } => write!(
                f,
                "unknown filter ID {id}: not built in, not registered, and no plugin provides \
                 it (searched {searched})"
            ),
            Error::PluginParam { id, message } => write!(f, "{message} (plugin {id})"),
            Error::Codec { id, message }
            | Error::CodecParam { id, message }
            | Error::CodecDict { id, message } => write!(f, "{message} (codec {id})"),
            Error::Decoded {
                what,
                expected,
                found,
            } => write!(f, "{what} decoded to {found} bytes, expected {expected}"),
            Error::Filter { id, message } => write!(f, "filter {id}: {message}"),
            Error::PluginPanic { id } => write!(f, "plugin {id} panicked"),
            Error::PluginLoad {
                source_name,
                message,
            } => write!(f, "plugin {source_name}: {message}"),
            Error::PluginId {
                kind,
                id,
                name,
                problem,
            } => problem.describe(f, kind, *id, name),
            Error::Mismatch {
                what,
                expected,
                found,
            } => write!(f, "{what}: {found} given, {expected} expected"),
            Error::ShapeMismatch {
                what,
                expected,
                found,
            } => write!(f, "{what}: shape {found:?} given, {expected:?} expected"),
            Error::Partition {
                dim,
                shape,
                chunkshape,
                blockshape,
            } => write!(
                f,
                "b2nd: dimension {dim} has shape {shape}, chunkshape {chunkshape}, blockshape \
                 {blockshape} (need shape >= 0 and 1 <= blockshape <= chunkshape, or 0 for an \
                 empty dimension)"
            ),
            Error::Dtype { dtype, why, at } => {
                write!(f, "dtype {dtype:?}: {why}")?;
                if let Some(at) = at {
                    write!(f, " at byte {at}")?;
                }
                Ok(())
            }
            Error::EnvVar {
                name,
                value,
                expected,
            } => write!(f, "{name}={value:?} is not {expected}"),
            Error::NotUtf8 { what } => write!(f, "{what} is not UTF-8"),
            Error::Overflow { what } => write!(f, "{what} overflows"),
            Error::Duplicate { what, name } => write!(f, "duplicate {what}: {name}"),
            Error::NameNotFound {
                what,
                name,
                searched,
            } => {
                write!(f, "no {what} named {name:?}")?;
                if !searched.is_empty() {
                    write!(f, " (searched {searched})")?;
                }
                Ok(())
            }
            Error::MetalayerNotFound { name } => write!(f, "no metalayer named {name:?}"),
            Error::InvalidIndex { what, index, .. } if *index < 0 => {
                write!(f, "{what} {index} is negative")
            }
            Error::InvalidIndex { what, index, len } => write!(f, "{what} {index} of {len}"),
            Error::InvalidRange {
                what,
                start,
                end,
                len,
            } => write!(f, "{what} {start}..{end} of {len}"),
            Error::DestinationTooSmall { needed, available } => {
                write!(f, "{needed} bytes needed, {available} given")
            }
            Error::MaxBufsizeExceeded { size, limit } => write!(
                f,
                "{size} bytes exceed the Blosc2 chunk limit of {limit} bytes"
            ),
            Error::ChunkSize {
                nchunk,
                nbytes,
                chunksize,
                ..
            } => {
                if nbytes > chunksize {
                    write!(
                        f,
                        "chunk {nchunk} of {nbytes} bytes exceeds the chunksize {chunksize}"
                    )
                } else {
                    write!(
                        f,
                        "chunk {nchunk} holds {nbytes} of {chunksize} bytes: only the last \
                         chunk may be shorter than the chunksize"
                    )
                }
            }
            Error::FrameSpecial { what, value } => write!(f, "{value} {what}"),
            Error::MemoryAlloc(n) => write!(f, "could not allocate {n} bytes"),
            Error::Io { path, op, source } => write!(f, "{path}: cannot {op}: {source}"),
            Error::Internal { what } => write!(f, "{what}"),
            Error::Remote { url, message, .. } => write!(f, "{url}: {message}"),
        }
    }

    /// The words before the message naming the error's class, if any.
    fn prefix(&self) -> Option<&'static str> {
        if matches!(
            self,
            Error::Frame { .. } | Error::At { .. } | Error::InFile { .. }
        ) {
            // The path or the index comes first; the source says its own class.
            return None;
        }
        Some(match self.code() {
            code::READ_BUFFER => "truncated input",
            code::INVALID_HEADER => "invalid header",
            code::RUN_LENGTH => "bad run-length encoding",
            code::DATA => "corrupt data",
            code::CODEC_PARAM => "codec parameter",
            code::CODEC_DICT => "codec dictionary",
            code::INVALID_PARAM => "invalid parameter",
            code::INVALID_INDEX => "index out of range",
            code::WRITE_BUFFER => "destination too small",
            code::CHUNK_APPEND => "cannot append the chunk",
            code::CHUNK_INSERT => "cannot insert the chunk",
            code::CHUNK_UPDATE => "cannot update the chunk",
            code::FRAME_SPECIAL => "cannot fill with special values",
            code::INTERNAL => "internal error (a bug in Strata)",
            // The others' messages say what they are.
            _ => return None,
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = self.prefix() {
            write!(f, "{p}: ")?;
        }
        self.body(f)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Frame { source, .. }
            | Error::At { source, .. }
            | Error::InFile { source, .. } => Some(&**source),
            Error::Io { source, .. } => Some(source.get()),
            _ => None,
        }
    }
}

/// `value` as an `i64`, saturated at `i64::MAX` (sizes beyond it are reported as that).
pub(crate) fn to_i64(value: impl TryInto<i64>) -> i64 {
    value.try_into().unwrap_or(i64::MAX)
}

/// The msgpack marker an [`Error::Msgpack`] expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Marker {
    /// This marker byte.
    Exactly(u8),
    /// Any integer marker.
    Integer,
    /// An integer that fits an `i64` (a `uint64` above `i64::MAX` does not).
    Int64,
    /// `true` or `false`.
    Bool,
    /// A fixarray or array16.
    Array,
    /// A fixstr.
    Fixstr,
    /// This many bytes of the field's value.
    Bytes(usize),
}

impl fmt::Display for Marker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Marker::Exactly(m) => write!(f, "msgpack marker {m:#04x}"),
            Marker::Integer => f.write_str("a msgpack integer"),
            Marker::Int64 => f.write_str("a msgpack integer that fits i64"),
            Marker::Bool => f.write_str("a msgpack bool"),
            Marker::Array => f.write_str("a msgpack array"),
            Marker::Fixstr => f.write_str("a msgpack fixstr"),
            Marker::Bytes(n) => write!(f, "{n} bytes"),
        }
    }
}

/// The rule an [`Error::PluginId`] breaks (Blosc2's ID ranges: 0–31 built-in, 32–159
/// assigned by Blosc2 to named plugins, 160–255 for users).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PluginIdProblem {
    /// The name is not 1 to 63 characters of `[A-Za-z0-9_]`.
    Name,
    /// The ID is in Blosc's built-in range 0–31.
    Builtin,
    /// Blosc2 assigns the ID to another name.
    Blosc2Assigns(&'static str),
    /// The ID is in Blosc2's global range 32–159, which Blosc2 assigns to nothing.
    Unassigned,
    /// Filter ID 0 means "no filter".
    NoFilter,
    /// Another codec or filter holds the ID.
    IdTaken {
        /// Its name.
        by: String,
        /// Where it came from.
        origin: String,
    },
    /// Another codec or filter has the name.
    NameTaken {
        /// Its ID.
        id: u8,
        /// Where it came from.
        origin: String,
    },
}

impl PluginIdProblem {
    fn describe(&self, f: &mut fmt::Formatter<'_>, kind: &str, id: u8, name: &str) -> fmt::Result {
        const USERS: &str = "user plugins take IDs 160-255";
        match self {
            PluginIdProblem::Name => write!(
                f,
                "{kind} name {name:?} is not 1 to 63 characters of [A-Za-z0-9_]"
            ),
            PluginIdProblem::Builtin => write!(
                f,
                "{kind} ID {id} ({name}) is in Blosc's built-in range 0-31; {USERS}"
            ),
            PluginIdProblem::Blosc2Assigns(blosc2) => {
                write!(
                    f,
                    "{kind} ID {id} is Blosc2's {blosc2}, not {name}; {USERS}"
                )
            }
            PluginIdProblem::Unassigned => write!(
                f,
                "{kind} ID {id} ({name}) is in Blosc2's global range 32-159 but Blosc2 assigns \
                 it to nothing; {USERS}"
            ),
            PluginIdProblem::NoFilter => write!(f, "filter ID 0 ({name}) means no filter"),
            PluginIdProblem::IdTaken { by, origin } => {
                write!(f, "{kind} ID {id} is already taken by {by} ({origin})")
            }
            PluginIdProblem::NameTaken { id: other, origin } => write!(
                f,
                "{kind} name {name} is already taken by ID {other} ({origin})"
            ),
        }
    }
}

/// The operation of an [`Error::ChunkSize`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChunkOp {
    /// Append at the end.
    Append,
    /// Insert before a chunk.
    Insert,
    /// Replace a chunk.
    Update,
}

impl ChunkOp {
    /// The `BLOSC2_ERROR_CHUNK_*` code of a refusal of this operation.
    #[must_use]
    pub fn code(self) -> i32 {
        match self {
            ChunkOp::Append => code::CHUNK_APPEND,
            ChunkOp::Insert => code::CHUNK_INSERT,
            ChunkOp::Update => code::CHUNK_UPDATE,
        }
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
            IoOp::Read => code::FILE_READ,
            IoOp::Write | IoOp::Sync => code::FILE_WRITE,
            IoOp::Open => code::FILE_OPEN,
            IoOp::Truncate => code::FILE_TRUNCATE,
            IoOp::Remove => code::FILE_REMOVE,
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

/// The [`io::Error`] of an [`Error::Io`], shared so that [`Error`] stays `Clone`. Two are
/// equal when their kind and message are.
#[derive(Debug, Clone)]
pub struct IoSource(Arc<io::Error>);

impl IoSource {
    /// The error's kind.
    #[must_use]
    pub fn kind(&self) -> io::ErrorKind {
        self.0.kind()
    }

    /// The error itself.
    #[must_use]
    pub fn get(&self) -> &io::Error {
        &self.0
    }
}

impl From<io::Error> for IoSource {
    fn from(e: io::Error) -> Self {
        IoSource(Arc::new(e))
    }
}

impl PartialEq for IoSource {
    fn eq(&self, other: &Self) -> bool {
        self.kind() == other.kind() && self.0.to_string() == other.0.to_string()
    }
}

impl Eq for IoSource {}

impl fmt::Display for IoSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests;
