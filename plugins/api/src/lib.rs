//! The Strata plugin ABI, shared by Strata (the host) and the plugins it loads.
//!
//! A plugin library exports one function, [`ENTRY_SYMBOL`] (`strata_plugin_descriptors`), that
//! returns an array of pointers to [`PluginDescriptor`]s: one per codec or filter it provides.
//! Each descriptor carries the ABI version and its own size, its kind ([`KIND_CODEC`] or
//! [`KIND_FILTER`]), its Blosc2 ID and name, and C function pointers. Strata calls them once per
//! block with a [`BlockContext`]: typesize, blocksize, the block index, the meta byte and, for
//! N-d (b2nd) data, the array's shape, chunkshape, blockshape and dtype.
//!
//! C plugins get the same types from `include/strata.h` (`strata_plugin`, `strata_block_ctx`,
//! `strata_codec_encode_fn`…). Rust plugins implement [`CodecPlugin`] or [`FilterPlugin`], build
//! descriptors with [`codec_descriptor`] / [`filter_descriptor`] and export them with
//! [`export_plugins!`]; the generated C entry points catch panics and return [`ERROR_PANIC`].
//!
//! IDs follow Blosc2: 0–31 are Blosc's built-ins (no plugin may take them), 32–159 are the IDs
//! Blosc2's global registry assigns (a plugin may take one only under Blosc2's name for it, e.g.
//! 33 `zfp_acc`), 160–255 are free for users.
//! Format: c-blosc2 `include/blosc2.h` (`blosc2_codec`, `blosc2_filter`,
//! `BLOSC2_USER_REGISTERED_*_START`); `docs/plugins.md`.
//!
//! ```
//! use strata_plugin_api::{codec_descriptor, Block, CodecPlugin, PluginError};
//! struct Copy;
//! impl CodecPlugin for Copy {
//!     const ID: u8 = 200;
//!     const NAME: &'static std::ffi::CStr = c"copy";
//!     fn encode(src: &[u8], dst: &mut [u8], _: &Block<'_>) -> Result<usize, PluginError> {
//!         if dst.len() < src.len() { return Ok(0) } // does not fit: stored raw
//!         dst[..src.len()].copy_from_slice(src);
//!         Ok(src.len())
//!     }
//!     fn decode(src: &[u8], dst: &mut [u8], _: &Block<'_>) -> Result<usize, PluginError> {
//!         dst.copy_from_slice(src);
//!         Ok(dst.len())
//!     }
//! }
//! static COPY: strata_plugin_api::PluginDescriptor = codec_descriptor::<Copy>();
//! strata_plugin_api::export_plugins!(COPY);
//! assert_eq!(COPY.id, 200);
//! ```

#![allow(unsafe_code)]

use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Version of this ABI. A host loads only descriptors whose `abi_version` equals its own.
pub const ABI_VERSION: u32 = 1;
/// [`PluginDescriptor::kind`] of a codec.
pub const KIND_CODEC: u8 = 1;
/// [`PluginDescriptor::kind`] of a filter.
pub const KIND_FILTER: u8 = 2;
/// [`PluginDescriptor::flags`] bit of a codec that works on the items of the N-d array
/// (ZFP): it needs the array's shapes in its [`BlockContext`], and the host refuses shuffle
/// or bitshuffle before it, as C-Blosc2 refuses them before its ZFP codecs.
pub const CODEC_NEEDS_ND: u32 = 1;
/// Every [`PluginDescriptor::flags`] bit this ABI defines; a host refuses a descriptor with
/// any other bit set (a need it does not know how to meet).
pub const KNOWN_FLAGS: u32 = CODEC_NEEDS_ND;
/// Name of the function every plugin library exports (a [`PluginEntryFn`]).
pub const ENTRY_SYMBOL: &str = "strata_plugin_descriptors";

/// Returned by a Rust plugin's entry points when the plugin panicked (Strata's
/// `Error::PluginPanic`, code −1000).
pub const ERROR_PANIC: i32 = -1000;
/// Return code for data that does not decode (`BLOSC2_ERROR_DATA`).
pub const ERROR_DATA: i32 = -3;
/// Return code for a codec parameter the plugin cannot use, e.g. a meta byte out of range or
/// missing N-d information (`BLOSC2_ERROR_CODEC_PARAM`).
pub const ERROR_CODEC_PARAM: i32 = -8;
/// Return code for any other bad argument (`BLOSC2_ERROR_INVALID_PARAM`).
pub const ERROR_INVALID_PARAM: i32 = -12;

/// What a plugin function is told about the block it handles.
///
/// Sizes in bytes. For N-d data (a b2nd array) `ndim` is 1 to 16 and `shape` (elements),
/// `chunkshape` and `blockshape` (elements) point to `ndim` values each, outermost dimension
/// first (C order); otherwise `ndim` is 0 and they are NULL. The pointers are valid for the
/// duration of the call only.
#[repr(C)]
#[derive(Debug)]
pub struct BlockContext {
    /// `sizeof(strata_block_ctx)` as the host built it; fields are only ever appended.
    pub size: usize,
    /// Item size in bytes (a chunk header stores typesizes above 255 as 1).
    pub typesize: usize,
    /// Block size of the chunk in bytes (the last block may be shorter).
    pub blocksize: usize,
    /// Index of the block in the chunk.
    pub nblock: usize,
    /// The ID the function is called for (one function may serve several IDs).
    pub id: u8,
    /// The codec meta byte (`compcode_meta`) or this filter slot's meta byte.
    pub meta: u8,
    /// Compression level 1–9 when compressing, 0 when decompressing.
    pub clevel: u8,
    /// Number of dimensions of the N-d array, 0 when the data is not N-d.
    pub ndim: u8,
    /// Array shape in elements (`ndim` values), or NULL.
    pub shape: *const i64,
    /// Chunk shape in elements (`ndim` values), or NULL.
    pub chunkshape: *const i32,
    /// Block shape in elements (`ndim` values), or NULL.
    pub blockshape: *const i32,
    /// NumPy dtype string (`"<f4"`…), `dtype_len` bytes, not NUL-terminated; NULL if unknown.
    pub dtype: *const c_char,
    /// Length of `dtype` in bytes.
    pub dtype_len: usize,
    /// Where a failing call may write a NUL-terminated message (`errbuf_len` bytes), or NULL.
    pub errbuf: *mut c_char,
    /// Size of `errbuf` in bytes.
    pub errbuf_len: usize,
}

/// Codec encoder: compresses `srclen` bytes at `src` (one stream of one block) into `dst`
/// (`dstlen` bytes of room). Returns the compressed size (`1..=dstlen`), 0 when the data does
/// not fit or is not worth compressing (the stream is then stored raw), or a negative code.
pub type CodecEncodeFn = Option<
    unsafe extern "C" fn(
        src: *const u8,
        srclen: usize,
        dst: *mut u8,
        dstlen: usize,
        ctx: *const BlockContext,
    ) -> i64,
>;

/// Codec decoder: decompresses `srclen` bytes at `src` into `dst`, which is exactly the
/// stream's decoded size (`dstlen` bytes). Returns `dstlen`, or a negative code.
pub type CodecDecodeFn = Option<
    unsafe extern "C" fn(
        src: *const u8,
        srclen: usize,
        dst: *mut u8,
        dstlen: usize,
        ctx: *const BlockContext,
    ) -> i64,
>;

/// Optional partial decoder: writes items `[start, start + nitems)` of the block (item
/// indices in the block's C order, `typesize` bytes each) into `dst` (`nitems * typesize`
/// bytes), decoding as little as it can. Returns `nitems * typesize`, 0 to decline (the host
/// then decodes the whole block), or a negative code. Called only for unsplit blocks with no
/// filter to undo.
pub type CodecDecodeItemsFn = Option<
    unsafe extern "C" fn(
        src: *const u8,
        srclen: usize,
        dst: *mut u8,
        start: usize,
        nitems: usize,
        ctx: *const BlockContext,
    ) -> i64,
>;

/// Filter function (forward when compressing, backward when decompressing): transforms the
/// `size` bytes at `src` into the `size` bytes at `dst` (never the same buffer) and must write
/// all of them. Returns 0, or a negative code.
pub type FilterFn = Option<
    unsafe extern "C" fn(
        src: *const u8,
        dst: *mut u8,
        size: usize,
        ctx: *const BlockContext,
    ) -> i32,
>;

/// The function a plugin library exports as `STRATA_PLUGIN_ENTRY` (Rust: [`ENTRY_SYMBOL`],
/// `strata_plugin_descriptors`); never NULL in a library. It stores the number of
/// descriptors in `*count` and returns an array of that many descriptor pointers, valid for as
/// long as the library is loaded.
pub type PluginEntryFn =
    Option<unsafe extern "C" fn(count: *mut usize) -> *const *const PluginDescriptor>;

/// One codec or filter: what a plugin library exports (through its `strata_plugin_entry_fn`)
/// and what `strata_register_plugin` takes.
///
/// `abi_version` and `size` come first in every version of the ABI, so a host reads them before
/// anything else; fields are only ever appended, and a host reads a field a plugin's `size`
/// does not reach as zero (so descriptors built before `flags` existed declare no flags). A
/// codec sets `encode` and `decode` (and optionally `decode_items`), a filter `forward` and
/// `backward`; the other pointers are NULL.
#[repr(C)]
#[derive(Debug)]
pub struct PluginDescriptor {
    /// `STRATA_PLUGIN_ABI_VERSION` (Rust: [`ABI_VERSION`]) the plugin was built against.
    pub abi_version: u32,
    /// `sizeof(strata_plugin)` as the plugin was compiled.
    pub size: u32,
    /// `STRATA_PLUGIN_CODEC` or `STRATA_PLUGIN_FILTER` (Rust: [`KIND_CODEC`], [`KIND_FILTER`]).
    pub kind: u8,
    /// The Blosc2 ID (codec `compcode` or filter ID).
    pub id: u8,
    /// Codec format version, written to chunk header byte 1 (`versionlz`); filters: their own
    /// version, informational.
    pub version: u8,
    /// NUL-terminated name, `[A-Za-z0-9_]`, at most 63 bytes (Blosc2's `compname`).
    pub name: *const c_char,
    /// Codec encoder.
    pub encode: CodecEncodeFn,
    /// Codec decoder.
    pub decode: CodecDecodeFn,
    /// Codec partial decoder (may be NULL).
    pub decode_items: CodecDecodeItemsFn,
    /// Filter, compression direction.
    pub forward: FilterFn,
    /// Filter, decompression direction.
    pub backward: FilterFn,
    /// What the codec needs of the host: `STRATA_PLUGIN_CODEC_NEEDS_ND` (Rust:
    /// [`CODEC_NEEDS_ND`]) or 0; filters: 0.
    pub flags: u32,
}

// SAFETY: a descriptor is immutable once built; its pointers refer to static, read-only data
// (the name) and to functions, which may be called from any thread by the ABI's contract.
unsafe impl Sync for PluginDescriptor {}

/// The N-d array a block belongs to, as a [`Block`] shows it.
#[derive(Debug, Clone, Copy)]
pub struct NdInfo<'a> {
    /// Array shape in elements, outermost dimension first.
    pub shape: &'a [i64],
    /// Chunk shape in elements.
    pub chunkshape: &'a [i32],
    /// Block shape in elements.
    pub blockshape: &'a [i32],
    /// NumPy dtype string, if known.
    pub dtype: Option<&'a str>,
}

/// A safe view of a [`BlockContext`], for Rust plugins.
#[derive(Debug, Clone, Copy)]
pub struct Block<'a> {
    /// Item size in bytes.
    pub typesize: usize,
    /// Block size of the chunk in bytes.
    pub blocksize: usize,
    /// Index of the block in the chunk.
    pub nblock: usize,
    /// The ID called.
    pub id: u8,
    /// The meta byte.
    pub meta: u8,
    /// Compression level (0 when decompressing).
    pub clevel: u8,
    /// The N-d array, when the data is one.
    pub nd: Option<NdInfo<'a>>,
}

impl<'a> Block<'a> {
    /// Reads a host's context.
    ///
    /// # Safety
    /// `ctx` must point to a [`BlockContext`] whose pointers obey its documentation, for `'a`.
    #[must_use]
    pub unsafe fn from_raw(ctx: &'a BlockContext) -> Block<'a> {
        let n = usize::from(ctx.ndim);
        let nd = (n > 0
            && !ctx.shape.is_null()
            && !ctx.chunkshape.is_null()
            && !ctx.blockshape.is_null())
        .then(|| {
            // SAFETY: the host guarantees `ndim` values behind each non-NULL pointer.
            let (shape, chunkshape, blockshape) = unsafe {
                (
                    std::slice::from_raw_parts(ctx.shape, n),
                    std::slice::from_raw_parts(ctx.chunkshape, n),
                    std::slice::from_raw_parts(ctx.blockshape, n),
                )
            };
            let dtype = (!ctx.dtype.is_null())
                .then(|| {
                    // SAFETY: the host guarantees `dtype_len` readable bytes.
                    let raw = unsafe {
                        std::slice::from_raw_parts(ctx.dtype.cast::<u8>(), ctx.dtype_len)
                    };
                    std::str::from_utf8(raw).ok()
                })
                .flatten();
            NdInfo {
                shape,
                chunkshape,
                blockshape,
                dtype,
            }
        });
        Block {
            typesize: ctx.typesize,
            blocksize: ctx.blocksize,
            nblock: ctx.nblock,
            id: ctx.id,
            meta: ctx.meta,
            clevel: ctx.clevel,
            nd,
        }
    }
}

/// Why a plugin call failed: a negative code (see the `ERROR_*` constants) and a message the
/// host shows to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginError {
    /// Negative return code.
    pub code: i32,
    /// What went wrong.
    pub message: String,
}

impl PluginError {
    /// An error with `code` (made negative if it is not) and `message`.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        PluginError {
            code: if code < 0 { code } else { ERROR_INVALID_PARAM },
            message: message.into(),
        }
    }
}

/// A codec written in Rust. Only `encode` and `decode` are required.
pub trait CodecPlugin {
    /// The Blosc2 codec ID.
    const ID: u8;
    /// The codec name (`[A-Za-z0-9_]`, as Blosc2 spells it for registered IDs).
    const NAME: &'static CStr;
    /// The codec format version (chunk header byte 1).
    const VERSION: u8 = 1;
    /// Compresses `src` into `dst`; returns the compressed size, or 0 for "store raw".
    ///
    /// # Errors
    /// Anything the codec cannot handle.
    fn encode(src: &[u8], dst: &mut [u8], block: &Block<'_>) -> Result<usize, PluginError>;
    /// Decompresses `src` into all of `dst`; returns `dst.len()`.
    ///
    /// # Errors
    /// Data that does not decode.
    fn decode(src: &[u8], dst: &mut [u8], block: &Block<'_>) -> Result<usize, PluginError>;
    /// Decodes only items `[start, start + dst.len() / typesize)` of the block into `dst`;
    /// `None` declines (the host decodes the whole block). The default declines.
    ///
    /// # Errors
    /// Data that does not decode.
    fn decode_items(
        _src: &[u8],
        _dst: &mut [u8],
        _start: usize,
        _block: &Block<'_>,
    ) -> Result<Option<usize>, PluginError> {
        Ok(None)
    }
    /// Whether [`CodecPlugin::decode_items`] is implemented (its pointer is then non-NULL).
    const HAS_DECODE_ITEMS: bool = false;
    /// What the codec needs of the host ([`CODEC_NEEDS_ND`]); none by default.
    const FLAGS: u32 = 0;
}

/// A filter written in Rust.
pub trait FilterPlugin {
    /// The Blosc2 filter ID.
    const ID: u8;
    /// The filter name.
    const NAME: &'static CStr;
    /// The filter version (informational).
    const VERSION: u8 = 1;
    /// Transforms `src` into `dst` (same length) when compressing.
    ///
    /// # Errors
    /// Anything the filter cannot handle.
    fn forward(src: &[u8], dst: &mut [u8], block: &Block<'_>) -> Result<(), PluginError>;
    /// Undoes [`FilterPlugin::forward`].
    ///
    /// # Errors
    /// Anything the filter cannot handle.
    fn backward(src: &[u8], dst: &mut [u8], block: &Block<'_>) -> Result<(), PluginError>;
}

/// Writes `message` into the context's error buffer, truncated and NUL-terminated.
fn report(ctx: &BlockContext, message: &str) {
    if ctx.errbuf.is_null() || ctx.errbuf_len == 0 {
        return;
    }
    let n = message.len().min(ctx.errbuf_len - 1);
    // SAFETY: the host guarantees `errbuf_len` writable bytes at `errbuf`.
    let out = unsafe { std::slice::from_raw_parts_mut(ctx.errbuf.cast::<u8>(), ctx.errbuf_len) };
    out[..n].copy_from_slice(&message.as_bytes()[..n]);
    out[n] = 0;
}

/// Runs `body` for a C entry point: a panic becomes [`ERROR_PANIC`], an error its code (with
/// the message reported).
fn guard(ctx: &BlockContext, body: impl FnOnce() -> Result<i64, PluginError>) -> i64 {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(n)) => n,
        Ok(Err(e)) => {
            report(ctx, &e.message);
            i64::from(e.code)
        }
        Err(_) => {
            report(ctx, "the plugin panicked");
            i64::from(ERROR_PANIC)
        }
    }
}

fn len_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Checks the pointers, makes the host's buffers slices and the context a [`Block`], and
/// runs `body` on them inside [`guard`]: what every entry point does before its own work.
///
/// # Safety
/// `src` holds `srclen` bytes and `dst` `dstlen` writable bytes, not overlapping; `ctx` is
/// NULL or the host's valid context for this call (the entry points' contracts).
unsafe fn on_buffers(
    src: *const u8,
    srclen: usize,
    dst: *mut u8,
    dstlen: usize,
    ctx: *const BlockContext,
    body: impl FnOnce(&[u8], &mut [u8], &Block<'_>) -> Result<i64, PluginError>,
) -> i64 {
    if src.is_null() || dst.is_null() || ctx.is_null() {
        return i64::from(ERROR_INVALID_PARAM);
    }
    // SAFETY: non-NULL, and the host passes a valid context for the call.
    let ctx = unsafe { &*ctx };
    guard(ctx, || {
        // SAFETY: the host guarantees the buffer lengths and that they do not overlap.
        let (src, dst) = unsafe {
            (
                std::slice::from_raw_parts(src, srclen),
                std::slice::from_raw_parts_mut(dst, dstlen),
            )
        };
        // SAFETY: the context obeys its documentation for this call.
        let block = unsafe { Block::from_raw(ctx) };
        body(src, dst, &block)
    })
}

/// # Safety
/// The [`CodecEncodeFn`] contract.
unsafe extern "C" fn encode_shim<T: CodecPlugin>(
    src: *const u8,
    srclen: usize,
    dst: *mut u8,
    dstlen: usize,
    ctx: *const BlockContext,
) -> i64 {
    // SAFETY: the contract is forwarded.
    unsafe {
        on_buffers(src, srclen, dst, dstlen, ctx, |s, d, b| {
            T::encode(s, d, b).map(len_i64)
        })
    }
}

/// # Safety
/// The [`CodecDecodeFn`] contract.
unsafe extern "C" fn decode_shim<T: CodecPlugin>(
    src: *const u8,
    srclen: usize,
    dst: *mut u8,
    dstlen: usize,
    ctx: *const BlockContext,
) -> i64 {
    // SAFETY: the contract is forwarded.
    unsafe {
        on_buffers(src, srclen, dst, dstlen, ctx, |s, d, b| {
            T::decode(s, d, b).map(len_i64)
        })
    }
}

/// # Safety
/// The [`CodecDecodeItemsFn`] contract.
unsafe extern "C" fn decode_items_shim<T: CodecPlugin>(
    src: *const u8,
    srclen: usize,
    dst: *mut u8,
    start: usize,
    nitems: usize,
    ctx: *const BlockContext,
) -> i64 {
    if ctx.is_null() {
        return i64::from(ERROR_INVALID_PARAM);
    }
    // SAFETY: non-NULL, and the host passes a valid context for the call.
    let Some(dstlen) = nitems.checked_mul(unsafe { &*ctx }.typesize) else {
        return i64::from(ERROR_INVALID_PARAM);
    };
    // SAFETY: the contract: `srclen` bytes at `src`, `nitems * typesize` at `dst`.
    unsafe {
        on_buffers(src, srclen, dst, dstlen, ctx, |s, d, b| {
            T::decode_items(s, d, start, b).map(|n| n.map_or(0, len_i64))
        })
    }
}

/// # Safety
/// The [`FilterFn`] contract.
unsafe extern "C" fn filter_shim<T: FilterPlugin, const FORWARD: bool>(
    src: *const u8,
    dst: *mut u8,
    size: usize,
    ctx: *const BlockContext,
) -> i32 {
    // SAFETY: the contract: `size` bytes in each buffer, not overlapping.
    let r = unsafe {
        on_buffers(src, size, dst, size, ctx, |s, d, b| {
            let r = if FORWARD {
                T::forward(s, d, b)
            } else {
                T::backward(s, d, b)
            };
            r.map(|()| 0)
        })
    };
    i32::try_from(r).unwrap_or(ERROR_INVALID_PARAM)
}

/// The size of a descriptor, as stored in [`PluginDescriptor::size`].
const DESCRIPTOR_SIZE: u32 = std::mem::size_of::<PluginDescriptor>() as u32;

/// The descriptor of codec `T`, with panic-catching C entry points.
#[must_use]
pub const fn codec_descriptor<T: CodecPlugin>() -> PluginDescriptor {
    PluginDescriptor {
        abi_version: ABI_VERSION,
        size: DESCRIPTOR_SIZE,
        kind: KIND_CODEC,
        id: T::ID,
        version: T::VERSION,
        name: T::NAME.as_ptr(),
        encode: Some(encode_shim::<T>),
        decode: Some(decode_shim::<T>),
        decode_items: if T::HAS_DECODE_ITEMS {
            Some(decode_items_shim::<T>)
        } else {
            None
        },
        forward: None,
        backward: None,
        flags: T::FLAGS,
    }
}

/// The descriptor of filter `T`, with panic-catching C entry points.
#[must_use]
pub const fn filter_descriptor<T: FilterPlugin>() -> PluginDescriptor {
    PluginDescriptor {
        abi_version: ABI_VERSION,
        size: DESCRIPTOR_SIZE,
        kind: KIND_FILTER,
        id: T::ID,
        version: T::VERSION,
        name: T::NAME.as_ptr(),
        encode: None,
        decode: None,
        decode_items: None,
        forward: Some(filter_shim::<T, true>),
        backward: Some(filter_shim::<T, false>),
        flags: 0,
    }
}

/// Exports the entry point [`ENTRY_SYMBOL`] of a plugin library, listing the given
/// `static` [`PluginDescriptor`]s. Use it once per library (crate type `cdylib`).
#[macro_export]
macro_rules! export_plugins {
    ($($descriptor:path),+ $(,)?) => {
        /// The plugin entry point: the descriptors of this library.
        ///
        /// # Safety
        /// `count` must be NULL or writable.
        #[no_mangle]
        pub unsafe extern "C" fn strata_plugin_descriptors(
            count: *mut usize,
        ) -> *const *const $crate::PluginDescriptor {
            static LIST: &[&$crate::PluginDescriptor] = &[$(&$descriptor),+];
            if !count.is_null() {
                // SAFETY: non-NULL, and the caller guarantees it is writable.
                unsafe { count.write(LIST.len()) };
            }
            // A reference has the layout of a pointer, so this is an array of pointers.
            LIST.as_ptr().cast()
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Panicky;
    impl CodecPlugin for Panicky {
        const ID: u8 = 250;
        const NAME: &'static CStr = c"panicky";
        fn encode(_: &[u8], _: &mut [u8], _: &Block<'_>) -> Result<usize, PluginError> {
            panic!("boom")
        }
        fn decode(_: &[u8], _: &mut [u8], b: &Block<'_>) -> Result<usize, PluginError> {
            Err(PluginError::new(
                ERROR_DATA,
                format!("bad stream in block {}", b.nblock),
            ))
        }
    }

    fn ctx(errbuf: &mut [u8]) -> BlockContext {
        BlockContext {
            size: std::mem::size_of::<BlockContext>(),
            typesize: 4,
            blocksize: 16,
            nblock: 3,
            id: 250,
            meta: 0,
            clevel: 5,
            ndim: 0,
            shape: std::ptr::null(),
            chunkshape: std::ptr::null(),
            blockshape: std::ptr::null(),
            dtype: std::ptr::null(),
            dtype_len: 0,
            errbuf: errbuf.as_mut_ptr().cast(),
            errbuf_len: errbuf.len(),
        }
    }

    #[test]
    fn panics_become_the_panic_code_and_errors_their_code_and_message() {
        let d = codec_descriptor::<Panicky>();
        let src = [0u8; 16];
        let mut dst = [0u8; 16];
        let mut errbuf = [0u8; 64];
        let c = ctx(&mut errbuf);
        // SAFETY: valid buffers and context.
        let r = unsafe { d.encode.unwrap()(src.as_ptr(), 16, dst.as_mut_ptr(), 16, &c) };
        assert_eq!(r, i64::from(ERROR_PANIC));
        // SAFETY: valid buffers and context.
        let r = unsafe { d.decode.unwrap()(src.as_ptr(), 16, dst.as_mut_ptr(), 16, &c) };
        assert_eq!(r, i64::from(ERROR_DATA));
        let msg = CStr::from_bytes_until_nul(&errbuf).unwrap();
        assert_eq!(msg.to_str().unwrap(), "bad stream in block 3");
        assert!(d.decode_items.is_none());
        assert_eq!(d.abi_version, ABI_VERSION);
        assert_eq!(d.size as usize, std::mem::size_of::<PluginDescriptor>());
    }

    #[test]
    fn long_messages_are_truncated_with_a_nul() {
        let mut errbuf = [0xffu8; 8];
        let c = ctx(&mut errbuf);
        report(&c, "a message longer than eight bytes");
        assert_eq!(&errbuf, b"a messa\0");
    }
}
