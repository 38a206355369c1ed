//! The adapter: a codec or filter behind a checked C descriptor's function pointers, as a
//! [`Codec`] / [`Filter`] of the registry. Each call gets an [`api::BlockContext`] (the block's sizes,
//! the N-d shapes borrowed from the array's metalayer, an error buffer), and every answer is
//! checked: sizes written beyond the room given, or short of the bytes expected, are errors,
//! and a negative code becomes the error its ABI value names, with the plugin's message.

use crate::block::BlockContext;
use crate::codecs::{Capabilities, Codec};
use crate::error::{Error, Result};
use crate::filters::Filter;
use crate::format::b2nd::B2ndMeta;
use crate::format::ids::{CodecId, FilterId};
use crate::registry::PluginKind;
use libloading::Library;
use std::ffi::{c_char, CStr};
use std::sync::Arc;
use strata_plugin_api as api;

/// Bytes a plugin may write as its error message.
const ERRBUF_LEN: usize = 256;

/// The C functions of a checked descriptor (those its kind needs are not NULL).
#[derive(Clone, Copy)]
pub(super) enum Funcs {
    Codec {
        encode: api::CodecEncodeFn,
        decode: api::CodecDecodeFn,
        decode_items: api::CodecDecodeItemsFn,
    },
    Filter {
        forward: api::FilterFn,
        backward: api::FilterFn,
    },
}

/// A codec or filter behind C function pointers (a loaded library's or a C descriptor's).
pub(super) struct Plugin {
    id: u8,
    name: String,
    version: u8,
    funcs: Funcs,
    /// What the descriptor's flags declare (codecs).
    caps: Capabilities,
    /// Keeps the library, and so the functions, loaded.
    _lib: Option<Arc<Library>>,
}

/// The block context handed to a plugin, borrowing the N-d shapes and an error buffer.
#[allow(clippy::too_many_arguments)]
fn block_context(
    id: u8,
    meta: u8,
    clevel: u8,
    typesize: usize,
    blocksize: usize,
    nblock: usize,
    nd: Option<&B2ndMeta>,
    errbuf: &mut [u8; ERRBUF_LEN],
) -> api::BlockContext {
    let (ndim, shape, chunkshape, blockshape): (u8, *const i64, *const i32, *const i32) = match nd {
        // `B2ndMeta` keeps ndim <= 16, so it fits a byte.
        Some(m) if m.ndim() > 0 => (
            u8::try_from(m.ndim()).unwrap_or(0),
            m.shape.as_ptr(),
            m.chunkshape.as_ptr(),
            m.blockshape.as_ptr(),
        ),
        _ => (0, std::ptr::null(), std::ptr::null(), std::ptr::null()),
    };
    let dtype = nd.and_then(|m| m.dtype.as_deref());
    api::BlockContext {
        size: std::mem::size_of::<api::BlockContext>(),
        typesize,
        blocksize,
        nblock,
        id,
        meta,
        clevel,
        ndim,
        shape,
        chunkshape,
        blockshape,
        dtype: dtype.map_or(std::ptr::null(), |d| d.as_ptr().cast::<c_char>()),
        dtype_len: dtype.map_or(0, str::len),
        errbuf: errbuf.as_mut_ptr().cast(),
        errbuf_len: ERRBUF_LEN,
    }
}

impl Plugin {
    /// A codec or filter named `name`, ID `id`, over `funcs`, declaring `caps`; `lib`, when
    /// given, is the library they live in, kept loaded as long as the plugin.
    pub(super) fn new(
        id: u8,
        name: String,
        version: u8,
        funcs: Funcs,
        caps: Capabilities,
        lib: Option<Arc<Library>>,
    ) -> Plugin {
        Plugin {
            id,
            name,
            version,
            funcs,
            caps,
            _lib: lib,
        }
    }

    /// The error for a negative return `code`, with the message the plugin left.
    fn failure(&self, kind: PluginKind, code: i64, errbuf: &[u8; ERRBUF_LEN]) -> Error {
        if code == i64::from(api::ERROR_PANIC) {
            return Error::PluginPanic { id: self.id };
        }
        let text = CStr::from_bytes_until_nul(errbuf)
            .ok()
            .and_then(|m| m.to_str().ok())
            .filter(|m| !m.is_empty())
            .unwrap_or("no message");
        let id = self.id;
        let message = format!(
            "{kind} {id} ({}) failed with code {code}: {text}",
            self.name
        );
        match kind {
            PluginKind::Filter => Error::Filter { id, message },
            PluginKind::Codec if code == i64::from(api::ERROR_CODEC_PARAM) => {
                Error::CodecParam { id, message }
            }
            PluginKind::Codec if code == i64::from(api::ERROR_INVALID_PARAM) => {
                Error::PluginParam { id, message }
            }
            PluginKind::Codec => Error::Codec { id, message },
        }
    }

    /// The error for a decode that gave `r` bytes`what` where `expected` were due.
    fn decoded(&self, r: i64, what: &str, expected: usize) -> Error {
        Error::Codec {
            id: self.id,
            message: format!(
                "codec {} ({}) decoded {r} bytes{what}, expected {expected}",
                self.id, self.name
            ),
        }
    }

    fn codec_ctx(
        &self,
        ctx: &BlockContext<'_>,
        errbuf: &mut [u8; ERRBUF_LEN],
    ) -> api::BlockContext {
        block_context(
            self.id,
            ctx.meta,
            ctx.clevel,
            ctx.typesize,
            ctx.blocksize,
            ctx.nblock,
            ctx.nd,
            errbuf,
        )
    }

    fn filter(
        &self,
        forward: bool,
        src: &[u8],
        dst: &mut [u8],
        ctx: &BlockContext<'_>,
    ) -> Result<()> {
        let Funcs::Filter {
            forward: Some(fwd),
            backward: Some(backward),
        } = self.funcs
        else {
            return Err(Error::UnknownFilter { id: self.id });
        };
        if src.len() != dst.len() {
            return Err(Error::Filter {
                id: self.id,
                message: format!("{} bytes in, {} bytes out", src.len(), dst.len()),
            });
        }
        let mut errbuf = [0u8; ERRBUF_LEN];
        let bc = block_context(
            self.id,
            ctx.meta,
            0,
            ctx.typesize,
            src.len(),
            ctx.nblock,
            ctx.nd,
            &mut errbuf,
        );
        let f = if forward { fwd } else { backward };
        // SAFETY: `src` and `dst` are distinct buffers of `src.len()` bytes and `bc` is valid for
        // the call; the descriptor passed its checks and its library stays loaded (`_lib`).
        let r = unsafe { f(src.as_ptr(), dst.as_mut_ptr(), src.len(), &bc) };
        if r == 0 {
            Ok(())
        } else {
            Err(self.failure(PluginKind::Filter, i64::from(r), &errbuf))
        }
    }
}

impl Codec for Plugin {
    fn id(&self) -> CodecId {
        CodecId(self.id)
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn capabilities(&self) -> Capabilities {
        self.caps
    }
    fn version(&self) -> u8 {
        self.version
    }
    fn compress(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<usize> {
        let Funcs::Codec {
            encode: Some(encode),
            ..
        } = self.funcs
        else {
            return Err(Error::UnknownCodec { id: self.id });
        };
        let mut errbuf = [0u8; ERRBUF_LEN];
        let bc = self.codec_ctx(ctx, &mut errbuf);
        // SAFETY: the buffers are valid for their lengths and distinct, `bc` is valid for the
        // call; the descriptor passed its checks and its library stays loaded (`_lib`).
        let r = unsafe { encode(src.as_ptr(), src.len(), dst.as_mut_ptr(), dst.len(), &bc) };
        if r < 0 {
            return Err(self.failure(PluginKind::Codec, r, &errbuf));
        }
        match usize::try_from(r) {
            Ok(n) if n <= dst.len() => Ok(n),
            _ => Err(Error::Codec {
                id: self.id,
                message: format!(
                    "codec {} ({}) says it wrote {r} bytes into {} bytes of room",
                    self.id,
                    self.name,
                    dst.len()
                ),
            }),
        }
    }
    fn decompress(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<usize> {
        let Funcs::Codec {
            decode: Some(decode),
            ..
        } = self.funcs
        else {
            return Err(Error::UnknownCodec { id: self.id });
        };
        let mut errbuf = [0u8; ERRBUF_LEN];
        let bc = self.codec_ctx(ctx, &mut errbuf);
        // SAFETY: as in `compress`.
        let r = unsafe { decode(src.as_ptr(), src.len(), dst.as_mut_ptr(), dst.len(), &bc) };
        if r < 0 {
            return Err(self.failure(PluginKind::Codec, r, &errbuf));
        }
        usize::try_from(r)
            .ok()
            .filter(|&n| n == dst.len())
            .ok_or_else(|| self.decoded(r, "", dst.len()))
    }
    fn decompress_items(
        &self,
        src: &[u8],
        dst: &mut [u8],
        start: usize,
        ctx: &BlockContext<'_>,
    ) -> Result<Option<usize>> {
        let Funcs::Codec {
            decode_items: Some(decode_items),
            ..
        } = self.funcs
        else {
            return Ok(None);
        };
        if ctx.typesize == 0 || !dst.len().is_multiple_of(ctx.typesize) {
            return Ok(None);
        }
        let nitems = dst.len() / ctx.typesize;
        let mut errbuf = [0u8; ERRBUF_LEN];
        let bc = self.codec_ctx(ctx, &mut errbuf);
        // SAFETY: `dst` holds `nitems * typesize` bytes, `src` its length; as in `compress`.
        let r = unsafe {
            decode_items(
                src.as_ptr(),
                src.len(),
                dst.as_mut_ptr(),
                start,
                nitems,
                &bc,
            )
        };
        match r {
            0 => Ok(None),
            r if r < 0 => Err(self.failure(PluginKind::Codec, r, &errbuf)),
            r => usize::try_from(r)
                .ok()
                .filter(|&n| n == dst.len())
                .map(Some)
                .ok_or_else(|| self.decoded(r, " of items", dst.len())),
        }
    }
}

impl Filter for Plugin {
    fn id(&self) -> FilterId {
        FilterId(self.id)
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn forward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        self.filter(true, src, dst, ctx)
    }
    fn backward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        self.filter(false, src, dst, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `message` into the context's error buffer.
    ///
    /// # Safety
    /// `ctx` points to a valid context whose buffer holds `errbuf_len` bytes.
    unsafe fn report(ctx: *const api::BlockContext, message: &[u8]) {
        // SAFETY: the caller's guarantee.
        let ctx = unsafe { &*ctx };
        let n = message.len().min(ctx.errbuf_len - 1);
        // SAFETY: `errbuf` holds `errbuf_len` bytes (the caller's guarantee).
        unsafe { std::ptr::copy_nonoverlapping(message.as_ptr(), ctx.errbuf.cast(), n) };
    }

    /// Copies `src` into `dst`; 0 when it does not fit.
    unsafe extern "C" fn copy(
        src: *const u8,
        srclen: usize,
        dst: *mut u8,
        dstlen: usize,
        _ctx: *const api::BlockContext,
    ) -> i64 {
        if srclen > dstlen {
            return 0;
        }
        // SAFETY: `srclen` bytes readable at `src`, at least that many writable at `dst`.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, srclen) };
        srclen as i64
    }

    /// Claims one byte more than the room it was given.
    unsafe extern "C" fn liar(
        _src: *const u8,
        _srclen: usize,
        _dst: *mut u8,
        dstlen: usize,
        _ctx: *const api::BlockContext,
    ) -> i64 {
        dstlen as i64 + 1
    }

    /// Fails with the negative of its meta byte, or the panic code for meta 0.
    unsafe extern "C" fn fail(
        _src: *const u8,
        _srclen: usize,
        _dst: *mut u8,
        _dstlen: usize,
        ctx: *const api::BlockContext,
    ) -> i64 {
        // SAFETY: the host passes a valid context with its error buffer.
        unsafe { report(ctx, b"level out of range") };
        // SAFETY: as above.
        match unsafe { (*ctx).meta } {
            0 => i64::from(api::ERROR_PANIC),
            m => -i64::from(m),
        }
    }

    /// Writes what it sees of the context into `dst`: ndim, shape[1], blockshape[0], the dtype
    /// length, typesize, nblock, meta, clevel.
    unsafe extern "C" fn probe(
        _src: *const u8,
        _srclen: usize,
        dst: *mut u8,
        dstlen: usize,
        ctx: *const api::BlockContext,
    ) -> i64 {
        // SAFETY: the host passes a valid context whose shapes hold `ndim` entries.
        let c = unsafe { &*ctx };
        let (shape1, block0) = if c.ndim > 1 {
            // SAFETY: `ndim` entries each.
            unsafe { (*c.shape.add(1) as u8, *c.blockshape as u8) }
        } else {
            (0, 0)
        };
        let seen = [
            c.ndim,
            shape1,
            block0,
            c.dtype_len as u8,
            c.typesize as u8,
            c.nblock as u8,
            c.meta,
            c.clevel,
        ];
        let n = seen.len().min(dstlen);
        // SAFETY: `dstlen` bytes writable at `dst`.
        unsafe { std::ptr::copy_nonoverlapping(seen.as_ptr(), dst, n) };
        n as i64
    }

    /// Items `[start, start + nitems)` of a block whose byte `k` is `k` (typesize 2); declines
    /// from item 100 on.
    unsafe extern "C" fn items(
        _src: *const u8,
        _srclen: usize,
        dst: *mut u8,
        start: usize,
        nitems: usize,
        _ctx: *const api::BlockContext,
    ) -> i64 {
        if start >= 100 {
            return 0;
        }
        for k in 0..2 * nitems {
            // SAFETY: `nitems * typesize` bytes writable at `dst`.
            unsafe { *dst.add(k) = (2 * start + k) as u8 };
        }
        2 * nitems as i64
    }

    /// XOR with the meta byte.
    unsafe extern "C" fn xor(
        src: *const u8,
        dst: *mut u8,
        size: usize,
        ctx: *const api::BlockContext,
    ) -> i32 {
        // SAFETY: the host passes a valid context and `size` bytes in each buffer.
        let meta = unsafe { (*ctx).meta };
        for k in 0..size {
            // SAFETY: as above.
            unsafe { *dst.add(k) = *src.add(k) ^ meta };
        }
        if meta == 0xff {
            // SAFETY: as above.
            unsafe { report(ctx, b"no all-ones key") };
            return -5;
        }
        0
    }

    fn codec(encode: api::CodecEncodeFn, decode: api::CodecDecodeFn) -> Plugin {
        let funcs = Funcs::Codec {
            encode,
            decode,
            decode_items: Some(items),
        };
        Plugin::new(200, "test".into(), 1, funcs, Capabilities::default(), None)
    }

    fn fctx(meta: u8) -> BlockContext<'static> {
        BlockContext {
            typesize: 1,
            meta,
            ..BlockContext::default()
        }
    }

    fn ctx(meta: u8, nd: Option<&B2ndMeta>) -> BlockContext<'_> {
        BlockContext {
            clevel: 5,
            meta,
            typesize: 2,
            blocksize: 64,
            nblock: 3,
            nd,
            ..BlockContext::default()
        }
    }

    #[test]
    fn codec_answers_are_checked() {
        let p = codec(Some(copy), Some(copy));
        let mut out = [0u8; 8];
        assert_eq!(
            Codec::compress(&p, b"abcd", &mut out, &ctx(0, None)).unwrap(),
            4
        );
        assert_eq!(&out[..4], b"abcd");
        assert_eq!(
            Codec::decompress(&p, b"12345678", &mut out, &ctx(0, None)).unwrap(),
            8
        );
        // Four bytes decoded where eight are expected.
        let e = Codec::decompress(&p, b"1234", &mut out, &ctx(0, None)).unwrap_err();
        assert!(
            matches!(e, Error::Codec { id: 200, ref message } if message.contains("decoded 4 bytes, expected 8")),
            "{e}"
        );
        let e = Codec::compress(
            &codec(Some(liar), Some(copy)),
            b"ab",
            &mut out,
            &ctx(0, None),
        )
        .unwrap_err();
        assert!(
            matches!(e, Error::Codec { id: 200, ref message } if message.contains("says it wrote 9 bytes")),
            "{e}"
        );
        let mut part = [0u8; 6];
        assert_eq!(
            p.decompress_items(b"", &mut part, 4, &ctx(0, None))
                .unwrap(),
            Some(6)
        );
        assert_eq!(part, [8, 9, 10, 11, 12, 13]);
        assert_eq!(
            p.decompress_items(b"", &mut part, 100, &ctx(0, None))
                .unwrap(),
            None
        );
        assert_eq!(
            p.decompress_items(b"", &mut part[..5], 4, &ctx(0, None))
                .unwrap(),
            None
        );
        assert_eq!(
            (Codec::id(&p), Codec::name(&p), p.version()),
            (CodecId(200), "test", 1)
        );
        // A codec descriptor is no filter.
        let e = Filter::forward(&p, b"ab", &mut [0; 2], &fctx(0)).unwrap_err();
        assert!(matches!(e, Error::UnknownFilter { id: 200 }), "{e}");
    }

    #[test]
    fn a_negative_code_is_the_error_it_names() {
        let p = codec(Some(fail), Some(fail));
        let mut out = [0u8; 8];
        let code =
            |meta| Codec::compress(&p, b"ab", &mut out.clone(), &ctx(meta, None)).unwrap_err();
        let e = code(8);
        assert!(
            matches!(e, Error::CodecParam { id: 200, ref message } if message.contains("code -8: level out of range")),
            "{e}"
        );
        assert!(
            matches!(code(12), Error::PluginParam { id: 200, .. }),
            "{}",
            code(12)
        );
        assert!(
            matches!(code(3), Error::Codec { id: 200, .. }),
            "{}",
            code(3)
        );
        assert!(
            matches!(code(0), Error::PluginPanic { id: 200 }),
            "{}",
            code(0)
        );
        let e = Codec::decompress(&p, b"ab", &mut out, &ctx(3, None)).unwrap_err();
        assert!(
            e.to_string()
                .contains("codec 200 (test) failed with code -3"),
            "{e}"
        );
    }

    #[test]
    fn the_block_context_carries_the_array() {
        let p = codec(Some(probe), Some(probe));
        let nd = B2ndMeta::new(vec![10, 7], vec![5, 7], vec![4, 7], "<f4").unwrap();
        let mut seen = [0u8; 8];
        Codec::compress(&p, b"", &mut seen, &ctx(9, Some(&nd))).unwrap();
        assert_eq!(seen, [2, 7, 4, 3, 2, 3, 9, 5]);
        Codec::decompress(&p, b"", &mut seen, &ctx(1, None)).unwrap();
        assert_eq!(seen, [0, 0, 0, 0, 2, 3, 1, 5]);
    }

    #[test]
    fn filters_run_both_ways_on_equal_buffers() {
        let funcs = Funcs::Filter {
            forward: Some(xor),
            backward: Some(xor),
        };
        let p = Plugin::new(201, "xor".into(), 1, funcs, Capabilities::default(), None);
        let mut out = [0u8; 3];
        p.forward(&[1, 2, 3], &mut out, &fctx(0x10)).unwrap();
        assert_eq!(out, [0x11, 0x12, 0x13]);
        let mut back = [0u8; 3];
        p.backward(&out, &mut back, &fctx(0x10)).unwrap();
        assert_eq!(back, [1, 2, 3]);
        let e = p.forward(&[1, 2, 3], &mut [0; 2], &fctx(1)).unwrap_err();
        assert!(
            matches!(e, Error::Filter { id: 201, ref message } if message.contains("3 bytes in, 2 bytes out")),
            "{e}"
        );
        let e = p.backward(&[1], &mut [0], &fctx(0xff)).unwrap_err();
        assert!(e.to_string().contains("no all-ones key"), "{e}");
        let e = Codec::compress(&p, b"a", &mut [0; 4], &ctx(0, None)).unwrap_err();
        assert!(matches!(e, Error::UnknownCodec { id: 201 }), "{e}");
    }
}
