//! One chunk: compress, decompress and getitem, byte-compatible with C-Blosc2.
//!
//! A chunk is a header, the `bstarts` of its blocks, and the blocks' streams. Each block runs
//! through up to six filters and is split into streams (one per byte of the item, when that
//! pays off) that the codec compresses.
//! Format: c-blosc2 `README_CHUNK_FORMAT.rst`, `blosc/blosc2.c`; `shared/spec/chunk-format.md`.
//!
//! ```
//! use strata::chunk::{compress_vec, decompress_vec, getitem, CParams};
//! let data: Vec<u8> = (0..25_000u32).flat_map(|i| i.to_le_bytes()).collect();
//! let chunk = compress_vec(&CParams { typesize: 4, codec: 5, ..CParams::default() }, &data).unwrap();
//! assert_eq!(decompress_vec(&chunk).unwrap(), data);
//! let mut item = [0u8; 8];
//! getitem(&chunk, 1000, 2, &mut item).unwrap();
//! assert_eq!(item, [0xe8, 0x03, 0, 0, 0xe9, 0x03, 0, 0]);
//! ```

mod blocksize;
mod compress;
mod decompress;
mod params;
mod scratch;
mod special;
mod split;

pub use blocksize::{compute_blocksize, split_block};
pub use compress::{compress, compress_ctx, compress_vec, compress_vec_ctx, max_compressed_len};
pub use decompress::{
    decompress, decompress_ctx, decompress_vec, decompress_vec_ctx, getitem, getitem_ctx, Decoder,
};
pub use params::{CParams, DParams, SplitMode};
pub use special::special_chunk;
pub use split::{compress_chunks, decompress_chunks};

use crate::registry::Registry;
use crate::scheduler::Runtime;
use std::sync::Arc;

/// Where chunk operations run: the registry that maps codec and filter IDs, and the runtime
/// whose workers compress and decompress blocks in parallel.
///
/// [`Context::global`] (the process registry and runtime) is what [`compress`],
/// [`decompress`] and [`getitem`] use; pass another one to the `*_ctx` functions to inject a
/// runtime or registry (tests, the daemon).
#[derive(Debug, Clone)]
pub struct Context<'a> {
    /// Codec and filter lookup.
    pub registry: &'a Registry,
    /// The worker pool.
    pub runtime: Arc<Runtime>,
}

impl Context<'static> {
    /// The process registry and runtime.
    #[must_use]
    pub fn global() -> Self {
        Context {
            registry: Registry::global(),
            runtime: Runtime::global(),
        }
    }
}

/// Threads for a job over `nbytes` bytes that asked for `nthreads` (0 = the runtime's
/// default): 1 below the size where handing work to other threads pays.
pub(crate) fn job_threads(runtime: &Runtime, nthreads: usize, nbytes: usize) -> usize {
    let cap = if nthreads == 0 {
        runtime.nthreads()
    } else {
        nthreads
    };
    crate::scheduler::parallel_nthreads(nbytes, cap)
}
