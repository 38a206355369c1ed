//! Keys resolved against a dataset's shape with NumPy's meaning, as `NDArray.__getitem__`
//! and Caterva2 give them: an integer drops its axis and must lie inside it, slices clamp
//! (negative bounds count from the end), missing trailing axes are whole, and lists of
//! coordinates are advanced indices (broadcast together, their axis placed where NumPy puts
//! it). The library's [`Slice`] keeps every axis; the shapes here are the ones NumPy gives.

use crate::parse::{IndexEntry, KeyItem};
use strata::ndarray::{DimSelection, Slice};

/// A basic key (integers and slices) resolved against a shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Basic {
    /// One library slice per axis (an integer as a one-item slice).
    pub slices: Vec<Slice>,
    /// The result's shape, NumPy's: integer axes dropped.
    pub shape: Vec<usize>,
    /// Whether the key covers the whole dataset in order (what Caterva2 answers with the
    /// stored file): no entries, or each one `0`/none to none/≥ the axis with step 1.
    pub whole: bool,
}

impl Basic {
    /// Items in the result.
    #[must_use]
    pub fn nitems(&self) -> u128 {
        self.shape.iter().map(|&d| d as u128).product()
    }
}

fn check_index(i: i64, axis: usize, len: usize) -> Result<i64, String> {
    let n = len as i128;
    let j = if i < 0 {
        i128::from(i) + n
    } else {
        i128::from(i)
    };
    if j < 0 || j >= n {
        return Err(format!(
            "index {i} is out of bounds for axis {axis} with size {len}"
        ));
    }
    Ok(j as i64)
}

fn too_many(given: usize, ndim: usize) -> String {
    format!("too many indices for array: array is {ndim}-dimensional, but {given} were indexed")
}

fn to_slice(k: &KeyItem, axis: usize, len: usize) -> Result<(Slice, bool), String> {
    match *k {
        KeyItem::Index(i) => Ok((Slice::index(check_index(i, axis, len)?), false)),
        KeyItem::Slice { start, stop, step } => {
            let step = step.unwrap_or(1);
            if step == 0 {
                return Err("slice step cannot be zero".into());
            }
            Ok((Slice::new(start, stop, step), true))
        }
    }
}

/// Resolves a basic key against `shape`.
///
/// # Errors
/// A NumPy-like message for more entries than axes, an integer outside its axis or a step
/// of 0.
pub fn basic(items: &[KeyItem], shape: &[usize]) -> Result<Basic, String> {
    if items.len() > shape.len() {
        return Err(too_many(items.len(), shape.len()));
    }
    let mut slices = Vec::with_capacity(shape.len());
    let mut out = Vec::with_capacity(shape.len());
    let mut whole = true;
    for (axis, &len) in shape.iter().enumerate() {
        let (s, keep) = match items.get(axis) {
            Some(k) => to_slice(k, axis, len)?,
            None => (Slice::FULL, true),
        };
        if let Some(k) = items.get(axis) {
            whole &= match *k {
                KeyItem::Index(_) => false,
                KeyItem::Slice { start, stop, step } => {
                    matches!(start, None | Some(0))
                        && stop.is_none_or(|e| e >= 0 && e as u64 >= len as u64)
                        && matches!(step, None | Some(1))
                }
            };
        }
        let sel = s.resolve(len).map_err(|e| e.to_string())?;
        if keep {
            out.push(sel.len);
        }
        slices.push(s);
    }
    Ok(Basic {
        slices,
        shape: out,
        whole,
    })
}

/// One axis of a resolved `indices` key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FancyAxis {
    /// An advanced axis: its coordinate for each point (one coordinate, broadcast, when it
    /// came from an integer or a one-item list).
    Points(Vec<usize>),
    /// A slice axis.
    Slice(Slice, DimSelection),
}

/// An `indices` key with at least one list, resolved against a shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fancy {
    /// One entry per axis of the dataset.
    pub axes: Vec<FancyAxis>,
    /// Points of the broadcast advanced axes.
    pub npoints: usize,
    /// Where the points' axis sits in the result: `Some(p)` when the advanced axes are next to
    /// each other (after `p` slice axes), `None` when they are not (the points' axis first).
    pub at: Option<usize>,
    /// The result's shape.
    pub shape: Vec<usize>,
}

impl Fancy {
    /// The coordinate of point `k` along advanced axis `axis`.
    #[must_use]
    pub fn coord(&self, axis: usize, k: usize) -> Option<usize> {
        match &self.axes[axis] {
            FancyAxis::Points(p) if p.len() == 1 => Some(p[0]),
            FancyAxis::Points(p) => p.get(k).copied(),
            FancyAxis::Slice(..) => None,
        }
    }

    /// Items in the result.
    #[must_use]
    pub fn nitems(&self) -> u128 {
        self.shape.iter().map(|&d| d as u128).product()
    }
}

/// What an `indices` key is: basic (no list in it) or fancy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Indexed {
    /// Integers, slices and nulls only.
    Basic(Basic),
    /// With lists of coordinates.
    Fancy(Fancy),
}

/// Resolves an `indices` key against `shape` with NumPy's advanced-indexing rules.
///
/// # Errors
/// A NumPy-like message for more entries than axes, a coordinate outside its axis, lists that
/// do not broadcast, or a step of 0.
pub fn indexed(entries: &[IndexEntry], shape: &[usize]) -> Result<Indexed, String> {
    if entries.len() > shape.len() {
        return Err(too_many(entries.len(), shape.len()));
    }
    if !entries.iter().any(|e| matches!(e, IndexEntry::Points(_))) {
        let items: Vec<KeyItem> = entries
            .iter()
            .map(|e| match e {
                IndexEntry::Index(i) => KeyItem::Index(*i),
                IndexEntry::Slice(k) => *k,
                _ => KeyItem::Slice {
                    start: None,
                    stop: None,
                    step: None,
                },
            })
            .collect();
        let mut b = basic(&items, shape)?;
        // A null is not a bound: `[null]` is whole like `[]`.
        b.whole &= !entries.iter().any(|e| matches!(e, IndexEntry::Index(_)));
        return Ok(Indexed::Basic(b));
    }
    let mut axes = Vec::with_capacity(shape.len());
    let mut lens: Vec<usize> = Vec::new();
    let mut adv_axes = Vec::new();
    for (axis, &len) in shape.iter().enumerate() {
        let entry = entries.get(axis).unwrap_or(&IndexEntry::Full);
        axes.push(match entry {
            IndexEntry::Points(p) => {
                let coords = p
                    .iter()
                    .map(|&i| check_index(i, axis, len).map(|j| j as usize))
                    .collect::<Result<Vec<_>, _>>()?;
                lens.push(coords.len());
                adv_axes.push(axis);
                FancyAxis::Points(coords)
            }
            IndexEntry::Index(i) | IndexEntry::Slice(KeyItem::Index(i)) => {
                adv_axes.push(axis);
                FancyAxis::Points(vec![check_index(*i, axis, len)? as usize])
            }
            IndexEntry::Slice(k) => {
                let (s, _) = to_slice(k, axis, len)?;
                let sel = s.resolve(len).map_err(|e| e.to_string())?;
                FancyAxis::Slice(s, sel)
            }
            IndexEntry::Full => FancyAxis::Slice(
                Slice::FULL,
                Slice::FULL.resolve(len).map_err(|e| e.to_string())?,
            ),
        });
    }
    let npoints = broadcast(&lens)?;
    let contiguous = adv_axes.windows(2).all(|w| w[1] == w[0] + 1);
    let before = adv_axes.first().copied().unwrap_or(0);
    let at = contiguous.then_some(before);
    let slice_lens: Vec<usize> = axes
        .iter()
        .filter_map(|a| match a {
            FancyAxis::Slice(_, sel) => Some(sel.len),
            FancyAxis::Points(_) => None,
        })
        .collect();
    let mut out = slice_lens.clone();
    out.insert(at.unwrap_or(0).min(out.len()), npoints);
    Ok(Indexed::Fancy(Fancy {
        axes,
        npoints,
        at,
        shape: out,
    }))
}

/// The broadcast length of lists of these lengths (NumPy: equal, or 1).
fn broadcast(lens: &[usize]) -> Result<usize, String> {
    let mut n = 1usize;
    let mut seen_other = false;
    for &l in lens {
        if l == 1 {
            continue;
        }
        if seen_other && l != n {
            let shapes: Vec<String> = lens.iter().map(|l| format!("({l},)")).collect();
            return Err(format!(
                "shape mismatch: indexing arrays could not be broadcast together with shapes {}",
                shapes.join(" ")
            ));
        }
        n = l;
        seen_other = true;
    }
    Ok(n)
}

/// A key on a frame of `nitems` items (an SChunk, one flat axis): the item range it picks.
/// An integer `n` is `n:n+1`, as python-blosc2's `SChunk.__getitem__` reads it.
///
/// # Errors
/// More than one entry, a step other than 1, or an integer outside the frame.
pub fn flat(items: &[KeyItem], nitems: u64) -> Result<std::ops::Range<u64>, String> {
    match items {
        [] => Ok(0..nitems),
        [KeyItem::Index(i)] => {
            let n = i128::from(nitems);
            let j = if *i < 0 {
                i128::from(*i) + n
            } else {
                i128::from(*i)
            };
            if j < 0 || j >= n {
                return Err(format!(
                    "index {i} is out of bounds for a frame of {nitems} items"
                ));
            }
            Ok(j as u64..j as u64 + 1)
        }
        [KeyItem::Slice { start, stop, step }] => {
            if !matches!(step, None | Some(1)) {
                return Err("a frame is sliced with step 1 only".into());
            }
            let len = usize::try_from(nitems).map_err(|_| "the frame is too large".to_string())?;
            let sel = Slice::new(*start, *stop, 1)
                .resolve(len)
                .map_err(|e| e.to_string())?;
            Ok(sel.start as u64..(sel.start + sel.len) as u64)
        }
        _ => Err(too_many(items.len(), 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{indices, key};

    fn b(k: &str, shape: &[usize]) -> Result<Basic, String> {
        basic(&key(k).unwrap(), shape)
    }

    #[test]
    fn numpy_shapes() {
        assert_eq!(b("3", &[1000]).unwrap().shape, Vec::<usize>::new());
        assert_eq!(b("3, 1:4", &[10, 20]).unwrap().shape, [3]);
        assert_eq!(b("-5:", &[1000]).unwrap().shape, [5]);
        assert_eq!(b("2000:3000", &[1000]).unwrap().shape, [0]);
        assert_eq!(b("5:2", &[1000]).unwrap().shape, [0]);
        assert_eq!(b("::-3", &[10]).unwrap().shape, [4]);
        assert_eq!(b("", &[4, 5]).unwrap().shape, [4, 5]);
        assert!(b("", &[4, 5]).unwrap().whole);
        assert!(b("0:2000, 0:2000", &[2000, 2000]).unwrap().whole);
        assert!(b(":, :", &[2000, 2000]).unwrap().whole);
        assert!(!b("0:1999", &[2000]).unwrap().whole);
        assert!(!b("0", &[2000]).unwrap().whole);
        assert!(!b("::2", &[2000]).unwrap().whole);
        assert_eq!(
            b("5000", &[1000]).unwrap_err(),
            "index 5000 is out of bounds for axis 0 with size 1000"
        );
        assert!(b("1,2", &[5]).is_err());
        assert_eq!(b("0:10:0", &[5]).unwrap_err(), "slice step cannot be zero");
        assert_eq!(b("", &[]).unwrap().shape, Vec::<usize>::new());
    }

    fn f(j: &str, shape: &[usize]) -> Result<Indexed, String> {
        indexed(&indices(j, 1000).unwrap(), shape)
    }

    #[test]
    fn advanced_indexing_as_numpy() {
        // a[[1,5,9], 4, 0:10, :] on (10, 8, 20, 3): advanced axes 0 and 1 are adjacent.
        let Indexed::Fancy(x) = f(r#"[[1,5,9],4,"0:10",null]"#, &[10, 8, 20, 3]).unwrap() else {
            panic!()
        };
        assert_eq!(
            (x.shape.clone(), x.at, x.npoints),
            (vec![3, 10, 3], Some(0), 3)
        );
        // a[:, [1,2]] on (4, 5): after one slice axis.
        let Indexed::Fancy(x) = f("[null,[1,2]]", &[4, 5]).unwrap() else {
            panic!()
        };
        assert_eq!((x.shape.clone(), x.at), (vec![4, 2], Some(1)));
        // a[[0,1], :, 2] on (3, 4, 5): separated, so the points come first.
        let Indexed::Fancy(x) = f("[[0,1],null,2]", &[3, 4, 5]).unwrap() else {
            panic!()
        };
        assert_eq!((x.shape.clone(), x.at), (vec![2, 4], None));
        assert_eq!(x.coord(2, 1), Some(2));
        // broadcasting
        let Indexed::Fancy(x) = f("[[0,1,2],[3]]", &[3, 5]).unwrap() else {
            panic!()
        };
        assert_eq!(x.shape, [3]);
        assert!(f("[[0,1],[1,2,3]]", &[3, 5]).is_err());
        assert!(f("[[0,10]]", &[3]).is_err());
        assert_eq!(
            f("[[-1]]", &[3]).unwrap(),
            Indexed::Fancy(Fancy {
                axes: vec![FancyAxis::Points(vec![2])],
                npoints: 1,
                at: Some(0),
                shape: vec![1]
            })
        );
        // no list: basic
        let Indexed::Basic(x) = f(r#"[1,"2:4"]"#, &[3, 5]).unwrap() else {
            panic!()
        };
        assert_eq!(x.shape, [2]);
        // an int given as a slice string is still an index
        let Indexed::Fancy(x) = f(r#"[[0,1],"2"]"#, &[3, 5]).unwrap() else {
            panic!()
        };
        assert_eq!(x.shape, [2]);
    }

    #[test]
    fn frame_ranges() {
        assert_eq!(flat(&key("").unwrap(), 100).unwrap(), 0..100);
        assert_eq!(flat(&key("5").unwrap(), 100).unwrap(), 5..6);
        assert_eq!(flat(&key("-1").unwrap(), 100).unwrap(), 99..100);
        assert_eq!(flat(&key("90:200").unwrap(), 100).unwrap(), 90..100);
        assert!(flat(&key("::2").unwrap(), 100).is_err());
        assert!(flat(&key("100").unwrap(), 100).is_err());
        assert!(flat(&key("1,2").unwrap(), 100).is_err());
    }
}
