//! Kernel tests: every SIMD level against the scalar twin, and the scalar twin against the
//! definitions of `docs/filters.md` written out bit by bit.

use super::*;

#[test]
fn the_dispatched_kernel_equals_the_scalar_one() {
    let src: Vec<u8> = (0..100u8).collect();
    let (mut a, mut b) = (vec![0u8; 100], vec![0u8; 100]);
    bitshuffle(4, &src, &mut a).unwrap();
    bitshuffle_with(Level::Scalar, 4, &src, &mut b).unwrap();
    assert_eq!(a, b);
    bitunshuffle(4, &a, &mut b).unwrap();
    assert_eq!(b, src);
}

/// Element sizes tested exhaustively.
fn sizes() -> impl Iterator<Item = usize> {
    (1..=20).chain([32, 200, 255])
}

/// Deterministic pseudo-random bytes.
fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}

/// Byte shuffle straight from the definition.
fn shuffle_def(ts: usize, src: &[u8]) -> Vec<u8> {
    let n = src.len() / ts;
    let mut out = src.to_vec();
    for i in 0..n {
        for j in 0..ts {
            out[j * n + i] = src[i * ts + j];
        }
    }
    out
}

/// Bit shuffle straight from the definition (one bit at a time).
fn bitshuffle_def(ts: usize, src: &[u8]) -> Vec<u8> {
    let n = src.len() / ts;
    let n8 = n - n % 8;
    let mut out = src.to_vec();
    out[..n8 * ts].fill(0);
    for i in 0..n8 {
        for j in 0..ts {
            for k in 0..8 {
                let bit = (src[i * ts + j] >> k) & 1;
                let row = j * 8 + k;
                out[row * (n8 / 8) + i / 8] |= bit << (i % 8);
            }
        }
    }
    out
}

fn levels() -> impl Iterator<Item = Level> {
    Level::ALL.into_iter().filter(|l| l.is_supported())
}

fn check_all(ts: usize, src: &[u8]) {
    let len = src.len();
    let mut want = vec![0u8; len];
    shuffle_with(Level::Scalar, ts, src, &mut want).unwrap();
    let mut bwant = vec![0u8; len];
    bitshuffle_with(Level::Scalar, ts, src, &mut bwant).unwrap();
    let mut got = vec![0xA5u8; len];
    let mut back = vec![0x5Au8; len];
    for level in levels() {
        shuffle_with(level, ts, src, &mut got).unwrap();
        assert_eq!(got, want, "shuffle {level:?} ts={ts} len={len}");
        unshuffle_with(level, ts, &got, &mut back).unwrap();
        assert_eq!(back, src, "unshuffle {level:?} ts={ts} len={len}");
        bitshuffle_with(level, ts, src, &mut got).unwrap();
        assert_eq!(got, bwant, "bitshuffle {level:?} ts={ts} len={len}");
        bitunshuffle_with(level, ts, &got, &mut back).unwrap();
        assert_eq!(back, src, "bitunshuffle {level:?} ts={ts} len={len}");
    }
}

#[test]
fn prefix_kernels_match_scalar() {
    for len in (0..=600).chain([4099, 65536 + 7]) {
        let src = noise(len, len as u64);
        let mut want = vec![0u8; len];
        byte_prefix_sum_with(Level::Scalar, &src, &mut want).unwrap();
        let mut acc = 0u8;
        for (k, &v) in src.iter().enumerate() {
            acc = acc.wrapping_add(v);
            assert_eq!(want[k], acc);
        }
        for level in levels() {
            let mut got = vec![0x11u8; len];
            byte_prefix_sum_with(level, &src, &mut got).unwrap();
            assert_eq!(got, want, "sum {level:?} len={len}");
        }
        for w in [1usize, 2, 4, 8] {
            let mut want = vec![0u8; len];
            prefix_xor_with(Level::Scalar, w, &src, &mut want).unwrap();
            for b in 0..len {
                let prev = if b >= w { want[b - w] } else { 0 };
                assert_eq!(want[b], src[b] ^ prev);
            }
            for level in levels() {
                let mut got = vec![0x22u8; len];
                prefix_xor_with(level, w, &src, &mut got).unwrap();
                assert_eq!(got, want, "xor {level:?} w={w} len={len}");
            }
        }
    }
    assert!(prefix_xor(3, &[0; 4], &mut [0; 4]).is_err());
    assert!(byte_prefix_sum(&[0; 4], &mut [0; 5]).is_err());
}

#[test]
fn scalar_matches_definitions() {
    for ts in sizes() {
        for len in [0, 1, 7, 8, 63, 64, 65, 200, 333, 600, 2048 + 13] {
            let src = noise(len, (ts * 1000 + len) as u64);
            let mut got = vec![0u8; len];
            shuffle_with(Level::Scalar, ts, &src, &mut got).unwrap();
            assert_eq!(got, shuffle_def(ts, &src), "ts={ts} len={len}");
            bitshuffle_with(Level::Scalar, ts, &src, &mut got).unwrap();
            assert_eq!(got, bitshuffle_def(ts, &src), "ts={ts} len={len}");
        }
    }
}

#[test]
fn simd_matches_scalar_small_blocks() {
    for ts in sizes() {
        for len in 0..=600 {
            check_all(ts, &noise(len, (ts * 7919 + len) as u64));
        }
    }
}

#[test]
fn simd_matches_scalar_big_blocks() {
    for ts in [1, 2, 3, 4, 7, 8, 12, 16, 32, 48, 200, 255] {
        for len in [256 * 1024 + 7, 65536 * 3 + 5, 100_003, 16 * 1024 * 3 + 255] {
            check_all(ts, &noise(len, (ts + len) as u64));
        }
    }
}

#[test]
fn bitshuffle_of_known_pattern() {
    // Eight u16 elements 1, 2, 4, ... 128 in the low byte: row k (byte 0, bit k) holds only
    // element k, so row byte k is 1 << k; the high-byte rows are zero.
    let src: Vec<u8> = (0..8).flat_map(|i| [1u8 << i, 0]).collect();
    let mut dst = vec![0u8; 16];
    bitshuffle(2, &src, &mut dst).unwrap();
    assert_eq!(dst, [1, 2, 4, 8, 16, 32, 64, 128, 0, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn bad_arguments_are_errors() {
    let mut dst = [0u8; 4];
    assert!(shuffle(0, &[0; 4], &mut dst).is_err());
    assert!(shuffle(2, &[0; 5], &mut dst).is_err());
    assert!(bitunshuffle(0, &[0; 4], &mut dst).is_err());
    assert!(bitshuffle(4, &[0; 3], &mut dst).is_err());
}

#[test]
fn detection_is_cached_and_consistent() {
    let a = Level::detect();
    assert_eq!(a, Level::detect());
    assert!(Level::Scalar.is_supported());
}

/// Throughput of the kernels on 256 KiB blocks. Run with
/// `cargo test --release --lib filters::simd::tests::throughput -- --ignored --nocapture`.
#[test]
#[ignore = "benchmark; run in release with --ignored --nocapture"]
fn throughput() {
    use std::time::Instant;
    let len = 256 * 1024;
    // Smooth data, like a typical numeric array.
    let src: Vec<u8> = (0..len / 8)
        .flat_map(|i| ((i as f64) * 0.001).sin().to_le_bytes())
        .collect();
    let mut dst = vec![0u8; len];
    let mut back = vec![0u8; len];
    type Kernel = fn(Level, usize, &[u8], &mut [u8]) -> Result<()>;
    let kernels: [(&str, Kernel); 4] = [
        ("shuffle", shuffle_with),
        ("unshuffle", unshuffle_with),
        ("bitshuffle", bitshuffle_with),
        ("bitunshuffle", bitunshuffle_with),
    ];
    let sizes: Vec<usize> = match std::env::var("STRATA_BENCH_TS") {
        Ok(v) => v.split(',').filter_map(|t| t.parse().ok()).collect(),
        Err(_) => vec![2, 4, 8, 16],
    };
    for ts in sizes {
        for level in levels() {
            let mut line = format!("ts={ts:2} {level:6?}");
            for (name, k) in kernels {
                let input = if name.starts_with("un") || name.starts_with("bitun") {
                    &dst
                } else {
                    &src
                };
                let input = input.clone();
                let mut best = f64::MAX;
                for _ in 0..25 {
                    let t = Instant::now();
                    for _ in 0..50 {
                        k(level, ts, std::hint::black_box(&input), &mut back).unwrap();
                    }
                    best = best.min(t.elapsed().as_secs_f64() / 50.0);
                }
                line += &format!("  {name} {:6.2} GB/s", len as f64 / best / 1e9);
                if name == "shuffle" || name == "bitshuffle" {
                    dst.copy_from_slice(&back);
                }
            }
            println!("{line}");
        }
    }
}

/// Golden checks against `tests/data/filters/fixtures.txt`, written by
/// `tests/data/filters/gen.py` from numpy references and from C-Blosc2 3.3.5 itself.
mod golden {
    use super::Level;
    use crate::block::BlockContext;
    use crate::filters::{
        bitshuffle::Bitshuffle, bytedelta::Bytedelta, bytedelta::BytedeltaBuggy, delta::Delta,
        shuffle::Shuffle, trunc_prec::TruncPrec, Filter,
    };

    const FIXTURES: &str = include_str!("../../../tests/data/filters/fixtures.txt");

    struct Case {
        source: String,
        filter: u8,
        typesize: usize,
        meta: u8,
        blocksize: usize,
        input: Vec<u8>,
        output: Vec<u8>,
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    }

    fn cases() -> Vec<Case> {
        FIXTURES
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|line| {
                let field = |k: &str| {
                    line.split(' ')
                        .find_map(|kv| kv.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
                        .unwrap_or_else(|| panic!("missing {k} in fixture"))
                };
                Case {
                    source: field("source").to_string(),
                    filter: field("filter").parse().unwrap(),
                    typesize: field("typesize").parse().unwrap(),
                    meta: field("meta").parse().unwrap(),
                    blocksize: field("blocksize").parse().unwrap(),
                    input: hex(field("input")),
                    output: hex(field("output")),
                }
            })
            .collect()
    }

    fn filter(id: u8) -> &'static dyn Filter {
        match id {
            1 => &Shuffle,
            2 => &Bitshuffle,
            3 => &Delta,
            4 => &TruncPrec,
            34 => &BytedeltaBuggy,
            35 => &Bytedelta,
            _ => panic!("no filter {id}"),
        }
    }

    #[test]
    fn filters_match_fixtures() {
        let cases = cases();
        assert!(cases.iter().filter(|c| c.source == "c-blosc2").count() >= 25);
        for c in &cases {
            let f = filter(c.filter);
            let name = format!(
                "{} filter {} ts {} meta {}",
                c.source, c.filter, c.typesize, c.meta
            );
            assert_eq!(c.input.len(), c.output.len(), "{name}");
            let ctx = |b: usize, dref| BlockContext {
                typesize: c.typesize,
                meta: c.meta,
                nblock: b,
                offset: b * c.blocksize,
                version: 5,
                dref,
                nd: None,
                ..BlockContext::default()
            };
            // Forward, block by block, against the expected output.
            for (b, (inp, want)) in c
                .input
                .chunks(c.blocksize)
                .zip(c.output.chunks(c.blocksize))
                .enumerate()
            {
                let mut got = vec![0u8; inp.len()];
                f.forward(inp, &mut got, &ctx(b, &c.input)).unwrap();
                assert_eq!(got, want, "{name} block {b} forward");
            }
            // Backward: block 0 first (delta needs it as the reference), then the others.
            let mut decoded = vec![0u8; c.input.len()];
            let (first, rest) = decoded.split_at_mut(c.blocksize.min(c.input.len()));
            f.backward(&c.output[..first.len()], first, &ctx(0, &[]))
                .unwrap();
            for (i, out) in rest.chunks_mut(c.blocksize).enumerate() {
                let off = (i + 1) * c.blocksize;
                f.backward(&c.output[off..off + out.len()], out, &ctx(i + 1, first))
                    .unwrap();
            }
            let want = if c.filter == 4 { &c.output } else { &c.input };
            assert_eq!(&decoded, want, "{name} backward");
        }
    }

    #[test]
    fn every_kernel_level_matches_fixtures() {
        for c in cases().iter().filter(|c| c.filter <= 2) {
            let ts = if c.filter == 1 && c.meta != 0 {
                usize::from(c.meta)
            } else {
                c.typesize
            };
            for level in Level::ALL.into_iter().filter(|l| l.is_supported()) {
                for (inp, want) in c
                    .input
                    .chunks(c.blocksize)
                    .zip(c.output.chunks(c.blocksize))
                {
                    let mut got = vec![0u8; inp.len()];
                    let mut back = vec![0u8; inp.len()];
                    if c.filter == 1 {
                        super::shuffle_with(level, ts, inp, &mut got).unwrap();
                        super::unshuffle_with(level, ts, &got, &mut back).unwrap();
                    } else {
                        super::bitshuffle_with(level, ts, inp, &mut got).unwrap();
                        super::bitunshuffle_with(level, ts, &got, &mut back).unwrap();
                    }
                    assert_eq!(got, want, "{level:?} filter {} ts {ts}", c.filter);
                    assert_eq!(back, inp, "{level:?} filter {} ts {ts}", c.filter);
                }
            }
        }
    }
}

/// A small run of every kernel at every level, fast enough for Miri
/// (`RUSTFLAGS=-Ctarget-feature=+avx2 cargo +nightly miri test --lib simd::tests::miri_smoke`).
#[test]
fn miri_smoke() {
    eprintln!("kernel levels tested: {:?}", levels().collect::<Vec<_>>());
    for ts in [1, 2, 3, 4, 8, 16, 32] {
        for len in [0, 7, 64 * ts + 5, 300 * ts + 3] {
            check_all(ts, &noise(len, (ts + len) as u64));
        }
    }
}

/// Throughput of every filter through the `Filter` trait, typesize 4 and 8, 256 KiB blocks.
/// Run like [`throughput`].
#[test]
#[ignore = "benchmark; run in release with --ignored --nocapture"]
fn filter_throughput() {
    use crate::block::BlockContext;
    use crate::filters::{
        bitshuffle::Bitshuffle, bytedelta::Bytedelta, bytedelta::BytedeltaBuggy, delta::Delta,
        shuffle::Shuffle, trunc_prec::TruncPrec, Filter,
    };
    use crate::format::ids::FilterId;
    use std::time::Instant;
    let len = 256 * 1024;
    let src: Vec<u8> = (0..len / 8)
        .flat_map(|i| ((i as f64) * 0.001).sin().to_le_bytes())
        .collect();
    let mut out = vec![0u8; len];
    let mut back = vec![0u8; len];
    let filters: [&dyn Filter; 6] = [
        &Shuffle,
        &Bitshuffle,
        &Delta,
        &TruncPrec,
        &Bytedelta,
        &BytedeltaBuggy,
    ];
    for ts in [4usize, 8] {
        for f in filters {
            let meta = if f.id() == FilterId::TRUNC_PREC {
                10
            } else {
                0
            };
            let fwd = BlockContext {
                typesize: ts,
                meta,
                nblock: 1,
                offset: len,
                version: 5,
                dref: &src,
                nd: None,
                ..BlockContext::default()
            };
            let bwd = BlockContext { dref: &src, ..fwd };
            let time = |g: &mut dyn FnMut()| {
                let mut best = f64::MAX;
                for _ in 0..15 {
                    let t = Instant::now();
                    for _ in 0..30 {
                        g();
                    }
                    best = best.min(t.elapsed().as_secs_f64() / 30.0);
                }
                len as f64 / best / 1e9
            };
            let a = time(&mut || f.forward(&src, &mut out, &fwd).unwrap());
            let b = time(&mut || f.backward(&out, &mut back, &bwd).unwrap());
            let c0 = BlockContext {
                offset: 0,
                nblock: 0,
                dref: &[],
                ..fwd
            };
            let c = time(&mut || f.backward(&out, &mut back, &c0).unwrap());
            println!(
                "ts={ts} {:16} forward {a:6.2} GB/s  backward {b:6.2} GB/s  (block 0: {c:6.2} GB/s)",
                f.name()
            );
        }
    }
}
