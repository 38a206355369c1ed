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

use super::bits::bit_transpose;

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

bit_transpose! {
    feature: "sse2",
    vector: __m128i,
    bytes: 16,
    half: u16,
    pair: u32,
    loadu: _mm_loadu_si128,
    setzero: _mm_setzero_si128,
    and: _mm_and_si128,
    xor: _mm_xor_si128,
    add8: _mm_add_epi8,
    movemask: _mm_movemask_epi8,
    srli64: _mm_srli_epi64,
    slli64: _mm_slli_epi64,
    set1_64: _mm_set1_epi64x,
    unpack8: _mm_unpacklo_epi8 _mm_unpackhi_epi8,
    unpack16: _mm_unpacklo_epi16 _mm_unpackhi_epi16,
    unpack32: _mm_unpacklo_epi32 _mm_unpackhi_epi32,
    store_group: store_group,
}

/// Writes output register `i` of `bit_unrows`' run at `dp + c`: plane bytes `c + 16i ..`.
///
/// # Safety
/// The CPU must support SSE2; `i < 8` and the 128 bytes at `dp + c` are writable.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn store_group(dp: *mut u8, c: usize, i: usize, v: __m128i) {
    // SAFETY: the store ends at `c + 16*7 + 16 = c + 128`, writable by the caller's guarantee.
    unsafe { _mm_storeu_si128(dp.add(c + 16 * i).cast::<__m128i>(), v) };
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
