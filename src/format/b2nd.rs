//! The `b2nd` metalayer: an N-d array's shape, chunkshape, blockshape and dtype, stored in the
//! super-chunk's `"b2nd"` metalayer (the legacy name `"caterva"` is read too).
//!
//! Layout (msgpack, big-endian integers): `fixarray(7)` of version (fixint 0), ndim (fixint),
//! shape (`0x90+ndim` × `D3` i64), chunkshape (`0x90+ndim` × `D2` i32), blockshape (`0x90+ndim` ×
//! `D2` i32), dtype format (fixint; 0 = NumPy) and dtype (`DB` str32). For 16 dimensions the array
//! markers are `0xA0`, as C-Blosc2 writes them. A layer that ends after the blockshape (the old
//! caterva layout) has no dtype.
//! Format: c-blosc2 `README_B2ND_METALAYER.rst`, `blosc/b2nd.c` (`b2nd_serialize_meta`,
//! `b2nd_deserialize_meta`); `shared/spec/frames.md` §9.
//!
//! ```
//! use strata::format::b2nd::B2ndMeta;
//! let meta = B2ndMeta::new(vec![5, 7], vec![4, 4], vec![2, 3], "|u1").unwrap();
//! let bytes = meta.to_bytes();
//! assert_eq!(&bytes[..4], &[0x97, 0x00, 0x02, 0x92]);
//! assert_eq!(B2ndMeta::from_bytes(&bytes).unwrap(), meta);
//! ```

use crate::error::{Error, Result};

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
    /// [`Error::InvalidParam`] when the shapes disagree in length, `ndim` exceeds [`MAX_DIM`],
    /// a shape is negative, a partition of a non-empty dimension is not positive, or a block
    /// exceeds its chunk.
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
    /// [`Error::InvalidParam`] naming the first broken rule.
    pub fn validate(&self) -> Result<()> {
        let ndim = self.shape.len();
        if self.chunkshape.len() != ndim || self.blockshape.len() != ndim {
            return Err(Error::InvalidParam(format!(
                "b2nd: shape, chunkshape and blockshape have {}, {} and {} dimensions",
                ndim,
                self.chunkshape.len(),
                self.blockshape.len()
            )));
        }
        if ndim > MAX_DIM {
            return Err(Error::InvalidParam(format!(
                "b2nd: {ndim} dimensions, at most {MAX_DIM} are supported"
            )));
        }
        for i in 0..ndim {
            let (s, c, b) = (self.shape[i], self.chunkshape[i], self.blockshape[i]);
            // A zero-length dimension may have empty partitions, as python-blosc2 writes them.
            let least = i32::from(s != 0);
            if s < 0 || b < least || b > c {
                return Err(Error::InvalidParam(format!(
                    "b2nd: dimension {i} has shape {s}, chunkshape {c}, blockshape {b} \
                     (need shape >= 0 and 1 <= blockshape <= chunkshape, or 0 for an empty \
                     dimension)"
                )));
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
    /// [`Error::InvalidHeader`] when the bytes are truncated, a msgpack marker is not the one
    /// the layout has, or the dtype is not UTF-8; [`Error::InvalidParam`] from validation.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader { bytes, pos: 0 };
        r.marker(0x97, "array of 7 entries")?;
        let _version = r.u8("version")?;
        let ndim = usize::from(r.u8("ndim")?);
        if ndim > MAX_DIM {
            return Err(Error::header(format!(
                "b2nd metalayer: ndim {ndim} is more than {MAX_DIM}"
            )));
        }
        // ndim <= 16: the marker stays a byte.
        let array_marker = 0x90 + ndim as u8;
        r.marker(array_marker, "shape array")?;
        let shape = (0..ndim)
            .map(|_| {
                r.marker(0xd3, "int64 in shape")?;
                Ok(i64::from_be_bytes(r.array("shape")?))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut partition = |what: &str| -> Result<Vec<i32>> {
            r.marker(array_marker, what)?;
            (0..ndim)
                .map(|_| {
                    r.marker(0xd2, what)?;
                    Ok(i32::from_be_bytes(r.array(what)?))
                })
                .collect()
        };
        let chunkshape = partition("chunkshape")?;
        let blockshape = partition("blockshape")?;
        let (dtype_format, dtype) = if r.pos < bytes.len() {
            let format = r.u8("dtype format")?;
            r.marker(0xdb, "dtype str32")?;
            let len = u32::from_be_bytes(r.array("dtype length")?) as usize;
            let raw = r.take(len, "dtype")?;
            let dtype = std::str::from_utf8(raw)
                .map_err(|_| Error::header("b2nd metalayer: dtype is not UTF-8"))?;
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

/// A bounds-checked cursor over the layer's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| {
            Error::header(format!(
                "b2nd metalayer: truncated at byte {} of {} reading the {what}",
                self.pos,
                self.bytes.len()
            ))
        })?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.take(1, what)?[0])
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    fn marker(&mut self, want: u8, what: &str) -> Result<()> {
        let at = self.pos;
        let got = self.u8(what)?;
        if got == want {
            Ok(())
        } else {
            Err(Error::header(format!(
                "b2nd metalayer: byte {at} is {got:#04x}, expected {want:#04x} ({what})"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The (5,7) uint8 example of `shared/spec/frames.md` §9, checked against C-Blosc2's output.
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
