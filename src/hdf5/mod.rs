//! HDF5 datasets whose chunks are Blosc2 frames: HDF5's Blosc2 filter, ID 32026, as hdf5plugin
//! and PyTables write it.
//!
//! Always built (no libhdf5 needed):
//! * [`cd`]: the `cd_values` a dataset's pipeline stores, and what they mean;
//! * [`chunk`]: one HDF5 chunk (a Blosc2 frame) decoded and encoded;
//! * [`filter`]: the filter function over any libhdf5 ([`filter::Host`]), which the plugin
//!   library `plugins/hdf5` exports to HDF5.
//!
//! See `docs/hdf5.md`.

pub mod cd;
pub mod chunk;
pub mod filter;
pub mod fletcher32;

#[cfg(feature = "hdf5")]
mod dataset;
#[cfg(feature = "hdf5")]
mod h5;
#[cfg(feature = "hdf5")]
pub mod region;
#[cfg(feature = "hdf5")]
mod store;

#[cfg(feature = "hdf5")]
pub use dataset::{list_datasets, split_spec, Access, ChunkLocation, H5Dataset, FLETCHER32};
#[cfg(feature = "hdf5")]
pub use h5::Filter;
#[cfg(feature = "hdf5")]
pub use store::H5Chunks;
#[cfg(feature = "hdf5")]
mod write;
#[cfg(feature = "hdf5")]
pub use write::{export_array, write_array, WriteStats};
