//! [`NdArray`]: a b2nd array over a [`ChunkStore`] (in memory: [`VecStore`]).
//!
//! Chunks are compressed with a blocksize of one block (`prod(blockshape) * typesize`), their
//! padding zeros, as C-Blosc2 writes them; arrays made whole (zeros, uninit, full) hold
//! special chunks that store no data. The store is swappable: a super-chunk implements the
//! same [`ChunkStore`] trait.
//!
//! Format: c-blosc2 `blosc/b2nd.c` (`b2nd_zeros`, `b2nd_uninit`, `b2nd_full`,
//! `b2nd_from_cbuffer`, `b2nd_resize`, `b2nd_copy`); `shared/spec/frames.md` §9–§10.
//!
//! ```
//! use strata::ndarray::{ArrayParams, NdArray, Slice};
//! let data: Vec<u8> = (1..=35).collect();
//! let params = ArrayParams::new(&[5, 7], 1).chunkshape(&[4, 4]).blockshape(&[2, 3]).dtype("|u1");
//! let mut arr = NdArray::from_buffer(&params, &data)?;
//! let mut out = [0u8; 2];
//! arr.get_slice(&[Slice::index(4), Slice::range(5, 10)], &mut out)?;
//! assert_eq!(out, [34, 35]);
//! arr.set_slice(&[Slice::range(0, 2), Slice::range(0, 1)], &[100, 101])?;
//! assert_eq!(&arr.to_vec()?[..8], [100, 2, 3, 4, 5, 6, 7, 101]);
//! arr.resize(&[6, 7])?;
//! assert_eq!(arr.to_vec()?[35..], [0; 7]);
//! # Ok::<(), strata::Error>(())
//! ```
#![forbid(unsafe_code)]

use super::geometry::Geometry;
use super::partition::partitions;
use super::selection::{Selection, Slice};
use super::slice::{get_slice, set_slice, SliceStats};
use super::store::{ChunkStore, VecStore};
use crate::chunk::{special_chunk, CParams, Context, DParams};
use crate::error::{Error, Result};
use crate::format::b2nd::B2ndMeta;
use crate::format::chunk::SpecialType;

/// How to make an array: shape, partitions (derived from the caches when not given), dtype and
/// compression parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayParams {
    /// Shape, in items.
    pub shape: Vec<i64>,
    /// Chunk shape in items; `None` derives it ([`super::partition`]).
    pub chunkshape: Option<Vec<i32>>,
    /// Block shape in items; `None` derives it.
    pub blockshape: Option<Vec<i32>>,
    /// NumPy dtype string; `None` is C-Blosc2's default, `"|S<typesize>"`.
    pub dtype: Option<String>,
    /// Compression parameters; `typesize` is the item size. `blocksize` is ignored (a chunk's
    /// blocks are the array's blocks).
    pub cparams: CParams,
}

impl ArrayParams {
    /// An array of `shape` (items) with items of `typesize` bytes, default partitions and
    /// C-Blosc2's default compression.
    #[must_use]
    pub fn new(shape: &[i64], typesize: usize) -> ArrayParams {
        ArrayParams {
            shape: shape.to_vec(),
            chunkshape: None,
            blockshape: None,
            dtype: None,
            cparams: CParams {
                typesize,
                ..CParams::default()
            },
        }
    }

    /// With this chunk shape (items).
    #[must_use]
    pub fn chunkshape(mut self, chunkshape: &[i32]) -> ArrayParams {
        self.chunkshape = Some(chunkshape.to_vec());
        self
    }

    /// With this block shape (items).
    #[must_use]
    pub fn blockshape(mut self, blockshape: &[i32]) -> ArrayParams {
        self.blockshape = Some(blockshape.to_vec());
        self
    }

    /// With this NumPy dtype string.
    #[must_use]
    pub fn dtype(mut self, dtype: &str) -> ArrayParams {
        self.dtype = Some(dtype.to_owned());
        self
    }

    /// With these compression parameters; the typesize stays the array's.
    #[must_use]
    pub fn cparams(mut self, cparams: &CParams) -> ArrayParams {
        self.cparams = CParams {
            typesize: self.cparams.typesize,
            ..cparams.clone()
        };
        self
    }

    /// The metalayer these parameters give, partitions derived from `ctx`'s cache sizes
    /// where missing.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for inconsistent shapes ([`B2ndMeta::validate`]).
    pub fn meta(&self, ctx: &Context<'_>) -> Result<B2ndMeta> {
        let ts = self.cparams.typesize;
        let (chunkshape, blockshape) = partitions(
            &self.shape,
            self.chunkshape.as_deref(),
            self.blockshape.as_deref(),
            ts,
            ctx.runtime.topology(),
        )?;
        let dtype = self.dtype.clone().unwrap_or_else(|| format!("|S{ts}"));
        B2ndMeta::new(self.shape.clone(), chunkshape, blockshape, &dtype)
    }
}

/// A b2nd array: metalayer, compression parameters, and chunks in a store.
#[derive(Debug, Clone)]
pub struct NdArray<S = VecStore> {
    meta: B2ndMeta,
    geom: Geometry,
    cparams: CParams,
    dparams: DParams,
    ctx: Context<'static>,
    store: S,
}

impl NdArray<VecStore> {
    /// An array whose chunks are all the special chunk `kind` (value `value` for
    /// [`SpecialType::Value`]).
    fn special(params: &ArrayParams, kind: SpecialType, value: Option<&[u8]>) -> Result<Self> {
        let ctx = Context::global();
        let meta = params.meta(&ctx)?;
        let geom = Geometry::new(&meta, params.cparams.typesize)?;
        let cparams = geom.chunk_cparams(&params.cparams);
        let mut chunks = Vec::new();
        chunks
            .try_reserve_exact(geom.nchunks())
            .map_err(|_| Error::MemoryAlloc(geom.nchunks()))?;
        if geom.nchunks() > 0 {
            let chunk = special_chunk(&cparams, kind, geom.chunk_nbytes(), value)?;
            chunks.resize(geom.nchunks(), chunk);
        }
        Ok(NdArray {
            meta,
            geom,
            cparams,
            dparams: DParams::default(),
            ctx,
            store: VecStore::from_chunks(chunks),
        })
    }

    /// An array of zeros (`b2nd_zeros`): every chunk a special zero chunk.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for bad shapes or compression parameters;
    /// [`Error::MaxBufsizeExceeded`] for chunks over the Blosc2 limit; [`Error::MemoryAlloc`].
    pub fn zeros(params: &ArrayParams) -> Result<Self> {
        Self::special(params, SpecialType::Zero, None)
    }

    /// An array whose contents are undefined (`b2nd_uninit`): special uninit chunks, which
    /// Strata reads as zeros.
    ///
    /// # Errors
    /// As [`NdArray::zeros`].
    pub fn uninit(params: &ArrayParams) -> Result<Self> {
        Self::special(params, SpecialType::Uninit, None)
    }

    /// An array with every item `value` (`typesize` bytes), as `b2nd_full`: special chunks
    /// repeating the value (their padding too, as in C-Blosc2).
    ///
    /// # Errors
    /// As [`NdArray::zeros`]; [`Error::InvalidParam`] if `value` is not `typesize` bytes.
    pub fn full(params: &ArrayParams, value: &[u8]) -> Result<Self> {
        Self::special(params, SpecialType::Value, Some(value))
    }

    /// An array holding `data`, a C-order buffer of `shape` items (`b2nd_from_cbuffer`).
    ///
    /// # Errors
    /// As [`NdArray::zeros`]; [`Error::InvalidParam`] if `data` is shorter than the array.
    pub fn from_buffer(params: &ArrayParams, data: &[u8]) -> Result<Self> {
        let mut arr = Self::zeros(params)?;
        arr.set_slice(&[], data)?;
        Ok(arr)
    }
}

impl<S: ChunkStore> NdArray<S> {
    /// The array described by `meta` whose chunks are in `store`, compressed (when written)
    /// with `cparams` (`typesize` = the item size).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a bad `meta` or a store without one chunk per chunk of the
    /// grid; [`Error::MaxBufsizeExceeded`] for chunks over the Blosc2 limit.
    pub fn from_store(meta: B2ndMeta, cparams: &CParams, store: S) -> Result<Self> {
        let geom = Geometry::new(&meta, cparams.typesize)?;
        if store.nchunks() != geom.nchunks() {
            return Err(Error::InvalidParam(format!(
                "the store holds {} chunks, the array has {}",
                store.nchunks(),
                geom.nchunks()
            )));
        }
        Ok(NdArray {
            meta,
            cparams: geom.chunk_cparams(cparams),
            geom,
            dparams: DParams::default(),
            ctx: Context::global(),
            store,
        })
    }

    /// This array working on `ctx` (registry and runtime) instead of the global one.
    #[must_use]
    pub fn with_context(mut self, ctx: Context<'static>) -> Self {
        self.ctx = ctx;
        self
    }

    /// This array decompressing with `dparams` (threads per read).
    #[must_use]
    pub fn with_dparams(mut self, dparams: DParams) -> Self {
        self.dparams = dparams;
        self
    }

    /// The b2nd metalayer (shape, chunkshape, blockshape, dtype).
    #[must_use]
    pub fn meta(&self) -> &B2ndMeta {
        &self.meta
    }

    /// The geometry: shapes, grids and sizes.
    #[must_use]
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// The shape, in items.
    #[must_use]
    pub fn shape(&self) -> &[usize] {
        self.geom.shape()
    }

    /// The compression parameters of the chunks (blocksize = one block).
    #[must_use]
    pub fn cparams(&self) -> &CParams {
        &self.cparams
    }

    /// The chunk store.
    #[must_use]
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The chunk store, taken out of the array.
    #[must_use]
    pub fn into_store(self) -> S {
        self.store
    }

    /// The parameters that make an array like this one (for [`NdArray::copy`]).
    #[must_use]
    pub fn params(&self) -> ArrayParams {
        ArrayParams {
            shape: self.meta.shape.clone(),
            chunkshape: Some(self.meta.chunkshape.clone()),
            blockshape: Some(self.meta.blockshape.clone()),
            dtype: self.meta.dtype.clone(),
            cparams: self.cparams.clone(),
        }
    }

    /// Copies the selection `slices` (one per leading dimension; the rest whole) into `out`
    /// as a C-order array of the selection's shape, decompressing only the blocks it touches.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for more slices than dimensions or a step of 0;
    /// [`Error::DestinationTooSmall`]; errors of the store and of decompression.
    pub fn get_slice(&self, slices: &[Slice], out: &mut [u8]) -> Result<SliceStats> {
        let sel = Selection::new(self.geom.shape(), slices)?;
        get_slice(&self.ctx, &self.dparams, &self.geom, &self.store, &sel, out)
    }

    /// The selection `slices` as a new vector (C order) and its shape.
    ///
    /// # Errors
    /// As [`NdArray::get_slice`]; [`Error::MemoryAlloc`].
    pub fn get_slice_vec(&self, slices: &[Slice]) -> Result<(Vec<u8>, Vec<usize>)> {
        let sel = Selection::new(self.geom.shape(), slices)?;
        let n = sel
            .nitems()
            .and_then(|n| n.checked_mul(self.geom.typesize()))
            .ok_or_else(|| Error::InvalidParam("the selection's size overflows".into()))?;
        let mut out = Vec::new();
        out.try_reserve_exact(n)
            .map_err(|_| Error::MemoryAlloc(n))?;
        out.resize(n, 0);
        get_slice(
            &self.ctx,
            &self.dparams,
            &self.geom,
            &self.store,
            &sel,
            &mut out,
        )?;
        Ok((out, sel.shape().to_vec()))
    }

    /// The selection `slices` as a new in-memory array with the same dtype and compression,
    /// partitions derived for its shape.
    ///
    /// # Errors
    /// As [`NdArray::get_slice_vec`] and [`NdArray::from_buffer`].
    pub fn slice(&self, slices: &[Slice]) -> Result<NdArray<VecStore>> {
        let (data, shape) = self.get_slice_vec(slices)?;
        let shape: Vec<i64> = shape.iter().map(|&s| s as i64).collect();
        let params = ArrayParams {
            shape,
            chunkshape: None,
            blockshape: None,
            ..self.params()
        };
        NdArray::from_buffer(&params, &data).map(|a| a.with_context(self.ctx.clone()))
    }

    /// The whole array as a C-order vector.
    ///
    /// # Errors
    /// As [`NdArray::get_slice_vec`].
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        self.get_slice_vec(&[]).map(|(v, _)| v)
    }

    /// Writes `data`, a C-order array of the selection's shape, into the selection `slices`.
    /// Chunks the selection covers whole are rebuilt without reading them; others are
    /// decompressed, updated and compressed again.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a bad selection or `data` shorter than it; errors of the
    /// store, compression and decompression.
    pub fn set_slice(&mut self, slices: &[Slice], data: &[u8]) -> Result<SliceStats> {
        let sel = Selection::new(self.geom.shape(), slices)?;
        set_slice(
            &self.ctx,
            &self.cparams,
            &self.geom,
            &mut self.store,
            &sel,
            data,
        )
    }

    /// Changes the shape to `new_shape` (items, same number of dimensions), at the end of
    /// each dimension, as `b2nd_resize`: chunks outside the new grid are deleted, new ones are
    /// special zero chunks. Items that the array gains read as zeros, even where an edge
    /// chunk still held old values past the old shape.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for another number of dimensions, a negative shape, or growing a
    /// dimension whose chunkshape is 0; errors of the store and of compression.
    pub fn resize(&mut self, new_shape: &[i64]) -> Result<()> {
        if new_shape.len() != self.meta.ndim() {
            return Err(Error::InvalidParam(format!(
                "new shape {new_shape:?} for an array of {} dimensions",
                self.meta.ndim()
            )));
        }
        let meta = B2ndMeta {
            shape: new_shape.to_vec(),
            ..self.meta.clone()
        };
        let geom = Geometry::new(&meta, self.geom.typesize())?;
        let old_shape = self.geom.shape().to_vec();
        let (old_grid, new_grid) = (self.geom.chunk_grid().to_vec(), geom.chunk_grid().to_vec());
        // Chunks outside the new grid go, last first.
        for nchunk in (0..self.geom.nchunks()).rev() {
            let coords = self.geom.chunk_coords(nchunk);
            if coords.iter().zip(&new_grid).any(|(c, g)| c >= g) {
                self.store.delete_chunk(nchunk)?;
            }
        }
        // Chunks outside the old grid come in as zeros, first first.
        if geom.nchunks() > 0 {
            let zero = special_chunk(&self.cparams, SpecialType::Zero, geom.chunk_nbytes(), None)?;
            for nchunk in 0..geom.nchunks() {
                let coords = geom.chunk_coords(nchunk);
                if coords.iter().zip(&old_grid).any(|(c, g)| c >= g) {
                    self.store.insert_chunk(nchunk, zero.clone())?;
                }
            }
        }
        self.meta = meta;
        self.geom = geom;
        // Items gained inside kept edge chunks may hold stale values (from a shrink, or another
        // writer): zero them where they are not zeros already.
        let new_shape = self.geom.shape().to_vec();
        for (d, (&old, &new)) in old_shape.iter().zip(&new_shape).enumerate() {
            if new > old && old > 0 {
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

    /// A copy in memory with the partitions, dtype and compression of `params` (its shape
    /// and typesize must be this array's; missing partitions are derived), as `b2nd_copy`.
    /// Chunks are built one at a time from slices of this array.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] if `params` has another shape or typesize; as
    /// [`NdArray::get_slice`] and [`NdArray::set_slice`].
    pub fn copy(&self, params: &ArrayParams) -> Result<NdArray<VecStore>> {
        if params.shape != self.meta.shape || params.cparams.typesize != self.geom.typesize() {
            return Err(Error::InvalidParam(format!(
                "a copy of shape {:?} and typesize {} from an array of shape {:?} and typesize {}",
                params.shape,
                params.cparams.typesize,
                self.meta.shape,
                self.geom.typesize()
            )));
        }
        let mut out = NdArray::zeros(params)?.with_context(self.ctx.clone());
        let (chunkshape, shape) = (out.geom.chunkshape().to_vec(), out.geom.shape().to_vec());
        for nchunk in 0..out.geom.nchunks() {
            let coords = out.geom.chunk_coords(nchunk);
            let slices: Vec<Slice> = (0..self.meta.ndim())
                .map(|d| {
                    let start = coords[d] * chunkshape[d];
                    Slice::range(start as i64, (start + chunkshape[d]).min(shape[d]) as i64)
                })
                .collect();
            let (data, _) = self.get_slice_vec(&slices)?;
            out.set_slice(&slices, &data)?;
        }
        Ok(out)
    }
}
