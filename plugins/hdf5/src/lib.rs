//! HDF5's Blosc2 filter (ID 32026) on Strata: a plugin HDF5 loads from `HDF5_PLUGIN_PATH`, in
//! h5py (hdf5plugin need not be imported, for reading or writing), PyTables and HDF5's own
//! tools (h5dump, h5repack).
//!
//! The filter itself is Strata's ([`strata::hdf5::cd`] for the `cd_values`,
//! [`strata::hdf5::chunk`] for the chunks' bytes, [`strata::hdf5::filter`] for the call); this
//! crate is the glue that makes it a plugin:
//!
//! * `host`: the host's `H5*` functions, found at run time in the libhdf5 that calls the
//!   plugin (the plugin links none, so it never brings a second HDF5 into the process);
//! * `callbacks`: `H5PLget_plugin_type`, `H5PLget_plugin_info` (the library's only exported
//!   symbols) and the filter class.
//!
//! Reads decode every chunk hdf5plugin and PyTables write (b2nd frames of ranks 2–16 and plain
//! frames, every inner chunk, special chunks, any codec and filter Strata's registry knows,
//! ZFP included). Writes give b2nd frames up to rank 8 (what PyTables' filter reads) and plain
//! frames otherwise, the blocks compressed in parallel on Strata's runtime, which starts on
//! the first chunk, not when HDF5 scans its plugin directories.
//!
//! See `docs/hdf5.md`.

#![deny(unsafe_code)]

mod callbacks;
mod host;

pub use callbacks::{H5PLget_plugin_info, H5PLget_plugin_type};
