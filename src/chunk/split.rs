//! Buffers larger than one chunk: split into consecutive chunks that compress (and
//! decompress) in parallel on the runtime, each chunk a regular Blosc2 chunk.

use super::{
    compress_ctx, decompress_ctx, job_threads, max_compressed_len, CParams, Context, DParams,
};
use crate::error::{Error, Expected, Result};
use crate::format::chunk::{ChunkHeader, MAX_BUFFERSIZE};
use std::sync::Mutex;

/// Compresses `src` as consecutive chunks of `chunksize` bytes (the last one may be
/// shorter), returning one Blosc2 chunk per piece, in order.
///
/// With several chunks and several threads, whole chunks are spread over the threads (each
/// compressing its blocks alone); a single chunk uses the threads for its blocks. The chunks
/// are the bytes [`super::compress`] gives for each piece, whatever the thread count.
///
/// # Errors
/// [`Error::OutOfRange`] when `chunksize` is 0 or exceeds `BLOSC2_MAX_BUFFERSIZE`;
/// otherwise as [`super::compress`].
pub fn compress_chunks(
    ctx: &Context,
    cparams: &CParams,
    src: &[u8],
    chunksize: usize,
) -> Result<Vec<Vec<u8>>> {
    if chunksize == 0 || chunksize > MAX_BUFFERSIZE {
        return Err(Error::range(
            "chunk size in bytes",
            chunksize,
            Expected::range(1, MAX_BUFFERSIZE),
        ));
    }
    let pieces: Vec<&[u8]> = src.chunks(chunksize).collect();
    let nthreads = job_threads(ctx.runtime(), cparams.nthreads, src.len());
    let compress_one = |piece: &[u8], cparams: &CParams| -> Result<Vec<u8>> {
        let mut out = vec![0u8; max_compressed_len(piece.len())];
        let n = compress_ctx(ctx, cparams, piece, &mut out)?;
        out.truncate(n);
        Ok(out)
    };
    if pieces.len() < 2 || nthreads < 2 {
        return pieces.iter().map(|p| compress_one(p, cparams)).collect();
    }
    let serial = CParams {
        nthreads: 1,
        ..cparams.clone()
    };
    ctx.runtime()
        .map_index(pieces.len(), nthreads, |i| compress_one(pieces[i], &serial))
}

/// Decompresses `chunks`, in order, into `dst` one after the other; returns the bytes
/// written (the sum of their `nbytes`). Chunks are spread over the threads.
///
/// # Errors
/// [`Error::DestinationTooSmall`] when the chunks hold more than `dst`; otherwise as
/// [`super::decompress`] for the first chunk that fails.
pub fn decompress_chunks(
    ctx: &Context,
    dparams: &DParams,
    chunks: &[&[u8]],
    dst: &mut [u8],
) -> Result<usize> {
    let mut sizes = Vec::with_capacity(chunks.len());
    for c in chunks {
        sizes.push(ChunkHeader::parse(c)?.nbytes);
    }
    let total = sizes
        .iter()
        .try_fold(0usize, |a, &n| a.checked_add(n))
        .unwrap_or(usize::MAX);
    if total > dst.len() {
        return Err(Error::DestinationTooSmall {
            needed: total,
            available: dst.len(),
        });
    }
    let mut outs = Vec::with_capacity(chunks.len());
    let mut rest = &mut dst[..total];
    for &n in &sizes {
        let (out, tail) = rest.split_at_mut(n);
        rest = tail;
        outs.push(Mutex::new(out));
    }
    let nthreads = job_threads(ctx.runtime(), dparams.nthreads, total);
    let inner = if chunks.len() >= 2 && nthreads >= 2 {
        DParams {
            nthreads: 1,
            ..dparams.clone()
        }
    } else {
        dparams.clone()
    };
    ctx.runtime().for_each_index(chunks.len(), nthreads, |i| {
        let mut out = outs[i]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        decompress_ctx(ctx, &inner, chunks[i], &mut out).map(|_| ())
    })?;
    Ok(total)
}
