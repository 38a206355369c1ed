//! Blosc2's ZFP codecs as a Strata plugin: lossy compression of float32 and float64 N-d
//! arrays (1 to 4 dimensions) with zfp 1.0.1, the version C-Blosc2 3.x builds.
//!
//! | ID | name | meta byte |
//! |---|---|---|
//! | 33 | `zfp_acc` (FIXED_ACCURACY) | signed exponent `e` (int8): absolute error ≤ 10^e, e.g. 0xFE = −2 → 0.01 |
//! | 34 | `zfp_prec` (FIXED_PRECISION) | precision offset: zfp keeps `meta + {5, 7, 9, 11}` bit planes for 1–4 dimensions (at most 64) |
//! | 35 | `zfp_rate` (FIXED_RATE) | output size in percent of the input, 1–100: `meta/100 × typesize × 8` bits per value |
//!
//! **What a block is to zfp.** ZFP needs the array's blockshape: a chunk is compressed block by
//! block, each block (`prod(blockshape)` items, C order, padded as b2nd pads edge blocks) one zfp
//! field whose x axis is the last (fastest) dimension, written as a raw zfp stream (no zfp
//! header), in 4^ndim-value cells traversed in C order. The blockshape comes from the b2nd
//! metalayer, which Strata hands over as the block context (`CParams::nd` / `DParams::nd`, set
//! from the array's metalayer for every chunk of a b2nd array or super-chunk), as C-Blosc2 reads
//! it from the super-chunk. Compressing without it stores the blocks raw (the chunk is
//! memcpyed), as C-Blosc2 does outside a super-chunk; decompressing a ZFP stream without it
//! fails with `STRATA_ERROR_CODEC_PARAM` (Rust: `Error::CodecParam`) saying how to give it. As
//! in C-Blosc2 3.x, every blockshape entry must be at least 4, a stream that is not a whole
//! block (split streams) is stored raw, and a block that zfp cannot shrink is stored raw. A
//! FIXED_RATE meta outside 1–100 is refused when compressing, and above 100 when reading (a
//! meta of 0, which C-Blosc2 writes when left at its default, is read as C-Blosc2 reads it).
//!
//! **Partial reads.** With FIXED_RATE every cell takes the same number of bits, so reading a
//! few items decodes only the cells that hold them (the `decode_items` entry point), as C-Blosc2's
//! `zfp_getcell` does for one cell, in any number of cells here.
//!
//! **Safety of decoding.** zfp's bit reader does not check bounds, so every stream is checked
//! first: a FIXED_RATE stream must hold all of its cells, and an accuracy or precision stream
//! shorter than zfp's worst case is decoded from a copy padded to that size. Corrupt data gives
//! wrong values or an error, never a read outside the buffers.
//!
//! Format: c-blosc2 `plugins/codecs/zfp/blosc2-zfp.c` (`zfp_acc_compress`, `zfp_prec_compress`,
//! `zfp_rate_compress`, their decompressors and `zfp_getcell`); `docs/plugins.md` (ZFP).

#![allow(unsafe_code)]

use std::cell::RefCell;
use std::ffi::CStr;
use std::os::raw::c_void;
use strata_plugin_api::{
    codec_descriptor, export_plugins, Block, CodecPlugin, PluginDescriptor, PluginError,
    CODEC_NEEDS_ND, ERROR_CODEC_PARAM, ERROR_DATA,
};
use zfp_sys as z;

/// FIXED_ACCURACY, ID 33.
pub const ZFP_ACC_ID: u8 = 33;
/// FIXED_PRECISION, ID 34.
pub const ZFP_PREC_ID: u8 = 34;
/// FIXED_RATE, ID 35.
pub const ZFP_RATE_ID: u8 = 35;

/// Most dimensions zfp handles.
const MAX_DIM: usize = 4;
/// Items along each side of a zfp cell.
const CELL: usize = 4;

/// The FIXED_ACCURACY codec.
#[derive(Debug)]
pub struct ZfpAcc;
/// The FIXED_PRECISION codec.
#[derive(Debug)]
pub struct ZfpPrec;
/// The FIXED_RATE codec.
#[derive(Debug)]
pub struct ZfpRate;

/// Descriptor of [`ZfpAcc`].
pub static ZFP_ACC: PluginDescriptor = codec_descriptor::<ZfpAcc>();
/// Descriptor of [`ZfpPrec`].
pub static ZFP_PREC: PluginDescriptor = codec_descriptor::<ZfpPrec>();
/// Descriptor of [`ZfpRate`].
pub static ZFP_RATE: PluginDescriptor = codec_descriptor::<ZfpRate>();

export_plugins!(ZFP_ACC, ZFP_PREC, ZFP_RATE);

impl CodecPlugin for ZfpAcc {
    const ID: u8 = ZFP_ACC_ID;
    const NAME: &'static CStr = c"zfp_acc";
    const FLAGS: u32 = CODEC_NEEDS_ND;
    fn encode(src: &[u8], dst: &mut [u8], block: &Block<'_>) -> Result<usize, PluginError> {
        encode(src, dst, block)
    }
    fn decode(src: &[u8], dst: &mut [u8], block: &Block<'_>) -> Result<usize, PluginError> {
        decode(src, dst, block)
    }
}

impl CodecPlugin for ZfpPrec {
    const ID: u8 = ZFP_PREC_ID;
    const NAME: &'static CStr = c"zfp_prec";
    const FLAGS: u32 = CODEC_NEEDS_ND;
    fn encode(src: &[u8], dst: &mut [u8], block: &Block<'_>) -> Result<usize, PluginError> {
        encode(src, dst, block)
    }
    fn decode(src: &[u8], dst: &mut [u8], block: &Block<'_>) -> Result<usize, PluginError> {
        decode(src, dst, block)
    }
}

impl CodecPlugin for ZfpRate {
    const ID: u8 = ZFP_RATE_ID;
    const NAME: &'static CStr = c"zfp_rate";
    const FLAGS: u32 = CODEC_NEEDS_ND;
    const HAS_DECODE_ITEMS: bool = true;
    fn encode(src: &[u8], dst: &mut [u8], block: &Block<'_>) -> Result<usize, PluginError> {
        encode(src, dst, block)
    }
    fn decode(src: &[u8], dst: &mut [u8], block: &Block<'_>) -> Result<usize, PluginError> {
        decode(src, dst, block)
    }
    fn decode_items(
        src: &[u8],
        dst: &mut [u8],
        start: usize,
        block: &Block<'_>,
    ) -> Result<Option<usize>, PluginError> {
        decode_cells(src, dst, start, block)
    }
}

fn param(message: impl Into<String>) -> PluginError {
    PluginError::new(ERROR_CODEC_PARAM, message)
}

fn data(message: impl Into<String>) -> PluginError {
    PluginError::new(ERROR_DATA, message)
}

/// A block as zfp sees it.
struct Geometry {
    ndim: usize,
    /// Block shape, C order (outermost first).
    blockshape: [usize; MAX_DIM],
    ztype: z::zfp_type,
    typesize: usize,
    /// Bytes of one whole block.
    nbytes: usize,
}

impl Geometry {
    fn new(block: &Block<'_>, compressing: bool) -> Result<Self, PluginError> {
        let nd = block.nd.ok_or_else(|| {
            param(
                "ZFP needs the array's blockshape: read the chunk from its b2nd array or \
                 super-chunk, or give the b2nd metalayer (DParams::nd; strata chunk \
                 --shape/--chunkshape/--blockshape)",
            )
        })?;
        let ndim = nd.blockshape.len();
        if !(1..=MAX_DIM).contains(&ndim) {
            return Err(param(format!("ZFP handles 1 to 4 dimensions, not {ndim}")));
        }
        let ztype = match block.typesize {
            4 => z::zfp_type_zfp_type_float,
            8 => z::zfp_type_zfp_type_double,
            t => {
                return Err(param(format!(
                    "ZFP compresses float32 or float64, not typesize {t}"
                )))
            }
        };
        let least = if compressing { CELL } else { 1 };
        let mut blockshape = [1usize; MAX_DIM];
        let mut items = 1usize;
        for (i, &b) in nd.blockshape.iter().enumerate() {
            let b = usize::try_from(b)
                .ok()
                .filter(|&b| b >= least)
                .ok_or_else(|| {
                    param(format!(
                        "ZFP needs blockshape entries of at least {least}, got {b}"
                    ))
                })?;
            blockshape[i] = b;
            items = items
                .checked_mul(b)
                .ok_or_else(|| param("the blockshape overflows"))?;
        }
        let nbytes = items
            .checked_mul(block.typesize)
            .ok_or_else(|| param("the blockshape overflows"))?;
        Ok(Geometry {
            ndim,
            blockshape,
            ztype,
            typesize: block.typesize,
            nbytes,
        })
    }

    /// Cells along each dimension (C order) and in all.
    fn cells(&self) -> ([usize; MAX_DIM], usize) {
        let mut per = [1usize; MAX_DIM];
        for (p, b) in per.iter_mut().zip(&self.blockshape[..self.ndim]) {
            *p = b.div_ceil(CELL);
        }
        (per, per[..self.ndim].iter().product())
    }

    /// A zfp field over `ptr` (the block), x being the last dimension.
    fn field(&self, ptr: *mut c_void) -> Field {
        let b = &self.blockshape;
        // SAFETY: zfp_field_Nd only records the pointer, type and sizes (nothing is read here);
        // callers pass a pointer to `nbytes` bytes that outlives the field.
        let raw = unsafe {
            match self.ndim {
                1 => z::zfp_field_1d(ptr, self.ztype, b[0]),
                2 => z::zfp_field_2d(ptr, self.ztype, b[1], b[0]),
                3 => z::zfp_field_3d(ptr, self.ztype, b[2], b[1], b[0]),
                _ => z::zfp_field_4d(ptr, self.ztype, b[3], b[2], b[1], b[0]),
            }
        };
        Field(raw)
    }
}

/// How zfp is told to compress, from the codec ID and meta byte.
#[derive(Debug, Clone, Copy)]
enum Mode {
    Accuracy(f64),
    Precision(u32),
    Rate(f64),
}

/// `reading` is false when compressing. A FIXED_RATE meta of 0 is refused then (zfp would
/// keep almost nothing), but read: C-Blosc2 writes it when its caller leaves the meta at its
/// default (the HDF5 filter of hdf5plugin does), and decodes it at zfp's lowest rate.
fn mode(block: &Block<'_>, g: &Geometry, reading: bool) -> Result<Mode, PluginError> {
    let meta = block.meta;
    match block.id {
        ZFP_ACC_ID => Ok(Mode::Accuracy(10f64.powf(f64::from(meta as i8)))),
        ZFP_PREC_ID => {
            // ndim <= 4 here.
            let offset = [5u32, 7, 9, 11][g.ndim - 1];
            Ok(Mode::Precision(
                (u32::from(meta) + offset).min(z::ZFP_MAX_PREC),
            ))
        }
        ZFP_RATE_ID => {
            if meta > 100 || (meta == 0 && !reading) {
                return Err(param(format!(
                    "ZFP_RATE meta {meta} is not a rate of 1 to 100 (percent of the input size)"
                )));
            }
            Ok(Mode::Rate(
                f64::from(meta) / 100.0 * g.typesize as f64 * 8.0,
            ))
        }
        other => Err(param(format!("codec ID {other} is not a ZFP codec"))),
    }
}

/// An open zfp stream (freed on drop).
struct Stream {
    zfp: *mut z::zfp_stream,
    bits: *mut z::bitstream,
}

impl Stream {
    fn new(mode: Mode, g: &Geometry) -> Result<Self, PluginError> {
        // SAFETY: opening a stream with no bit stream yet is allowed; the mode setters only
        // write the stream's fields.
        let zfp = unsafe { z::zfp_stream_open(std::ptr::null_mut()) };
        if zfp.is_null() {
            return Err(data("zfp_stream_open failed"));
        }
        // SAFETY: `zfp` is a valid stream.
        unsafe {
            match mode {
                Mode::Accuracy(tolerance) => {
                    z::zfp_stream_set_accuracy(zfp, tolerance);
                }
                Mode::Precision(precision) => {
                    z::zfp_stream_set_precision(zfp, precision);
                }
                Mode::Rate(rate) => {
                    // ndim <= 4 fits a uint.
                    z::zfp_stream_set_rate(zfp, rate, g.ztype, g.ndim as u32, 0);
                }
            }
        }
        Ok(Stream {
            zfp,
            bits: std::ptr::null_mut(),
        })
    }

    /// The most bytes the stream of `field` can take in this mode.
    fn maximum_size(&self, field: &Field) -> usize {
        // SAFETY: both are valid.
        unsafe { z::zfp_stream_maximum_size(self.zfp, field.0) }
    }

    /// Bits per cell in fixed-rate mode.
    fn maxbits(&self) -> usize {
        // SAFETY: `zfp` is a valid stream.
        unsafe { (*self.zfp).maxbits as usize }
    }

    /// Attaches `len` bytes at `buf` as the bit stream, rewound.
    ///
    /// # Safety
    /// `buf` must stay valid for `len` bytes (writable when compressing) while the stream is used.
    unsafe fn attach(&mut self, buf: *mut u8, len: usize) -> Result<(), PluginError> {
        // SAFETY: the caller's guarantee.
        let bits = unsafe { z::stream_open(buf.cast(), len) };
        if bits.is_null() {
            return Err(data("stream_open failed"));
        }
        self.bits = bits;
        // SAFETY: both are valid.
        unsafe {
            z::zfp_stream_set_bit_stream(self.zfp, bits);
            z::zfp_stream_rewind(self.zfp);
        }
        Ok(())
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: both were opened by this stream (or are NULL, which zfp ignores for `bits`
        // only, so it is checked).
        unsafe {
            z::zfp_stream_close(self.zfp);
            if !self.bits.is_null() {
                z::stream_close(self.bits);
            }
        }
    }
}

/// A zfp field (freed on drop).
struct Field(*mut z::zfp_field);

impl Drop for Field {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: allocated by zfp_field_Nd.
            unsafe { z::zfp_field_free(self.0) };
        }
    }
}

thread_local! {
    /// Scratch for compressed streams, reused from block to block on a thread.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with a thread-local buffer of at least `len` bytes (contents unspecified).
fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < len {
            s.resize(len, 0);
        }
        f(&mut s[..len])
    })
}

fn encode(src: &[u8], dst: &mut [u8], block: &Block<'_>) -> Result<usize, PluginError> {
    if block.nd.is_none() {
        // No N-d context (a chunk compressed on its own): stored raw, as C-Blosc2 3.x does
        // without a super-chunk.
        return Ok(0);
    }
    let g = Geometry::new(block, true)?;
    let mode = mode(block, &g, false)?;
    if src.len() != g.nbytes {
        // Not a whole block (split streams): stored raw, as C-Blosc2 3.x does.
        return Ok(0);
    }
    // zfp reads the values as floats: a misaligned block is copied first.
    let mut aligned = Vec::new();
    let values = if src.as_ptr().align_offset(g.typesize) == 0 {
        src.as_ptr()
    } else {
        aligned = vec![0u64; src.len().div_ceil(8)];
        as_bytes_mut(&mut aligned)[..src.len()].copy_from_slice(src);
        aligned.as_ptr().cast()
    };
    let field = g.field(values.cast_mut().cast());
    if field.0.is_null() {
        return Err(data("zfp_field failed"));
    }
    let mut stream = Stream::new(mode, &g)?;
    let max = stream.maximum_size(&field);
    with_scratch(max, |buf| {
        // SAFETY: `buf` is writable for `max` bytes and outlives `stream` within this closure.
        unsafe { stream.attach(buf.as_mut_ptr(), max)? };
        // SAFETY: the field describes `src` (`nbytes` readable bytes; zfp only reads it when
        // compressing) and the stream holds the worst-case size.
        let n = unsafe { z::zfp_compress(stream.zfp, field.0) };
        drop(stream);
        drop(aligned);
        if n == 0 {
            return Err(data("zfp_compress failed"));
        }
        if n >= src.len() || n > dst.len() {
            return Ok(0);
        }
        dst[..n].copy_from_slice(&buf[..n]);
        Ok(n)
    })
}

/// Bytes a fixed-rate stream of `g` must have: every cell, in whole 64-bit words.
fn rate_stream_len(g: &Geometry, maxbits: usize) -> Option<usize> {
    let (_, ncells) = g.cells();
    ncells
        .checked_mul(maxbits)
        .map(|bits| bits.div_ceil(64) * 8)
}

fn decode(src: &[u8], dst: &mut [u8], block: &Block<'_>) -> Result<usize, PluginError> {
    let g = Geometry::new(block, false)?;
    let mode = mode(block, &g, true)?;
    if dst.len() != g.nbytes {
        return Err(data(format!(
            "the block holds {} bytes, its blockshape {} bytes",
            dst.len(),
            g.nbytes
        )));
    }
    if dst.as_ptr().align_offset(g.typesize) != 0 {
        // zfp writes the values as floats: decode a misaligned block through an aligned copy.
        let mut aligned = vec![0u64; dst.len().div_ceil(8)];
        let n = decode(src, &mut as_bytes_mut(&mut aligned)[..dst.len()], block)?;
        dst.copy_from_slice(&as_bytes_mut(&mut aligned)[..n]);
        return Ok(n);
    }
    let field = g.field(dst.as_mut_ptr().cast());
    if field.0.is_null() {
        return Err(data("zfp_field failed"));
    }
    let mut stream = Stream::new(mode, &g)?;
    let need = match mode {
        Mode::Rate(_) => {
            let need = rate_stream_len(&g, stream.maxbits())
                .ok_or_else(|| data("stream size overflows"))?;
            if src.len() < need {
                return Err(data(format!(
                    "a FIXED_RATE stream of this block takes {need} bytes at meta {}, only {} given",
                    block.meta,
                    src.len()
                )));
            }
            need
        }
        _ => stream.maximum_size(&field),
    };
    let run = |stream: &mut Stream, input: *const u8, len: usize| {
        // SAFETY: `input` is readable for `len` bytes, at least what zfp may read (checked or
        // padded above), for the call; zfp does not write through it when decompressing.
        unsafe { stream.attach(input.cast_mut(), len)? };
        // SAFETY: the field describes `dst`, writable for exactly `nbytes` bytes.
        let n = unsafe { z::zfp_decompress(stream.zfp, field.0) };
        if n == 0 {
            Err(data("zfp_decompress failed"))
        } else {
            Ok(dst.len())
        }
    };
    if src.len() >= need {
        run(&mut stream, src.as_ptr(), src.len())
    } else {
        // A variable-size stream shorter than the worst case: decode from a padded copy.
        with_scratch(need, |buf| {
            buf[..src.len()].copy_from_slice(src);
            buf[src.len()..].fill(0);
            run(&mut stream, buf.as_ptr(), need)
        })
    }
}

/// Decodes the FIXED_RATE cells that hold items `[start, start + dst.len() / typesize)` of the
/// block; `None` when so many items are asked for that decoding the whole block is cheaper.
fn decode_cells(
    src: &[u8],
    dst: &mut [u8],
    start: usize,
    block: &Block<'_>,
) -> Result<Option<usize>, PluginError> {
    let g = Geometry::new(block, false)?;
    let mode = mode(block, &g, true)?;
    let ts = g.typesize;
    let nitems = dst.len() / ts;
    let items = g.nbytes / ts;
    if start.checked_add(nitems).is_none_or(|end| end > items) {
        return Err(data(format!(
            "items {start}..{} outside a block of {items}",
            start.saturating_add(nitems)
        )));
    }
    let (per, ncells) = g.cells();
    let cell_items = CELL.pow(g.ndim as u32);
    // Decoding more than a quarter of the block's cells one by one costs more than the block.
    if nitems.div_ceil(CELL).saturating_mul(cell_items) > items / 4 || nitems > ncells {
        return Ok(None);
    }
    let mut stream = Stream::new(mode, &g)?;
    let maxbits = stream.maxbits();
    let need = rate_stream_len(&g, maxbits).ok_or_else(|| data("stream size overflows"))?;
    if src.len() < need {
        return Err(data(format!(
            "a FIXED_RATE stream of this block takes {need} bytes at meta {}, only {} given",
            block.meta,
            src.len()
        )));
    }
    // SAFETY: `src` is readable for `src.len()` bytes, all of which zfp may read (checked
    // above), during this call; zfp does not write through it when decoding.
    unsafe { stream.attach(src.as_ptr().cast_mut(), src.len())? };
    // Strides of items in the block and of cells in the block, C order.
    let mut item_stride = [1usize; MAX_DIM];
    let mut cell_stride = [1usize; MAX_DIM];
    for d in (0..g.ndim.saturating_sub(1)).rev() {
        item_stride[d] = item_stride[d + 1] * g.blockshape[d + 1];
        cell_stride[d] = cell_stride[d + 1] * per[d + 1];
    }
    // Aligned for either float type.
    let mut cell_buf = vec![0u64; cell_items];
    let cell = as_bytes_mut(&mut cell_buf);
    let mut current = usize::MAX;
    for (k, out) in dst.chunks_exact_mut(ts).enumerate() {
        let mut rest = start + k;
        let (mut ncell, mut in_cell) = (0usize, 0usize);
        for d in 0..g.ndim {
            let c = rest / item_stride[d];
            rest %= item_stride[d];
            ncell += (c / CELL) * cell_stride[d];
            in_cell = in_cell * CELL + c % CELL;
        }
        if ncell != current {
            decode_cell(&mut stream, &g, ncell * maxbits, cell)?;
            current = ncell;
        }
        out.copy_from_slice(&cell[in_cell * ts..(in_cell + 1) * ts]);
    }
    Ok(Some(dst.len()))
}

/// The bytes of `words`.
fn as_bytes_mut(words: &mut [u64]) -> &mut [u8] {
    // SAFETY: any u64 is 8 initialised bytes, u8 has no alignment, the length covers the same
    // memory, and the borrow is carried over.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast(), words.len() * 8) }
}

/// Decodes the cell starting at bit `offset` of the attached stream into `cell` (aligned for
/// the block's float type, 4^ndim values).
fn decode_cell(
    stream: &mut Stream,
    g: &Geometry,
    offset: usize,
    cell: &mut [u8],
) -> Result<(), PluginError> {
    // SAFETY: `offset` lies inside the stream (the cell index is inside the block and the
    // stream holds every cell, checked by the caller); `cell` holds 4^ndim values of the
    // block's type, as zfp_decode_block_* writes.
    let bits = unsafe {
        z::stream_rseek(stream.bits, offset as u64);
        let f = cell.as_mut_ptr().cast::<f32>();
        let d = cell.as_mut_ptr().cast::<f64>();
        match (g.ztype == z::zfp_type_zfp_type_float, g.ndim) {
            (true, 1) => z::zfp_decode_block_float_1(stream.zfp, f),
            (true, 2) => z::zfp_decode_block_float_2(stream.zfp, f),
            (true, 3) => z::zfp_decode_block_float_3(stream.zfp, f),
            (true, _) => z::zfp_decode_block_float_4(stream.zfp, f),
            (false, 1) => z::zfp_decode_block_double_1(stream.zfp, d),
            (false, 2) => z::zfp_decode_block_double_2(stream.zfp, d),
            (false, 3) => z::zfp_decode_block_double_3(stream.zfp, d),
            (false, _) => z::zfp_decode_block_double_4(stream.zfp, d),
        }
    };
    if bits == 0 {
        return Err(data("zfp could not decode a cell"));
    }
    Ok(())
}
