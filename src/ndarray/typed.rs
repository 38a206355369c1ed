//! Items as Rust numbers: the NumPy scalar types a dtype can name ([`Scalar`]), and typed
//! reads and writes of arrays checked against their dtype ([`NdArray::get_slice_as`],
//! [`NdArray::set_slice_as`], [`NdArray::from_items`]); with the `ndarray` feature, conversions
//! to and from `ndarray::ArrayD` (`NdArray::to_ndarray`, `NdArray::from_ndarray`).
//!
//! Items are read and written in the machine's byte order, so a dtype matches a type when its
//! kind (`u`, `i`, `f`) and size are the type's and its byte order is the machine's (`<` on
//! little-endian machines, `=`, or `|` for one-byte items). Strata does not swap bytes: an
//! array of another byte order, or of any other dtype, is refused with [`Error::Dtype`].
//!
//! ```
//! use strata::ndarray::{ArrayParams, Location, NdArray, Scalar, Slice};
//! let params = ArrayParams::from_dtype(&[3, 4], f32::DTYPE)?;
//! let data: Vec<f32> = (0..12).map(|i| i as f32 / 2.0).collect();
//! let mut arr = NdArray::from_items(&params, &Location::Memory, &data)?;
//! arr.set_slice_as(&[Slice::index(0)], &[-1.0f32; 4])?;
//! let (row, shape) = arr.get_slice_as::<f32>(&[Slice::index(1)])?;
//! assert_eq!((row, shape), (vec![2.0, 2.5, 3.0, 3.5], vec![1, 4])); // an index keeps its axis
//! assert!(arr.get_slice_as::<i32>(&[]).is_err()); // the dtype is <f4, not <i4
//! # Ok::<(), strata::Error>(())
//! ```

use super::array::{ArrayParams, NdArray};
use super::selection::{Selection, Slice};
use super::slice::SliceStats;
use super::store::ChunkStore;
use crate::error::{Error, Result};
use crate::schunk::Location;

mod sealed {
    /// Keeps [`super::Scalar`] to the types Strata implements it for, all plain old data
    /// (every bit pattern a value), so their slices are byte slices.
    pub trait Sealed: bytemuck::Pod {}
}

/// A NumPy scalar type: `u8`, `u16`, `u32`, `u64`, `i8`, `i16`, `i32`, `i64`, `f32`, `f64`.
///
/// Sealed: its items are plain bytes of the machine's byte order, every bit pattern a value.
pub trait Scalar: sealed::Sealed {
    /// The NumPy dtype string of this type in the machine's byte order, as NumPy's `dtype.str`
    /// spells it (`"<f4"` on a little-endian machine, `"|u1"` for one-byte items).
    const DTYPE: &'static str;
    /// NumPy's kind character: `u` (unsigned), `i` (signed) or `f` (floating point).
    const KIND: char;
    /// Why an array's dtype is refused for this type, for [`Error::Dtype`].
    const MISMATCH: &'static str;
}

/// Implements [`Scalar`] for `$t` of kind `$kind` and `$size` bytes.
macro_rules! scalar {
    ($($t:ty, $kind:literal, $size:literal;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const DTYPE: &'static str = if $size == 1 {
                concat!("|", $kind, $size)
            } else if cfg!(target_endian = "little") {
                concat!("<", $kind, $size)
            } else {
                concat!(">", $kind, $size)
            };
            const KIND: char = $kind;
            const MISMATCH: &'static str = concat!(
                "does not hold ", stringify!($t),
                " items (kind ", $kind, ", ", $size, " bytes, the machine's byte order)"
            );
        }
    )*};
}

scalar! {
    u8, 'u', 1;
    u16, 'u', 2;
    u32, 'u', 4;
    u64, 'u', 8;
    i8, 'i', 1;
    i16, 'i', 2;
    i32, 'i', 4;
    i64, 'i', 8;
    f32, 'f', 4;
    f64, 'f', 8;
}

/// Whether the dtype string `dtype` names `T` in the machine's byte order.
fn names<T: Scalar>(dtype: &str) -> bool {
    let size = std::mem::size_of::<T>();
    let native = if cfg!(target_endian = "little") {
        '<'
    } else {
        '>'
    };
    let mut chars = dtype.trim().chars();
    let (order, kind) = match chars.next() {
        Some(c @ ('<' | '>' | '|' | '=')) => (Some(c), chars.next()),
        first => (None, first),
    };
    let order_ok = match order {
        None | Some('=') => true,
        Some('|') => size == 1,
        Some(c) => c == native || size == 1,
    };
    order_ok && kind == Some(T::KIND) && chars.as_str().parse::<usize>() == Ok(size)
}

/// Checks that items of `dtype` (`None`: an array without one) are `T`s.
fn check<T: Scalar>(dtype: Option<&str>) -> Result<()> {
    match dtype {
        Some(d) if names::<T>(d) => Ok(()),
        d => Err(Error::Dtype {
            dtype: d.unwrap_or("").to_owned(),
            why: T::MISMATCH.into(),
            at: None,
        }),
    }
}

impl<S: ChunkStore> NdArray<S> {
    /// The selection `slices` (as [`NdArray::get_slice`]) as a new vector of `T`s (C order)
    /// and its shape.
    ///
    /// # Errors
    /// [`Error::Dtype`] when the array's dtype does not name `T` (see the module docs); as
    /// [`NdArray::get_slice_vec`].
    pub fn get_slice_as<T: Scalar>(&self, slices: &[Slice]) -> Result<(Vec<T>, Vec<usize>)> {
        check::<T>(self.dtype())?;
        let sel = Selection::new(self.shape(), slices)?;
        let n = sel.nitems().ok_or(Error::Overflow {
            what: "the selection's size",
        })?;
        let mut out = Vec::new();
        crate::alloc::resize(&mut out, n, T::zeroed())?;
        self.get_slice(slices, bytemuck::cast_slice_mut(&mut out))?;
        Ok((out, sel.shape().to_vec()))
    }

    /// Writes `data`, `T`s in C order of the selection's shape, into the selection `slices`
    /// (as [`NdArray::set_slice`]).
    ///
    /// # Errors
    /// [`Error::Dtype`] when the array's dtype does not name `T`; as [`NdArray::set_slice`].
    pub fn set_slice_as<T: Scalar>(&mut self, slices: &[Slice], data: &[T]) -> Result<SliceStats> {
        check::<T>(self.dtype())?;
        self.set_slice(slices, bytemuck::cast_slice(data))
    }
}

impl NdArray {
    /// An array at `location` holding `data`, `T`s in C order of the array's shape (as
    /// [`NdArray::from_buffer`]); `params` must name `T`'s dtype ([`Scalar::DTYPE`]).
    ///
    /// # Errors
    /// [`Error::Dtype`] when `params` has no dtype or another one; as [`NdArray::from_buffer`].
    pub fn from_items<T: Scalar>(
        params: &ArrayParams,
        location: &Location,
        data: &[T],
    ) -> Result<NdArray> {
        check::<T>(params.dtype.as_deref())?;
        NdArray::from_buffer(params, location, bytemuck::cast_slice(data))
    }
}

#[cfg(feature = "ndarray")]
mod arrays {
    //! Conversions to and from `ndarray::ArrayD`.

    use super::{check, Scalar};
    use crate::error::{Error, Result};
    use crate::ndarray::{ArrayParams, ChunkStore, Location, NdArray, Slice};

    impl<S: ChunkStore> NdArray<S> {
        /// The selection `slices` as an `ndarray::ArrayD` of `T`s (the whole array for no
        /// slices).
        ///
        /// # Errors
        /// As [`NdArray::get_slice_as`].
        pub fn to_ndarray<T: Scalar>(&self, slices: &[Slice]) -> Result<::ndarray::ArrayD<T>> {
            let (items, shape) = self.get_slice_as::<T>(slices)?;
            ::ndarray::ArrayD::from_shape_vec(shape, items).map_err(|_| Error::Internal {
                what: "a selection's items fill its shape",
            })
        }
    }

    impl NdArray {
        /// An array at `location` holding `data` (any memory layout; stored in C order), of
        /// its shape: `params`' shape is replaced by `data`'s, and its dtype must name `T`.
        ///
        /// # Errors
        /// As [`NdArray::from_items`].
        pub fn from_ndarray<T: Scalar>(
            params: &ArrayParams,
            location: &Location,
            data: &::ndarray::ArrayD<T>,
        ) -> Result<NdArray> {
            check::<T>(params.dtype.as_deref())?;
            let mut params = params.clone();
            params.shape = data.shape().to_vec();
            match data.as_slice() {
                Some(items) => NdArray::from_items(&params, location, items),
                None => {
                    let items: Vec<T> = data.iter().copied().collect();
                    NdArray::from_items(&params, location, &items)
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn arrays_convert_both_ways_in_c_order() {
            let a = ::ndarray::ArrayD::from_shape_fn(vec![4, 5, 3], |ix| {
                (ix[0] * 100 + ix[1] * 10 + ix[2]) as i32
            });
            let params = ArrayParams::from_dtype(&[1], i32::DTYPE)
                .unwrap()
                .with_chunkshape(&[2, 3, 3])
                .with_blockshape(&[1, 2, 3]);
            let arr = NdArray::from_ndarray(&params, &Location::Memory, &a).unwrap();
            assert_eq!(arr.shape(), [4, 5, 3]);
            assert_eq!(arr.to_ndarray::<i32>(&[]).unwrap(), a);
            // A transposed (Fortran-order) view is stored in its logical C order.
            let t = a.t().to_owned().into_dyn();
            let arr = NdArray::from_ndarray(
                &ArrayParams::from_dtype(&[1], i32::DTYPE).unwrap(),
                &Location::Memory,
                &a.t().into_owned().into_dyn(),
            )
            .unwrap();
            assert_eq!(arr.shape(), [3, 5, 4]);
            assert_eq!(arr.to_ndarray::<i32>(&[]).unwrap(), t);
            let col = arr
                .to_ndarray::<i32>(&[Slice::FULL, Slice::index(2), Slice::index(1)])
                .unwrap();
            assert_eq!(col.as_slice().unwrap(), [120, 121, 122]);
            assert!(arr.to_ndarray::<u32>(&[]).is_err());
            let untyped = ArrayParams::new(&[1], 4);
            assert!(NdArray::from_ndarray(&untyped, &Location::Memory, &a).is_err());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtypes_name_types_in_the_machine_byte_order() {
        assert!(names::<f32>("<f4") == cfg!(target_endian = "little"));
        assert!(names::<f32>("=f4") && names::<f32>(f32::DTYPE) && names::<f32>(" f4 "));
        assert!(names::<u8>("|u1") && names::<u8>("<u1") && names::<u8>(">u1"));
        assert!(names::<i64>(i64::DTYPE) && names::<u16>(u16::DTYPE));
        assert!(!names::<f32>("<f8") && !names::<f32>("<i4") && !names::<f32>("|f4"));
        assert!(!names::<i32>("<i4x") && !names::<i32>("") && !names::<i8>("|S1"));
        let swapped = if cfg!(target_endian = "little") {
            ">f8"
        } else {
            "<f8"
        };
        assert!(!names::<f64>(swapped));
        assert_eq!(u8::DTYPE, "|u1");
        assert_eq!(
            f64::DTYPE,
            if cfg!(target_endian = "little") {
                "<f8"
            } else {
                ">f8"
            }
        );
    }

    #[test]
    fn typed_reads_and_writes_check_the_dtype() {
        let params = ArrayParams::from_dtype(&[6, 5], u16::DTYPE)
            .unwrap()
            .with_chunkshape(&[4, 3])
            .with_blockshape(&[2, 2]);
        let data: Vec<u16> = (0..30).map(|i| i * 1000).collect();
        let mut arr = NdArray::from_items(&params, &Location::Memory, &data).unwrap();
        let (all, shape) = arr.get_slice_as::<u16>(&[]).unwrap();
        assert_eq!((all, shape), (data.clone(), vec![6, 5]));
        arr.set_slice_as(&[Slice::range(1, 3), Slice::index(4)], &[7u16, 8])
            .unwrap();
        let (col, shape) = arr
            .get_slice_as::<u16>(&[Slice::FULL, Slice::index(4)])
            .unwrap();
        assert_eq!(
            (col, shape),
            (vec![4000, 7, 8, 19000, 24000, 29000], vec![6, 1])
        );
        // The bytes are the items' own.
        assert_eq!(&arr.to_vec().unwrap()[..4], [0, 0, 0xe8, 0x03]);
        let e = arr.get_slice_as::<i16>(&[]).unwrap_err();
        assert!(
            matches!(&e, Error::Dtype { dtype, .. } if dtype == u16::DTYPE),
            "{e}"
        );
        assert!(e.to_string().contains("does not hold i16 items"), "{e}");
        assert!(arr.set_slice_as(&[], &[0u32; 30]).is_err());
        // Too little data is set_slice's error; untyped params are refused.
        assert!(arr.set_slice_as(&[], &[0u16; 29]).is_err());
        let untyped = ArrayParams::new(&[30], 2);
        let e = NdArray::from_items(&untyped, &Location::Memory, &data).unwrap_err();
        assert!(
            matches!(&e, Error::Dtype { dtype, .. } if dtype.is_empty()),
            "{e}"
        );
        let raw = NdArray::from_buffer(&untyped, &Location::Memory, &[0; 60]).unwrap();
        assert!(raw.get_slice_as::<u16>(&[]).is_err(), "|S2 is not u16");
    }
}
