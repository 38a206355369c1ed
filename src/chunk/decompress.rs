//! Decompression of one chunk, whole or in part (getitem), from any chunk version C-Blosc2
//! reads: Blosc1 (version 2, 16-byte header), Blosc2 pre-releases (3, 4), Blosc2 (5, with a
//! 16- or 32-byte header) and C-Blosc2 3.x variable-length-block chunks (6).
//!
//! Every chunk is untrusted: each offset and size is checked before use, and every failure is
//! a typed [`Error`], never a panic.
//! Format: c-blosc2 `blosc/blosc2.c` (`blosc_d`, `_blosc_getitem`,
//! `initialize_context_decompression`); `shared/spec/chunk-format.md` §6–§12, §15.

use crate::codecs::{Codec, CodecCtx};
use crate::error::{Error, Result};
use crate::filters::{Filter, FilterCtx};
use crate::format::chunk::{
    filter_id, ChunkHeader, SpecialType, B2FLAG_INSTR_CODEC, B2FLAG_LAZY, MAX_DICT_SIZE,
};
use crate::registry::Registry;
use std::sync::Arc;

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
    Decoder::new(Registry::global(), src)?.decompress(dst)
}

/// [`decompress`] into a new vector of `nbytes` bytes.
///
/// # Errors
/// As [`decompress`]; [`Error::MemoryAlloc`] when `nbytes` cannot be reserved.
pub fn decompress_vec(src: &[u8]) -> Result<Vec<u8>> {
    let d = Decoder::new(Registry::global(), src)?;
    let n = d.header.nbytes;
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| Error::MemoryAlloc(n))?;
    out.resize(n, 0);
    d.decompress(&mut out)?;
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
    Decoder::new(Registry::global(), src)?.getitem(start, nitems, dst)
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
}

impl std::fmt::Debug for Decoder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder").field("header", &self.header).finish_non_exhaustive()
    }
}

fn read_i32(src: &[u8], at: usize, what: &'static str) -> Result<i32> {
    match src.get(at..at + 4) {
        Some(b) => Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        None => Err(Error::Truncated { what, needed: at + 4, available: src.len() }),
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
            return Err(Error::header("lazy chunks exist only inside a frame reader"));
        }
        let mut d = Decoder {
            bstarts_at: header.header_len,
            data_start: header.header_len,
            header,
            src,
            codec: None,
            filters: Vec::new(),
            dict: None,
        };
        let h = &d.header;
        if h.special != SpecialType::None {
            d.check_special()?;
            return Ok(d);
        }
        if h.memcpyed() {
            let needed = h.header_len + h.nbytes;
            if src.len() < needed {
                return Err(Error::Truncated { what: "memcpyed chunk data", needed, available: src.len() });
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
            return Err(Error::Truncated { what: "bstarts", needed: data_start, available: src.len() });
        }
        if h.use_dict() {
            let dsize = read_i32(src, data_start, "dictionary size")?;
            let dsize = usize::try_from(dsize)
                .ok()
                .filter(|&n| n > 0 && n <= MAX_DICT_SIZE)
                .ok_or_else(|| Error::CodecDict(format!("dictionary size {dsize} is not 1 to {MAX_DICT_SIZE}")))?;
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

    fn check_special(&self) -> Result<()> {
        let h = &self.header;
        match h.special {
            SpecialType::Nan if h.typesize != 4 && h.typesize != 8 => {
                Err(Error::RunLength(format!("NaN chunk with typesize {} (must be 4 or 8)", h.typesize)))
            }
            SpecialType::Value => {
                let item = h.cbytes - h.header_len;
                if item == 0 || h.nbytes % item != 0 {
                    return Err(Error::RunLength(format!(
                        "repeated-value chunk: {} bytes is not a whole number of {item}-byte values",
                        h.nbytes
                    )));
                }
                Ok(())
            }
            SpecialType::Nan | SpecialType::Uninit if h.nbytes % h.typesize != 0 => Err(Error::RunLength(
                format!("special chunk: nbytes {} is not a multiple of typesize {}", h.nbytes, h.typesize),
            )),
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
            .ok_or_else(|| Error::header(format!("bstarts[{nblock}] = {v} points outside the chunk data")))
    }

    /// Decompresses the whole chunk into `dst`; returns `nbytes`.
    ///
    /// # Errors
    /// As [`decompress`].
    pub fn decompress(&self, dst: &mut [u8]) -> Result<usize> {
        let h = &self.header;
        let nbytes = h.nbytes;
        if dst.len() < nbytes {
            return Err(Error::DestinationTooSmall { needed: nbytes, available: dst.len() });
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
            self.decompress_vl(dst)?;
            return Ok(nbytes);
        }
        let mut scratch = [Vec::new(), Vec::new()];
        let bs = h.blocksize;
        let (block0, rest) = dst.split_at_mut(bs.min(nbytes));
        self.decode_block(0, block0, &[], &mut scratch)?;
        for (i, block) in rest.chunks_mut(bs).enumerate() {
            self.decode_block(i + 1, block, block0, &mut scratch)?;
        }
        Ok(nbytes)
    }

    /// Copies items `[start, start + nitems)` into `dst`; see [`getitem`].
    ///
    /// # Errors
    /// As [`getitem`].
    pub fn getitem(&self, start: usize, nitems: usize, dst: &mut [u8]) -> Result<usize> {
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
        let (lo, hi) = range;
        let len = hi - lo;
        if dst.len() < len {
            return Err(Error::DestinationTooSmall { needed: len, available: dst.len() });
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
            let mut all = vec![0u8; h.nbytes];
            self.decompress_vl(&mut all)?;
            dst.copy_from_slice(&all[lo..hi]);
            return Ok(len);
        }
        let bs = h.blocksize;
        let mut scratch = [Vec::new(), Vec::new()];
        let needs_ref = self.filters.iter().any(|(f, _)| f.id() == filter_id::DELTA);
        let mut block0 = Vec::new();
        let mut block = vec![0u8; bs.min(h.nbytes)];
        if needs_ref && lo >= bs {
            block0.resize(bs, 0);
            self.decode_block(0, &mut block0, &[], &mut scratch)?;
        }
        for nblock in lo / bs..=(hi - 1) / bs {
            let bstart = nblock * bs;
            let blen = bs.min(h.nbytes - bstart);
            let out = &mut block[..blen];
            self.decode_block(nblock, out, &block0, &mut scratch)?;
            if nblock == 0 && needs_ref {
                block0 = out.to_vec();
            }
            let from = lo.max(bstart);
            let to = hi.min(bstart + blen);
            dst[from - lo..to - lo].copy_from_slice(&out[from - bstart..to - bstart]);
        }
        Ok(len)
    }

    /// Fills `dst` (the chunk bytes from `offset` on) with a special chunk's value.
    fn fill_special(&self, dst: &mut [u8], offset: usize) {
        let h = &self.header;
        match h.special {
            SpecialType::Nan => {
                let nan: &[u8] = if h.typesize == 4 { &f32::NAN.to_le_bytes() } else { &f64::NAN.to_le_bytes() };
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
            !h.dont_split() && h.typesize <= BLOSC1_MAX_SPLITS && bsize / h.typesize >= BLOSC1_MIN_SPLIT_ITEMS
        } else {
            !h.dont_split()
        };
        if split && full && bsize % h.typesize == 0 {
            h.typesize
        } else {
            1
        }
    }

    /// Decodes block `nblock` into `out` (its exact length). `block0` is the decoded block 0
    /// (needed by delta for the other blocks).
    fn decode_block(&self, nblock: usize, out: &mut [u8], block0: &[u8], scratch: &mut [Vec<u8>; 2]) -> Result<()> {
        let len = out.len();
        let codec = self.codec.as_deref().ok_or_else(|| Error::header("chunk has no codec"))?;
        // Filters that undo something (trunc_prec is lossy: nothing to undo).
        let active: Vec<&(Arc<dyn Filter>, u8)> =
            self.filters.iter().filter(|(f, _)| f.id() != filter_id::TRUNC_PREC).collect();
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

    /// Decodes the streams of block `nblock` into `out` (before filters).
    fn decode_streams(&self, codec: &dyn Codec, nblock: usize, out: &mut [u8]) -> Result<()> {
        let src = self.src;
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
        };
        for stream in out.chunks_exact_mut(neblock) {
            let csize = read_i32(src, pos, "stream size")?;
            pos += 4;
            if csize == 0 {
                stream.fill(0);
                continue;
            }
            if csize < 0 {
                let token = *src.get(pos).ok_or(Error::Truncated { what: "run token", needed: pos + 1, available: src.len() })?;
                pos += 1;
                let value = csize.unsigned_abs();
                if token & 1 == 0 || value > 255 {
                    return Err(Error::RunLength(format!("stream run of {csize} with token {token:#04x}")));
                }
                stream.fill(value as u8);
                continue;
            }
            let csize = csize as usize;
            let payload = src.get(pos..pos + csize).ok_or(Error::Truncated {
                what: "block stream",
                needed: pos + csize,
                available: src.len(),
            })?;
            pos += csize;
            if csize == neblock {
                stream.copy_from_slice(payload);
                continue;
            }
            let n = codec.decompress(payload, stream, &ctx)?;
            if n != neblock {
                return Err(Error::Data(format!(
                    "block {nblock}: stream decoded to {n} bytes, expected {neblock}"
                )));
            }
        }
        Ok(())
    }

    /// C-Blosc2 3.x variable-length blocks: each block is `int32 size` + one codec stream.
    fn decompress_vl(&self, dst: &mut [u8]) -> Result<()> {
        let codec = self.codec.as_deref().ok_or_else(|| Error::header("chunk has no codec"))?;
        let nblocks = self.header.nblocks();
        let mut at = 0usize;
        for nblock in 0..nblocks {
            let start = self.bstart(nblock)?;
            let end = if nblock + 1 < nblocks { self.bstart(nblock + 1)? } else { self.src.len() };
            let size = read_i32(self.src, start, "VL block size")?;
            let size = usize::try_from(size)
                .ok()
                .filter(|&s| s <= dst.len() - at)
                .ok_or_else(|| Error::header(format!("VL block {nblock} size {size} exceeds nbytes")))?;
            let payload = self.src.get(start + 4..end).ok_or(Error::Truncated {
                what: "VL block",
                needed: end,
                available: self.src.len(),
            })?;
            let ctx = CodecCtx {
                clevel: 0,
                meta: self.header.compcode_meta,
                typesize: self.header.typesize,
                blocksize: size,
                nblock,
                dict: self.dict,
            };
            let out = &mut dst[at..at + size];
            let n = codec.decompress(payload, out, &ctx)?;
            if n != size {
                return Err(Error::Data(format!("VL block {nblock}: decoded {n} bytes, expected {size}")));
            }
            let mut scratch = vec![0u8; size];
            for (filter, meta) in self.filters.iter().rev() {
                if filter.id() == filter_id::TRUNC_PREC {
                    continue;
                }
                let ctx = FilterCtx {
                    typesize: self.header.typesize,
                    meta: *meta,
                    nblock,
                    offset: at,
                    version: self.header.version,
                    dref: &[],
                };
                scratch.copy_from_slice(out);
                filter.backward(&scratch, out, &ctx)?;
            }
            at += size;
        }
        if at != dst.len() {
            return Err(Error::Data(format!("VL blocks hold {at} bytes, header says {}", dst.len())));
        }
        Ok(())
    }
}
