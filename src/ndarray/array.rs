//! [`NdArray`]: a b2nd array whose chunks live in a super-chunk ([`SChunk`]) — in memory, in
//! a contiguous `.b2nd` file, or in a sparse frame directory.
//!
//! * **Make** one with [`NdArray::uninit`], [`NdArray::zeros`], [`NdArray::full`] or
//!   [`NdArray::from_buffer`] at a [`Location`]; the frame gets the `b2nd` metalayer and a
//!   chunksize of one chunk (`prod(extchunkshape) * typesize` bytes). Chunks are compressed
//!   with a blocksize of one block (`prod(blockshape) * typesize`), their padding zeros, as
//!   C-Blosc2 writes them; zeros and uninit arrays hold special chunks only (index entries,
//!   no data bytes), full arrays one repeated-value chunk per chunk. Missing chunkshape and
//!   blockshape come from [`super::partition`] (block ≈ L2/4, chunk ≈ L3/2, balanced boxes).
//! * **Open** a `.b2nd` file or sparse directory written by anyone with [`NdArray::open`]
//!   (the legacy `caterva` metalayer too), or a contiguous frame in memory with
//!   [`NdArray::from_cframe`].
//! * **Read** with [`NdArray::get_slice`] (`&self`, from many threads at once): only the
//!   header, the `bstarts` and the touched blocks of each touched chunk are read from the
//!   file, and only those blocks are decompressed.
//! * **Write** with [`NdArray::set_slice`] and [`NdArray::resize`] (persisted: chunks updated,
//!   inserted or deleted, and the metalayer updated in place); change along an axis with
//!   [`NdArray::append`], [`NdArray::insert`], [`NdArray::delete`], [`NdArray::resize_at`];
//!   join with [`NdArray::concatenate`] and [`NdArray::stack`]; **save** with
//!   [`NdArray::save`], [`NdArray::copy_to`], [`NdArray::to_cframe`]; **re-partition** or
//!   recompress with [`NdArray::copy`].
//!
//! Format: c-blosc2 `blosc/b2nd.c` (`b2nd_zeros`, `b2nd_uninit`, `b2nd_full`,
//! `b2nd_from_cbuffer`, `b2nd_open`, `b2nd_save`, `b2nd_resize`, `b2nd_copy`);
//! `docs/b2nd.md`.
//!
//! ```
//! use strata::ndarray::{ArrayParams, Location, NdArray, OpenMode, Slice};
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("a.b2nd");
//! let data: Vec<u8> = (1..=35).collect();
//! let params = ArrayParams::new(&[5, 7], 1)
//!     .with_chunkshape(&[4, 4])
//!     .with_blockshape(&[2, 3])
//!     .with_dtype("|u1");
//! let mut arr = NdArray::from_buffer(&params, &Location::File(path.clone()), &data)?;
//! arr.set_slice(&[Slice::range(0, 2), Slice::range(0, 1)], &[100, 101])?;
//! let grown = [arr.shape()[0] + 1, arr.shape()[1]]; // shapes are `usize` throughout
//! arr.resize(&grown)?;
//! drop(arr);
//! let arr = NdArray::open(&path, OpenMode::Read)?;
//! assert_eq!(arr.shape(), [6, 7]);
//! let mut out = [0u8; 2];
//! arr.get_slice(&[Slice::index(4), Slice::range(5, 10)], &mut out)?;
//! assert_eq!(out, [34, 35]);
//! assert_eq!(&arr.to_vec()?[..8], [100, 2, 3, 4, 5, 6, 7, 101]);
//! assert_eq!(arr.to_vec()?[35..], [0; 7]);
//! # Ok::<(), strata::Error>(())
//! ```
#![forbid(unsafe_code)]

mod axis;

use super::dtype::numpy_itemsize;
use super::geometry::{b2nd_meta, Geometry};
use super::partition::partitions;
use super::selection::{Selection, Slice};
use super::slice::{build_chunk, build_chunks, get_slice_cached, set_slice, Cached, SliceStats};
use super::store::ChunkStore;
use crate::cache::{BlockCache, DatasetVersion};
use crate::chunk::{special_chunk_ctx, CParams, Context, DParams};
use crate::error::{Error, Result};
use crate::format::b2nd::{B2ndMeta, LEGACY_METALAYER, METALAYER};
use crate::format::chunk::SpecialType;
use crate::frame::{OpenMode, SyncPolicy};
use crate::schunk::{Location, OpenOptions, SChunk, SChunkOptions};
use std::path::Path;
use std::sync::Arc;

/// How to make an array: shape, partitions (derived from the caches when not given), dtype,
/// compression parameters, extra metalayers, how its storage is created and the context it
/// works on.
///
/// Built with [`ArrayParams::new`] (or [`ArrayParams::from_dtype`]) and the `with_*` setters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArrayParams {
    /// Shape, in items.
    pub shape: Vec<usize>,
    /// Chunk shape in items; `None` derives it ([`super::partition`]).
    pub chunkshape: Option<Vec<usize>>,
    /// Block shape in items; `None` derives it.
    pub blockshape: Option<Vec<usize>>,
    /// NumPy dtype string; `None` is C-Blosc2's default, `"|S<typesize>"`. When given, its
    /// item size must be the typesize.
    pub dtype: Option<String>,
    /// Compression parameters; `typesize` is the item size in bytes. `blocksize` is ignored
    /// (a chunk's blocks are the array's blocks) and `nd` is set from the array.
    pub cparams: CParams,
    /// Decompression parameters (threads per read); `nd` is set from the array.
    pub dparams: DParams,
    /// Metalayers written besides `b2nd` (name, content), at most 15.
    pub metalayers: Vec<(String, Vec<u8>)>,
    /// Replace an existing file or directory at the location.
    pub overwrite: bool,
    /// When writes reach stable storage ([`SyncPolicy`]).
    pub sync: SyncPolicy,
    /// The registry and runtime the array works on; its cache sizes give the default
    /// partitions.
    pub context: Context,
}

impl ArrayParams {
    /// An array of `shape` (items) with items of `typesize` bytes, default partitions and
    /// C-Blosc2's default compression (BloscLZ, clevel 5, shuffle), on the global context.
    #[must_use]
    pub fn new(shape: &[usize], typesize: usize) -> ArrayParams {
        ArrayParams {
            shape: shape.to_vec(),
            chunkshape: None,
            blockshape: None,
            dtype: None,
            cparams: CParams {
                typesize,
                ..CParams::default()
            },
            dparams: DParams::default(),
            metalayers: Vec::new(),
            overwrite: false,
            sync: SyncPolicy::default(),
            context: Context::global(),
        }
    }

    /// An array of `shape` (items) of the NumPy dtype `dtype`, the typesize its item size
    /// ([`super::dtype::numpy_itemsize`]).
    ///
    /// # Errors
    /// [`Error::Dtype`] for a dtype string NumPy does not accept.
    pub fn from_dtype(shape: &[usize], dtype: &str) -> Result<ArrayParams> {
        Ok(ArrayParams::new(shape, numpy_itemsize(dtype)?).with_dtype(dtype))
    }

    /// These parameters with this chunk shape (items).
    #[must_use]
    pub fn with_chunkshape(mut self, chunkshape: &[usize]) -> ArrayParams {
        self.chunkshape = Some(chunkshape.to_vec());
        self
    }

    /// These parameters with this block shape (items).
    #[must_use]
    pub fn with_blockshape(mut self, blockshape: &[usize]) -> ArrayParams {
        self.blockshape = Some(blockshape.to_vec());
        self
    }

    /// These parameters with this NumPy dtype string (the typesize stays).
    #[must_use]
    pub fn with_dtype(mut self, dtype: &str) -> ArrayParams {
        self.dtype = Some(dtype.to_owned());
        self
    }

    /// These parameters with these compression parameters; the typesize stays the array's.
    #[must_use]
    pub fn with_cparams(mut self, cparams: &CParams) -> ArrayParams {
        self.cparams = CParams {
            typesize: self.cparams.typesize,
            ..cparams.clone()
        };
        self
    }

    /// These parameters with these decompression parameters.
    #[must_use]
    pub fn with_dparams(mut self, dparams: &DParams) -> ArrayParams {
        self.dparams = dparams.clone();
        self
    }

    /// These parameters with one more metalayer (name ≤ 31 bytes, not `b2nd` or `caterva`).
    #[must_use]
    pub fn with_metalayer(mut self, name: &str, content: &[u8]) -> ArrayParams {
        self.metalayers.push((name.to_owned(), content.to_vec()));
        self
    }

    /// These parameters replacing an existing file or directory (`true`) or refusing to
    /// (`false`, the default).
    #[must_use]
    pub fn with_overwrite(mut self, overwrite: bool) -> ArrayParams {
        self.overwrite = overwrite;
        self
    }

    /// These parameters with this sync policy.
    #[must_use]
    pub fn with_sync(mut self, sync: SyncPolicy) -> ArrayParams {
        self.sync = sync;
        self
    }

    /// These parameters working on `context`.
    #[must_use]
    pub fn with_context(mut self, context: Context) -> ArrayParams {
        self.context = context;
        self
    }

    /// The metalayer these parameters give, partitions derived from the context's cache
    /// sizes where missing.
    ///
    /// # Errors
    /// The errors of [`B2ndMeta::validate`] and [`partitions`] for inconsistent shapes or shapes
    /// that do not fit the metalayer; [`Error::Dtype`] / [`Error::Mismatch`] for a dtype NumPy
    /// does not accept ([`super::dtype::numpy_itemsize`]: the array is written for NumPy's
    /// users to open) or whose item size is not the typesize.
    pub fn meta(&self) -> Result<B2ndMeta> {
        let ts = self.cparams.typesize;
        if let Some(dtype) = &self.dtype {
            let n = numpy_itemsize(dtype)?;
            if n != ts {
                return Err(Error::mismatch(
                    "bytes of a dtype item (the typesize)",
                    ts,
                    n,
                ));
            }
        }
        let (chunkshape, blockshape) = partitions(
            &self.shape,
            self.chunkshape.as_deref(),
            self.blockshape.as_deref(),
            ts,
            self.context.runtime().topology(),
        )?;
        let dtype = self.dtype.clone().unwrap_or_else(|| format!("|S{ts}"));
        b2nd_meta(&self.shape, &chunkshape, &blockshape, &dtype)
    }
}

/// A b2nd array: metalayer, compression parameters, and chunks in a store (a super-chunk;
/// any [`ChunkStore`] through [`NdArray::from_store`]).
#[derive(Debug)]
pub struct NdArray<S = SChunk> {
    meta: B2ndMeta,
    geom: Geometry,
    cparams: CParams,
    dparams: DParams,
    ctx: Context,
    store: S,
    /// The block cache reads go through, and the version its blocks are kept under.
    cache: Option<(Arc<BlockCache>, DatasetVersion)>,
}

/// Chunks appended per commit while an array is made.
const APPEND_BATCH: usize = 1024;

impl NdArray<SChunk> {
    /// A new array at `location` with no chunks yet: its metalayer, geometry and the
    /// compression parameters of its chunks.
    fn create(params: &ArrayParams, location: &Location) -> Result<Self> {
        let ctx = params.context.clone();
        let meta = params.meta()?;
        let geom = Geometry::new(&meta, params.cparams.typesize)?;
        let cparams = geom.chunk_cparams(&params.cparams);
        cparams.validate()?;
        let mut metalayers = vec![(METALAYER.to_owned(), meta.to_bytes())];
        for (name, content) in &params.metalayers {
            if name == METALAYER || name == LEGACY_METALAYER {
                return Err(Error::Duplicate {
                    what: "metalayer (the array's own)",
                    name: format!("{name:?}"),
                });
            }
            metalayers.push((name.clone(), content.clone()));
        }
        let opts = SChunkOptions {
            cparams: cparams.clone(),
            dparams: params.dparams.clone(),
            metalayers,
            chunksize: geom.chunksize(),
            sync: params.sync,
            overwrite: params.overwrite,
            context: ctx.clone(),
        };
        let schunk = SChunk::create(location, &opts)?;
        Ok(NdArray {
            meta,
            geom,
            cparams,
            dparams: params.dparams.clone(),
            ctx,
            store: schunk,
            cache: None,
        }
        .with_nd())
    }

    /// A new array whose chunks are all the special chunk `kind` (zeros or uninit): index
    /// entries only, as `blosc2_schunk_fill_special`.
    fn special(params: &ArrayParams, location: &Location, kind: SpecialType) -> Result<Self> {
        let mut arr = Self::create(params, location)?;
        let n = arr.geom.nchunks() as u64;
        if n > 0 && arr.geom.chunksize() > 0 {
            let nitems = n
                .checked_mul(arr.geom.chunk_nitems() as u64)
                .ok_or(Error::Overflow {
                    what: "the array's item count",
                })?;
            arr.store.fill_special(nitems, kind, arr.geom.chunksize())?;
        }
        arr.check_store()?;
        Ok(arr)
    }

    /// An array of zeros at `location` (`b2nd_zeros`): every chunk a special zero chunk, so
    /// no data bytes are stored.
    ///
    /// # Errors
    /// An invalid-parameter error (code −12: [`Error::OutOfRange`], [`Error::Mismatch`],
    /// [`Error::Partition`], [`Error::Dtype`]...) for bad shapes, dtype or compression
    /// parameters;
    /// [`Error::MaxBufsizeExceeded`] for chunks over the Blosc2 limit; [`Error::Io`] when the
    /// file or directory cannot be made (or exists and `params.overwrite` is false).
    pub fn zeros(params: &ArrayParams, location: &Location) -> Result<Self> {
        Self::special(params, location, SpecialType::Zero)
    }

    /// An array whose contents are undefined (`b2nd_uninit`): special uninit chunks, which
    /// Strata reads as zeros.
    ///
    /// # Errors
    /// As [`NdArray::zeros`].
    pub fn uninit(params: &ArrayParams, location: &Location) -> Result<Self> {
        Self::special(params, location, SpecialType::Uninit)
    }

    /// An array with every item `value` (`typesize` bytes), as `b2nd_full`: each chunk a
    /// repeated-value chunk (their padding too, as in C-Blosc2).
    ///
    /// # Errors
    /// As [`NdArray::zeros`]; [`Error::Mismatch`] if `value` is not `typesize` bytes.
    pub fn full(params: &ArrayParams, location: &Location, value: &[u8]) -> Result<Self> {
        let mut arr = Self::create(params, location)?;
        let n = arr.geom.nchunks();
        if n > 0 && arr.geom.chunksize() > 0 {
            let chunk = special_chunk_ctx(
                &arr.ctx,
                &arr.cparams,
                SpecialType::Value,
                arr.geom.chunksize(),
                Some(value),
            )?;
            let mut left = n;
            while left > 0 {
                let k = left.min(APPEND_BATCH);
                arr.store.append_chunks(&vec![&chunk[..]; k])?;
                left -= k;
            }
        }
        arr.check_store()?;
        Ok(arr)
    }

    /// An array at `location` holding `data`, a C-order buffer of `shape` items
    /// (`b2nd_from_cbuffer`). Chunks are compressed in parallel and appended in order.
    ///
    /// # Errors
    /// As [`NdArray::zeros`]; [`Error::OutOfRange`] if `data` is shorter than the array.
    pub fn from_buffer(params: &ArrayParams, location: &Location, data: &[u8]) -> Result<Self> {
        let mut arr = Self::create(params, location)?;
        let store = &mut arr.store;
        build_chunks(&arr.ctx, &arr.cparams, &arr.geom, data, |chunks| {
            store.append_chunks(chunks).map(|_| ())
        })?;
        arr.check_store()?;
        Ok(arr)
    }

    /// Opens the `.b2nd` file or sparse frame directory at `path` (read-only with
    /// [`OpenMode::Read`]; writes need [`OpenMode::ReadWrite`]), on the global context.
    ///
    /// # Errors
    /// As [`SChunk::open`] and [`NdArray::from_schunk`].
    pub fn open(path: impl AsRef<Path>, mode: OpenMode) -> Result<Self> {
        Self::open_with(path, &OpenOptions::new(mode))
    }

    /// Opens the `.b2nd` file or sparse frame directory at `path` as `opts` say (mode, sync
    /// policy, context).
    ///
    /// # Errors
    /// As [`SChunk::open_with`] and [`NdArray::from_schunk`].
    pub fn open_with(path: impl AsRef<Path>, opts: &OpenOptions) -> Result<Self> {
        Self::from_schunk(SChunk::open_with(path, opts)?)
    }

    /// The array held by `schunk`, described by its `b2nd` (or legacy `caterva`) metalayer,
    /// working on the super-chunk's context.
    ///
    /// # Errors
    /// [`Error::MetalayerNotFound`] without either metalayer; the errors of
    /// [`B2ndMeta::from_bytes`] for a malformed one; [`Error::Mismatch`] when the super-chunk
    /// does not hold one chunk per chunk of the array's grid.
    pub fn from_schunk(schunk: SChunk) -> Result<Self> {
        let layer = schunk
            .meta(METALAYER)
            .or_else(|| schunk.meta(LEGACY_METALAYER))
            .ok_or_else(|| Error::MetalayerNotFound {
                name: METALAYER.into(),
            })?;
        let meta = B2ndMeta::from_bytes(layer)?;
        let cparams = schunk.cparams().clone();
        let dparams = schunk.dparams().clone();
        let ctx = schunk.context().clone();
        Ok(Self::from_store(meta, &cparams, schunk, ctx)?.with_dparams(dparams))
    }

    /// The array in the contiguous frame `bytes` (a `.b2nd` file's bytes), in memory,
    /// read-write, on the global context.
    ///
    /// # Errors
    /// As [`SChunk::from_cframe`] and [`NdArray::from_schunk`].
    pub fn from_cframe(bytes: Vec<u8>) -> Result<Self> {
        Self::from_schunk(SChunk::from_cframe(bytes)?)
    }

    /// [`NdArray::from_cframe`] in the mode and on the context of `opts`.
    ///
    /// # Errors
    /// As [`NdArray::from_cframe`].
    pub fn from_cframe_with(bytes: Vec<u8>, opts: &OpenOptions) -> Result<Self> {
        Self::from_schunk(SChunk::from_cframe_with(bytes, opts)?)
    }

    /// The whole array as a contiguous frame (the bytes of a `.b2nd` file).
    ///
    /// # Errors
    /// As [`SChunk::to_cframe`].
    pub fn to_cframe(&self) -> Result<Vec<u8>> {
        self.store.to_cframe()
    }

    /// A copy at `location` holding the same chunks as they are stored (no recompression),
    /// metalayers and vlmetalayers included; replaces what is there when `overwrite`.
    ///
    /// # Errors
    /// As [`SChunk::copy_to`].
    pub fn copy_to(&self, location: &Location, overwrite: bool) -> Result<Self> {
        let opts = SChunkOptions {
            overwrite,
            ..SChunkOptions::default()
        };
        let schunk = self.store.copy_to(location, &opts)?;
        Ok(NdArray {
            meta: self.meta.clone(),
            geom: self.geom.clone(),
            cparams: self.cparams.clone(),
            dparams: self.dparams.clone(),
            ctx: self.ctx.clone(),
            store: schunk,
            cache: None,
        })
    }

    /// Saves the array as a contiguous `.b2nd` file at `path`, replacing any file there
    /// (`b2nd_save`, python-blosc2's `save`); chunks are copied as stored.
    ///
    /// # Errors
    /// As [`NdArray::copy_to`].
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        self.copy_to(&Location::File(path.as_ref().to_path_buf()), true)?
            .store
            .close()
    }

    /// This array reading its blocks through `cache`, shared with every other array, thread
    /// or program holding it: a block is decompressed once and then copied from the cache
    /// until evicted. The blocks are kept under the dataset's version
    /// ([`DatasetVersion::of`]: the file's identity when opened and the frame's state), so
    /// two handles of one file share them, and a file replaced or changed on disk, opened
    /// again, never gets the old ones. Writes through this array give it a new version.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use strata::cache::BlockCache;
    /// use strata::ndarray::{ArrayParams, Location, NdArray, OpenMode, Slice};
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("a.b2nd");
    /// let data: Vec<u8> = (0..64 * 64u32).flat_map(|i| i.to_le_bytes()).collect();
    /// let params = ArrayParams::from_dtype(&[64, 64], "<u4")?
    ///     .with_chunkshape(&[32, 32])
    ///     .with_blockshape(&[8, 8]);
    /// NdArray::from_buffer(&params, &Location::File(path.clone()), &data)?.close()?;
    /// let cache = Arc::new(BlockCache::new(16 << 20));
    /// let a = NdArray::open(&path, OpenMode::Read)?.with_cache(Arc::clone(&cache));
    /// let b = NdArray::open(&path, OpenMode::Read)?.with_cache(Arc::clone(&cache));
    /// let row = [Slice::index(3), Slice::FULL];
    /// assert_eq!(a.get_slice_vec(&row)?, b.get_slice_vec(&row)?);
    /// // a's read decompressed the 8 blocks of row 3; b's found them in the cache
    /// assert_eq!((cache.stats().misses, cache.stats().hits), (8, 8));
    /// # Ok::<(), strata::Error>(())
    /// ```
    #[must_use]
    pub fn with_cache(mut self, cache: Arc<BlockCache>) -> Self {
        self.set_cache(Some(cache));
        self
    }

    /// Attaches `cache` as [`NdArray::with_cache`] does, or detaches the cache (`None`).
    pub fn set_cache(&mut self, cache: Option<Arc<BlockCache>>) {
        self.cache = cache.map(|c| (c, DatasetVersion::of(&self.store)));
    }

    /// The super-chunk holding the chunks (metalayers, vlmetalayers, sizes).
    #[must_use]
    pub fn schunk(&self) -> &SChunk {
        &self.store
    }

    /// The super-chunk, for changing vlmetalayers or other metalayers. Changing or
    /// removing chunks through it (rather than through the array) breaks the array.
    #[must_use]
    pub fn schunk_mut(&mut self) -> &mut SChunk {
        &mut self.store
    }

    /// Compressed size in bytes: the super-chunk's `cbytes`.
    #[must_use]
    pub fn cbytes(&self) -> u64 {
        self.store.cbytes()
    }

    /// Flushes written data to stable storage (per the sync policy) and closes the array.
    ///
    /// # Errors
    /// As [`SChunk::close`].
    pub fn close(self) -> Result<()> {
        self.store.close()
    }
}

impl<S: ChunkStore> NdArray<S> {
    /// The array described by `meta` whose chunks are in `store`, compressed (when written)
    /// with `cparams` (`typesize` = the item size), working on `ctx`.
    ///
    /// # Errors
    /// The errors of [`Geometry::new`] for a bad `meta`; [`Error::Mismatch`] for a store
    /// without one chunk per chunk of the grid; [`Error::MaxBufsizeExceeded`] for chunks over
    /// the Blosc2 limit.
    pub fn from_store(meta: B2ndMeta, cparams: &CParams, store: S, ctx: Context) -> Result<Self> {
        let geom = Geometry::new(&meta, cparams.typesize)?;
        let arr = NdArray {
            meta,
            cparams: geom.chunk_cparams(cparams),
            geom,
            dparams: DParams::default(),
            ctx,
            store,
            cache: None,
        };
        arr.check_store()?;
        Ok(arr.with_nd())
    }

    fn check_store(&self) -> Result<()> {
        if self.store.nchunks() != self.geom.nchunks() {
            let what = "chunks in the store (those of the array)";
            return Err(Error::mismatch(
                what,
                self.geom.nchunks(),
                self.store.nchunks(),
            ));
        }
        Ok(())
    }

    /// Points the parameters' `nd` at the current metalayer (codecs such as ZFP read it).
    fn set_nd(&mut self) {
        let nd = Some(Arc::new(self.meta.clone()));
        self.cparams.nd.clone_from(&nd);
        self.dparams.nd = nd;
    }

    fn with_nd(mut self) -> Self {
        self.set_nd();
        self
    }

    /// This array reading its blocks through `cache` under `version`, a version the caller
    /// vouches for (see [`NdArray::with_cache`] for arrays of files).
    #[must_use]
    pub fn with_cache_as(mut self, cache: Arc<BlockCache>, version: DatasetVersion) -> Self {
        self.set_cache_as(Some((cache, version)));
        self
    }

    /// Attaches a cache and version as [`NdArray::with_cache_as`] does, or detaches the
    /// cache (`None`).
    pub fn set_cache_as(&mut self, cache: Option<(Arc<BlockCache>, DatasetVersion)>) {
        self.cache = cache;
    }

    /// The block cache reads go through and the version of this array's blocks in it.
    #[must_use]
    pub fn cache(&self) -> Option<(&Arc<BlockCache>, DatasetVersion)> {
        self.cache.as_ref().map(|(c, v)| (c, *v))
    }

    /// After a write through this array, its cached blocks are another version's.
    fn new_version(&mut self) {
        if let Some((_, v)) = &mut self.cache {
            *v = DatasetVersion::unique();
        }
    }

    fn cached(&self) -> Option<Cached<'_>> {
        self.cache.as_ref().map(|(cache, dataset)| Cached {
            cache,
            dataset: *dataset,
        })
    }

    /// The registry and runtime this array works on.
    #[must_use]
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// This array decompressing with `dparams` (threads per read; `nd` stays the array's).
    #[must_use]
    pub fn with_dparams(mut self, dparams: DParams) -> Self {
        self.dparams = dparams;
        self.with_nd()
    }

    /// Sets the threads used to compress (writes) and decompress (reads) per call; 0 = the
    /// runtime's default.
    pub fn set_nthreads(&mut self, compress: usize, decompress: usize) {
        self.cparams.nthreads = compress;
        self.dparams.nthreads = decompress;
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

    /// Number of dimensions.
    #[must_use]
    pub fn ndim(&self) -> usize {
        self.meta.ndim()
    }

    /// The shape, in items.
    #[must_use]
    pub fn shape(&self) -> &[usize] {
        self.geom.shape()
    }

    /// The chunk shape, in items.
    #[must_use]
    pub fn chunkshape(&self) -> &[usize] {
        self.geom.chunkshape()
    }

    /// The block shape, in items.
    #[must_use]
    pub fn blockshape(&self) -> &[usize] {
        self.geom.blockshape()
    }

    /// The NumPy dtype string (`None` for a legacy metalayer without one).
    #[must_use]
    pub fn dtype(&self) -> Option<&str> {
        self.meta.dtype.as_deref()
    }

    /// The item size, in bytes.
    #[must_use]
    pub fn typesize(&self) -> usize {
        self.geom.typesize()
    }

    /// Uncompressed size of the items, in bytes (`prod(shape) * typesize`; padding not
    /// counted).
    #[must_use]
    pub fn nbytes(&self) -> u64 {
        self.geom.nitems() as u64 * self.geom.typesize() as u64
    }

    /// The compression parameters of the chunks (blocksize = one block).
    #[must_use]
    pub fn cparams(&self) -> &CParams {
        &self.cparams
    }

    /// The decompression parameters.
    #[must_use]
    pub fn dparams(&self) -> &DParams {
        &self.dparams
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

    /// The parameters that make an array like this one, on the same context (for
    /// [`NdArray::copy`]).
    #[must_use]
    pub fn params(&self) -> ArrayParams {
        let mut p = ArrayParams::new(self.geom.shape(), self.geom.typesize())
            .with_chunkshape(self.geom.chunkshape())
            .with_blockshape(self.geom.blockshape())
            .with_cparams(&CParams {
                nd: None,
                ..self.cparams.clone()
            })
            .with_dparams(&DParams {
                nd: None,
                ..self.dparams.clone()
            })
            .with_context(self.ctx.clone());
        p.dtype.clone_from(&self.meta.dtype);
        p
    }

    /// Copies the selection `slices` (one per leading dimension; the rest whole) into `out`
    /// as a C-order array of the selection's shape, decompressing only the blocks it touches
    /// (and, from a file, reading only those blocks' bytes).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for more slices than dimensions or a step of 0;
    /// [`Error::DestinationTooSmall`]; errors of the store and of decompression.
    pub fn get_slice(&self, slices: &[Slice], out: &mut [u8]) -> Result<SliceStats> {
        let sel = Selection::new(self.geom.shape(), slices)?;
        if let Some(r) = self.server_slice(&sel, out) {
            return r;
        }
        get_slice_cached(
            &self.ctx,
            &self.dparams,
            &self.geom,
            &self.store,
            &sel,
            out,
            self.cached(),
        )
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
            .ok_or(Error::Overflow {
                what: "the selection's size in bytes",
            })?;
        let mut out = crate::alloc::zeroed(n)?;
        match self.server_slice(&sel, &mut out) {
            Some(r) => r?,
            None => get_slice_cached(
                &self.ctx,
                &self.dparams,
                &self.geom,
                &self.store,
                &sel,
                &mut out,
                self.cached(),
            )?,
        };
        Ok((out, sel.shape().to_vec()))
    }

    /// Reads `sel` into `out` as the server the chunks come from cuts it
    /// ([`super::ChunkSource::server_selection`]: a remote array on a data service that slices), so
    /// that only the selection's compressed bytes travel, not the blocks it touches. `None`
    /// when the source cannot, for a whole-array or empty selection, for steps other than 1
    /// (the services differ there), and when a block cache is attached (its blocks serve
    /// repeated reads without any request).
    fn server_slice(&self, sel: &Selection, out: &mut [u8]) -> Option<Result<SliceStats>> {
        let shape = self.geom.shape();
        let dims = sel.dims();
        let whole = dims
            .iter()
            .zip(shape)
            .all(|(d, &n)| d.start == 0 && d.len == n);
        if self.cache.is_some()
            || sel.is_empty()
            || whole
            || dims.iter().any(|d| d.step != 1 && d.len > 1)
        {
            return None;
        }
        // Dimensions of one index are asked for as integers, which drop them from the frame
        // the server builds (NumPy's rule; the items' C order is the same), so that it
        // partitions the selection's real shape; the last one stays a range, so that the
        // answer is never 0-d.
        let last = dims.len() - 1;
        let all_single = dims.iter().all(|d| d.len == 1);
        let index = |k: usize| dims[k].len == 1 && !(k == last && all_single);
        let text = dims
            .iter()
            .enumerate()
            .map(|(k, d)| {
                if index(k) {
                    d.start.to_string()
                } else {
                    format!("{}:{}", d.start, d.start + d.len)
                }
            })
            .collect::<Vec<_>>()
            .join(",");
        let want: Vec<usize> = (0..dims.len())
            .filter(|&k| !index(k))
            .map(|k| dims[k].len)
            .collect();
        // A frame a little larger than its items: headers, `bstarts` and incompressible
        // blocks stored as they are.
        let nbytes = out.len() as u64;
        let max_len = nbytes + nbytes / 8 + (64 << 10);
        let (frame, moved) = match self.store.server_selection(&text, max_len)? {
            Ok(x) => x,
            Err(e) => return Some(Err(e)),
        };
        let read = || -> Result<SliceStats> {
            let opts = OpenOptions::new(OpenMode::Read).with_context(self.ctx.clone());
            let part = NdArray::from_cframe_with(frame, &opts)?;
            if part.shape() != want.as_slice() {
                return Err(Error::shapes(
                    "the selection the server sent",
                    &want,
                    part.shape(),
                ));
            }
            if part.typesize() != self.typesize() || part.dtype() != self.dtype() {
                return Err(Error::mismatch(
                    "bytes per item in the selection the server sent",
                    self.typesize(),
                    part.typesize(),
                ));
            }
            let mut stats = part.get_slice(&[], out)?;
            stats.bytes_read = moved.bytes;
            stats.requests = moved.requests;
            Ok(stats)
        };
        Some(read())
    }

    /// The selection `slices` as a new in-memory array with the same dtype and compression,
    /// partitions derived for its shape.
    ///
    /// # Errors
    /// As [`NdArray::get_slice_vec`] and [`NdArray::from_buffer`].
    pub fn slice(&self, slices: &[Slice]) -> Result<NdArray> {
        let (data, shape) = self.get_slice_vec(slices)?;
        let mut params = self.params();
        params.shape = shape;
        params.chunkshape = None;
        params.blockshape = None;
        NdArray::from_buffer(&params, &Location::Memory, &data)
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
    /// decompressed, updated and compressed again. The changed chunks go to the store in
    /// batches of up to 64 MiB of uncompressed chunks, one commit per batch: on a file, a
    /// crash leaves each batch written whole or not at all.
    ///
    /// # Errors
    /// [`Error::Io`] (permission denied) for an array opened read-only, before anything else
    /// is looked at; [`Error::OutOfRange`] for a bad selection or `data` shorter than it;
    /// errors of the store, compression and decompression.
    pub fn set_slice(&mut self, slices: &[Slice], data: &[u8]) -> Result<SliceStats> {
        self.store.check_writable()?;
        let sel = Selection::new(self.geom.shape(), slices)?;
        self.new_version();
        set_slice(
            &self.ctx,
            &self.cparams,
            &self.geom,
            &mut self.store,
            &sel,
            data,
        )
    }

    /// A copy at `location` with the partitions, dtype, compression, storage options and
    /// context of `params` (its shape and typesize must be this array's; missing partitions
    /// are derived), as `b2nd_copy`. The new chunks are built one at a time, in order, from
    /// slices of this array, and appended.
    ///
    /// # Errors
    /// [`Error::Mismatch`] / [`Error::ShapeMismatch`] if `params` has another typesize or shape;
    /// as [`NdArray::zeros`], [`NdArray::get_slice`] and compression.
    pub fn copy(&self, params: &ArrayParams, location: &Location) -> Result<NdArray> {
        if params.cparams.typesize != self.geom.typesize() {
            let what = "typesize of a copy (the array's)";
            return Err(Error::mismatch(
                what,
                self.geom.typesize(),
                params.cparams.typesize,
            ));
        }
        if params.shape.as_slice() != self.geom.shape() {
            let what = "a copy (the array's shape)";
            return Err(Error::shapes(what, self.geom.shape(), &params.shape));
        }
        let mut out = NdArray::create(params, location)?;
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
            let chunk = build_chunk(&out.ctx, &out.cparams, &out.geom, nchunk, &data)?;
            out.store.append_chunk(&chunk)?;
        }
        out.check_store()?;
        Ok(out)
    }
}
