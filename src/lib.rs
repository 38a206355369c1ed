//! # Strata
//!
//! Chunked, compressed N-dimensional arrays that read and write the Blosc2 formats byte for
//! byte, so data moves freely between Strata, C-Blosc2 and python-blosc2.
//!
//! Layers, bottom up: [`format`](mod@format) (byte layouts), [`codecs`] and [`filters`] (one module per
//! Blosc2 ID), [`registry`] (ID → codec/filter), [`chunk`] (compress, decompress and getitem of
//! one chunk), [`frame`] (frames on a file, a directory or memory, written crash-safely),
//! [`schunk`] (the super-chunk: chunks, metalayers and vlmetalayers in a frame),
//! [`ndarray`] (b2nd arrays in super-chunks: `.b2nd` files, sparse directories or memory, read
//! and written by slices that touch only the blocks they need) and [`hdf5`] (HDF5 datasets
//! whose chunks are Blosc2 frames, filter 32026).
//!
//! ```
//! use strata::chunk::{compress_vec, decompress_vec, CParams};
//! let data: Vec<u8> = (0..10_000u32).flat_map(|i| i.to_le_bytes()).collect();
//! let cparams = CParams { typesize: 4, ..CParams::default() };
//! let chunk = compress_vec(&cparams, &data).unwrap();
//! assert!(chunk.len() < data.len() / 10);
//! assert_eq!(decompress_vec(&chunk).unwrap(), data);
//! ```

#![deny(unsafe_code)]

mod alloc;
pub mod block;
pub mod cache;
pub mod chunk;
pub mod codecs;
pub mod error;
// The C ABI (`include/strata.h`, generated from this module): its functions are exported from
// the shared and static libraries; its Rust items are not part of the Rust API.
mod ffi;
pub mod filters;
pub mod format;
pub mod frame;
pub mod hdf5;
pub mod ndarray;
pub mod registry;
pub mod scheduler;
pub mod schunk;

/// The C ABI's Rust items (constants, parameter structs, the `extern "C"` functions), for
/// Strata's own tests, which check them against the header: feature `test-kit` only.
#[cfg(feature = "test-kit")]
pub mod capi {
    pub use crate::ffi::*;
}

pub use error::{Error, Result};
pub use format::ids::{CodecId, FilterId};
pub use ndarray::{ArrayParams, NdArray};
