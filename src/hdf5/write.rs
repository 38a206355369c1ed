//! Writing HDF5 datasets of Blosc2 chunks past HDF5's filter pipeline (feature `hdf5`): the
//! dataset is created with the Blosc2 filter and its `cd_values` (as the filter's
//! `set_local` would store them), then every chunk is written whole with `H5Dwrite_chunk`,
//! compressed in parallel on Strata's runtime. The chunks are those the filter writes: b2nd
//! frames for ranks 2 to 8 (rank 1 too when copied from an array), plain frames otherwise,
//! so h5py with hdf5plugin, PyTables, h5dump and Strata's plugin read them.
//!
//! * [`write_array`]: a C-order buffer, with an [`ArrayParams`]' partitions and compression;
//! * [`export_array`]: a b2nd array (any [`ChunkStore`]); its chunks go into the file as they
//!   are stored, each wrapped in a frame, without recompression (ranks 1 to 8).
//!
//! Format: `docs/hdf5.md`.
#![forbid(unsafe_code)]

use super::cd::{self, Settings};
use super::chunk::{encode_with, frame_of_chunk};
use super::h5::{self, Id};
use crate::chunk::CParams;
use crate::error::{Error, IoOp, Result};
use crate::format::b2nd::B2ndMeta;
use crate::ndarray::dtype::itemsize;
use crate::ndarray::selection::Slice;
use crate::ndarray::store::ChunkStore;
use crate::ndarray::{ArrayParams, NdArray};
use std::io::ErrorKind;
use std::path::Path;

/// Bytes of uncompressed chunks compressed at once.
const BATCH_BYTES: usize = 256 << 20;

/// What a write stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Chunks written.
    pub chunks: usize,
    /// Their stored bytes.
    pub stored_bytes: u64,
    /// Chunks compressed (0 when an array's chunks were copied).
    pub compressed: usize,
}

/// A dataset being written: the file, its identifier, and the geometry of its chunks.
struct Target {
    file: hdf5_metno::File,
    ds: Id,
    context: String,
    shape: Vec<usize>,
    chunks: Vec<usize>,
    typesize: usize,
    cd: Vec<u32>,
}

impl Target {
    /// Creates dataset `name` in `path` (the file made if missing, kept otherwise; an existing
    /// dataset replaced only with `overwrite`).
    fn create(
        path: &Path,
        name: &str,
        meta: &B2ndMeta,
        cparams: &CParams,
        overwrite: bool,
    ) -> Result<Target> {
        let context = format!("{}:{name}", path.display());
        if meta.shape.is_empty() {
            let what = "a chunked dataset needs rank 1 or more";
            return Err(Error::in_file(context, Error::Unsupported { what }));
        }
        let io = |e: hdf5_metno::Error| {
            Error::refused(
                context.as_str(),
                IoOp::Write,
                ErrorKind::Other,
                &e.to_string(),
            )
        };
        h5::register_filter()?;
        let file = hdf5_metno::File::append(path).map_err(io)?;
        h5::close_on_exec(&file);
        if file.link_exists(name) {
            if !overwrite {
                return Err(Error::refused(
                    context,
                    IoOp::Open,
                    ErrorKind::AlreadyExists,
                    "the dataset already exists (remove it or allow overwriting)",
                ));
            }
            file.unlink(name).map_err(io)?;
        }
        let dtype = meta
            .dtype
            .clone()
            .unwrap_or_else(|| format!("|S{}", cparams.typesize));
        let typesize = itemsize(&dtype)?;
        let type_id = h5::h5_type(&dtype)?;
        let shape: Vec<usize> = meta.shape.iter().map(|&s| s as usize).collect();
        let chunks: Vec<usize> = meta.chunkshape.iter().map(|&c| c.max(1) as usize).collect();
        let chunk_dims: Vec<u64> = chunks.iter().map(|&c| c as u64).collect();
        let given = [
            0,
            cparams.blocksize as u32,
            0,
            0,
            u32::from(cparams.clevel),
            u32::from(cparams.filters[5].0),
            u32::from(cparams.codec.0),
        ];
        let cd = cd::set_local(&given, typesize, typesize, &chunk_dims)?;
        let shape64: Vec<u64> = shape.iter().map(|&s| s as u64).collect();
        let ds = h5::create_dataset(
            file.id(),
            name,
            type_id.raw(),
            &shape64,
            &chunk_dims,
            &cd,
            &context,
        )?;
        Ok(Target {
            file,
            ds,
            context,
            shape,
            chunks,
            typesize,
            cd,
        })
    }

    fn nchunks(&self) -> usize {
        self.grid().iter().product()
    }

    fn grid(&self) -> Vec<usize> {
        self.shape
            .iter()
            .zip(&self.chunks)
            .map(|(&s, &c)| s.div_ceil(c))
            .collect()
    }

    /// The item offset of chunk `n` (C order over the grid).
    fn offset(&self, n: usize) -> Vec<u64> {
        let grid = self.grid();
        let strides = crate::ndarray::geometry::c_strides(&grid);
        strides
            .iter()
            .zip(&self.chunks)
            .scan(n, |rem, (&s, &c)| {
                let i = *rem / s;
                *rem %= s;
                Some((i * c) as u64)
            })
            .collect()
    }

    fn chunksize(&self) -> usize {
        self.chunks.iter().product::<usize>() * self.typesize
    }

    fn write(&self, n: usize, bytes: &[u8], stats: &mut WriteStats) -> Result<()> {
        h5::write_chunk(self.ds.raw(), &self.offset(n), 0, bytes, &self.context)?;
        stats.chunks += 1;
        stats.stored_bytes += bytes.len() as u64;
        Ok(())
    }

    fn finish(self) -> Result<()> {
        drop(self.ds);
        self.file
            .flush()
            .map_err(|e| Error::refused(self.context, IoOp::Sync, ErrorKind::Other, &e.to_string()))
    }
}

/// The box of `dims` items at item `offset` of the C-order array `data` of `shape`, C order,
/// zeros where the box passes the array's edge.
fn copy_box(
    data: &[u8],
    shape: &[usize],
    offset: &[usize],
    dims: &[usize],
    typesize: usize,
) -> Vec<u8> {
    let ndim = shape.len();
    let mut out = vec![0u8; dims.iter().product::<usize>() * typesize];
    let extent: Vec<usize> = (0..ndim)
        .map(|d| dims[d].min(shape[d] - offset[d]))
        .collect();
    if extent.contains(&0) {
        return out;
    }
    let src_strides = crate::ndarray::geometry::c_strides(shape);
    let dst_strides = crate::ndarray::geometry::c_strides(dims);
    let row = extent[ndim - 1] * typesize;
    let rows: usize = extent[..ndim - 1].iter().product();
    let mut idx = vec![0usize; ndim - 1];
    for _ in 0..rows {
        let src: usize = (0..ndim)
            .map(|d| (offset[d] + idx.get(d).copied().unwrap_or(0)) * src_strides[d])
            .sum();
        let dst: usize = idx.iter().zip(&dst_strides).map(|(&i, &s)| i * s).sum();
        out[dst * typesize..dst * typesize + row]
            .copy_from_slice(&data[src * typesize..src * typesize + row]);
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < extent[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

/// Chunk `n` of `target` out of the C-order array `data` (the whole dataset).
fn chunk_items(target: &Target, data: &[u8], n: usize) -> Vec<u8> {
    let offset: Vec<usize> = target.offset(n).iter().map(|&o| o as usize).collect();
    copy_box(
        data,
        &target.shape,
        &offset,
        &target.chunks,
        target.typesize,
    )
}

/// Writes the C-order array `data` as dataset `name` of the HDF5 file `path`, with the shape,
/// dtype, partitions (chunk dims = chunkshape, blocks = blockshape; derived when not given)
/// and compression of `params`; `params.overwrite` replaces an existing dataset. The chunks
/// are compressed in parallel, a batch at a time, and written with `H5Dwrite_chunk`.
///
/// # Errors
/// An invalid-parameter error (code −12) for bad parameters, a dtype HDF5 cannot hold
/// ([`Error::Dtype`]), or `data` of another size than the array ([`Error::Mismatch`]);
/// [`Error::Io`] from HDF5.
pub fn write_array(
    path: impl AsRef<Path>,
    name: &str,
    params: &ArrayParams,
    data: &[u8],
) -> Result<WriteStats> {
    let ctx = &params.context;
    let meta = params.meta()?;
    let target = Target::create(
        path.as_ref(),
        name,
        &meta,
        &params.cparams,
        params.overwrite,
    )?;
    let nitems: usize = target.shape.iter().product();
    if data.len() != nitems * target.typesize {
        let what = "bytes of data (those of the dataset)";
        return Err(Error::mismatch(what, nitems * target.typesize, data.len()));
    }
    let mut settings = Settings::from_cd(&target.cd)?;
    let blockshape: Vec<usize> = meta.blockshape.iter().map(|&b| b as usize).collect();
    if let [block] = blockshape[..] {
        // Rank 1: plain frames, whose blocks are the array's when their blocksize says so.
        settings.blocksize = block * target.typesize;
    }
    let mut stats = WriteStats::default();
    let per_batch = (BATCH_BYTES / target.chunksize().max(1)).max(1);
    let nthreads = ctx.runtime().nthreads();
    let nchunks = if nitems == 0 { 0 } else { target.nchunks() };
    for first in (0..nchunks).step_by(per_batch) {
        let batch = first..nchunks.min(first + per_batch);
        let encoded = if batch.len() >= nthreads {
            // One chunk per thread, each compressing its blocks on its own.
            ctx.runtime().map_index(batch.len(), 0, |i| {
                encode_with(
                    &settings,
                    &chunk_items(&target, data, first + i),
                    Some(&blockshape),
                    1,
                )
            })?
        } else {
            // Fewer chunks than threads: their blocks in parallel, one chunk after the other.
            batch
                .clone()
                .map(|n| {
                    encode_with(
                        &settings,
                        &chunk_items(&target, data, n),
                        Some(&blockshape),
                        0,
                    )
                })
                .collect::<Result<Vec<_>>>()?
        };
        for (n, bytes) in batch.zip(&encoded) {
            target.write(n, bytes, &mut stats)?;
        }
        stats.compressed += encoded.len();
    }
    target.finish()?;
    Ok(stats)
}

/// Writes the b2nd array `arr` as dataset `name` of the HDF5 file `path`: chunk dims its
/// chunkshape, `cd_values` from its compression parameters, and for ranks 1 to 8 each of its
/// chunks as stored (wrapped in a b2nd frame: not recompressed, special chunks kept); above
/// rank 8, each chunk decompressed and written as a plain frame. `overwrite` replaces an
/// existing dataset.
///
/// # Errors
/// [`Error::Dtype`] for a dtype HDF5 cannot hold; read errors of `arr`; [`Error::Io`]
/// from HDF5.
pub fn export_array<S: ChunkStore>(
    arr: &NdArray<S>,
    path: impl AsRef<Path>,
    name: &str,
    overwrite: bool,
) -> Result<WriteStats> {
    let meta = arr.meta().clone();
    let target = Target::create(path.as_ref(), name, &meta, arr.cparams(), overwrite)?;
    let mut stats = WriteStats::default();
    if arr.ndim() <= cd::MAX_WRITE_RANK {
        let chunk_meta = B2ndMeta::new(
            meta.chunkshape.iter().map(|&c| i64::from(c)).collect(),
            meta.chunkshape.clone(),
            meta.blockshape.clone(),
            meta.dtype.as_deref().unwrap_or("|V1"),
        )?;
        let chunk_meta = B2ndMeta {
            dtype: meta.dtype.clone(),
            ..chunk_meta
        };
        let cparams = CParams {
            nd: None,
            ..arr.cparams().clone()
        };
        for n in 0..arr.store().nchunks() {
            let chunk = arr.store().chunk(n)?;
            let frame = frame_of_chunk(&chunk_meta, &cparams, &chunk)?;
            target.write(n, &frame, &mut stats)?;
        }
    } else {
        let settings = Settings::from_cd(&target.cd)?;
        for n in 0..target.nchunks() {
            let offset = target.offset(n);
            let slices: Vec<Slice> = offset
                .iter()
                .zip(&target.chunks)
                .map(|(&o, &c)| Slice::range(o as i64, (o as usize + c) as i64))
                .collect();
            let (items, shape) = arr.get_slice_vec(&slices)?;
            let padded = copy_box(
                &items,
                &shape,
                &vec![0; shape.len()],
                &target.chunks,
                target.typesize,
            );
            let bytes = encode_with(&settings, &padded, None, 0)?;
            target.write(n, &bytes, &mut stats)?;
            stats.compressed += 1;
        }
    }
    target.finish()?;
    Ok(stats)
}
