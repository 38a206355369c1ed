//! A C-order N-d buffer that several threads fill at once, each through its own box.
//!
//! The slice engine decompresses blocks in parallel and copies each block's part of the
//! selection straight into the caller's buffer. Those parts are disjoint boxes of the output
//! (every output item comes from exactly one array item, which lies in exactly one block), but
//! the borrow checker cannot see that through N-d index arithmetic. [`DisjointView`] is the one
//! place that relies on it: it holds the buffer's `&mut` borrow, and [`DisjointView::subset`]
//! is `unsafe` with the single requirement that boxes alive at the same time do not overlap.
//! Everything a box then does (rows, the whole box when contiguous) is bounds-checked and safe.
//! [`SliceOutput`] is the safe face the slice engine uses: its boxes are the blocks of a
//! [`SlicePlan`], which are disjoint by construction, and each is handed out at most once.
//!
//! Model: zarrs `zarrs_codec/src/array_bytes_fixed_disjoint_view.rs`.

use super::geometry::{c_strides, checked_prod};
use super::plan::{BlockPlan, ChunkPlan, SlicePlan};
use crate::error::{Error, Expected, Result};
use crate::format::b2nd::MAX_DIM;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

/// A mutable C-order buffer of `shape` items of `typesize` bytes, handing out non-overlapping
/// sub-boxes to several threads.
#[derive(Debug)]
pub struct DisjointView<'a> {
    ptr: *mut u8,
    shape: Vec<usize>,
    /// Byte strides of the buffer.
    strides: Vec<usize>,
    typesize: usize,
    _buf: PhantomData<&'a mut [u8]>,
}

// SAFETY: the view owns the `&'a mut [u8]` borrow, so nothing else touches the buffer while it
// lives. Bytes are plain data. Threads reach them only through boxes from `subset`, whose
// contract is that boxes alive at the same time are disjoint: no byte is ever reachable from
// two threads at once.
unsafe impl Send for DisjointView<'_> {}
// SAFETY: as for `Send`: shared use only creates boxes, which the `subset` contract keeps
// disjoint.
unsafe impl Sync for DisjointView<'_> {}

impl<'a> DisjointView<'a> {
    /// A view of the first `prod(shape) * typesize` bytes of `buf`, a C-order array of
    /// `shape` items of `typesize` bytes.
    ///
    /// # Errors
    /// [`Error::DestinationTooSmall`] if `buf` is shorter; [`Error::OutOfRange`] if
    /// `typesize` is 0 or `shape` has more than [`MAX_DIM`] dimensions; [`Error::Overflow`]
    /// if the size overflows.
    pub fn new(buf: &'a mut [u8], shape: &[usize], typesize: usize) -> Result<Self> {
        if typesize == 0 {
            return Err(Error::range("typesize", 0, Expected::AtLeast(1)));
        }
        if shape.len() > MAX_DIM {
            let most = Expected::at_most(MAX_DIM);
            return Err(Error::range("view dimensions", shape.len(), most));
        }
        let needed = checked_prod(shape)
            .and_then(|n| n.checked_mul(typesize))
            .ok_or(Error::Overflow {
                what: "the view's size in bytes",
            })?;
        if buf.len() < needed {
            return Err(Error::DestinationTooSmall {
                needed,
                available: buf.len(),
            });
        }
        let strides = c_strides(shape).iter().map(|s| s * typesize).collect();
        Ok(DisjointView {
            ptr: buf.as_mut_ptr(),
            shape: shape.to_vec(),
            strides,
            typesize,
            _buf: PhantomData,
        })
    }

    /// The box of `counts` items from `start` (item coordinates), for writing.
    ///
    /// # Safety
    /// Subsets must not overlap: while the returned box is alive, no other box of this view
    /// that shares an item with it may be alive, on this thread or any other.
    ///
    /// # Errors
    /// [`Error::Mismatch`] if `start` or `counts` has not one entry per dimension;
    /// [`Error::InvalidRange`] if the box does not lie inside the view or is empty.
    pub unsafe fn subset(&self, start: &[usize], counts: &[usize]) -> Result<BoxMut<'_>> {
        let n = self.shape.len();
        for given in [start.len(), counts.len()] {
            if given != n {
                return Err(Error::mismatch(
                    "box coordinates (one per dimension)",
                    n,
                    given,
                ));
            }
        }
        let outside = (0..n).find(|&d| {
            counts[d] == 0
                || start[d]
                    .checked_add(counts[d])
                    .is_none_or(|e| e > self.shape[d])
        });
        if let Some(d) = outside {
            let items = Error::InvalidRange {
                what: "box items (a non-empty box)",
                start: start[d] as u64,
                end: start[d].saturating_add(counts[d]) as u64,
                len: self.shape[d] as u64,
            };
            return Err(Error::at("dimension", d, items));
        }
        let origin = start.iter().zip(&self.strides).map(|(s, t)| s * t).sum();
        let row_len = counts.last().map_or(1, |&c| c) * self.typesize;
        let mut box_counts = [0; MAX_DIM];
        box_counts[..n].copy_from_slice(counts);
        Ok(BoxMut {
            view: self,
            origin,
            counts: box_counts,
            ndim: n,
            row_len,
        })
    }
}

/// Write access to one box of a [`DisjointView`], on one thread.
#[derive(Debug)]
pub struct BoxMut<'v> {
    view: &'v DisjointView<'v>,
    /// Byte offset of the box's first item in the buffer.
    origin: usize,
    /// The extent along each of the view's `ndim` dimensions (at most [`MAX_DIM`], checked
    /// by [`DisjointView::new`]), kept inline: a read makes a box per task.
    counts: [usize; MAX_DIM],
    ndim: usize,
    /// Bytes of one innermost run of the box.
    row_len: usize,
}

impl BoxMut<'_> {
    /// The box's extent, in items.
    #[must_use]
    pub fn counts(&self) -> &[usize] {
        &self.counts[..self.ndim]
    }

    #[cfg(test)]
    /// The innermost run of the box at `outer` (box coordinates of every dimension but the
    /// last): `counts[last] * typesize` bytes. For a 0-d view, the one item.
    ///
    /// # Errors
    /// [`Error::Mismatch`] if `outer` has not one entry per dimension but the last;
    /// [`Error::InvalidIndex`] if it lies outside the box.
    pub fn row_mut(&mut self, outer: &[usize]) -> Result<&mut [u8]> {
        let n = self.ndim;
        let inner = n.saturating_sub(1);
        if outer.len() != inner {
            let what = "row coordinates (one per dimension but the last)";
            return Err(Error::mismatch(what, inner, outer.len()));
        }
        if let Some((&o, &c)) = outer.iter().zip(&self.counts).find(|(o, c)| o >= c) {
            return Err(Error::index("row coordinate in the box", o, c));
        }
        let at = self.origin
            + outer
                .iter()
                .zip(&self.view.strides)
                .map(|(o, s)| o * s)
                .sum::<usize>();
        // SAFETY: the box lies inside the view (checked by `subset`) and `outer` inside the
        // box, so `at..at + row_len` lies inside the buffer borrowed for 'a. The row belongs to
        // this box, which no other live box overlaps (`subset`'s contract), and `&mut self`
        // keeps a single row of this box alive at a time: the bytes are not aliased.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.view.ptr.add(at), self.row_len) })
    }

    /// Calls `f(offset, row)` for every innermost run of the box (see [`BoxMut::row_mut`]) in
    /// C order, with a running companion offset: `base` for the first row, moving by
    /// `steps[d]` per box position along each dimension `d` but the last (e.g. where the row's
    /// items come from in a source block). Rows and offsets are stepped, not recomputed.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if `steps` has fewer entries than the box has dimensions but
    /// one.
    pub fn for_each_row(
        &mut self,
        base: isize,
        steps: &[isize],
        mut f: impl FnMut(isize, &mut [u8]),
    ) -> Result<()> {
        let outer = self.ndim.saturating_sub(1);
        if steps.len() < outer {
            return Err(Error::range(
                "steps (one per dimension of the box but the last)",
                steps.len(),
                Expected::at_least(outer),
            ));
        }
        let strides = &self.view.strides;
        let mut idx = [0usize; MAX_DIM];
        let (mut at, mut off) = (self.origin, base);
        loop {
            // SAFETY: `idx` stays inside the box (each entry below its count), so, as in
            // `row_mut`, `at` is the offset of the box row at `idx` and `at..at + row_len` lies
            // inside the buffer, in this box only; one row slice is alive at a time.
            f(off, unsafe {
                std::slice::from_raw_parts_mut(self.view.ptr.add(at), self.row_len)
            });
            let mut d = outer;
            loop {
                if d == 0 {
                    return Ok(());
                }
                d -= 1;
                idx[d] += 1;
                at += strides[d];
                off += steps[d];
                if idx[d] < self.counts[d] {
                    break;
                }
                at -= self.counts[d] * strides[d];
                off -= self.counts[d] as isize * steps[d];
                idx[d] = 0;
            }
        }
    }

    /// The whole box as one slice, when its items are contiguous in the view (after the
    /// first dimension with more than one item, every dimension spans the whole view).
    pub fn contiguous_mut(&mut self) -> Option<&mut [u8]> {
        let mut seen_long = false;
        for (&c, &s) in self.counts().iter().zip(&self.view.shape) {
            if seen_long && c != s {
                return None;
            }
            seen_long |= c > 1;
        }
        let len = self.counts().iter().product::<usize>() * self.view.typesize;
        // SAFETY: the items are contiguous (checked above), so the box is the byte range
        // `origin..origin + len`, inside the buffer (`subset` checked the box). Only this box
        // reaches those bytes (`subset`'s contract), and `&mut self` keeps this slice unique
        // among this box's accessors.
        Some(unsafe { std::slice::from_raw_parts_mut(self.view.ptr.add(self.origin), len) })
    }
}

/// The destination of a slice read: a [`DisjointView`] of the plan's output (trailing
/// dimensions of one item left out) whose boxes are groups of the plan's touched blocks,
/// numbered as tasks, each handed out at most once.
///
/// A group is up to `group` blocks of one touched chunk that differ only along the view's
/// last dimension (consecutive in the chunk's block order): their boxes are adjacent along
/// that dimension, so their union is a box, and a task that writes a group writes each output
/// row in one pass (short rows from several blocks land together). With `group` 1 every block
/// is its own task.
#[derive(Debug)]
pub struct SliceOutput<'a, 'p> {
    view: DisjointView<'a>,
    plan: &'p SlicePlan,
    /// Most blocks per group.
    group: usize,
    /// First task of each touched chunk, and the total at the end.
    first: Vec<usize>,
    /// One bit per task: handed out.
    claimed: Vec<AtomicU64>,
}

impl<'a, 'p> SliceOutput<'a, 'p> {
    /// The output of `plan` in `buf`, items of `typesize` bytes, in groups of up to `group`
    /// blocks (at least 1).
    ///
    /// # Errors
    /// As [`DisjointView::new`] for the plan's output shape; [`Error::MemoryAlloc`] if the
    /// task table cannot be reserved.
    pub fn new(
        buf: &'a mut [u8],
        plan: &'p SlicePlan,
        typesize: usize,
        group: usize,
    ) -> Result<Self> {
        // Trailing dimensions of one item add nothing to the layout: without them, the rows
        // of a box run along the last dimension with more than one item (a hyperplane of the
        // last axis gets rows of many items, not of one).
        let keep = plan.row_dims();
        let view = DisjointView::new(buf, &plan.inner_out()[..keep], typesize)?;
        let group = group.max(1);
        let n = plan.nchunks();
        let mut first = crate::alloc::with_capacity(n + 1)?;
        let mut total = 0usize;
        for t in 0..n {
            first.push(total);
            let chunk = plan.chunk(t);
            let along = chunk.block_counts()[keep - 1];
            let ngroups = chunk.nblocks() / along * along.div_ceil(group);
            total = total.checked_add(ngroups).ok_or(Error::Overflow {
                what: "the number of block groups",
            })?;
        }
        first.push(total);
        let words = total.div_ceil(64);
        let mut claimed = crate::alloc::with_capacity(words)?;
        claimed.resize_with(words, || AtomicU64::new(0));
        Ok(SliceOutput {
            view,
            plan,
            group,
            first,
            claimed,
        })
    }

    /// The first task of touched chunk `t`; `first_task(plan.nchunks())` is the task count.
    #[must_use]
    pub fn first_task(&self, t: usize) -> usize {
        self.first[t.min(self.first.len() - 1)]
    }

    /// The touched chunk (plan order) task `i` belongs to.
    ///
    /// # Errors
    /// [`Error::InvalidIndex`] if there is no task `i`.
    pub fn task_chunk(&self, i: usize) -> Result<usize> {
        let ntasks = self.first[self.first.len() - 1];
        if i >= ntasks {
            return Err(Error::index("task", i, ntasks));
        }
        // The chunk whose task range holds i: the last one starting at or before it.
        Ok(self.first.partition_point(|&f| f <= i) - 1)
    }

    /// Task `i` of touched chunk `chunk` (the plan's [`SliceOutput::task_chunk`]): its blocks (in the chunk's block order, planned into
    /// `plans`, whose buffers are reused from task to task), and the box they fill in the
    /// output, for writing. Each block's part of the box is its own box
    /// ([`BlockPlan::segments`]); along the view's last dimension the parts follow each
    /// other.
    ///
    /// # Errors
    /// [`Error::InvalidIndex`] if there is no task `i` or it was handed out before;
    /// [`Error::Internal`] if `chunk` is not its touched chunk.
    pub fn task<'b>(
        &self,
        i: usize,
        chunk: &ChunkPlan<'_>,
        plans: &'b mut Vec<BlockPlan>,
    ) -> Result<Task<'_, 'b>> {
        let t = self.task_chunk(i)?;
        if !chunk.is(self.plan, t) {
            return Err(Error::Internal {
                what: "a task's blocks planned from another chunk",
            });
        }
        let ntasks = self.first[self.first.len() - 1];
        let bit = 1u64 << (i % 64);
        if self.claimed[i / 64].fetch_or(bit, Ordering::Relaxed) & bit != 0 {
            return Err(Error::index("task (handed out before)", i, ntasks));
        }
        let keep = self.view.shape.len();
        let along = chunk.block_counts()[keep - 1];
        let parts = along.div_ceil(self.group);
        let j = i - self.first[t];
        let (row, part) = (j / parts, j % parts);
        let k0 = row * along + part * self.group;
        let k1 = (k0 + self.group).min((row + 1) * along);
        if plans.len() < k1 - k0 {
            plans.resize_with(k1 - k0, BlockPlan::default);
        }
        let blocks = &mut plans[..k1 - k0];
        for (b, k) in blocks.iter_mut().zip(k0..k1) {
            chunk.block_into(k, b);
        }
        let (mut start, mut counts) = ([0; MAX_DIM], [0; MAX_DIM]);
        for (d, s) in blocks[0].segments[..keep].iter().enumerate() {
            (start[d], counts[d]) = (s.out, s.count);
        }
        let last = keep - 1;
        start[last] = blocks
            .iter()
            .map(|b| b.segments[last].out)
            .min()
            .unwrap_or(start[last]);
        counts[last] = blocks.iter().map(|b| b.segments[last].count).sum();
        // SAFETY: the box is the union of its blocks' parts of the plan's output: the blocks
        // share their segments along every dimension but the last, and along the last their
        // segments are consecutive in one chunk, covering adjacent output ranges, so the union
        // is this box. Along each dimension the plan's segments cover disjoint output ranges
        // (each selected index falls in one block), so the boxes of distinct blocks share no
        // item, and tasks are disjoint sets of blocks. The view's shape is the plan's output
        // shape (less trailing dimensions of one item, where every box has one item), and
        // each task is handed out once (the claim bit above), so no two live boxes from this
        // output overlap.
        let bx = unsafe { self.view.subset(&start[..keep], &counts[..keep]) }?;
        Ok(Task {
            first_block: k0,
            blocks,
            bx,
        })
    }
}

/// One task of a [`SliceOutput`] (see [`SliceOutput::task`]).
#[derive(Debug)]
pub struct Task<'v, 'b> {
    /// The number of its first block in the chunk's block order ([`ChunkPlan::block`]).
    pub first_block: usize,
    /// Its blocks.
    pub blocks: &'b [BlockPlan],
    /// The box they fill.
    pub bx: BoxMut<'v>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disjoint_boxes_are_written_from_two_threads() {
        let mut out = vec![0u8; 4 * 6];
        let view = DisjointView::new(&mut out, &[4, 6], 1).unwrap();
        std::thread::scope(|s| {
            for half in 0..2 {
                let view = &view;
                s.spawn(move || {
                    // SAFETY: the two boxes (rows 0..2 and rows 2..4) do not overlap.
                    let mut b = unsafe { view.subset(&[2 * half, 0], &[2, 6]) }.unwrap();
                    for r in 0..2 {
                        b.row_mut(&[r]).unwrap().fill(half as u8 + 1);
                    }
                });
            }
        });
        assert_eq!(out[..12], [1; 12]);
        assert_eq!(out[12..], [2; 12]);
    }

    #[test]
    fn rows_land_where_c_order_says() {
        let mut buf = vec![0u8; 3 * 4 * 5 * 2];
        let view = DisjointView::new(&mut buf, &[3, 4, 5], 2).unwrap();
        // SAFETY: the only box.
        let mut b = unsafe { view.subset(&[1, 2, 1], &[2, 2, 3]) }.unwrap();
        assert_eq!(b.counts(), [2, 2, 3]);
        for i in 0..2 {
            for j in 0..2 {
                let row = b.row_mut(&[i, j]).unwrap();
                assert_eq!(row.len(), 6);
                row.fill(1 + (i * 2 + j) as u8);
            }
        }
        let e = b.row_mut(&[2, 0]).unwrap_err();
        assert_eq!(e, Error::index("row coordinate in the box", 2, 2));
        let e = b.row_mut(&[0]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Mismatch {
                    expected: 2,
                    found: 1,
                    ..
                }
            ),
            "{e}"
        );
        assert!(b.contiguous_mut().is_none());
        let at = |i: usize, j: usize, k: usize| buf[((i * 4 + j) * 5 + k) * 2];
        assert_eq!(at(1, 2, 1), 1);
        assert_eq!(at(1, 3, 3), 2);
        assert_eq!(at(2, 2, 2), 3);
        assert_eq!(at(2, 3, 1), 4);
        assert_eq!(at(2, 3, 4), 0);
        assert_eq!(at(0, 2, 1), 0);
        assert_eq!(buf.iter().filter(|&&b| b != 0).count(), 24);
    }

    #[test]
    fn contiguous_boxes() {
        let mut buf = vec![0u8; 24];
        let view = DisjointView::new(&mut buf, &[4, 6], 1).unwrap();
        // SAFETY: boxes are used one at a time.
        let mut b = unsafe { view.subset(&[1, 0], &[2, 6]) }.unwrap();
        b.contiguous_mut().unwrap().fill(7);
        // SAFETY: the previous box is no longer used.
        let mut b = unsafe { view.subset(&[3, 2], &[1, 3]) }.unwrap();
        b.contiguous_mut().unwrap().fill(9);
        assert_eq!(buf[6..18], [7; 12]);
        assert_eq!(buf[20..23], [9; 3]);
        assert_eq!(buf.iter().filter(|&&b| b != 0).count(), 15);
    }

    #[test]
    fn bad_boxes_are_errors() {
        let mut buf = vec![0u8; 24];
        let e = DisjointView::new(&mut buf, &[5, 5], 1).err().unwrap();
        assert!(
            matches!(
                e,
                Error::DestinationTooSmall {
                    needed: 25,
                    available: 24
                }
            ),
            "{e}"
        );
        let e = DisjointView::new(&mut buf, &[4, 6], 0).err().unwrap();
        assert!(
            matches!(
                e,
                Error::OutOfRange {
                    what: "typesize",
                    ..
                }
            ),
            "{e}"
        );
        let view = DisjointView::new(&mut buf, &[4, 6], 1).unwrap();
        // SAFETY: none of these boxes is created.
        unsafe {
            assert!(view.subset(&[3, 0], &[2, 6]).is_err());
            assert!(view.subset(&[0, 0], &[0, 6]).is_err());
            assert!(view.subset(&[0], &[1]).is_err());
            assert!(view.subset(&[usize::MAX, 0], &[1, 1]).is_err());
        }
    }

    #[test]
    fn zero_d_view_is_one_item() {
        let mut buf = vec![0u8; 8];
        let view = DisjointView::new(&mut buf, &[], 8).unwrap();
        // SAFETY: the only box.
        let mut b = unsafe { view.subset(&[], &[]) }.unwrap();
        b.row_mut(&[]).unwrap().fill(3);
        assert_eq!(buf, [3; 8]);
    }

    #[test]
    fn slice_output_hands_each_block_out_once() {
        use crate::format::b2nd::B2ndMeta;
        use crate::ndarray::{Geometry, Selection, Slice};
        let meta = B2ndMeta::new(vec![5, 7], vec![4, 4], vec![2, 3], "|u1").unwrap();
        let g = Geometry::new(&meta, 1).unwrap();
        let sel = Selection::new(g.shape(), &[Slice::FULL, Slice::FULL.step_by(-2)]).unwrap();
        let plan = SlicePlan::new(&g, &sel).unwrap();
        let mut buf = vec![0u8; 5 * 4];
        let out = SliceOutput::new(&mut buf, &plan, 1, 1).unwrap();
        let ntasks = out.first_task(plan.nchunks());
        let mut items = 0;
        let mut plans = Vec::new();
        for i in 0..ntasks {
            let chunk = plan.chunk(out.task_chunk(i).unwrap());
            let Task { blocks, mut bx, .. } = out.task(i, &chunk, &mut plans).unwrap();
            assert_eq!(blocks.len(), 1);
            items += blocks[0]
                .segments
                .iter()
                .map(|s| s.count)
                .product::<usize>();
            for r in 0..bx.counts()[0] {
                for b in bx.row_mut(&[r]).unwrap() {
                    *b += 1;
                }
            }
        }
        assert_eq!(items, 20);
        let c0 = plan.chunk(0);
        assert_eq!(out.task(0, &c0, &mut plans).unwrap_err().code(), -33);
        assert_eq!(out.task(ntasks, &c0, &mut plans).unwrap_err().code(), -33);
        // blocks planned from another chunk than the task's are refused
        let other = (0..ntasks)
            .find(|&i| out.task_chunk(i).unwrap() != 0)
            .unwrap();
        let e = out.task(other, &c0, &mut plans).unwrap_err();
        assert!(matches!(e, Error::Internal { .. }), "{e}");
        drop(out);
        // every output item written exactly once
        assert_eq!(buf, [1; 20]);
    }

    #[test]
    fn grouped_tasks_cover_the_output_once() {
        use crate::format::b2nd::B2ndMeta;
        use crate::ndarray::{Geometry, Selection, Slice};
        // 9 x 20 in chunks of 9 x 10, blocks of 3 x 2: a chunk holds 5 blocks along the last
        // dimension, cut into groups of 2, 2 and 1; a reversed step too.
        let meta = B2ndMeta::new(vec![9, 20], vec![9, 10], vec![3, 2], "|u1").unwrap();
        let g = Geometry::new(&meta, 1).unwrap();
        for last in [Slice::FULL, Slice::FULL.step_by(-3)] {
            let sel = Selection::new(g.shape(), &[Slice::range(1, 8), last]).unwrap();
            let plan = SlicePlan::new(&g, &sel).unwrap();
            let cols = sel.shape()[1];
            let mut buf = vec![0u8; 7 * cols];
            let out = SliceOutput::new(&mut buf, &plan, 1, 2).unwrap();
            let ntasks = out.first_task(plan.nchunks());
            let mut nblocks = 0;
            let mut plans = Vec::new();
            for i in 0..ntasks {
                let c = plan.chunk(out.task_chunk(i).unwrap());
                let Task {
                    first_block,
                    blocks,
                    mut bx,
                } = out.task(i, &c, &mut plans).unwrap();
                assert!(!blocks.is_empty() && blocks.len() <= 2);
                for (k, b) in blocks.iter().enumerate() {
                    assert_eq!(b, &c.block(first_block + k));
                }
                nblocks += blocks.len();
                let width: usize = blocks.iter().map(|b| b.segments[1].count).sum();
                assert_eq!(bx.counts()[1], width);
                bx.for_each_row(0, &[0], |_, row| {
                    for b in row {
                        *b += 1;
                    }
                })
                .unwrap();
            }
            let per_chunk: usize = plan.chunks().map(|c| c.nblocks()).sum();
            assert_eq!(nblocks, per_chunk);
            let c0 = plan.chunk(0);
            assert_eq!(out.task(ntasks, &c0, &mut plans).unwrap_err().code(), -33);
            drop(out);
            assert_eq!(buf, vec![1; 7 * cols], "{last:?}");
        }
    }
}
