//! The bytes of one HDF5 chunk under the Blosc2 filter: a whole Blosc2 contiguous frame,
//! decoded to the chunk's items and encoded from them. Safe Rust over Strata's public API;
//! the HDF5 side (buffers, error stack) is in `callbacks`.
//!
//! * **Decode** any frame: a b2nd frame (the `b2nd` or legacy `caterva` metalayer; ranks up
//!   to 16; its padded blocks cut back to the chunk) or a plain one, every inner chunk of it
//!   in order (the peers' filters stop after the first). Special chunks (zeros…) and codecs
//!   from Strata's plugin registry (ZFP) decode as anywhere in Strata. Bytes after the
//!   frame (its `frame_len`) are ignored.
//! * **Encode** a b2nd frame when the `cd_values` give the chunk's rank and the chunk holds
//!   exactly its items, a plain frame of one inner chunk otherwise; the blocks compress in
//!   parallel on Strata's runtime.
//!
//! Format: `docs/hdf5.md`; frames as C-Blosc2's `README_CFRAME_FORMAT.rst`.
#![forbid(unsafe_code)]

use super::cd::Settings;
use crate::chunk::CParams;
use crate::error::{Error, Expected, Result};
use crate::format::b2nd::{B2ndMeta, LEGACY_METALAYER, METALAYER};
use crate::format::frame::FrameHeader;
use crate::ndarray::partition::balanced;
use crate::ndarray::{ArrayParams, Location, NdArray, Slice};
use crate::schunk::{SChunk, SChunkOptions};
use crate::{CodecId, FilterId};

/// The largest chunk HDF5 stores (its chunk sizes are 32-bit).
pub const HDF5_CHUNK_LIMIT: usize = u32::MAX as usize;

/// Where a decoded chunk goes: a buffer the decoder asks for once it knows the size.
pub trait Output {
    /// A zeroed buffer of `len` bytes.
    ///
    /// # Errors
    /// [`Error::MemoryAlloc`] when it cannot be had.
    fn alloc(&mut self, len: usize) -> Result<&mut [u8]>;
}

impl Output for Vec<u8> {
    fn alloc(&mut self, len: usize) -> Result<&mut [u8]> {
        self.clear();
        crate::alloc::resize(self, len, 0)?;
        Ok(self)
    }
}

/// Decodes the frame at the start of `src` (a chunk of a dataset whose pipeline has the
/// values `cd`) into a buffer from `out`; returns the bytes decoded.
///
/// The buffer holds at least the chunk bytes the values give (`cd[3]`): a plain frame that
/// decodes to fewer (a filter before Blosc2 that shrinks data, or lying values) is followed
/// by zeros, so HDF5 never reads past it.
///
/// # Errors
/// The errors of [`Settings::from_cd`] for unusable values; [`Error::ShapeMismatch`] /
/// [`Error::Mismatch`] / [`Error::OutOfRange`] for a b2nd frame whose shape or size differ
/// from them; [`Error::InvalidHeader`], [`Error::Frame`] and the chunk
/// errors for a malformed frame; [`Error::MemoryAlloc`].
pub fn decode(cd: &[u32], src: &[u8], out: &mut impl Output) -> Result<usize> {
    let settings = Settings::from_cd(cd)?;
    let schunk = open_frame(src)?;
    if schunk.meta(METALAYER).is_some() || schunk.meta(LEGACY_METALAYER).is_some() {
        let arr = NdArray::from_schunk(schunk)?;
        if let Some(dims) = &settings.dims {
            if arr.shape() != dims.as_slice() {
                let what = "the chunk's b2nd frame (the cd_values' chunk dims)";
                return Err(Error::shapes(what, dims, arr.shape()));
            }
        }
        let n = usize::try_from(arr.nbytes()).map_err(|_| Error::MemoryAlloc(usize::MAX))?;
        if n > HDF5_CHUNK_LIMIT {
            let what = "bytes of the chunk's b2nd frame (an HDF5 chunk's most)";
            return Err(Error::range(what, n, Expected::at_most(HDF5_CHUNK_LIMIT)));
        }
        if settings.chunksize != 0 && n != settings.chunksize {
            let what = "bytes of the chunk's b2nd frame (the cd_values')";
            return Err(Error::mismatch(what, settings.chunksize, n));
        }
        let buf = out.alloc(n)?;
        arr.get_slice(&vec![Slice::FULL; arr.ndim()], buf)?;
        return Ok(n);
    }
    let n = usize::try_from(schunk.nbytes())
        .ok()
        .filter(|&n| n <= HDF5_CHUNK_LIMIT)
        .ok_or_else(|| {
            let what = "bytes of the chunk's frame (an HDF5 chunk's most)";
            Error::range(what, schunk.nbytes(), Expected::at_most(HDF5_CHUNK_LIMIT))
        })?;
    let buf = out.alloc(n.max(settings.chunksize))?;
    let mut pos = 0;
    for nchunk in 0..schunk.nchunks() {
        let dst = buf.get_mut(pos..n).ok_or_else(|| short_frame(pos, n))?;
        pos += schunk.decompress_chunk(nchunk, dst)?;
    }
    if pos != n {
        return Err(short_frame(pos, n));
    }
    Ok(n)
}

/// The frame's chunks hold `pos` bytes (so far), its header says `n`.
fn short_frame(pos: usize, n: usize) -> Error {
    Error::header(
        "bytes of the frame's chunks (its nbytes)",
        pos,
        Expected::exactly(n),
    )
}

/// The frame at the start of `src`, up to its `frame_len` (bytes after it are ignored).
///
/// # Errors
/// [`Error::InvalidHeader`] / [`Error::Frame`] for a malformed frame, [`Error::Truncated`]
/// when `src` ends before `frame_len`.
pub fn open_frame(src: &[u8]) -> Result<SChunk> {
    let header = FrameHeader::parse_fixed(src)?;
    let len = usize::try_from(header.frame_len)
        .ok()
        .filter(|&l| l <= src.len())
        .ok_or(Error::Truncated {
            what: "Blosc2 frame",
            needed: usize::try_from(header.frame_len).unwrap_or(usize::MAX),
            available: src.len(),
        })?;
    SChunk::from_cframe(src[..len].to_vec())
}

/// Encodes the chunk `src` of a dataset whose pipeline has the values `cd` as one frame.
///
/// # Errors
/// The errors of [`Settings::from_cd`] for unusable values; [`Error::OutOfRange`] for a
/// chunk past Blosc2's sizes; [`Error::UnknownCodec`] / [`Error::UnknownFilter`] for IDs Strata does
/// not know (plugins are looked up in its registry first).
pub fn encode(cd: &[u32], src: &[u8]) -> Result<Vec<u8>> {
    encode_with(&Settings::from_cd(cd)?, src, None, 0)
}

/// [`encode`] from parsed values, with the b2nd frame's `blockshape` given (`None`: from the
/// values' blocksize, else Strata's default for the chunk) and its blocks compressed on up to
/// `nthreads` threads (0: the runtime's default).
///
/// # Errors
/// As [`encode`]; the errors of [`ArrayParams`] for a blockshape that does not fit the chunk.
pub fn encode_with(
    s: &Settings,
    src: &[u8],
    blockshape: Option<&[usize]>,
    nthreads: usize,
) -> Result<Vec<u8>> {
    let mut cparams = CParams {
        codec: CodecId(s.codec),
        clevel: s.clevel,
        typesize: s.typesize,
        blocksize: s.blocksize,
        nthreads,
        ..CParams::default()
    };
    cparams.filters[5] = FilterId(s.filter);
    if let Some(dims) = s.b2nd_dims(src.len()) {
        if let Some(&d) = dims.iter().find(|&&d| i32::try_from(d).is_err()) {
            return Err(Error::range("chunk dim", d, Expected::at_most(i32::MAX)));
        }
        let mut params = ArrayParams::new(dims, s.typesize)
            .with_chunkshape(dims)
            .with_dtype(&format!("|V{}", s.typesize))
            .with_cparams(&cparams);
        let block = match blockshape {
            Some(b) => Some(b.to_vec()),
            None if s.blocksize != 0 => Some(balanced(s.blocksize / s.typesize, dims)),
            None => None,
        };
        if let Some(block) = block {
            params = params.with_blockshape(&block);
        }
        return NdArray::from_buffer(&params, &Location::Memory, src)?.to_cframe();
    }
    let mut schunk = SChunk::new(
        &SChunkOptions::default()
            .with_cparams(cparams)
            .with_chunksize(src.len()),
    )?;
    if !src.is_empty() {
        schunk.append_buffer(src)?;
    }
    schunk.to_cframe()
}

/// A b2nd frame holding one chunk of an array, as stored: `chunk` is a Blosc2 chunk of the
/// extended chunk `meta` describes (`shape` = `chunkshape` = the HDF5 chunk dims), compressed
/// with `cparams`. No byte of it is recompressed.
///
/// # Errors
/// [`Error::ChunkSize`] when the chunk does not hold `meta`'s extended chunk; frame errors.
pub fn frame_of_chunk(meta: &B2ndMeta, cparams: &CParams, chunk: &[u8]) -> Result<Vec<u8>> {
    let mut schunk = SChunk::new(&SChunkOptions {
        cparams: cparams.clone(),
        metalayers: vec![(METALAYER.to_string(), meta.to_bytes())],
        ..SChunkOptions::default()
    })?;
    schunk.append_chunk(chunk)?;
    schunk.to_cframe()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::chunk::SpecialType;

    fn f32s(n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| (i as f32 / 8.0).to_le_bytes())
            .collect()
    }

    fn decode_vec(cd: &[u32], src: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let n = decode(cd, src, &mut out)?;
        out.truncate(n);
        Ok(out)
    }

    #[test]
    fn b2nd_chunks_round_trip_and_carry_the_chunk_shape() {
        let cd = [1, 0, 4, 4 * 50 * 60, 5, 1, 5, 2, 50, 60];
        let data = f32s(50 * 60);
        let frame = encode(&cd, &data).unwrap();
        assert!(frame.len() < data.len() / 2);
        let arr = NdArray::from_cframe(frame.clone()).unwrap();
        assert_eq!(arr.shape(), [50, 60]);
        assert_eq!(arr.chunkshape(), [50, 60]);
        assert_eq!(arr.dtype(), Some("|V4"));
        assert_eq!(arr.cparams().codec, CodecId::ZSTD);
        assert_eq!(decode_vec(&cd, &frame).unwrap(), data);
    }

    #[test]
    fn a_blocksize_in_the_values_sets_the_blockshape() {
        let cd = [1, 4 * 100, 4, 4 * 50 * 60, 5, 1, 0, 2, 50, 60];
        let frame = encode(&cd, &f32s(3000)).unwrap();
        let arr = NdArray::from_cframe(frame).unwrap();
        assert_eq!(arr.blockshape(), [10, 10]);
    }

    #[test]
    fn plain_chunks_round_trip_with_the_given_blocksize() {
        let cd = [1, 800, 8, 8000, 5, 2, 1];
        let data: Vec<u8> = (0..1000u64).flat_map(|i| (i * 7).to_le_bytes()).collect();
        let frame = encode(&cd, &data).unwrap();
        let s = SChunk::from_cframe(frame.clone()).unwrap();
        assert_eq!(s.nchunks(), 1);
        assert!(s.meta_names().is_empty());
        assert_eq!(s.chunk_header(0).unwrap().blocksize, 800);
        assert_eq!(decode_vec(&cd, &frame).unwrap(), data);
    }

    #[test]
    fn a_chunk_longer_than_its_items_keeps_every_byte_in_a_plain_frame() {
        // Fletcher32 before Blosc2 hands the filter the chunk and 4 checksum bytes.
        let cd = [1, 0, 4, 4 * 50 * 60, 5, 1, 0, 2, 50, 60];
        let mut data = f32s(3000);
        data.extend_from_slice(&[1, 2, 3, 4]);
        let frame = encode(&cd, &data).unwrap();
        assert!(SChunk::from_cframe(frame.clone())
            .unwrap()
            .meta_names()
            .is_empty());
        assert_eq!(decode_vec(&cd, &frame).unwrap(), data);
    }

    #[test]
    fn rank_10_values_give_rank_10_b2nd_frames() {
        let mut cd = vec![1, 0, 2, 2048, 5, 1, 0, 10];
        cd.extend([2; 10]);
        let data: Vec<u8> = (0..1024u16).flat_map(|i| i.to_le_bytes()).collect();
        let frame = encode(&cd, &data).unwrap();
        assert_eq!(NdArray::from_cframe(frame.clone()).unwrap().ndim(), 10);
        assert_eq!(decode_vec(&cd, &frame).unwrap(), data);
    }

    #[test]
    fn frames_of_several_chunks_decode_whole() {
        let cparams = CParams {
            typesize: 4,
            ..CParams::default()
        };
        let mut s = SChunk::new(&SChunkOptions {
            cparams,
            ..SChunkOptions::default()
        })
        .unwrap();
        let data = f32s(3000);
        for part in data.chunks(4000) {
            s.append_buffer(part).unwrap();
        }
        assert_eq!(s.nchunks(), 3);
        let frame = s.to_cframe().unwrap();
        assert_eq!(
            decode_vec(&[1, 0, 4, 12000, 5, 1, 0], &frame).unwrap(),
            data
        );
    }

    #[test]
    fn zero_chunks_and_trailing_bytes_decode() {
        let cparams = CParams {
            typesize: 4,
            ..CParams::default()
        };
        let mut s = SChunk::new(&SChunkOptions {
            cparams,
            ..SChunkOptions::default()
        })
        .unwrap();
        s.fill_special(100, SpecialType::Zero, 400).unwrap();
        let mut frame = s.to_cframe().unwrap();
        frame.extend_from_slice(&[9, 9, 9, 9]); // a Fletcher32 checksum after the frame
        assert_eq!(decode_vec(&[1, 0, 4, 400], &frame).unwrap(), vec![0; 400]);
    }

    #[test]
    fn a_short_plain_frame_is_padded_to_the_chunk_bytes() {
        let frame = encode(&[1, 0, 4, 400, 5, 1, 0], &f32s(50)).unwrap();
        let mut out = Vec::new();
        assert_eq!(
            decode(&[1, 0, 4, 400, 5, 1, 0], &frame, &mut out).unwrap(),
            200
        );
        assert_eq!(out.len(), 400);
        assert_eq!(out[..200], f32s(50)[..]);
        assert_eq!(out[200..], [0; 200]);
    }

    #[test]
    fn lying_values_and_broken_frames_are_errors() {
        let cd = [1, 0, 4, 12000, 5, 1, 0, 2, 50, 60];
        let frame = encode(&cd, &f32s(3000)).unwrap();
        for (cd, expected) in [
            (&[1, 0, 4, 12000, 5, 1, 0, 2, 60, 50][..], vec![60, 50]),
            (&[1, 0, 4, 12000, 5, 1, 0, 3, 50, 60, 1], vec![50, 60, 1]),
        ] {
            let e = decode_vec(cd, &frame).unwrap_err();
            let what = "the chunk's b2nd frame (the cd_values' chunk dims)";
            let found = vec![50, 60];
            assert_eq!(
                e,
                Error::ShapeMismatch {
                    what,
                    expected,
                    found
                },
                "{cd:?}"
            );
        }
        let e = decode_vec(&[1, 0, 4, 24000, 5, 1, 0], &frame).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Mismatch {
                    expected: 24000,
                    found: 12000,
                    ..
                }
            ),
            "{e}"
        );
        for len in [0, 10, 86, 200, frame.len() - 1] {
            assert!(
                decode_vec(&cd, &frame[..len]).is_err(),
                "truncated at {len}"
            );
        }
        let mut decoded_or_failed = 0;
        for i in 0..frame.len() {
            let mut bad = frame.clone();
            bad[i] ^= 0x5a;
            // Any outcome but a panic; a flip in data bytes may still decode.
            decoded_or_failed += usize::from(decode_vec(&cd, &bad).is_err());
        }
        assert!(
            decoded_or_failed > frame.len() / 10,
            "{decoded_or_failed} failures"
        );
    }

    #[test]
    fn unknown_codecs_fail_to_encode() {
        let e = encode(&[1, 0, 4, 400, 5, 1, 250], &f32s(100)).unwrap_err();
        assert!(e.to_string().starts_with("unknown codec ID 250"), "{e}");
    }

    /// Zeros that end in part of an item (4000 bytes of 7-byte items) become a special chunk
    /// in the frame, which reads back (a fuzzer find).
    #[test]
    fn zeros_ending_in_part_of_an_item_round_trip() {
        let cd = [1, 0, 7, 4000, 9, 1, 0];
        let zeros = vec![0u8; 4000];
        let frame = encode(&cd, &zeros).unwrap();
        assert!(frame.len() < 200, "{} bytes", frame.len());
        assert_eq!(decode_vec(&cd, &frame).unwrap(), zeros);
    }
}
