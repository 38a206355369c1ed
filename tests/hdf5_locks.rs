//! HDF5 locks the files it opens (`flock`, a lock that lasts while any process holds the
//! descriptor) and opens them without close-on-exec, so Strata marks the descriptor
//! close-on-exec itself (feature `hdf5`). Alone in its test binary: another test spawning a
//! child between HDF5's `open` and that mark would hand the child the descriptor anyway.
#![cfg(feature = "hdf5")]

use std::process::Command;
use strata::hdf5::{write_array, H5Dataset};
use strata::ndarray::ArrayParams;

/// A child started while a dataset is open does not inherit its file's descriptor: once the
/// dataset is closed the file opens for writing ("unable to lock file" otherwise).
#[test]
fn a_child_started_while_a_dataset_is_open_does_not_keep_its_file_locked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("child.h5");
    let params = ArrayParams::from_dtype(&[1000], "<f4")
        .unwrap()
        .with_chunkshape(&[300]);
    let data: Vec<u8> = (0..1000u32)
        .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
        .collect();
    write_array(&path, "a", &params, &data).unwrap();
    let ds = H5Dataset::open(&path, "a").unwrap();
    let mut child = Command::new("sleep").arg("60").spawn().unwrap();
    drop(ds);
    let written = write_array(&path, "b", &params, &data);
    child.kill().unwrap();
    child.wait().unwrap();
    written.unwrap();
    let back = H5Dataset::open(&path, "b").unwrap();
    assert_eq!(back.to_vec().unwrap(), data);
    assert_eq!(H5Dataset::open(&path, "a").unwrap().to_vec().unwrap(), data);
}
