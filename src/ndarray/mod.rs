//! b2nd arrays: N-dimensional data in chunks of blocks (double partitioning), and the slicing
//! engine that decompresses only the blocks a selection touches.
//!
//! * [`geometry`]: shape, chunkshape, blockshape, the chunk and block grids, padding, sizes.
//! * [`selection`]: NumPy slices per dimension (negative indices and steps, clipping).
//! * [`plan`]: which chunks and blocks a selection touches, and each block's sub-box.
//! * [`view`]: the disjoint output view that lets blocks be copied in parallel (the module's
//!   only `unsafe`).
//! * [`store`]: where compressed chunks live ([`ChunkSource`], [`ChunkStore`], [`VecStore`]).
//! * [`mod@slice`]: the engine, [`slice::get_slice`] and [`slice::set_slice`] over any store.
//! * [`partition`]: default chunkshape and blockshape from the cache sizes.
//! * [`NdArray`] ([`mod@array`]): an array over a store, with zeros/uninit/full/from_buffer,
//!   get_slice/set_slice, to_vec, resize and copy.
//!
//! Format: c-blosc2 `README_B2ND_METALAYER.rst`, `blosc/b2nd.c`; `shared/spec/frames.md`
//! §9–§10. The metalayer itself is [`crate::format::b2nd`].
//!
//! ```
//! use strata::ndarray::{ArrayParams, NdArray, Slice};
//! // a 3-D uint16 array, 40 x 50 x 60, in chunks of 16 x 16 x 32 and blocks of 8 x 8 x 8
//! let data: Vec<u8> = (0..40 * 50 * 60u32).flat_map(|i| (i as u16).to_le_bytes()).collect();
//! let params = ArrayParams::new(&[40, 50, 60], 2).chunkshape(&[16, 16, 32]).blockshape(&[8, 8, 8]);
//! let arr = NdArray::from_buffer(&params, &data)?;
//! // one item: one block of one chunk is decompressed
//! let mut item = [0u8; 2];
//! let stats = arr.get_slice(&[Slice::index(17), Slice::index(3), Slice::index(40)], &mut item)?;
//! assert_eq!(u16::from_le_bytes(item), (17 * 3000 + 3 * 60 + 40) as u16);
//! assert_eq!((stats.chunks_read, stats.blocks_decompressed), (1, 1));
//! # Ok::<(), strata::Error>(())
//! ```
#![deny(unsafe_code)]

pub mod array;
pub mod geometry;
pub mod partition;
pub mod plan;
pub mod selection;
pub mod slice;
pub mod store;
#[allow(unsafe_code)]
pub mod view;

pub use array::{ArrayParams, NdArray};
pub use geometry::Geometry;
pub use plan::{BlockPlan, ChunkPlan, Segment, SlicePlan};
pub use selection::{DimSelection, Selection, Slice};
pub use slice::SliceStats;
pub use store::{ChunkSource, ChunkStore, VecStore};
