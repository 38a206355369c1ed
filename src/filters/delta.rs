//! `DELTA` — filter ID 3, name `delta`: XOR of each block with block 0 of the chunk.
//!
//! Works on words of `W` bytes: `W = typesize` when the typesize is 1, 2, 4 or 8; 8 when the
//! typesize is a multiple of 8; 1 otherwise. A block of `len` bytes holds `len / W` words.
//! Because XOR acts byte by byte, "word `i` XOR word `i-1`" is byte `b` XOR byte `b - W`.
//!
//! * Block 0 (`offset == 0`), forward: word 0 is kept, word `i` becomes `in[i] ^ in[i-1]`,
//!   where `in` is this filter's input (C-Blosc2 passes the current pipeline buffer here).
//!   Backward: a prefix XOR, `out[i] = in[i] ^ out[i-1]`.
//! * Block `b > 0`, forward: `in[i] ^ ref[i]` with `ref` = [`BlockContext::dref`], the raw chunk
//!   input (so block 0 before any filter). Backward: `in[i] ^ ref[i]` with `ref` = the already
//!   decoded block 0. Either way `dref` must hold at least this block's length.
//!
//! **Tail rule.** When `len % W != 0` the trailing `len % W` bytes are not part of a word.
//! C-Blosc2's encoder (3.3.x and 2.x `delta_encoder`) does not write them, so they hold
//! whatever its scratch buffer held; its decoder works in place and leaves them as they came.
//! Strata copies them unchanged in both directions: the output is deterministic, round-trips,
//! and C-Blosc2 decodes it to the same bytes Strata does. (Blosc blocks are multiples of the
//! typesize, so this only matters for a leftover block when `nbytes % typesize != 0`.)
//!
//! **Meta byte:** ignored. The typesize must be non-zero.
//!
//! **Matches** C-Blosc2 2.x and 3.x (checked byte for byte against python-blosc2 4.14.1 /
//! C-Blosc2 3.3.5, fixtures in `tests/data/filters/`).
//!
//! Format: `docs/filters.md`, `docs/chunk-format.md`; c-blosc2 `blosc/delta.c`,
//! `blosc/blosc2.c` (`pipeline_forward`, `pipeline_backward`).
//!
//! ```
//! use strata::filters::{Filter, delta::Delta};
//! use strata::block::BlockContext;
//! let chunk = [5u8, 7, 6, 6, 5, 6, 7, 8];
//! // Block 0 (4 bytes, typesize 1): a running XOR.
//! let ctx0 = BlockContext { typesize: 1, dref: &chunk, ..BlockContext::default() };
//! let mut b0 = [0u8; 4];
//! Delta.forward(&chunk[..4], &mut b0, &ctx0).unwrap();
//! assert_eq!(b0, [5, 5 ^ 7, 7 ^ 6, 0]);
//! // Block 1: XOR with the raw block 0.
//! let ctx1 = BlockContext { nblock: 1, offset: 4, ..ctx0 };
//! let mut b1 = [0u8; 4];
//! Delta.forward(&chunk[4..], &mut b1, &ctx1).unwrap();
//! assert_eq!(b1, [5 ^ 5, 6 ^ 7, 7 ^ 6, 8 ^ 6]);
//! // Decoding: block 0 first, then block 1 against the decoded block 0.
//! let mut d0 = [0u8; 4];
//! Delta.backward(&b0, &mut d0, &BlockContext { dref: &[], ..ctx0 }).unwrap();
//! let mut d1 = [0u8; 4];
//! Delta.backward(&b1, &mut d1, &BlockContext { dref: &d0, ..ctx1 }).unwrap();
//! assert_eq!([d0, d1].concat(), chunk);
//! ```
#![forbid(unsafe_code)]

use super::shuffle::{kernel_err, same_len};
use super::{simd, Filter};
use crate::block::BlockContext;
use crate::error::{Error, Result};
use crate::format::ids::FilterId;

/// The XOR-delta filter (ID 3).
#[derive(Debug, Default, Clone, Copy)]
pub struct Delta;

/// Filter ID of [`Delta`].
const ID: FilterId = FilterId::DELTA;

/// The word size for a typesize (see the module docs).
fn word_size(typesize: usize) -> Result<usize> {
    match typesize {
        0 => Err(Error::Filter {
            id: ID.0,
            message: "typesize 0".into(),
        }),
        1 | 2 | 4 | 8 => Ok(typesize),
        t if t % 8 == 0 => Ok(8),
        _ => Ok(1),
    }
}

/// The reference bytes for a block other than block 0.
fn reference<'a>(ctx: &BlockContext<'a>, len: usize) -> Result<&'a [u8]> {
    ctx.dref.get(..len).ok_or_else(|| Error::Filter {
        id: ID.0,
        message: format!(
            "block at offset {} has {len} bytes but the block-0 reference only {}",
            ctx.offset,
            ctx.dref.len()
        ),
    })
}

/// `dst[b] = a[b] ^ b_[b]` over the common length.
fn xor_into(dst: &mut [u8], a: &[u8], b: &[u8]) {
    for ((d, x), y) in dst.iter_mut().zip(a).zip(b) {
        *d = x ^ y;
    }
}

impl Filter for Delta {
    fn id(&self) -> FilterId {
        ID
    }
    fn name(&self) -> &str {
        "delta"
    }
    fn forward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        same_len(ID, src, dst)?;
        let w = word_size(ctx.typesize)?;
        let words = src.len() - src.len() % w;
        dst[words..].copy_from_slice(&src[words..]);
        if ctx.offset == 0 {
            let head = w.min(words);
            dst[..head].copy_from_slice(&src[..head]);
            if words > w {
                xor_into(&mut dst[w..words], &src[w..words], &src[..words - w]);
            }
        } else {
            let r = reference(ctx, words)?;
            xor_into(&mut dst[..words], &src[..words], r);
        }
        Ok(())
    }
    fn backward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        same_len(ID, src, dst)?;
        let w = word_size(ctx.typesize)?;
        let words = src.len() - src.len() % w;
        if ctx.offset == 0 {
            dst[words..].copy_from_slice(&src[words..]);
            simd::prefix_xor(w, &src[..words], &mut dst[..words]).map_err(kernel_err(ID))?;
        } else {
            let r = reference(ctx, words)?;
            dst[words..].copy_from_slice(&src[words..]);
            xor_into(&mut dst[..words], &src[..words], r);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(typesize: usize, nblock: usize, blocksize: usize, dref: &[u8]) -> BlockContext<'_> {
        BlockContext {
            typesize,
            meta: 0,
            nblock,
            offset: nblock * blocksize,
            version: 5,
            dref,
            nd: None,
            ..BlockContext::default()
        }
    }

    /// Delta from the word-wise definition (C-Blosc2's loops), tail bytes copied.
    fn forward_def(ts: usize, block: &[u8], reference: &[u8], first: bool) -> Vec<u8> {
        let w = word_size(ts).unwrap();
        let nw = block.len() / w;
        let mut out = block.to_vec();
        for i in 0..nw {
            for k in 0..w {
                let b = i * w + k;
                out[b] = if first {
                    if i == 0 {
                        block[b]
                    } else {
                        block[b] ^ block[b - w]
                    }
                } else {
                    block[b] ^ reference[b]
                };
            }
        }
        out
    }

    fn data(len: usize, seed: usize) -> Vec<u8> {
        (0..len).map(|i| ((i * i + seed * 7) % 251) as u8).collect()
    }

    #[test]
    fn word_sizes() {
        let got: Vec<usize> = (1..=24).map(|t| word_size(t).unwrap()).collect();
        assert_eq!(
            got,
            [1, 2, 1, 4, 1, 1, 1, 8, 1, 1, 1, 1, 1, 1, 1, 8, 1, 1, 1, 1, 1, 1, 1, 8]
        );
    }

    #[test]
    fn matches_definition_and_round_trips_a_chunk() {
        for ts in [1usize, 2, 3, 4, 8, 12, 16, 24] {
            for (blocksize, nbytes) in
                [(64, 64), (64, 200), (ts * 40, ts * 97 + 5), (8, 13), (5, 7)]
            {
                let chunk = data(nbytes, ts);
                let mut coded = Vec::new();
                for (b, block) in chunk.chunks(blocksize).enumerate() {
                    let mut out = vec![0u8; block.len()];
                    Delta
                        .forward(block, &mut out, &ctx(ts, b, blocksize, &chunk))
                        .unwrap();
                    let want = forward_def(ts, block, &chunk, b == 0);
                    assert_eq!(out, want, "ts={ts} bs={blocksize} block={b}");
                    coded.extend_from_slice(&out);
                }
                let mut decoded = vec![0u8; nbytes];
                let (first, rest) = decoded.split_at_mut(blocksize.min(nbytes));
                Delta
                    .backward(&coded[..first.len()], first, &ctx(ts, 0, blocksize, &[]))
                    .unwrap();
                for (b, out) in rest.chunks_mut(blocksize).enumerate() {
                    let off = (b + 1) * blocksize;
                    let src = &coded[off..off + out.len()];
                    Delta
                        .backward(src, out, &ctx(ts, b + 1, blocksize, first))
                        .unwrap();
                }
                assert_eq!(decoded, chunk, "ts={ts} bs={blocksize} nbytes={nbytes}");
            }
        }
    }

    #[test]
    fn tail_bytes_are_copied() {
        let src = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
        let mut out = [0u8; 11];
        Delta.forward(&src, &mut out, &ctx(4, 0, 11, &src)).unwrap();
        assert_eq!(out[8..], [9, 10, 11]);
        assert_eq!(out[..4], [1, 2, 3, 4]);
        assert_eq!(out[4..8], [5 ^ 1, 6 ^ 2, 7 ^ 3, 8 ^ 4]);
        // Shorter than one word: copied whole.
        let mut short = [0u8; 3];
        Delta
            .forward(&src[..3], &mut short, &ctx(8, 0, 3, &src))
            .unwrap();
        assert_eq!(short, [1, 2, 3]);
    }

    #[test]
    fn errors_instead_of_panics() {
        let mut dst = [0u8; 8];
        assert!(matches!(
            Delta.forward(&[0; 8], &mut dst, &ctx(0, 0, 8, &[])),
            Err(Error::Filter { id: 3, .. })
        ));
        assert!(Delta
            .forward(&[0; 7], &mut dst, &ctx(1, 0, 8, &[]))
            .is_err());
        // Block 1 with a reference shorter than the block.
        assert!(Delta
            .forward(&[0; 8], &mut dst, &ctx(1, 1, 8, &[0; 4]))
            .is_err());
        assert!(Delta
            .backward(&[0; 8], &mut dst, &ctx(1, 1, 8, &[0; 4]))
            .is_err());
    }
}
