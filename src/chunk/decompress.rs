//! Decompression of one chunk, whole or in part (getitem), from any chunk version C-Blosc2
//! reads: Blosc1 (version 2, 16-byte header), Blosc2 pre-releases (3, 4), Blosc2 (5, with a
//! 16- or 32-byte header) and C-Blosc2 3.x variable-length-block chunks (6).
//!
//! Every chunk is untrusted: each offset and size is checked before use, and every failure is
//! a typed [`Error`], never a panic.
//! Format: c-blosc2 `blosc/blosc2.c` (`blosc_d`, `_blosc_getitem`,
//! `initialize_context_decompression`); `shared/spec/chunk-format.md` §6–§12, §15.

use super::{job_threads, Context, DParams};
use crate::codecs::{Codec, CodecCtx};
use crate::error::{Error, Result};
use crate::filters::{Filter, FilterCtx};
use crate::format::b2nd::B2ndMeta;
use crate::format::chunk::{
    filter_id, ChunkHeader, SpecialType, B2FLAG_INSTR_CODEC, B2FLAG_LAZY, MAX_DICT_SIZE,
};
use crate::registry::Registry;
use crate::scheduler::Runtime;
use std::sync::{Arc, Mutex};

/// The largest Blosc1 typesize that was split into streams, and the fewest items per block.
const BLOSC1_MAX_SPLITS: usize = 16;
const BLOSC1_MIN_SPLIT_ITEMS: usize = 128;

/// Decompresses the chunk at the start of `src` into `dst`; returns `nbytes`.
///
/// `dst` may be larger than needed. Bytes of `src` after `cbytes` are ignored.
///
/// # Errors
/// [`Error::DestinationTooSmall`] if `dst` is shorter than `nbytes`; [`Error::Truncated`],
/// [`Error::InvalidHeader`], [`Error::VersionSupport`] for a bad header;
/// [`Error::UnknownCodec`] / [`Error::UnknownFilter`]; [`Error::Data`] / [`Error::RunLength`]
/// for corrupt streams.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    decompress_ctx(&Context::global(), &DParams::default(), src, dst)
}

/// [`decompress`] with an explicit context and parameters.
///
/// # Errors
/// As [`decompress`].
pub fn decompress_ctx(
    ctx: &Context<'_>,
    dparams: &DParams,
    src: &[u8],
    dst: &mut [u8],
) -> Result<usize> {
    Decoder::new(ctx.registry, src)?
        .with_nd(dparams.nd.clone())
        .decompress_on(&ctx.runtime, dparams.nthreads, dst)
}

/// [`decompress`] into a new vector of `nbytes` bytes.
///
/// `nbytes` comes from an untrusted header, and no bound on it can be derived from `cbytes`:
/// zero runs, `bstarts` shared between blocks and codec run-lengths let a chunk of a few
/// bytes stand for 2 GiB. So this checks the framing of every block (each `bstarts` entry and
/// stream record lies inside the chunk) before it allocates anything, reserves with
/// `try_reserve_exact`, and grows the output one block at a time, so that memory is touched
/// only as blocks decode: a chunk with a garbage stream fails after one block, not after
/// zero-filling `nbytes`.
///
/// # Errors
/// As [`decompress`]; [`Error::MemoryAlloc`] when `nbytes` cannot be reserved.
pub fn decompress_vec(src: &[u8]) -> Result<Vec<u8>> {
    decompress_vec_ctx(&Context::global(), &DParams::default(), src)
}

/// Blocks each thread decodes per window when [`decompress_vec_ctx`] decodes in parallel.
const WINDOW_BLOCKS_PER_THREAD: usize = 4;

/// [`decompress_vec`] with an explicit context and parameters. When the blocks decode on
/// several threads the output still grows, a window of `WINDOW_BLOCKS_PER_THREAD` blocks per
/// thread at a time, after block 0 alone.
///
/// # Errors
/// As [`decompress_vec`].
pub fn decompress_vec_ctx(ctx: &Context<'_>, dparams: &DParams, src: &[u8]) -> Result<Vec<u8>> {
    let d = Decoder::new(ctx.registry, src)?.with_nd(dparams.nd.clone());
    d.check_framing(0..d.header.nblocks())?;
    let n = d.header.nbytes;
    let mut out = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|_| Error::MemoryAlloc(n))?;
    let nthreads = job_threads(&ctx.runtime, dparams.nthreads, n);
    if d.regular() && nthreads > 1 {
        // Block 0 first, alone: delta's other blocks refer to it, and a chunk of garbage
        // fails there before more memory is touched.
        let nblocks = d.header.nblocks();
        let bs = d.header.blocksize;
        out.resize(d.block_range(0).end, 0);
        d.decode_block_at(0, &mut out, &mut super::scratch::take())?;
        let mut next = 1;
        while next < nblocks {
            let last = nblocks.min(next + nthreads * WINDOW_BLOCKS_PER_THREAD);
            out.resize(d.block_range(last - 1).end, 0);
            let (done, window) = out.split_at_mut(next * bs);
            let block0 = &done[..bs];
            let init = super::scratch::take;
            ctx.runtime.for_each_chunk_mut_init(
                window,
                bs,
                nthreads,
                init,
                |scratch, i, block| d.decode_block(next + i, block, block0, scratch),
            )?;
            next = last;
        }
        return Ok(out);
    }
    if d.regular() {
        let mut scratch = super::scratch::take();
        for nblock in 0..d.header.nblocks() {
            out.resize(d.block_range(nblock).end, 0);
            d.decode_block_at(nblock, &mut out, &mut scratch)?;
        }
    } else if d.has_blocks() {
        for (nblock, (size, payload)) in d.vl_framing()?.into_iter().enumerate() {
            let at = out.len();
            out.resize(at + size, 0);
            d.decode_vl_block(nblock, payload, at, &mut out[at..])?;
        }
    } else {
        out.resize(n, 0);
        d.decompress_on(&ctx.runtime, 1, &mut out)?;
    }
    Ok(out)
}

/// Copies items `[start, start + nitems)` of the chunk into `dst`, decompressing only the
/// blocks that hold them (and block 0 too when the chunk uses delta, whose other blocks are
/// relative to it). Items are `typesize` bytes as stored in the header. Returns the bytes
/// written (`nitems * typesize`).
///
/// # Errors
/// [`Error::InvalidIndex`] if the items lie outside the chunk; [`Error::DestinationTooSmall`]
/// if `dst` cannot hold them; otherwise as [`decompress`].
pub fn getitem(src: &[u8], start: usize, nitems: usize, dst: &mut [u8]) -> Result<usize> {
    getitem_ctx(
        &Context::global(),
        &DParams::default(),
        src,
        start,
        nitems,
        dst,
    )
}

/// [`getitem`] with an explicit context and parameters.
///
/// # Errors
/// As [`getitem`].
pub fn getitem_ctx(
    ctx: &Context<'_>,
    dparams: &DParams,
    src: &[u8],
    start: usize,
    nitems: usize,
    dst: &mut [u8],
) -> Result<usize> {
    Decoder::new(ctx.registry, src)?
        .with_nd(dparams.nd.clone())
        .getitem_on(&ctx.runtime, dparams.nthreads, start, nitems, dst)
}

/// A vector of `n` zero bytes, or [`Error::MemoryAlloc`].
fn zeroed(n: usize) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::MemoryAlloc(n))?;
    v.resize(n, 0);
    Ok(v)
}

/// A validated chunk ready to decode: header, codec, filters, dictionary.
pub struct Decoder<'a> {
    /// The parsed header.
    pub header: ChunkHeader,
    src: &'a [u8],
    codec: Option<Arc<dyn Codec>>,
    /// Active filters in pipeline order, with their meta bytes.
    filters: Vec<(Arc<dyn Filter>, u8)>,
    dict: Option<&'a [u8]>,
    /// Offset of the bstarts array.
    bstarts_at: usize,
    /// First byte where block data may start.
    data_start: usize,
    /// The N-d array the chunk belongs to, for the codec and filters.
    nd: Option<Arc<B2ndMeta>>,
}

impl std::fmt::Debug for Decoder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

fn read_i32(src: &[u8], at: usize, what: &'static str) -> Result<i32> {
    match src.get(at..at + 4) {
        Some(b) => Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        None => Err(Error::Truncated {
            what,
            needed: at + 4,
            available: src.len(),
        }),
    }
}

impl<'a> Decoder<'a> {
    /// Parses and checks the chunk at the start of `src`, looking up its codec and filters in
    /// `registry`.
    ///
    /// # Errors
    /// As [`decompress`], for everything that can be checked without decoding streams.
    pub fn new(registry: &Registry, src: &'a [u8]) -> Result<Self> {
        let header = ChunkHeader::parse(src)?;
        let src = &src[..header.cbytes];
        if header.blosc2_flags & B2FLAG_INSTR_CODEC != 0 {
            return Err(Error::header("instrumentation chunks hold no data"));
        }
        if header.blosc2_flags & B2FLAG_LAZY != 0 {
            return Err(Error::header(
                "lazy chunks exist only inside a frame reader",
            ));
        }
        let mut d = Decoder {
            bstarts_at: header.header_len,
            data_start: header.header_len,
            header,
            src,
            codec: None,
            filters: Vec::new(),
            dict: None,
            nd: None,
        };
        let h = &d.header;
        if h.special != SpecialType::None {
            d.check_special()?;
            return Ok(d);
        }
        if h.memcpyed() {
            let needed = h.header_len + h.nbytes;
            if src.len() < needed {
                return Err(Error::Truncated {
                    what: "memcpyed chunk data",
                    needed,
                    available: src.len(),
                });
            }
            return Ok(d);
        }
        if h.nbytes == 0 {
            if h.cbytes == h.header_len {
                return Ok(d);
            }
            return Err(Error::header("an empty chunk carries data bytes"));
        }
        d.codec = Some(registry.codec(h.compcode)?);
        for (&id, &meta) in h.filters.iter().zip(&h.filters_meta) {
            if id != filter_id::NOFILTER {
                d.filters.push((registry.filter(id)?, meta));
            }
        }
        let nblocks = h.nblocks();
        let bstarts_len = nblocks
            .checked_mul(4)
            .ok_or_else(|| Error::header(format!("{nblocks} blocks overflow the bstarts size")))?;
        let mut data_start = h.header_len + bstarts_len;
        if data_start > src.len() {
            return Err(Error::Truncated {
                what: "bstarts",
                needed: data_start,
                available: src.len(),
            });
        }
        if h.use_dict() {
            let dsize = read_i32(src, data_start, "dictionary size")?;
            let dsize = usize::try_from(dsize)
                .ok()
                .filter(|&n| n > 0 && n <= MAX_DICT_SIZE)
                .ok_or_else(|| {
                    Error::CodecDict(format!(
                        "dictionary size {dsize} is not 1 to {MAX_DICT_SIZE}"
                    ))
                })?;
            let at = data_start + 4;
            d.dict = Some(src.get(at..at + dsize).ok_or(Error::Truncated {
                what: "dictionary",
                needed: at + dsize,
                available: src.len(),
            })?);
            data_start = at + dsize;
        }
        d.data_start = data_start;
        if d.header.vl_blocks() {
            d.check_vl_bstarts()?;
        }
        Ok(d)
    }

    /// Passes the N-d array the chunk belongs to (its b2nd metalayer) to the codec and filters,
    /// as [`DParams::nd`] does; ZFP chunks need it.
    #[must_use]
    pub fn with_nd(mut self, nd: Option<Arc<B2ndMeta>>) -> Self {
        self.nd = nd;
        self
    }

    fn check_special(&self) -> Result<()> {
        let h = &self.header;
        match h.special {
            SpecialType::Nan if h.typesize != 4 && h.typesize != 8 => Err(Error::RunLength(
                format!("NaN chunk with typesize {} (must be 4 or 8)", h.typesize),
            )),
            SpecialType::Value => {
                let item = h.cbytes - h.header_len;
                if item == 0 || !h.nbytes.is_multiple_of(item) {
                    return Err(Error::RunLength(format!(
                        "repeated-value chunk: {} bytes is not a whole number of {item}-byte values",
                        h.nbytes
                    )));
                }
                Ok(())
            }
            SpecialType::Nan | SpecialType::Uninit if !h.nbytes.is_multiple_of(h.typesize) => {
                Err(Error::RunLength(format!(
                    "special chunk: nbytes {} is not a multiple of typesize {}",
                    h.nbytes, h.typesize
                )))
            }
            _ => Ok(()),
        }
    }

    /// VL-block chunks: bstarts strictly increasing, inside the chunk.
    fn check_vl_bstarts(&self) -> Result<()> {
        let mut prev = None;
        for nblock in 0..self.header.nblocks() {
            let b = self.bstart(nblock)?;
            if prev.is_some_and(|p| b <= p) {
                return Err(Error::header("VL-block bstarts are not increasing"));
            }
            prev = Some(b);
        }
        Ok(())
    }

    fn bstart(&self, nblock: usize) -> Result<usize> {
        let v = read_i32(self.src, self.bstarts_at + 4 * nblock, "bstarts")?;
        usize::try_from(v)
            .ok()
            .filter(|&b| b >= self.data_start && b < self.src.len())
            .ok_or_else(|| {
                Error::header(format!(
                    "bstarts[{nblock}] = {v} points outside the chunk data"
                ))
            })
    }

    /// Decompresses the whole chunk into `dst` on `runtime`, blocks on up to `nthreads`
    /// threads (0 = the runtime's default); returns `nbytes`.
    ///
    /// # Errors
    /// As [`decompress`].
    pub fn decompress_on(
        &self,
        runtime: &Runtime,
        nthreads: usize,
        dst: &mut [u8],
    ) -> Result<usize> {
        let h = &self.header;
        let nbytes = h.nbytes;
        if dst.len() < nbytes {
            return Err(Error::DestinationTooSmall {
                needed: nbytes,
                available: dst.len(),
            });
        }
        let dst = &mut dst[..nbytes];
        if h.special != SpecialType::None {
            self.fill_special(dst, 0);
            return Ok(nbytes);
        }
        if h.memcpyed() {
            dst.copy_from_slice(&self.src[h.header_len..h.header_len + nbytes]);
            return Ok(nbytes);
        }
        if nbytes == 0 {
            return Ok(0);
        }
        if h.vl_blocks() {
            let mut at = 0;
            for (nblock, (size, payload)) in self.vl_framing()?.into_iter().enumerate() {
                self.decode_vl_block(nblock, payload, at, &mut dst[at..at + size])?;
                at += size;
            }
            return Ok(nbytes);
        }
        self.check_framing(0..h.nblocks())?;
        let nthreads = job_threads(runtime, nthreads, nbytes);
        if nthreads <= 1 || h.nblocks() == 1 {
            let mut scratch = super::scratch::take();
            for nblock in 0..h.nblocks() {
                self.decode_block_at(nblock, dst, &mut scratch)?;
            }
            return Ok(nbytes);
        }
        let bs = h.blocksize;
        let init = super::scratch::take;
        if self.uses_delta() {
            // Delta's other blocks are relative to block 0: decode it first.
            let (block0, rest) = dst.split_at_mut(bs);
            self.decode_block(0, block0, &[], &mut init())?;
            let block0 = &*block0;
            runtime.for_each_chunk_mut_init(rest, bs, nthreads, init, |scratch, i, out| {
                self.decode_block(i + 1, out, block0, scratch)
            })?;
        } else {
            runtime.for_each_chunk_mut_init(dst, bs, nthreads, init, |scratch, nblock, out| {
                self.decode_block(nblock, out, &[], scratch)
            })?;
        }
        Ok(nbytes)
    }

    /// True for a chunk that holds blocks (not special, memcpyed or empty).
    fn has_blocks(&self) -> bool {
        let h = &self.header;
        h.special == SpecialType::None && !h.memcpyed() && h.nbytes > 0
    }

    /// True for a chunk of blocks of streams (not special, memcpyed, empty or VL-blocks).
    fn regular(&self) -> bool {
        self.has_blocks() && !self.header.vl_blocks()
    }

    /// The bytes of block `nblock` in the decompressed chunk (regular chunks).
    fn block_range(&self, nblock: usize) -> std::ops::Range<usize> {
        let (bs, n) = (self.header.blocksize, self.header.nbytes);
        let start = nblock * bs;
        start..(start + bs).min(n)
    }

    /// Decodes block `nblock` into its place in `chunk`, which holds the decompressed chunk
    /// at least up to the end of that block, block 0 already decoded (delta refers to it).
    fn decode_block_at(
        &self,
        nblock: usize,
        chunk: &mut [u8],
        scratch: &mut [Vec<u8>; 2],
    ) -> Result<()> {
        let range = self.block_range(nblock);
        let (done, rest) = chunk.split_at_mut(range.start);
        let block0 = if nblock == 0 {
            &[][..]
        } else {
            &done[..self.header.blocksize]
        };
        self.decode_block(nblock, &mut rest[..range.len()], block0, scratch)
    }

    /// Checks, without decoding, that blocks `nblocks` can be read: each `bstarts` entry
    /// points inside the chunk and every stream record there (size, run token, payload) lies
    /// inside it too. For VL-block chunks, also that the block sizes add up to `nbytes`.
    /// Does nothing for special, memcpyed and empty chunks.
    ///
    /// These are the checks decoding makes anyway, block by block; run first, they make a
    /// framing error anywhere in the chunk fail before any allocation or decoding.
    fn check_framing(&self, nblocks: std::ops::Range<usize>) -> Result<()> {
        let h = &self.header;
        if !self.has_blocks() {
            return Ok(());
        }
        if h.vl_blocks() {
            return self.vl_framing().map(|_| ());
        }
        for nblock in nblocks {
            let len = self.block_range(nblock).len();
            let ns = self.nstreams(len);
            let mut pos = self.bstart(nblock)?;
            for _ in 0..ns {
                pos = self.stream_at(pos, len / ns)?.1;
            }
        }
        Ok(())
    }

    /// Copies items `[start, start + nitems)` into `dst`, the blocks on up to `nthreads`
    /// threads of `runtime` (0 = its default); see [`getitem`].
    ///
    /// # Errors
    /// As [`getitem`].
    pub fn getitem_on(
        &self,
        runtime: &Runtime,
        nthreads: usize,
        start: usize,
        nitems: usize,
        dst: &mut [u8],
    ) -> Result<usize> {
        let h = &self.header;
        let ts = h.typesize;
        let range = start
            .checked_mul(ts)
            .zip(start.checked_add(nitems).and_then(|e| e.checked_mul(ts)))
            .filter(|&(_, e)| e <= h.nbytes)
            .ok_or_else(|| {
                Error::InvalidIndex(format!(
                    "items {start}..{} of {ts} bytes exceed the chunk's {} bytes",
                    start.saturating_add(nitems),
                    h.nbytes
                ))
            })?;
        self.decompress_range_on(runtime, nthreads, range.0..range.1, dst)
    }

    /// Copies bytes `range` of the decompressed chunk into `dst`, decompressing only the
    /// blocks that hold them (and block 0 when the chunk uses delta); returns the bytes
    /// written. This is [`getitem`] in bytes: it also reaches a tail shorter than an item.
    ///
    /// Only the `bstarts` entries and streams of those blocks are read, so `src` may be a
    /// partial image of the chunk in which the other blocks' bytes are absent (the frame
    /// layer's lazy chunks).
    ///
    /// # Errors
    /// [`Error::InvalidIndex`] if `range` is not inside `0..nbytes`;
    /// [`Error::DestinationTooSmall`] if `dst` is shorter than the range; otherwise as
    /// [`decompress`].
    pub fn decompress_range_on(
        &self,
        runtime: &Runtime,
        nthreads: usize,
        range: std::ops::Range<usize>,
        dst: &mut [u8],
    ) -> Result<usize> {
        let h = &self.header;
        if range.start > range.end || range.end > h.nbytes {
            return Err(Error::InvalidIndex(format!(
                "bytes {}..{} are not inside the chunk's {} bytes",
                range.start, range.end, h.nbytes
            )));
        }
        let (lo, hi) = (range.start, range.end);
        let len = hi - lo;
        if dst.len() < len {
            return Err(Error::DestinationTooSmall {
                needed: len,
                available: dst.len(),
            });
        }
        let dst = &mut dst[..len];
        if len == 0 {
            return Ok(0);
        }
        if h.special != SpecialType::None {
            self.fill_special(dst, lo);
            return Ok(len);
        }
        if h.memcpyed() {
            dst.copy_from_slice(&self.src[h.header_len + lo..h.header_len + hi]);
            return Ok(len);
        }
        if h.vl_blocks() {
            // VL blocks are independent: decode only those that overlap the items.
            let mut at = 0;
            for (nblock, (size, payload)) in self.vl_framing()?.into_iter().enumerate() {
                let (bstart, bend) = (at, at + size);
                at = bend;
                if bend <= lo || bstart >= hi {
                    continue;
                }
                let mut block = zeroed(size)?;
                self.decode_vl_block(nblock, payload, bstart, &mut block)?;
                let (from, to) = (lo.max(bstart), hi.min(bend));
                dst[from - lo..to - lo].copy_from_slice(&block[from - bstart..to - bstart]);
            }
            return Ok(len);
        }
        let bs = h.blocksize;
        let blocks = lo / bs..(hi - 1) / bs + 1;
        // Delta's blocks after 0 are relative to block 0: decode it first when they are read.
        let needs_ref = self.uses_delta() && hi > bs;
        // Check what will be read before allocating a block (up to 512 MiB) for it.
        if needs_ref {
            self.check_framing(0..1)?;
        }
        self.check_framing(blocks.clone())?;
        let block0 = if needs_ref {
            let mut b = zeroed(bs)?;
            self.decode_block(0, &mut b, &[], &mut super::scratch::take())?;
            b
        } else {
            Vec::new()
        };
        // The part of `dst` each block fills, in order.
        let mut pieces = Vec::with_capacity(blocks.len());
        let mut rest = dst;
        for nblock in blocks.clone() {
            let bstart = nblock * bs;
            let (from, to) = (lo.max(bstart), hi.min(bstart + bs));
            let (piece, tail) = rest.split_at_mut(to - from);
            rest = tail;
            pieces.push(Mutex::new(piece));
        }
        let nthreads = job_threads(runtime, nthreads, len);
        let init = || (super::scratch::take(), Vec::new());
        runtime.for_each_index_init(pieces.len(), nthreads, init, |(scratch, buf), k| {
            let nblock = blocks.start + k;
            let bstart = nblock * bs;
            let blen = bs.min(h.nbytes - bstart);
            let mut piece = pieces[k]
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let from = lo.max(bstart) - bstart;
            let plen = piece.len();
            if nblock == 0 && needs_ref {
                piece.copy_from_slice(&block0[from..from + plen]);
            } else if plen == blen {
                self.decode_block(nblock, &mut piece, &block0, scratch)?;
            } else if self.decode_items(nblock, blen, from, &mut piece)? {
                // The codec decoded just the items asked for (ZFP fixed-rate cells).
            } else {
                buf.resize(blen, 0);
                self.decode_block(nblock, &mut buf[..blen], &block0, scratch)?;
                piece.copy_from_slice(&buf[from..from + plen]);
            }
            Ok(())
        })?;
        Ok(len)
    }

    /// Asks the codec to decode only the bytes `[from, from + out.len())` of block `nblock`
    /// (`blen` bytes) into `out` ([`Codec::decompress_items`]); false when that does not apply
    /// (filters to undo, split streams, a stream that is not a codec payload, unaligned
    /// items) or the codec declines, and the whole block must be decoded.
    fn decode_items(
        &self,
        nblock: usize,
        blen: usize,
        from: usize,
        out: &mut [u8],
    ) -> Result<bool> {
        let ts = self.header.typesize;
        let undo = self
            .filters
            .iter()
            .any(|(f, _)| f.id() != filter_id::TRUNC_PREC);
        if undo
            || self.nstreams(blen) != 1
            || !from.is_multiple_of(ts)
            || !out.len().is_multiple_of(ts)
        {
            return Ok(false);
        }
        let Some(codec) = self.codec.as_deref() else {
            return Ok(false);
        };
        let (Stream::Codec(payload), _) = self.stream_at(self.bstart(nblock)?, blen)? else {
            return Ok(false);
        };
        let ctx = CodecCtx {
            clevel: 0,
            meta: self.header.compcode_meta,
            typesize: ts,
            blocksize: self.header.blocksize,
            nblock,
            dict: self.dict,
            nd: self.nd.as_deref(),
        };
        match codec.decompress_items(payload, out, from / ts, &ctx)? {
            None => Ok(false),
            Some(n) if n == out.len() => Ok(true),
            Some(n) => Err(Error::Data(format!(
                "block {nblock}: codec {} decoded {n} bytes of items, expected {}",
                self.header.compcode,
                out.len()
            ))),
        }
    }

    /// True when the chunk's filters include delta.
    fn uses_delta(&self) -> bool {
        self.filters.iter().any(|(f, _)| f.id() == filter_id::DELTA)
    }

    /// Fills `dst` (the chunk bytes from `offset` on) with a special chunk's value.
    fn fill_special(&self, dst: &mut [u8], offset: usize) {
        let h = &self.header;
        match h.special {
            SpecialType::Nan => {
                let nan: &[u8] = if h.typesize == 4 {
                    &f32::NAN.to_le_bytes()
                } else {
                    &f64::NAN.to_le_bytes()
                };
                for (i, b) in dst.iter_mut().enumerate() {
                    *b = nan[(offset + i) % nan.len()];
                }
            }
            SpecialType::Value => {
                let item = &self.src[h.header_len..h.cbytes];
                for (i, b) in dst.iter_mut().enumerate() {
                    *b = item[(offset + i) % item.len()];
                }
            }
            // Zeros; uninitialised chunks read as zeros too (C leaves them undefined).
            _ => dst.fill(0),
        }
    }

    /// Whether block streams are split (`typesize` streams) for a block of `bsize` bytes.
    fn nstreams(&self, bsize: usize) -> usize {
        let h = &self.header;
        let full = bsize == h.blocksize;
        let split = if h.version <= 2 {
            // Blosc1 split only small items with enough of them per block.
            !h.dont_split()
                && h.typesize <= BLOSC1_MAX_SPLITS
                && bsize / h.typesize >= BLOSC1_MIN_SPLIT_ITEMS
        } else {
            !h.dont_split()
        };
        if split && full && bsize.is_multiple_of(h.typesize) {
            h.typesize
        } else {
            1
        }
    }

    /// Decodes block `nblock` into `out` (its exact length). `block0` is the decoded block 0
    /// (needed by delta for the other blocks).
    fn decode_block(
        &self,
        nblock: usize,
        out: &mut [u8],
        block0: &[u8],
        scratch: &mut [Vec<u8>; 2],
    ) -> Result<()> {
        let len = out.len();
        let codec = self
            .codec
            .as_deref()
            .ok_or_else(|| Error::header("chunk has no codec"))?;
        // Filters that undo something (trunc_prec is lossy: nothing to undo).
        let active: Vec<&(Arc<dyn Filter>, u8)> = self
            .filters
            .iter()
            .filter(|(f, _)| f.id() != filter_id::TRUNC_PREC)
            .collect();
        let [a, b] = scratch;
        let target: &mut [u8] = if active.is_empty() {
            out
        } else {
            a.resize(len, 0);
            &mut a[..len]
        };
        self.decode_streams(codec, nblock, target)?;
        if active.is_empty() {
            return Ok(());
        }
        b.resize(len, 0);
        let nactive = active.len();
        for (k, (filter, meta)) in active.iter().rev().enumerate() {
            let ctx = FilterCtx {
                typesize: self.header.typesize,
                meta: *meta,
                nblock,
                offset: nblock * self.header.blocksize,
                version: self.header.version,
                dref: block0,
                nd: self.nd.as_deref(),
            };
            if k + 1 == nactive {
                filter.backward(&a[..len], out, &ctx)?;
            } else {
                filter.backward(&a[..len], &mut b[..len], &ctx)?;
                std::mem::swap(a, b);
            }
        }
        Ok(())
    }

    /// Parses the stream record at `pos` of a stream that decodes to `neblock` bytes; returns
    /// it and the position after it.
    fn stream_at(&self, pos: usize, neblock: usize) -> Result<(Stream<'a>, usize)> {
        let src = self.src;
        let csize = read_i32(src, pos, "stream size")?;
        let pos = pos + 4;
        if csize == 0 {
            return Ok((Stream::Zeros, pos));
        }
        if csize < 0 {
            let token = *src.get(pos).ok_or(Error::Truncated {
                what: "run token",
                needed: pos + 1,
                available: src.len(),
            })?;
            return match u8::try_from(csize.unsigned_abs()) {
                Ok(value) if token & 1 == 1 => Ok((Stream::Run(value), pos + 1)),
                _ => Err(Error::RunLength(format!(
                    "stream run of {csize} with token {token:#04x}"
                ))),
            };
        }
        let csize = csize.unsigned_abs() as usize;
        let payload = src.get(pos..pos + csize).ok_or(Error::Truncated {
            what: "block stream",
            needed: pos + csize,
            available: src.len(),
        })?;
        let stream = if csize == neblock {
            Stream::Raw(payload)
        } else {
            Stream::Codec(payload)
        };
        Ok((stream, pos + csize))
    }

    /// Decodes the streams of block `nblock` into `out` (before filters).
    fn decode_streams(&self, codec: &dyn Codec, nblock: usize, out: &mut [u8]) -> Result<()> {
        let mut pos = self.bstart(nblock)?;
        let ns = self.nstreams(out.len());
        let neblock = out.len() / ns;
        let ctx = CodecCtx {
            clevel: 0,
            meta: self.header.compcode_meta,
            typesize: self.header.typesize,
            blocksize: self.header.blocksize,
            nblock,
            dict: self.dict,
            nd: self.nd.as_deref(),
        };
        for stream in out.chunks_exact_mut(neblock) {
            let (record, next) = self.stream_at(pos, neblock)?;
            pos = next;
            match record {
                Stream::Zeros => stream.fill(0),
                Stream::Run(value) => stream.fill(value),
                Stream::Raw(payload) => stream.copy_from_slice(payload),
                Stream::Codec(payload) => {
                    let n = codec.decompress(payload, stream, &ctx)?;
                    if n != neblock {
                        return Err(Error::Data(format!(
                            "block {nblock}: stream decoded to {n} bytes, expected {neblock}"
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// VL-block chunks: each block's decoded size and codec payload, checked to lie inside
    /// the chunk and to add up to `nbytes`.
    fn vl_framing(&self) -> Result<Vec<(usize, &'a [u8])>> {
        let nblocks = self.header.nblocks();
        let nbytes = self.header.nbytes;
        let mut blocks = Vec::new();
        let mut at = 0usize;
        for nblock in 0..nblocks {
            let start = self.bstart(nblock)?;
            let end = if nblock + 1 < nblocks {
                self.bstart(nblock + 1)?
            } else {
                self.src.len()
            };
            let size = read_i32(self.src, start, "VL block size")?;
            let size = usize::try_from(size)
                .ok()
                .filter(|&s| s <= nbytes - at)
                .ok_or_else(|| {
                    Error::header(format!("VL block {nblock} size {size} exceeds nbytes"))
                })?;
            let payload = self.src.get(start + 4..end).ok_or(Error::Truncated {
                what: "VL block",
                needed: end,
                available: self.src.len(),
            })?;
            blocks.push((size, payload));
            at += size;
        }
        if at != nbytes {
            return Err(Error::Data(format!(
                "VL blocks hold {at} bytes, header says {nbytes}"
            )));
        }
        Ok(blocks)
    }

    /// Decodes VL block `nblock` (codec payload `payload`, at byte `at` of the chunk) into
    /// `out`, its exact decoded size.
    fn decode_vl_block(
        &self,
        nblock: usize,
        payload: &[u8],
        at: usize,
        out: &mut [u8],
    ) -> Result<()> {
        let codec = self
            .codec
            .as_deref()
            .ok_or_else(|| Error::header("chunk has no codec"))?;
        let size = out.len();
        let ctx = CodecCtx {
            clevel: 0,
            meta: self.header.compcode_meta,
            typesize: self.header.typesize,
            blocksize: size,
            nblock,
            dict: self.dict,
            nd: self.nd.as_deref(),
        };
        let n = codec.decompress(payload, out, &ctx)?;
        if n != size {
            return Err(Error::Data(format!(
                "VL block {nblock}: decoded {n} bytes, expected {size}"
            )));
        }
        let mut scratch = Vec::new();
        for (filter, meta) in self.filters.iter().rev() {
            if filter.id() == filter_id::TRUNC_PREC {
                continue;
            }
            if scratch.is_empty() {
                scratch = zeroed(size)?;
            }
            let ctx = FilterCtx {
                typesize: self.header.typesize,
                meta: *meta,
                nblock,
                offset: at,
                version: self.header.version,
                dref: &[],
                nd: self.nd.as_deref(),
            };
            scratch.copy_from_slice(out);
            filter.backward(&scratch, out, &ctx)?;
        }
        Ok(())
    }

    /// True when decompressing a block other than 0 needs block 0 first (the chunk uses
    /// delta, whose other blocks are relative to block 0).
    #[must_use]
    pub fn needs_block0(&self) -> bool {
        self.regular() && self.uses_delta()
    }

    /// Decompresses block `nblock` alone into the start of `dst`; returns its size in bytes
    /// (`blocksize`, or less for a short last block). Special and memcpyed chunks give the
    /// block's bytes `nblock * blocksize..`. `block0` is block 0 already decompressed, for a
    /// chunk that [`Decoder::needs_block0`]; when it is `None` there, block 0 is decompressed
    /// here first.
    ///
    /// # Errors
    /// [`Error::InvalidIndex`] if the chunk has no block `nblock`;
    /// [`Error::DestinationTooSmall`] if `dst` is shorter than the block;
    /// [`Error::InvalidParam`] if `block0` is not `blocksize` bytes; otherwise as [`decompress`].
    pub fn decompress_block(
        &self,
        nblock: usize,
        dst: &mut [u8],
        block0: Option<&[u8]>,
    ) -> Result<usize> {
        let h = &self.header;
        if nblock >= h.nblocks() {
            return Err(Error::InvalidIndex(format!(
                "block {nblock} of a chunk of {} blocks",
                h.nblocks()
            )));
        }
        let (at, len) = if h.vl_blocks() {
            let framing = self.vl_framing()?;
            let at = framing[..nblock].iter().map(|(size, _)| size).sum();
            (at, framing[nblock].0)
        } else {
            let range = self.block_range(nblock);
            (range.start, range.len())
        };
        if dst.len() < len {
            return Err(Error::DestinationTooSmall {
                needed: len,
                available: dst.len(),
            });
        }
        let dst = &mut dst[..len];
        if h.special != SpecialType::None {
            self.fill_special(dst, at);
        } else if h.memcpyed() {
            dst.copy_from_slice(&self.src[h.header_len + at..h.header_len + at + len]);
        } else if h.vl_blocks() {
            let payload = self.vl_framing()?[nblock].1;
            self.decode_vl_block(nblock, payload, at, dst)?;
        } else {
            self.check_framing(nblock..nblock + 1)?;
            let mut scratch = super::scratch::take();
            let mut own;
            let block0 = match block0 {
                _ if nblock == 0 || !self.uses_delta() => &[][..],
                Some(b) if b.len() == h.blocksize => b,
                Some(b) => {
                    return Err(Error::InvalidParam(format!(
                        "block 0 given with {} bytes, the blocksize is {}",
                        b.len(),
                        h.blocksize
                    )))
                }
                None => {
                    self.check_framing(0..1)?;
                    own = zeroed(h.blocksize)?;
                    self.decode_block(0, &mut own, &[], &mut scratch)?;
                    &own[..]
                }
            };
            self.decode_block(nblock, dst, block0, &mut scratch)?;
        }
        Ok(len)
    }

    /// The element size of the byte planes a block of this chunk holds before its filters
    /// are undone, when the chunk is regular and its only filter is shuffle: then
    /// [`Decoder::decompress_block_planes`] gives a block's bytes still shuffled, for a caller
    /// that needs only a few of its items. `None` for any other chunk.
    #[must_use]
    pub fn shuffle_planes(&self) -> Option<usize> {
        let [(f, meta)] = self.filters.as_slice() else {
            return None;
        };
        if !self.regular() || f.id() != filter_id::SHUFFLE {
            return None;
        }
        Some(if *meta != 0 {
            usize::from(*meta)
        } else {
            self.header.typesize
        })
    }

    /// Decodes block `nblock` into the start of `dst` without undoing its shuffle: with `e`
    /// the element size ([`Decoder::shuffle_planes`]) and `n = len / e`, byte `j` of element
    /// `i` is at `j * n + i` (the last `len % e` bytes as they are); returns the block's size
    /// `len` in bytes.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a chunk without [`Decoder::shuffle_planes`];
    /// [`Error::InvalidIndex`] if there is no block `nblock`; [`Error::DestinationTooSmall`];
    /// otherwise as [`decompress`].
    pub fn decompress_block_planes(&self, nblock: usize, dst: &mut [u8]) -> Result<usize> {
        if self.shuffle_planes().is_none() {
            return Err(Error::InvalidParam(
                "byte planes need a regular chunk whose only filter is shuffle".into(),
            ));
        }
        let h = &self.header;
        if nblock >= h.nblocks() {
            return Err(Error::InvalidIndex(format!(
                "block {nblock} of a chunk of {} blocks",
                h.nblocks()
            )));
        }
        let len = self.block_range(nblock).len();
        if dst.len() < len {
            return Err(Error::DestinationTooSmall {
                needed: len,
                available: dst.len(),
            });
        }
        let codec = self
            .codec
            .as_deref()
            .ok_or_else(|| Error::header("chunk has no codec"))?;
        self.check_framing(nblock..nblock + 1)?;
        self.decode_streams(codec, nblock, &mut dst[..len])?;
        Ok(len)
    }
}

/// One stream record of a block (`int32 csize` and what follows it).
enum Stream<'s> {
    /// `csize == 0`: zeros.
    Zeros,
    /// `csize < 0` with a token with bit 0 set: a run of the byte `-csize`.
    Run(u8),
    /// `csize == neblock`: the bytes, stored raw.
    Raw(&'s [u8]),
    /// Any other `csize > 0`: a codec payload.
    Codec(&'s [u8]),
}
