//! [`H5Chunks`]: the chunks of a Blosc2 HDF5 dataset as a [`ChunkSource`], so that Strata's
//! slice engine reads them as it reads a `.b2nd` array's (feature `hdf5`).
//!
//! The array's geometry is the dataset's: its shape, its chunk dims as chunkshape, and as
//! blockshape that of its first stored chunk (a b2nd frame's, or for rank 1 a plain frame's
//! blocksize when it divides the chunk; else Strata's default for the chunk). Chunk `n`
//! (C order over the chunk grid) is then:
//!
//! * the inner chunk of its frame, as stored, when the frame is a b2nd frame of that
//!   blockshape (or a rank-1 plain frame of that blocksize): the frame is opened in the file
//!   (its header, trailer and offsets), then only the chunk header, the `bstarts` and the
//!   touched blocks are read and decompressed;
//! * a special chunk of the fill value when it is not stored;
//! * otherwise (stored raw, a plain frame at rank 2 and above, other blocks) its items decoded
//!   whole and laid out again in the array's blocks, uncompressed.
//!
//! With Fletcher32 in the pipeline each chunk's checksum is verified first.
#![forbid(unsafe_code)]

use super::chunk::{decode, open_frame};
use super::dataset::{ChunkLocation, Inner};
use super::fletcher32::verify;
use crate::chunk::{special_chunk, CParams, Context};
use crate::error::{Error, Expected, Result};
use crate::format::b2nd::{B2ndMeta, LEGACY_METALAYER, METALAYER};
use crate::format::chunk::SpecialType;
use crate::frame::{OpenMode, SyncPolicy, Traffic};
use crate::ndarray::partition::partitions;
use crate::ndarray::store::{ChunkSource, ChunkStore};
use crate::ndarray::{ArrayParams, Geometry, Location, NdArray};
use crate::schunk::{OpenOptions, SChunk};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The chunks of one dataset, read through HDF5's chunk index.
#[derive(Debug)]
pub struct H5Chunks {
    inner: Arc<Inner>,
    geom: Geometry,
    fletcher32: bool,
    /// Chunk frames opened for lazy reads (`None`: read whole), by chunk number.
    frames: Mutex<HashMap<usize, Option<Arc<SChunk>>>>,
}

/// Frames kept open at most; the map is emptied when full.
const OPEN_FRAMES: usize = 256;

impl H5Chunks {
    /// The dataset as an array over its chunks.
    pub(super) fn array(inner: Arc<Inner>, fletcher32: bool) -> Result<NdArray<H5Chunks>> {
        let chunks = inner.chunkshape.clone().unwrap_or_default();
        let blockshape = probe_blockshape(&inner, &chunks, fletcher32)?;
        let to_i64 = |v: &[usize]| v.iter().map(|&x| x as i64).collect::<Vec<_>>();
        let to_i32 = |v: &[usize]| {
            v.iter()
                .map(|&x| {
                    i32::try_from(x)
                        .map_err(|_| Error::range("chunk dim", x, Expected::at_most(i32::MAX)))
                })
                .collect::<Result<Vec<_>>>()
        };
        let dtype = format!("|V{}", inner.typesize);
        let meta = B2ndMeta::new(
            to_i64(&inner.shape),
            to_i32(&chunks)?,
            to_i32(&blockshape)?,
            &dtype,
        )?;
        let geom = Geometry::new(&meta, inner.typesize)?;
        let cparams = CParams {
            typesize: inner.typesize,
            ..CParams::default()
        };
        NdArray::from_store(
            meta,
            &cparams,
            H5Chunks {
                inner,
                geom,
                fletcher32,
                frames: Mutex::new(HashMap::new()),
            },
            Context::global(),
        )
    }

    /// The stored bytes of chunk `nchunk` without their checksum (verified), the location,
    /// and whether Blosc2 was skipped for it (stored raw).
    fn stored(&self, nchunk: usize) -> Result<Option<(ChunkLocation, Vec<u8>, bool)>> {
        let Some((loc, mut bytes)) = self.inner.stored(&self.offset_of(nchunk))? else {
            return Ok(None);
        };
        if self.fletcher32 && loc.filter_mask & 0b10 == 0 {
            verify(&bytes).map_err(|e| {
                Error::frame(self.inner.context.clone(), Error::at("chunk", nchunk, e))
            })?;
            bytes.truncate(bytes.len() - 4);
        }
        Ok(Some((loc, bytes, loc.filter_mask & 1 != 0)))
    }

    /// Whether the frame `schunk` holds one chunk laid out in the array's blocks (a b2nd
    /// frame of the chunk dims and the array's blockshape; at rank 1, also a plain frame of
    /// the array's blocksize), so that its inner chunk serves the array as it is.
    fn fits(&self, schunk: &SChunk) -> Result<bool> {
        if schunk.nchunks() != 1 {
            return Ok(false);
        }
        let h = schunk.chunk_header(0)?;
        if h.nbytes != self.geom.chunksize() {
            return Ok(false);
        }
        Ok(
            match schunk
                .meta(METALAYER)
                .or_else(|| schunk.meta(LEGACY_METALAYER))
            {
                Some(bytes) => {
                    let m = B2ndMeta::from_bytes(bytes)?;
                    let chunk: Vec<i64> =
                        self.geom.chunkshape().iter().map(|&c| c as i64).collect();
                    let block: Vec<i32> =
                        self.geom.blockshape().iter().map(|&b| b as i32).collect();
                    m.shape == chunk && m.blockshape == block
                }
                None => {
                    self.geom.ndim() == 1
                        && (h.special != SpecialType::None || h.blocksize == self.geom.blocksize())
                }
            },
        )
    }

    /// The Blosc2 chunk of `frame` when it is laid out in the array's blocks.
    fn inner_chunk(&self, frame: &[u8]) -> Result<Option<Vec<u8>>> {
        let schunk = open_frame(frame)?;
        if !self.fits(&schunk)? {
            return Ok(None);
        }
        schunk.chunk(0).map(Some)
    }

    /// Chunk `nchunk`'s frame opened in the file for lazy reads, when it is stored as a frame
    /// that fits the array and no checksum needs the whole chunk.
    fn lazy_frame(&self, nchunk: usize) -> Result<Option<Arc<SChunk>>> {
        let frames = self.frames.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(f) = frames.get(&nchunk) {
            return Ok(f.clone());
        }
        drop(frames);
        let frame = match self.inner.location(&self.offset_of(nchunk))? {
            Some(loc) if !self.fletcher32 && loc.filter_mask & 1 == 0 => {
                let io = self.inner.region(&loc);
                match SChunk::from_io(
                    Box::new(io),
                    &OpenOptions::new(OpenMode::Read).with_sync(SyncPolicy::None),
                ) {
                    Ok(schunk) if self.fits(&schunk).unwrap_or(false) => Some(Arc::new(schunk)),
                    _ => None,
                }
            }
            _ => None,
        };
        let mut frames = self.frames.lock().unwrap_or_else(PoisonError::into_inner);
        if frames.len() >= OPEN_FRAMES {
            frames.clear();
        }
        frames.insert(nchunk, frame.clone());
        Ok(frame)
    }

    /// The item offset of chunk `nchunk`.
    fn offset_of(&self, nchunk: usize) -> Vec<u64> {
        self.geom
            .chunk_coords(nchunk)
            .iter()
            .zip(self.geom.chunkshape())
            .map(|(&i, &c)| (i * c) as u64)
            .collect()
    }

    /// `items` (the chunk's items, C order, chunk dims) as an uncompressed Blosc2 chunk in
    /// the array's blocks.
    fn relayout(&self, items: &[u8]) -> Result<Vec<u8>> {
        let dims = self.geom.chunkshape();
        let cparams = CParams {
            typesize: self.geom.typesize(),
            clevel: 0,
            nthreads: 1,
            ..CParams::default()
        };
        let params = ArrayParams::new(dims, self.geom.typesize())
            .with_chunkshape(dims)
            .with_blockshape(self.geom.blockshape())
            .with_cparams(&cparams);
        NdArray::from_buffer(&params, &Location::Memory, items)?
            .schunk()
            .chunk(0)
    }

    fn items_of_frame(&self, frame: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        let n = decode(self.inner.cd_values(), frame, &mut out)?;
        let want = self.h5_chunksize();
        if n < want {
            let decoded = Error::decoded("a chunk (the dataset's chunk bytes)", want, n);
            return Err(Error::frame(self.inner.context.clone(), decoded));
        }
        out.truncate(want);
        Ok(out)
    }

    /// Bytes of one chunk in HDF5 (chunk dims × typesize).
    fn h5_chunksize(&self) -> usize {
        self.geom.chunkshape().iter().product::<usize>() * self.geom.typesize()
    }
}

/// The blockshape of the direct path: from the first stored chunk, else Strata's default for
/// the chunk dims.
fn probe_blockshape(inner: &Inner, chunks: &[usize], fletcher32: bool) -> Result<Vec<usize>> {
    let typesize = inner.typesize;
    let default = || -> Result<Vec<usize>> {
        let topology = crate::scheduler::Runtime::global();
        let (_, block) = partitions(chunks, Some(chunks), None, typesize, topology.topology())?;
        Ok(block)
    };
    let Some(first) = first_stored(inner)? else {
        return default();
    };
    let Some(mut loc) = inner.location(&first)? else {
        return default();
    };
    if loc.filter_mask & 1 != 0 {
        return default();
    }
    if fletcher32 && loc.filter_mask & 0b10 == 0 {
        let Some(frame_len) = loc.size.checked_sub(4) else {
            return default();
        };
        loc.size = frame_len;
    }
    // The frame opened in the file: its header, trailer and offsets are read, not its blocks
    // (a chunk of tens of MiB costs no more to open than a small one).
    let io = Box::new(inner.region(&loc));
    let Ok(schunk) = SChunk::from_io(
        io,
        &OpenOptions::new(OpenMode::Read).with_sync(SyncPolicy::None),
    ) else {
        return default();
    };
    if let Some(meta) = schunk
        .meta(METALAYER)
        .or_else(|| schunk.meta(LEGACY_METALAYER))
    {
        if let Ok(m) = B2ndMeta::from_bytes(meta) {
            if m.ndim() == chunks.len() && m.shape.iter().zip(chunks).all(|(&s, &c)| s == c as i64)
            {
                return Ok(m.blockshape.iter().map(|&b| b as usize).collect());
            }
        }
        return default();
    }
    if let ([n], Ok(h)) = (chunks, schunk.chunk_header(0)) {
        let per_block = h.blocksize / typesize;
        if h.blocksize % typesize == 0 && per_block > 0 && n % per_block == 0 {
            return Ok(vec![per_block]);
        }
    }
    default()
}

/// The item offset of the first stored chunk in C order, among the first 256 chunks.
fn first_stored(inner: &Inner) -> Result<Option<Vec<u64>>> {
    for offset in inner.chunk_offsets().take(256) {
        if inner.location(&offset)?.is_some() {
            return Ok(Some(offset));
        }
    }
    Ok(None)
}

impl ChunkSource for H5Chunks {
    fn nchunks(&self) -> usize {
        self.geom.nchunks()
    }

    fn chunk(&self, nchunk: usize) -> Result<Cow<'_, [u8]>> {
        if nchunk >= self.geom.nchunks() {
            return Err(Error::index("chunk", nchunk, self.geom.nchunks()));
        }
        let Some((_, bytes, raw)) = self.stored(nchunk)? else {
            let cparams = CParams {
                typesize: self.geom.typesize(),
                ..CParams::default()
            };
            let fill = &self.inner.fill;
            let chunk = if fill.iter().all(|&b| b == 0) {
                special_chunk(&cparams, SpecialType::Zero, self.geom.chunksize(), None)?
            } else {
                special_chunk(
                    &cparams,
                    SpecialType::Value,
                    self.geom.chunksize(),
                    Some(fill),
                )?
            };
            return Ok(Cow::Owned(chunk));
        };
        if raw {
            if bytes.len() < self.h5_chunksize() {
                let what = "bytes of a raw chunk (the dataset's chunk bytes)";
                let short =
                    Error::header(what, bytes.len(), Expected::exactly(self.h5_chunksize()));
                return Err(Error::frame(
                    self.inner.context.clone(),
                    Error::at("chunk", nchunk, short),
                ));
            }
            return self.relayout(&bytes[..self.h5_chunksize()]).map(Cow::Owned);
        }
        let in_place = self
            .inner_chunk(&bytes)
            .map_err(|e| e.in_frame(&self.inner.context))?;
        match in_place {
            Some(chunk) => Ok(Cow::Owned(chunk)),
            None => {
                // A frame that contradicts the dataset is the file's fault: say which chunk.
                let items = self.items_of_frame(&bytes).map_err(|e| {
                    let e = Error::at("chunk", nchunk, e);
                    if e.code() == crate::error::code::INVALID_PARAM {
                        Error::frame(self.inner.context.clone(), e)
                    } else {
                        e.in_frame(&self.inner.context)
                    }
                })?;
                self.relayout(&items).map(Cow::Owned)
            }
        }
    }

    fn chunk_blocks(&self, nchunk: usize, nblocks: &[usize], out: &mut Vec<u8>) -> Result<Traffic> {
        if nchunk >= self.geom.nchunks() {
            return Err(Error::index("chunk", nchunk, self.geom.nchunks()));
        }
        if let Some(frame) = self.lazy_frame(nchunk)? {
            return frame
                .lazy_chunk(0, nblocks, out)
                .map_err(|e| e.in_frame(&self.inner.context));
        }
        let chunk = self.chunk(nchunk)?;
        out.clear();
        out.extend_from_slice(&chunk);
        // Read through libhdf5 (and perhaps laid out again): not counted.
        Ok(Traffic::default())
    }
}

impl ChunkStore for H5Chunks {
    fn update_chunk(&mut self, _: usize, _: Vec<u8>) -> Result<()> {
        Err(read_only())
    }

    fn insert_chunk(&mut self, _: usize, _: Vec<u8>) -> Result<()> {
        Err(read_only())
    }

    fn delete_chunk(&mut self, _: usize) -> Result<()> {
        Err(read_only())
    }
}

fn read_only() -> Error {
    Error::Unsupported {
        what: "an HDF5 dataset opened for reading cannot be changed through its chunks",
    }
}
