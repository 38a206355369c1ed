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

pub use blocksize::{compute_blocksize, split_block};
pub use compress::{compress, compress_vec, compress_with, max_compressed_len};
pub use decompress::{decompress, decompress_vec, getitem, Decoder};
pub use params::{CParams, SplitMode};
