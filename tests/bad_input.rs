//! Bad input: every chunk is untrusted.
//!
//! Codes used here: −3 DATA, −5 READ_BUFFER (truncated), −7 CODEC_SUPPORT, −11 INVALID_HEADER.

use strata::chunk::{compress_vec, decompress_vec, getitem, CParams};
use strata::format::chunk::MAX_BUFFERSIZE;

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

fn set_i32(c: &mut [u8], at: usize, v: i32) {
    c[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// `i32` of a size known to fit.
fn i32_of(v: usize) -> i32 {
    i32::try_from(v).unwrap()
}

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
    let garbage = lying_giant(nbytes, blocksize, &[0xf0, 0xff, 0xff, 0xff, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06]);
    assert!(garbage.len() < 16 << 10);
    assert_eq!(code(decompress_vec(&garbage)), -3);
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

/// Flags format code 2 is Blosc1's Snappy (codec ID 3), which Strata lacks: CODEC_SUPPORT
/// (−7), as C-Blosc2 answers. The reserved format codes 5 and 7 make the header invalid (−11).
#[test]
fn blosc1_snappy_format_code_is_codec_support() {
    let data: Vec<u8> = (0..4000u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
    let chunk = compress_vec(&CParams { typesize: 4, ..CParams::default() }, &data).unwrap();
    assert_eq!(chunk[2] & 0x02, 0, "the chunk is memcpyed");
    for (format, want) in [(2u8, -7), (5, -11), (7, -11)] {
        let mut m = chunk.clone();
        m[2] = (m[2] & 0x1f) | (format << 5);
        assert_eq!(code(decompress_vec(&m)), want, "format code {format}");
        let mut item = [0u8; 4];
        assert_eq!(code(getitem(&m, 0, 1, &mut item)), want, "format code {format}");
    }
}
