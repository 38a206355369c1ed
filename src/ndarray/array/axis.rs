//! Changes along the axes of an [`NdArray`]: resize with a start position, append, insert
//! and delete along one axis, and new arrays that concatenate or stack others, with the
//! chunk layouts C-Blosc2's `b2nd_resize`, `b2nd_insert`, `b2nd_append`, `b2nd_delete`
//! and `b2nd_concatenate` give.
//!
//! * [`NdArray::resize_at`]: where a dimension grows, whole chunks of zeros come in at the
//!   start position (index entries only); where it shrinks, the chunks from the start
//!   position go. Away from the end of a dimension the start and the change must be whole
//!   chunks, since chunks are moved, never cut.
//! * [`NdArray::append`] / [`NdArray::insert`]: the array grows as `resize_at` says and
//!   the data is written with the slice engine, so only the chunks holding the new items
//!   are written: appending one time step to a file of N steps writes the chunks of the
//!   last chunk row along that axis (new ones appended to the frame, a partly filled one
//!   updated where it is), never the rest of the file.
//! * [`NdArray::delete`]: the shrinking `resize_at`.
//! * [`NdArray::concatenate`] / [`NdArray::stack`]: a new array with the first array's
//!   partitions and compression, built chunk by chunk in order; a chunk that lies inside
//!   one source, on that source's chunk grid and with its partitions, is copied as stored
//!   (as `b2nd_concatenate` copies chunks when partitions agree), the others are built from
//!   slices of the sources.
//!
//! Every check (axis, positions, data length, partitions, read-only handles) is made before
//! anything is written. Format: c-blosc2 `blosc/b2nd.c`; `docs/b2nd.md`.
#![forbid(unsafe_code)]

use super::{ArrayParams, NdArray, APPEND_BATCH};
use crate::chunk::special_chunk_ctx;
use crate::error::{to_i64, Error, Expected, Result};
use crate::format::b2nd::{B2ndMeta, LEGACY_METALAYER, METALAYER};
use crate::format::chunk::SpecialType;
use crate::frame::SyncPolicy;
use crate::ndarray::geometry::{shape_i64, Geometry};
use crate::ndarray::selection::Slice;
use crate::ndarray::slice::{build_chunk, build_chunks};
use crate::ndarray::store::{ChunkSource, ChunkStore};
use crate::schunk::{Location, SChunk};
use std::borrow::Cow;

/// Whether chunk `coords` (of chunks `chunkshape`) starts inside `[start, start + len)` of
/// some dimension: C-Blosc2's rule for the chunks a resize inserts or deletes.
fn in_moved_band(coords: &[usize], chunkshape: &[usize], start: &[usize], len: &[usize]) -> bool {
    (0..coords.len()).any(|d| {
        let at = coords[d] * chunkshape[d];
        start[d] <= at && at < start[d] + len[d]
    })
}

impl NdArray<SChunk> {
    /// Changes the shape to `new_shape` (items, same number of dimensions), at the end of
    /// each dimension, as `b2nd_resize`: chunks outside the new grid are deleted, new ones
    /// are special zero chunks, and the metalayer is updated in place. Items that the array
    /// gains read as zeros, even where an edge chunk still held old values past the old shape.
    ///
    /// Each chunk change is its own commit, and the metalayer is written last: a write that
    /// fails part-way leaves a frame whose metalayer may not match its chunks.
    ///
    /// # Errors
    /// As [`NdArray::resize_at`].
    pub fn resize(&mut self, new_shape: &[usize]) -> Result<()> {
        self.resize_at(new_shape, None)
    }

    /// Changes the shape to `new_shape` with the change placed at `start` (one position per
    /// dimension; `None`: at the end of each), as `b2nd_resize` with a start: where a
    /// dimension grows, zero chunks are inserted from `start` (the items after it move
    /// up); where it shrinks, the items from `start` go. Away from a dimension's end,
    /// `start` and the change must be whole chunks. Items gained at the end read as zeros;
    /// items gained inside are zeros.
    ///
    /// ```
    /// use strata::ndarray::{ArrayParams, Location, NdArray};
    /// let data: Vec<u8> = (0..8).collect();
    /// let params = ArrayParams::new(&[8], 1).with_chunkshape(&[2]).with_blockshape(&[2]);
    /// let mut arr = NdArray::from_buffer(&params, &Location::Memory, &data)?;
    /// arr.resize_at(&[10], Some(&[4]))?; // two zeros at 4
    /// assert_eq!(arr.to_vec()?, [0, 1, 2, 3, 0, 0, 4, 5, 6, 7]);
    /// arr.resize_at(&[6], Some(&[2]))?; // four items from 2 go
    /// assert_eq!(arr.to_vec()?, [0, 1, 4, 5, 6, 7]);
    /// # Ok::<(), strata::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Mismatch`] for another number of dimensions (of the shape or of `start`);
    /// [`Error::OutOfRange`] for a start past a dimension's end, or a start or change that is
    /// not whole chunks away from the end; [`Error::Partition`] for growing a dimension whose
    /// chunkshape is 0; [`Error::Io`] for an array opened read-only — all before anything is
    /// written; then errors of the store and of compression.
    pub fn resize_at(&mut self, new_shape: &[usize], start: Option<&[usize]>) -> Result<()> {
        self.reshape_grid(new_shape, start, true)
    }

    /// The checks of [`NdArray::resize_at`]: the new metalayer and geometry.
    fn check_resize(
        &self,
        new_shape: &[usize],
        start: Option<&[usize]>,
    ) -> Result<(B2ndMeta, Geometry)> {
        let ndim = self.meta.ndim();
        if new_shape.len() != ndim {
            let what = "dimensions of the new shape (the array's)";
            return Err(Error::mismatch(what, ndim, new_shape.len()));
        }
        let old = self.geom.shape();
        if let Some(start) = start {
            if start.len() != ndim {
                let what = "dimensions of the resize start (the array's)";
                return Err(Error::mismatch(what, ndim, start.len()));
            }
            for d in 0..ndim {
                if start[d] > old[d] {
                    let what = "resize start (at most the dimension's length)";
                    return Err(Error::range(what, start[d], Expected::at_most(old[d])));
                }
                let (new, cs) = (new_shape[d], self.geom.chunkshape()[d]);
                let at_end = if new >= old[d] {
                    start[d] == old[d]
                } else {
                    start[d] + (old[d] - new) == old[d]
                };
                if new != old[d] && !at_end {
                    let multiple = Expected::MultipleOf(to_i64(cs));
                    if cs == 0 || start[d] % cs != 0 {
                        let what = "resize start away from the end (whole chunks)";
                        return Err(Error::range(what, start[d], multiple));
                    }
                    if new.abs_diff(old[d]) % cs != 0 {
                        let what =
                            "items a resize adds or removes away from the end (whole chunks)";
                        return Err(Error::range(what, new.abs_diff(old[d]), multiple));
                    }
                }
            }
        }
        let meta = B2ndMeta {
            shape: shape_i64(new_shape)?,
            ..self.meta.clone()
        };
        let geom = Geometry::new(&meta, self.geom.typesize())?;
        self.store.check_writable()?;
        Ok((meta, geom))
    }

    /// [`NdArray::resize_at`], zeroing the items gained at the end of kept edge chunks only
    /// when `zero_gained` (not when the caller writes them next).
    fn reshape_grid(
        &mut self,
        new_shape: &[usize],
        start: Option<&[usize]>,
        zero_gained: bool,
    ) -> Result<()> {
        let (meta, geom) = self.check_resize(new_shape, start)?;
        self.new_version();
        let old_shape = self.geom.shape().to_vec();
        let shrunk: Vec<usize> = old_shape
            .iter()
            .zip(new_shape)
            .map(|(&o, &n)| o.min(n))
            .collect();
        let chunkshape = self.geom.chunkshape().to_vec();
        // Chunks starting in the removed bands go, last first.
        let removed: Vec<usize> = old_shape.iter().zip(&shrunk).map(|(o, s)| o - s).collect();
        let cut_at = start.unwrap_or(&shrunk);
        for nchunk in (0..self.geom.nchunks()).rev() {
            let coords = self.geom.chunk_coords(nchunk);
            if in_moved_band(&coords, &chunkshape, cut_at, &removed) {
                ChunkStore::delete_chunk(&mut self.store, nchunk)?;
            }
        }
        // Chunks starting in the added bands come in as zeros, first first.
        let added: Vec<usize> = new_shape.iter().zip(&shrunk).map(|(n, s)| n - s).collect();
        let grow_at = start.unwrap_or(&shrunk);
        if geom.nchunks() > 0 && added.iter().any(|&a| a > 0) {
            let zero = special_chunk_ctx(
                &self.ctx,
                &self.cparams,
                SpecialType::Zero,
                geom.chunksize(),
                None,
            )?;
            for nchunk in 0..geom.nchunks() {
                let coords = geom.chunk_coords(nchunk);
                if in_moved_band(&coords, &chunkshape, grow_at, &added) {
                    ChunkStore::insert_chunk(&mut self.store, nchunk, zero.clone())?;
                }
            }
        }
        self.set_meta(meta, geom)?;
        if !zero_gained {
            return Ok(());
        }
        // Items gained at the end of kept edge chunks may hold stale values (from a shrink,
        // or another writer): zero them where they are not zeros already.
        for (d, (&old, &new)) in old_shape.iter().zip(new_shape).enumerate() {
            if new > old && old > 0 && grow_at[d] == old {
                let mut slices = vec![Slice::FULL; d + 1];
                slices[d] = Slice::range(old as i64, new as i64);
                let (gained, _) = self.get_slice_vec(&slices)?;
                if gained.iter().any(|&b| b != 0) {
                    self.set_slice(&slices, &vec![0; gained.len()])?;
                }
            }
        }
        Ok(())
    }

    /// Checks `axis` and the length of `data` for items along it; returns how many items
    /// along `axis` `data` holds.
    fn items_along(&self, axis: usize, data: &[u8]) -> Result<usize> {
        let ndim = self.meta.ndim();
        if axis >= ndim {
            return Err(Error::range("axis", axis, Expected::Below(to_i64(ndim))));
        }
        let slab: usize = self
            .geom
            .shape()
            .iter()
            .enumerate()
            .filter(|&(d, _)| d != axis)
            .map(|(_, &n)| n)
            .product::<usize>()
            * self.geom.typesize();
        if data.is_empty() {
            return Ok(0);
        }
        if slab == 0 || !data.len().is_multiple_of(slab) {
            let what = "bytes of data along the axis (whole slabs of the other dimensions)";
            return Err(Error::range(
                what,
                data.len(),
                Expected::MultipleOf(to_i64(slab)),
            ));
        }
        Ok(data.len() / slab)
    }

    /// Appends `data` along `axis`, as `b2nd_append`: `data` holds whole slabs (the items
    /// of every other dimension, C order) and the array grows by that many items along
    /// `axis`. Only the chunks holding the new items are written: appending one time step
    /// costs one step's chunks, not a rewrite of the file. Returns the new length along
    /// `axis`.
    ///
    /// ```
    /// use strata::ndarray::{ArrayParams, Location, NdArray};
    /// // a model writing one 2 x 3 time step per call
    /// let params = ArrayParams::from_dtype(&[0, 2, 3], "<u2")?
    ///     .with_chunkshape(&[4, 2, 3])
    ///     .with_blockshape(&[2, 2, 3]);
    /// let mut arr = NdArray::zeros(&params, &Location::Memory)?;
    /// for t in 0..5u16 {
    ///     let step: Vec<u8> = (0..6).flat_map(|i| (t * 10 + i).to_le_bytes()).collect();
    ///     assert_eq!(arr.append(0, &step)?, usize::from(t) + 1);
    /// }
    /// assert_eq!(arr.shape(), [5, 2, 3]);
    /// assert_eq!(arr.get_slice_as::<u16>(&[])?.0[24..], [40, 41, 42, 43, 44, 45]);
    /// # Ok::<(), strata::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for an axis past the last one or `data` that is not whole
    /// slabs; [`Error::Io`] for an array opened read-only — all before anything is written;
    /// then errors of the store and of compression.
    pub fn append(&mut self, axis: usize, data: &[u8]) -> Result<usize> {
        let at = self.geom.shape().get(axis).copied().unwrap_or(0);
        self.insert(axis, at, data)
    }

    /// Inserts `data` (whole slabs, as [`NdArray::append`]) along `axis` before item
    /// `position`, as `b2nd_insert`: at the end this appends; elsewhere `position` and the
    /// number of items inserted must be whole chunks along `axis` (zero chunks come in, the
    /// chunks after them move, then the data is written). Returns the new length along
    /// `axis`.
    ///
    /// # Errors
    /// As [`NdArray::append`]; [`Error::OutOfRange`] for a position past the end, or one
    /// (or a number of items) that is not whole chunks away from the end.
    pub fn insert(&mut self, axis: usize, position: usize, data: &[u8]) -> Result<usize> {
        let n = self.items_along(axis, data)?;
        let len = self.geom.shape()[axis];
        if position > len {
            let what = "insert position (at most the axis' length)";
            return Err(Error::range(what, position, Expected::at_most(len)));
        }
        if n == 0 {
            self.store.check_writable()?;
            return Ok(len);
        }
        let mut new_shape = self.geom.shape().to_vec();
        new_shape[axis] += n;
        let at_end = position == len;
        if at_end && axis == 0 && len.is_multiple_of(self.geom.chunkshape()[0]) {
            return self.append_rows(&new_shape, data);
        }
        let mut start = vec![0; new_shape.len()];
        start[axis] = position;
        self.reshape_grid(&new_shape, (!at_end).then_some(&start[..]), false)?;
        let mut slices = vec![Slice::FULL; axis + 1];
        slices[axis] = Slice::range(position as i64, (position + n) as i64);
        self.set_slice(&slices, data)?;
        Ok(len + n)
    }

    /// Appends `data` along the first axis when the array ends on a chunk edge there: the
    /// new items fill new rows of chunks, the last ones in the chunk order, so they are
    /// compressed from `data` and appended in one commit a batch (C-Blosc2 does so when the
    /// data is one chunk), then the metalayer says the new shape.
    fn append_rows(&mut self, new_shape: &[usize], data: &[u8]) -> Result<usize> {
        let (meta, geom) = self.check_resize(new_shape, None)?;
        let mut rows = new_shape.to_vec();
        rows[0] -= self.geom.shape()[0];
        let rows_meta = B2ndMeta {
            shape: shape_i64(&rows)?,
            ..self.meta.clone()
        };
        let rows_geom = Geometry::new(&rows_meta, self.geom.typesize())?;
        self.new_version();
        let store = &mut self.store;
        build_chunks(&self.ctx, &self.cparams, &rows_geom, data, |chunks| {
            store.append_chunks(chunks).map(|_| ())
        })?;
        self.set_meta(meta, geom)?;
        Ok(new_shape[0])
    }

    /// Writes `meta` to the frame and makes it (and `geom`) the array's.
    fn set_meta(&mut self, meta: B2ndMeta, geom: Geometry) -> Result<()> {
        let name = if self.store.meta(METALAYER).is_some() {
            METALAYER
        } else {
            LEGACY_METALAYER
        };
        self.store.meta_update(name, &meta.to_bytes())?;
        self.meta = meta;
        self.geom = geom;
        self.set_nd();
        Ok(())
    }

    /// Deletes `len` items along `axis` from item `start`, as `b2nd_delete`: at the end the
    /// array shrinks; elsewhere `start` and `len` must be whole chunks along `axis` (their
    /// chunks go, the ones after them move). Returns the new length along `axis`.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for an axis past the last one, a range past the end, or one
    /// that is not whole chunks away from the end; [`Error::Io`] for an array opened
    /// read-only — all before anything is written; then errors of the store.
    pub fn delete(&mut self, axis: usize, start: usize, len: usize) -> Result<usize> {
        let ndim = self.meta.ndim();
        if axis >= ndim {
            return Err(Error::range("axis", axis, Expected::Below(to_i64(ndim))));
        }
        let have = self.geom.shape()[axis];
        let end = start.checked_add(len).filter(|&e| e <= have);
        let Some(end) = end else {
            let what = "end of the items to delete (at most the axis' length)";
            return Err(Error::range(
                what,
                start.saturating_add(len),
                Expected::at_most(have),
            ));
        };
        let mut new_shape = self.geom.shape().to_vec();
        new_shape[axis] -= len;
        let mut at = vec![0; ndim];
        at[axis] = start;
        self.resize_at(&new_shape, (end != have).then_some(&at[..]))?;
        Ok(have - len)
    }

    /// A new array at `location` holding `arrays` one after the other along `axis`, as
    /// `blosc2.concat` / `b2nd_concatenate`: every array has the same number of dimensions,
    /// typesize, dtype and shape except along `axis`. The result has the first array's
    /// partitions, dtype and compression; its chunks are built in order, and one that lies
    /// inside one array, on its chunk grid and with its partitions, is copied as stored.
    ///
    /// ```
    /// use strata::ndarray::{ArrayParams, Location, NdArray};
    /// let params = ArrayParams::new(&[2, 2], 1).with_chunkshape(&[2, 2]).with_blockshape(&[1, 2]);
    /// let a = NdArray::from_buffer(&params, &Location::Memory, &[1, 2, 3, 4])?;
    /// let b = NdArray::from_buffer(&params, &Location::Memory, &[5, 6, 7, 8])?;
    /// let ab = NdArray::concatenate(&[&a, &b], 1, &Location::Memory)?;
    /// assert_eq!((ab.shape(), ab.to_vec()?), (&[2, 4][..], vec![1, 2, 5, 6, 3, 4, 7, 8]));
    /// let s = NdArray::stack(&[&a, &b], 0, &Location::Memory)?;
    /// assert_eq!((s.shape(), s.to_vec()?), (&[2, 2, 2][..], (1..=8).collect::<Vec<u8>>()));
    /// # Ok::<(), strata::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for no arrays or an axis past the last one;
    /// [`Error::Mismatch`] / [`Error::ShapeMismatch`] for arrays that do not agree; as
    /// [`NdArray::zeros`] for the location; errors of reading and compression.
    pub fn concatenate(arrays: &[&NdArray], axis: usize, location: &Location) -> Result<NdArray> {
        Self::join(
            arrays,
            axis,
            false,
            location,
            (false, SyncPolicy::default()),
        )
    }

    /// A new array at `location` stacking `arrays` (all of one shape, typesize and dtype)
    /// along a new dimension `axis` (0 to their number of dimensions), as `blosc2.stack`:
    /// each array becomes one item along that dimension, whose chunk and block length is 1,
    /// so every chunk is one of the arrays' chunks (copied as stored when the partitions
    /// are the first array's).
    ///
    /// # Errors
    /// As [`NdArray::concatenate`].
    pub fn stack(arrays: &[&NdArray], axis: usize, location: &Location) -> Result<NdArray> {
        Self::join(arrays, axis, true, location, (false, SyncPolicy::default()))
    }

    /// [`NdArray::concatenate`] (`stack` false) or [`NdArray::stack`], replacing what is at
    /// `location` when `storage.0`, with the sync policy `storage.1`.
    pub(crate) fn join(
        arrays: &[&NdArray],
        axis: usize,
        stack: bool,
        location: &Location,
        storage: (bool, SyncPolicy),
    ) -> Result<NdArray> {
        let Some(first) = arrays.first() else {
            return Err(Error::range("arrays to join", 0, Expected::AtLeast(1)));
        };
        let ndim = first.ndim() + usize::from(stack);
        if axis >= ndim {
            return Err(Error::range("axis", axis, Expected::Below(to_i64(ndim))));
        }
        let parts: Vec<Part<'_>> = arrays.iter().map(|a| Part::new(a, axis, stack)).collect();
        let mut shape = parts[0].shape.clone();
        shape[axis] = 0;
        let mut offsets = Vec::with_capacity(parts.len());
        for p in &parts {
            if p.arr.typesize() != first.typesize() {
                let what = "typesize of an array to join (the first one's)";
                return Err(Error::mismatch(what, first.typesize(), p.arr.typesize()));
            }
            if p.arr.dtype() != first.dtype() {
                return Err(Error::Dtype {
                    dtype: p.arr.dtype().unwrap_or("").to_owned(),
                    why: format!("an array to join has it, the first one {:?}", first.dtype())
                        .into(),
                    at: None,
                });
            }
            let mut expected = parts[0].shape.clone();
            expected[axis] = p.shape[axis];
            if p.shape.len() != ndim || p.shape != expected {
                let what = "an array to join (the first one's shape but along the axis)";
                return Err(Error::shapes(what, &expected, &p.shape));
            }
            offsets.push(shape[axis]);
            shape[axis] += p.shape[axis];
        }
        let mut params: ArrayParams = first.params();
        params.shape.clone_from(&shape);
        params.chunkshape = Some(parts[0].chunkshape.clone());
        params.blockshape = Some(parts[0].blockshape.clone());
        (params.overwrite, params.sync) = storage;
        let mut out = NdArray::create(&params, location)?;
        let mut batch: Vec<Cow<'_, [u8]>> = Vec::new();
        for nchunk in 0..out.geom.nchunks() {
            let chunk = out.joined_chunk(&parts, &offsets, axis, nchunk)?;
            batch.push(chunk);
            if batch.len() == APPEND_BATCH || nchunk + 1 == out.geom.nchunks() {
                let refs: Vec<&[u8]> = batch.iter().map(|c| &c[..]).collect();
                out.store.append_chunks(&refs)?;
                batch.clear();
            }
        }
        out.check_store()?;
        Ok(out)
    }

    /// Chunk `nchunk` of this (new) array joining `parts` along `axis`, the parts starting
    /// at `offsets`: copied from the one part holding it on the same grid, or built.
    fn joined_chunk<'p>(
        &self,
        parts: &[Part<'p>],
        offsets: &[usize],
        axis: usize,
        nchunk: usize,
    ) -> Result<Cow<'p, [u8]>> {
        let coords = self.geom.chunk_coords(nchunk);
        let extent = self.geom.chunk_extent(&coords);
        let (cs, bs) = (self.geom.chunkshape(), self.geom.blockshape());
        let lo = coords[axis] * cs[axis];
        let hi = lo + extent[axis];
        for (p, &off) in parts.iter().zip(offsets) {
            let inside = off <= lo && hi <= off + p.shape[axis];
            if inside
                && p.chunkshape == cs
                && p.blockshape == bs
                && (lo - off).is_multiple_of(cs[axis])
            {
                let mut src = coords.clone();
                src[axis] -= off / cs[axis];
                if p.expanded {
                    src.remove(axis);
                }
                let n = p.arr.geometry().nchunk_at(&src);
                return ChunkSource::chunk(p.arr.store(), n);
            }
        }
        // The chunk's items, C order, gathered from every part it overlaps.
        let ts = self.geom.typesize();
        let outer: usize = extent[..axis].iter().product();
        let inner: usize = extent[axis + 1..].iter().product::<usize>() * ts;
        let mut data = crate::alloc::zeroed(outer * extent[axis] * inner)?;
        for (p, &off) in parts.iter().zip(offsets) {
            let (a, b) = (lo.max(off), hi.min(off + p.shape[axis]));
            if a >= b {
                continue;
            }
            let mut slices: Vec<Slice> = (0..coords.len())
                .map(|d| {
                    let s = if d == axis {
                        a - off
                    } else {
                        coords[d] * cs[d]
                    };
                    let e = if d == axis { b - off } else { s + extent[d] };
                    Slice::range(s as i64, e as i64)
                })
                .collect();
            if p.expanded {
                slices.remove(axis);
            }
            let (piece, _) = p.arr.get_slice_vec(&slices)?;
            let row = (b - a) * inner;
            for o in 0..outer {
                let to = (o * extent[axis] + (a - lo)) * inner;
                data[to..to + row].copy_from_slice(&piece[o * row..(o + 1) * row]);
            }
        }
        build_chunk(&self.ctx, &self.cparams, &self.geom, nchunk, &data).map(Cow::Owned)
    }
}

/// One array joined into another: its shape and partitions as the result sees them (with
/// the new dimension of length 1 when stacking).
struct Part<'a> {
    arr: &'a NdArray,
    expanded: bool,
    shape: Vec<usize>,
    chunkshape: Vec<usize>,
    blockshape: Vec<usize>,
}

impl<'a> Part<'a> {
    fn new(arr: &'a NdArray, axis: usize, expanded: bool) -> Self {
        let dims = |v: &[usize]| {
            let mut v = v.to_vec();
            if expanded && axis <= v.len() {
                v.insert(axis, 1);
            }
            v
        };
        Part {
            arr,
            expanded,
            shape: dims(arr.shape()),
            chunkshape: dims(arr.chunkshape()),
            blockshape: dims(arr.blockshape()),
        }
    }
}
