//! Default chunkshape and blockshape, from the cache sizes, the shape and the typesize.
//!
//! The byte targets are the scheduler's sizing rules ([`crate::scheduler::sizing`]): a block of
//! about `L2 / 4` ([`recommended_blocksize`], 16 KiB to 2 MiB) and a chunk of about `L3 / 2`
//! ([`recommended_chunksize`], 1 MiB to 64 MiB). The rule:
//!
//! 1. **Block**: the largest box of at most `block bytes / typesize` items that is as close to a
//!    cube as the shape allows ("balanced"): dimensions shorter than the cube's side are taken
//!    whole, the others share the rest equally, and the leftover goes to the innermost
//!    dimensions first. Bounded by the chunkshape when that is given, else by the shape. Each
//!    dimension is then evened out: `n` items in blocks of `b` become blocks of
//!    `ceil(n / ceil(n / b))`, as many blocks with less padding in the last.
//! 2. **Chunk**: the same balanced rule counted in blocks, over the grid of blocks
//!    `ceil(shape / blockshape)`, for at most `chunk bytes / block bytes` blocks; each chunk
//!    dimension is that many blocks, cut to the shape (so chunks are whole blocks except
//!    where a chunk spans a whole dimension). An array that fits in one chunk is one chunk.
//! 3. A shape with a zero-length dimension gets its shape as partitions (python-blosc2 does the
//!    same: chunkshape and blockshape 0 there), or the given partition for the missing one.
//!
//! Balanced blocks keep the cost of a slice about the same whichever axis it runs along: a
//! row or a column of a 2-D array crosses `shape / side` blocks either way, where C-order slabs
//! (python-blosc2's choice, which fills the last dimension first) make a column read decompress
//! every block. Chunks are large because reads decompress only the blocks they touch. The
//! row, column and box reads that compare both choices, with their command, are in
//! `docs/measurements.md`.
//!
//! python-blosc2 4.14.1 on the project VM (L1d 48 KiB, L2 2 MiB, L3 480 MiB; its blocks come from
//! `4 * L1d` on x86-64 when L2 >= 2 MiB, its chunks from its own L3 heuristic) against this rule
//! on the same machine (tests below):
//!
//! | shape | dtype | python-blosc2 chunks / blocks | Strata chunks / blocks |
//! |---|---|---|---|
//! | (100,) | u1 | (100,) / (100,) | (100,) / (100,) |
//! | (1000000,) | f8 | (1000000,) / (20000,) | (1000000,) / (62500,) |
//! | (100000000,) | u1 | (100000000,) / (160000,) | (67015808,) / (523561,) |
//! | (1000, 1000) | f8 | (1000, 1000) / (20, 1000) | (1000, 1000) / (250, 250) |
//! | (2161, 4320) | f4 | (2161, 4320) / (11, 4320) | (2161, 4320) / (361, 360) |
//! | (20, 180, 360) | f4 | (20, 180, 360) / (1, 90, 360) | (20, 180, 360) / (20, 60, 72) |
//! | (10, 10, 10, 10) | u8 | (10, 10, 10, 10) / (10, 10, 10, 10) | same / same |
//! | (5, 7) | u1 | (5, 7) / (5, 7) | (5, 7) / (5, 7) |
//! | (3, 4000, 4000) | u2 | (3, 4000, 4000) / (1, 20, 4000) | (3, 3146, 3432) / (3, 286, 286) |
//! | (50, 50, 50, 50) | f8 | (50, 50, 50, 50) / (1, 5, 50, 50) | (50, 50, 50, 50) / (13, 13, 13, 13) |
//! | (7,) | V300 | (7,) / (7,) | (7,) / (7,) |
//! | (0, 5) | f4 | (0, 5) / (0, 5) | (0, 5) / (0, 5) |
//! | (10000, 10000) | f4 | (2500, 10000) / (4, 10000) | (3938, 3938) / (358, 358) |
//! | (512, 512, 512) | u1 | (256, 512, 512) / (1, 256, 512) | (370, 370, 444) / (74, 74, 74) |
//!
//! Format: none (partitions are free; C-Blosc2 stores whatever the writer chose in the b2nd
//! metalayer). python-blosc2 `src/blosc2/core.py` (`compute_chunks_blocks`) for comparison.
#![forbid(unsafe_code)]

use crate::error::{Error, Result};
use crate::scheduler::sizing::{recommended_blocksize, recommended_chunksize};
use crate::scheduler::topology::Topology;

/// The largest `r` with `r^m <= n` (`m >= 1`).
fn iroot(n: usize, m: usize) -> usize {
    let m32 = u32::try_from(m).unwrap_or(u32::MAX);
    let fits = |r: usize| r.checked_pow(m32).is_some_and(|p| p <= n);
    let mut r = (n as f64).powf(1.0 / m as f64).round() as usize;
    while r > 0 && !fits(r) {
        r -= 1;
    }
    while r < usize::MAX && fits(r + 1) {
        r += 1;
    }
    r
}

/// The balanced box of at most `nitems` items (at least one) within `bound`, as described in
/// the module docs. Every entry is at least 1 and at most its bound (bounds of 0 count as 1).
#[must_use]
pub fn balanced(nitems: usize, bound: &[usize]) -> Vec<usize> {
    let nitems = nitems.max(1);
    let bound: Vec<usize> = bound.iter().map(|&b| b.max(1)).collect();
    let mut part = vec![1; bound.len()];
    let mut free: Vec<usize> = (0..bound.len()).filter(|&i| bound[i] > 1).collect();
    let mut budget = nitems;
    while !free.is_empty() {
        let side = iroot(budget, free.len()).max(1);
        let short: Vec<usize> = free.iter().copied().filter(|&i| bound[i] <= side).collect();
        if short.is_empty() {
            for &i in &free {
                part[i] = side;
            }
            break;
        }
        for &i in &short {
            part[i] = bound[i];
            budget /= bound[i];
        }
        free.retain(|&i| bound[i] > side);
    }
    // Hand the leftover to the innermost dimensions first.
    for i in (0..part.len()).rev() {
        let others: usize = part
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, &p)| p)
            .product();
        part[i] = (nitems / others).min(bound[i]).max(part[i]);
    }
    part
}

/// The C-order slab of at most `nitems` items (at least one) within `bound`: the innermost
/// dimensions taken whole while they fit, the next one as far as the rest allows, the outer
/// ones 1 (bounds of 0 count as 1).
#[must_use]
pub fn slab(nitems: usize, bound: &[usize]) -> Vec<usize> {
    let mut budget = nitems.max(1);
    let mut part = vec![1; bound.len()];
    for (p, &b) in part.iter_mut().zip(bound).rev() {
        *p = b.max(1).min(budget);
        budget /= *p;
    }
    part
}

/// `block` evened out within `bound`: `n` items in blocks of `b` become blocks of
/// `ceil(n / ceil(n / b))`, as many blocks with the last about as full as the others (less
/// padding, never more items).
#[must_use]
pub fn even_out(block: &[usize], bound: &[usize]) -> Vec<usize> {
    block
        .iter()
        .zip(bound)
        .map(|(&b, &n)| n.max(1).div_ceil(n.max(1).div_ceil(b.max(1))))
        .collect()
}

/// The default blockshape for items of `typesize` bytes within `bound` (the chunkshape, or
/// the shape): the balanced box of [`recommended_blocksize`], evened out ([`even_out`]).
#[must_use]
pub fn default_blockshape(bound: &[usize], typesize: usize, topology: &Topology) -> Vec<usize> {
    let items = recommended_blocksize(topology, typesize) / typesize.max(1);
    even_out(&balanced(items, bound), bound)
}

/// The default chunkshape of an array of `shape` in blocks of `blockshape`: the balanced box of
/// [`recommended_chunksize`] counted in whole blocks, cut to the shape (never below a block).
#[must_use]
pub fn default_chunkshape(
    shape: &[usize],
    blockshape: &[usize],
    typesize: usize,
    topology: &Topology,
) -> Vec<usize> {
    let blocksize = blockshape.iter().product::<usize>().max(1) * typesize.max(1);
    let nblocks = recommended_chunksize(topology) / blocksize;
    let grid: Vec<usize> = shape
        .iter()
        .zip(blockshape)
        .map(|(&s, &b)| s.div_ceil(b.max(1)))
        .collect();
    balanced(nblocks, &grid)
        .iter()
        .zip(shape.iter().zip(blockshape))
        .map(|(&q, (&s, &b))| q.saturating_mul(b).min(s).max(b))
        .collect()
}

/// The chunkshape and blockshape of an array of `shape` with items of `typesize` bytes: the
/// given ones, and the missing ones by the rule of the module docs.
///
/// # Errors
/// [`Error::Mismatch`] if a given partition has not one entry per dimension of `shape`.
pub fn partitions(
    shape: &[usize],
    chunkshape: Option<&[usize]>,
    blockshape: Option<&[usize]>,
    typesize: usize,
    topology: &Topology,
) -> Result<(Vec<usize>, Vec<usize>)> {
    let ndim = shape.len();
    let given = [
        (chunkshape, "chunkshape entries (one per dimension)"),
        (blockshape, "blockshape entries (one per dimension)"),
    ];
    for (p, entries) in given {
        let Some(p) = p else { continue };
        if p.len() != ndim {
            return Err(Error::mismatch(entries, ndim, p.len()));
        }
    }
    if shape.contains(&0) {
        let chunks = chunkshape.or(blockshape).unwrap_or(shape).to_vec();
        let blocks = blockshape.map_or_else(|| chunks.clone(), <[usize]>::to_vec);
        return Ok((chunks, blocks));
    }
    Ok(match (chunkshape, blockshape) {
        (Some(c), Some(b)) => (c.to_vec(), b.to_vec()),
        (Some(c), None) => (c.to_vec(), default_blockshape(c, typesize, topology)),
        (None, b) => {
            let b = b.map_or_else(
                || default_blockshape(shape, typesize, topology),
                <[usize]>::to_vec,
            );
            (default_chunkshape(shape, &b, typesize, topology), b)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The project VM: L1d 48 KiB, L2 2 MiB, L3 480 MiB → blocks of 512 KiB, chunks of 64 MiB.
    fn vm() -> Topology {
        Topology::from_sizes(48 << 10, 2 << 20, 480 << 20)
    }

    fn default(shape: &[usize], typesize: usize) -> (Vec<usize>, Vec<usize>) {
        partitions(shape, None, None, typesize, &vm()).unwrap()
    }

    #[test]
    fn integer_roots() {
        assert_eq!(iroot(131_072, 2), 362);
        assert_eq!(iroot(125, 3), 5);
        assert_eq!(iroot(124, 3), 4);
        assert_eq!(iroot(0, 2), 0);
        assert_eq!(iroot(usize::MAX, 1), usize::MAX);
        assert_eq!(iroot(usize::MAX, 2), u32::MAX as usize);
    }

    #[test]
    fn balanced_boxes() {
        assert_eq!(balanced(131_072, &[2161, 4320]), [362, 362]);
        assert_eq!(balanced(131_072, &[20, 180, 360]), [20, 80, 81]);
        assert_eq!(balanced(100, &[3, 1000]), [3, 33]);
        assert_eq!(balanced(1000, &[10, 10]), [10, 10]);
        assert_eq!(balanced(0, &[5, 5]), [1, 1]);
        assert_eq!(balanced(7, &[]), [] as [usize; 0]);
        assert_eq!(balanced(64, &[1, 1, 100]), [1, 1, 64]);
    }

    /// The table of the module docs, Strata's column (python-blosc2's is recorded there).
    #[test]
    fn table_against_python_blosc2_shapes() {
        // (shape, typesize, chunkshape, blockshape)
        type Case = (&'static [usize], usize, &'static [usize], &'static [usize]);
        let cases: &[Case] = &[
            (&[100], 1, &[100], &[100]),
            (&[1_000_000], 8, &[1_000_000], &[62500]),
            (&[100_000_000], 1, &[67_015_808], &[523_561]),
            (&[1000, 1000], 8, &[1000, 1000], &[250, 250]),
            (&[2161, 4320], 4, &[2161, 4320], &[361, 360]),
            (&[20, 180, 360], 4, &[20, 180, 360], &[20, 60, 72]),
            (&[10, 10, 10, 10], 8, &[10, 10, 10, 10], &[10, 10, 10, 10]),
            (&[5, 7], 1, &[5, 7], &[5, 7]),
            (&[3, 4000, 4000], 2, &[3, 3146, 3432], &[3, 286, 286]),
            (&[50, 50, 50, 50], 8, &[50, 50, 50, 50], &[13, 13, 13, 13]),
            (&[7], 300, &[7], &[7]),
            (&[0, 5], 4, &[0, 5], &[0, 5]),
            (&[10000, 10000], 4, &[3938, 3938], &[358, 358]),
            (&[512, 512, 512], 1, &[370, 370, 444], &[74, 74, 74]),
        ];
        for &(shape, ts, chunks, blocks) in cases {
            let (c, b) = default(shape, ts);
            assert_eq!(
                (&c[..], &b[..]),
                (chunks, blocks),
                "shape {shape:?} typesize {ts}"
            );
            // chunks stay within 64 MiB, blocks within 512 KiB, padding included
            let ext: usize = c
                .iter()
                .zip(&b)
                .map(|(&c, &b)| c.div_ceil(b.max(1)) * b)
                .product();
            assert!(
                ext * ts <= 64 << 20,
                "{shape:?}: chunk of {} bytes",
                ext * ts
            );
            let bbytes: usize = b.iter().product::<usize>() * ts;
            assert!(
                bbytes <= 512 << 10 || ts > 512 << 10,
                "{shape:?}: block of {bbytes}"
            );
        }
    }

    #[test]
    fn given_partitions_are_kept_and_bound_the_other() {
        let t = vm();
        let (c, b) = partitions(&[1000, 1000], Some(&[100, 50]), None, 8, &t).unwrap();
        assert_eq!((c, b), (vec![100, 50], vec![100, 50]));
        let (c, b) = partitions(&[1000, 1000], None, Some(&[10, 10]), 8, &t).unwrap();
        assert_eq!((c, b), (vec![1000, 1000], vec![10, 10]));
        // a block larger than the shape gives a chunk of one block
        let (c, b) = partitions(&[5, 5], None, Some(&[8, 8]), 1, &t).unwrap();
        assert_eq!((c, b), (vec![8, 8], vec![8, 8]));
        let (c, b) = partitions(&[0, 5], Some(&[0, 3]), None, 1, &t).unwrap();
        assert_eq!((c, b), (vec![0, 3], vec![0, 3]));
        let e = partitions(&[5], Some(&[1, 1]), None, 1, &t).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Mismatch {
                    expected: 1,
                    found: 2,
                    ..
                }
            ),
            "{e}"
        );
        assert!(partitions(&[5, 5], None, Some(&[1]), 1, &t).is_err());
    }

    #[test]
    fn small_caches_give_smaller_partitions() {
        let t = Topology::from_sizes(32 << 10, 256 << 10, 8 << 20);
        // blocks of 64 KiB, chunks of 4 MiB
        let (c, b) = partitions(&[2161, 4320], None, None, 4, &t).unwrap();
        assert_eq!(b, [128, 128]);
        assert_eq!(c, [1024, 1024]);
    }
}
