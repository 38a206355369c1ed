//! One block decoded: its streams (`typesize` of them when the block was split, see
//! `splits`), each zeros, a run of one byte, raw bytes or a codec payload, then its filters
//! undone backwards; the framing checks that run before anything is decoded; and the blocks of
//! C-Blosc2 3.x VL-block chunks (`int32` size and one codec payload each).

use super::decoder::{Decoder, NO_CODEC};
use super::read_i32;
use super::splits::nstreams;
use crate::alloc::zeroed;
use crate::block::BlockContext;
use crate::codecs::Codec;
use crate::error::{Error, Expected, Result};
use crate::filters::Filter;
use crate::format::ids::FilterId;
use std::sync::Arc;

impl<'a> Decoder<'a> {
    /// Decodes block `nblock` into its place in `chunk`, which holds the decompressed chunk
    /// at least up to the end of that block, block 0 already decoded (delta refers to it).
    pub(super) fn decode_block_at(
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
    pub(super) fn check_framing(&self, nblocks: std::ops::Range<usize>) -> Result<()> {
        let h = &self.header;
        if !self.has_blocks() {
            return Ok(());
        }
        if h.vl_blocks() {
            return self.vl_framing().map(|_| ());
        }
        for nblock in nblocks {
            let len = self.block_range(nblock).len();
            let ns = nstreams(&self.header, len);
            let mut pos = self.bstart(nblock)?;
            for _ in 0..ns {
                pos = self.stream_at(pos, len / ns)?.1;
            }
        }
        Ok(())
    }

    /// Asks the codec to decode only the bytes `[from, from + out.len())` of block `nblock`
    /// (`blen` bytes) into `out` ([`Codec::decompress_items`]); false when that does not apply
    /// (filters to undo, split streams, a stream that is not a codec payload, unaligned
    /// items) or the codec declines, and the whole block must be decoded.
    pub(super) fn decode_items(
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
            .any(|(f, _)| f.id() != FilterId::TRUNC_PREC);
        if undo
            || nstreams(&self.header, blen) != 1
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
        let ctx = self.codec_ctx(nblock);
        match codec.decompress_items(payload, out, from / ts, &ctx)? {
            None => Ok(false),
            Some(n) if n == out.len() => Ok(true),
            Some(n) => Err(Error::at(
                "block",
                nblock,
                Error::decoded("items", out.len(), n),
            )),
        }
    }

    /// What the codec is told when it decodes a stream of block `nblock` of a regular chunk.
    fn codec_ctx(&self, nblock: usize) -> BlockContext<'_> {
        BlockContext {
            clevel: 0,
            meta: self.header.compcode_meta,
            typesize: self.header.typesize,
            blocksize: self.header.blocksize,
            nblock,
            offset: nblock * self.header.blocksize,
            dict: self.dict,
            nd: self.nd.as_deref(),
            ..BlockContext::default()
        }
    }

    /// Decodes only the first `nitems` items of block `nblock` (items of `typesize` bytes,
    /// C order in the block) into `dst[..nitems * typesize]`, each stream's codec stopped
    /// where those items end ([`Codec::decompress_prefix`]), for a reader that picks nothing
    /// past them. Two kinds of block can be cut so:
    /// * a block without filters (trunc_prec aside): `dst` gets its first bytes;
    /// * a block whose only filter is shuffle over the typesize, split into one stream per
    ///   byte of the item (stream `j` holds byte `j` of every item): a prefix of the items is
    ///   a prefix of every stream. With `planes`, `dst` gets them in byte planes of `nitems`
    ///   bytes (byte `j` of item `i` at `j * nitems + i`, the layout of
    ///   [`Decoder::decompress_block_planes`] for a block of `nitems` items); without, the
    ///   items unshuffled.
    ///
    /// Returns `Some(true)` when `dst` holds byte planes, `Some(false)` when it holds the
    /// items; `None` when the block cannot be cut (another kind of block or chunk, `nitems`
    /// not fewer than the block's items, a codec that declines), and nothing useful was
    /// written: the caller decodes the whole block. Only the decoded part of each stream is
    /// checked.
    ///
    /// # Errors
    /// [`Error::InvalidIndex`] if there is no block `nblock`; [`Error::DestinationTooSmall`];
    /// otherwise as [`decompress`](super::decompress).
    pub fn decompress_block_prefix(
        &self,
        nblock: usize,
        nitems: usize,
        planes: bool,
        dst: &mut [u8],
    ) -> Result<Option<bool>> {
        let h = &self.header;
        if !self.regular() {
            return Ok(None);
        }
        if nblock >= h.nblocks() {
            return Err(Error::index("block", nblock, h.nblocks()));
        }
        let ts = h.typesize;
        let len = self.block_range(nblock).len();
        let Some(want) = nitems.checked_mul(ts).filter(|&w| w < len) else {
            return Ok(None);
        };
        if dst.len() < want {
            return Err(Error::DestinationTooSmall {
                needed: want,
                available: dst.len(),
            });
        }
        let ns = nstreams(h, len);
        let plain = self
            .filters
            .iter()
            .all(|(f, _)| f.id() == FilterId::TRUNC_PREC);
        let shuffled = !plain && ns == ts && self.shuffle_planes() == Some(ts);
        if !plain && !shuffled {
            return Ok(None);
        }
        let codec = self.codec.as_deref().ok_or(NO_CODEC)?;
        self.check_framing(nblock..nblock + 1)?;
        if want == 0 {
            return Ok(Some(shuffled && planes));
        }
        let neblock = len / ns;
        let ctx = self.codec_ctx(nblock);
        let mut scratch = (shuffled && !planes).then(crate::chunk::scratch::take);
        let out: &mut [u8] = match scratch.as_mut() {
            Some(bufs) => {
                bufs[0].resize(want, 0);
                &mut bufs[0][..want]
            }
            None => &mut dst[..want],
        };
        let mut pos = self.bstart(nblock)?;
        for k in 0..ns {
            // The part of stream `k` needed: `nitems` bytes of every byte plane, or the
            // bytes of a plain block up to `want`.
            let (at, take) = if shuffled {
                (k * nitems, nitems)
            } else if k * neblock < want {
                (k * neblock, neblock.min(want - k * neblock))
            } else {
                break;
            };
            let piece = &mut out[at..at + take];
            let (record, next) = self.stream_at(pos, neblock)?;
            pos = next;
            match record {
                Stream::Zeros => piece.fill(0),
                Stream::Run(value) => piece.fill(value),
                Stream::Raw(payload) => piece.copy_from_slice(&payload[..take]),
                Stream::Codec(payload) => {
                    let n = if take == neblock {
                        codec.decompress(payload, piece, &ctx)?
                    } else {
                        match codec.decompress_prefix(payload, piece, &ctx)? {
                            Some(n) => n,
                            None => return Ok(None),
                        }
                    };
                    if n != take {
                        let stream = Error::decoded("the start of a stream", take, n);
                        return Err(Error::at("block", nblock, stream));
                    }
                }
            }
        }
        if let Some(bufs) = &scratch {
            // Byte planes of `nitems` bytes are the shuffled bytes of a block of `nitems`
            // items: shuffle's backward pass on them gives the items.
            let (filter, meta) = &self.filters[0];
            let ctx = BlockContext {
                typesize: ts,
                meta: *meta,
                nblock,
                offset: nblock * h.blocksize,
                version: h.version,
                nd: self.nd.as_deref(),
                ..BlockContext::default()
            };
            filter.backward(&bufs[0][..want], &mut dst[..want], &ctx)?;
        }
        Ok(Some(shuffled && planes))
    }

    /// Decodes block `nblock` into `out` (its exact length). `block0` is the decoded block 0
    /// (needed by delta for the other blocks).
    pub(super) fn decode_block(
        &self,
        nblock: usize,
        out: &mut [u8],
        block0: &[u8],
        scratch: &mut [Vec<u8>; 2],
    ) -> Result<()> {
        let len = out.len();
        let codec = self.codec.as_deref().ok_or(NO_CODEC)?;
        // Filters that undo something (trunc_prec is lossy: nothing to undo).
        let active: Vec<&(Arc<dyn Filter>, u8)> = self
            .filters
            .iter()
            .filter(|(f, _)| f.id() != FilterId::TRUNC_PREC)
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
            let ctx = BlockContext {
                typesize: self.header.typesize,
                meta: *meta,
                nblock,
                offset: nblock * self.header.blocksize,
                version: self.header.version,
                dref: block0,
                nd: self.nd.as_deref(),
                ..BlockContext::default()
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
                Ok(_) => Err(Error::RunLength {
                    what: "token of a stream run",
                    value: token.into(),
                    expected: Expected::OneOf("odd (the run bit set)"),
                }),
                Err(_) => Err(Error::RunLength {
                    what: "size of a stream run",
                    value: csize.into(),
                    expected: Expected::range(-255, -1),
                }),
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
    pub(super) fn decode_streams(
        &self,
        codec: &dyn Codec,
        nblock: usize,
        out: &mut [u8],
    ) -> Result<()> {
        let mut pos = self.bstart(nblock)?;
        let ns = nstreams(&self.header, out.len());
        let neblock = out.len() / ns;
        let ctx = self.codec_ctx(nblock);
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
                        let stream = Error::decoded("a stream", neblock, n);
                        return Err(Error::at("block", nblock, stream));
                    }
                }
            }
        }
        Ok(())
    }

    /// VL-block chunks: each block's decoded size and codec payload, checked to lie inside
    /// the chunk and to add up to `nbytes`.
    pub(super) fn vl_framing(&self) -> Result<Vec<(usize, &'a [u8])>> {
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
                    let rest = Expected::AtMost((nbytes - at) as i64);
                    let size = Error::header("size (the chunk's nbytes left)", size, rest);
                    Error::at("VL block", nblock, size)
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
            return Err(Error::decoded("VL blocks", nbytes, at));
        }
        Ok(blocks)
    }

    /// Decodes VL block `nblock` (codec payload `payload`, at byte `at` of the chunk) into
    /// `out`, its exact decoded size.
    pub(super) fn decode_vl_block(
        &self,
        nblock: usize,
        payload: &[u8],
        at: usize,
        out: &mut [u8],
    ) -> Result<()> {
        let codec = self.codec.as_deref().ok_or(NO_CODEC)?;
        let size = out.len();
        let ctx = BlockContext {
            clevel: 0,
            meta: self.header.compcode_meta,
            typesize: self.header.typesize,
            blocksize: size,
            nblock,
            offset: at,
            dict: self.dict,
            nd: self.nd.as_deref(),
            ..BlockContext::default()
        };
        let n = codec.decompress(payload, out, &ctx)?;
        if n != size {
            let decoded = Error::decoded("its stream", size, n);
            return Err(Error::at("VL block", nblock, decoded));
        }
        let mut scratch = Vec::new();
        for (filter, meta) in self.filters.iter().rev() {
            if filter.id() == FilterId::TRUNC_PREC {
                continue;
            }
            if scratch.is_empty() {
                scratch = zeroed(size)?;
            }
            let ctx = BlockContext {
                typesize: self.header.typesize,
                meta: *meta,
                nblock,
                offset: at,
                version: self.header.version,
                dref: &[],
                nd: self.nd.as_deref(),
                ..BlockContext::default()
            };
            scratch.copy_from_slice(out);
            filter.backward(&scratch, out, &ctx)?;
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::chunk::FLAG_DONT_SPLIT;
    use crate::registry::Registry;
    use crate::scheduler::Runtime;

    /// An LZ4 block of `data` (what Strata's LZ4 codec decodes).
    fn lz4(data: &[u8]) -> Vec<u8> {
        lz4::block::compress(data, None, false).unwrap()
    }

    /// A chunk of version `version`, typesize 1, no filters, unsplit, LZ4, whose blocks are
    /// `blocks` (each block's bytes after its `bstarts` entry).
    fn chunk(version: u8, nbytes: usize, blocksize: usize, blocks: &[Vec<u8>]) -> Vec<u8> {
        let mut c = vec![0u8; 32];
        c[0] = version;
        c[1] = 1;
        c[2] = 0x05 | FLAG_DONT_SPLIT | (1 << 5);
        c[3] = 1;
        c[4..8].copy_from_slice(&(nbytes as i32).to_le_bytes());
        c[8..12].copy_from_slice(&(blocksize as i32).to_le_bytes());
        c[22] = 1;
        c[30] = u8::from(version == 6);
        let mut at = 32 + 4 * blocks.len();
        for b in blocks {
            c.extend_from_slice(&(at as i32).to_le_bytes());
            at += b.len();
        }
        for b in blocks {
            c.extend_from_slice(b);
        }
        let cbytes = c.len() as i32;
        c[12..16].copy_from_slice(&cbytes.to_le_bytes());
        c
    }

    fn record(csize: i32, rest: &[u8]) -> Vec<u8> {
        [&csize.to_le_bytes()[..], rest].concat()
    }

    fn decode(c: &[u8]) -> Result<Vec<u8>> {
        crate::chunk::decompress_vec(c)
    }

    #[test]
    fn stream_records_decode_as_written() {
        let raw: Vec<u8> = (0..64).collect();
        let text = b"strata strata strata strata strata strata strata strata strata s";
        let payload = lz4(text);
        assert!(payload.len() < 64);
        let blocks = [
            record(0, &[]),
            record(-7, &[0x01]),
            record(64, &raw),
            record(payload.len() as i32, &payload),
        ];
        let c = chunk(5, 256, 64, &blocks);
        let want = [vec![0; 64], vec![7; 64], raw.clone(), text.to_vec()].concat();
        assert_eq!(decode(&c).unwrap(), want);
        let d = Decoder::new(&Registry::global(), &c).unwrap();
        let mut block = [0u8; 64];
        d.decompress_block(1, &mut block, None).unwrap();
        assert_eq!(block, [7; 64]);

        // A run without the run bit in its token.
        let bad = chunk(
            5,
            256,
            64,
            &[
                blocks[0].clone(),
                record(-7, &[0]),
                blocks[2].clone(),
                blocks[3].clone(),
            ],
        );
        let e = decode(&bad).unwrap_err();
        assert!(
            matches!(
                e,
                Error::RunLength {
                    what: "token of a stream run",
                    value: 0,
                    ..
                }
            ),
            "{e}"
        );
        // A payload that decodes to half its stream.
        let half = lz4(&text[..32]);
        let bad = chunk(
            5,
            256,
            64,
            &[
                blocks[0].clone(),
                blocks[1].clone(),
                blocks[2].clone(),
                record(half.len() as i32, &half),
            ],
        );
        assert!(decode(&bad).is_err());
        // The last payload cut short: the blocks before it still read, by range.
        let mut cut = c[..c.len() - 5].to_vec();
        let n = cut.len() as i32;
        cut[12..16].copy_from_slice(&n.to_le_bytes());
        let e = decode(&cut).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Truncated {
                    what: "block stream",
                    ..
                }
            ),
            "{e}"
        );
        let d = Decoder::new(&Registry::global(), &cut).unwrap();
        let mut out = [0u8; 90];
        d.decompress_range_on(&Runtime::global(), 1, 100..190, &mut out)
            .unwrap();
        assert_eq!(out[..], want[100..190]);
    }

    /// `n` items of `ts` bytes that compress but are no run: a slow ramp with a little
    /// pseudo-random noise in the low byte.
    fn ramp(n: usize, ts: usize) -> Vec<u8> {
        let mut x = 0x9e37_79b9_u32;
        (0..n)
            .flat_map(|i| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                let noise = if i % 7 == 0 { u64::from(x % 4) } else { 0 };
                let v = (i as u64 / 64) ^ noise;
                v.to_le_bytes()
                    .into_iter()
                    .cycle()
                    .take(ts)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn a_block_prefix_decodes_as_the_whole_block_starts() {
        use crate::chunk::{compress_vec, CParams, SplitMode};
        use crate::format::ids::CodecId;
        let codecs = [
            CodecId::BLOSCLZ,
            CodecId::LZ4,
            CodecId::LZ4HC,
            CodecId::ZLIB,
            CodecId::ZSTD,
        ];
        let filters = [
            FilterId::NOFILTER,
            FilterId::SHUFFLE,
            FilterId::BITSHUFFLE,
            FilterId::DELTA,
        ];
        let (nitems, bitems) = (2000, 256);
        for ts in [1usize, 2, 3, 4, 8, 13] {
            let data = ramp(nitems, ts);
            let bs = bitems * ts;
            for codec in codecs {
                for filter in filters {
                    for split in [SplitMode::Always, SplitMode::Never] {
                        let mut cp = CParams {
                            codec,
                            typesize: ts,
                            blocksize: bs,
                            splitmode: split,
                            ..CParams::default()
                        };
                        cp.filters[5] = filter;
                        let c = compress_vec(&cp, &data).unwrap();
                        let d = Decoder::new(&Registry::global(), &c).unwrap();
                        assert!(d.regular());
                        let lz4 = codec == CodecId::LZ4 || codec == CodecId::LZ4HC;
                        let plain = d.header.filters.iter().all(|&f| f == FilterId::NOFILTER);
                        // Block 2 (full) and block 7 (the short last one: 208 items).
                        for nblock in [2usize, 7] {
                            let start = nblock * bitems;
                            let items = (nitems - start).min(bitems);
                            let ns = nstreams(&d.header, items * ts);
                            let shuffled = d.shuffle_planes() == Some(ts) && ns == ts;
                            let cuttable = plain || shuffled;
                            if filter == FilterId::SHUFFLE && split == SplitMode::Always {
                                assert_eq!(shuffled, nblock == 2 || ts == 1, "{ts}");
                            }
                            for k in [0, 1, 2, items / 3, items - 1, items, items + 1] {
                                for planes in [false, true] {
                                    let what = format!(
                                        "ts {ts} codec {} filter {} streams {ns} block {nblock} \
                                         items {k} planes {planes}",
                                        codec.0, filter.0
                                    );
                                    let mut dst = vec![0xa5u8; bs];
                                    let got = d
                                        .decompress_block_prefix(nblock, k, planes, &mut dst)
                                        .unwrap();
                                    if k >= items || !cuttable {
                                        assert_eq!(got, None, "{what}");
                                        continue;
                                    }
                                    if lz4 || k == 0 {
                                        assert!(got.is_some(), "{what}");
                                    }
                                    let Some(in_planes) = got else { continue };
                                    assert_eq!(in_planes, planes && shuffled, "{what}");
                                    let want = &data[start * ts..(start + k) * ts];
                                    if in_planes {
                                        for i in 0..k {
                                            for j in 0..ts {
                                                assert_eq!(
                                                    dst[j * k + i],
                                                    want[i * ts + j],
                                                    "{what}: item {i} byte {j}"
                                                );
                                            }
                                        }
                                    } else {
                                        assert_eq!(dst[..k * ts], *want, "{what}");
                                    }
                                    assert!(dst[k * ts..].iter().all(|&b| b == 0xa5), "{what}");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_block_prefix_checks_what_it_decodes() {
        use crate::chunk::{compress_vec, CParams, SplitMode};
        use crate::format::ids::CodecId;
        let data = ramp(1024, 4);
        let mut cp = CParams {
            codec: CodecId::LZ4,
            typesize: 4,
            blocksize: 1024,
            splitmode: SplitMode::Always,
            ..CParams::default()
        };
        cp.filters[5] = FilterId::SHUFFLE;
        let c = compress_vec(&cp, &data).unwrap();
        let d = Decoder::new(&Registry::global(), &c).unwrap();
        let mut dst = vec![0u8; 1024];
        let e = d
            .decompress_block_prefix(4, 10, true, &mut dst)
            .unwrap_err();
        assert_eq!(e, Error::index("block", 4, 4));
        let e = d
            .decompress_block_prefix(1, 10, true, &mut dst[..39])
            .unwrap_err();
        assert_eq!(
            e,
            Error::DestinationTooSmall {
                needed: 40,
                available: 39
            }
        );
        // The first stream of block 1 turned into garbage: 0xff tokens ask for literals past
        // its end.
        let at = d.bstart(1).unwrap();
        let csize = read_i32(&c, at, "x").unwrap() as usize;
        assert!(csize < 256, "a codec payload");
        let mut bad = c.clone();
        bad[at + 4..at + 4 + csize].fill(0xff);
        let d = Decoder::new(&Registry::global(), &bad).unwrap();
        // liblz4 refuses it, or decodes fewer bytes than asked (which is refused here).
        let e = d
            .decompress_block_prefix(1, 10, true, &mut dst)
            .unwrap_err();
        assert!(
            matches!(e, Error::Codec { id: 1, ref message } if message.contains("corrupt"))
                || matches!(e, Error::At { what: "block", index: 1, ref source }
                    if matches!(**source, Error::Decoded { expected: 10, .. })),
            "{e}"
        );
        // Block 0 is intact and still reads.
        assert_eq!(
            d.decompress_block_prefix(0, 10, false, &mut dst).unwrap(),
            Some(false)
        );
        assert_eq!(dst[..40], data[..40]);
    }

    #[test]
    fn vl_blocks_decode_one_by_one() {
        let parts: Vec<Vec<u8>> = [(100, 1u8), (200, 2), (50, 3)]
            .iter()
            .map(|&(n, k)| (0..n).map(|i| (i as u8 / 10).wrapping_mul(k)).collect())
            .collect();
        let block = |p: &Vec<u8>, size: i32| record(size, &lz4(p));
        let blocks: Vec<Vec<u8>> = parts.iter().map(|p| block(p, p.len() as i32)).collect();
        let c = chunk(6, 350, 3, &blocks);
        assert_eq!(decode(&c).unwrap(), parts.concat());
        let d = Decoder::new(&Registry::global(), &c).unwrap();
        let mut out = vec![0u8; 200];
        assert_eq!(d.decompress_block(1, &mut out, None).unwrap(), 200);
        assert_eq!(out, parts[1]);
        let mut across = [0u8; 20];
        d.decompress_range_on(&Runtime::global(), 1, 90..110, &mut across)
            .unwrap();
        assert_eq!(across[..], parts.concat()[90..110]);
        // Sizes that do not add up to nbytes.
        let lie: Vec<Vec<u8>> = vec![
            block(&parts[0], 100),
            block(&parts[1], 200),
            block(&parts[2], 40),
        ];
        let e = decode(&chunk(6, 350, 3, &lie)).unwrap_err();
        assert_eq!(
            e,
            Error::Decoded {
                what: "VL blocks",
                expected: 350,
                found: 340
            }
        );
        // A block size beyond what is left of nbytes.
        let lie: Vec<Vec<u8>> = vec![block(&parts[0], 300), blocks[1].clone(), blocks[2].clone()];
        let e = decode(&chunk(6, 350, 3, &lie)).unwrap_err();
        assert!(
            matches!(e, Error::At { what: "VL block", index: 1, ref source }
                if matches!(**source, Error::InvalidHeader { value: 200, expected: Expected::AtMost(50), .. })),
            "{e}"
        );
    }
}
