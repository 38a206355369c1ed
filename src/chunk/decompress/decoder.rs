//! The [`Decoder`]: a chunk parsed and checked (header, codec and filters looked up, the
//! dictionary and `bstarts` located) before anything is decoded, and what it decodes: the
//! whole chunk, a byte range or items, one block, or a block's byte planes.

use super::read_i32;
use crate::alloc::zeroed;
use crate::chunk::job_threads;
use crate::codecs::Codec;
use crate::error::{Error, Expected, Result};
use crate::filters::Filter;
use crate::format::b2nd::B2ndMeta;
use crate::format::chunk::{
    ChunkHeader, SpecialType, B2FLAG_INSTR_CODEC, B2FLAG_LAZY, MAX_DICT_SIZE,
};
use crate::format::ids::FilterId;
use crate::registry::Registry;
use crate::scheduler::Runtime;
use std::sync::{Arc, Mutex};

/// A validated chunk ready to decode: header, codec, filters, dictionary.
pub struct Decoder<'a> {
    /// The parsed header.
    pub header: ChunkHeader,
    pub(super) src: &'a [u8],
    pub(super) codec: Option<Arc<dyn Codec>>,
    /// Active filters in pipeline order, with their meta bytes.
    pub(super) filters: Vec<(Arc<dyn Filter>, u8)>,
    pub(super) dict: Option<&'a [u8]>,
    /// Offset of the bstarts array.
    pub(super) bstarts_at: usize,
    /// First byte where block data may start.
    pub(super) data_start: usize,
    /// The N-d array the chunk belongs to, for the codec and filters.
    pub(super) nd: Option<Arc<B2ndMeta>>,
}

impl std::fmt::Debug for Decoder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

/// A regular chunk's decoder always has its codec ([`Decoder::new`] looks it up).
pub(super) const NO_CODEC: Error = Error::Internal {
    what: "a regular chunk's decoder has no codec",
};

impl<'a> Decoder<'a> {
    /// Parses and checks the chunk at the start of `src`, looking up its codec and filters in
    /// `registry`.
    ///
    /// # Errors
    /// As [`decompress`](super::decompress), for everything that can be checked without decoding streams.
    pub fn new(registry: &Registry, src: &'a [u8]) -> Result<Self> {
        let header = ChunkHeader::parse(src)?;
        let src = &src[..header.cbytes];
        if header.blosc2_flags & B2FLAG_INSTR_CODEC != 0 {
            return Err(Error::Malformed {
                what: "instrumentation chunks hold no data",
            });
        }
        if header.blosc2_flags & B2FLAG_LAZY != 0 {
            return Err(Error::Malformed {
                what: "lazy chunks exist only inside a frame reader",
            });
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
            let empty = Expected::exactly(h.header_len);
            return Err(Error::header("cbytes of an empty chunk", h.cbytes, empty));
        }
        d.codec = Some(registry.codec(h.compcode)?);
        for (&id, &meta) in h.filters.iter().zip(&h.filters_meta) {
            if id != FilterId::NOFILTER {
                d.filters.push((registry.filter(id)?, meta));
            }
        }
        let nblocks = h.nblocks();
        let bstarts_len = nblocks
            .checked_mul(4)
            .ok_or_else(|| Error::header("blocks", nblocks, Expected::AtMost(i64::MAX / 4)))?;
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
                .ok_or_else(|| Error::CodecDict {
                    id: h.compcode.0,
                    message: format!("dictionary size {dsize} is not 1 to {MAX_DICT_SIZE}"),
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
    /// as [`DParams::nd`](crate::chunk::DParams::nd) does; ZFP chunks need it.
    #[must_use]
    pub fn with_nd(mut self, nd: Option<Arc<B2ndMeta>>) -> Self {
        self.nd = nd;
        self
    }

    fn check_special(&self) -> Result<()> {
        let h = &self.header;
        match h.special {
            SpecialType::Nan if h.typesize != 4 && h.typesize != 8 => Err(Error::RunLength {
                what: "typesize of a NaN chunk",
                value: h.typesize as i64,
                expected: Expected::OneOf("4 or 8"),
            }),
            SpecialType::Value => {
                let item = h.cbytes - h.header_len;
                if item == 0 {
                    return Err(Error::RunLength {
                        what: "value bytes of a repeated-value chunk",
                        value: 0,
                        expected: Expected::AtLeast(1),
                    });
                }
                if !h.nbytes.is_multiple_of(item) {
                    return Err(Error::RunLength {
                        what: "nbytes of a repeated-value chunk (whole values)",
                        value: h.nbytes as i64,
                        expected: Expected::MultipleOf(item as i64),
                    });
                }
                Ok(())
            }
            SpecialType::Nan | SpecialType::Uninit if !h.nbytes.is_multiple_of(h.typesize) => {
                Err(Error::RunLength {
                    what: "nbytes of a special chunk (whole items)",
                    value: h.nbytes as i64,
                    expected: Expected::MultipleOf(h.typesize as i64),
                })
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
                return Err(Error::Malformed {
                    what: "VL-block bstarts are not increasing",
                });
            }
            prev = Some(b);
        }
        Ok(())
    }

    pub(super) fn bstart(&self, nblock: usize) -> Result<usize> {
        let v = read_i32(self.src, self.bstarts_at + 4 * nblock, "bstarts")?;
        usize::try_from(v)
            .ok()
            .filter(|&b| b >= self.data_start && b < self.src.len())
            .ok_or_else(|| {
                let data = Expected::range(self.data_start, self.src.len() as i64 - 1);
                Error::header("bstart", v, data)
            })
    }

    /// Decompresses the whole chunk into `dst` on `runtime`, blocks on up to `nthreads`
    /// threads (0 = the runtime's default); returns `nbytes`.
    ///
    /// # Errors
    /// As [`decompress`](super::decompress).
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
            let mut scratch = crate::chunk::scratch::take();
            for nblock in 0..h.nblocks() {
                self.decode_block_at(nblock, dst, &mut scratch)?;
            }
            return Ok(nbytes);
        }
        let bs = h.blocksize;
        let init = crate::chunk::scratch::take;
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
    pub(super) fn has_blocks(&self) -> bool {
        let h = &self.header;
        h.special == SpecialType::None && !h.memcpyed() && h.nbytes > 0
    }

    /// True for a chunk of blocks of streams (not special, memcpyed, empty or VL-blocks).
    pub(super) fn regular(&self) -> bool {
        self.has_blocks() && !self.header.vl_blocks()
    }

    /// The bytes of block `nblock` in the decompressed chunk (regular chunks).
    pub(super) fn block_range(&self, nblock: usize) -> std::ops::Range<usize> {
        let (bs, n) = (self.header.blocksize, self.header.nbytes);
        let start = nblock * bs;
        start..(start + bs).min(n)
    }

    /// Copies items `[start, start + nitems)` into `dst`, the blocks on up to `nthreads`
    /// threads of `runtime` (0 = its default); see [`getitem`](super::getitem).
    ///
    /// # Errors
    /// As [`getitem`](super::getitem).
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
            .ok_or(Error::InvalidRange {
                what: "items",
                start: start as u64,
                end: start.saturating_add(nitems) as u64,
                len: (h.nbytes / ts) as u64,
            })?;
        self.decompress_range_on(runtime, nthreads, range.0..range.1, dst)
    }

    /// Copies bytes `range` of the decompressed chunk into `dst`, decompressing only the
    /// blocks that hold them (and block 0 when the chunk uses delta); returns the bytes
    /// written. This is [`getitem`](super::getitem) in bytes: it also reaches a tail shorter than an item.
    ///
    /// Only the `bstarts` entries and streams of those blocks are read, so `src` may be a
    /// partial image of the chunk in which the other blocks' bytes are absent (the frame
    /// layer's lazy chunks).
    ///
    /// # Errors
    /// [`Error::InvalidRange`] if `range` is not inside `0..nbytes`;
    /// [`Error::DestinationTooSmall`] if `dst` is shorter than the range; otherwise as
    /// [`decompress`](super::decompress).
    pub fn decompress_range_on(
        &self,
        runtime: &Runtime,
        nthreads: usize,
        range: std::ops::Range<usize>,
        dst: &mut [u8],
    ) -> Result<usize> {
        let h = &self.header;
        Error::check_range("bytes", &range, h.nbytes)?;
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
            self.decode_block(0, &mut b, &[], &mut crate::chunk::scratch::take())?;
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
        let init = || (crate::chunk::scratch::take(), Vec::new());
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

    /// True when the chunk's filters include delta.
    fn uses_delta(&self) -> bool {
        self.filters.iter().any(|(f, _)| f.id() == FilterId::DELTA)
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
    /// [`Error::Mismatch`] if `block0` is not `blocksize` bytes; otherwise as [`decompress`](super::decompress).
    pub fn decompress_block(
        &self,
        nblock: usize,
        dst: &mut [u8],
        block0: Option<&[u8]>,
    ) -> Result<usize> {
        let h = &self.header;
        if nblock >= h.nblocks() {
            return Err(Error::index("block", nblock, h.nblocks()));
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
            let mut scratch = crate::chunk::scratch::take();
            let mut own;
            let block0 = match block0 {
                _ if nblock == 0 || !self.uses_delta() => &[][..],
                Some(b) if b.len() == h.blocksize => b,
                Some(b) => {
                    return Err(Error::mismatch(
                        "bytes of block 0 given (the blocksize)",
                        h.blocksize,
                        b.len(),
                    ))
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
        if !self.regular() || f.id() != FilterId::SHUFFLE {
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
    /// [`Error::Unsupported`] for a chunk without [`Decoder::shuffle_planes`];
    /// [`Error::InvalidIndex`] if there is no block `nblock`; [`Error::DestinationTooSmall`];
    /// otherwise as [`decompress`](super::decompress).
    pub fn decompress_block_planes(&self, nblock: usize, dst: &mut [u8]) -> Result<usize> {
        if self.shuffle_planes().is_none() {
            return Err(Error::Unsupported {
                what: "byte planes need a regular chunk whose only filter is shuffle",
            });
        }
        let h = &self.header;
        if nblock >= h.nblocks() {
            return Err(Error::index("block", nblock, h.nblocks()));
        }
        let len = self.block_range(nblock).len();
        if dst.len() < len {
            return Err(Error::DestinationTooSmall {
                needed: len,
                available: dst.len(),
            });
        }
        let codec = self.codec.as_deref().ok_or(NO_CODEC)?;
        self.check_framing(nblock..nblock + 1)?;
        self.decode_streams(codec, nblock, &mut dst[..len])?;
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{chunk, cparams, items};
    use super::*;
    use crate::chunk::{compress_vec, special_chunk, CParams};
    use crate::format::chunk::SpecialType;

    fn decoder(c: &[u8]) -> Result<Decoder<'_>> {
        Decoder::new(&Registry::global(), c)
    }

    #[test]
    fn new_refuses_what_cannot_be_decoded() {
        let c = chunk(&items(0, 4096), 4096, false);
        for (flag, what) in [
            (B2FLAG_INSTR_CODEC, "instrumentation"),
            (B2FLAG_LAZY, "lazy"),
        ] {
            let mut bad = c.clone();
            bad[31] |= flag;
            let e = decoder(&bad).unwrap_err();
            assert!(e.to_string().contains(what), "{e}");
        }
        // The header says 36 bytes: the bstarts of 4 blocks need 48.
        let mut cut = c[..36].to_vec();
        cut[12..16].copy_from_slice(&36i32.to_le_bytes());
        let e = decoder(&cut).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Truncated {
                    what: "bstarts",
                    ..
                }
            ),
            "{e}"
        );
        // A chunk of no bytes (not memcpyed) that carries some.
        let mut empty = compress_vec(&cparams(0, false), &[]).unwrap();
        empty[2] &= !crate::format::chunk::FLAG_MEMCPYED;
        assert_eq!(decoder(&empty).unwrap().header.nbytes, 0);
        empty.push(0);
        let n = empty.len() as i32;
        empty[12..16].copy_from_slice(&n.to_le_bytes());
        let e = decoder(&empty).unwrap_err();
        assert_eq!(
            e,
            Error::header("cbytes of an empty chunk", n, Expected::Exactly(32))
        );
        let cp = CParams {
            typesize: 2,
            ..CParams::default()
        };
        let mut nan = special_chunk(&cp, SpecialType::Zero, 8, None).unwrap();
        nan[31] = (nan[31] & !0x70) | (SpecialType::Nan as u8) << 4;
        let e = decoder(&nan).unwrap_err();
        assert!(
            matches!(
                e,
                Error::RunLength {
                    what: "typesize of a NaN chunk",
                    value: 2,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn special_chunks_fill_by_position() {
        let rt = Runtime::global();
        let cp = cparams(0, false);
        let value = special_chunk(&cp, SpecialType::Value, 16, Some(&[1, 2, 3, 4])).unwrap();
        let d = decoder(&value).unwrap();
        let mut out = [0u8; 6];
        assert_eq!(d.decompress_range_on(&rt, 1, 1..7, &mut out).unwrap(), 6);
        assert_eq!(out, [2, 3, 4, 1, 2, 3]);
        let mut block = [0u8; 16];
        assert_eq!(d.decompress_block(0, &mut block, None).unwrap(), 16);
        assert_eq!(block, [1, 2, 3, 4].repeat(4)[..]);
        let nan = special_chunk(&cp, SpecialType::Nan, 16, None).unwrap();
        let mut out = [0u8; 4];
        decoder(&nan)
            .unwrap()
            .decompress_range_on(&rt, 1, 6..10, &mut out)
            .unwrap();
        let bits = f32::NAN.to_le_bytes();
        assert_eq!(out, [bits[2], bits[3], bits[0], bits[1]]);
        let e = d
            .decompress_range_on(&rt, 1, 10..17, &mut [0; 7])
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidRange {
                    what: "bytes",
                    start: 10,
                    end: 17,
                    len: 16
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn one_block_alone() {
        let data = items(0, 8 * 1024);
        let c = chunk(&data, 4096, true);
        let d = decoder(&c).unwrap();
        assert!(d.needs_block0());
        let mut block = vec![0u8; 4096];
        assert_eq!(d.decompress_block(5, &mut block, None).unwrap(), 4096);
        assert_eq!(block, data[5 * 4096..6 * 4096]);
        let block0 = data[..4096].to_vec();
        block.fill(0);
        d.decompress_block(6, &mut block, Some(&block0)).unwrap();
        assert_eq!(block, data[6 * 4096..7 * 4096]);
        let e = d
            .decompress_block(6, &mut block, Some(&block0[..100]))
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Mismatch {
                    expected: 4096,
                    found: 100,
                    ..
                }
            ),
            "{e}"
        );
        let e = d.decompress_block(8, &mut block, None).unwrap_err();
        assert_eq!(e, Error::index("block", 8, 8));
        assert_eq!(d.shuffle_planes(), None);
        let e = d.decompress_block_planes(0, &mut block).unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }), "{e}");
        let plain = chunk(&data, 4096, false);
        assert!(!decoder(&plain).unwrap().needs_block0());
    }

    #[test]
    fn a_block_in_byte_planes() {
        let data = items(1000, 1000 + 4 * 1024);
        let c = chunk(&data, 4096, false);
        let d = decoder(&c).unwrap();
        assert_eq!(d.shuffle_planes(), Some(4));
        let mut planes = vec![0u8; 4096];
        assert_eq!(d.decompress_block_planes(2, &mut planes).unwrap(), 4096);
        let block = &data[2 * 4096..3 * 4096];
        for i in 0..1024 {
            for j in 0..4 {
                assert_eq!(planes[j * 1024 + i], block[4 * i + j], "item {i} byte {j}");
            }
        }
    }
}
