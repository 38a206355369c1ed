//! The arrays the commands read: a b2nd array (a `.b2nd` file or a sparse directory) or a
//! dataset of an HDF5 file, named `FILE.h5:/group/dataset` (read by the library's direct path:
//! only the chunks and blocks a selection touches; datasets it cannot read that way, by HDF5).

use anyhow::{Context, Result};
use std::path::Path;
use strata::hdf5::{split_spec, H5Dataset};
use strata::ndarray::{NdArray, Slice, SliceStats};

/// An array a command reads.
#[derive(Debug)]
pub enum Source {
    /// A b2nd array.
    B2nd(NdArray),
    /// A dataset of an HDF5 file.
    Hdf5(H5Dataset),
}

/// The HDF5 file and dataset `path` names (`FILE.h5:/dataset`), unless it names an existing
/// file or directory as it is.
pub fn hdf5_spec(path: &Path) -> Option<(&str, &str)> {
    if path.exists() {
        return None;
    }
    split_spec(path.to_str()?)
}

impl Source {
    /// Opens `path` for reading with `nthreads` threads decompressing blocks.
    ///
    /// # Errors
    /// The array or dataset cannot be opened; the message names it.
    pub fn open(path: &Path, nthreads: usize) -> Result<Source> {
        if let Some((file, name)) = hdf5_spec(path) {
            let mut ds = H5Dataset::open(file, name)
                .with_context(|| format!("cannot open {}", path.display()))?;
            ds.set_nthreads(nthreads);
            return Ok(Source::Hdf5(ds));
        }
        let mut arr = crate::input::open_array(path)?;
        arr.set_nthreads(0, nthreads);
        Ok(Source::B2nd(arr))
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// Shape in items.
    pub fn shape(&self) -> &[usize] {
        match self {
            Source::B2nd(a) => a.shape(),
            Source::Hdf5(d) => d.shape(),
        }
    }

    /// Item size in bytes.
    pub fn typesize(&self) -> usize {
        match self {
            Source::B2nd(a) => a.typesize(),
            Source::Hdf5(d) => d.typesize(),
        }
    }

    /// The NumPy dtype, or the default C-Blosc2 gives arrays without one.
    pub fn dtype(&self) -> String {
        match self {
            Source::B2nd(a) => a
                .dtype()
                .map_or_else(|| format!("|V{}", a.typesize()), str::to_owned),
            Source::Hdf5(d) => d.dtype().to_owned(),
        }
    }

    /// Chunk shape (an HDF5 dataset's chunk dims; its shape when not chunked).
    pub fn chunkshape(&self) -> Vec<usize> {
        match self {
            Source::B2nd(a) => a.chunkshape().to_vec(),
            Source::Hdf5(d) => d.chunkshape().unwrap_or(d.shape()).to_vec(),
        }
    }

    /// Block shape (an HDF5 dataset read by HDF5 has none: its chunks).
    pub fn blockshape(&self) -> Vec<usize> {
        match self {
            Source::B2nd(a) => a.blockshape().to_vec(),
            Source::Hdf5(d) => d
                .blockshape()
                .map_or_else(|| self.chunkshape(), <[usize]>::to_vec),
        }
    }

    /// Bytes of the items.
    pub fn nbytes(&self) -> u64 {
        self.shape()
            .iter()
            .fold(self.typesize() as u64, |a, &d| a.saturating_mul(d as u64))
    }

    /// Copies the selection `slices` into `out` (C order).
    ///
    /// # Errors
    /// The library's, for a bad selection or data that does not decode.
    pub fn get_slice(&self, slices: &[Slice], out: &mut [u8]) -> strata::Result<SliceStats> {
        match self {
            Source::B2nd(a) => a.get_slice(slices, out),
            Source::Hdf5(d) => d.get_slice(slices, out),
        }
    }

    /// The selection `slices` as a new vector and its shape.
    ///
    /// # Errors
    /// As [`Source::get_slice`].
    pub fn get_slice_vec(&self, slices: &[Slice]) -> strata::Result<(Vec<u8>, Vec<usize>)> {
        match self {
            Source::B2nd(a) => a.get_slice_vec(slices),
            Source::Hdf5(d) => d.get_slice_vec(slices),
        }
    }
}
