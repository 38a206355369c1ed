//! The file formats the commands read and write besides Blosc2's own: NumPy's `.npy`, netCDF-3
//! (imported), HDF5 (recognised here; its datasets read and written by the library), and raw
//! data files (raw bytes, or the data of a `.npy`).

pub mod hdf5;
pub mod netcdf;
pub mod npy;
pub mod raw;
