//! Where a block's selected items sit in its C-order bytes (a base offset and one signed
//! step per dimension, negative where the selection runs backwards), the rows of a box in C
//! order, and the copies of one row: gathered out of a block (or out of its byte planes) into
//! the output, or scattered from the caller's data into a block.

use crate::error::Result;
use crate::ndarray::plan::BlockPlan;
use crate::ndarray::selection::DimSelection;

/// Where a block's selected items sit in its C-order buffer: returns the byte offset of the
/// item for box position 0, and sets `steps` to the signed byte step per box position along
/// each dimension (negative where the selection runs backwards, so that the box is filled in
/// output order).
pub(super) fn block_walk(
    block: &BlockPlan,
    sels: &[DimSelection],
    block_strides: &[usize],
    steps: &mut Vec<isize>,
) -> isize {
    let mut base = 0usize;
    steps.clear();
    for ((seg, sel), &bstride) in block.segments.iter().zip(sels).zip(block_strides) {
        // With one item the step is never taken (and |step| may be huge).
        let stride = if seg.count > 1 { sel.stride() } else { 0 };
        let step = (stride * bstride) as isize;
        if sel.reversed() {
            base += (seg.offset + (seg.count - 1) * stride) * bstride;
            steps.push(-step);
        } else {
            base += seg.offset * bstride;
            steps.push(step);
        }
    }
    base as isize
}

/// How many items of a block (C order) run up to the last one the selection picks in it: the
/// prefix of the block a reader must decode. `block_strides` are in bytes, items `ts` bytes.
pub(super) fn block_prefix(
    block: &BlockPlan,
    sels: &[DimSelection],
    block_strides: &[usize],
    ts: usize,
) -> usize {
    let last: usize = block
        .segments
        .iter()
        .zip(sels)
        .zip(block_strides)
        .map(|((seg, sel), &bstride)| {
            let top = seg.offset + seg.count.saturating_sub(1) * sel.stride();
            top * bstride
        })
        .sum();
    last / ts.max(1) + 1
}

/// The byte offset of box row `outer` (all dimensions but the last) given [`block_walk`].
pub(super) fn row_start(base: isize, steps: &[isize], outer: &[usize]) -> isize {
    base + outer
        .iter()
        .zip(steps)
        .map(|(&o, &s)| o as isize * s)
        .sum::<isize>()
}

/// Calls `f` with every index of `counts[..n-1]` in C order (once, with `[]`, for one
/// dimension or none).
pub(super) fn for_each_row(
    counts: &[usize],
    mut f: impl FnMut(&[usize]) -> Result<()>,
) -> Result<()> {
    let outer = counts.len().saturating_sub(1);
    if counts.contains(&0) {
        return Ok(());
    }
    let mut idx = vec![0; outer];
    loop {
        f(&idx)?;
        let mut d = outer;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < counts[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Fills `row` (whole items) from `src`, item `q` from byte `at + q * step`.
pub(super) fn gather(src: &[u8], at: isize, step: isize, row: &mut [u8], ts: usize) {
    if step == ts as isize {
        let a = at as usize;
        row.copy_from_slice(&src[a..a + row.len()]);
        return;
    }
    // Items of the common sizes are copied as fixed-size values, not by a call per item.
    match ts {
        1 => gather_items::<1>(src, at, step, row),
        2 => gather_items::<2>(src, at, step, row),
        4 => gather_items::<4>(src, at, step, row),
        8 => gather_items::<8>(src, at, step, row),
        16 => gather_items::<16>(src, at, step, row),
        _ => {
            for (q, item) in row.chunks_exact_mut(ts).enumerate() {
                let a = (at + q as isize * step) as usize;
                item.copy_from_slice(&src[a..a + ts]);
            }
        }
    }
}

/// [`gather`] from a block left in byte planes (see [`Decoder::decompress_block_planes`],
/// elements of `ts` bytes): byte `j` of the item at block byte `a` is at
/// `j * (src.len() / ts) + a / ts`.
#[inline]
pub(super) fn gather_planes(src: &[u8], at: isize, step: isize, row: &mut [u8], ts: usize) {
    // Items of the common sizes take fixed-size loops; the division by the item size is
    // done once per row, not per item.
    match ts {
        1 => gather_items::<1>(src, at, step, row),
        2 => gather_plane_items::<2>(src, at, step, row),
        4 => gather_plane_items::<4>(src, at, step, row),
        8 => gather_plane_items::<8>(src, at, step, row),
        16 => gather_plane_items::<16>(src, at, step, row),
        _ => {
            let n = src.len() / ts;
            let (i0, di) = (at / ts as isize, step / ts as isize);
            for (q, item) in row.chunks_exact_mut(ts).enumerate() {
                let i = (i0 + q as isize * di) as usize;
                for (j, b) in item.iter_mut().enumerate() {
                    *b = src[j * n + i];
                }
            }
        }
    }
}

/// [`gather_planes`] for items of `N` bytes (`at` and `step` are multiples of `N`).
#[inline(always)]
fn gather_plane_items<const N: usize>(src: &[u8], at: isize, step: isize, row: &mut [u8]) {
    let n = src.len() / N;
    let planes: [&[u8]; N] = std::array::from_fn(|j| &src[j * n..(j + 1) * n]);
    let (i0, di) = (at / N as isize, step / N as isize);
    for (q, item) in row.chunks_exact_mut(N).enumerate() {
        let i = (i0 + q as isize * di) as usize;
        let value: [u8; N] = std::array::from_fn(|j| planes[j][i]);
        item.copy_from_slice(&value);
    }
}

/// [`gather`] for items of `N` bytes.
fn gather_items<const N: usize>(src: &[u8], at: isize, step: isize, row: &mut [u8]) {
    for (q, item) in row.chunks_exact_mut(N).enumerate() {
        let a = (at + q as isize * step) as usize;
        let value: [u8; N] = src[a..a + N].try_into().unwrap_or([0; N]);
        item.copy_from_slice(&value);
    }
}

/// Spreads `row` (whole items) into `dst`, item `q` to byte `at + q * step`.
pub(super) fn scatter(row: &[u8], dst: &mut [u8], at: isize, step: isize, ts: usize) {
    if step == ts as isize {
        let a = at as usize;
        dst[a..a + row.len()].copy_from_slice(row);
    } else {
        for (q, item) in row.chunks_exact(ts).enumerate() {
            let a = (at + q as isize * step) as usize;
            dst[a..a + ts].copy_from_slice(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_in_c_order() {
        let mut seen = Vec::new();
        for_each_row(&[2, 3, 5], |o| {
            seen.push(o.to_vec());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.len(), 6);
        assert_eq!(seen[0], [0, 0]);
        assert_eq!(seen[5], [1, 2]);
        let mut n = 0;
        for_each_row(&[4], |o| {
            assert!(o.is_empty());
            n += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 1);
        for_each_row(&[2, 0, 3], |_| panic!("no rows")).unwrap();
    }

    #[test]
    fn gather_and_scatter_steps() {
        let src: Vec<u8> = (0..12).collect();
        let mut row = [0u8; 6];
        gather(&src, 10, -4, &mut row, 2);
        assert_eq!(row, [10, 11, 6, 7, 2, 3]);
        let mut dst = [0u8; 12];
        scatter(&row, &mut dst, 0, 4, 2);
        assert_eq!(dst, [10, 11, 0, 0, 6, 7, 0, 0, 2, 3, 0, 0]);
    }

    #[test]
    fn a_walk_runs_in_output_order() {
        use crate::ndarray::plan::Segment;
        use crate::ndarray::selection::Slice;
        // Items 19, 16, …, 1 of 20: in the block holding items 10..20, 19 16 13 10 come
        // first, from item 9 of the block backwards.
        let backwards = Slice::new(None, None, -3).resolve(20).unwrap();
        let block = BlockPlan {
            nblock: 1,
            segments: vec![Segment {
                chunk: 0,
                block: 1,
                offset: 0,
                count: 4,
                out: 0,
                covered: false,
                dense: false,
            }],
        };
        let mut steps = vec![1, 2, 3];
        assert_eq!(block_walk(&block, &[backwards], &[2], &mut steps), 18);
        assert_eq!(steps, [-6]);
        let forwards = Slice::new(Some(1), None, 3).resolve(20).unwrap();
        let block = BlockPlan {
            nblock: 0,
            segments: vec![Segment {
                chunk: 0,
                block: 0,
                offset: 1,
                count: 3,
                out: 0,
                covered: false,
                dense: false,
            }],
        };
        assert_eq!(block_walk(&block, &[forwards], &[2], &mut steps), 2);
        assert_eq!(steps, [6]);
        assert_eq!(row_start(5, &[10, -2], &[3]), 35);
        assert_eq!(row_start(5, &[10, -2, 1], &[1, 2]), 11);
    }

    #[test]
    fn items_of_every_size_gather_and_planes_unshuffle() {
        let src: Vec<u8> = (0..=255).collect();
        for ts in [1, 2, 3, 4, 8, 16] {
            let mut row = vec![0u8; 2 * ts];
            gather(&src, 2 * ts as isize, 3 * ts as isize, &mut row, ts);
            let want = [&src[2 * ts..3 * ts], &src[5 * ts..6 * ts]].concat();
            assert_eq!(row, want, "typesize {ts}");
        }
        // 8 items of 4 bytes in planes: byte j of item i at j * 8 + i.
        let planes: Vec<u8> = (0..4u8)
            .flat_map(|j| (0..8u8).map(move |i| 4 * i + j))
            .collect();
        let mut row = [0u8; 8];
        gather_planes(&planes, 4, 8, &mut row, 4);
        assert_eq!(row, [4, 5, 6, 7, 12, 13, 14, 15]);
    }

    #[test]
    fn plane_gathers_match_gathers_of_the_unshuffled_block() {
        let nitems = 24;
        for ts in [1, 2, 3, 4, 5, 8, 16] {
            let block: Vec<u8> = (0..nitems * ts).map(|b| (b * 7 + ts) as u8).collect();
            // Byte j of item i at j * nitems + i.
            let mut planes = vec![0u8; block.len()];
            for (i, item) in block.chunks_exact(ts).enumerate() {
                for (j, &b) in item.iter().enumerate() {
                    planes[j * nitems + i] = b;
                }
            }
            let t = ts as isize;
            for (at, step, n) in [(0, 1, 24), (3, 5, 4), (23, -2, 12), (7, 0, 3)] {
                let (mut want, mut got) = (vec![0u8; n * ts], vec![0u8; n * ts]);
                gather(&block, at * t, step * t, &mut want, ts);
                gather_planes(&planes, at * t, step * t, &mut got, ts);
                assert_eq!(got, want, "typesize {ts}, items from {at} by {step}");
            }
        }
    }
}
