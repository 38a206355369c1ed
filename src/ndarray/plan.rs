//! Which chunks and blocks a selection touches, and the sub-box each block contributes.
//!
//! Dimensions are independent: along each one, the selected indices fall into runs
//! ([`Segment`]s), one per block they cross (blocks holding no selected index, as with a step
//! larger than the block, get none). A chunk is touched when every dimension has a run in it,
//! and inside it the touched blocks are the product of those runs. Each block's contribution
//! is a box: `offset + j * |step|` inside the block (C order over `blockshape`) goes to
//! output index `out + j`, or `out + count - 1 - j` for a negative step.
//!
//! The same plan serves writes: [`ChunkPlan::covered`] says when a write replaces every
//! item of a chunk (no need to decompress the old one), [`BlockPlan::covered`] the same for a
//! block.
//!
//! Format: c-blosc2 `blosc/b2nd.c` (`get_set_slice`); `docs/b2nd.md` (data layout).
#![forbid(unsafe_code)]

use super::geometry::{ravel, unravel, Geometry};
use super::selection::{DimSelection, Selection};
use crate::error::{to_i64, Error, Expected, Result};
use std::ops::Range;

/// The selected indices of one dimension that fall into one block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Segment {
    /// Chunk coordinate along this dimension.
    pub chunk: usize,
    /// Block coordinate inside the chunk along this dimension.
    pub block: usize,
    /// Index (inside the block) of the lowest selected item.
    pub offset: usize,
    /// Selected items in the block; they are `offset + j * |step|`.
    pub count: usize,
    /// The lowest output index they land at.
    pub out: usize,
    /// Whether these are all the items of the block inside the chunk and the array, with
    /// `|step|` 1.
    pub covered: bool,
    /// Whether the block lies wholly inside the chunkshape and the array (no padding).
    pub dense: bool,
}

/// Consecutive segments of one dimension in the same chunk.
#[derive(Debug, Clone)]
struct Group {
    chunk: usize,
    segments: Range<usize>,
    covered: bool,
}

#[derive(Debug, Clone)]
struct DimPlan {
    sel: DimSelection,
    segments: Vec<Segment>,
    groups: Vec<Group>,
}

/// The chunks and blocks a [`Selection`] touches in an array of a given [`Geometry`].
#[derive(Debug, Clone)]
pub struct SlicePlan {
    dims: Vec<DimPlan>,
    chunk_grid: Vec<usize>,
    block_grid: Vec<usize>,
    /// Touched chunks along each dimension (groups per dimension).
    touched: Vec<usize>,
    nchunks: usize,
    /// The result's shape over the internal dimensions (`[1]` for a 0-d array).
    inner_out: Vec<usize>,
}

impl SlicePlan {
    /// Plans `sel` over `geom`.
    ///
    /// # Errors
    /// [`Error::Mismatch`] if `sel` does not have one entry per dimension of `geom`,
    /// [`Error::OutOfRange`] if it picks an index outside it (a [`Selection`] resolved against
    /// `geom.shape()` never does).
    pub fn new(geom: &Geometry, sel: &Selection) -> Result<SlicePlan> {
        if sel.dims().len() != geom.ndim() {
            let what = "selection dimensions (those of the array)";
            return Err(Error::mismatch(what, geom.ndim(), sel.dims().len()));
        }
        let longer = sel
            .shape()
            .iter()
            .zip(geom.shape())
            .position(|(&s, &n)| s > n);
        if let Some(d) = longer {
            let (s, n) = (sel.shape()[d], geom.shape()[d]);
            let longer = Error::range("selection length", s, Expected::at_most(n));
            return Err(Error::at("dimension", d, longer));
        }
        let (shape, chunkshape, blockshape) = geom.inner();
        // A 0-d array is one item in one internal dimension.
        let one = [DimSelection {
            start: 0,
            step: 1,
            len: 1,
        }];
        let sels = if geom.ndim() == 0 {
            &one[..]
        } else {
            sel.dims()
        };
        let mut dims = Vec::with_capacity(sels.len());
        for (i, &ds) in sels.iter().enumerate() {
            if ds.len > 0 {
                let last = ds.lowest() as u128 + (ds.len as u128 - 1) * ds.stride() as u128;
                if last >= shape[i] as u128 {
                    let inside = Expected::Below(to_i64(shape[i]));
                    let last = Error::range("last selected index", to_i64(last), inside);
                    return Err(Error::at("dimension", i, last));
                }
            }
            dims.push(plan_dim(ds, shape[i], chunkshape[i], blockshape[i]));
        }
        let touched: Vec<usize> = dims.iter().map(|d| d.groups.len()).collect();
        let nchunks = if sel.is_empty() {
            0
        } else {
            touched.iter().product()
        };
        let (chunk_grid, block_grid, inner_out) = if geom.ndim() == 0 {
            (vec![1], vec![1], vec![1])
        } else {
            (
                geom.chunk_grid().to_vec(),
                geom.block_grid().to_vec(),
                sel.shape().to_vec(),
            )
        };
        Ok(SlicePlan {
            dims,
            chunk_grid,
            block_grid,
            touched,
            nchunks,
            inner_out,
        })
    }

    /// Chunks the selection touches.
    #[must_use]
    pub fn nchunks(&self) -> usize {
        self.nchunks
    }

    /// The `t`-th touched chunk (`t < nchunks()`), in C order of the chunk grid.
    #[must_use]
    pub fn chunk(&self, t: usize) -> ChunkPlan<'_> {
        let groups = unravel(t, &self.touched);
        let coords: Vec<usize> = groups
            .iter()
            .zip(&self.dims)
            .map(|(&g, d)| d.groups[g].chunk)
            .collect();
        let nchunk = ravel(&coords, &self.chunk_grid);
        let counts: Vec<usize> = groups
            .iter()
            .zip(&self.dims)
            .map(|(&g, d)| d.groups[g].segments.len())
            .collect();
        ChunkPlan {
            plan: self,
            index: t,
            nblocks: counts.iter().product(),
            groups,
            counts,
            nchunk,
        }
    }

    #[cfg(test)]
    /// Touched chunks, in C order.
    pub fn chunks(&self) -> impl Iterator<Item = ChunkPlan<'_>> {
        (0..self.nchunks).map(|t| self.chunk(t))
    }

    /// Per-dimension selections (one internal dimension for a 0-d array).
    pub(crate) fn sels(&self) -> impl Iterator<Item = &DimSelection> {
        self.dims.iter().map(|d| &d.sel)
    }

    /// The output shape over the internal dimensions (`[1]` for a 0-d array).
    pub(crate) fn inner_out(&self) -> &[usize] {
        &self.inner_out
    }

    /// The internal output dimensions up to the last with more than one item (at least
    /// one): the trailing ones have one item and add nothing to the output's layout.
    pub(crate) fn row_dims(&self) -> usize {
        self.inner_out
            .iter()
            .rposition(|&n| n != 1)
            .map_or(1, |d| d + 1)
    }

    /// Whether `block`'s bytes, decompressed, are exactly its part of the C-order output, in
    /// order: the block is dense and picked whole with step 1, and its box is contiguous in
    /// the output (after the first dimension of extent > 1, every dimension spans the whole
    /// output). It can then be decompressed straight into the output.
    #[must_use]
    pub fn contiguous(&self, block: &BlockPlan) -> bool {
        if !block.segments.iter().all(|s| s.covered && s.dense)
            || self.dims.iter().any(|d| d.sel.step != 1)
        {
            return false;
        }
        let mut seen_long = false;
        for (s, &n) in block.segments.iter().zip(&self.inner_out) {
            if seen_long && s.count != n {
                return false;
            }
            seen_long |= s.count > 1;
        }
        true
    }
}

/// One touched chunk of a [`SlicePlan`].
#[derive(Debug, Clone)]
pub struct ChunkPlan<'p> {
    plan: &'p SlicePlan,
    /// Its place among the plan's touched chunks.
    index: usize,
    groups: Vec<usize>,
    counts: Vec<usize>,
    nblocks: usize,
    nchunk: usize,
}

impl ChunkPlan<'_> {
    /// Whether this is touched chunk `t` of `plan` ([`SlicePlan::chunk`]).
    #[must_use]
    pub fn is(&self, plan: &SlicePlan, t: usize) -> bool {
        std::ptr::eq(self.plan, plan) && self.index == t
    }

    /// The chunk's number in the array.
    #[must_use]
    pub fn nchunk(&self) -> usize {
        self.nchunk
    }

    /// Blocks of this chunk the selection touches.
    #[must_use]
    pub fn nblocks(&self) -> usize {
        self.nblocks
    }

    /// Touched blocks along each (internal) dimension; [`ChunkPlan::block`] numbers them in
    /// C order over these counts.
    #[must_use]
    pub fn block_counts(&self) -> &[usize] {
        &self.counts
    }

    /// Whether the selection picks every item of this chunk that lies in the array, with
    /// `|step|` 1: a write then replaces the chunk whole.
    #[must_use]
    pub fn covered(&self) -> bool {
        self.groups
            .iter()
            .zip(&self.plan.dims)
            .all(|(&g, d)| d.groups[g].covered)
    }

    /// The `k`-th touched block (`k < nblocks()`), in C order of the chunk's block grid.
    #[must_use]
    pub fn block(&self, k: usize) -> BlockPlan {
        let mut b = BlockPlan {
            nblock: 0,
            segments: Vec::with_capacity(self.counts.len()),
        };
        self.block_into(k, &mut b);
        b
    }

    /// [`ChunkPlan::block`] into `b`, reusing its segments' buffer.
    pub fn block_into(&self, k: usize, b: &mut BlockPlan) {
        b.segments.clear();
        b.segments.resize(self.counts.len(), Segment::default());
        // Unravel `k` over the counts and ravel the blocks' coordinates over the block grid,
        // from the last dimension.
        let (mut rest, mut nblock, mut stride) = (k, 0, 1);
        for (d, dim) in self.plan.dims.iter().enumerate().rev() {
            let n = self.counts[d];
            let seg = dim.segments[dim.groups[self.groups[d]].segments.start + rest % n];
            rest /= n;
            nblock += seg.block * stride;
            stride *= self.plan.block_grid[d];
            b.segments[d] = seg;
        }
        b.nblock = nblock;
    }

    /// The number in the chunk of its `k`-th touched block (`k < nblocks()`): that of
    /// [`ChunkPlan::block`], without its segments.
    #[must_use]
    pub fn block_number(&self, k: usize) -> usize {
        let (mut rest, mut nblock, mut stride) = (k, 0, 1);
        for (d, dim) in self.plan.dims.iter().enumerate().rev() {
            let n = self.counts[d];
            let seg = &dim.segments[dim.groups[self.groups[d]].segments.start + rest % n];
            rest /= n;
            nblock += seg.block * stride;
            stride *= self.plan.block_grid[d];
        }
        nblock
    }

    /// The numbers of its touched blocks, in C order.
    pub fn block_numbers(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.nblocks).map(|k| self.block_number(k))
    }

    /// Touched blocks, in C order.
    pub fn blocks(&self) -> impl Iterator<Item = BlockPlan> + '_ {
        (0..self.nblocks).map(|k| self.block(k))
    }
}

/// One touched block: its number in the chunk and its run along each dimension.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockPlan {
    /// The block's number in its chunk.
    pub nblock: usize,
    /// The selected run along each dimension.
    pub segments: Vec<Segment>,
}

impl BlockPlan {
    #[cfg(test)]
    /// Whether the selection picks every item of the block inside the chunk and the array.
    #[must_use]
    pub fn covered(&self) -> bool {
        self.segments.iter().all(|s| s.covered)
    }
}

/// The segments of one dimension, walking the selected indices in increasing order.
fn plan_dim(sel: DimSelection, len: usize, chunkshape: usize, blockshape: usize) -> DimPlan {
    let mut segments = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    let n = sel.len;
    let stride = sel.stride();
    let mut pos = sel.lowest();
    let mut taken = 0;
    while taken < n {
        let chunk = pos / chunkshape;
        let chunk_start = chunk * chunkshape;
        let chunk_end = (chunk_start + chunkshape).min(len);
        let block = (pos - chunk_start) / blockshape;
        let block_start = chunk_start + block * blockshape;
        let block_end = (block_start + blockshape).min(chunk_end);
        let count = ((block_end - 1 - pos) / stride + 1).min(n - taken);
        let out = if sel.reversed() {
            n - taken - count
        } else {
            taken
        };
        segments.push(Segment {
            chunk,
            block,
            offset: pos - block_start,
            count,
            out,
            covered: stride == 1 && count == block_end - block_start,
            dense: block_end - block_start == blockshape,
        });
        match groups.last_mut() {
            Some(g) if g.chunk == chunk => g.segments.end += 1,
            _ => groups.push(Group {
                chunk,
                segments: segments.len() - 1..segments.len(),
                covered: false,
            }),
        }
        taken += count;
        // Past the last index this may exceed the dimension, which ends the loop anyway.
        pos = pos.saturating_add(count.saturating_mul(stride));
    }
    for g in &mut groups {
        let items: usize = segments[g.segments.clone()].iter().map(|s| s.count).sum();
        let chunk_start = g.chunk * chunkshape;
        g.covered = stride == 1 && items == chunkshape.min(len - chunk_start);
    }
    DimPlan {
        sel,
        segments,
        groups,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::b2nd::B2ndMeta;
    use crate::ndarray::Slice;

    #[test]
    fn the_plan_of_a_selection() {
        use crate::format::b2nd::B2ndMeta;
        use crate::ndarray::{Geometry, Selection, Slice};
        let g = Geometry::new(
            &B2ndMeta::new(vec![5, 7], vec![4, 4], vec![2, 3], "|u1").unwrap(),
            1,
        )
        .unwrap();
        let sel = Selection::new(g.shape(), &[Slice::range(3, 5), Slice::range(2, 5)]).unwrap();
        let plan = SlicePlan::new(&g, &sel).unwrap();
        // chunks 0, 1 (rows 0..4) and 2, 3 (row 4)
        assert_eq!(plan.nchunks(), 4);
        let chunk0 = plan.chunk(0);
        // in chunk 0, row 3 and columns 2..4: blocks (1, 0) and (1, 1)
        assert_eq!((chunk0.nchunk(), chunk0.nblocks()), (0, 2));
        let b = chunk0.block(0);
        assert_eq!(b.nblock, 2); // block (1, 0): rows 2..4, columns 0..3 of chunk 0
        assert_eq!((b.segments[0].offset, b.segments[0].count), (1, 1));
        assert_eq!((b.segments[1].offset, b.segments[1].count), (2, 1));
    }

    fn geom(shape: &[i64], chunks: &[i32], blocks: &[i32]) -> Geometry {
        let meta = B2ndMeta::new(shape.to_vec(), chunks.to_vec(), blocks.to_vec(), "|u1").unwrap();
        Geometry::new(&meta, 1).unwrap()
    }

    /// (chunk, block, offset, count, out) of each segment of a 1-d plan.
    fn runs(len: i64, c: i32, b: i32, s: Slice) -> Vec<(usize, usize, usize, usize, usize)> {
        let g = geom(&[len], &[c], &[b]);
        let sel = Selection::new(g.shape(), &[s]).unwrap();
        let plan = SlicePlan::new(&g, &sel).unwrap();
        plan.dims[0]
            .segments
            .iter()
            .map(|s| (s.chunk, s.block, s.offset, s.count, s.out))
            .collect()
    }

    #[test]
    fn one_dimension() {
        // 10 items, chunks of 4 (ext 6 with blocks of 3): blocks [0,3) [3,4) | [4,7) [7,8) | [8,10)
        assert_eq!(
            runs(10, 4, 3, Slice::FULL),
            [
                (0, 0, 0, 3, 0),
                (0, 1, 0, 1, 3),
                (1, 0, 0, 3, 4),
                (1, 1, 0, 1, 7),
                (2, 0, 0, 2, 8)
            ]
        );
        // every 4th: 0, 4, 8 — block (0,1) and (1,1) hold none
        assert_eq!(
            runs(10, 4, 3, Slice::FULL.step_by(4)),
            [(0, 0, 0, 1, 0), (1, 0, 0, 1, 1), (2, 0, 0, 1, 2)]
        );
        // reversed: 9, 6, 3, 0 → outputs 0..4 in reverse
        assert_eq!(
            runs(10, 4, 3, Slice::FULL.step_by(-3)),
            [
                (0, 0, 0, 1, 3),
                (0, 1, 0, 1, 2),
                (1, 0, 2, 1, 1),
                (2, 0, 1, 1, 0)
            ]
        );
        assert_eq!(runs(10, 4, 3, Slice::range(5, 7)), [(1, 0, 1, 2, 0)]);
        assert!(runs(10, 4, 3, Slice::range(12, 20)).is_empty());
    }

    #[test]
    fn chunk_and_block_coverage() {
        let g = geom(&[5, 7], &[4, 4], &[2, 3]);
        let full = Selection::full(g.shape());
        let plan = SlicePlan::new(&g, &full).unwrap();
        assert_eq!(plan.nchunks(), 4);
        for c in plan.chunks() {
            assert!(c.covered());
            assert!(c.blocks().all(|b| b.covered()));
        }
        // chunk 0 has 4 blocks; block 1 (columns 3..6 of the chunk) holds one valid column
        let c0 = plan.chunk(0);
        assert_eq!(c0.nblocks(), 4);
        let b1 = c0.block(1);
        assert_eq!(b1.nblock, 1);
        assert!(!b1.segments[1].dense);
        // chunk 3 (rows 4.., columns 4..7) holds one block
        let c3 = plan.chunk(3);
        assert_eq!((c3.nchunk(), c3.nblocks()), (3, 1));
        let sel = Selection::new(g.shape(), &[Slice::range(0, 3)]).unwrap();
        let plan = SlicePlan::new(&g, &sel).unwrap();
        assert_eq!(plan.nchunks(), 2);
        assert!(!plan.chunk(0).covered());
        assert!(plan.chunk(0).block(0).covered());
        assert!(!plan.chunk(0).block(2).covered());
    }

    #[test]
    fn block_numbers_are_those_of_the_block_plans() {
        let g = geom(&[9, 7, 8], &[4, 7, 6], &[3, 2, 4]);
        for slices in [
            vec![Slice::FULL],
            vec![Slice::index(5)],
            vec![Slice::FULL, Slice::index(3)],
            vec![Slice::new(None, None, -2), Slice::FULL, Slice::index(7)],
        ] {
            let sel = Selection::new(g.shape(), &slices).unwrap();
            let plan = SlicePlan::new(&g, &sel).unwrap();
            let mut reused = plan.chunk(0).block(0);
            for c in plan.chunks() {
                let numbers: Vec<usize> = c.block_numbers().collect();
                let plans: Vec<BlockPlan> = c.blocks().collect();
                assert_eq!(numbers, plans.iter().map(|b| b.nblock).collect::<Vec<_>>());
                for (k, b) in plans.iter().enumerate() {
                    c.block_into(k, &mut reused);
                    assert_eq!(&reused, b);
                }
            }
        }
        // chunk 1 of the full selection: blocks (0..2, 0..4, 0..2) of a 2 x 4 x 2 grid
        let plan = SlicePlan::new(&g, &Selection::full(g.shape())).unwrap();
        let c = plan.chunk(1);
        assert_eq!(c.block_counts(), [2, 4, 1]);
        assert_eq!(
            c.block_numbers().collect::<Vec<_>>(),
            [0, 2, 4, 6, 8, 10, 12, 14]
        );
    }

    #[test]
    fn contiguous_blocks() {
        let g = geom(&[8, 6], &[4, 6], &[2, 6]);
        let full = Selection::full(g.shape());
        let plan = SlicePlan::new(&g, &full).unwrap();
        assert!(plan
            .chunks()
            .all(|c| c.blocks().all(|b| plan.contiguous(&b))));
        let g = geom(&[8, 6], &[4, 6], &[2, 3]);
        let plan = SlicePlan::new(&g, &full).unwrap();
        assert!(!plan.contiguous(&plan.chunk(0).block(0)));
        // part of a block is never decompressed in place
        let sel = Selection::new(g.shape(), &[Slice::index(1), Slice::range(3, 6)]).unwrap();
        let plan = SlicePlan::new(&g, &sel).unwrap();
        let b = plan.chunk(0).block(0);
        assert!(!b.covered());
    }

    #[test]
    fn empty_and_zero_d() {
        let g = geom(&[0, 5], &[0, 5], &[0, 5]);
        let plan = SlicePlan::new(&g, &Selection::full(g.shape())).unwrap();
        assert_eq!(plan.nchunks(), 0);
        let g = geom(&[], &[], &[]);
        let plan = SlicePlan::new(&g, &Selection::full(&[])).unwrap();
        assert_eq!(plan.nchunks(), 1);
        let c = plan.chunk(0);
        assert_eq!((c.nchunk(), c.nblocks(), c.block(0).nblock), (0, 1, 0));
        assert!(c.covered());
    }

    #[test]
    fn mismatched_selection_is_an_error() {
        let g = geom(&[5, 7], &[4, 4], &[2, 3]);
        let sel = Selection::full(&[5]);
        assert_eq!(SlicePlan::new(&g, &sel).unwrap_err().code(), -12);
        let sel = Selection::full(&[6, 7]);
        assert_eq!(SlicePlan::new(&g, &sel).unwrap_err().code(), -12);
    }
}
