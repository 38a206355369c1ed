//! Bad input: every chunk is untrusted.
//!
//! Valid chunks of every codec, filter pipeline and special kind are built with
//! `compress_vec`, then truncated and made to lie field by field. Each case asserts the exact
//! error code (the `BLOSC2_ERROR_*` number where the meaning matches, see `src/error.rs`), and
//! a brute-force loop checks that no single-byte corruption panics. Inputs the fuzzer found
//! are replayed from `tests/data/fuzz-regressions/` through the fuzz targets' own oracles.
//!
//! Codes used here: −3 DATA, −4 MEMORY_ALLOC, −5 READ_BUFFER (truncated), −6 WRITE_BUFFER
//! (destination too small), −7 CODEC_SUPPORT, −9 CODEC_DICT, −10 VERSION_SUPPORT,
//! −11 INVALID_HEADER, −17 RUN_LENGTH, −18 FILTER_PIPELINE, −33 INVALID_INDEX.

use strata::chunk::{
    compress_vec, decompress, decompress_vec, decompress_vec_ctx, getitem, CParams, Context,
    DParams, Decoder, SplitMode,
};
use strata::format::chunk::{ChunkHeader, MAX_BLOCKSIZE, MAX_BUFFERSIZE, MAX_DICT_SIZE};
use strata::registry::Registry;
use strata::{CodecId, FilterId};

/// The fuzz targets' oracles, shared so that saved crashes replay through the same checks.
#[allow(dead_code)]
#[path = "../fuzz/src/lib.rs"]
mod fuzz_checks;

/// The `hdf5_chunk` fuzz target's oracle.
#[path = "../fuzz/src/hdf5_chunk.rs"]
mod hdf5_fuzz;

use fuzz_checks::{field, special, text};

// ---------------------------------------------------------------------------------------------
// Helpers

/// The error code of a result that must be an error.
fn code<T>(r: strata::Result<T>) -> i32 {
    match r {
        Ok(_) => panic!("expected an error, got Ok"),
        Err(e) => {
            assert!(!e.to_string().is_empty());
            e.code()
        }
    }
}

/// The code `decompress` returns for `chunk` into a roomy destination.
fn dcode(chunk: &[u8]) -> i32 {
    let mut dst = vec![0u8; 1 << 16];
    code(decompress(chunk, &mut dst))
}

/// Checks that decompress (roomy destination), decompress_vec and a one-item getitem all
/// fail with `want`.
#[track_caller]
fn assert_all_fail(chunk: &[u8], want: i32, what: &str) {
    assert_eq!(dcode(chunk), want, "decompress: {what}");
    assert_eq!(code(decompress_vec(chunk)), want, "decompress_vec: {what}");
    let mut item = [0u8; 256];
    assert_eq!(
        code(getitem(chunk, 0, 1, &mut item)),
        want,
        "getitem: {what}"
    );
}

fn set_i32(c: &mut [u8], at: usize, v: i32) {
    c[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn get_i32(c: &[u8], at: usize) -> i32 {
    i32::from_le_bytes(c[at..at + 4].try_into().unwrap())
}

/// `i32` of a size known to fit.
fn i32_of(v: usize) -> i32 {
    i32::try_from(v).unwrap()
}

/// A valid chunk and the data it holds.
struct Case {
    name: String,
    chunk: Vec<u8>,
    data: Vec<u8>,
}

impl Case {
    fn header(&self) -> ChunkHeader {
        ChunkHeader::parse(&self.chunk).unwrap()
    }
}

/// Compresses `data` and checks the chunk round-trips.
fn case(name: &str, cparams: &CParams, data: Vec<u8>) -> Case {
    let chunk = compress_vec(cparams, &data).unwrap();
    assert_eq!(
        decompress_vec(&chunk).unwrap(),
        data,
        "{name} does not round-trip"
    );
    Case {
        name: name.to_string(),
        chunk,
        data,
    }
}

/// LZ4 chunks with real LZ4 streams: LZ4HC writes the same block format and only header
/// byte 22 tells them apart.
fn lz4_via_lz4hc(name: &str, cparams: &CParams, data: Vec<u8>) -> Case {
    let mut c = case(
        name,
        &CParams {
            codec: CodecId::LZ4HC,
            ..cparams.clone()
        },
        data,
    );
    assert_eq!(c.chunk[22], 2);
    c.chunk[22] = 1;
    assert_eq!(decompress_vec(&c.chunk).unwrap(), c.data);
    c
}

const SHUFFLE: [FilterId; 6] = [
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::SHUFFLE,
];
const BITSHUFFLE: [FilterId; 6] = [
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::BITSHUFFLE,
];
const DELTA_SHUFFLE: [FilterId; 6] = [
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::DELTA,
    FilterId::SHUFFLE,
];
const SHUFFLE_BYTEDELTA: [FilterId; 6] = [
    FilterId::SHUFFLE,
    FilterId::BYTEDELTA,
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::NOFILTER,
    FilterId::NOFILTER,
];

/// Regular (codec-compressed, multi-block) chunks: every codec, several pipelines and typesizes.
fn regular_cases() -> Vec<Case> {
    let mut v = Vec::new();
    for codec in [0u8, 2, 4, 5].map(CodecId) {
        for (fname, filters) in [
            ("none", [FilterId::NOFILTER; 6]),
            ("shuffle", SHUFFLE),
            ("bitshuffle", BITSHUFFLE),
            ("delta", DELTA_SHUFFLE),
            ("bytedelta", SHUFFLE_BYTEDELTA),
        ] {
            let cp = CParams {
                codec,
                typesize: 4,
                blocksize: 1024,
                filters,
                ..CParams::default()
            };
            v.push(case(
                &format!("codec{}-{fname}", codec.0),
                &cp,
                field(4000, u32::from(codec.0)),
            ));
        }
    }
    let cp = CParams {
        typesize: 4,
        blocksize: 1024,
        splitmode: SplitMode::Always,
        ..CParams::default()
    };
    v.push(lz4_via_lz4hc("codec1-shuffle-split", &cp, field(4000, 1)));
    v.push(lz4_via_lz4hc(
        "codec1-nofilter",
        &CParams {
            filters: [FilterId::NOFILTER; 6],
            ..cp.clone()
        },
        field(3000, 7),
    ));
    for typesize in [1usize, 2, 8, 3] {
        let cp = CParams {
            codec: CodecId::ZSTD,
            typesize,
            blocksize: 960,
            splitmode: SplitMode::Always,
            ..CParams::default()
        };
        v.push(case(&format!("zstd-ts{typesize}"), &cp, field(3000, 11)));
    }
    v.push(dict_case());
    for c in &v {
        assert_eq!(c.chunk[2] & 0x02, 0, "{} is memcpyed", c.name);
        assert_eq!(c.chunk[31] & 0x70, 0, "{} is special", c.name);
    }
    v
}

/// A zstd chunk with a trained dictionary.
fn dict_case() -> Case {
    let cp = CParams {
        codec: CodecId::ZSTD,
        typesize: 1,
        blocksize: 4096,
        use_dict: true,
        ..CParams::default()
    };
    let c = case("zstd-dict", &cp, text(40_000));
    assert_eq!(c.chunk[31] & 0x01, 1, "no dictionary was trained");
    c
}

fn memcpyed_case() -> Case {
    let c = case(
        "memcpyed",
        &CParams {
            clevel: 0,
            typesize: 4,
            ..CParams::default()
        },
        field(400, 3),
    );
    assert_eq!(c.chunk[2] & 0x02, 0x02);
    c
}

fn zero_case() -> Case {
    let c = case(
        "zeros",
        &CParams {
            typesize: 4,
            ..CParams::default()
        },
        vec![0u8; 4096],
    );
    assert_eq!(c.header().special, strata::format::chunk::SpecialType::Zero);
    assert_eq!(c.chunk.len(), 32);
    c
}

/// The layout of a valid regular chunk, as the compressor writes it (blocks in order).
struct Layout {
    nblocks: usize,
    /// Offset of the first byte after bstarts and the dict section.
    data_start: usize,
    bstarts: Vec<usize>,
    /// One past the last byte of each block's streams.
    ends: Vec<usize>,
}

fn layout(c: &Case) -> Layout {
    let h = c.header();
    let nblocks = h.nblocks();
    let mut data_start = h.header_len + 4 * nblocks;
    if h.use_dict() {
        data_start += 4 + usize::try_from(get_i32(&c.chunk, data_start)).unwrap();
    }
    let bstarts: Vec<usize> = (0..nblocks)
        .map(|b| usize::try_from(get_i32(&c.chunk, h.header_len + 4 * b)).unwrap())
        .collect();
    let mut ends: Vec<usize> = bstarts[1..].to_vec();
    ends.push(h.cbytes);
    assert_eq!(bstarts[0], data_start, "{}", c.name);
    assert!(
        bstarts.windows(2).all(|w| w[0] < w[1]),
        "{}: blocks out of order",
        c.name
    );
    Layout {
        nblocks,
        data_start,
        bstarts,
        ends,
    }
}

/// The first stream record of the last block: (offset, csize, neblock of that stream).
fn last_block_first_stream(c: &Case) -> (usize, i32, usize) {
    let h = c.header();
    let l = layout(c);
    let last_len = h.nbytes - (l.nblocks - 1) * h.blocksize;
    let at = l.bstarts[l.nblocks - 1];
    (at, get_i32(&c.chunk, at), last_len)
}

// ---------------------------------------------------------------------------------------------
// Sanity: the cases are what they claim to be.

#[test]
fn cases_are_valid() {
    let all: Vec<Case> = regular_cases()
        .into_iter()
        .chain([memcpyed_case(), zero_case()])
        .collect();
    for c in &all {
        let mut dst = vec![0u8; c.data.len()];
        assert_eq!(
            decompress(&c.chunk, &mut dst).unwrap(),
            c.data.len(),
            "{}",
            c.name
        );
        assert_eq!(dst, c.data, "{}", c.name);
    }
}

// ---------------------------------------------------------------------------------------------
// Truncation

/// Cutting a chunk anywhere short of `cbytes` is READ_BUFFER (−5): the header says more bytes
/// follow than there are.
#[test]
fn truncated_at_every_length_is_read_buffer() {
    let all: Vec<Case> = regular_cases()
        .into_iter()
        .chain([memcpyed_case(), zero_case()])
        .chain([Case {
            name: "value".into(),
            chunk: special(3, 4, 400, &[1, 2, 3, 4]),
            data: vec![],
        }])
        .collect();
    let mut dst = vec![0u8; 1 << 16];
    let mut item = [0u8; 8];
    for c in &all {
        for len in 0..c.chunk.len() {
            let cut = &c.chunk[..len];
            assert_eq!(
                code(decompress(cut, &mut dst)),
                -5,
                "{} cut at {len}",
                c.name
            );
            assert_eq!(
                code(getitem(cut, 0, 1, &mut item)),
                -5,
                "{} cut at {len}",
                c.name
            );
            assert_eq!(
                code(Decoder::new(&Registry::global(), cut)),
                -5,
                "{} cut at {len}",
                c.name
            );
        }
        assert_eq!(
            code(decompress_vec(&c.chunk[..c.chunk.len() - 1])),
            -5,
            "{}",
            c.name
        );
    }
}

/// Cutting a chunk and making `cbytes` agree with the cut: READ_BUFFER (−5) when the cut
/// falls inside bstarts, the dict or a block's streams; INVALID_HEADER (−11) when it falls
/// exactly where a block starts, so that `bstarts` points at the end of the chunk.
#[test]
fn truncated_with_consistent_cbytes() {
    for c in regular_cases() {
        let l = layout(&c);
        for len in 32..c.chunk.len() {
            let mut cut = c.chunk[..len].to_vec();
            set_i32(&mut cut, 12, i32_of(len));
            let want = if len < l.data_start {
                -5
            } else {
                let b = (0..l.nblocks).find(|&b| l.ends[b] > len).unwrap();
                if l.bstarts[b] >= len {
                    -11
                } else {
                    -5
                }
            };
            assert_eq!(
                dcode(&cut),
                want,
                "{} cut at {len} (cbytes patched)",
                c.name
            );
            assert_eq!(
                code(decompress_vec(&cut)),
                want,
                "{} cut at {len} (cbytes patched)",
                c.name
            );
        }
    }
    // A memcpyed chunk must hold all nbytes.
    let c = memcpyed_case();
    for len in 32..c.chunk.len() {
        let mut cut = c.chunk[..len].to_vec();
        set_i32(&mut cut, 12, i32_of(len));
        assert_all_fail(&cut, -5, &format!("memcpyed cut at {len}"));
    }
}

// ---------------------------------------------------------------------------------------------
// Lying header fields

#[test]
fn lying_nbytes() {
    for c in regular_cases() {
        let h = c.header();
        let l = layout(&c);
        let mut m = c.chunk.clone();
        for bad in [-1, i32::MIN, i32::MAX, i32_of(MAX_BUFFERSIZE) + 1] {
            set_i32(&mut m, 4, bad);
            assert_all_fail(&m, -11, &format!("{}: nbytes {bad}", c.name));
        }
        // The largest legal nbytes needs millions of bstarts the chunk does not have.
        set_i32(&mut m, 4, i32_of(MAX_BUFFERSIZE));
        assert_all_fail(&m, -5, &format!("{}: nbytes MAX_BUFFERSIZE", c.name));
        // One more block than there is: bstarts grow over the first stream.
        if !h.use_dict() {
            set_i32(&mut m, 4, i32_of(h.nbytes + h.blocksize));
            assert_all_fail(&m, -11, &format!("{}: nbytes one block more", c.name));
        }
        // Smaller than one block: blocksize > nbytes.
        set_i32(&mut m, 4, i32_of(h.blocksize - 1));
        assert_all_fail(&m, -11, &format!("{}: nbytes < blocksize", c.name));
        // An empty chunk that carries data.
        set_i32(&mut m, 4, 0);
        assert_all_fail(&m, -11, &format!("{}: nbytes 0", c.name));
        // One byte less: the last block's codec stream decodes to more than is announced.
        let (_, csize, neblock) = last_block_first_stream(&c);
        if csize > 0 && usize::try_from(csize).unwrap() != neblock {
            set_i32(&mut m, 4, i32_of(h.nbytes - 1));
            assert_eq!(code(decompress_vec(&m)), -3, "{}: nbytes - 1", c.name);
            let last_item = (h.nbytes - 1) / h.typesize - 1;
            let mut item = [0u8; 8];
            if last_item * h.typesize >= (l.nblocks - 1) * h.blocksize {
                assert_eq!(
                    code(getitem(&m, last_item, 1, &mut item)),
                    -3,
                    "{}: nbytes - 1, getitem",
                    c.name
                );
            }
        }
    }
    // Memcpyed: nbytes beyond the stored bytes.
    let c = memcpyed_case();
    let mut m = c.chunk.clone();
    set_i32(&mut m, 4, i32_of(c.data.len() + 1));
    assert_all_fail(&m, -5, "memcpyed: nbytes + 1");
    set_i32(&mut m, 4, -4);
    assert_all_fail(&m, -11, "memcpyed: negative nbytes");
}

#[test]
fn lying_cbytes() {
    for c in regular_cases()
        .into_iter()
        .chain([memcpyed_case(), zero_case()])
    {
        let len = c.chunk.len();
        let mut m = c.chunk.clone();
        for bad in [i32_of(len) + 1, i32_of(len) + 4096, i32::MAX] {
            set_i32(&mut m, 12, bad);
            assert_all_fail(&m, -5, &format!("{}: cbytes {bad} > buffer", c.name));
        }
        for bad in [0, 15, 16, 31, -1, i32::MIN] {
            set_i32(&mut m, 12, bad);
            assert_all_fail(&m, -11, &format!("{}: cbytes {bad} < header", c.name));
        }
    }
    // Bytes after cbytes are ignored.
    for c in regular_cases() {
        let mut m = c.chunk.clone();
        m.extend_from_slice(&[0xff; 100]);
        assert_eq!(
            decompress_vec(&m).unwrap(),
            c.data,
            "{}: trailing bytes",
            c.name
        );
    }
}

#[test]
fn lying_blocksize() {
    for c in regular_cases().into_iter().chain([memcpyed_case()]) {
        let h = c.header();
        let mut m = c.chunk.clone();
        for bad in [
            0,
            -1,
            i32::MIN,
            i32_of(h.nbytes) + 1,
            i32_of(MAX_BLOCKSIZE) + 1,
            i32::MAX,
        ] {
            set_i32(&mut m, 8, bad);
            assert_all_fail(&m, -11, &format!("{}: blocksize {bad}", c.name));
        }
    }
    // Half the block size: twice the bstarts, which then run over the first stream.
    for c in regular_cases()
        .into_iter()
        .filter(|c| !c.header().use_dict())
    {
        let mut m = c.chunk.clone();
        set_i32(&mut m, 8, i32_of(c.header().blocksize / 2));
        assert_all_fail(&m, -11, &format!("{}: blocksize / 2", c.name));
    }
}

#[test]
fn typesize_zero_and_bad_versions() {
    let all: Vec<Vec<u8>> = regular_cases()
        .into_iter()
        .chain([memcpyed_case(), zero_case()])
        .map(|c| c.chunk)
        .chain([special(3, 4, 400, &[1, 2, 3, 4]), special(2, 4, 400, &[])])
        .collect();
    for c in all {
        let mut m = c.clone();
        m[3] = 0;
        assert_all_fail(&m, -11, "typesize 0");
        for version in [0u8, 7, 8, 255] {
            let mut m = c.clone();
            m[0] = version;
            assert_all_fail(&m, -10, &format!("version {version}"));
        }
    }
}

#[test]
fn bstarts_out_of_range() {
    for c in regular_cases() {
        let h = c.header();
        let l = layout(&c);
        for nblock in [0, l.nblocks - 1] {
            let at = h.header_len + 4 * nblock;
            let mut m = c.chunk.clone();
            let before = [
                0,
                16,
                31,
                i32_of(h.header_len + 4 * nblock),
                i32_of(l.data_start) - 1,
            ];
            let past = [i32_of(h.cbytes), i32_of(h.cbytes) + 1, i32::MAX];
            for bad in before.into_iter().chain(past).chain([-1, i32::MIN]) {
                set_i32(&mut m, at, bad);
                assert_eq!(
                    code(decompress_vec(&m)),
                    -11,
                    "{}: bstarts[{nblock}] = {bad}",
                    c.name
                );
                // getitem reads only the blocks it needs.
                let mut item = [0u8; 8];
                let first_item = nblock * h.blocksize / h.typesize;
                assert_eq!(
                    code(getitem(&m, first_item, 1, &mut item)),
                    -11,
                    "{}: getitem, bstarts[{nblock}] = {bad}",
                    c.name
                );
            }
            // The last byte of the chunk: room for no stream size.
            set_i32(&mut m, at, i32_of(h.cbytes) - 1);
            assert_eq!(
                code(decompress_vec(&m)),
                -5,
                "{}: bstarts[{nblock}] = cbytes - 1",
                c.name
            );
        }
    }
}

#[test]
fn lying_stream_sizes() {
    for c in regular_cases() {
        let l = layout(&c);
        let at = l.bstarts[0];
        let mut m = c.chunk.clone();
        // Past the end of the chunk.
        for bad in [i32::MAX, i32_of(c.chunk.len())] {
            set_i32(&mut m, at, bad);
            assert_all_fail(&m, -5, &format!("{}: csize {bad}", c.name));
        }
        // Negative but not a run of one byte value (1..=255).
        for bad in [-256, -100_000, i32::MIN] {
            set_i32(&mut m, at, bad);
            m[at + 4] = 0x01;
            assert_all_fail(&m, -17, &format!("{}: csize {bad}", c.name));
        }
        // A run whose token lacks bit 0.
        for token in [0x00u8, 0x02, 0xfe] {
            set_i32(&mut m, at, -7);
            m[at + 4] = token;
            assert_all_fail(&m, -17, &format!("{}: run token {token:#x}", c.name));
        }
    }
}

#[test]
fn unknown_codec_and_filter_ids() {
    for c in regular_cases() {
        // Flags format code 6: the codec ID is byte 22.
        for id in [3u8, 6, 31, 32, 159, 200, 255] {
            let mut m = c.chunk.clone();
            m[2] = (m[2] & 0x1f) | (6 << 5);
            m[22] = id;
            assert_all_fail(&m, -7, &format!("{}: codec {id}", c.name));
        }
        // A filter ID nobody registered, in any slot.
        for id in [5u8, 7, 31, 33, 36, 150, 200, 255] {
            for slot in [0usize, 3, 5] {
                let mut m = c.chunk.clone();
                m[16 + slot] = id;
                assert_all_fail(&m, -18, &format!("{}: filter {id} in slot {slot}", c.name));
            }
        }
    }
    // A memcpyed or special chunk has no codec or filters to run: the IDs are ignored.
    for c in [memcpyed_case(), zero_case()] {
        let mut m = c.chunk.clone();
        m[2] = (m[2] & 0x1f) | (6 << 5);
        m[22] = 200;
        m[16] = 150;
        assert_eq!(decompress_vec(&m).unwrap(), c.data, "{}", c.name);
    }
}

#[test]
fn blosc1_snappy_format_code_is_codec_support() {
    // Flags format code 2 is Blosc1's Snappy (codec ID 3), which Strata lacks: CODEC_SUPPORT,
    // as C-Blosc2 answers. The reserved format codes 5 and 7 make the header invalid.
    for c in regular_cases() {
        for (format, want) in [(2u8, -7), (5, -11), (7, -11)] {
            let mut m = c.chunk.clone();
            m[2] = (m[2] & 0x1f) | (format << 5);
            assert_all_fail(&m, want, &format!("{}: format code {format}", c.name));
        }
    }
}

#[test]
fn lazy_and_instrumented_chunks_are_rejected() {
    for c in regular_cases()
        .into_iter()
        .chain([memcpyed_case(), zero_case()])
    {
        for flag in [0x08u8, 0x80] {
            let mut m = c.chunk.clone();
            m[31] |= flag;
            assert_all_fail(&m, -11, &format!("{}: blosc2_flags |= {flag:#x}", c.name));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Dictionary

#[test]
fn dictionary_size_lies() {
    let c = dict_case();
    let h = c.header();
    let at = h.header_len + 4 * h.nblocks();
    let dsize = usize::try_from(get_i32(&c.chunk, at)).unwrap();
    assert!(dsize > 0 && dsize <= MAX_DICT_SIZE);
    let mut m = c.chunk.clone();
    for bad in [0, -1, i32::MIN, i32_of(MAX_DICT_SIZE) + 1, i32::MAX] {
        set_i32(&mut m, at, bad);
        assert_all_fail(&m, -9, &format!("dict size {bad}"));
    }
    // Within the limit but past the end of the chunk.
    let past = c.chunk.len() - at - 4 + 1;
    if past <= MAX_DICT_SIZE {
        set_i32(&mut m, at, i32_of(past));
        assert_all_fail(&m, -5, "dict past the end");
    }
    // The dict flag on a chunk whose bstarts end where the streams start: the first stream
    // size is read as the dict size.
    let mut plain = case(
        "zstd",
        &CParams {
            codec: CodecId::ZSTD,
            typesize: 4,
            blocksize: 1024,
            ..CParams::default()
        },
        field(4000, 2),
    )
    .chunk;
    plain[31] |= 0x01;
    let r = decompress_vec(&plain);
    assert!(
        matches!(
            r.as_ref().map_err(strata::Error::code),
            Err(-9 | -5 | -11 | -3)
        ),
        "{:?}",
        r.err()
    );
}

// ---------------------------------------------------------------------------------------------
// Special chunks

#[test]
fn special_chunks_with_bad_sizes() {
    // NaN needs typesize 4 or 8.
    for ts in [1u8, 2, 3, 5, 16] {
        assert_all_fail(
            &special(2, ts, usize::from(ts) * 10, &[]),
            -17,
            &format!("NaN typesize {ts}"),
        );
    }
    // NaN and uninit need whole items.
    assert_all_fail(&special(2, 4, 402, &[]), -17, "NaN nbytes % 4");
    assert_all_fail(&special(4, 4, 402, &[]), -17, "uninit nbytes % 4");
    // A value chunk repeats whole values; it needs one.
    assert_all_fail(
        &special(3, 4, 402, &[1, 2, 3, 4]),
        -17,
        "value nbytes % item",
    );
    assert_all_fail(&special(3, 4, 400, &[]), -17, "value without a value");
    assert_all_fail(
        &special(3, 3, 400, &[1, 2, 3]),
        -17,
        "value of 3 bytes, 400 bytes",
    );
    // The reserved kinds 5 to 7.
    for kind in 5u8..=7 {
        assert_all_fail(
            &special(kind, 4, 400, &[]),
            -11,
            &format!("special kind {kind}"),
        );
    }
    // The value stored after the header must be there.
    let mut v = special(3, 4, 400, &[1, 2, 3, 4]);
    v.truncate(34);
    assert_all_fail(&v, -5, "value cut short");
}

#[test]
fn special_chunks_decode() {
    // Zeros may be any length (C-Blosc2 3.x); uninit reads as zeros whatever the destination held.
    for (kind, nbytes) in [(1u8, 400usize), (1, 401), (4, 400)] {
        let c = special(kind, 4, nbytes, &[]);
        let mut dst = vec![0xeeu8; nbytes + 10];
        assert_eq!(decompress(&c, &mut dst).unwrap(), nbytes);
        assert!(dst[..nbytes].iter().all(|&b| b == 0), "kind {kind}");
        assert!(
            dst[nbytes..].iter().all(|&b| b == 0xee),
            "kind {kind}: wrote past nbytes"
        );
        let mut item = [0xeeu8; 8];
        assert_eq!(getitem(&c, 50, 2, &mut item).unwrap(), 8);
        assert_eq!(item, [0; 8]);
    }
    let v = special(3, 4, 400, &[1, 2, 3, 4]);
    assert_eq!(decompress_vec(&v).unwrap(), [1, 2, 3, 4].repeat(100));
    let mut item = [0u8; 8];
    getitem(&v, 99, 1, &mut item[..4]).unwrap();
    assert_eq!(item[..4], [1, 2, 3, 4]);
    let nan = decompress_vec(&special(2, 8, 80, &[])).unwrap();
    assert!(nan
        .chunks(8)
        .all(|b| f64::from_le_bytes(b.try_into().unwrap()).is_nan()));
    // A huge special chunk is fine to describe; it only fails on a small destination.
    let big = special(1, 8, MAX_BUFFERSIZE - MAX_BUFFERSIZE % 8, &[]);
    let mut dst = [0u8; 64];
    assert_eq!(code(decompress(&big, &mut dst)), -6);
    assert_eq!(getitem(&big, 1 << 27, 8, &mut dst).unwrap(), 64);
}

// ---------------------------------------------------------------------------------------------
// C-Blosc2 3.x variable-length blocks (version 6)

/// A VL-block chunk: each block is `int32 size` + a codec payload (LZ4), blocks in order.
/// `blocks` gives each block's decoded size field and payload.
fn vl_chunk(nbytes: usize, blocks: &[(i32, Vec<u8>)]) -> Vec<u8> {
    let base = 32 + 4 * blocks.len();
    let mut streams = Vec::new();
    let mut c = vec![0u8; 32];
    c[0] = 6;
    c[1] = 1;
    c[2] = 0x05 | (1 << 5);
    c[3] = 1;
    set_i32(&mut c, 4, i32_of(nbytes));
    set_i32(&mut c, 8, i32_of(blocks.len()));
    c[22] = 1;
    c[30] = 1;
    for (size, payload) in blocks {
        c.extend_from_slice(&i32_of(base + streams.len()).to_le_bytes());
        streams.extend_from_slice(&size.to_le_bytes());
        streams.extend_from_slice(payload);
    }
    c.extend_from_slice(&streams);
    let cbytes = i32_of(c.len());
    set_i32(&mut c, 12, cbytes);
    c
}

/// LZ4 block payload of `data` (LZ4HC's encoder writes the LZ4 block format).
fn lz4_payload(data: &[u8]) -> Vec<u8> {
    use strata::block::BlockContext;
    use strata::codecs::{lz4hc::Lz4hc, Codec};
    let ctx = BlockContext {
        clevel: 9,
        meta: 0,
        typesize: 1,
        blocksize: data.len(),
        nblock: 0,
        dict: None,
        nd: None,
        ..BlockContext::default()
    };
    let mut buf = vec![0u8; 2 * data.len() + 64];
    let n = Lz4hc.compress(data, &mut buf, &ctx).unwrap();
    assert!(n > 0);
    buf.truncate(n);
    buf
}

fn vl_case() -> (Vec<u8>, Vec<u8>) {
    let parts = [field(1000, 1), field(2000, 2), field(500, 3)];
    let data = parts.concat();
    let blocks: Vec<(i32, Vec<u8>)> = parts
        .iter()
        .map(|p| (i32_of(p.len()), lz4_payload(p)))
        .collect();
    (vl_chunk(data.len(), &blocks), data)
}

#[test]
fn vl_blocks_decode_and_reject_lies() {
    let (c, data) = vl_case();
    assert_eq!(decompress_vec(&c).unwrap(), data);
    let mut dst = vec![0x11u8; data.len() + 9];
    assert_eq!(decompress(&c, &mut dst).unwrap(), data.len());
    assert_eq!(dst[..data.len()], data[..]);
    assert!(dst[data.len()..].iter().all(|&b| b == 0x11));
    // getitem across the boundary of blocks 0 and 1, and inside block 2.
    let mut items = [0u8; 20];
    assert_eq!(getitem(&c, 990, 20, &mut items).unwrap(), 20);
    assert_eq!(items[..], data[990..1010]);
    assert_eq!(getitem(&c, 3490, 10, &mut items).unwrap(), 10);
    assert_eq!(items[..10], data[3490..]);
    assert_eq!(code(getitem(&c, 3495, 6, &mut items)), -33);
    // Truncation.
    for len in 0..c.len() {
        assert_eq!(dcode(&c[..len]), -5, "VL cut at {len}");
    }
    let blocks: Vec<(i32, Vec<u8>)> = [field(1000, 1), field(2000, 2), field(500, 3)]
        .iter()
        .map(|p| (i32_of(p.len()), lz4_payload(p)))
        .collect();
    // Block sizes that do not add up to nbytes: DATA (−3).
    assert_all_fail(
        &vl_chunk(data.len() + 1, &blocks),
        -3,
        "VL sizes short of nbytes",
    );
    // A block size beyond nbytes, or negative: INVALID_HEADER (−11).
    let mut lie = blocks.clone();
    lie[1].0 = i32::MAX;
    assert_all_fail(
        &vl_chunk(data.len(), &lie),
        -11,
        "VL block size beyond nbytes",
    );
    lie[1].0 = -1;
    assert_all_fail(&vl_chunk(data.len(), &lie), -11, "VL block size negative");
    // bstarts not increasing: INVALID_HEADER (−11).
    let mut m = c.clone();
    let b0 = get_i32(&m, 32);
    set_i32(&mut m, 36, b0);
    assert_all_fail(&m, -11, "VL bstarts not increasing");
    // A payload that decodes to the wrong size: DATA (−3).
    let mut short = blocks.clone();
    short[2].0 -= 1;
    assert_eq!(code(decompress_vec(&vl_chunk(data.len() - 1, &short))), -3);
}

// ---------------------------------------------------------------------------------------------
// Destinations and getitem ranges

#[test]
fn destination_smaller_is_write_buffer() {
    for c in regular_cases()
        .into_iter()
        .chain([memcpyed_case(), zero_case()])
    {
        let n = c.data.len();
        for len in [0, 1, n / 2, n - 1] {
            let mut dst = vec![0u8; len];
            assert_eq!(
                code(decompress(&c.chunk, &mut dst)),
                -6,
                "{}: dst {len} < {n}",
                c.name
            );
        }
    }
}

#[test]
fn destination_bigger_succeeds_and_leaves_the_rest() {
    for c in regular_cases()
        .into_iter()
        .chain([memcpyed_case(), zero_case()])
    {
        let n = c.data.len();
        for extra in [1usize, 7, 4096] {
            let mut dst = vec![0x5au8; n + extra];
            assert_eq!(decompress(&c.chunk, &mut dst).unwrap(), n, "{}", c.name);
            assert_eq!(dst[..n], c.data[..], "{}", c.name);
            assert!(
                dst[n..].iter().all(|&b| b == 0x5a),
                "{}: wrote past nbytes",
                c.name
            );
        }
    }
}

#[test]
fn getitem_out_of_range_is_invalid_index() {
    for c in regular_cases()
        .into_iter()
        .chain([memcpyed_case(), zero_case()])
    {
        let h = c.header();
        let ts = h.typesize;
        let nitems = h.nbytes / ts;
        let mut dst = vec![0u8; 1 << 12];
        let bad: [(usize, usize); 8] = [
            (nitems, 1),
            (nitems + 1, 0),
            (0, nitems + 1),
            (nitems - 1, 2),
            (usize::MAX, 1),
            (usize::MAX / ts, 1),
            (1, usize::MAX),
            (usize::MAX, usize::MAX),
        ];
        for (start, n) in bad {
            assert_eq!(
                code(getitem(&c.chunk, start, n, &mut dst)),
                -33,
                "{}: getitem({start}, {n})",
                c.name
            );
        }
        // In range, but the destination is too small.
        let mut small = vec![0u8; ts];
        assert_eq!(code(getitem(&c.chunk, 0, 2, &mut small)), -6, "{}", c.name);
        // In range: the items, and nothing written past them.
        let mut out = vec![0x77u8; 3 * ts + 5];
        let start = nitems / 2;
        assert_eq!(
            getitem(&c.chunk, start, 3, &mut out).unwrap(),
            3 * ts,
            "{}",
            c.name
        );
        assert_eq!(
            out[..3 * ts],
            c.data[start * ts..(start + 3) * ts],
            "{}",
            c.name
        );
        assert!(out[3 * ts..].iter().all(|&b| b == 0x77), "{}", c.name);
        // Zero items at the very end is fine.
        assert_eq!(
            getitem(&c.chunk, nitems, 0, &mut out).unwrap(),
            0,
            "{}",
            c.name
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Brute force: every single-byte corruption

/// Decodes `m` every way; never panics, and an `Ok` is always `nbytes` long.
fn never_panics(m: &[u8], what: &str) {
    let nbytes = ChunkHeader::parse(m).map(|h| h.nbytes).ok();
    let mut dst = vec![0u8; 1 << 16];
    let whole = decompress(m, &mut dst);
    match &whole {
        Ok(n) => assert_eq!(Some(*n), nbytes, "{what}"),
        Err(e) => assert!(e.code() < 0, "{what}"),
    }
    if nbytes.is_some_and(|n| n <= 1 << 20) {
        match (decompress_vec(m), whole) {
            (Ok(v), Ok(n)) => assert_eq!(
                v[..],
                dst[..n],
                "{what}: decompress and decompress_vec differ"
            ),
            (Ok(v), Err(e)) => assert!(
                e.code() == -6 && v.len() > dst.len(),
                "{what}: only decompress_vec succeeded"
            ),
            (Err(e), Ok(_)) => panic!("{what}: only decompress succeeded, decompress_vec gave {e}"),
            (Err(_), Err(_)) => {}
        }
    }
    let mut item = [0u8; 1024];
    let _ = getitem(m, 3, 2, &mut item);
}

#[test]
fn every_single_byte_corruption() {
    let cp = CParams {
        typesize: 4,
        blocksize: 256,
        ..CParams::default()
    };
    let small: Vec<Case> = vec![
        case("blosclz", &cp, field(700, 1)),
        lz4_via_lz4hc(
            "lz4",
            &CParams {
                splitmode: SplitMode::Never,
                ..cp.clone()
            },
            field(600, 2),
        ),
        case(
            "zlib-bitshuffle",
            &CParams {
                codec: CodecId::ZLIB,
                filters: BITSHUFFLE,
                ..cp.clone()
            },
            field(600, 3),
        ),
        case(
            "zstd-delta",
            &CParams {
                codec: CodecId::ZSTD,
                filters: DELTA_SHUFFLE,
                ..cp.clone()
            },
            field(700, 4),
        ),
        case(
            "bytedelta",
            &CParams {
                codec: CodecId::BLOSCLZ,
                filters: SHUFFLE_BYTEDELTA,
                ..cp.clone()
            },
            field(600, 5),
        ),
        case(
            "runs",
            &cp,
            [vec![0u8; 256], vec![9u8; 256], field(256, 6)].concat(),
        ),
        memcpyed_case(),
        zero_case(),
        Case {
            name: "value".into(),
            chunk: special(3, 4, 400, &[1, 2, 3, 4]),
            data: vec![],
        },
    ];
    for c in &small {
        for at in 0..c.chunk.len() {
            let orig = c.chunk[at];
            for v in [
                orig ^ 0x01,
                orig ^ 0x80,
                orig.wrapping_add(1),
                orig.wrapping_sub(1),
                0x00,
                0xff,
                0x7f,
            ] {
                if v == orig {
                    continue;
                }
                let mut m = c.chunk.clone();
                m[at] = v;
                never_panics(&m, &format!("{}: byte {at} = {v:#04x}", c.name));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Memory: a tiny chunk announcing 2 GiB

/// A chunk of `nblocks` blocks of `blocksize` bytes announcing `nbytes`, with one LZ4 stream
/// record (`csize` + `payload`) that every `bstarts` entry points to.
fn lying_giant(nbytes: usize, blocksize: usize, payload: &[u8]) -> Vec<u8> {
    let nblocks = nbytes.div_ceil(blocksize);
    let stream_at = 32 + 4 * nblocks;
    let cbytes = stream_at + 4 + payload.len();
    let mut c = vec![0u8; 32];
    c[0] = 5;
    c[1] = 1;
    c[2] = 0x05 | 0x10 | (1 << 5); // extended header, one stream per block, LZ4
    c[3] = 1;
    set_i32(&mut c, 4, i32_of(nbytes));
    set_i32(&mut c, 8, i32_of(blocksize));
    set_i32(&mut c, 12, i32_of(cbytes));
    c[22] = 1;
    for _ in 0..nblocks {
        c.extend_from_slice(&i32_of(stream_at).to_le_bytes());
    }
    c.extend_from_slice(&i32_of(payload.len()).to_le_bytes());
    c.extend_from_slice(payload);
    c
}

/// Peak resident memory of this process, in KiB (Linux).
#[cfg(target_os = "linux")]
fn peak_rss_kib() -> usize {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Decision (see `decompress_vec`): no size-based refusal is possible, since zero runs, bstarts
/// shared between blocks and codec run-lengths let a few bytes stand for 2 GiB legitimately.
/// Instead decompress_vec (1) checks every block's stream records before allocating, so a
/// chunk whose framing is broken fails without allocating; (2) reserves with
/// `try_reserve_exact`, so a failed allocation is MEMORY_ALLOC (−4); (3) grows the output one
/// block at a time, so memory is touched only as blocks decode, and a garbage stream fails
/// after one block, not after zero-filling 2 GiB.
#[test]
#[cfg(target_os = "linux")]
fn tiny_chunk_claiming_2_gib_does_not_allocate_it() {
    let nbytes = MAX_BUFFERSIZE;
    let blocksize = 1 << 20;
    let before = peak_rss_kib();
    // (a) Valid framing, garbage LZ4 payload: fails in block 0.
    let garbage = lying_giant(
        nbytes,
        blocksize,
        &[0xf0, 0xff, 0xff, 0xff, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06],
    );
    assert!(garbage.len() < 16 << 10);
    assert_eq!(code(decompress_vec(&garbage)), -3);
    // The same on several threads, whatever the machine's default.
    let threads = DParams {
        nthreads: 4,
        ..DParams::default()
    };
    assert_eq!(
        code(decompress_vec_ctx(&Context::global(), &threads, &garbage)),
        -3
    );
    // (b) The last block's bstart lies: fails before any block is decoded.
    let mut lie = lying_giant(nbytes, blocksize, &[0x10, 0x00]);
    let last = 32 + 4 * (nbytes.div_ceil(blocksize) - 1);
    set_i32(&mut lie, last, 7);
    assert_eq!(code(decompress_vec(&lie)), -11);
    // (c) A stream record past the end of the chunk.
    let mut cut = lying_giant(nbytes, blocksize, &[0x10, 0x00]);
    let at = cut.len() - 6;
    set_i32(&mut cut, at, 1000);
    assert_eq!(code(decompress_vec(&cut)), -5);
    // (d) VL blocks: 2047 blocks of 1 MiB announced, one garbage byte of LZ4 each.
    let blocks: Vec<(i32, Vec<u8>)> = (0..2047).map(|_| (1 << 20, vec![0xf0])).collect();
    let vl = vl_chunk(2047 << 20, &blocks);
    assert!(vl.len() < 32 << 10);
    assert_eq!(code(decompress_vec(&vl)), -3);
    let mut item = [0u8; 1];
    assert_eq!(code(getitem(&vl, 2000 << 20, 1, &mut item)), -3);
    let grown_mib = (peak_rss_kib() - before) / 1024;
    // Other tests run alongside, so allow some slack; 2 GiB would be unmistakable.
    assert!(grown_mib < 256, "peak RSS grew by {grown_mib} MiB");
}

/// On several threads decompress_vec grows its output a window of blocks at a time; the
/// result, and the error of the first bad block, are those of one thread.
#[test]
fn parallel_decompress_vec_agrees_with_serial() {
    let cp = CParams {
        typesize: 4,
        blocksize: 4096,
        filters: DELTA_SHUFFLE,
        ..CParams::default()
    };
    let c = case("delta-64-blocks", &cp, field(64 * 4096 - 100, 8));
    let one = DParams {
        nthreads: 1,
        ..DParams::default()
    };
    let many = DParams {
        nthreads: 4,
        ..DParams::default()
    };
    let ctx = Context::global();
    assert_eq!(decompress_vec_ctx(&ctx, &many, &c.chunk).unwrap(), c.data);
    let l = layout(&c);
    for nblock in [0usize, 1, 17, 40, 63] {
        // A run token without bit 0 (−17) in one block, a codec stream cut short (−3) in another.
        let mut m = c.chunk.clone();
        set_i32(&mut m, l.bstarts[nblock], -3);
        m[l.bstarts[nblock] + 4] = 0;
        let serial = code(decompress_vec_ctx(&ctx, &one, &m));
        assert_eq!(serial, -17, "block {nblock}");
        assert_eq!(
            code(decompress_vec_ctx(&ctx, &many, &m)),
            serial,
            "block {nblock}"
        );
        let mut m = c.chunk.clone();
        let (at, csize) = (l.bstarts[nblock], get_i32(&c.chunk, l.bstarts[nblock]));
        if csize > 8 {
            m[at + 4..at + 4 + usize::try_from(csize).unwrap()].fill(0xff);
            let serial = decompress_vec_ctx(&ctx, &one, &m).map_err(|e| e.code());
            assert_eq!(
                decompress_vec_ctx(&ctx, &many, &m).map_err(|e| e.code()),
                serial,
                "block {nblock}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Fuzzer finds

/// Replays every input under `tests/data/fuzz-regressions/` through the oracle of the fuzz
/// target its name starts with (`decompress-*`, `getitem-*`, `frame-*` or `hdf5_chunk-*`).
#[test]
fn fuzz_regressions() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz-regressions");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let data = std::fs::read(&path).unwrap();
        if name.starts_with("decompress-") {
            fuzz_checks::check_decompress(&data);
        } else if name.starts_with("getitem-") {
            fuzz_checks::check_getitem(&data);
        } else if name.starts_with("frame-") {
            fuzz_checks::check_frame(&data);
        } else if name.starts_with("hdf5_chunk-") {
            hdf5_fuzz::check(&data);
        } else {
            continue;
        }
        n += 1;
    }
    assert!(n > 0, "no fuzz regressions found in {}", dir.display());
}

/// The `hdf5_chunk` oracle on inputs built here rather than saved: the filter's plain frames
/// of zeros ending in part of an item (the defect its saved input stands for), of a ramp and
/// of zeros of whole items, each decoded, re-encoded and decoded again by the oracle.
#[test]
fn the_hdf5_chunk_oracle_holds_for_frames_the_filter_writes() {
    let ramp: Vec<u8> = (0..4000u32).map(|i| (i * 7 % 251) as u8).collect();
    for (cd, data) in [
        (vec![1, 0, 7, 4000, 9, 1, 0], vec![0u8; 4000]),
        (vec![1, 0, 4, 4000, 5, 1, 1], ramp),
        (vec![1, 0, 8, 4096, 1, 2, 0], vec![0u8; 4096]),
    ] {
        let frame = strata::hdf5::chunk::encode(&cd, &data).unwrap();
        let mut out = Vec::new();
        let n = strata::hdf5::chunk::decode(&cd, &frame, &mut out).unwrap();
        assert_eq!(out[..n], data[..]);
        hdf5_fuzz::check(&hdf5_fuzz::input(&cd, &frame));
    }
}

/// The hand-made inputs of `tests/data/fuzz-regressions/` (written by `make_handmade.py`)
/// give the codes of the bugs they stand for.
#[test]
fn handmade_regressions_give_their_codes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz-regressions");
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    let p = fuzz_checks::DECOMPRESS_PREFIX;
    let mut dst = vec![0u8; 3 << 20];
    // A bad bstart in the last block is found before block 0's garbage stream is decoded.
    let bad_last = read("decompress-handmade-bad-last-bstart.bin");
    assert_eq!(code(decompress_vec(&bad_last[p..])), -11);
    assert_eq!(code(decompress(&bad_last[p..], &mut dst)), -11);
    let garbage = read("decompress-handmade-garbage-stream.bin");
    assert_eq!(code(decompress_vec(&garbage[p..])), -3);
    assert_eq!(code(decompress(&garbage[p..], &mut dst)), -3);
    let snappy = read("decompress-handmade-snappy.bin");
    assert_eq!(code(decompress_vec(&snappy[p..])), -7);
    // getitem on a VL chunk decodes only the blocks it needs.
    let vl = read("getitem-handmade-vl.bin");
    let mut items = [0u8; 3];
    assert_eq!(
        getitem(&vl[fuzz_checks::GETITEM_PREFIX..], 0, 3, &mut items).unwrap(),
        3
    );
    assert_eq!(&items, b"abc");
    assert_eq!(code(decompress_vec(&vl[fuzz_checks::GETITEM_PREFIX..])), -3);
}
