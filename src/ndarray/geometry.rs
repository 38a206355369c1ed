//! The double partition of a b2nd array: chunks over the array, blocks inside each chunk.
//!
//! * `extchunkshape[i]` is `chunkshape[i]` rounded up to a multiple of `blockshape[i]`; every
//!   chunk holds `prod(extchunkshape) * typesize` bytes (the super-chunk's `chunksize`), edge
//!   chunks included.
//! * Chunks are numbered in C order over the chunk grid `ceil(shape[i] / chunkshape[i])`.
//! * Blocks are numbered in C order over `extchunkshape[i] / blockshape[i]` inside a chunk; a
//!   block holds `prod(blockshape)` items in C order, so the chunk's blocksize is
//!   `prod(blockshape) * typesize`.
//! * Items outside the array or outside `chunkshape` (but inside `extchunkshape`) are padding.
//! * A zero-length dimension gives no chunks at all; python-blosc2 then writes chunkshape 0 and
//!   blockshape 0 for it, which is accepted. A 0-d array (`ndim` 0) has one item in one chunk.
//!
//! Format: c-blosc2 `blosc/b2nd.c` (`update_shape`); `docs/b2nd.md` (data layout).
//!
//! ```
//! use strata::format::b2nd::B2ndMeta;
//! use strata::ndarray::Geometry;
//! let meta = B2ndMeta::new(vec![5, 7], vec![4, 4], vec![2, 3], "|u1").unwrap();
//! let g = Geometry::new(&meta, 1).unwrap();
//! assert_eq!(g.extchunkshape(), [4, 6]);
//! assert_eq!(g.chunk_grid(), [2, 2]);
//! assert_eq!(g.block_grid(), [2, 2]);
//! assert_eq!((g.nchunks(), g.chunksize(), g.blocksize()), (4, 24, 6));
//! ```
#![forbid(unsafe_code)]

use crate::chunk::CParams;
use crate::error::{to_i64, Error, Expected, Result};
use crate::format::b2nd::B2ndMeta;
use crate::format::chunk::{MAX_BLOCKSIZE, MAX_BUFFERSIZE};

/// Shape, chunk grid and block grid of a b2nd array, with the sizes derived from them.
///
/// Shapes are in items, outermost dimension first (C order); sizes are in bytes. A 0-d array
/// is stored as one dimension of length 1 internally ([`Geometry::shape`] still returns `[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Geometry {
    ndim: usize,
    shape: Vec<usize>,
    chunkshape: Vec<usize>,
    blockshape: Vec<usize>,
    extchunkshape: Vec<usize>,
    chunk_grid: Vec<usize>,
    block_grid: Vec<usize>,
    typesize: usize,
    nitems: usize,
    nchunks: usize,
    nblocks: usize,
    chunk_nitems: usize,
    block_nitems: usize,
}

/// Item strides of a C-order array of `shape`: the last dimension has stride 1.
#[must_use]
pub fn c_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    strides
}

/// `prod(dims)`, or `None` on overflow.
pub(crate) fn checked_prod(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

fn too_big(what: &'static str) -> Error {
    Error::Overflow { what }
}

impl Geometry {
    /// The geometry of an array described by `meta` with items of `typesize` bytes.
    ///
    /// # Errors
    /// The errors of [`B2ndMeta::validate`]; [`Error::Partition`] when a dimension has
    /// blockshape 0 but a positive chunkshape; [`Error::OutOfRange`] when `typesize` is 0 or
    /// the block exceeds `BLOSC2_MAXBLOCKSIZE` bytes; [`Error::Overflow`] when the item count
    /// exceeds `i64::MAX`;
    /// [`Error::MaxBufsizeExceeded`] when a chunk exceeds `BLOSC2_MAX_BUFFERSIZE` bytes.
    pub fn new(meta: &B2ndMeta, typesize: usize) -> Result<Geometry> {
        meta.validate()?;
        if typesize == 0 {
            return Err(Error::range("b2nd typesize", 0, Expected::AtLeast(1)));
        }
        let ndim = meta.ndim();
        let to_usize = |v: i64| usize::try_from(v).map_err(|_| too_big("b2nd: the shape"));
        let mut shape = meta
            .shape
            .iter()
            .map(|&s| to_usize(s))
            .collect::<Result<Vec<_>>>()?;
        // validate() made the partitions non-negative.
        let mut chunkshape: Vec<usize> = meta.chunkshape.iter().map(|&c| c as usize).collect();
        let mut blockshape: Vec<usize> = meta.blockshape.iter().map(|&b| b as usize).collect();
        if ndim == 0 {
            shape = vec![1];
            chunkshape = vec![1];
            blockshape = vec![1];
        }
        let mut extchunkshape = Vec::with_capacity(shape.len());
        let mut chunk_grid = Vec::with_capacity(shape.len());
        let mut block_grid = Vec::with_capacity(shape.len());
        for i in 0..shape.len() {
            let (s, c, b) = (shape[i], chunkshape[i], blockshape[i]);
            if b == 0 && c != 0 {
                return Err(Error::Partition {
                    dim: i,
                    shape: to_i64(s),
                    chunkshape: to_i64(c),
                    blockshape: 0,
                });
            }
            let ext = if c == 0 { 0 } else { c.div_ceil(b) * b };
            extchunkshape.push(ext);
            chunk_grid.push(if c == 0 { 0 } else { s.div_ceil(c) });
            block_grid.push(ext.checked_div(b).unwrap_or(0));
        }
        let nitems = checked_prod(&shape)
            .filter(|&n| i64::try_from(n).is_ok())
            .ok_or_else(|| too_big("b2nd: the item count"))?;
        let nchunks = if nitems == 0 {
            0
        } else {
            checked_prod(&chunk_grid).ok_or_else(|| too_big("b2nd: the chunk count"))?
        };
        let chunk_nitems =
            checked_prod(&extchunkshape).ok_or_else(|| too_big("b2nd: the chunk size"))?;
        let block_nitems =
            checked_prod(&blockshape).ok_or_else(|| too_big("b2nd: the block size"))?;
        let nblocks = checked_prod(&block_grid).ok_or_else(|| too_big("b2nd: the block count"))?;
        let chunksize = chunk_nitems
            .checked_mul(typesize)
            .ok_or_else(|| too_big("b2nd: the chunk size"))?;
        if chunksize > MAX_BUFFERSIZE {
            return Err(Error::MaxBufsizeExceeded {
                size: chunksize,
                limit: MAX_BUFFERSIZE,
            });
        }
        // block <= chunk, so this cannot overflow after the check above.
        let blocksize = block_nitems * typesize;
        if blocksize > MAX_BLOCKSIZE {
            return Err(Error::range(
                "b2nd block bytes",
                blocksize,
                Expected::at_most(MAX_BLOCKSIZE),
            ));
        }
        Ok(Geometry {
            ndim,
            shape,
            chunkshape,
            blockshape,
            extchunkshape,
            chunk_grid,
            block_grid,
            typesize,
            nitems,
            nchunks,
            nblocks,
            chunk_nitems,
            block_nitems,
        })
    }

    /// Number of dimensions (0 for a 0-d array).
    #[must_use]
    pub fn ndim(&self) -> usize {
        self.ndim
    }

    /// The array shape, in items.
    #[must_use]
    pub fn shape(&self) -> &[usize] {
        &self.shape[..self.ndim]
    }

    /// The chunk shape, in items.
    #[must_use]
    pub fn chunkshape(&self) -> &[usize] {
        &self.chunkshape[..self.ndim]
    }

    /// The block shape, in items.
    #[must_use]
    pub fn blockshape(&self) -> &[usize] {
        &self.blockshape[..self.ndim]
    }

    /// The chunk shape rounded up to whole blocks, in items: the extent every chunk stores.
    #[must_use]
    pub fn extchunkshape(&self) -> &[usize] {
        &self.extchunkshape[..self.ndim]
    }

    /// Chunks along each dimension: `ceil(shape / chunkshape)` (0 for an empty dimension).
    #[must_use]
    pub fn chunk_grid(&self) -> &[usize] {
        &self.chunk_grid[..self.ndim]
    }

    /// Blocks along each dimension inside a chunk: `extchunkshape / blockshape`.
    #[must_use]
    pub fn block_grid(&self) -> &[usize] {
        &self.block_grid[..self.ndim]
    }

    /// Item size in bytes.
    #[must_use]
    pub fn typesize(&self) -> usize {
        self.typesize
    }

    /// Items in the array: `prod(shape)` (1 for a 0-d array).
    #[must_use]
    pub fn nitems(&self) -> usize {
        self.nitems
    }

    /// Number of chunks: `prod(chunk_grid)`, 0 when a dimension is empty.
    #[must_use]
    pub fn nchunks(&self) -> usize {
        self.nchunks
    }

    /// Blocks per chunk: `prod(block_grid)`.
    #[must_use]
    pub fn nblocks(&self) -> usize {
        self.nblocks
    }

    /// Items per chunk, padding included: `prod(extchunkshape)`.
    #[must_use]
    pub fn chunk_nitems(&self) -> usize {
        self.chunk_nitems
    }

    /// Bytes per chunk, padding included (the super-chunk `chunksize`).
    #[must_use]
    pub fn chunksize(&self) -> usize {
        self.chunk_nitems * self.typesize
    }

    /// Items per block: `prod(blockshape)`.
    #[must_use]
    pub fn block_nitems(&self) -> usize {
        self.block_nitems
    }

    /// Bytes per block (the chunks' blocksize).
    #[must_use]
    pub fn blocksize(&self) -> usize {
        self.block_nitems * self.typesize
    }

    /// Bytes of the whole array, without padding, or `None` if that overflows `usize`.
    #[must_use]
    pub fn nbytes(&self) -> Option<usize> {
        self.nitems.checked_mul(self.typesize)
    }

    /// Internal dimensions (a 0-d array counts one of length 1).
    pub(crate) fn dims(&self) -> usize {
        self.shape.len()
    }

    /// Internal shape, chunk shape, block shape (one dimension for a 0-d array).
    pub(crate) fn inner(&self) -> (&[usize], &[usize], &[usize]) {
        (&self.shape, &self.chunkshape, &self.blockshape)
    }

    /// Coordinates of chunk `nchunk` in the chunk grid (one entry per internal dimension).
    #[must_use]
    pub fn chunk_coords(&self, nchunk: usize) -> Vec<usize> {
        unravel(nchunk, &self.chunk_grid)
    }

    /// The number of the chunk at `coords` in the chunk grid.
    #[must_use]
    pub fn nchunk_at(&self, coords: &[usize]) -> usize {
        ravel(coords, &self.chunk_grid)
    }

    /// Coordinates of block `nblock` in a chunk's block grid.
    #[must_use]
    pub fn block_coords(&self, nblock: usize) -> Vec<usize> {
        unravel(nblock, &self.block_grid)
    }

    /// The number of the block at `coords` in a chunk's block grid.
    #[must_use]
    pub fn nblock_at(&self, coords: &[usize]) -> usize {
        ravel(coords, &self.block_grid)
    }

    /// Items of the chunk at `coords` that lie inside the array, per dimension:
    /// `min(chunkshape, shape - coords * chunkshape)`.
    #[must_use]
    pub fn chunk_extent(&self, coords: &[usize]) -> Vec<usize> {
        (0..self.dims())
            .map(|i| {
                let start = coords[i] * self.chunkshape[i];
                self.chunkshape[i].min(self.shape[i].saturating_sub(start))
            })
            .collect()
    }

    /// Whether the chunk at `coords` has no padding: it lies inside the array and its
    /// chunkshape is a whole number of blocks.
    #[must_use]
    pub fn chunk_is_dense(&self, coords: &[usize]) -> bool {
        self.chunk_extent(coords) == self.extchunkshape
    }

    /// `base` with this array's typesize and a blocksize of one block
    /// ([`Geometry::blocksize`]), as b2nd compresses its chunks.
    ///
    /// Format: c-blosc2 `blosc/b2nd.c` (`b2nd_create_ctx`).
    #[must_use]
    pub fn chunk_cparams(&self, base: &CParams) -> CParams {
        CParams {
            typesize: self.typesize,
            blocksize: self.blocksize(),
            ..base.clone()
        }
    }

    /// The b2nd metalayer for this geometry with the dtype `dtype`.
    ///
    /// # Errors
    /// [`Error::Overflow`] if the geometry does not fit the metalayer's integer widths
    /// (cannot happen for a geometry built by [`Geometry::new`]).
    pub fn to_meta(&self, dtype: &str) -> Result<B2ndMeta> {
        b2nd_meta(self.shape(), self.chunkshape(), self.blockshape(), dtype)
    }
}

/// `shape` as the metalayer stores it (64-bit signed items).
///
/// # Errors
/// [`Error::Overflow`] for a dimension above `i64::MAX`.
pub(crate) fn shape_i64(shape: &[usize]) -> Result<Vec<i64>> {
    shape
        .iter()
        .map(|&s| i64::try_from(s).map_err(|_| too_big("shape")))
        .collect()
}

/// The metalayer of an array of `shape` in chunks of `chunkshape` and blocks of
/// `blockshape` (items), of dtype `dtype`, checked ([`B2ndMeta::new`]).
///
/// # Errors
/// [`Error::Overflow`] for shapes that do not fit the metalayer's integers (64 bits for the
/// shape, 32 for partitions); the errors of [`B2ndMeta::validate`].
pub(crate) fn b2nd_meta(
    shape: &[usize],
    chunkshape: &[usize],
    blockshape: &[usize],
    dtype: &str,
) -> Result<B2ndMeta> {
    let part = |v: &[usize]| {
        v.iter()
            .map(|&x| i32::try_from(x).map_err(|_| too_big("partition")))
            .collect::<Result<Vec<_>>>()
    };
    B2ndMeta::new(
        shape_i64(shape)?,
        part(chunkshape)?,
        part(blockshape)?,
        dtype,
    )
}

/// C-order multi-index of linear index `n` over `grid`.
pub(crate) fn unravel(mut n: usize, grid: &[usize]) -> Vec<usize> {
    let mut coords = vec![0; grid.len()];
    for i in (0..grid.len()).rev() {
        if grid[i] > 0 {
            coords[i] = n % grid[i];
            n /= grid[i];
        }
    }
    coords
}

/// C-order linear index of `coords` over `grid`.
pub(crate) fn ravel(coords: &[usize], grid: &[usize]) -> usize {
    coords.iter().zip(grid).fold(0, |acc, (&c, &g)| acc * g + c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geom(shape: &[i64], chunks: &[i32], blocks: &[i32], typesize: usize) -> Geometry {
        let meta = B2ndMeta::new(shape.to_vec(), chunks.to_vec(), blocks.to_vec(), "|u1").unwrap();
        Geometry::new(&meta, typesize).unwrap()
    }

    #[test]
    fn spec_example() {
        let g = geom(&[5, 7], &[4, 4], &[2, 3], 1);
        assert_eq!(g.extchunkshape(), [4, 6]);
        assert_eq!(g.chunk_grid(), [2, 2]);
        assert_eq!(g.block_grid(), [2, 2]);
        assert_eq!(g.nchunks(), 4);
        assert_eq!(g.nblocks(), 4);
        assert_eq!(g.chunksize(), 24);
        assert_eq!(g.blocksize(), 6);
        assert_eq!(g.chunk_coords(3), [1, 1]);
        assert_eq!(g.nchunk_at(&[1, 0]), 2);
        assert_eq!(g.chunk_extent(&[1, 1]), [1, 3]);
        assert_eq!(g.chunk_extent(&[0, 0]), [4, 4]);
        assert!(!g.chunk_is_dense(&[0, 0]));
        assert_eq!(g.block_coords(1), [0, 1]);
        assert_eq!(g.nitems(), 35);
    }

    #[test]
    fn dense_chunks() {
        let g = geom(&[8, 6], &[4, 6], &[2, 3], 8);
        assert!(g.chunk_is_dense(&[0, 0]));
        assert!(g.chunk_is_dense(&[1, 0]));
        assert_eq!(g.chunksize(), 4 * 6 * 8);
        let g = geom(&[7, 6], &[4, 6], &[2, 3], 8);
        assert!(!g.chunk_is_dense(&[1, 0]));
    }

    #[test]
    fn zero_length_dimensions() {
        // python-blosc2 writes chunkshape 0 / blockshape 0 for an empty dimension.
        let g = geom(&[0, 5], &[0, 5], &[0, 5], 4);
        assert_eq!(g.nchunks(), 0);
        assert_eq!(g.nitems(), 0);
        assert_eq!(g.chunksize(), 0);
        assert_eq!(g.chunk_grid(), [0, 1]);
        assert_eq!(g.nbytes(), Some(0));
        // A positive chunkshape over an empty dimension is fine too.
        let g = geom(&[3, 0], &[2, 4], &[1, 2], 4);
        assert_eq!((g.nchunks(), g.chunksize(), g.nblocks()), (0, 32, 4));
        // blockshape 0 under a positive chunkshape cannot be partitioned (C rejects it too).
        let meta = B2ndMeta::new(vec![0], vec![4], vec![0], "|u1").unwrap();
        assert_eq!(Geometry::new(&meta, 1).unwrap_err().code(), -12);
    }

    #[test]
    fn zero_d_array_is_one_item() {
        let g = geom(&[], &[], &[], 8);
        assert_eq!(
            (g.ndim(), g.nitems(), g.nchunks(), g.nblocks()),
            (0, 1, 1, 1)
        );
        assert_eq!(g.shape(), [] as [usize; 0]);
        assert_eq!(g.chunksize(), 8);
    }

    #[test]
    fn limits() {
        let meta = B2ndMeta::new(vec![1 << 40], vec![1 << 30], vec![1 << 20], "|u1").unwrap();
        assert_eq!(Geometry::new(&meta, 4).unwrap_err().code(), -35);
        let meta = B2ndMeta::new(vec![1 << 40], vec![1 << 29], vec![1 << 29], "|u1").unwrap();
        assert_eq!(Geometry::new(&meta, 2).unwrap_err().code(), -12);
        let meta = B2ndMeta::new(vec![i64::MAX, 4], vec![1, 1], vec![1, 1], "|u1").unwrap();
        assert_eq!(Geometry::new(&meta, 1).unwrap_err().code(), -12);
        let meta = B2ndMeta::new(vec![4], vec![2], vec![1], "|u1").unwrap();
        assert_eq!(Geometry::new(&meta, 0).unwrap_err().code(), -12);
    }

    #[test]
    fn strides_and_ravel() {
        assert_eq!(c_strides(&[2, 3, 4]), [12, 4, 1]);
        assert_eq!(c_strides(&[]), [] as [usize; 0]);
        for n in 0..24 {
            assert_eq!(ravel(&unravel(n, &[2, 3, 4]), &[2, 3, 4]), n);
        }
        let g = geom(&[5, 7], &[4, 4], &[2, 3], 1);
        assert_eq!(g.to_meta("|u1").unwrap().to_bytes().len(), 53);
    }
}
