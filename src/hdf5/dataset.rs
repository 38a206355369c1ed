//! [`H5Dataset`]: an HDF5 dataset opened for Strata's reads (feature `hdf5`).
//!
//! A chunked dataset whose pipeline is the Blosc2 filter alone, or Blosc2 then Fletcher32 (as
//! h5py and PyTables order them), of fixed-size items and rank 1 to 16, is read **directly**:
//! HDF5 only says where each chunk is, by its coordinates (never by allocated index, which
//! is how PyTables 3.11 returns another chunk's data for partly written datasets), and
//! Strata's slice engine reads and decompresses the chunk's blocks that a slice touches. A
//! chunk that is not stored reads as the dataset's fill value; one stored raw (the optional
//! filter skipped, its bit set in the filter mask) as its bytes; Fletcher32 is verified.
//! Every other dataset (other filters, contiguous or compact layouts, rank 0 or above 16),
//! and any chunk the direct path cannot make sense of, is read by HDF5 itself, with Strata's
//! filter registered in the linked libhdf5.
//!
//! Chunk addresses are normalised to file offsets: HDF5 before 1.14.4 reports them after the
//! user block, later versions from the start of the file.
//!
//! Format: `docs/hdf5.md`.
#![forbid(unsafe_code)]

use super::cd::FILTER_ID;
use super::h5::{self, ChunkInfo, Filter, Id};
use super::region::RegionIo;
use super::store::H5Chunks;
use crate::cache::{BlockCache, DatasetVersion};
use crate::error::{to_i64, Error, Expected, IoOp, Result};
use crate::frame::{FrameIo, Obj};
use crate::ndarray::selection::{Selection, Slice};
use crate::ndarray::{NdArray, SliceStats};
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The bytes a contiguous frame starts with: msgpack fixarray(14), fixstr(8) `"b2frame\0"`.
const FRAME_MAGIC: &[u8] = b"\x9e\xa8b2frame\0";

/// HDF5's Fletcher32 filter ID.
pub const FLETCHER32: i32 = 3;

/// Where a stored chunk is in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkLocation {
    /// Byte offset of the chunk's stored bytes from the start of the file (user block
    /// included, whatever the HDF5 version reports).
    pub file_offset: u64,
    /// Stored size in bytes.
    pub size: u64,
    /// HDF5's filter mask: bit `i` set when filter `i` of the pipeline was skipped.
    pub filter_mask: u32,
}

/// How a dataset is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Chunk by chunk, block by block, by Strata; `fletcher32` when a checksum follows each
    /// chunk's frame.
    Direct {
        /// Whether Fletcher32 follows Blosc2 in the pipeline.
        fletcher32: bool,
    },
    /// By HDF5 itself, for the reason given.
    Hdf5(String),
}

/// What the chunk store needs of an open dataset.
#[derive(Debug)]
pub(super) struct Inner {
    pub(super) context: String,
    path: PathBuf,
    /// The file, read directly (chunks' bytes, lazily).
    file: Arc<File>,
    name: Arc<str>,
    file_len: u64,
    _file: hdf5_metno::File,
    ds: hdf5_metno::Dataset,
    pub(super) type_id: Id,
    pub(super) shape: Vec<usize>,
    pub(super) chunkshape: Option<Vec<usize>>,
    pub(super) typesize: usize,
    pub(super) dtype: String,
    pub(super) filters: Vec<Filter>,
    pub(super) fill: Vec<u8>,
    /// Added to the addresses HDF5 reports (the user block's size, or 0).
    address_base: AtomicU64,
    userblock: u64,
    locations: Mutex<HashMap<Vec<u64>, Option<ChunkInfo>>>,
}

impl Inner {
    /// The chunk that starts at item `offset`, by coordinate, cached.
    pub(super) fn location(&self, offset: &[u64]) -> Result<Option<ChunkLocation>> {
        let mut cache = self
            .locations
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let info = match cache.get(offset) {
            Some(info) => *info,
            None => {
                let info = h5::chunk_info(self.ds.id(), offset, &self.context)?;
                cache.insert(offset.to_vec(), info);
                info
            }
        };
        drop(cache);
        let Some(info) = info else { return Ok(None) };
        let base = self.address_base.load(Ordering::Relaxed);
        match info
            .addr
            .checked_add(base)
            .and_then(|o| Some((o, o.checked_add(info.size)?)))
        {
            Some((file_offset, end)) if end <= self.file_len => Ok(Some(ChunkLocation {
                file_offset,
                size: info.size,
                filter_mask: info.filter_mask,
            })),
            _ => {
                let end = info.addr.saturating_add(base).saturating_add(info.size);
                let inside = Expected::at_most(self.file_len);
                let what = "end of a stored chunk (the file's length)";
                Err(Error::frame(
                    self.context.clone(),
                    Error::header(what, end, inside),
                ))
            }
        }
    }

    /// The stored bytes of a chunk, as a frame store.
    pub(super) fn region(&self, loc: &ChunkLocation) -> RegionIo {
        RegionIo::new(
            Arc::clone(&self.file),
            Arc::clone(&self.name),
            loc.file_offset,
            loc.size,
        )
    }

    /// Whether the frame magic is at `offset`.
    fn frame_at(&self, offset: u64) -> bool {
        let mut head = [0u8; FRAME_MAGIC.len()];
        let io = RegionIo::new(
            Arc::clone(&self.file),
            Arc::clone(&self.name),
            offset,
            head.len() as u64,
        );
        io.read_at(Obj::Frame, 0, &mut head).is_ok() && head == *FRAME_MAGIC
    }

    /// Checks the address base on the first stored frame among `probe` chunk offsets: when
    /// no frame starts where the version rule says but one starts with the user block
    /// counted the other way, the other way is taken.
    fn settle_address_base(&self, probe: impl Iterator<Item = Vec<u64>>) -> Result<()> {
        for offset in probe.take(256) {
            let Some(loc) = self.location(&offset)? else {
                continue;
            };
            if loc.filter_mask & 1 != 0 {
                continue;
            }
            let base = self.address_base.load(Ordering::Relaxed);
            let other = if base == 0 { self.userblock } else { 0 };
            if !self.frame_at(loc.file_offset) && other != base {
                let alt = loc.file_offset - base + other;
                if self.frame_at(alt) {
                    self.address_base.store(other, Ordering::Relaxed);
                }
            }
            return Ok(());
        }
        Ok(())
    }

    /// The stored bytes of the chunk that starts at item `offset` and its location.
    pub(super) fn stored(&self, offset: &[u64]) -> Result<Option<(ChunkLocation, Vec<u8>)>> {
        let Some(loc) = self.location(offset)? else {
            return Ok(None);
        };
        Ok(Some((loc, self.region(&loc).read_all()?)))
    }

    /// The item offsets of the chunks, in C order over the chunk grid.
    pub(super) fn chunk_offsets(&self) -> impl Iterator<Item = Vec<u64>> + '_ {
        let chunks = self.chunkshape.clone().unwrap_or_default();
        let grid: Vec<usize> = self
            .shape
            .iter()
            .zip(&chunks)
            .map(|(&s, &c)| s.div_ceil(c.max(1)))
            .collect();
        let strides = crate::ndarray::geometry::c_strides(&grid);
        let total: usize = if chunks.is_empty() {
            0
        } else {
            grid.iter().product()
        };
        (0..total).map(move |n| {
            strides
                .iter()
                .zip(&chunks)
                .scan(n, |rem, (&s, &c)| {
                    let i = *rem / s;
                    *rem %= s;
                    Some((i * c) as u64)
                })
                .collect()
        })
    }

    /// The Blosc2 filter's `cd_values` (the first filter of a direct dataset).
    pub(super) fn cd_values(&self) -> &[u32] {
        self.filters.first().map_or(&[], |f| &f.cd_values)
    }
}

/// An HDF5 dataset, read directly where its chunks are Blosc2 frames (see the module docs).
#[derive(Debug)]
pub struct H5Dataset {
    inner: Arc<Inner>,
    access: Access,
    array: Option<NdArray<H5Chunks>>,
}

/// `FILE.h5:/group/dataset` split at the last `.h5:`, `.hdf5:`, `.he5:` or `.nc:` (a path may
/// contain colons); `None` when `spec` names no dataset that way.
#[must_use]
pub fn split_spec(spec: &str) -> Option<(&str, &str)> {
    [".h5:", ".hdf5:", ".he5:", ".nc:"]
        .iter()
        .filter_map(|ext| spec.rfind(ext).map(|i| i + ext.len() - 1))
        .max()
        .map(|i| (&spec[..i], &spec[i + 1..]))
        .filter(|(_, name)| !name.is_empty())
}

/// The paths (`/group/dataset`) of every dataset in the HDF5 file `path`: each group's
/// datasets in name order, then its groups', depth first.
///
/// # Errors
/// [`Error::Io`] when the file cannot be opened or a group listed.
pub fn list_datasets(path: impl AsRef<Path>) -> Result<Vec<String>> {
    fn walk(g: &hdf5_metno::Group, depth: usize, out: &mut Vec<String>) -> hdf5_metno::Result<()> {
        for ds in g.datasets()? {
            out.push(ds.name());
        }
        if depth < 64 {
            for sub in g.groups()? {
                walk(&sub, depth + 1, out)?;
            }
        }
        Ok(())
    }
    let path = path.as_ref();
    let file = hdf5_metno::File::open(path).map_err(|e| open_error(path, &e))?;
    h5::close_on_exec(&file);
    let mut out = Vec::new();
    walk(&file, 0, &mut out).map_err(|e| open_error(path, &e))?;
    Ok(out)
}

fn open_error(path: &Path, e: &hdf5_metno::Error) -> Error {
    let path = path.display().to_string();
    Error::refused(path, IoOp::Open, std::io::ErrorKind::Other, &e.to_string())
}

impl H5Dataset {
    /// Opens dataset `name` (`/group/dataset`) of the HDF5 file `path`, read only.
    ///
    /// # Errors
    /// [`Error::Io`] when the file or the dataset cannot be opened or described (HDF5's
    /// message); [`Error::Dtype`] for a dataset without fixed-size items.
    pub fn open(path: impl AsRef<Path>, name: &str) -> Result<H5Dataset> {
        let path = path.as_ref();
        let file = hdf5_metno::File::open(path).map_err(|e| open_error(path, &e))?;
        h5::close_on_exec(&file);
        let ds = file.dataset(name).map_err(|e| open_error(path, &e))?;
        Self::from_parts(path, name, file, ds)
    }

    pub(super) fn from_parts(
        path: &Path,
        name: &str,
        file: hdf5_metno::File,
        ds: hdf5_metno::Dataset,
    ) -> Result<H5Dataset> {
        h5::register_filter()?;
        let context = format!("{}:{name}", path.display());
        let d = h5::describe(ds.id(), &context)?;
        let typesize = h5::type_size(d.type_id.raw());
        let dtype = h5::numpy_dtype(d.type_id.raw(), &context)?;
        let chunkshape = h5::chunk_dims(d.dcpl.raw()).map(|c| {
            c.iter()
                .map(|&x| usize::try_from(x).unwrap_or(usize::MAX))
                .collect::<Vec<_>>()
        });
        let filters = h5::filters(d.dcpl.raw(), &context)?;
        let fill = h5::fill_value(d.dcpl.raw(), d.type_id.raw(), typesize, &context)?;
        let userblock = file.userblock();
        let address_base = if h5::addresses_after_userblock() {
            userblock
        } else {
            0
        };
        let raw =
            File::open(path).map_err(|e| Error::io(path.display().to_string(), IoOp::Open, e))?;
        let file_len = raw.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
        let access = access(&d.shape, chunkshape.as_deref(), &filters);
        let inner = Arc::new(Inner {
            name: context.as_str().into(),
            context,
            path: path.to_path_buf(),
            file: Arc::new(raw),
            file_len,
            _file: file,
            ds,
            type_id: d.type_id,
            shape: d.shape,
            chunkshape,
            typesize,
            dtype,
            filters,
            fill,
            address_base: AtomicU64::new(address_base),
            userblock,
            locations: Mutex::new(HashMap::new()),
        });
        if matches!(access, Access::Direct { .. }) {
            inner.settle_address_base(inner.chunk_offsets())?;
        }
        let array = match access {
            Access::Direct { fletcher32 } => Some(H5Chunks::array(Arc::clone(&inner), fletcher32)?),
            Access::Hdf5(_) => None,
        };
        Ok(H5Dataset {
            inner,
            access,
            array,
        })
    }

    /// The file it is in.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Shape in items.
    #[must_use]
    pub fn shape(&self) -> &[usize] {
        &self.inner.shape
    }

    /// Chunk dims in items (`None` for contiguous and compact datasets).
    #[must_use]
    pub fn chunkshape(&self) -> Option<&[usize]> {
        self.inner.chunkshape.as_deref()
    }

    /// The blockshape of the direct path's blocks inside each chunk.
    #[must_use]
    pub fn blockshape(&self) -> Option<&[usize]> {
        self.array.as_ref().map(NdArray::blockshape)
    }

    /// The NumPy dtype of its items (`"<f4"`, `"[('a', '<i4'), ('b', '<f8')]"`…).
    #[must_use]
    pub fn dtype(&self) -> &str {
        &self.inner.dtype
    }

    /// Item size in bytes.
    #[must_use]
    pub fn typesize(&self) -> usize {
        self.inner.typesize
    }

    /// The filter pipeline, in the order HDF5 applies it on write.
    #[must_use]
    pub fn filters(&self) -> &[Filter] {
        &self.inner.filters
    }

    /// The fill value: one item in the dataset's type (zeros when none is defined).
    #[must_use]
    pub fn fill_value(&self) -> &[u8] {
        &self.inner.fill
    }

    /// How it is read.
    #[must_use]
    pub fn access(&self) -> &Access {
        &self.access
    }

    /// Bytes its chunks (or its contiguous data) take in the file.
    #[must_use]
    pub fn storage_size(&self) -> u64 {
        h5::storage_size(self.inner.ds.id())
    }

    /// Threads that decompress blocks at once on the direct path (0: the runtime's default).
    pub fn set_nthreads(&mut self, nthreads: usize) {
        if let Some(array) = &mut self.array {
            array.set_nthreads(0, nthreads);
        }
    }

    /// Makes the direct path read its blocks through `cache` (shared with other arrays and
    /// datasets), or through none (`None`). HDF5 gives no cheap name for the state of a
    /// dataset, so the blocks are kept under a version of this open dataset alone: another
    /// open of the same dataset does not find them. Datasets HDF5 reads bypass the cache.
    pub fn set_cache(&mut self, cache: Option<Arc<BlockCache>>) {
        if let Some(array) = &mut self.array {
            array.set_cache_as(cache.map(|c| (c, DatasetVersion::unique())));
        }
    }

    /// Where the chunk at chunk coordinates `coords` (chunk indices, not items) is stored;
    /// `None` when it is not.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for a contiguous dataset, [`Error::Mismatch`] / [`Error::OutOfRange`]
    /// for coordinates outside its chunk grid (in an [`Error::InFile`] naming the dataset);
    /// [`Error::Io`] from HDF5; [`Error::Frame`] when the chunk ends past the end of the file.
    pub fn chunk_location(&self, coords: &[usize]) -> Result<Option<ChunkLocation>> {
        self.inner.location(&self.chunk_offset(coords)?)
    }

    /// The stored bytes of the chunk at chunk coordinates `coords` (what the pipeline wrote,
    /// checksum included) and where they are; `None` when it is not stored.
    ///
    /// # Errors
    /// As [`H5Dataset::chunk_location`].
    pub fn stored_chunk(&self, coords: &[usize]) -> Result<Option<(ChunkLocation, Vec<u8>)>> {
        self.inner.stored(&self.chunk_offset(coords)?)
    }

    fn chunk_offset(&self, coords: &[usize]) -> Result<Vec<u64>> {
        let here = |e| Error::in_file(self.inner.context.as_str(), e);
        let chunks = self.inner.chunkshape.as_deref().ok_or_else(|| {
            here(Error::Unsupported {
                what: "the dataset is not chunked",
            })
        })?;
        if coords.len() != chunks.len() {
            let what = "chunk coordinates (one per dimension)";
            return Err(here(Error::mismatch(what, chunks.len(), coords.len())));
        }
        let shape = &self.inner.shape;
        let outside =
            (0..coords.len()).find(|&d| coords[d].saturating_mul(chunks[d]) >= shape[d].max(1));
        if let Some(d) = outside {
            let grid = Expected::Below(to_i64(shape[d].max(1).div_ceil(chunks[d].max(1))));
            let coord = Error::range("chunk coordinate", coords[d], grid);
            return Err(here(Error::at("dimension", d, coord)));
        }
        Ok(coords
            .iter()
            .zip(chunks)
            .map(|(&c, &n)| (c * n) as u64)
            .collect())
    }

    /// Copies the selection `slices` (NumPy's start:stop:step per dimension; missing
    /// dimensions whole) into `out`, C order; returns what the direct path did (all zero when
    /// HDF5 read it).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for a bad selection; [`Error::DestinationTooSmall`]; the direct
    /// path's error (a corrupt chunk, a bad checksum, a chunk past the end of the file) when
    /// HDF5 cannot read the selection either.
    pub fn get_slice(&self, slices: &[Slice], out: &mut [u8]) -> Result<SliceStats> {
        let sel = Selection::new(&self.inner.shape, slices)?;
        let nbytes = sel
            .nitems()
            .and_then(|n| n.checked_mul(self.inner.typesize))
            .ok_or(Error::MemoryAlloc(usize::MAX))?;
        if out.len() < nbytes {
            return Err(Error::DestinationTooSmall {
                needed: nbytes,
                available: out.len(),
            });
        }
        let Some(array) = &self.array else {
            self.read_by_hdf5(&sel, &mut out[..nbytes])?;
            return Ok(SliceStats::default());
        };
        match array.get_slice(slices, out) {
            Ok(stats) => Ok(stats),
            Err(direct) => match self.read_by_hdf5(&sel, &mut out[..nbytes]) {
                Ok(()) => Ok(SliceStats::default()),
                Err(_) => Err(direct),
            },
        }
    }

    /// The selection `slices` as a new vector (C order) and its shape.
    ///
    /// # Errors
    /// As [`H5Dataset::get_slice`]; [`Error::MemoryAlloc`].
    pub fn get_slice_vec(&self, slices: &[Slice]) -> Result<(Vec<u8>, Vec<usize>)> {
        let sel = Selection::new(&self.inner.shape, slices)?;
        let n = sel
            .nitems()
            .and_then(|n| n.checked_mul(self.inner.typesize))
            .ok_or(Error::MemoryAlloc(usize::MAX))?;
        let mut out = crate::alloc::zeroed(n)?;
        self.get_slice(slices, &mut out)?;
        Ok((out, sel.shape().to_vec()))
    }

    /// The whole dataset, C order.
    ///
    /// # Errors
    /// As [`H5Dataset::get_slice_vec`].
    pub fn to_vec(&self) -> Result<Vec<u8>> {
        self.get_slice_vec(&[]).map(|(v, _)| v)
    }

    /// The selection as HDF5 reads it (through its own pipeline), reversed where a step is
    /// negative.
    fn read_by_hdf5(&self, sel: &Selection, out: &mut [u8]) -> Result<()> {
        let dims = sel.dims();
        let start: Vec<u64> = dims.iter().map(|d| d.lowest() as u64).collect();
        let stride: Vec<u64> = dims.iter().map(|d| d.stride().max(1) as u64).collect();
        let count: Vec<u64> = dims.iter().map(|d| d.len as u64).collect();
        if count.contains(&0) {
            return Ok(());
        }
        let bytes = h5::read_selection(
            self.inner.ds.id(),
            self.inner.type_id.raw(),
            self.inner.typesize,
            &start,
            &stride,
            &count,
            &self.inner.context,
        )?;
        let reversed: Vec<bool> = dims.iter().map(|d| d.reversed()).collect();
        copy_reversed(&bytes, out, sel.shape(), self.inner.typesize, &reversed);
        Ok(())
    }
}

/// Which path reads a dataset of `shape`, chunks `chunks` and pipeline `filters`.
fn access(shape: &[usize], chunks: Option<&[usize]>, filters: &[Filter]) -> Access {
    let ids: Vec<i32> = filters.iter().map(|f| f.id).collect();
    let fletcher32 = match ids.as_slice() {
        [FILTER_ID] => false,
        [FILTER_ID, FLETCHER32] => true,
        _ => return Access::Hdf5(format!("its filter pipeline is {ids:?}, not Blosc2 ({FILTER_ID}) alone or with Fletcher32 after it")),
    };
    if chunks.is_none() {
        return Access::Hdf5("it is not chunked".into());
    }
    if !(1..=crate::format::b2nd::MAX_DIM).contains(&shape.len()) {
        return Access::Hdf5(format!(
            "rank {} is not 1 to {}",
            shape.len(),
            crate::format::b2nd::MAX_DIM
        ));
    }
    Access::Direct { fletcher32 }
}

/// Copies the C-order array `src` of `shape` into `dst`, each dimension whose `reversed` is
/// set in reverse order.
fn copy_reversed(src: &[u8], dst: &mut [u8], shape: &[usize], typesize: usize, reversed: &[bool]) {
    if !reversed.contains(&true) {
        dst[..src.len()].copy_from_slice(src);
        return;
    }
    let strides = crate::ndarray::geometry::c_strides(shape);
    let n: usize = shape.iter().product();
    let mut idx = vec![0usize; shape.len()];
    for i in 0..n {
        let mut rem = i;
        for (d, s) in strides.iter().enumerate() {
            idx[d] = rem / s;
            rem %= s;
        }
        let j: usize = idx
            .iter()
            .enumerate()
            .map(|(d, &k)| if reversed[d] { shape[d] - 1 - k } else { k } * strides[d])
            .sum();
        dst[j * typesize..(j + 1) * typesize]
            .copy_from_slice(&src[i * typesize..(i + 1) * typesize]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_split_at_the_last_hdf5_extension() {
        assert_eq!(split_spec("a.h5:/x"), Some(("a.h5", "/x")));
        assert_eq!(
            split_spec("dir:1/b.hdf5:/g/y"),
            Some(("dir:1/b.hdf5", "/g/y"))
        );
        assert_eq!(split_spec("c.nc:t"), Some(("c.nc", "t")));
        assert_eq!(split_spec("a.h5"), None);
        assert_eq!(split_spec("a.h5:"), None);
        assert_eq!(split_spec("x.b2nd"), None);
    }

    #[test]
    fn only_blosc2_alone_or_before_fletcher32_is_read_directly() {
        let f = |id| Filter {
            id,
            name: String::new(),
            flags: 0,
            cd_values: vec![],
        };
        let chunks = Some(&[10usize, 10][..]);
        assert_eq!(
            access(&[20, 20], chunks, &[f(FILTER_ID)]),
            Access::Direct { fletcher32: false }
        );
        assert_eq!(
            access(&[20, 20], chunks, &[f(FILTER_ID), f(3)]),
            Access::Direct { fletcher32: true }
        );
        assert!(matches!(
            access(&[20, 20], chunks, &[f(3), f(FILTER_ID)]),
            Access::Hdf5(_)
        ));
        assert!(matches!(
            access(&[20, 20], chunks, &[f(2), f(FILTER_ID)]),
            Access::Hdf5(_)
        ));
        assert!(matches!(
            access(&[20, 20], None, &[f(FILTER_ID)]),
            Access::Hdf5(_)
        ));
        assert!(matches!(
            access(&[], chunks, &[f(FILTER_ID)]),
            Access::Hdf5(_)
        ));
    }

    #[test]
    fn reversed_copies_mirror_the_reversed_axes() {
        let src: Vec<u8> = (0..6).collect(); // shape (2, 3), typesize 1
        let mut dst = vec![0; 6];
        copy_reversed(&src, &mut dst, &[2, 3], 1, &[false, true]);
        assert_eq!(dst, [2, 1, 0, 5, 4, 3]);
        copy_reversed(&src, &mut dst, &[2, 3], 1, &[true, true]);
        assert_eq!(dst, [5, 4, 3, 2, 1, 0]);
    }
}
