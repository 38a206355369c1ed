//! The `b2nd` metalayer: an N-d array's shape, chunkshape, blockshape and dtype, stored in the
//! super-chunk's `"b2nd"` metalayer (the legacy name `"caterva"` is read too).
//!
//! Layout (msgpack, big-endian integers): `fixarray(7)` of version (fixint 0), ndim (fixint),
//! shape (`0x90+ndim` × `D3` i64), chunkshape (`0x90+ndim` × `D2` i32), blockshape (`0x90+ndim` ×
//! `D2` i32), dtype format (fixint; 0 = NumPy) and dtype (`DB` str32). For 16 dimensions the array
//! markers are `0xA0`, as C-Blosc2 writes them. A layer that ends after the blockshape (the old
//! caterva layout) has no dtype.
//! Format: c-blosc2 `README_B2ND_METALAYER.rst`, `blosc/b2nd.c` (`b2nd_serialize_meta`,
//! `b2nd_deserialize_meta`); `docs/b2nd.md`.
//!
//! ```
//! use strata::format::b2nd::B2ndMeta;
//! let meta = B2ndMeta::new(vec![5, 7], vec![4, 4], vec![2, 3], "|u1").unwrap();
//! let bytes = meta.to_bytes();
//! assert_eq!(&bytes[..4], &[0x97, 0x00, 0x02, 0x92]);
//! assert_eq!(B2ndMeta::from_bytes(&bytes).unwrap(), meta);
//! ```

use super::msgpack::Reader;
use crate::error::{Error, Expected, Result};

/// Name of the metalayer that holds [`B2ndMeta`].
pub const METALAYER: &str = "b2nd";
/// The name older writers (caterva) used for the same layer.
pub const LEGACY_METALAYER: &str = "caterva";
/// The layout version written in the layer (`B2ND_METALAYER_VERSION`).
pub const VERSION: u8 = 0;
/// Most dimensions an array may have (`B2ND_MAX_DIM` in C-Blosc2 3.x).
pub const MAX_DIM: usize = 16;
/// `dtype_format` of a NumPy dtype string, the only one python-blosc2 writes.
pub const DTYPE_FORMAT_NUMPY: u8 = 0;

/// Shape and partitions of a b2nd array, as its metalayer stores them.
///
/// Every vector has `ndim` entries, outermost dimension first (C order). `shape` is in elements;
/// `chunkshape` and `blockshape` are in elements too, with `blockshape[i] <= chunkshape[i]`.
/// `dtype` is the NumPy dtype string (`"<f8"`, `"|u1"`, `"[('a', '<i4')]"`…); `None` when the
/// layer predates dtypes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct B2ndMeta {
    /// Array shape in elements, one entry per dimension.
    pub shape: Vec<i64>,
    /// Chunk shape in elements.
    pub chunkshape: Vec<i32>,
    /// Block shape in elements.
    pub blockshape: Vec<i32>,
    /// How `dtype` is spelled ([`DTYPE_FORMAT_NUMPY`]).
    pub dtype_format: u8,
    /// The dtype string, or `None` for layers written without one.
    pub dtype: Option<String>,
}

impl B2ndMeta {
    /// A NumPy-dtype layer after checking the shapes (see [`B2ndMeta::validate`]).
    ///
    /// # Errors
    /// [`Error::Mismatch`] when the shapes disagree in length, [`Error::OutOfRange`] when
    /// `ndim` exceeds [`MAX_DIM`], [`Error::Partition`] when a shape is negative, a partition
    /// of a non-empty dimension is not positive, or a block exceeds its chunk.
    pub fn new(
        shape: Vec<i64>,
        chunkshape: Vec<i32>,
        blockshape: Vec<i32>,
        dtype: &str,
    ) -> Result<Self> {
        let meta = B2ndMeta {
            shape,
            chunkshape,
            blockshape,
            dtype_format: DTYPE_FORMAT_NUMPY,
            dtype: Some(dtype.to_owned()),
        };
        meta.validate()?;
        Ok(meta)
    }

    /// Number of dimensions.
    #[must_use]
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Checks what every reader relies on: equal lengths, `ndim <= 16`, `shape >= 0` and
    /// `1 <= blockshape <= chunkshape` (`0` allowed for both where `shape` is 0).
    ///
    /// # Errors
    /// [`Error::Mismatch`], [`Error::OutOfRange`] or [`Error::Partition`] for the first broken
    /// rule.
    pub fn validate(&self) -> Result<()> {
        let ndim = self.shape.len();
        if self.chunkshape.len() != ndim {
            return Err(Error::mismatch(
                "b2nd chunkshape entries (one per dimension of the shape)",
                ndim,
                self.chunkshape.len(),
            ));
        }
        if self.blockshape.len() != ndim {
            return Err(Error::mismatch(
                "b2nd blockshape entries (one per dimension of the shape)",
                ndim,
                self.blockshape.len(),
            ));
        }
        if ndim > MAX_DIM {
            return Err(Error::range(
                "b2nd dimensions",
                ndim,
                Expected::at_most(MAX_DIM),
            ));
        }
        for i in 0..ndim {
            let (s, c, b) = (self.shape[i], self.chunkshape[i], self.blockshape[i]);
            // A zero-length dimension may have empty partitions, as python-blosc2 writes them.
            let least = i32::from(s != 0);
            if s < 0 || b < least || b > c {
                return Err(Error::Partition {
                    dim: i,
                    shape: s,
                    chunkshape: c.into(),
                    blockshape: b.into(),
                });
            }
        }
        Ok(())
    }

    /// The layer's bytes, exactly as C-Blosc2 writes them.
    #[must_use]
    pub fn to_bytes(&self) -> Vec<u8> {
        let ndim = self.ndim();
        let dtype = self.dtype.as_deref().unwrap_or("");
        let mut out = Vec::with_capacity(3 + ndim * 23 + 3 + 6 + dtype.len());
        // ndim <= MAX_DIM (16) keeps both casts in range.
        let array_marker = 0x90 + ndim as u8;
        out.extend_from_slice(&[0x97, VERSION, ndim as u8, array_marker]);
        for s in &self.shape {
            out.push(0xd3);
            out.extend_from_slice(&s.to_be_bytes());
        }
        for partition in [&self.chunkshape, &self.blockshape] {
            out.push(array_marker);
            for p in partition {
                out.push(0xd2);
                out.extend_from_slice(&p.to_be_bytes());
            }
        }
        if self.dtype.is_some() {
            out.push(self.dtype_format);
            out.push(0xdb);
            // A dtype string longer than 4 GiB cannot be built in memory by any caller.
            out.extend_from_slice(&(dtype.len() as u32).to_be_bytes());
            out.extend_from_slice(dtype.as_bytes());
        }
        out
    }

    /// Parses a layer and checks it with [`B2ndMeta::validate`].
    ///
    /// # Errors
    /// [`Error::Msgpack`] when the bytes are truncated or a marker is not the one the layout
    /// has, [`Error::InvalidHeader`] when `ndim` exceeds [`MAX_DIM`], [`Error::Malformed`]
    /// when the dtype is not UTF-8; the errors of [`B2ndMeta::validate`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader::new(bytes);
        r.marker(0x97, "b2nd metalayer array of 7 entries")?;
        let _version = r.u8("b2nd metalayer version")?;
        let ndim = usize::from(r.u8("b2nd metalayer ndim")?);
        if ndim > MAX_DIM {
            return Err(Error::header(
                "b2nd metalayer ndim",
                ndim,
                Expected::at_most(MAX_DIM),
            ));
        }
        // ndim <= 16: the marker stays a byte.
        let array_marker = 0x90 + ndim as u8;
        r.marker(array_marker, "b2nd metalayer shape array")?;
        let shape = (0..ndim)
            .map(|_| r.int64("b2nd metalayer shape"))
            .collect::<Result<Vec<_>>>()?;
        let mut partition = |what: &'static str| -> Result<Vec<i32>> {
            r.marker(array_marker, what)?;
            (0..ndim).map(|_| r.int32(what)).collect()
        };
        let chunkshape = partition("b2nd metalayer chunkshape")?;
        let blockshape = partition("b2nd metalayer blockshape")?;
        let (dtype_format, dtype) = if r.pos() < bytes.len() {
            let format = r.u8("b2nd metalayer dtype format")?;
            let raw = r.str32("b2nd metalayer dtype")?;
            let dtype = std::str::from_utf8(raw).map_err(|_| Error::Malformed {
                what: "the b2nd metalayer's dtype is not UTF-8",
            })?;
            (format, Some(dtype.to_owned()))
        } else {
            (DTYPE_FORMAT_NUMPY, None)
        };
        let meta = B2ndMeta {
            shape,
            chunkshape,
            blockshape,
            dtype_format,
            dtype,
        };
        meta.validate()?;
        Ok(meta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The (5,7) uint8 example of `docs/b2nd.md`, checked against C-Blosc2's output.
    const EXAMPLE: &[u8] = &[
        0x97, 0x00, 0x02, 0x92, 0xd3, 0, 0, 0, 0, 0, 0, 0, 5, 0xd3, 0, 0, 0, 0, 0, 0, 0, 7, 0x92,
        0xd2, 0, 0, 0, 4, 0xd2, 0, 0, 0, 4, 0x92, 0xd2, 0, 0, 0, 2, 0xd2, 0, 0, 0, 3, 0x00, 0xdb,
        0, 0, 0, 3, b'|', b'u', b'1',
    ];

    #[test]
    fn spec_example_round_trips() {
        let meta = B2ndMeta::from_bytes(EXAMPLE).unwrap();
        assert_eq!(meta.shape, [5, 7]);
        assert_eq!(meta.chunkshape, [4, 4]);
        assert_eq!(meta.blockshape, [2, 3]);
        assert_eq!(meta.dtype.as_deref(), Some("|u1"));
        assert_eq!(meta.to_bytes(), EXAMPLE);
    }

    #[test]
    fn sixteen_dimensions_use_the_0xa0_marker() {
        let meta = B2ndMeta::new(vec![2; 16], vec![1; 16], vec![1; 16], "<f8").unwrap();
        let bytes = meta.to_bytes();
        assert_eq!(&bytes[..4], &[0x97, 0, 16, 0xa0]);
        assert_eq!(B2ndMeta::from_bytes(&bytes).unwrap(), meta);
    }

    #[test]
    fn layer_without_dtype_reads_as_none() {
        let cut = &EXAMPLE[..EXAMPLE.len() - 9];
        let meta = B2ndMeta::from_bytes(cut).unwrap();
        assert_eq!(meta.dtype, None);
        assert_eq!(meta.to_bytes(), cut);
    }

    #[test]
    fn every_truncation_is_an_invalid_header() {
        for len in 0..EXAMPLE.len() - 9 {
            let err = B2ndMeta::from_bytes(&EXAMPLE[..len]).unwrap_err();
            assert_eq!(err.code(), -11, "length {len}: {err}");
        }
        for len in EXAMPLE.len() - 8..EXAMPLE.len() {
            assert_eq!(
                B2ndMeta::from_bytes(&EXAMPLE[..len]).unwrap_err().code(),
                -11
            );
        }
    }

    #[test]
    fn bad_shapes_are_rejected() {
        assert!(B2ndMeta::new(vec![5], vec![4, 4], vec![2, 2], "|u1").is_err());
        assert!(B2ndMeta::new(vec![-1], vec![4], vec![2], "|u1").is_err());
        assert!(B2ndMeta::new(vec![5], vec![4], vec![5], "|u1").is_err());
        assert!(B2ndMeta::new(vec![5], vec![0], vec![0], "|u1").is_err());
        assert!(B2ndMeta::new(vec![0, 5], vec![0, 5], vec![0, 5], "<f8").is_ok());
        assert!(B2ndMeta::new(vec![1; 17], vec![1; 17], vec![1; 17], "|u1").is_err());
        let mut bytes = EXAMPLE.to_vec();
        bytes[2] = 17;
        assert_eq!(B2ndMeta::from_bytes(&bytes).unwrap_err().code(), -11);
        bytes[2] = 2;
        bytes[27] = 0; // chunkshape[1] = 0
        assert_eq!(B2ndMeta::from_bytes(&bytes).unwrap_err().code(), -12);
    }
}
