//! The code of every [`Error`] variant, pinned (a golden list), its messages, and the I/O
//! errors it carries.

use super::*;

/// One error of every variant with its code, written out: renumbering a code, or adding
/// a variant without listing it here, fails this test. The match in
/// [`every_variant_is_listed`] has no wildcard, so a new variant does not compile until
/// it is added there too.
fn golden() -> Vec<(Error, i32)> {
    let s = String::new;
    let e = Expected::AtLeast(0);
    let mut all = vec![
        (
            Error::Truncated {
                what: "",
                needed: 0,
                available: 0,
            },
            -5,
        ),
        (
            Error::InvalidHeader {
                what: "",
                value: 0,
                expected: e,
            },
            -11,
        ),
        (Error::Malformed { what: "" }, -11),
        (
            Error::Msgpack {
                what: "",
                at: 0,
                expected: Marker::Bool,
                found: None,
            },
            -11,
        ),
        (Error::VersionSupport { version: 0 }, -10),
        (Error::frame("", Error::Malformed { what: "" }), -11),
        (Error::at("", 0, Error::MemoryAlloc(0)), -4),
        (Error::at("", 0, Error::Overflow { what: "" }), -12),
        (Error::in_file("", Error::MemoryAlloc(0)), -4),
        (
            Error::FrameType {
                path: s(),
                expected: "",
                found: 0,
            },
            -24,
        ),
        (
            Error::RunLength {
                what: "",
                value: 0,
                expected: e,
            },
            -17,
        ),
        (Error::UnknownCodec { id: 0 }, -7),
        (Error::UnknownFilter { id: 0 }, -18),
        (
            Error::CodecNotFound {
                id: 0,
                searched: s(),
            },
            -7,
        ),
        (
            Error::FilterNotFound {
                id: 0,
                searched: s(),
            },
            -18,
        ),
        (
            Error::Codec {
                id: 0,
                message: s(),
            },
            -3,
        ),
        (
            Error::Decoded {
                what: "",
                expected: 0,
                found: 0,
            },
            -3,
        ),
        (
            Error::CodecParam {
                id: 0,
                message: s(),
            },
            -8,
        ),
        (
            Error::CodecDict {
                id: 0,
                message: s(),
            },
            -9,
        ),
        (
            Error::Filter {
                id: 0,
                message: s(),
            },
            -18,
        ),
        (Error::PluginPanic { id: 0 }, -1000),
        (
            Error::PluginLoad {
                source_name: s(),
                message: s(),
            },
            -1002,
        ),
        (
            Error::PluginParam {
                id: 0,
                message: s(),
            },
            -12,
        ),
        (
            Error::PluginId {
                kind: "",
                id: 0,
                name: s(),
                problem: PluginIdProblem::Name,
            },
            -12,
        ),
        (
            Error::OutOfRange {
                what: "",
                value: 0,
                expected: e,
            },
            -12,
        ),
        (
            Error::Mismatch {
                what: "",
                expected: 0,
                found: 0,
            },
            -12,
        ),
        (Error::shapes("", &[1], &[2]), -12),
        (
            Error::Partition {
                dim: 0,
                shape: 0,
                chunkshape: 0,
                blockshape: 0,
            },
            -12,
        ),
        (
            Error::Dtype {
                dtype: s(),
                why: "".into(),
                at: None,
            },
            -12,
        ),
        (
            Error::EnvVar {
                name: "",
                value: s(),
                expected: "",
            },
            -12,
        ),
        (Error::NotUtf8 { what: "" }, -12),
        (Error::Overflow { what: "" }, -12),
        (Error::Unsupported { what: "" }, -12),
        (
            Error::Duplicate {
                what: "",
                name: s(),
            },
            -12,
        ),
        (
            Error::NameNotFound {
                what: "",
                name: s(),
                searched: s(),
            },
            -12,
        ),
        (
            Error::ValueKind {
                what: s(),
                expected: "",
                found: "",
            },
            -12,
        ),
        (Error::MetalayerNotFound { name: s() }, -34),
        (
            Error::InvalidIndex {
                what: "",
                index: 0,
                len: 0,
            },
            -33,
        ),
        (
            Error::InvalidRange {
                what: "",
                start: 0,
                end: 0,
                len: 0,
            },
            -33,
        ),
        (
            Error::DestinationTooSmall {
                needed: 0,
                available: 0,
            },
            -6,
        ),
        (Error::MaxBufsizeExceeded { size: 0, limit: 0 }, -35),
        (Error::FrameSpecial { what: "", value: 0 }, -28),
        (Error::MemoryAlloc(0), -4),
        (Error::Internal { what: "" }, -1003),
        (
            Error::Remote {
                url: s(),
                status: None,
                message: s(),
            },
            -1004,
        ),
    ];
    for (op, code) in [
        (ChunkOp::Append, -20),
        (ChunkOp::Insert, -19),
        (ChunkOp::Update, -21),
    ] {
        let e = Error::ChunkSize {
            op,
            nchunk: 0,
            nbytes: 0,
            chunksize: 0,
        };
        all.push((e, code));
    }
    for (op, code) in [
        (IoOp::Open, -15),
        (IoOp::Read, -13),
        (IoOp::Write, -14),
        (IoOp::Sync, -14),
        (IoOp::Truncate, -25),
        (IoOp::Remove, -31),
    ] {
        let e = Error::refused("", op, io::ErrorKind::Other, "");
        all.push((e, code));
    }
    all
}

#[test]
fn every_variant_has_its_pinned_code() {
    for (e, code) in golden() {
        assert_eq!(e.code(), code, "{e:?}");
        assert!(
            CODES.iter().any(|(c, _, _)| *c == code),
            "{e:?}: code {code} is not in CODES"
        );
    }
}

#[test]
fn every_variant_is_listed() {
    let mut seen = std::collections::BTreeSet::new();
    for (e, _) in golden() {
        seen.insert(match e {
            Error::Truncated { .. } => "Truncated",
            Error::InvalidHeader { .. } => "InvalidHeader",
            Error::Malformed { .. } => "Malformed",
            Error::Msgpack { .. } => "Msgpack",
            Error::VersionSupport { .. } => "VersionSupport",
            Error::Frame { .. } => "Frame",
            Error::At { .. } => "At",
            Error::InFile { .. } => "InFile",
            Error::FrameType { .. } => "FrameType",
            Error::RunLength { .. } => "RunLength",
            Error::UnknownCodec { .. } => "UnknownCodec",
            Error::UnknownFilter { .. } => "UnknownFilter",
            Error::CodecNotFound { .. } => "CodecNotFound",
            Error::FilterNotFound { .. } => "FilterNotFound",
            Error::Codec { .. } => "Codec",
            Error::Decoded { .. } => "Decoded",
            Error::CodecParam { .. } => "CodecParam",
            Error::CodecDict { .. } => "CodecDict",
            Error::Filter { .. } => "Filter",
            Error::PluginPanic { .. } => "PluginPanic",
            Error::PluginLoad { .. } => "PluginLoad",
            Error::PluginParam { .. } => "PluginParam",
            Error::PluginId { .. } => "PluginId",
            Error::OutOfRange { .. } => "OutOfRange",
            Error::Mismatch { .. } => "Mismatch",
            Error::ShapeMismatch { .. } => "ShapeMismatch",
            Error::Partition { .. } => "Partition",
            Error::Dtype { .. } => "Dtype",
            Error::EnvVar { .. } => "EnvVar",
            Error::NotUtf8 { .. } => "NotUtf8",
            Error::Overflow { .. } => "Overflow",
            Error::Unsupported { .. } => "Unsupported",
            Error::Duplicate { .. } => "Duplicate",
            Error::NameNotFound { .. } => "NameNotFound",
            Error::ValueKind { .. } => "ValueKind",
            Error::MetalayerNotFound { .. } => "MetalayerNotFound",
            Error::InvalidIndex { .. } => "InvalidIndex",
            Error::InvalidRange { .. } => "InvalidRange",
            Error::DestinationTooSmall { .. } => "DestinationTooSmall",
            Error::MaxBufsizeExceeded { .. } => "MaxBufsizeExceeded",
            Error::ChunkSize { .. } => "ChunkSize",
            Error::FrameSpecial { .. } => "FrameSpecial",
            Error::MemoryAlloc(_) => "MemoryAlloc",
            Error::Io { .. } => "Io",
            Error::Internal { .. } => "Internal",
            Error::Remote { .. } => "Remote",
        });
    }
    assert_eq!(
        seen.len(),
        46,
        "a variant is missing from golden(): {seen:?}"
    );
}

#[test]
fn the_code_table_is_pinned() {
    let table: Vec<(i32, &str)> = CODES.iter().map(|&(c, n, _)| (c, n)).collect();
    assert_eq!(
        table,
        [
            (-3, "DATA"),
            (-4, "MEMORY_ALLOC"),
            (-5, "READ_BUFFER"),
            (-6, "WRITE_BUFFER"),
            (-7, "CODEC_SUPPORT"),
            (-8, "CODEC_PARAM"),
            (-9, "CODEC_DICT"),
            (-10, "VERSION_SUPPORT"),
            (-11, "INVALID_HEADER"),
            (-12, "INVALID_PARAM"),
            (-13, "FILE_READ"),
            (-14, "FILE_WRITE"),
            (-15, "FILE_OPEN"),
            (-17, "RUN_LENGTH"),
            (-18, "FILTER_PIPELINE"),
            (-19, "CHUNK_INSERT"),
            (-20, "CHUNK_APPEND"),
            (-21, "CHUNK_UPDATE"),
            (-24, "FRAME_TYPE"),
            (-25, "FILE_TRUNCATE"),
            (-28, "FRAME_SPECIAL"),
            (-31, "FILE_REMOVE"),
            (-32, "NULL_POINTER"),
            (-33, "INVALID_INDEX"),
            (-34, "METALAYER_NOT_FOUND"),
            (-35, "MAX_BUFSIZE_EXCEEDED"),
            (-1000, "PLUGIN_PANIC"),
            (-1001, "PANIC"),
            (-1002, "PLUGIN_LOAD"),
            (-1003, "INTERNAL"),
            (-1004, "REMOTE"),
        ]
    );
    assert_eq!(code::INTERNAL, -1003);
}

#[test]
fn messages_name_what_failed() {
    let e = Error::range("clevel", 12, Expected::Range { min: 0, max: 9 });
    assert_eq!(e.to_string(), "invalid parameter: clevel 12 is not 0 to 9");
    let e = Error::mismatch("bytes of data for the selection", 16, 12);
    assert_eq!(
        e.to_string(),
        "invalid parameter: bytes of data for the selection: 12 given, 16 expected"
    );
    let e = Error::index("chunk", 5, 3);
    assert_eq!(e.to_string(), "index out of range: chunk 5 of 3");
    let e = Error::ValueKind {
        what: "vlmetalayer \"units\"".into(),
        expected: "an int64",
        found: "a string",
    };
    assert_eq!(
        e.to_string(),
        "invalid parameter: vlmetalayer \"units\" holds a string, not an int64"
    );
    let e = Error::ChunkSize {
        op: ChunkOp::Append,
        nchunk: 2,
        nbytes: 3000,
        chunksize: 4000,
    };
    assert!(e
        .to_string()
        .starts_with("cannot append the chunk: chunk 2 holds 3000 of 4000"));
    let e = Error::header("frame header_len", 50, Expected::AtLeast(87)).in_frame("f.b2frame");
    assert_eq!(
        e.to_string(),
        "f.b2frame: bad frame: invalid header: frame header_len 50 is below 87"
    );
    assert_eq!(e.code(), -11);
    // Renaming keeps the source.
    let e = e.in_frame("g.b2frame");
    assert!(
        e.to_string()
            .starts_with("g.b2frame: bad frame: invalid header"),
        "{e}"
    );
    assert!(std::error::Error::source(&e).is_some());
}

#[test]
fn io_errors_keep_their_kind_and_source() {
    let os = io::Error::from(io::ErrorKind::NotFound);
    let e = Error::Io {
        path: "x".into(),
        op: IoOp::Open,
        source: IoSource::from(os),
    };
    assert_eq!(e.io_kind(), Some(io::ErrorKind::NotFound));
    assert_eq!(
        std::error::Error::source(&e)
            .and_then(|s| s.downcast_ref::<io::Error>())
            .map(io::Error::kind),
        Some(io::ErrorKind::NotFound)
    );
    assert_eq!(e.clone(), e);
    assert_eq!(
        Error::frame("y", e).io_kind(),
        Some(io::ErrorKind::NotFound)
    );
    assert_eq!(Error::Overflow { what: "x" }.io_kind(), None);
}
