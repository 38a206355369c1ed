//! Fuzz target: one HDF5 chunk through the Blosc2 filter's decoder. See
//! `src/hdf5_chunk.rs`.
#![no_main]

#[path = "../src/hdf5_chunk.rs"]
mod hdf5_chunk;

libfuzzer_sys::fuzz_target!(|data: &[u8]| hdf5_chunk::check(data));
