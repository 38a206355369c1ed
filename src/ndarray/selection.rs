//! Selections with NumPy's meaning: one `start:stop:step` slice per dimension.
//!
//! Each [`Slice`] resolves against its dimension's length as Python's `slice.indices` does:
//! negative `start`/`stop` count from the end, anything outside the dimension is clipped, and
//! a negative `step` walks backwards (the result is in reversed order). A selection that lies
//! partly or wholly outside the array gives a clipped or empty result, never an error. Unlike
//! NumPy's integer indexing, [`Slice::index`] keeps its dimension (with length 1).
//!
//! Format: none (NumPy basic slicing, `PySlice_GetIndicesEx`).
//!
//! ```
//! use strata::ndarray::{Selection, Slice};
//! // a (5, 5) array sliced [4:6, 4:6] is (1, 1)
//! let sel = Selection::new(&[5, 5], &[Slice::range(4, 6), Slice::range(4, 6)]).unwrap();
//! assert_eq!(sel.shape(), [1, 1]);
//! // [::4] along 360 gives 90 items; [::-1] reverses
//! let sel = Selection::new(&[360], &[Slice::FULL.step_by(4)]).unwrap();
//! assert_eq!(sel.shape(), [90]);
//! let rev = Selection::new(&[10], &[Slice::FULL.step_by(-3)]).unwrap();
//! assert_eq!(rev.dims()[0].indices().collect::<Vec<_>>(), [9, 6, 3, 0]);
//! ```
#![forbid(unsafe_code)]

use crate::error::{Error, Expected, Result};

/// One dimension of a selection, as Python's `slice(start, stop, step)`.
///
/// `None` takes the default for the step's direction (the whole dimension).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Slice {
    /// First index (negative counts from the end); `None` = the start for `step`'s direction.
    pub start: Option<i64>,
    /// Index past the last (negative counts from the end); `None` = past the end.
    pub stop: Option<i64>,
    /// Step between indices; not 0. Negative walks backwards.
    pub step: i64,
}

impl Slice {
    /// The whole dimension, `[:]`.
    pub const FULL: Slice = Slice {
        start: None,
        stop: None,
        step: 1,
    };

    /// `start:stop:step`.
    #[must_use]
    pub fn new(start: Option<i64>, stop: Option<i64>, step: i64) -> Slice {
        Slice { start, stop, step }
    }

    /// `start:stop`.
    #[must_use]
    pub fn range(start: i64, stop: i64) -> Slice {
        Slice::new(Some(start), Some(stop), 1)
    }

    /// The single index `i` (negative counts from the end), keeping the dimension: `i:i+1`.
    /// An index outside the dimension selects nothing.
    #[must_use]
    pub fn index(i: i64) -> Slice {
        // `-1:0` would be empty: the last item is `-1:`.
        let stop = if i == -1 { None } else { i.checked_add(1) };
        Slice::new(Some(i), stop, 1)
    }

    /// This slice with step `step`.
    #[must_use]
    pub fn step_by(self, step: i64) -> Slice {
        Slice { step, ..self }
    }

    /// The indices this slice selects in a dimension of `len` items.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] if `step` is 0.
    pub fn resolve(&self, len: usize) -> Result<DimSelection> {
        if self.step == 0 {
            return Err(Error::range("slice step", 0, Expected::OneOf("nonzero")));
        }
        let n = len as i128;
        let step = i128::from(self.step);
        // As PyObject slice.indices: clip into [0, n] going forwards, [-1, n-1] backwards.
        let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
        let clip = |v: Option<i64>, default: i128| match v {
            None => default,
            Some(v) => {
                let v = i128::from(v);
                let v = if v < 0 { v + n } else { v };
                v.clamp(lo, hi)
            }
        };
        let (start, stop) = if step > 0 {
            (clip(self.start, 0), clip(self.stop, n))
        } else {
            (clip(self.start, n - 1), clip(self.stop, -1))
        };
        let span = if step > 0 { stop - start } else { start - stop };
        let count = if span > 0 {
            (span + step.abs() - 1) / step.abs()
        } else {
            0
        };
        // count <= len and a non-empty start lies in [0, len): both fit.
        Ok(DimSelection {
            start: if count > 0 { start as usize } else { 0 },
            step: self.step,
            len: count as usize,
        })
    }
}

impl From<std::ops::Range<i64>> for Slice {
    fn from(r: std::ops::Range<i64>) -> Slice {
        Slice::range(r.start, r.end)
    }
}

impl From<std::ops::RangeFrom<i64>> for Slice {
    fn from(r: std::ops::RangeFrom<i64>) -> Slice {
        Slice::new(Some(r.start), None, 1)
    }
}

impl From<std::ops::RangeTo<i64>> for Slice {
    fn from(r: std::ops::RangeTo<i64>) -> Slice {
        Slice::new(None, Some(r.end), 1)
    }
}

impl From<std::ops::RangeFull> for Slice {
    fn from(_: std::ops::RangeFull) -> Slice {
        Slice::FULL
    }
}

impl From<i64> for Slice {
    fn from(i: i64) -> Slice {
        Slice::index(i)
    }
}

/// The indices one dimension of a selection picks: `start + k * step` for `k` in `0..len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DimSelection {
    /// The first index picked (0 when `len` is 0).
    pub start: usize,
    /// The step, not 0; negative goes backwards.
    pub step: i64,
    /// How many indices are picked.
    pub len: usize,
}

impl DimSelection {
    /// The indices picked, in output order.
    pub fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len).map(move |k| {
            let off = k as i128 * i128::from(self.step);
            (self.start as i128 + off) as usize
        })
    }

    /// The lowest index picked (meaningless when `len` is 0).
    #[must_use]
    pub fn lowest(&self) -> usize {
        if self.step > 0 || self.len == 0 {
            self.start
        } else {
            self.start - (self.len - 1) * self.step.unsigned_abs() as usize
        }
    }

    /// The distance between two picked indices: `|step|`.
    #[must_use]
    pub fn stride(&self) -> usize {
        // |step| <= i64::MAX + 1 fits in usize on the 64-bit targets Strata supports; when
        // len > 1 it is bounded by the dimension length anyway.
        usize::try_from(self.step.unsigned_abs()).unwrap_or(usize::MAX)
    }

    /// Whether the output order is the reverse of the array order.
    #[must_use]
    pub fn reversed(&self) -> bool {
        self.step < 0
    }
}

/// A resolved selection: one [`DimSelection`] per dimension and the result's shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Selection {
    dims: Vec<DimSelection>,
    shape: Vec<usize>,
}

impl Selection {
    /// Resolves `slices` against an array of `shape` (items). Dimensions past the end of
    /// `slices` are taken whole. For a 0-d array (`shape` empty) the selection is its one item.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for more slices than dimensions or a step of 0.
    pub fn new(shape: &[usize], slices: &[Slice]) -> Result<Selection> {
        if slices.len() > shape.len() {
            return Err(Error::range(
                "slices (at most one per dimension)",
                slices.len(),
                Expected::at_most(shape.len()),
            ));
        }
        let dims = shape
            .iter()
            .enumerate()
            .map(|(i, &len)| slices.get(i).unwrap_or(&Slice::FULL).resolve(len))
            .collect::<Result<Vec<_>>>()?;
        let shape = dims.iter().map(|d| d.len).collect();
        Ok(Selection { dims, shape })
    }

    /// The whole array of `shape`.
    #[must_use]
    pub fn full(shape: &[usize]) -> Selection {
        let dims: Vec<DimSelection> = shape
            .iter()
            .map(|&len| DimSelection {
                start: 0,
                step: 1,
                len,
            })
            .collect();
        Selection {
            shape: shape.to_vec(),
            dims,
        }
    }

    /// The box `[start, stop)` (C-Blosc2's `b2nd_get_slice_cbuffer` arguments), clipped to
    /// `shape`; negative values count from the end.
    ///
    /// # Errors
    /// [`Error::Mismatch`] if `start` or `stop` has not one entry per dimension.
    pub fn from_start_stop(shape: &[usize], start: &[i64], stop: &[i64]) -> Result<Selection> {
        for (given, what) in [
            (start.len(), "start entries (one per dimension)"),
            (stop.len(), "stop entries (one per dimension)"),
        ] {
            if given != shape.len() {
                return Err(Error::mismatch(what, shape.len(), given));
            }
        }
        let slices: Vec<Slice> = start
            .iter()
            .zip(stop)
            .map(|(&a, &b)| Slice::range(a, b))
            .collect();
        Selection::new(shape, &slices)
    }

    /// Per-dimension selections.
    #[must_use]
    pub fn dims(&self) -> &[DimSelection] {
        &self.dims
    }

    /// The result's shape, in items.
    #[must_use]
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Items selected: `prod(shape)` (1 for a 0-d array), or `None` on overflow.
    #[must_use]
    pub fn nitems(&self) -> Option<usize> {
        super::geometry::checked_prod(&self.shape)
    }

    /// Whether nothing is selected.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Python's `list(range(n))[slice(start, stop, step)]`, written out directly.
    fn python(n: usize, s: Slice) -> Vec<usize> {
        let n = n as i64;
        let norm = |v: i64| if v < 0 { v + n } else { v };
        let mut out = Vec::new();
        if s.step > 0 {
            let start = s.start.map_or(0, |v| norm(v).clamp(0, n));
            let stop = s.stop.map_or(n, |v| norm(v).clamp(0, n));
            let mut i = start;
            while i < stop {
                out.push(i as usize);
                i += s.step;
            }
        } else {
            let start = s.start.map_or(n - 1, |v| norm(v).clamp(-1, n - 1));
            let stop = s.stop.map_or(-1, |v| norm(v).clamp(-1, n - 1));
            let mut i = start;
            while i > stop {
                out.push(i as usize);
                i += s.step;
            }
        }
        out
    }

    #[test]
    fn matches_python_slicing() {
        let values = [
            None,
            Some(-12),
            Some(-7),
            Some(-1),
            Some(0),
            Some(1),
            Some(3),
            Some(6),
            Some(7),
            Some(40),
        ];
        for n in [0usize, 1, 2, 7] {
            for start in values {
                for stop in values {
                    for step in [-8i64, -3, -2, -1, 1, 2, 3, 9] {
                        let s = Slice::new(start, stop, step);
                        let got: Vec<usize> = s.resolve(n).unwrap().indices().collect();
                        assert_eq!(got, python(n, s), "n={n} {s:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn issue_examples() {
        let sel = Selection::new(&[5, 5], &[Slice::range(4, 6), Slice::range(4, 6)]).unwrap();
        assert_eq!(sel.shape(), [1, 1]);
        assert_eq!(sel.dims()[0].start, 4);
        let sel = Selection::new(&[360], &[Slice::FULL.step_by(4)]).unwrap();
        assert_eq!(sel.shape(), [90]);
        let sel = Selection::new(&[5, 5], &[Slice::range(7, 9)]).unwrap();
        assert_eq!(sel.shape(), [0, 5]);
        assert!(sel.is_empty());
        let sel = Selection::new(&[5], &[Slice::index(-1)]).unwrap();
        assert_eq!((sel.dims()[0].start, sel.shape()[0]), (4, 1));
        let sel = Selection::new(&[5], &[Slice::index(5)]).unwrap();
        assert_eq!(sel.shape(), [0]);
        let sel = Selection::new(&[5], &[Slice::index(-6)]).unwrap();
        assert_eq!(sel.shape(), [0]);
        let sel = Selection::new(&[5], &[Slice::index(i64::MAX)]).unwrap();
        assert_eq!(sel.shape(), [0]);
    }

    #[test]
    fn extreme_values_do_not_overflow() {
        let s = Slice::new(Some(i64::MIN), Some(i64::MAX), i64::MIN);
        assert_eq!(s.resolve(10).unwrap().len, 0);
        let s = Slice::new(Some(i64::MAX), Some(i64::MIN), i64::MIN);
        let d = s.resolve(10).unwrap();
        assert_eq!((d.start, d.len, d.lowest()), (9, 1, 9));
        let s = Slice::new(None, None, i64::MAX);
        assert_eq!(s.resolve(10).unwrap().indices().collect::<Vec<_>>(), [0]);
    }

    #[test]
    fn errors_and_defaults() {
        assert_eq!(Slice::FULL.step_by(0).resolve(3).unwrap_err().code(), -12);
        assert!(Selection::new(&[3], &[Slice::FULL, Slice::FULL]).is_err());
        let sel = Selection::new(&[3, 4], &[Slice::range(1, 2)]).unwrap();
        assert_eq!(sel.shape(), [1, 4]);
        let sel = Selection::new(&[], &[]).unwrap();
        assert_eq!((sel.shape().len(), sel.nitems()), (0, Some(1)));
        let sel = Selection::from_start_stop(&[5, 7], &[1, -3], &[3, 100]).unwrap();
        assert_eq!(sel.shape(), [2, 3]);
        assert!(Selection::from_start_stop(&[5, 7], &[1], &[3, 4]).is_err());
        assert_eq!(Selection::full(&[2, 3]).shape(), [2, 3]);
        let r: Slice = (2..5).into();
        assert_eq!(r, Slice::range(2, 5));
        let r: Slice = (..).into();
        assert_eq!(r, Slice::FULL);
    }
}
