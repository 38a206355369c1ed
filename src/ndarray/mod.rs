//! b2nd arrays: N-dimensional data in chunks of blocks (double partitioning), kept in a
//! super-chunk in memory, in a `.b2nd` file or in a sparse directory, and the slicing engine
//! that reads and decompresses only the blocks a selection touches.
//!
//! * [`NdArray`] ([`mod@array`]): make (uninit, zeros, full, from a buffer), open, save,
//!   slice, write, resize and re-partition arrays, python-blosc2's files included; append,
//!   insert and delete along an axis, resize with a start position, concatenate and stack
//!   (`array/axis.rs`).
//! * [`geometry`]: shape, chunkshape, blockshape, the chunk and block grids, padding, sizes.
//! * [`selection`]: NumPy slices per dimension (negative indices and steps, clipping).
//! * `plan` (internal): which chunks and blocks a selection touches, and each block's sub-box.
//! * `view` (internal): the disjoint output view that lets blocks be copied in parallel (the module's
//!   only `unsafe`).
//! * [`store`]: where compressed chunks live ([`ChunkSource`], [`ChunkStore`]; the
//!   super-chunk implements both, with lazy chunks that hold only the blocks a read needs).
//! * [`mod@slice`]: the engine, [`slice::get_slice`] and [`slice::set_slice`] over any store.
//! * [`partition`]: default chunkshape and blockshape from the cache sizes, used whenever
//!   [`ArrayParams`] leaves them out: blocks of about L2/4 bytes, chunks of about L3/2
//!   bytes, both as close to cubes as the shape allows.
//! * [`dtype`]: the item size of a NumPy dtype string (structured ones included).
//!
//! Format: c-blosc2 `README_B2ND_METALAYER.rst`, `blosc/b2nd.c`; `docs/b2nd.md`. The
//! metalayer itself is [`crate::format::b2nd`].
//!
//! ```
//! use strata::ndarray::{ArrayParams, Location, NdArray, OpenMode, Slice};
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("cube.b2nd");
//! // a 3-D uint16 array, 40 x 50 x 60, in chunks of 16 x 16 x 32 and blocks of 8 x 8 x 8
//! let data: Vec<u8> = (0..40 * 50 * 60u32).flat_map(|i| (i as u16).to_le_bytes()).collect();
//! let params = ArrayParams::from_dtype(&[40, 50, 60], "<u2")?
//!     .with_chunkshape(&[16, 16, 32])
//!     .with_blockshape(&[8, 8, 8]);
//! NdArray::from_buffer(&params, &Location::File(path.clone()), &data)?.close()?;
//! // python-blosc2 opens it with blosc2.open(path); so does Strata:
//! let arr = NdArray::open(&path, OpenMode::Read)?;
//! assert_eq!((arr.shape(), arr.dtype()), (&[40, 50, 60][..], Some("<u2")));
//! // one item: one block of one chunk is read from the file and decompressed
//! let mut item = [0u8; 2];
//! let stats = arr.get_slice(&[Slice::index(17), Slice::index(3), Slice::index(40)], &mut item)?;
//! assert_eq!(u16::from_le_bytes(item), (17 * 3000 + 3 * 60 + 40) as u16);
//! assert_eq!((stats.chunks_read, stats.blocks_decompressed), (1, 1));
//! # Ok::<(), strata::Error>(())
//! ```
#![deny(unsafe_code)]

pub mod array;
mod chunks;
pub mod dtype;
pub mod geometry;
pub mod partition;
pub(crate) mod plan;
pub mod selection;
pub mod slice;
pub mod store;
mod typed;
#[allow(unsafe_code)]
pub(crate) mod view;

pub use crate::frame::{OpenMode, SyncPolicy};
pub use crate::schunk::{Location, OpenOptions};
pub use array::{ArrayParams, NdArray};
pub use chunks::ArrayChunk;
pub use geometry::Geometry;
pub use selection::{DimSelection, Selection, Slice};
pub use slice::SliceStats;
pub use store::{ChunkSource, ChunkStore};
pub use typed::Scalar;
