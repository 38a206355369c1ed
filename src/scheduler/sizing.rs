//! Sizing rules: chunk size from L3, block size from L2.
//!
//! These are the sizes Strata derives when the caller gives no chunkshape or blockshape (for
//! N-d arrays through `ndarray::partition`). Blocks of `L2 / 4` compressed and decompressed
//! fastest with LZ4 and Zstd on the project's machine, and chunks beyond a few MiB changed
//! nothing; the measurements and their command are in `docs/measurements.md`.
//!
//! * **Chunk** ([`recommended_chunksize`]): `L3 / 2`, clamped to
//!   [[`MIN_CHUNK_BYTES`], [`MAX_CHUNK_BYTES`]] and rounded down to a multiple of 1 MiB.
//!   While all threads work on the blocks of one chunk, the chunk and its compressed copy
//!   (at most about the same size) should both stay in the shared last-level cache, hence half
//!   of L3. At least 1 MiB keeps the per-chunk costs (header, `bstarts`, one frame index entry,
//!   one job hand-off) small next to the data and leaves several blocks to share among
//!   threads; at most 64 MiB bounds the memory and latency of a one-chunk read or write on
//!   parts with very large L3 (some servers and virtual machines report hundreds of MiB).
//! * **Block** ([`recommended_blocksize`]): `L2 / 4`, clamped to
//!   [[`MIN_BLOCK_BYTES`], [`MAX_BLOCK_BYTES`]] and rounded down to a multiple of `typesize`.
//!   One thread works on a block at a time with about four block-sized buffers live (the
//!   source, the filter scratch, the codec output, the codec's tables and history), which
//!   should fit in the core's private L2. Below 16 KiB the codec's start-up and the per-block
//!   overhead dominate and ratios drop; above 2 MiB a chunk has too few blocks to share among
//!   threads and a small `getitem` decompresses too much.
//!
//! ```
//! use strata::scheduler::{sizing, topology::Topology};
//! let t = Topology::from_sizes(32 << 10, 1 << 20, 8 << 20);
//! assert_eq!(sizing::recommended_chunksize(&t), 4 << 20);
//! assert_eq!(sizing::recommended_blocksize(&t, 4), 256 << 10);
//! assert_eq!(sizing::recommended_blocksize(&t, 12), 262_140);
//! ```
#![forbid(unsafe_code)]

use super::topology::Topology;

/// Smallest recommended chunk, in bytes (1 MiB).
pub const MIN_CHUNK_BYTES: usize = 1 << 20;
/// Largest recommended chunk, in bytes (64 MiB).
pub const MAX_CHUNK_BYTES: usize = 64 << 20;
/// Smallest recommended block, in bytes (16 KiB).
pub const MIN_BLOCK_BYTES: usize = 16 << 10;
/// Largest recommended block, in bytes (2 MiB).
pub const MAX_BLOCK_BYTES: usize = 2 << 20;

/// The chunk size, in bytes (uncompressed), for a machine with this topology:
/// `L3 / 2` clamped to [1 MiB, 64 MiB], rounded down to a multiple of 1 MiB.
#[must_use]
pub fn recommended_chunksize(topology: &Topology) -> usize {
    let bytes = (topology.l3.bytes / 2).clamp(MIN_CHUNK_BYTES, MAX_CHUNK_BYTES);
    bytes / MIN_CHUNK_BYTES * MIN_CHUNK_BYTES
}

/// The block size, in bytes (uncompressed), for items of `typesize` bytes on a machine with
/// this topology: `L2 / 4` clamped to [16 KiB, 2 MiB], rounded down to a multiple of
/// `typesize` (never below one item; a `typesize` of 0 counts as 1).
#[must_use]
pub fn recommended_blocksize(topology: &Topology, typesize: usize) -> usize {
    let typesize = typesize.max(1);
    let bytes = (topology.l2.bytes / 4).clamp(MIN_BLOCK_BYTES, MAX_BLOCK_BYTES);
    (bytes / typesize * typesize).max(typesize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(l2: usize, l3: usize) -> Topology {
        Topology::from_sizes(32 << 10, l2, l3)
    }

    #[test]
    fn chunk_rule() {
        assert_eq!(recommended_chunksize(&topo(1 << 20, 8 << 20)), 4 << 20);
        assert_eq!(recommended_chunksize(&topo(1 << 20, 30 << 20)), 15 << 20);
        assert_eq!(recommended_chunksize(&topo(1 << 20, 25 << 19)), 6 << 20); // 12.5 MiB L3
        assert_eq!(
            recommended_chunksize(&topo(1 << 20, 512 << 10)),
            MIN_CHUNK_BYTES
        );
        assert_eq!(
            recommended_chunksize(&topo(1 << 20, 480 << 20)),
            MAX_CHUNK_BYTES
        );
    }

    #[test]
    fn block_rule() {
        assert_eq!(recommended_blocksize(&topo(2 << 20, 8 << 20), 8), 512 << 10);
        assert_eq!(
            recommended_blocksize(&topo(256 << 10, 8 << 20), 1),
            64 << 10
        );
        assert_eq!(
            recommended_blocksize(&topo(32 << 10, 8 << 20), 1),
            MIN_BLOCK_BYTES
        );
        assert_eq!(
            recommended_blocksize(&topo(64 << 20, 8 << 20), 1),
            MAX_BLOCK_BYTES
        );
        assert_eq!(recommended_blocksize(&topo(1 << 20, 8 << 20), 3), 262_143);
        assert_eq!(recommended_blocksize(&topo(1 << 20, 8 << 20), 0), 256 << 10);
        // An item larger than the clamp still gets one whole item.
        assert_eq!(
            recommended_blocksize(&topo(1 << 20, 8 << 20), 3 << 20),
            3 << 20
        );
        for typesize in 1..=64 {
            assert_eq!(
                recommended_blocksize(&topo(1 << 20, 8 << 20), typesize) % typesize,
                0
            );
        }
    }
}
