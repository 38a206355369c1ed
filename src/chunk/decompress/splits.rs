//! Into how many streams a block was split when it was compressed: `typesize` streams (one
//! per byte of the item) or one. Blosc2 splits every full block whose size is a multiple of
//! the typesize unless the chunk's flags say not to; Blosc1 (chunk version 2) split only
//! items of at most 16 bytes, with at least 128 of them in the block. A short last block is
//! never split.

use crate::format::chunk::ChunkHeader;

/// The largest Blosc1 typesize that was split into streams.
const BLOSC1_MAX_SPLITS: usize = 16;
/// The fewest items per block for a Blosc1 block to be split.
const BLOSC1_MIN_SPLIT_ITEMS: usize = 128;

/// The number of streams of a block of `bsize` bytes in a chunk with header `h`.
pub(super) fn nstreams(h: &ChunkHeader, bsize: usize) -> usize {
    let full = bsize == h.blocksize;
    let split = if h.version <= 2 {
        // Blosc1 split only small items with enough of them per block.
        !h.dont_split()
            && h.typesize <= BLOSC1_MAX_SPLITS
            && bsize / h.typesize >= BLOSC1_MIN_SPLIT_ITEMS
    } else {
        !h.dont_split()
    };
    if split && full && bsize.is_multiple_of(h.typesize) {
        h.typesize
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::chunk::{SpecialType, FLAG_DONT_SPLIT, MAX_FILTERS};
    use crate::format::ids::{CodecId, FilterId};

    fn header(version: u8, typesize: usize, blocksize: usize, flags: u8) -> ChunkHeader {
        ChunkHeader {
            version,
            versionlz: 1,
            flags,
            typesize,
            nbytes: 4 * blocksize,
            blocksize,
            cbytes: 0,
            header_len: if version <= 2 { 16 } else { 32 },
            filters: [FilterId::NOFILTER; MAX_FILTERS],
            filters_meta: [0; MAX_FILTERS],
            compcode: CodecId::LZ4,
            compcode_meta: 0,
            blosc2_flags: 0,
            blosc2_flags2: 0,
            special: SpecialType::None,
        }
    }

    #[test]
    fn blosc2_splits_every_full_block() {
        assert_eq!(nstreams(&header(5, 4, 4096, 0), 4096), 4);
        assert_eq!(nstreams(&header(5, 32, 4096, 0), 4096), 32);
        assert_eq!(nstreams(&header(5, 200, 64 * 200, 0), 64 * 200), 200);
        // Not a short block, not a size that is no multiple of the typesize, not when told.
        assert_eq!(nstreams(&header(5, 4, 4096, 0), 1000), 1);
        assert_eq!(nstreams(&header(5, 3, 4096, 0), 4096), 1);
        assert_eq!(nstreams(&header(5, 4, 4096, FLAG_DONT_SPLIT), 4096), 1);
    }

    #[test]
    fn blosc1_split_small_items_only() {
        assert_eq!(nstreams(&header(2, 16, 128 * 16, 0), 128 * 16), 16);
        assert_eq!(nstreams(&header(2, 17, 128 * 17, 0), 128 * 17), 1);
        assert_eq!(nstreams(&header(2, 4, 128 * 4, 0), 128 * 4), 4);
        assert_eq!(nstreams(&header(2, 4, 127 * 4, 0), 127 * 4), 1);
        assert_eq!(nstreams(&header(2, 4, 4096, FLAG_DONT_SPLIT), 4096), 1);
        // Blosc2 splits what Blosc1 did not.
        assert_eq!(nstreams(&header(5, 4, 127 * 4, 0), 127 * 4), 4);
    }
}
