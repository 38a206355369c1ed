//! Portable scalar kernels: the reference every SIMD kernel is tested against, and the
//! fallback on CPUs without SSE2/AVX2 (and for the element remainders of the SIMD loops).
//!
//! All functions here are safe. They check their arguments up front and do nothing when the
//! slices are too short, so their indexing cannot fail.

use core::ops::Range;

/// Byte shuffle of elements `range` of an `n`-element run: `dst[j*n + i] = src[i*ts + j]`.
///
/// `src` and `dst` hold at least `n*ts` bytes and `range` lies within `0..n` (otherwise
/// nothing is done). Works on groups of eight elements (one `u64` per byte plane), with the
/// loops unrolled for element sizes up to 16.
pub(super) fn shuffle(ts: usize, n: usize, range: Range<usize>, src: &[u8], dst: &mut [u8]) {
    if !fits(ts, n, &range, src, dst) {
        return;
    }
    let (start, end) = (range.start, range.start + (range.end - range.start) / 8 * 8);
    match ts {
        1 => dst[start..end].copy_from_slice(&src[start..end]),
        2 => shuffle8::<2>(n, start, end, src, dst),
        3 => shuffle8::<3>(n, start, end, src, dst),
        4 => shuffle8::<4>(n, start, end, src, dst),
        5 => shuffle8::<5>(n, start, end, src, dst),
        6 => shuffle8::<6>(n, start, end, src, dst),
        7 => shuffle8::<7>(n, start, end, src, dst),
        8 => shuffle8::<8>(n, start, end, src, dst),
        9 => shuffle8::<9>(n, start, end, src, dst),
        10 => shuffle8::<10>(n, start, end, src, dst),
        11 => shuffle8::<11>(n, start, end, src, dst),
        12 => shuffle8::<12>(n, start, end, src, dst),
        13 => shuffle8::<13>(n, start, end, src, dst),
        14 => shuffle8::<14>(n, start, end, src, dst),
        15 => shuffle8::<15>(n, start, end, src, dst),
        16 => shuffle8::<16>(n, start, end, src, dst),
        _ => shuffle8_any(ts, n, start, end, src, dst),
    }
    for i in end..range.end {
        for j in 0..ts {
            dst[j * n + i] = src[i * ts + j];
        }
    }
}

/// Inverse of [`shuffle`] for elements `range`: `dst[i*ts + j] = src[j*n + i]`.
pub(super) fn unshuffle(ts: usize, n: usize, range: Range<usize>, src: &[u8], dst: &mut [u8]) {
    if !fits(ts, n, &range, src, dst) {
        return;
    }
    let (start, end) = (range.start, range.start + (range.end - range.start) / 8 * 8);
    match ts {
        1 => dst[start..end].copy_from_slice(&src[start..end]),
        2 => unshuffle8::<2>(n, start, end, src, dst),
        3 => unshuffle8::<3>(n, start, end, src, dst),
        4 => unshuffle8::<4>(n, start, end, src, dst),
        5 => unshuffle8::<5>(n, start, end, src, dst),
        6 => unshuffle8::<6>(n, start, end, src, dst),
        7 => unshuffle8::<7>(n, start, end, src, dst),
        8 => unshuffle8::<8>(n, start, end, src, dst),
        9 => unshuffle8::<9>(n, start, end, src, dst),
        10 => unshuffle8::<10>(n, start, end, src, dst),
        11 => unshuffle8::<11>(n, start, end, src, dst),
        12 => unshuffle8::<12>(n, start, end, src, dst),
        13 => unshuffle8::<13>(n, start, end, src, dst),
        14 => unshuffle8::<14>(n, start, end, src, dst),
        15 => unshuffle8::<15>(n, start, end, src, dst),
        16 => unshuffle8::<16>(n, start, end, src, dst),
        _ => unshuffle8_any(ts, n, start, end, src, dst),
    }
    for i in end..range.end {
        for j in 0..ts {
            dst[i * ts + j] = src[j * n + i];
        }
    }
}

/// Whether the arguments of [`shuffle`]/[`unshuffle`] are consistent (so indexing cannot fail).
fn fits(ts: usize, n: usize, range: &Range<usize>, src: &[u8], dst: &[u8]) -> bool {
    let total = n.checked_mul(ts);
    ts > 0
        && range.start < range.end
        && range.end <= n
        && total.is_some_and(|t| t <= src.len() && t <= dst.len())
}

/// Shuffles elements `start..end` (a multiple of 8 apart), eight at a time.
fn shuffle8<const TS: usize>(n: usize, start: usize, end: usize, src: &[u8], dst: &mut [u8]) {
    for (g, group) in src[start * TS..end * TS].chunks_exact(8 * TS).enumerate() {
        let i = start + 8 * g;
        let mut w = [0u64; TS];
        for m in 0..8 {
            for (j, wj) in w.iter_mut().enumerate() {
                *wj |= u64::from(group[m * TS + j]) << (8 * m);
            }
        }
        for (j, wj) in w.iter().enumerate() {
            dst[j * n + i..j * n + i + 8].copy_from_slice(&wj.to_le_bytes());
        }
    }
}

/// [`shuffle8`] for any element size up to 256 (larger ones go byte by byte).
fn shuffle8_any(ts: usize, n: usize, start: usize, end: usize, src: &[u8], dst: &mut [u8]) {
    let mut words = [0u64; 256];
    let Some(w) = words.get_mut(..ts) else {
        for i in start..end {
            for j in 0..ts {
                dst[j * n + i] = src[i * ts + j];
            }
        }
        return;
    };
    for (g, group) in src[start * ts..end * ts].chunks_exact(8 * ts).enumerate() {
        let i = start + 8 * g;
        w.fill(0);
        for (m, element) in group.chunks_exact(ts).enumerate() {
            for (wj, &b) in w.iter_mut().zip(element) {
                *wj |= u64::from(b) << (8 * m);
            }
        }
        for (j, wj) in w.iter().enumerate() {
            dst[j * n + i..j * n + i + 8].copy_from_slice(&wj.to_le_bytes());
        }
    }
}

/// Unshuffles elements `start..end` (a multiple of 8 apart), eight at a time.
fn unshuffle8<const TS: usize>(n: usize, start: usize, end: usize, src: &[u8], dst: &mut [u8]) {
    for (g, group) in dst[start * TS..end * TS]
        .chunks_exact_mut(8 * TS)
        .enumerate()
    {
        let i = start + 8 * g;
        let mut w = [0u64; TS];
        for (j, wj) in w.iter_mut().enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(&src[j * n + i..j * n + i + 8]);
            *wj = u64::from_le_bytes(b);
        }
        for (m, element) in group.chunks_exact_mut(TS).enumerate() {
            for (d, wj) in element.iter_mut().zip(&w) {
                *d = (wj >> (8 * m)) as u8;
            }
        }
    }
}

/// [`unshuffle8`] for any element size up to 256 (larger ones go byte by byte).
fn unshuffle8_any(ts: usize, n: usize, start: usize, end: usize, src: &[u8], dst: &mut [u8]) {
    let mut words = [0u64; 256];
    let Some(w) = words.get_mut(..ts) else {
        for i in start..end {
            for j in 0..ts {
                dst[i * ts + j] = src[j * n + i];
            }
        }
        return;
    };
    for (g, group) in dst[start * ts..end * ts]
        .chunks_exact_mut(8 * ts)
        .enumerate()
    {
        let i = start + 8 * g;
        for (j, wj) in w.iter_mut().enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(&src[j * n + i..j * n + i + 8]);
            *wj = u64::from_le_bytes(b);
        }
        for (m, element) in group.chunks_exact_mut(ts).enumerate() {
            for (d, wj) in element.iter_mut().zip(w.iter()) {
                *d = (wj >> (8 * m)) as u8;
            }
        }
    }
}

/// Transposes the 8×8 bit matrix held in `x`, bit `8*r + c` ↔ bit `8*c + r`.
///
/// With byte `m` of `x` (little-endian) = byte `m` of eight consecutive elements, byte `k` of the
/// result packs bit `k` of those elements, element `m` at bit `m`. The map is its own inverse.
#[inline]
pub(super) fn transpose8x8(mut x: u64) -> u64 {
    let t = ((x >> 7) ^ x) & 0x00AA_00AA_00AA_00AA;
    x ^= t ^ (t << 7);
    let t = ((x >> 14) ^ x) & 0x0000_CCCC_0000_CCCC;
    x ^= t ^ (t << 14);
    let t = ((x >> 28) ^ x) & 0x0000_0000_F0F0_F0F0;
    x ^ t ^ (t << 28)
}

/// Bit transpose of one byte plane into eight bit rows.
///
/// `plane[start..]` (a multiple of 8 bytes) is read in groups of eight; for group `g`, byte
/// `k` of the transposed group goes to `rows[k*rowlen + pos + g]`.
pub(super) fn bit_rows(plane: &[u8], start: usize, rows: &mut [u8], rowlen: usize, pos: usize) {
    let first = start / 8;
    for (g, group) in plane
        .get(start..)
        .unwrap_or(&[])
        .chunks_exact(8)
        .enumerate()
    {
        let mut b = [0u8; 8];
        b.copy_from_slice(group);
        let y = transpose8x8(u64::from_le_bytes(b)).to_le_bytes();
        for (k, v) in y.iter().enumerate() {
            if let Some(d) = rows.get_mut(k * rowlen + pos + first + g) {
                *d = *v;
            }
        }
    }
}

/// Inverse of [`bit_rows`]: rebuilds `plane[start..]` (a multiple of 8 bytes) from the eight
/// bit rows `rows[k*rowlen + pos + g]`.
pub(super) fn bit_unrows(rows: &[u8], rowlen: usize, pos: usize, plane: &mut [u8], start: usize) {
    let first = start / 8;
    for (g, group) in plane
        .get_mut(start..)
        .unwrap_or(&mut [])
        .chunks_exact_mut(8)
        .enumerate()
    {
        let mut b = [0u8; 8];
        for (k, v) in b.iter_mut().enumerate() {
            *v = rows.get(k * rowlen + pos + first + g).copied().unwrap_or(0);
        }
        group.copy_from_slice(&transpose8x8(u64::from_le_bytes(b)).to_le_bytes());
    }
}

/// Repeats the low byte of `b` over all eight bytes.
const BYTES: u64 = 0x0101_0101_0101_0101;

/// Running byte sum mod 256 from `start` on: `dst[k] = src[k] + dst[k-1]` (`dst[-1] = 0`).
///
/// Eight bytes at a time: the in-word prefix sum does not depend on earlier words, so the only
/// loop-carried step is one byte-wise add of the running total.
pub(super) fn prefix_sum(src: &[u8], dst: &mut [u8], start: usize) {
    const LOW: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    // Byte-wise a + b mod 256, no carry between bytes.
    let add = |a: u64, b: u64| ((a & LOW) + (b & LOW)) ^ ((a ^ b) & !LOW);
    let len = src.len().min(dst.len());
    if start >= len {
        return;
    }
    let prev = if start > 0 { dst[start - 1] } else { 0 };
    let mut total = u64::from(prev) * BYTES;
    let (src, dst) = (&src[start..len], &mut dst[start..len]);
    let mut sc = src.chunks_exact(8);
    let mut dc = dst.chunks_exact_mut(8);
    for (si, di) in (&mut sc).zip(&mut dc) {
        let mut b = [0u8; 8];
        b.copy_from_slice(si);
        let mut x = u64::from_le_bytes(b);
        x = add(x, x << 8);
        x = add(x, x << 16);
        x = add(x, x << 32);
        di.copy_from_slice(&add(x, total).to_le_bytes());
        total = add(total, (x >> 56) * BYTES);
    }
    let mut acc = total.to_le_bytes()[0];
    for (o, &v) in dc.into_remainder().iter_mut().zip(sc.remainder()) {
        acc = acc.wrapping_add(v);
        *o = acc;
    }
}

/// Prefix XOR with stride `w` (1, 2, 4 or 8) from `start` on: `dst[b] = src[b] ^ dst[b-w]`,
/// with `dst[b-w]` taken as 0 before the start of the run. `start` must be a multiple of `w`.
///
/// Eight bytes at a time, like [`prefix_sum`]; the carried value is the last word of the
/// previous eight bytes repeated over a `u64`.
pub(super) fn prefix_xor(w: usize, src: &[u8], dst: &mut [u8], start: usize) {
    let len = src.len().min(dst.len());
    if start >= len || !matches!(w, 1 | 2 | 4 | 8) || !start.is_multiple_of(w) {
        return;
    }
    let repeat = |word: u64| match w {
        1 => word * BYTES,
        2 => word * 0x0001_0001_0001_0001,
        4 => word * 0x0000_0001_0000_0001,
        _ => word,
    };
    let mut carry = 0u64;
    if start >= w {
        let mut b = [0u8; 8];
        b[..w].copy_from_slice(&dst[start - w..start]);
        carry = repeat(u64::from_le_bytes(b));
    }
    let (src, dst) = (&src[start..len], &mut dst[start..len]);
    let mut sc = src.chunks_exact(8);
    let mut dc = dst.chunks_exact_mut(8);
    for (si, di) in (&mut sc).zip(&mut dc) {
        let mut b = [0u8; 8];
        b.copy_from_slice(si);
        let mut x = u64::from_le_bytes(b);
        let mut shift = 8 * w;
        while shift < 64 {
            x ^= x << shift;
            shift *= 2;
        }
        di.copy_from_slice(&(x ^ carry).to_le_bytes());
        carry ^= repeat(x >> (64 - 8 * w));
    }
    // Fewer than 8 bytes left (only when w < 8): finish byte by byte.
    let carry = carry.to_le_bytes();
    let (rest_src, rest) = (sc.remainder(), dc.into_remainder());
    for b in 0..rest.len() {
        let prev = if b >= w {
            rest[b - w]
        } else {
            carry[8 - w + b]
        };
        rest[b] = rest_src[b] ^ prev;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose8x8_is_bit_transpose() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..1000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let x = state;
            let y = transpose8x8(x);
            for r in 0..8 {
                for c in 0..8 {
                    assert_eq!((y >> (8 * c + r)) & 1, (x >> (8 * r + c)) & 1);
                }
            }
            assert_eq!(transpose8x8(y), x);
        }
    }

    #[test]
    fn prefix_kernels_match_serial_loops() {
        for len in 0..70usize {
            let src: Vec<u8> = (0..len).map(|i| (i * i * 13 + i * 7) as u8).collect();
            for start in [0, 8, 16] {
                let mut fast = vec![0xAAu8; len];
                let mut slow = vec![0xAAu8; len];
                let head = start.min(len);
                fast[..head].copy_from_slice(&src[..head]);
                slow[..head].copy_from_slice(&src[..head]);
                prefix_sum(&src, &mut fast, start);
                for k in start..len {
                    let prev = if k > 0 { slow[k - 1] } else { 0 };
                    slow[k] = src[k].wrapping_add(prev);
                }
                assert_eq!(fast, slow, "sum len={len} start={start}");
                for w in [1usize, 2, 4, 8] {
                    prefix_xor(w, &src, &mut fast, start);
                    for k in start..len {
                        let prev = if k >= w { slow[k - w] } else { 0 };
                        slow[k] = src[k] ^ prev;
                    }
                    assert_eq!(fast, slow, "xor w={w} len={len} start={start}");
                }
            }
        }
    }

    #[test]
    fn shuffle_matches_definition() {
        for ts in 1..=9usize {
            for n in 0..40usize {
                let src: Vec<u8> = (0..n * ts).map(|v| (v * 7 + 3) as u8).collect();
                let mut dst = vec![0u8; n * ts];
                shuffle(ts, n, 0..n, &src, &mut dst);
                for i in 0..n {
                    for j in 0..ts {
                        assert_eq!(dst[j * n + i], src[i * ts + j]);
                    }
                }
                let mut back = vec![0u8; n * ts];
                unshuffle(ts, n, 0..n, &dst, &mut back);
                assert_eq!(back, src);
            }
        }
    }
}
