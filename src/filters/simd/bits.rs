//! The bit transpose of bitshuffle (a byte plane to eight bit rows and back), written once for
//! the SSE2 and AVX2 modules: [`bit_transpose!`] expands to the same kernels over one vector
//! type and its intrinsics, so both levels run the same network and compile to the code a
//! hand-written copy would (the intrinsics are inlined into functions with the level's
//! feature enabled).

/// Defines, in the calling module, `bit_rows`, `transpose8x8` and `bit_unrows` for vectors of
/// type `vector` and `bytes` bytes (16 or 32), with these intrinsics: `loadu`, `setzero`,
/// `and`, `xor`, `add8` (`add_epi8`), `movemask` (`movemask_epi8`, one bit per byte: an int of
/// type `half`, two of them a `pair`), `srli64`/`slli64` (64-bit lane shifts), `set1_64`
/// (`set1_epi64x`), the `unpacklo`/`unpackhi` pairs for 8, 16 and 32 bits, and the module's
/// `store_group(dp, c, i, v)`, which writes output register `i` of the run of `8 * bytes`
/// plane bytes at `dp + c`.
macro_rules! bit_transpose {
    (
        feature: $feature:literal,
        vector: $v:ty,
        bytes: $b:literal,
        half: $half:ty,
        pair: $pair:ty,
        loadu: $loadu:ident,
        setzero: $setzero:ident,
        and: $and:ident,
        xor: $xor:ident,
        add8: $add8:ident,
        movemask: $movemask:ident,
        srli64: $srli:ident,
        slli64: $slli:ident,
        set1_64: $set1:ident,
        unpack8: $lo8:ident $hi8:ident,
        unpack16: $lo16:ident $hi16:ident,
        unpack32: $lo32:ident $hi32:ident,
        store_group: $store:ident $(,)?
    ) => {
        /// Bit transpose of one byte plane into eight rows: for each run of `2 * bytes` plane
        /// bytes (one of `bytes` at the end), row `k` (`rows[k*rowlen + pos + ..]`) gets a
        /// quarter of as many bytes packing bit `k` of those bytes, LSB first. Handles the
        /// first `bytes * floor(plane.len() / bytes)` bytes and returns that count.
        ///
        /// # Safety
        /// The CPU must support the module's level.
        #[target_feature(enable = $feature)]
        pub(super) unsafe fn bit_rows(
            plane: &[u8],
            rows: &mut [u8],
            rowlen: usize,
            pos: usize,
        ) -> usize {
            const B: usize = $b;
            const HALF_BITS: usize = 8 * std::mem::size_of::<$half>();
            let len = plane.len() - plane.len() % B;
            let fits = pos.checked_add(len / 8).is_some_and(|end| end <= rowlen)
                && rowlen.checked_mul(8).is_some_and(|all| all <= rows.len());
            if !fits {
                return 0;
            }
            let (sp, dp) = (plane.as_ptr(), rows.as_mut_ptr());
            let mut c = 0;
            while c + 2 * B <= len {
                // SAFETY: `c + 2B <= len <= plane.len()`.
                let (mut x0, mut x1) = unsafe {
                    (
                        $loadu(sp.add(c).cast::<$v>()),
                        $loadu(sp.add(c + B).cast::<$v>()),
                    )
                };
                for k in (0..8).rev() {
                    // SAFETY: register-only intrinsics (the level enabled); the store of
                    // `2B/8` bytes ends at `k*rowlen + pos + (c + 2B)/8 <= 7*rowlen + pos +
                    // len/8 <= 8*rowlen <= rows.len()`.
                    unsafe {
                        let m = <$pair>::from($movemask(x0) as $half)
                            | (<$pair>::from($movemask(x1) as $half) << HALF_BITS);
                        dp.add(k * rowlen + pos + c / 8)
                            .cast::<$pair>()
                            .write_unaligned(m.to_le());
                        x0 = $add8(x0, x0);
                        x1 = $add8(x1, x1);
                    }
                }
                c += 2 * B;
            }
            if c < len {
                // SAFETY: `c + B == len <= plane.len()`.
                let mut x = unsafe { $loadu(sp.add(c).cast::<$v>()) };
                for k in (0..8).rev() {
                    // SAFETY: as above, with a store of `B/8` bytes ending at
                    // `k*rowlen + pos + len/8`.
                    unsafe {
                        let m = $movemask(x) as $half;
                        dp.add(k * rowlen + pos + c / 8)
                            .cast::<$half>()
                            .write_unaligned(m.to_le());
                        x = $add8(x, x);
                    }
                }
            }
            len
        }

        /// In-register 8×8 bit transpose of each 64-bit lane (see `scalar::transpose8x8`).
        ///
        /// # Safety
        /// The CPU must support the module's level.
        #[inline]
        #[target_feature(enable = $feature)]
        unsafe fn transpose8x8(x: $v) -> $v {
            #[allow(unused_unsafe)]
            // SAFETY: register-only intrinsics; the level is enabled for this function.
            unsafe {
                let m1 = $set1(0x00AA_00AA_00AA_00AA);
                let m2 = $set1(0x0000_CCCC_0000_CCCC);
                let m3 = $set1(0x0000_0000_F0F0_F0F0);
                let t = $and($xor($srli::<7>(x), x), m1);
                let x = $xor(x, $xor(t, $slli::<7>(t)));
                let t = $and($xor($srli::<14>(x), x), m2);
                let x = $xor(x, $xor(t, $slli::<14>(t)));
                let t = $and($xor($srli::<28>(x), x), m3);
                $xor(x, $xor(t, $slli::<28>(t)))
            }
        }

        /// Inverse of [`bit_rows`]: rebuilds `8 * bytes` plane bytes at a time from `bytes`
        /// bytes of each of the eight rows starting at `pos`. Handles the first
        /// `8 * bytes * floor(plane.len() / (8 * bytes))` bytes and returns that count.
        ///
        /// # Safety
        /// The CPU must support the module's level.
        #[target_feature(enable = $feature)]
        pub(super) unsafe fn bit_unrows(
            rows: &[u8],
            rowlen: usize,
            pos: usize,
            plane: &mut [u8],
        ) -> usize {
            const B: usize = $b;
            let len = plane.len() - plane.len() % (8 * B);
            let fits = pos.checked_add(len / 8).is_some_and(|end| end <= rowlen)
                && rowlen.checked_mul(8).is_some_and(|all| all <= rows.len());
            if !fits {
                return 0;
            }
            let (sp, dp) = (rows.as_ptr(), plane.as_mut_ptr());
            let mut c = 0;
            while c < len {
                let g0 = pos + c / 8;
                // SAFETY: reads end at `k*rowlen + pos + (c + 8B)/8 <= 8*rowlen <= rows.len()`.
                let r = unsafe {
                    let mut r = [$setzero(); 8];
                    for (k, v) in r.iter_mut().enumerate() {
                        *v = $loadu(sp.add(k * rowlen + g0).cast::<$v>());
                    }
                    r
                };
                // SAFETY: register-only intrinsics; the level is enabled for this function.
                let u = unsafe {
                    // Bytes of rows 2i, 2i+1 side by side: groups 0-7 (lo) and 8-15 (hi) per
                    // 128-bit lane.
                    let s: [$v; 8] = [
                        $lo8(r[0], r[1]),
                        $hi8(r[0], r[1]),
                        $lo8(r[2], r[3]),
                        $hi8(r[2], r[3]),
                        $lo8(r[4], r[5]),
                        $hi8(r[4], r[5]),
                        $lo8(r[6], r[7]),
                        $hi8(r[6], r[7]),
                    ];
                    // Rows 0-3 (t[0..4]) and 4-7 (t[4..8]) of groups 0-3, 4-7, 8-11, 12-15.
                    let t: [$v; 8] = [
                        $lo16(s[0], s[2]),
                        $hi16(s[0], s[2]),
                        $lo16(s[1], s[3]),
                        $hi16(s[1], s[3]),
                        $lo16(s[4], s[6]),
                        $hi16(s[4], s[6]),
                        $lo16(s[5], s[7]),
                        $hi16(s[5], s[7]),
                    ];
                    // Register i: the eight row bytes of groups 2i and 2i+1, one group per
                    // 64 bits.
                    [
                        transpose8x8($lo32(t[0], t[4])),
                        transpose8x8($hi32(t[0], t[4])),
                        transpose8x8($lo32(t[1], t[5])),
                        transpose8x8($hi32(t[1], t[5])),
                        transpose8x8($lo32(t[2], t[6])),
                        transpose8x8($hi32(t[2], t[6])),
                        transpose8x8($lo32(t[3], t[7])),
                        transpose8x8($hi32(t[3], t[7])),
                    ]
                };
                for (i, v) in u.iter().enumerate() {
                    // SAFETY: `c + 8B <= len <= plane.len()`: the run of `8B` bytes at
                    // `dp + c` is writable, as `store_group` needs.
                    unsafe { $store(dp, c, i, *v) };
                }
                c += 8 * B;
            }
            len
        }
    };
}
pub(super) use bit_transpose;
