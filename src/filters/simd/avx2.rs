//! AVX2 kernels. Each 256-bit register is used as two independent 128-bit lanes: lane 0 holds
//! data of one group of 16 elements, lane 1 of the next group, so every step handles 32
//! elements and the in-lane byte networks are the same as in the SSE2 kernels.
//!
//! Every kernel checks the slice lengths it is given and does nothing (reports no work done)
//! when they do not fit, so the only safety condition left to the caller is that the CPU has
//! AVX2.

// The loads and stores below are the unaligned kind (`loadu`/`storeu`), so casting `*u8` to a
// vector pointer is fine.
#![allow(clippy::cast_ptr_alignment)]

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::bits::bit_transpose;

/// Elements per shuffle step (two lanes of 16).
const STEP: usize = 32;

/// One pass of the deinterleave network over `K` registers: register `j` gets the even bytes
/// of registers `2j, 2j+1`, register `j + K/2` their odd bytes (per 128-bit lane).
///
/// # Safety
/// The CPU must support AVX2.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn deinterleave<const K: usize>(x: &mut [__m256i; K]) {
    #[allow(unused_unsafe)]
    // SAFETY: register-only intrinsics; AVX2 is enabled for this function.
    unsafe {
        let low = _mm256_set1_epi16(0x00ff);
        let mut width = 1;
        while width < K {
            let mut y = [_mm256_setzero_si256(); K];
            for j in 0..K / 2 {
                let (a, b) = (x[2 * j], x[2 * j + 1]);
                y[j] = _mm256_packus_epi16(_mm256_and_si256(a, low), _mm256_and_si256(b, low));
                y[j + K / 2] =
                    _mm256_packus_epi16(_mm256_srli_epi16::<8>(a), _mm256_srli_epi16::<8>(b));
            }
            *x = y;
            width *= 2;
        }
    }
}

/// Inverse of [`deinterleave`]: register `2j` gets the low-half byte interleave of registers
/// `j, j + K/2`, register `2j+1` the high half (per 128-bit lane).
///
/// # Safety
/// The CPU must support AVX2.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn interleave<const K: usize>(x: &mut [__m256i; K]) {
    #[allow(unused_unsafe)]
    // SAFETY: register-only intrinsics; AVX2 is enabled for this function.
    unsafe {
        let mut width = 1;
        while width < K {
            let mut y = [_mm256_setzero_si256(); K];
            for j in 0..K / 2 {
                let (a, b) = (x[j], x[j + K / 2]);
                y[2 * j] = _mm256_unpacklo_epi8(a, b);
                y[2 * j + 1] = _mm256_unpackhi_epi8(a, b);
            }
            *x = y;
            width *= 2;
        }
    }
}

/// Byte shuffle (`dst[j*n + i] = src[i*ts + j]`) of the elements `begin .. end` of an
/// `n`-element run, where `end = begin + 32*floor((n - begin)/32)`; returns `end` (`begin`
/// when nothing was done). `K` is the element size (2, 4, 8, 16), or 16 for any `ts` multiple
/// of 16 (handled 16 bytes of each element at a time).
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
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
    // Offsets of the K input registers of a 16-element group, and of the K output planes.
    let rstride = if ts <= 16 { 16 } else { ts };
    let roff: [usize; K] = core::array::from_fn(|r| r * rstride);
    let poff: [usize; K] = core::array::from_fn(|j| j * n);
    let half = 16 * ts;
    for q in 0..ts / K {
        // SAFETY: a step handles elements `e .. e+32` with `e + 32 <= n`. It reads bytes
        // `e*ts + 16q + roff[r] + {0, half} + 0..16`, all below `(e + 32)*ts <= n*ts`: for
        // ts == K the largest is `16*(K-1) + 16*ts + 16 = 32*ts`, for ts = 16m it is
        // `16q + 15*ts + 16*ts + 16 <= 32*ts`. It writes bytes `(qK + j)*n + e + 0..32`, below
        // `(ts-1)*n + n`. Both slices hold at least `n*ts` bytes (checked above). The pointers
        // advance with `wrapping_add` and are only dereferenced inside a step.
        unsafe {
            let mut s = src.as_ptr().add(begin * ts + 16 * q);
            let mut d = dst.as_mut_ptr().add(q * K * n + begin);
            for _ in 0..steps {
                let mut x = [_mm256_setzero_si256(); K];
                for (v, &o) in x.iter_mut().zip(&roff) {
                    *v = _mm256_loadu2_m128i(
                        s.add(o + half).cast::<__m128i>(),
                        s.add(o).cast::<__m128i>(),
                    );
                }
                deinterleave(&mut x);
                for (v, &o) in x.iter().zip(&poff) {
                    _mm256_storeu_si256(d.add(o).cast::<__m256i>(), *v);
                }
                s = s.wrapping_add(2 * half);
                d = d.wrapping_add(STEP);
            }
        }
    }
    begin + steps * STEP
}

/// Inverse of [`shuffle`] (`dst[i*ts + j] = src[j*n + i]`) for the same element range;
/// returns its end.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
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
    let half = 16 * ts;
    for q in 0..ts / K {
        // SAFETY: the mirror image of `shuffle`: the same byte ranges, reads and writes swapped.
        // The paired 32-byte stores (ts == K) write `e*ts + {0, half} + 32m + 0..32` for
        // `m < K/2`, i.e. exactly the bytes `e*ts .. (e + 32)*ts` that the 16-byte stores cover.
        unsafe {
            let mut s = src.as_ptr().add(q * K * n + begin);
            let mut d = dst.as_mut_ptr().add(begin * ts + 16 * q);
            for _ in 0..steps {
                let mut x = [_mm256_setzero_si256(); K];
                for (v, &o) in x.iter_mut().zip(&poff) {
                    *v = _mm256_loadu_si256(s.add(o).cast::<__m256i>());
                }
                interleave(&mut x);
                if ts == K {
                    // Group A's output is lane 0 of x[0], x[1], ...: pair the lanes up for
                    // 32-byte stores (`roff[r] == 16r` here).
                    for m in 0..K / 2 {
                        let (a, b) = (x[2 * m], x[2 * m + 1]);
                        let lo = _mm256_permute2x128_si256::<0x20>(a, b);
                        let hi = _mm256_permute2x128_si256::<0x31>(a, b);
                        _mm256_storeu_si256(d.add(32 * m).cast::<__m256i>(), lo);
                        _mm256_storeu_si256(d.add(half + 32 * m).cast::<__m256i>(), hi);
                    }
                } else {
                    for (v, &o) in x.iter().zip(&roff) {
                        _mm256_storeu2_m128i(
                            d.add(o + half).cast::<__m128i>(),
                            d.add(o).cast::<__m128i>(),
                            *v,
                        );
                    }
                }
                s = s.wrapping_add(STEP);
                d = d.wrapping_add(2 * half);
            }
        }
    }
    begin + steps * STEP
}

bit_transpose! {
    feature: "avx2",
    vector: __m256i,
    bytes: 32,
    half: u32,
    pair: u64,
    loadu: _mm256_loadu_si256,
    setzero: _mm256_setzero_si256,
    and: _mm256_and_si256,
    xor: _mm256_xor_si256,
    add8: _mm256_add_epi8,
    movemask: _mm256_movemask_epi8,
    srli64: _mm256_srli_epi64,
    slli64: _mm256_slli_epi64,
    set1_64: _mm256_set1_epi64x,
    unpack8: _mm256_unpacklo_epi8 _mm256_unpackhi_epi8,
    unpack16: _mm256_unpacklo_epi16 _mm256_unpackhi_epi16,
    unpack32: _mm256_unpacklo_epi32 _mm256_unpackhi_epi32,
    store_group: store_group,
}

/// Writes output register `i` of `bit_unrows`' run at `dp + c`: its low lane holds plane
/// bytes `c + 16i ..`, its high lane those 128 bytes later.
///
/// # Safety
/// The CPU must support AVX2; `i < 8` and the 256 bytes at `dp + c` are writable.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store_group(dp: *mut u8, c: usize, i: usize, v: __m256i) {
    // SAFETY: both 16-byte stores end at `c + 128 + 16*7 + 16 = c + 256`, writable by the
    // caller's guarantee.
    unsafe {
        _mm256_storeu2_m128i(
            dp.add(c + 128 + 16 * i).cast::<__m128i>(),
            dp.add(c + 16 * i).cast::<__m128i>(),
            v,
        );
    }
}
