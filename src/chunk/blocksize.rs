//! Block size and stream split, chosen exactly as C-Blosc2 chooses them, so that chunks made
//! with blocksize 0 match C-Blosc2's byte for byte.
//!
//! Format: c-blosc2 `blosc/stune.c` (`split_block`, `blosc_stune_next_blocksize`); see
//! `shared/spec/codecs-filters.md` §13 and `chunk-format.md` §8.

use super::params::{CParams, SplitMode};
use crate::format::chunk::{filter_id, MIN_BUFFERSIZE};

const L1: usize = 32 * 1024;
const MAX_STREAMS: usize = 16;
const MIN_BLOCKSIZE_SPLIT: usize = 32 * 1024;
const MAX_BLOCKSIZE_SPLIT: usize = 4 * 1024 * 1024;

/// Codecs C-Blosc2 treats as "high compression ratio" when sizing blocks: LZ4HC, Zlib, Zstd.
fn is_hcr(codec: u8) -> bool {
    matches!(codec, 2 | 4 | 5)
}

/// Whether blocks of `blocksize` bytes are split into `typesize` streams.
///
/// Always / never as asked; otherwise (auto and forward-compat) only for BloscLZ, LZ4 and
/// Zstd at clevel ≤ 5, with byte shuffle among the filters, typesize ≤ 16 and at least 32
/// items per block.
#[must_use]
pub fn split_block(cparams: &CParams, typesize: usize, blocksize: usize) -> bool {
    match cparams.splitmode {
        SplitMode::Always => true,
        SplitMode::Never => false,
        SplitMode::Auto | SplitMode::ForwardCompat => {
            let codec_ok =
                matches!(cparams.codec, 0 | 1) || (cparams.codec == 5 && cparams.clevel <= 5);
            let shuffled = cparams.filters.contains(&filter_id::SHUFFLE);
            codec_ok
                && shuffled
                && typesize <= MAX_STREAMS
                && blocksize / typesize >= MIN_BUFFERSIZE
        }
    }
}

/// The block size in bytes for `nbytes` bytes of input: the caller's if given (capped at
/// `nbytes`), otherwise C-Blosc2's heuristic. Always ≥ 1 and, when larger than the typesize,
/// a multiple of it.
#[must_use]
pub fn compute_blocksize(cparams: &CParams, nbytes: usize) -> usize {
    let typesize = cparams.typesize;
    if nbytes < typesize {
        return 1;
    }
    let clevel = cparams.clevel;
    let mut bs = if cparams.blocksize > 0 {
        cparams.blocksize
    } else {
        let mut bs = nbytes;
        if nbytes >= L1 {
            bs = if is_hcr(cparams.codec) { 2 * L1 } else { L1 };
            bs = match clevel {
                0 => bs / 4,
                1 => bs / 2,
                2 => bs,
                3 => bs * 2,
                4 | 5 => bs * 4,
                6..=8 => bs * 8,
                _ => bs * if is_hcr(cparams.codec) { 16 } else { 8 },
            };
        }
        if clevel > 0 && split_block(cparams, typesize, nbytes) {
            let k = match clevel {
                1..=3 => 32 * 1024,
                4..=6 => 64 * 1024,
                7 => 128 * 1024,
                8 => 256 * 1024,
                _ => 512 * 1024,
            };
            bs = (k * typesize).clamp(MIN_BLOCKSIZE_SPLIT, MAX_BLOCKSIZE_SPLIT);
        }
        bs
    };
    bs = bs.min(nbytes);
    if bs > typesize {
        bs -= bs % typesize;
    }
    bs.max(1)
}
