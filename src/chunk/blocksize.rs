//! Block size and stream split, chosen exactly as C-Blosc2 chooses them, so that chunks made
//! with blocksize 0 match C-Blosc2's byte for byte.
//!
//! Format: c-blosc2 `blosc/stune.c` (`split_block`, `blosc_stune_next_blocksize`); see
//! `docs/chunk-format.md` (block size, split).

use super::params::{CParams, SplitMode};
use crate::codecs::Capabilities;
use crate::format::chunk::MIN_BUFFERSIZE;
use crate::format::ids::FilterId;

const L1: usize = 32 * 1024;
const MAX_STREAMS: usize = 16;
const MIN_BLOCKSIZE_SPLIT: usize = 32 * 1024;
const MAX_BLOCKSIZE_SPLIT: usize = 4 * 1024 * 1024;

/// Whether blocks of `blocksize` bytes are split into `typesize` streams, for a codec of
/// capabilities `caps`.
///
/// Always / never as asked; otherwise (auto and forward-compat) only when the codec splits at
/// this clevel ([`Capabilities::split_max_clevel`]: BloscLZ, LZ4, Zstd at clevel ≤ 5), with
/// byte shuffle among the filters, typesize ≤ 16 and at least 32 items per block.
pub(crate) fn split_block(
    cparams: &CParams,
    caps: &Capabilities,
    typesize: usize,
    blocksize: usize,
) -> bool {
    match cparams.splitmode {
        SplitMode::Always => true,
        SplitMode::Never => false,
        SplitMode::Auto | SplitMode::ForwardCompat => {
            let codec_ok = caps
                .split_max_clevel
                .is_some_and(|max| cparams.clevel <= max);
            let shuffled = cparams.filters.contains(&FilterId::SHUFFLE);
            codec_ok
                && shuffled
                && typesize <= MAX_STREAMS
                && blocksize / typesize >= MIN_BUFFERSIZE
        }
    }
}

/// The block size in bytes for `nbytes` bytes of input: the caller's if given (capped at
/// `nbytes`), otherwise C-Blosc2's heuristic for a codec of capabilities `caps` (larger
/// blocks for [`Capabilities::high_ratio`] codecs). Always ≥ 1 and, when larger than the
/// typesize, a multiple of it.
pub(crate) fn compute_blocksize(cparams: &CParams, caps: &Capabilities, nbytes: usize) -> usize {
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
            bs = if caps.high_ratio { 2 * L1 } else { L1 };
            bs = match clevel {
                0 => bs / 4,
                1 => bs / 2,
                2 => bs,
                3 => bs * 2,
                4 | 5 => bs * 4,
                6..=8 => bs * 8,
                _ => bs * if caps.high_ratio { 16 } else { 8 },
            };
        }
        if clevel > 0 && split_block(cparams, caps, typesize, nbytes) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codecs::{blosclz::Blosclz, lz4hc::Lz4hc, zstd::Zstd, Codec};
    use crate::format::ids::CodecId;

    fn cparams(codec: CodecId, clevel: u8, typesize: usize) -> CParams {
        CParams {
            codec,
            clevel,
            typesize,
            ..CParams::default()
        }
    }

    #[test]
    fn high_ratio_codecs_get_larger_blocks() {
        let n = 8 << 20;
        let caps = Lz4hc.capabilities();
        // Not split (LZ4HC never splits): L1 × 2 × 4 at clevel 5, × 16 at clevel 9.
        assert_eq!(
            compute_blocksize(&cparams(CodecId::LZ4HC, 5, 8), &caps, n),
            256 << 10
        );
        assert_eq!(
            compute_blocksize(&cparams(CodecId::LZ4HC, 9, 8), &caps, n),
            1 << 20
        );
        let plain = Capabilities::default();
        assert_eq!(
            compute_blocksize(&cparams(CodecId(200), 5, 8), &plain, n),
            128 << 10
        );
        assert_eq!(
            compute_blocksize(&cparams(CodecId(200), 9, 8), &plain, n),
            256 << 10
        );
    }

    #[test]
    fn codecs_split_up_to_their_clevel() {
        let (zstd, blosclz) = (Zstd.capabilities(), Blosclz.capabilities());
        let p = |clevel| cparams(CodecId::ZSTD, clevel, 4);
        assert!(split_block(&p(5), &zstd, 4, 1 << 16));
        assert!(!split_block(&p(6), &zstd, 4, 1 << 16));
        assert!(split_block(&p(9), &blosclz, 4, 1 << 16));
        assert!(!split_block(&p(1), &Capabilities::default(), 4, 1 << 16));
        // Without shuffle, with a typesize over 16 or fewer than 32 items a block: not split.
        let unshuffled = CParams {
            filters: [FilterId::NOFILTER; 6],
            ..p(5)
        };
        assert!(!split_block(&unshuffled, &zstd, 4, 1 << 16));
        assert!(!split_block(&p(5), &zstd, 17, 1 << 16));
        assert!(!split_block(&p(5), &zstd, 4, 31 * 4));
        // Split blocks hold k × typesize bytes: 64 KiB × 4 at clevel 5.
        assert_eq!(compute_blocksize(&p(5), &zstd, 8 << 20), 256 << 10);
        // The caller's mode wins.
        let never = CParams {
            splitmode: SplitMode::Never,
            ..p(5)
        };
        assert!(!split_block(&never, &zstd, 4, 1 << 16));
        let always = CParams {
            splitmode: SplitMode::Always,
            ..unshuffled
        };
        assert!(split_block(&always, &Capabilities::default(), 4, 1 << 16));
    }

    #[test]
    fn a_given_blocksize_is_capped_and_rounded_to_items() {
        let p = CParams {
            blocksize: 1000,
            ..cparams(CodecId::LZ4, 5, 12)
        };
        let caps = Capabilities::default();
        assert_eq!(compute_blocksize(&p, &caps, 100_000), 996);
        assert_eq!(compute_blocksize(&p, &caps, 600), 600);
        assert_eq!(compute_blocksize(&p, &caps, 5), 1);
    }
}
