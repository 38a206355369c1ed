//! `int_delta`: a Strata filter plugin written in Rust (filter ID 161, a user ID).
//!
//! Each item of the block, read as a little-endian unsigned integer of `typesize` bytes (1, 2,
//! 4 or 8), is replaced by its difference from the item before it (wrapping); the first item of
//! the block is kept. Counters, timestamps and indices become runs of small numbers that
//! shuffle and a codec then squeeze. The meta byte is not used.
//!
//! The plugin is a `cdylib` that depends only on `strata-plugin-api`: implement
//! [`FilterPlugin`], build the descriptor with `filter_descriptor`, list it with
//! `export_plugins!`. The generated C entry points catch panics (Strata then reports
//! `Error::PluginPanic`). See README.md for where to put the library.
//!
//! ```
//! use strata_example_filter::IntDelta;
//! use strata_plugin_api::{Block, FilterPlugin};
//! let block = Block { typesize: 2, blocksize: 8, nblock: 0, id: 161, meta: 0, clevel: 5, nd: None };
//! let src: Vec<u8> = [1000u16, 1001, 1003, 1006].iter().flat_map(|v| v.to_le_bytes()).collect();
//! let mut out = vec![0u8; 8];
//! IntDelta::forward(&src, &mut out, &block).unwrap();
//! assert_eq!(out, [0xe8, 0x03, 1, 0, 2, 0, 3, 0]);
//! let mut back = vec![0u8; 8];
//! IntDelta::backward(&out, &mut back, &block).unwrap();
//! assert_eq!(back, src);
//! ```

use std::ffi::CStr;
use strata_plugin_api::{
    export_plugins, filter_descriptor, Block, FilterPlugin, PluginDescriptor, PluginError,
    ERROR_INVALID_PARAM,
};

/// The filter.
#[derive(Debug)]
pub struct IntDelta;

/// Its descriptor.
pub static INT_DELTA: PluginDescriptor = filter_descriptor::<IntDelta>();

export_plugins!(INT_DELTA);

/// Runs `step(item, mask, state) -> new item` over the items of `src` into `dst`.
fn over_items(
    src: &[u8],
    dst: &mut [u8],
    block: &Block<'_>,
    step: fn(u64, u64, &mut u64) -> u64,
) -> Result<(), PluginError> {
    let ts = block.typesize;
    if !matches!(ts, 1 | 2 | 4 | 8) {
        return Err(PluginError::new(
            ERROR_INVALID_PARAM,
            format!("int_delta works on items of 1, 2, 4 or 8 bytes, not {ts}"),
        ));
    }
    let mask = if ts == 8 {
        u64::MAX
    } else {
        (1u64 << (8 * ts)) - 1
    };
    let mut state = 0u64;
    let whole = src.len() / ts * ts;
    for (s, d) in src[..whole].chunks_exact(ts).zip(dst.chunks_exact_mut(ts)) {
        let mut word = [0u8; 8];
        word[..ts].copy_from_slice(s);
        let v = step(u64::from_le_bytes(word), mask, &mut state) & mask;
        d.copy_from_slice(&v.to_le_bytes()[..ts]);
    }
    // A tail shorter than one item (a last block of odd length) is copied unchanged.
    dst[whole..].copy_from_slice(&src[whole..]);
    Ok(())
}

impl FilterPlugin for IntDelta {
    const ID: u8 = 161;
    const NAME: &'static CStr = c"int_delta";

    fn forward(src: &[u8], dst: &mut [u8], block: &Block<'_>) -> Result<(), PluginError> {
        over_items(src, dst, block, |v, _, prev| {
            let out = v.wrapping_sub(*prev);
            *prev = v;
            out
        })
    }

    fn backward(src: &[u8], dst: &mut [u8], block: &Block<'_>) -> Result<(), PluginError> {
        over_items(src, dst, block, |d, mask, prev| {
            *prev = prev.wrapping_add(d) & mask;
            *prev
        })
    }
}
