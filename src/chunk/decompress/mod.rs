//! Decompression of one chunk, whole or in part (getitem), from any chunk version C-Blosc2
//! reads: Blosc1 (version 2, 16-byte header), Blosc2 pre-releases (3, 4), Blosc2 (5, with a
//! 16- or 32-byte header) and C-Blosc2 3.x variable-length-block chunks (6).
//!
//! Every chunk is untrusted: each offset and size is checked before use, and every failure is
//! a typed [`Error`], never a panic.
//! Format: c-blosc2 `blosc/blosc2.c` (`blosc_d`, `_blosc_getitem`,
//! `initialize_context_decompression`); `docs/chunk-format.md`.
//!
//! This file holds the one-shot functions; the rest is split by what it knows:
//! * `decoder`: the [`Decoder`], a checked chunk (header, codec, filters, dictionary), and
//!   what it decodes whole, by range, by block or in byte planes;
//! * `block`: one block's streams (zeros, runs, raw bytes, codec payloads) and filters undone,
//!   and the blocks of VL-block chunks;
//! * `splits`: into how many streams a block was split, Blosc1's rule and Blosc2's.

mod block;
mod decoder;
mod splits;

pub use decoder::Decoder;

use super::{job_threads, Context, DParams};
use crate::error::{Error, Result};

/// Decompresses the chunk at the start of `src` into `dst`; returns `nbytes`.
///
/// `dst` may be larger than needed. Bytes of `src` after `cbytes` are ignored.
///
/// # Errors
/// [`Error::DestinationTooSmall`] if `dst` is shorter than `nbytes`; [`Error::Truncated`],
/// [`Error::InvalidHeader`], [`Error::VersionSupport`] for a bad header;
/// [`Error::UnknownCodec`] / [`Error::UnknownFilter`]; [`Error::Codec`] / [`Error::Decoded`] /
/// [`Error::RunLength`] for corrupt streams.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    decompress_ctx(&Context::global(), &DParams::default(), src, dst)
}

/// [`decompress`] with an explicit context and parameters.
///
/// # Errors
/// As [`decompress`].
pub fn decompress_ctx(
    ctx: &Context,
    dparams: &DParams,
    src: &[u8],
    dst: &mut [u8],
) -> Result<usize> {
    Decoder::new(ctx.registry(), src)?
        .with_nd(dparams.nd.clone())
        .decompress_on(ctx.runtime(), dparams.nthreads, dst)
}

/// [`decompress`] into a new vector of `nbytes` bytes.
///
/// `nbytes` comes from an untrusted header, and no bound on it can be derived from `cbytes`:
/// zero runs, `bstarts` shared between blocks and codec run-lengths let a chunk of a few
/// bytes stand for 2 GiB. So this checks the framing of every block (each `bstarts` entry and
/// stream record lies inside the chunk) before it allocates anything, reserves its output
/// fallibly ([`Error::MemoryAlloc`] when it cannot), and grows the output one block at a time,
/// so that memory is touched only as blocks decode: a chunk with a garbage stream fails after
/// one block, not after zero-filling `nbytes`.
///
/// # Errors
/// As [`decompress`]; [`Error::MemoryAlloc`] when `nbytes` cannot be reserved.
pub fn decompress_vec(src: &[u8]) -> Result<Vec<u8>> {
    decompress_vec_ctx(&Context::global(), &DParams::default(), src)
}

/// Blocks each thread decodes per window when [`decompress_vec_ctx`] decodes in parallel.
const WINDOW_BLOCKS_PER_THREAD: usize = 4;

/// [`decompress_vec`] with an explicit context and parameters. When the blocks decode on
/// several threads the output still grows, a window of `WINDOW_BLOCKS_PER_THREAD` blocks per
/// thread at a time, after block 0 alone.
///
/// # Errors
/// As [`decompress_vec`].
pub fn decompress_vec_ctx(ctx: &Context, dparams: &DParams, src: &[u8]) -> Result<Vec<u8>> {
    let d = Decoder::new(ctx.registry(), src)?.with_nd(dparams.nd.clone());
    d.check_framing(0..d.header.nblocks())?;
    let n = d.header.nbytes;
    let mut out = crate::alloc::with_capacity(n)?;
    let nthreads = job_threads(ctx.runtime(), dparams.nthreads, n);
    if d.regular() && nthreads > 1 {
        // Block 0 first, alone: delta's other blocks refer to it, and a chunk of garbage
        // fails there before more memory is touched.
        let nblocks = d.header.nblocks();
        let bs = d.header.blocksize;
        out.resize(d.block_range(0).end, 0);
        d.decode_block_at(0, &mut out, &mut crate::chunk::scratch::take())?;
        let mut next = 1;
        while next < nblocks {
            let last = nblocks.min(next + nthreads * WINDOW_BLOCKS_PER_THREAD);
            out.resize(d.block_range(last - 1).end, 0);
            let (done, window) = out.split_at_mut(next * bs);
            let block0 = &done[..bs];
            let init = crate::chunk::scratch::take;
            ctx.runtime().for_each_chunk_mut_init(
                window,
                bs,
                nthreads,
                init,
                |scratch, i, block| d.decode_block(next + i, block, block0, scratch),
            )?;
            next = last;
        }
        return Ok(out);
    }
    if d.regular() {
        let mut scratch = crate::chunk::scratch::take();
        for nblock in 0..d.header.nblocks() {
            out.resize(d.block_range(nblock).end, 0);
            d.decode_block_at(nblock, &mut out, &mut scratch)?;
        }
    } else if d.has_blocks() {
        for (nblock, (size, payload)) in d.vl_framing()?.into_iter().enumerate() {
            let at = out.len();
            out.resize(at + size, 0);
            d.decode_vl_block(nblock, payload, at, &mut out[at..])?;
        }
    } else {
        out.resize(n, 0);
        d.decompress_on(ctx.runtime(), 1, &mut out)?;
    }
    Ok(out)
}

/// Copies items `[start, start + nitems)` of the chunk into `dst`, decompressing only the
/// blocks that hold them (and block 0 too when the chunk uses delta, whose other blocks are
/// relative to it). Items are `typesize` bytes as stored in the header. Returns the bytes
/// written (`nitems * typesize`).
///
/// # Errors
/// [`Error::InvalidIndex`] if the items lie outside the chunk; [`Error::DestinationTooSmall`]
/// if `dst` cannot hold them; otherwise as [`decompress`].
pub fn getitem(src: &[u8], start: usize, nitems: usize, dst: &mut [u8]) -> Result<usize> {
    getitem_ctx(
        &Context::global(),
        &DParams::default(),
        src,
        start,
        nitems,
        dst,
    )
}

/// [`getitem`] with an explicit context and parameters.
///
/// # Errors
/// As [`getitem`].
pub fn getitem_ctx(
    ctx: &Context,
    dparams: &DParams,
    src: &[u8],
    start: usize,
    nitems: usize,
    dst: &mut [u8],
) -> Result<usize> {
    Decoder::new(ctx.registry(), src)?
        .with_nd(dparams.nd.clone())
        .getitem_on(ctx.runtime(), dparams.nthreads, start, nitems, dst)
}

/// The little-endian `i32` at `at` of `src` (`what` names it in the error).
pub(super) fn read_i32(src: &[u8], at: usize, what: &'static str) -> Result<i32> {
    match src.get(at..at + 4) {
        Some(b) => Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        None => Err(Error::Truncated {
            what,
            needed: at + 4,
            available: src.len(),
        }),
    }
}

#[cfg(test)]
pub(super) mod testkit {
    //! Chunks for the tests of this module and its children.

    use crate::chunk::{compress_vec, CParams, Context};
    use crate::format::ids::{CodecId, FilterId};
    use crate::registry::Registry;
    use crate::scheduler::{Runtime, RuntimeConfig};
    use std::sync::Arc;

    /// The u32 items `from..to`, as bytes.
    pub fn items(from: u32, to: u32) -> Vec<u8> {
        (from..to).flat_map(u32::to_le_bytes).collect()
    }

    /// Typesize 4, LZ4, blocks of `blocksize` bytes, shuffle (and delta before it if `delta`).
    pub fn cparams(blocksize: usize, delta: bool) -> CParams {
        let mut cp = CParams {
            codec: CodecId::LZ4,
            typesize: 4,
            blocksize,
            ..CParams::default()
        };
        if delta {
            cp.filters[4] = FilterId::DELTA;
        }
        cp
    }

    /// `data` compressed with [`cparams`].
    pub fn chunk(data: &[u8], blocksize: usize, delta: bool) -> Vec<u8> {
        compress_vec(&cparams(blocksize, delta), data).unwrap()
    }

    /// A context whose runtime has two workers and uses two threads per job.
    pub fn two_threads() -> Context {
        let config = RuntimeConfig::default()
            .with_workers(2)
            .with_nthreads(2)
            .with_pin(false);
        Context::new(Registry::global(), Arc::new(Runtime::new(config)))
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::{chunk, items, two_threads};
    use super::*;
    use crate::chunk::{special_chunk, CParams};
    use crate::format::chunk::SpecialType;

    #[test]
    fn the_one_shot_functions_agree_on_any_thread_count() {
        let data = items(0, 256 * 1024);
        let ctx = two_threads();
        for delta in [false, true] {
            let c = chunk(&data, 16 * 1024, delta);
            for nthreads in [1, 2] {
                let dp = DParams {
                    nthreads,
                    ..DParams::default()
                };
                assert_eq!(decompress_vec_ctx(&ctx, &dp, &c).unwrap(), data);
                let mut out = vec![0u8; data.len() + 3];
                assert_eq!(decompress_ctx(&ctx, &dp, &c, &mut out).unwrap(), data.len());
                assert_eq!(out[..data.len()], data);
                let mut item = [0u8; 12];
                assert_eq!(
                    getitem_ctx(&ctx, &dp, &c, 70_000, 3, &mut item).unwrap(),
                    12
                );
                assert_eq!(item[..], items(70_000, 70_003));
            }
            assert_eq!(decompress_vec(&c).unwrap(), data);
            let mut short = vec![0u8; data.len() - 1];
            let e = decompress(&c, &mut short).unwrap_err();
            assert!(matches!(e, Error::DestinationTooSmall { .. }), "{e}");
            let e = getitem(&c, 256 * 1024 - 1, 2, &mut short).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::InvalidRange {
                        what: "items",
                        start: 262_143,
                        end: 262_145,
                        ..
                    }
                ),
                "{e}"
            );
        }
    }

    #[test]
    fn decompress_vec_reads_every_kind_of_chunk() {
        let cp = CParams {
            typesize: 4,
            ..CParams::default()
        };
        let value = special_chunk(&cp, SpecialType::Value, 16, Some(&[1, 2, 3, 4])).unwrap();
        assert_eq!(decompress_vec(&value).unwrap(), [1, 2, 3, 4].repeat(4));
        let memcpyed = crate::chunk::compress_vec(
            &CParams {
                clevel: 0,
                ..cp.clone()
            },
            &items(0, 10),
        )
        .unwrap();
        assert_eq!(decompress_vec(&memcpyed).unwrap(), items(0, 10));
        let empty = crate::chunk::compress_vec(&cp, &[]).unwrap();
        assert_eq!(decompress_vec(&empty).unwrap(), Vec::<u8>::new());
        // A bstarts entry outside the chunk fails before anything is decoded.
        let data = items(0, 64 * 1024);
        let mut c = chunk(&data, 16 * 1024, false);
        let last = 32 + 4 * 15;
        let outside = c.len() as i32;
        c[last..last + 4].copy_from_slice(&outside.to_le_bytes());
        let e = decompress_vec(&c).unwrap_err();
        assert!(
            matches!(e, Error::InvalidHeader { what: "bstart", value, .. } if value == i64::from(outside)),
            "{e}"
        );
        assert_eq!(
            read_i32(&c, 0, "x").unwrap(),
            i32::from_le_bytes([c[0], c[1], c[2], c[3]])
        );
        let e = read_i32(&c, c.len() - 3, "the tail").unwrap_err();
        assert!(
            matches!(
                e,
                Error::Truncated {
                    what: "the tail",
                    ..
                }
            ),
            "{e}"
        );
    }
}
