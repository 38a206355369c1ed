//! b2nd arrays: N-dimensional data in chunks of blocks (double partitioning), and the slicing
//! engine that decompresses only the blocks a selection touches.
#![deny(unsafe_code)]

pub mod geometry;
pub mod partition;
pub mod plan;
pub mod selection;
pub mod slice;
pub mod store;
#[allow(unsafe_code)]
pub mod view;

pub use geometry::Geometry;
pub use plan::{BlockPlan, ChunkPlan, Segment, SlicePlan};
pub use selection::{DimSelection, Selection, Slice};
pub use slice::SliceStats;
pub use store::{ChunkSource, ChunkStore, VecStore};
