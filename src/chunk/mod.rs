//! One chunk: compress, decompress and getitem, byte-compatible with C-Blosc2.
//!
//! A chunk is a header, the `bstarts` of its blocks, and the blocks' streams. Each block runs
//! through up to six filters and is split into streams (one per byte of the item, when that
//! pays off) that the codec compresses.
//! Format: c-blosc2 `README_CHUNK_FORMAT.rst`, `blosc/blosc2.c`; `docs/chunk-format.md`.
//!
//! ```
//! use strata::chunk::{compress_vec, decompress_vec, getitem, CParams};
//! use strata::CodecId;
//! let data: Vec<u8> = (0..25_000u32).flat_map(|i| i.to_le_bytes()).collect();
//! let chunk = compress_vec(&CParams::default().with_typesize(4).with_codec(CodecId::ZSTD), &data).unwrap();
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

pub(crate) use blocksize::compute_blocksize;
pub use compress::{compress, compress_ctx, compress_vec, compress_vec_ctx, max_compressed_len};
pub(crate) use compress::{compress_input, Input};
pub use decompress::{
    decompress, decompress_ctx, decompress_vec, decompress_vec_ctx, getitem, getitem_ctx, Decoder,
};
pub use params::{CParams, DParams, SplitMode};
pub(crate) use scratch::take as take_scratch;
pub use special::{special_chunk, special_chunk_ctx};
pub use split::{compress_chunks, decompress_chunks};

use crate::codecs::Capabilities;
use crate::format::ids::CodecId;
use crate::registry::Registry;
use crate::scheduler::{Runtime, RuntimeConfig};
use std::sync::{Arc, OnceLock};

/// Where the library's work runs: the registry that maps codec and filter IDs, and the
/// runtime whose workers compress and decompress blocks in parallel.
///
/// Every type that does work takes one ([`crate::schunk::SChunkOptions::with_context`],
/// [`crate::schunk::OpenOptions::with_context`], [`crate::ArrayParams::with_context`], the
/// `*_ctx` functions of this module); [`Context::global`] (the process registry and runtime)
/// is only the default. A context owns its parts, so a registry made for one program part
/// (with its own plugins) lives as long as the contexts holding it.
///
/// ```
/// use std::sync::Arc;
/// use strata::chunk::{compress_vec_ctx, decompress_vec_ctx, CParams, Context, DParams};
/// use strata::registry::Registry;
/// let ctx = Context::single_threaded().with_registry(Arc::new(Registry::with_builtins()));
/// let data = vec![7u8; 10_000];
/// let chunk = compress_vec_ctx(&ctx, &CParams::default(), &data)?;
/// assert_eq!(decompress_vec_ctx(&ctx, &DParams::default(), &chunk)?, data);
/// # Ok::<(), strata::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Context {
    registry: Arc<Registry>,
    runtime: Arc<Runtime>,
}

impl Context {
    /// A context of `registry` and `runtime`.
    #[must_use]
    pub fn new(registry: Arc<Registry>, runtime: Arc<Runtime>) -> Context {
        Context { registry, runtime }
    }

    /// The process registry ([`Registry::global`]) and runtime ([`Runtime::global`]).
    #[must_use]
    pub fn global() -> Context {
        Context::new(Registry::global(), Runtime::global())
    }

    /// The process registry and a runtime without workers, every job on its caller's
    /// thread (one runtime shared by every such context): for tests, doctests and programs
    /// that bring their own threads.
    #[must_use]
    pub fn single_threaded() -> Context {
        static RUNTIME: OnceLock<Arc<Runtime>> = OnceLock::new();
        let runtime = RUNTIME.get_or_init(|| {
            let config = RuntimeConfig::default()
                .with_workers(0)
                .with_nthreads(1)
                .with_pin(false);
            Arc::new(Runtime::new(config))
        });
        Context::new(Registry::global(), Arc::clone(runtime))
    }

    /// This context with another registry.
    #[must_use]
    pub fn with_registry(mut self, registry: Arc<Registry>) -> Context {
        self.registry = registry;
        self
    }

    /// This context with another runtime.
    #[must_use]
    pub fn with_runtime(mut self, runtime: Arc<Runtime>) -> Context {
        self.runtime = runtime;
        self
    }

    /// The codec and filter lookup.
    #[must_use]
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The worker pool.
    #[must_use]
    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// What codec `id` declares; nothing for a codec the registry cannot provide (C-Blosc2
    /// assumes nothing of plugin codecs either).
    pub(crate) fn codec_caps(&self, id: CodecId) -> Capabilities {
        self.registry
            .codec(id)
            .map(|c| c.capabilities())
            .unwrap_or_default()
    }
}

impl PartialEq for Context {
    /// The same registry and the same runtime (not equal copies of them).
    fn eq(&self, other: &Context) -> bool {
        Arc::ptr_eq(&self.registry, &other.registry) && Arc::ptr_eq(&self.runtime, &other.runtime)
    }
}

impl Eq for Context {}

impl Default for Context {
    /// [`Context::global`].
    fn default() -> Context {
        Context::global()
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
