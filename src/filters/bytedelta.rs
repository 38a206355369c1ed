//! `BYTEDELTA` — filter ID 35, name `bytedelta`; and its first, buggy version — filter ID 34,
//! name `bytedelta_buggy`, kept so that old data still decodes.
//!
//! With `ts` the element size and `L = len / ts`, the block is seen as `ts` consecutive
//! streams of `L` bytes (the layout SHUFFLE produces; BYTEDELTA is meant to follow it).
//! Forward replaces each stream by its byte differences, `out[k] = in[k] - in[k-1]` (mod 256,
//! `in[-1] = 0`); backward is the running sum.
//!
//! **ID 34.** C-Blosc2 builds with SSSE3 (x86-64) or NEON (ARM64) code run the differences 16
//! bytes at a time and then restart the scalar remainder with a previous byte of 0. So in each
//! stream, when `L > 15` and `L % 16 != 0`, byte `k0 = 16*floor(L/16)` is stored as is instead of
//! as a difference. Strata encodes and decodes 34 with that rule, which is what those builds
//! (every common binary distribution, python-blosc2 wheels included) wrote. Builds without SIMD
//! do not restart; their ID-34 data round-trips in them but differs from ours when `L % 16`
//! is not 0.
//!
//! **Meta byte:** the element size; 0 means the chunk typesize.
//!
//! **Tail rule.** The trailing `len % ts` bytes belong to no stream and are copied unchanged.
//! C-Blosc2 3.x does the same for ID 35; 2.x, and ID 34 in every version, leave them unwritten.
//!
//! **Matches** C-Blosc2 3.3.x `plugins/filters/bytedelta` (checked byte for byte against
//! python-blosc2 4.14.1 / C-Blosc2 3.3.5, fixtures in `tests/data/filters/`).
//!
//! Format: `docs/filters.md`; c-blosc2 `plugins/filters/bytedelta/bytedelta.c`.
//!
//! ```
//! use strata::filters::{Filter, bytedelta::Bytedelta};
//! use strata::block::BlockContext;
//! let ctx = BlockContext { typesize: 2, ..BlockContext::default() };
//! // Two streams of 3 bytes: [10, 11, 13] and [200, 100, 0].
//! let src = [10u8, 11, 13, 200, 100, 0];
//! let mut out = [0u8; 6];
//! Bytedelta.forward(&src, &mut out, &ctx).unwrap();
//! assert_eq!(out, [10, 1, 2, 200, 156, 156]);
//! let mut back = [0u8; 6];
//! Bytedelta.backward(&out, &mut back, &ctx).unwrap();
//! assert_eq!(back, src);
//! ```
#![forbid(unsafe_code)]

use super::shuffle::{kernel_err, same_len};
use super::{simd, Filter};
use crate::block::BlockContext;
use crate::error::{Error, Result};
use crate::format::ids::FilterId;

/// The byte-delta filter (ID 35).
#[derive(Debug, Default, Clone, Copy)]
pub struct Bytedelta;

/// The original byte-delta filter (ID 34), as written by SIMD builds of C-Blosc2.
#[derive(Debug, Default, Clone, Copy)]
pub struct BytedeltaBuggy;

/// The stream length `L` and element size for a block of `len` bytes.
fn streams(id: FilterId, len: usize, ctx: &BlockContext<'_>) -> Result<(usize, usize)> {
    let ts = if ctx.meta != 0 {
        usize::from(ctx.meta)
    } else {
        ctx.typesize
    };
    if ts == 0 {
        return Err(Error::Filter {
            id: id.0,
            message: "element size 0 (meta 0 and typesize 0)".into(),
        });
    }
    Ok((len / ts, ts))
}

/// Where the ID-34 restart falls in a stream of `l` bytes (`l` if there is none).
fn restart_at(l: usize) -> usize {
    let k0 = l - l % 16;
    if k0 == 0 {
        l
    } else {
        k0
    }
}

/// Applies `f` to each of the `ts` streams of `l` bytes, then copies the tail.
fn per_stream(
    src: &[u8],
    dst: &mut [u8],
    l: usize,
    ts: usize,
    f: impl Fn(&[u8], &mut [u8]) -> Result<()>,
) -> Result<()> {
    if l > 0 {
        for (s, d) in src.chunks_exact(l).zip(dst.chunks_exact_mut(l)).take(ts) {
            f(s, d)?;
        }
    }
    let body = l * ts;
    dst[body..].copy_from_slice(&src[body..]);
    Ok(())
}

/// Forward: `d[k] = s[k] - s[k-1]`, with the previous byte taken as 0 at `k = 0` and at
/// `k = restart`.
fn diff(s: &[u8], d: &mut [u8], restart: usize) {
    let cut = restart.min(s.len()).min(d.len());
    let (s_head, s_tail) = s.split_at(cut);
    let (d_head, d_tail) = d.split_at_mut(cut);
    differences(s_head, d_head);
    differences(s_tail, d_tail);
}

/// Byte differences of `s` into `d`, starting from a previous byte of 0.
fn differences(s: &[u8], d: &mut [u8]) {
    if let (Some((first, d_rest)), Some(&v)) = (d.split_first_mut(), s.first()) {
        *first = v;
        for ((o, &cur), &prev) in d_rest.iter_mut().zip(&s[1..]).zip(s) {
            *o = cur.wrapping_sub(prev);
        }
    }
}

/// Backward: running sum mod 256, restarting from 0 at `k = restart`.
fn undiff(s: &[u8], d: &mut [u8], restart: usize) -> Result<()> {
    let cut = restart.min(s.len()).min(d.len());
    let (s_head, s_tail) = s.split_at(cut);
    let (d_head, d_tail) = d.split_at_mut(cut);
    simd::byte_prefix_sum(s_head, d_head)?;
    simd::byte_prefix_sum(s_tail, d_tail)
}

impl Filter for Bytedelta {
    fn id(&self) -> FilterId {
        FilterId::BYTEDELTA
    }
    fn name(&self) -> &str {
        "bytedelta"
    }
    fn forward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        same_len(FilterId::BYTEDELTA, src, dst)?;
        let (l, ts) = streams(FilterId::BYTEDELTA, src.len(), ctx)?;
        per_stream(src, dst, l, ts, |s, d| {
            diff(s, d, l);
            Ok(())
        })
    }
    fn backward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        same_len(FilterId::BYTEDELTA, src, dst)?;
        let (l, ts) = streams(FilterId::BYTEDELTA, src.len(), ctx)?;
        per_stream(src, dst, l, ts, |s, d| undiff(s, d, l)).map_err(kernel_err(FilterId::BYTEDELTA))
    }
}

impl Filter for BytedeltaBuggy {
    fn id(&self) -> FilterId {
        FilterId::BYTEDELTA_BUGGY
    }
    fn name(&self) -> &str {
        "bytedelta_buggy"
    }
    fn forward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        same_len(FilterId::BYTEDELTA_BUGGY, src, dst)?;
        let (l, ts) = streams(FilterId::BYTEDELTA_BUGGY, src.len(), ctx)?;
        per_stream(src, dst, l, ts, |s, d| {
            diff(s, d, restart_at(l));
            Ok(())
        })
    }
    fn backward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        same_len(FilterId::BYTEDELTA_BUGGY, src, dst)?;
        let (l, ts) = streams(FilterId::BYTEDELTA_BUGGY, src.len(), ctx)?;
        per_stream(src, dst, l, ts, |s, d| undiff(s, d, restart_at(l)))
            .map_err(kernel_err(FilterId::BYTEDELTA_BUGGY))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(typesize: usize, meta: u8) -> BlockContext<'static> {
        BlockContext {
            typesize,
            meta,
            nblock: 0,
            offset: 0,
            version: 5,
            dref: &[],
            nd: None,
            ..BlockContext::default()
        }
    }

    /// ID 35 / 34 forward from the definition, one byte at a time.
    fn forward_def(src: &[u8], ts: usize, buggy: bool) -> Vec<u8> {
        let l = src.len() / ts;
        let mut out = src.to_vec();
        for s in 0..ts {
            for k in 0..l {
                let restart = buggy && l > 15 && k == l - l % 16;
                let prev = if k == 0 || restart {
                    0
                } else {
                    src[s * l + k - 1]
                };
                out[s * l + k] = src[s * l + k].wrapping_sub(prev);
            }
        }
        out
    }

    fn data(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| ((i * i * 13 + i * 7) % 256) as u8)
            .collect()
    }

    #[test]
    fn both_ids_match_definitions_and_round_trip() {
        for ts in [1usize, 2, 3, 4, 8, 16] {
            for len in [
                0usize,
                1,
                15,
                16,
                17,
                31,
                32,
                33,
                100,
                4 * 16 * 8 + 5,
                1000,
                4096 + 3,
            ] {
                let src = data(len);
                for buggy in [false, true] {
                    let f: &dyn Filter = if buggy { &BytedeltaBuggy } else { &Bytedelta };
                    let mut out = vec![0u8; len];
                    f.forward(&src, &mut out, &ctx(ts, 0)).unwrap();
                    assert_eq!(
                        out,
                        forward_def(&src, ts, buggy),
                        "ts={ts} len={len} buggy={buggy}"
                    );
                    let mut back = vec![0u8; len];
                    f.backward(&out, &mut back, &ctx(ts, 0)).unwrap();
                    assert_eq!(back, src, "ts={ts} len={len} buggy={buggy}");
                }
            }
        }
    }

    #[test]
    fn buggy_differs_only_when_streams_have_a_remainder() {
        let src = data(4 * 40);
        let (mut a, mut b) = (vec![0u8; 160], vec![0u8; 160]);
        Bytedelta.forward(&src, &mut a, &ctx(4, 0)).unwrap();
        BytedeltaBuggy.forward(&src, &mut b, &ctx(4, 0)).unwrap();
        // L = 40: byte 32 of each stream is stored as is by ID 34.
        let diffs: Vec<usize> = (0..160).filter(|&i| a[i] != b[i]).collect();
        assert_eq!(diffs, [32, 72, 112, 152]);
        let src = data(4 * 48);
        let (mut a, mut b) = (vec![0u8; 192], vec![0u8; 192]);
        Bytedelta.forward(&src, &mut a, &ctx(4, 0)).unwrap();
        BytedeltaBuggy.forward(&src, &mut b, &ctx(4, 0)).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn meta_overrides_typesize_and_tail_is_copied() {
        let src = data(23);
        let (mut a, mut b) = (vec![0u8; 23], vec![0u8; 23]);
        Bytedelta.forward(&src, &mut a, &ctx(8, 4)).unwrap();
        Bytedelta.forward(&src, &mut b, &ctx(4, 0)).unwrap();
        assert_eq!(a, b);
        assert_eq!(a[20..], src[20..]);
    }

    #[test]
    fn errors_instead_of_panics() {
        let mut dst = [0u8; 8];
        assert!(matches!(
            Bytedelta.forward(&[0; 8], &mut dst, &ctx(0, 0)),
            Err(Error::Filter { id: 35, .. })
        ));
        assert!(matches!(
            BytedeltaBuggy.backward(&[0; 8], &mut dst, &ctx(0, 0)),
            Err(Error::Filter { id: 34, .. })
        ));
        assert!(Bytedelta.forward(&[0; 9], &mut dst, &ctx(1, 0)).is_err());
        // More streams than bytes: everything is tail.
        let mut small = [0u8; 3];
        Bytedelta
            .forward(&[1, 2, 3], &mut small, &ctx(1, 200))
            .unwrap();
        assert_eq!(small, [1, 2, 3]);
    }
}
