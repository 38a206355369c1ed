//! SSE2 kernels: the same byte networks as the AVX2 kernels on one 128-bit lane (16 elements
//! per shuffle step). SSE2 has no byte permute, so everything is built from pack/unpack.
//!
//! Every kernel checks the slice lengths it is given and does nothing (reports no work done)
//! when they do not fit, so the only safety condition left to the caller is that the CPU has
//! SSE2.

// The loads and stores below are the unaligned kind (`loadu`/`storeu`), so casting `*u8` to a
// vector pointer is fine.
#![allow(clippy::cast_ptr_alignment)]

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

/// Elements per shuffle step.
const STEP: usize = 16;

/// One-lane version of `avx2::deinterleave`, applied `log2(K)` times.
///
/// # Safety
/// The CPU must support SSE2.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn deinterleave<const K: usize>(x: &mut [__m128i; K]) {
    #[allow(unused_unsafe)]
    // SAFETY: register-only intrinsics; SSE2 is enabled for this function.
    unsafe {
        let low = _mm_set1_epi16(0x00ff);
        let mut width = 1;
        while width < K {
            let mut y = [_mm_setzero_si128(); K];
            for j in 0..K / 2 {
                let (a, b) = (x[2 * j], x[2 * j + 1]);
                y[j] = _mm_packus_epi16(_mm_and_si128(a, low), _mm_and_si128(b, low));
                y[j + K / 2] = _mm_packus_epi16(_mm_srli_epi16::<8>(a), _mm_srli_epi16::<8>(b));
            }
            *x = y;
            width *= 2;
        }
    }
}

/// One-lane version of `avx2::interleave`, applied `log2(K)` times.
///
/// # Safety
/// The CPU must support SSE2.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn interleave<const K: usize>(x: &mut [__m128i; K]) {
    #[allow(unused_unsafe)]
    // SAFETY: register-only intrinsics; SSE2 is enabled for this function.
    unsafe {
        let mut width = 1;
        while width < K {
            let mut y = [_mm_setzero_si128(); K];
            for j in 0..K / 2 {
                let (a, b) = (x[j], x[j + K / 2]);
                y[2 * j] = _mm_unpacklo_epi8(a, b);
                y[2 * j + 1] = _mm_unpackhi_epi8(a, b);
            }
            *x = y;
            width *= 2;
        }
    }
}

/// Byte shuffle of the elements `begin .. end`, `end = begin + 16*floor((n - begin)/16)`;
/// returns `end`. See `avx2::shuffle` for `K`.
///
/// # Safety
/// The CPU must support SSE2.
#[target_feature(enable = "sse2")]
pub(super) unsafe fn shuffle<const K: usize>(
    ts: usize,
    n: usize,
    begin: usize,
    src: &[u8],
    dst: &mut [u8],
) -> usize {
    let Some(total) = n.checked_mul(ts) else {
        return begin;
    };
    if K < 2
        || !ts.is_multiple_of(K)
        || (ts != K && K != 16)
        || src.len() < total
        || dst.len() < total
    {
        return begin;
    }
    let steps = n.saturating_sub(begin) / STEP;
    if steps == 0 {
        return begin;
    }
    let rstride = if ts <= 16 { 16 } else { ts };
    let roff: [usize; K] = core::array::from_fn(|r| r * rstride);
    let poff: [usize; K] = core::array::from_fn(|j| j * n);
    for q in 0..ts / K {
        // SAFETY: a step handles elements `e .. e+16` with `e + 16 <= n`. It reads bytes
        // `e*ts + 16q + roff[r] + 0..16`, below `(e + 16)*ts <= n*ts` (ts == K:
        // `16*(K-1) + 16 = 16*ts`; ts = 16m: `16q + 15*ts + 16 <= 16*ts`), and writes bytes
        // `(qK + j)*n + e + 0..16`, below `n*ts`. Both slices hold at least `n*ts` bytes
        // (checked above). The pointers advance with `wrapping_add` and are only dereferenced
        // inside a step.
        unsafe {
            let mut s = src.as_ptr().add(begin * ts + 16 * q);
            let mut d = dst.as_mut_ptr().add(q * K * n + begin);
            for _ in 0..steps {
                let mut x = [_mm_setzero_si128(); K];
                for (v, &o) in x.iter_mut().zip(&roff) {
                    *v = _mm_loadu_si128(s.add(o).cast::<__m128i>());
                }
                deinterleave(&mut x);
                for (v, &o) in x.iter().zip(&poff) {
                    _mm_storeu_si128(d.add(o).cast::<__m128i>(), *v);
                }
                s = s.wrapping_add(16 * ts);
                d = d.wrapping_add(STEP);
            }
        }
    }
    begin + steps * STEP
}

/// Inverse of [`shuffle`] for the same element range; returns its end.
///
/// # Safety
/// The CPU must support SSE2.
#[target_feature(enable = "sse2")]
pub(super) unsafe fn unshuffle<const K: usize>(
    ts: usize,
    n: usize,
    begin: usize,
    src: &[u8],
    dst: &mut [u8],
) -> usize {
    let Some(total) = n.checked_mul(ts) else {
        return begin;
    };
    if K < 2
        || !ts.is_multiple_of(K)
        || (ts != K && K != 16)
        || src.len() < total
        || dst.len() < total
    {
        return begin;
    }
    let steps = n.saturating_sub(begin) / STEP;
    if steps == 0 {
        return begin;
    }
    let rstride = if ts <= 16 { 16 } else { ts };
    let roff: [usize; K] = core::array::from_fn(|r| r * rstride);
    let poff: [usize; K] = core::array::from_fn(|j| j * n);
    for q in 0..ts / K {
        // SAFETY: the mirror image of `shuffle`: the same byte ranges, reads and writes swapped.
        unsafe {
            let mut s = src.as_ptr().add(q * K * n + begin);
            let mut d = dst.as_mut_ptr().add(begin * ts + 16 * q);
            for _ in 0..steps {
                let mut x = [_mm_setzero_si128(); K];
                for (v, &o) in x.iter_mut().zip(&poff) {
                    *v = _mm_loadu_si128(s.add(o).cast::<__m128i>());
                }
                interleave(&mut x);
                for (v, &o) in x.iter().zip(&roff) {
                    _mm_storeu_si128(d.add(o).cast::<__m128i>(), *v);
                }
                s = s.wrapping_add(STEP);
                d = d.wrapping_add(16 * ts);
            }
        }
    }
    begin + steps * STEP
}

/// Bit transpose of one byte plane into eight rows, 16 plane bytes (2 row bytes) at a time,
/// two at once where possible. Handles the first `16*floor(plane.len()/16)` bytes and returns
/// that count.
///
/// # Safety
/// The CPU must support SSE2.
#[target_feature(enable = "sse2")]
pub(super) unsafe fn bit_rows(plane: &[u8], rows: &mut [u8], rowlen: usize, pos: usize) -> usize {
    let len = plane.len() - plane.len() % 16;
    let fits = pos.checked_add(len / 8).is_some_and(|end| end <= rowlen)
        && rowlen.checked_mul(8).is_some_and(|all| all <= rows.len());
    if !fits {
        return 0;
    }
    let (sp, dp) = (plane.as_ptr(), rows.as_mut_ptr());
    let mut c = 0;
    while c + 32 <= len {
        // SAFETY: `c + 32 <= len <= plane.len()`.
        let (mut x0, mut x1) = unsafe {
            (
                _mm_loadu_si128(sp.add(c).cast::<__m128i>()),
                _mm_loadu_si128(sp.add(c + 16).cast::<__m128i>()),
            )
        };
        for k in (0..8).rev() {
            // SAFETY: register-only intrinsics (SSE2 enabled); the 4-byte store ends at
            // `k*rowlen + pos + (c + 32)/8 <= 8*rowlen <= rows.len()`.
            unsafe {
                let m = (_mm_movemask_epi8(x0) as u32 & 0xffff)
                    | ((_mm_movemask_epi8(x1) as u32 & 0xffff) << 16);
                dp.add(k * rowlen + pos + c / 8)
                    .cast::<u32>()
                    .write_unaligned(m.to_le());
                x0 = _mm_add_epi8(x0, x0);
                x1 = _mm_add_epi8(x1, x1);
            }
        }
        c += 32;
    }
    if c < len {
        // SAFETY: `c + 16 == len <= plane.len()`.
        let mut x = unsafe { _mm_loadu_si128(sp.add(c).cast::<__m128i>()) };
        for k in (0..8).rev() {
            // SAFETY: as above, with a 2-byte store ending at `k*rowlen + pos + len/8`.
            unsafe {
                let m = (_mm_movemask_epi8(x) as u32 & 0xffff) as u16;
                dp.add(k * rowlen + pos + c / 8)
                    .cast::<u16>()
                    .write_unaligned(m.to_le());
                x = _mm_add_epi8(x, x);
            }
        }
    }
    len
}

/// In-register 8×8 bit transpose of each 64-bit lane (see `scalar::transpose8x8`).
///
/// # Safety
/// The CPU must support SSE2.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn transpose8x8(x: __m128i) -> __m128i {
    #[allow(unused_unsafe)]
    // SAFETY: register-only intrinsics; SSE2 is enabled for this function.
    unsafe {
        let m1 = _mm_set1_epi64x(0x00AA_00AA_00AA_00AA);
        let m2 = _mm_set1_epi64x(0x0000_CCCC_0000_CCCC);
        let m3 = _mm_set1_epi64x(0x0000_0000_F0F0_F0F0);
        let t = _mm_and_si128(_mm_xor_si128(_mm_srli_epi64::<7>(x), x), m1);
        let x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64::<7>(t)));
        let t = _mm_and_si128(_mm_xor_si128(_mm_srli_epi64::<14>(x), x), m2);
        let x = _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64::<14>(t)));
        let t = _mm_and_si128(_mm_xor_si128(_mm_srli_epi64::<28>(x), x), m3);
        _mm_xor_si128(x, _mm_xor_si128(t, _mm_slli_epi64::<28>(t)))
    }
}

/// Inverse of [`bit_rows`]: rebuilds 128 plane bytes at a time from 16 bytes of each of the
/// eight rows starting at `pos`. Handles the first `128*floor(plane.len()/128)` bytes and
/// returns that count.
///
/// # Safety
/// The CPU must support SSE2.
#[target_feature(enable = "sse2")]
pub(super) unsafe fn bit_unrows(rows: &[u8], rowlen: usize, pos: usize, plane: &mut [u8]) -> usize {
    let len = plane.len() - plane.len() % 128;
    let fits = pos.checked_add(len / 8).is_some_and(|end| end <= rowlen)
        && rowlen.checked_mul(8).is_some_and(|all| all <= rows.len());
    if !fits {
        return 0;
    }
    let (sp, dp) = (rows.as_ptr(), plane.as_mut_ptr());
    let mut c = 0;
    while c < len {
        let g0 = pos + c / 8;
        // SAFETY: reads end at `k*rowlen + pos + (c + 128)/8 <= 8*rowlen <= rows.len()`.
        let r = unsafe {
            let mut r = [_mm_setzero_si128(); 8];
            for (k, v) in r.iter_mut().enumerate() {
                *v = _mm_loadu_si128(sp.add(k * rowlen + g0).cast::<__m128i>());
            }
            r
        };
        // SAFETY: register-only intrinsics; SSE2 is enabled for this function.
        let u = unsafe {
            let s: [__m128i; 8] = [
                _mm_unpacklo_epi8(r[0], r[1]),
                _mm_unpackhi_epi8(r[0], r[1]),
                _mm_unpacklo_epi8(r[2], r[3]),
                _mm_unpackhi_epi8(r[2], r[3]),
                _mm_unpacklo_epi8(r[4], r[5]),
                _mm_unpackhi_epi8(r[4], r[5]),
                _mm_unpacklo_epi8(r[6], r[7]),
                _mm_unpackhi_epi8(r[6], r[7]),
            ];
            let t: [__m128i; 8] = [
                _mm_unpacklo_epi16(s[0], s[2]),
                _mm_unpackhi_epi16(s[0], s[2]),
                _mm_unpacklo_epi16(s[1], s[3]),
                _mm_unpackhi_epi16(s[1], s[3]),
                _mm_unpacklo_epi16(s[4], s[6]),
                _mm_unpackhi_epi16(s[4], s[6]),
                _mm_unpacklo_epi16(s[5], s[7]),
                _mm_unpackhi_epi16(s[5], s[7]),
            ];
            [
                transpose8x8(_mm_unpacklo_epi32(t[0], t[4])),
                transpose8x8(_mm_unpackhi_epi32(t[0], t[4])),
                transpose8x8(_mm_unpacklo_epi32(t[1], t[5])),
                transpose8x8(_mm_unpackhi_epi32(t[1], t[5])),
                transpose8x8(_mm_unpacklo_epi32(t[2], t[6])),
                transpose8x8(_mm_unpackhi_epi32(t[2], t[6])),
                transpose8x8(_mm_unpacklo_epi32(t[3], t[7])),
                transpose8x8(_mm_unpackhi_epi32(t[3], t[7])),
            ]
        };
        for (i, v) in u.iter().enumerate() {
            // SAFETY: writes end at `c + 16*7 + 16 = c + 128 <= len <= plane.len()`.
            unsafe { _mm_storeu_si128(dp.add(c + 16 * i).cast::<__m128i>(), *v) };
        }
        c += 128;
    }
    len
}

/// Copies byte 15 of `x` to all 16 bytes.
///
/// # Safety
/// The CPU must support SSE2.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn last_byte_everywhere(x: __m128i) -> __m128i {
    #[allow(unused_unsafe)]
    // SAFETY: register-only intrinsics; SSE2 is enabled for this function.
    unsafe {
        let t = _mm_unpackhi_epi8(x, x);
        _mm_shuffle_epi32::<0xFF>(_mm_shufflehi_epi16::<0xFF>(t))
    }
}

/// Running byte sum mod 256 (`dst[k] = src[0] + ... + src[k]`) of the first
/// `16*floor(len/16)` bytes, `len` the shorter length. Returns that count. The in-register
/// prefix sum does not depend on earlier registers; the only loop-carried step is one add.
///
/// # Safety
/// The CPU must support SSE2.
#[target_feature(enable = "sse2")]
pub(super) unsafe fn prefix_sum(src: &[u8], dst: &mut [u8]) -> usize {
    let len = src.len().min(dst.len()) / 16 * 16;
    // SAFETY: each step reads and writes bytes `c .. c+16` with `c + 16 <= len`, inside both
    // slices; the other intrinsics only touch registers (SSE2 enabled).
    unsafe {
        let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr());
        let mut total = _mm_setzero_si128();
        let mut c = 0;
        while c < len {
            let mut x = _mm_loadu_si128(sp.add(c).cast::<__m128i>());
            x = _mm_add_epi8(x, _mm_slli_si128::<1>(x));
            x = _mm_add_epi8(x, _mm_slli_si128::<2>(x));
            x = _mm_add_epi8(x, _mm_slli_si128::<4>(x));
            x = _mm_add_epi8(x, _mm_slli_si128::<8>(x));
            _mm_storeu_si128(dp.add(c).cast::<__m128i>(), _mm_add_epi8(x, total));
            total = _mm_add_epi8(total, last_byte_everywhere(x));
            c += 16;
        }
    }
    len
}

/// Prefix XOR with stride `W` (1, 2, 4 or 8 bytes): `dst[b] = src[b] ^ dst[b-W]`, 0 before
/// the start, for the first `16*floor(len/16)` bytes. Returns that count.
///
/// # Safety
/// The CPU must support SSE2.
#[target_feature(enable = "sse2")]
pub(super) unsafe fn prefix_xor<const W: usize>(src: &[u8], dst: &mut [u8]) -> usize {
    let len = src.len().min(dst.len()) / 16 * 16;
    if !matches!(W, 1 | 2 | 4 | 8) {
        return 0;
    }
    // SAFETY: each step reads and writes bytes `c .. c+16` with `c + 16 <= len`, inside both
    // slices; the other intrinsics only touch registers (SSE2 enabled).
    unsafe {
        let (sp, dp) = (src.as_ptr(), dst.as_mut_ptr());
        let mut carry = _mm_setzero_si128();
        let mut c = 0;
        while c < len {
            let mut x = _mm_loadu_si128(sp.add(c).cast::<__m128i>());
            if W <= 1 {
                x = _mm_xor_si128(x, _mm_slli_si128::<1>(x));
            }
            if W <= 2 {
                x = _mm_xor_si128(x, _mm_slli_si128::<2>(x));
            }
            if W <= 4 {
                x = _mm_xor_si128(x, _mm_slli_si128::<4>(x));
            }
            x = _mm_xor_si128(x, _mm_slli_si128::<8>(x));
            _mm_storeu_si128(dp.add(c).cast::<__m128i>(), _mm_xor_si128(x, carry));
            // The last W-byte word of `x`, repeated over the register.
            let last = match W {
                1 => last_byte_everywhere(x),
                2 => _mm_shuffle_epi32::<0xFF>(_mm_shufflehi_epi16::<0xFF>(x)),
                4 => _mm_shuffle_epi32::<0xFF>(x),
                _ => _mm_shuffle_epi32::<0xEE>(x),
            };
            carry = _mm_xor_si128(carry, last);
            c += 16;
        }
    }
    len
}
