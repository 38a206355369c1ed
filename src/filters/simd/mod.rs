//! Shuffle and bitshuffle kernels with run-time CPU dispatch.
//!
//! Three implementations of each kernel: [`Level::Avx2`], [`Level::Sse2`] (x86/x86-64 only)
//! and [`Level::Scalar`], the portable twin every SIMD kernel is tested against. The best level
//! the CPU supports is detected once (`is_x86_feature_detected!`) and cached; the `*_with`
//! functions force a level (capped at what the CPU has), for tests and benchmarks.
//!
//! SIMD covers the element sizes 2, 4, 8, 16 and every multiple of 16 (16 bytes of each element
//! at a time); other sizes use the scalar kernel (eight elements at a time) for the byte
//! transpose. Bitshuffle uses SIMD for the bit transpose whatever the element size.
//!
//! Bitshuffle works on L1-sized tiles: a tile of elements is byte-shuffled into scratch, then
//! each of its byte planes is bit-transposed into the eight output rows (and backwards). The
//! result is the layout `docs/filters.md` describes, byte-identical to C-Blosc2's
//! `bshuf_trans_bit_elem` / `bitshuffle()` (2.x and 3.x, checked against 3.3.5).
//!
//! This module is the only place in the filters where `unsafe` is allowed; every SIMD kernel
//! checks its slice arguments itself, so the only condition its callers uphold is the CPU level.
//! Format: c-blosc2 `blosc/shuffle.c`, `blosc/shuffle-generic.h`, `blosc/bitshuffle-generic.c`.
#![allow(unsafe_code)]

use crate::error::{Error, Expected, Result};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU8, Ordering};

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod avx2;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod bits;
mod scalar;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod sse2;

/// An instruction-set level for the kernels, ordered from least to most capable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Portable code, no SIMD intrinsics.
    Scalar,
    /// x86 SSE2 (baseline on x86-64).
    Sse2,
    /// x86 AVX2.
    Avx2,
}

/// The cached detection result: 0 = not yet detected, else `Level as u8 + 1`.
static DETECTED: AtomicU8 = AtomicU8::new(0);

impl Level {
    /// The level's name: `scalar`, `sse2` or `avx2`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Level::Scalar => "scalar",
            Level::Sse2 => "sse2",
            Level::Avx2 => "avx2",
        }
    }

    #[cfg(test)]
    /// All levels, least capable first.
    pub const ALL: [Level; 3] = [Level::Scalar, Level::Sse2, Level::Avx2];

    /// The best level this CPU supports (detected once, then cached).
    #[must_use]
    pub fn detect() -> Level {
        match DETECTED.load(Ordering::Relaxed) {
            1 => Level::Scalar,
            2 => Level::Sse2,
            3 => Level::Avx2,
            _ => {
                let level = Self::probe();
                DETECTED.store(level as u8 + 1, Ordering::Relaxed);
                level
            }
        }
    }

    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    fn probe() -> Level {
        if std::arch::is_x86_feature_detected!("avx2") {
            Level::Avx2
        } else if std::arch::is_x86_feature_detected!("sse2") {
            Level::Sse2
        } else {
            Level::Scalar
        }
    }

    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    fn probe() -> Level {
        Level::Scalar
    }

    #[cfg(test)]
    /// Whether this CPU can run kernels of this level.
    #[must_use]
    pub fn is_supported(self) -> bool {
        self <= Level::detect()
    }
}

/// Checks the common kernel arguments.
fn check(ts: usize, src: &[u8], dst: &[u8]) -> Result<()> {
    if ts == 0 {
        return Err(Error::range(
            "element size of a filter kernel",
            0,
            Expected::AtLeast(1),
        ));
    }
    if src.len() != dst.len() {
        let what = "destination bytes of a filter kernel (the source's)";
        return Err(Error::mismatch(what, src.len(), dst.len()));
    }
    Ok(())
}

/// Byte shuffle with the detected level: with `n = len/ts`, `dst[j*n + i] = src[i*ts + j]`;
/// the last `len % ts` bytes are copied unchanged.
///
/// # Errors
/// [`Error::OutOfRange`] when `ts` is 0, [`Error::Mismatch`] when the slices differ in length.
pub fn shuffle(ts: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    shuffle_with(Level::detect(), ts, src, dst)
}

/// [`shuffle`] at a given level (capped at [`Level::detect`]).
///
/// # Errors
/// [`Error::OutOfRange`] when `ts` is 0, [`Error::Mismatch`] when the slices differ in length.
pub fn shuffle_with(level: Level, ts: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    check(ts, src, dst)?;
    let n = src.len() / ts;
    let body = n * ts;
    dst[body..].copy_from_slice(&src[body..]);
    shuffle_run(
        level.min(Level::detect()),
        ts,
        n,
        &src[..body],
        &mut dst[..body],
    );
    Ok(())
}

/// Inverse of [`shuffle`] with the detected level.
///
/// # Errors
/// [`Error::OutOfRange`] when `ts` is 0, [`Error::Mismatch`] when the slices differ in length.
pub fn unshuffle(ts: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    unshuffle_with(Level::detect(), ts, src, dst)
}

/// [`unshuffle`] at a given level (capped at [`Level::detect`]).
///
/// # Errors
/// [`Error::OutOfRange`] when `ts` is 0, [`Error::Mismatch`] when the slices differ in length.
pub fn unshuffle_with(level: Level, ts: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    check(ts, src, dst)?;
    let n = src.len() / ts;
    let body = n * ts;
    dst[body..].copy_from_slice(&src[body..]);
    unshuffle_run(
        level.min(Level::detect()),
        ts,
        n,
        &src[..body],
        &mut dst[..body],
    );
    Ok(())
}

/// Bit shuffle with the detected level (`docs/filters.md`): with `n8 = 8*floor(len/ts/8)`,
/// the first `n8*ts` bytes become `8*ts` rows of `n8/8` bytes, row `8j + k` packing bit `k` of
/// byte `j` of each element (element `8g + m` at bit `m` of row byte `g`). The remaining bytes
/// are copied unchanged.
///
/// # Errors
/// [`Error::OutOfRange`] when `ts` is 0, [`Error::Mismatch`] when the slices differ in length.
pub fn bitshuffle(ts: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    bitshuffle_with(Level::detect(), ts, src, dst)
}

/// [`bitshuffle`] at a given level (capped at [`Level::detect`]).
///
/// # Errors
/// [`Error::OutOfRange`] when `ts` is 0, [`Error::Mismatch`] when the slices differ in length.
pub fn bitshuffle_with(level: Level, ts: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    check(ts, src, dst)?;
    let level = level.min(Level::detect());
    let n = src.len() / ts;
    let n8 = n - n % 8;
    let body = n8 * ts;
    dst[body..].copy_from_slice(&src[body..]);
    if n8 == 0 {
        return Ok(());
    }
    let rowlen = n8 / 8;
    if ts == 1 {
        bit_rows_run(level, &src[..n8], &mut dst[..n8], rowlen, 0);
        return Ok(());
    }
    let tile_elems = tile_elems(ts);
    with_scratch(tile_elems * ts, |tile| {
        let mut i0 = 0;
        while i0 < n8 {
            let e = tile_elems.min(n8 - i0);
            let tile = &mut tile[..e * ts];
            shuffle_run(level, ts, e, &src[i0 * ts..(i0 + e) * ts], tile);
            for (plane, rows) in tile.chunks_exact(e).zip(dst[..body].chunks_exact_mut(n8)) {
                bit_rows_run(level, plane, rows, rowlen, i0 / 8);
            }
            i0 += e;
        }
    });
    Ok(())
}

/// Inverse of [`bitshuffle`] with the detected level.
///
/// # Errors
/// [`Error::OutOfRange`] when `ts` is 0, [`Error::Mismatch`] when the slices differ in length.
pub fn bitunshuffle(ts: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    bitunshuffle_with(Level::detect(), ts, src, dst)
}

/// [`bitunshuffle`] at a given level (capped at [`Level::detect`]).
///
/// # Errors
/// [`Error::OutOfRange`] when `ts` is 0, [`Error::Mismatch`] when the slices differ in length.
pub fn bitunshuffle_with(level: Level, ts: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    check(ts, src, dst)?;
    let level = level.min(Level::detect());
    let n = src.len() / ts;
    let n8 = n - n % 8;
    let body = n8 * ts;
    dst[body..].copy_from_slice(&src[body..]);
    if n8 == 0 {
        return Ok(());
    }
    let rowlen = n8 / 8;
    if ts == 1 {
        bit_unrows_run(level, &src[..n8], rowlen, 0, &mut dst[..n8]);
        return Ok(());
    }
    let tile_elems = tile_elems(ts);
    with_scratch(tile_elems * ts, |tile| {
        let mut i0 = 0;
        while i0 < n8 {
            let e = tile_elems.min(n8 - i0);
            let tile = &mut tile[..e * ts];
            for (plane, rows) in tile.chunks_exact_mut(e).zip(src[..body].chunks_exact(n8)) {
                bit_unrows_run(level, rows, rowlen, i0 / 8, plane);
            }
            unshuffle_run(level, ts, e, tile, &mut dst[i0 * ts..(i0 + e) * ts]);
            i0 += e;
        }
    });
    Ok(())
}

/// Running byte sum mod 256 with the detected level: `dst[k] = src[0] + ... + src[k]`
/// (BYTEDELTA decoding).
///
/// # Errors
/// [`Error::Mismatch`] when the slices differ in length.
pub fn byte_prefix_sum(src: &[u8], dst: &mut [u8]) -> Result<()> {
    byte_prefix_sum_with(Level::detect(), src, dst)
}

/// [`byte_prefix_sum`] at a given level (capped at [`Level::detect`]).
///
/// # Errors
/// [`Error::Mismatch`] when the slices differ in length.
pub fn byte_prefix_sum_with(level: Level, src: &[u8], dst: &mut [u8]) -> Result<()> {
    check(1, src, dst)?;
    let level = level.min(Level::detect());
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    let done = if level >= Level::Sse2 {
        // SAFETY: `level` was capped at `Level::detect()` above, so the CPU has SSE2.
        unsafe { sse2::prefix_sum(src, dst) }
    } else {
        0
    };
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    let done = {
        let _ = level;
        0
    };
    scalar::prefix_sum(src, dst, done);
    Ok(())
}

/// Prefix XOR with a stride of `w` bytes (1, 2, 4 or 8) with the detected level:
/// `dst[b] = src[b] ^ dst[b - w]`, and `dst[b] = src[b]` for `b < w` (DELTA decoding of
/// block 0).
///
/// # Errors
/// [`Error::OutOfRange`] when `w` is not 1, 2, 4 or 8, [`Error::Mismatch`] when the slices
/// differ in length.
pub fn prefix_xor(w: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    prefix_xor_with(Level::detect(), w, src, dst)
}

/// [`prefix_xor`] at a given level (capped at [`Level::detect`]).
///
/// # Errors
/// [`Error::OutOfRange`] when `w` is not 1, 2, 4 or 8, [`Error::Mismatch`] when the slices
/// differ in length.
pub fn prefix_xor_with(level: Level, w: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    check(w, src, dst)?;
    if !matches!(w, 1 | 2 | 4 | 8) {
        return Err(Error::range(
            "prefix_xor stride",
            w,
            Expected::OneOf("1, 2, 4 or 8"),
        ));
    }
    let level = level.min(Level::detect());
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    let done = if level >= Level::Sse2 {
        // SAFETY: `level` was capped at `Level::detect()` above, so the CPU has SSE2.
        unsafe {
            match w {
                1 => sse2::prefix_xor::<1>(src, dst),
                2 => sse2::prefix_xor::<2>(src, dst),
                4 => sse2::prefix_xor::<4>(src, dst),
                _ => sse2::prefix_xor::<8>(src, dst),
            }
        }
    } else {
        0
    };
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    let done = {
        let _ = level;
        0
    };
    scalar::prefix_xor(w, src, dst, done);
    Ok(())
}

/// Elements per bitshuffle tile: about 16 KiB of data, a multiple of 256 (so the AVX2 bit
/// kernels run on whole tiles), at least 256.
fn tile_elems(ts: usize) -> usize {
    ((16 * 1024 / ts) & !255).max(256)
}

/// Runs `f` on a per-thread scratch buffer of at least `len` bytes, reused across calls (a
/// fresh one when the thread's buffer is unavailable, e.g. during thread teardown).
fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    thread_local! {
        static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    let mut buf = SCRATCH
        .try_with(|cell| {
            cell.try_borrow_mut()
                .map(|mut b| std::mem::take(&mut *b))
                .ok()
        })
        .ok()
        .flatten()
        .unwrap_or_default();
    if buf.len() < len {
        buf.resize(len, 0);
    }
    let r = f(&mut buf[..len]);
    let _ = SCRATCH.try_with(|cell| {
        if let Ok(mut b) = cell.try_borrow_mut() {
            *b = buf;
        }
    });
    r
}

/// Elements to skip so that `plane + skip` is 32-byte aligned (0 when the run is too short
/// to be worth it).
fn lead(plane: *const u8, n: usize) -> usize {
    let skip = plane.align_offset(32);
    if skip < 32 && n >= skip + 64 {
        skip
    } else {
        0
    }
}

/// Byte shuffle of an exact `n`-element run (`src`, `dst` hold `n*ts` bytes).
fn shuffle_run(level: Level, ts: usize, n: usize, src: &[u8], dst: &mut [u8]) {
    let level = level.min(Level::detect());
    if ts == 1 {
        dst.copy_from_slice(src);
        return;
    }
    // Start the SIMD loop where the plane stores are aligned (all planes, when n % 32 == 0).
    let begin = lead(dst.as_ptr(), n);
    let done = match level {
        Level::Scalar => begin,
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        // SAFETY: `level` was capped at `Level::detect()` above, so the CPU has SSE2.
        Level::Sse2 => unsafe {
            match ts {
                2 => sse2::shuffle::<2>(ts, n, begin, src, dst),
                4 => sse2::shuffle::<4>(ts, n, begin, src, dst),
                8 => sse2::shuffle::<8>(ts, n, begin, src, dst),
                t if t % 16 == 0 => sse2::shuffle::<16>(ts, n, begin, src, dst),
                _ => begin,
            }
        },
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        // SAFETY: `level` was capped at `Level::detect()` above, so the CPU has AVX2.
        Level::Avx2 => unsafe {
            match ts {
                2 => avx2::shuffle::<2>(ts, n, begin, src, dst),
                4 => avx2::shuffle::<4>(ts, n, begin, src, dst),
                8 => avx2::shuffle::<8>(ts, n, begin, src, dst),
                t if t % 16 == 0 => avx2::shuffle::<16>(ts, n, begin, src, dst),
                _ => begin,
            }
        },
        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
        _ => begin,
    };
    scalar::shuffle(ts, n, 0..begin.min(done), src, dst);
    scalar::shuffle(ts, n, done..n, src, dst);
}

/// Inverse of [`shuffle_run`].
fn unshuffle_run(level: Level, ts: usize, n: usize, src: &[u8], dst: &mut [u8]) {
    let level = level.min(Level::detect());
    if ts == 1 {
        dst.copy_from_slice(src);
        return;
    }
    // Start the SIMD loop where the element stores are aligned, if there is such a place.
    let begin = (0..32).find(|&i| dst.as_ptr().wrapping_add(i * ts).align_offset(32) == 0);
    let begin = begin.filter(|&b| n >= b + 64).unwrap_or(0);
    let done = match level {
        Level::Scalar => begin,
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        // SAFETY: `level` was capped at `Level::detect()` above, so the CPU has SSE2.
        Level::Sse2 => unsafe {
            match ts {
                2 => sse2::unshuffle::<2>(ts, n, begin, src, dst),
                4 => sse2::unshuffle::<4>(ts, n, begin, src, dst),
                8 => sse2::unshuffle::<8>(ts, n, begin, src, dst),
                t if t % 16 == 0 => sse2::unshuffle::<16>(ts, n, begin, src, dst),
                _ => begin,
            }
        },
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        // SAFETY: `level` was capped at `Level::detect()` above, so the CPU has AVX2.
        Level::Avx2 => unsafe {
            match ts {
                2 => avx2::unshuffle::<2>(ts, n, begin, src, dst),
                4 => avx2::unshuffle::<4>(ts, n, begin, src, dst),
                8 => avx2::unshuffle::<8>(ts, n, begin, src, dst),
                t if t % 16 == 0 => avx2::unshuffle::<16>(ts, n, begin, src, dst),
                _ => begin,
            }
        },
        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
        _ => begin,
    };
    scalar::unshuffle(ts, n, 0..begin.min(done), src, dst);
    scalar::unshuffle(ts, n, done..n, src, dst);
}

/// Bit transpose of a plane (a multiple of 8 bytes) into the 8 rows of `rows`, at row offset
/// `pos`.
fn bit_rows_run(level: Level, plane: &[u8], rows: &mut [u8], rowlen: usize, pos: usize) {
    let level = level.min(Level::detect());
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    let done = {
        let mut done = 0;
        if level >= Level::Avx2 {
            // SAFETY: `level` was capped at `Level::detect()` above, so the CPU has AVX2.
            done = unsafe { avx2::bit_rows(plane, rows, rowlen, pos) };
        }
        if level >= Level::Sse2 {
            // SAFETY: `level` was capped at `Level::detect()` above, so the CPU has SSE2.
            done += unsafe { sse2::bit_rows(&plane[done..], rows, rowlen, pos + done / 8) };
        }
        done
    };
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    let done = {
        let _ = level;
        0
    };
    scalar::bit_rows(plane, done, rows, rowlen, pos);
}

/// Inverse of [`bit_rows_run`].
fn bit_unrows_run(level: Level, rows: &[u8], rowlen: usize, pos: usize, plane: &mut [u8]) {
    let level = level.min(Level::detect());
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    let done = {
        let mut done = 0;
        if level >= Level::Avx2 {
            // SAFETY: `level` was capped at `Level::detect()` above, so the CPU has AVX2.
            done = unsafe { avx2::bit_unrows(rows, rowlen, pos, plane) };
        }
        if level >= Level::Sse2 {
            // SAFETY: `level` was capped at `Level::detect()` above, so the CPU has SSE2.
            done += unsafe { sse2::bit_unrows(rows, rowlen, pos + done / 8, &mut plane[done..]) };
        }
        done
    };
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    let done = {
        let _ = level;
        0
    };
    scalar::bit_unrows(rows, rowlen, pos, plane, done);
}

#[cfg(test)]
mod tests;
