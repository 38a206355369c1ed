//! `TRUNC_PREC` — filter ID 4, name `trunc_prec`: zeroes low mantissa bits of floats (lossy).
//!
//! Only typesize 4 (float32, 23 mantissa bits) and 8 (float64, 52 bits). The meta byte is read
//! as an `i8` `p`: `p >= 0` keeps `p` mantissa bits, `p < 0` zeroes `-p` bits. With `MANT` the
//! mantissa width, `zeroed = p >= 0 ? MANT - p : -p`; each element's integer representation
//! (little-endian) is ANDed with `!((1 << zeroed) - 1)`. It is an error when `|p| > MANT` or
//! `zeroed >= MANT` (so meta 0, which would zero the whole mantissa, is an error, as in C).
//!
//! Backward is a copy: the filter cannot be undone.
//!
//! **Tail rule.** The trailing `len % typesize` bytes (only in a leftover block) are copied
//! unchanged; C-Blosc2 leaves them unwritten.
//!
//! **Matches** C-Blosc2 2.x and 3.x `truncate_precision` (checked byte for byte against
//! python-blosc2 4.14.1 / C-Blosc2 3.3.5, fixtures in `tests/data/filters/`).
//!
//! Format: `docs/filters.md`; c-blosc2 `blosc/trunc-prec.c`.
//!
//! ```
//! use strata::filters::{Filter, trunc_prec::TruncPrec};
//! use strata::block::BlockContext;
//! // Keep 10 of the 23 mantissa bits of a float32.
//! let ctx = BlockContext { typesize: 4, meta: 10, ..BlockContext::default() };
//! let x = std::f32::consts::PI;
//! let mut out = [0u8; 4];
//! TruncPrec.forward(&x.to_le_bytes(), &mut out, &ctx).unwrap();
//! assert_eq!(u32::from_le_bytes(out), x.to_bits() & !((1 << 13) - 1));
//! ```
#![forbid(unsafe_code)]

use super::shuffle::same_len;
use super::Filter;
use crate::block::BlockContext;
use crate::error::{Error, Result};
use crate::format::ids::FilterId;

/// The precision-truncation filter (ID 4).
#[derive(Debug, Default, Clone, Copy)]
pub struct TruncPrec;

/// Filter ID of [`TruncPrec`].
const ID: FilterId = FilterId::TRUNC_PREC;

/// The number of low bits to zero, from the mantissa width and the meta byte.
fn zeroed_bits(mantissa: i32, meta: u8) -> Result<u32> {
    let p = i32::from(i8::from_ne_bytes([meta]));
    let err = |message: String| Error::Filter { id: ID.0, message };
    if p.abs() > mantissa {
        return Err(err(format!(
            "precision {p} exceeds the {mantissa}-bit mantissa"
        )));
    }
    let zeroed = if p >= 0 { mantissa - p } else { -p };
    if zeroed >= mantissa {
        return Err(err(format!(
            "zeroing {zeroed} bits would clear the whole {mantissa}-bit mantissa"
        )));
    }
    // 0 <= zeroed < mantissa here.
    Ok(u32::try_from(zeroed).unwrap_or(0))
}

impl Filter for TruncPrec {
    fn id(&self) -> FilterId {
        ID
    }
    fn name(&self) -> &str {
        "trunc_prec"
    }
    fn forward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        same_len(ID, src, dst)?;
        let ts = ctx.typesize;
        let body = src.len() - src.len() % ts.max(1);
        match ts {
            4 => {
                let mask = !((1u32 << zeroed_bits(23, ctx.meta)?) - 1);
                for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
                    let v = u32::from_le_bytes([s[0], s[1], s[2], s[3]]) & mask;
                    d.copy_from_slice(&v.to_le_bytes());
                }
            }
            8 => {
                let mask = !((1u64 << zeroed_bits(52, ctx.meta)?) - 1);
                for (d, s) in dst.chunks_exact_mut(8).zip(src.chunks_exact(8)) {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(s);
                    d.copy_from_slice(&(u64::from_le_bytes(b) & mask).to_le_bytes());
                }
            }
            _ => {
                return Err(Error::Filter {
                    id: ID.0,
                    message: format!("typesize {ts} is not supported (only 4 and 8)"),
                })
            }
        }
        dst[body..].copy_from_slice(&src[body..]);
        Ok(())
    }
    fn backward(&self, src: &[u8], dst: &mut [u8], _ctx: &BlockContext<'_>) -> Result<()> {
        same_len(ID, src, dst)?;
        dst.copy_from_slice(src);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(typesize: usize, meta: i8) -> BlockContext<'static> {
        BlockContext {
            typesize,
            meta: meta.to_ne_bytes()[0],
            nblock: 0,
            offset: 0,
            version: 5,
            dref: &[],
            nd: None,
            ..BlockContext::default()
        }
    }

    #[test]
    fn masks_follow_the_meta_sign() {
        let x = 1.234_567_890_123_f64;
        let mut out = [0u8; 8];
        TruncPrec
            .forward(&x.to_le_bytes(), &mut out, &ctx(8, 20))
            .unwrap();
        assert_eq!(u64::from_le_bytes(out), x.to_bits() & !((1 << 32) - 1));
        TruncPrec
            .forward(&x.to_le_bytes(), &mut out, &ctx(8, -20))
            .unwrap();
        assert_eq!(u64::from_le_bytes(out), x.to_bits() & !((1 << 20) - 1));
        let y = 3.3_f32;
        let mut out = [0u8; 4];
        TruncPrec
            .forward(&y.to_le_bytes(), &mut out, &ctx(4, 23))
            .unwrap();
        assert_eq!(out, y.to_le_bytes());
        TruncPrec
            .forward(&y.to_le_bytes(), &mut out, &ctx(4, -22))
            .unwrap();
        assert_eq!(u32::from_le_bytes(out), y.to_bits() & !((1 << 22) - 1));
    }

    #[test]
    fn tail_is_copied_and_backward_copies() {
        let src: Vec<u8> = (0..11).map(|i| 0xF0 | i).collect();
        let mut out = vec![0u8; 11];
        TruncPrec.forward(&src, &mut out, &ctx(4, 1)).unwrap();
        assert_eq!(out[8..], src[8..]);
        assert_eq!(out[0], 0);
        let mut back = vec![0u8; 11];
        TruncPrec.backward(&out, &mut back, &ctx(4, 1)).unwrap();
        assert_eq!(back, out);
    }

    #[test]
    fn bad_parameters_are_errors() {
        let mut dst = [0u8; 8];
        for (ts, meta) in [
            (4, 0),
            (8, 0),
            (4, 24),
            (4, -23),
            (8, 53),
            (8, -52),
            (2, 3),
            (0, 3),
            (16, 3),
        ] {
            assert!(
                matches!(
                    TruncPrec.forward(&[0; 8], &mut dst, &ctx(ts, meta)),
                    Err(Error::Filter { id: 4, .. })
                ),
                "ts={ts} meta={meta}"
            );
        }
        assert!(TruncPrec.forward(&[0; 8], &mut dst, &ctx(8, 52)).is_ok());
        assert!(TruncPrec.forward(&[0; 8], &mut dst, &ctx(8, -51)).is_ok());
        assert!(TruncPrec.forward(&[0; 9], &mut dst, &ctx(8, 1)).is_err());
    }
}
