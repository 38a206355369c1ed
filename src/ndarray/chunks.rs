//! The chunks of an array one by one, with where each sits: [`NdArray::chunks`].
//!
//! ```
//! use strata::ndarray::{ArrayParams, Location, NdArray, Scalar};
//! let params = ArrayParams::from_dtype(&[5, 7], u8::DTYPE)?
//!     .with_chunkshape(&[4, 4])
//!     .with_blockshape(&[2, 2]);
//! let data: Vec<u8> = (0..35).collect();
//! let arr = NdArray::from_items(&params, &Location::Memory, &data)?;
//! let boxes: Vec<(Vec<usize>, Vec<usize>)> =
//!     arr.chunks().map(|c| (c.start().to_vec(), c.shape())).collect();
//! assert_eq!(boxes[3], (vec![4, 4], vec![1, 3])); // the corner chunk, cut by the shape
//! let corner = arr.chunks().last().unwrap();
//! assert_eq!((corner.nchunk(), corner.coords()), (3, &[1, 1][..]));
//! assert_eq!(corner.decode()?, [32, 33, 34]);
//! # Ok::<(), strata::Error>(())
//! ```

use super::array::NdArray;
use super::selection::Slice;
use super::store::ChunkStore;
use super::typed::Scalar;
use crate::error::Result;
use std::borrow::Cow;

/// One chunk of an array, as [`NdArray::chunks`] yields it: its number, its place in the
/// chunk grid, the box of items it covers and, on demand, its bytes.
#[derive(Debug, Clone)]
pub struct ArrayChunk<'a, S> {
    array: &'a NdArray<S>,
    nchunk: usize,
    coords: Vec<usize>,
    start: Vec<usize>,
    stop: Vec<usize>,
}

impl<'a, S: ChunkStore> ArrayChunk<'a, S> {
    /// The chunk's number in the store (C order over the chunk grid).
    #[must_use]
    pub fn nchunk(&self) -> usize {
        self.nchunk
    }

    /// The chunk's coordinates in the chunk grid, outermost dimension first.
    #[must_use]
    pub fn coords(&self) -> &[usize] {
        &self.coords
    }

    /// The first item the chunk covers along each dimension.
    #[must_use]
    pub fn start(&self) -> &[usize] {
        &self.start
    }

    /// One past the last item the chunk covers along each dimension (the array's shape cuts
    /// edge chunks; their padding is not covered).
    #[must_use]
    pub fn stop(&self) -> &[usize] {
        &self.stop
    }

    /// The shape of the box the chunk covers (`stop - start`).
    #[must_use]
    pub fn shape(&self) -> Vec<usize> {
        self.start
            .iter()
            .zip(&self.stop)
            .map(|(&a, &b)| b - a)
            .collect()
    }

    /// The selection of the box, for [`NdArray::get_slice`] and [`NdArray::set_slice`].
    #[must_use]
    pub fn slices(&self) -> Vec<Slice> {
        self.start
            .iter()
            .zip(&self.stop)
            .map(|(&a, &b)| Slice::range(a as i64, b as i64))
            .collect()
    }

    /// The compressed chunk as the store holds it (a whole Blosc2 chunk, padding included).
    ///
    /// # Errors
    /// The store's ([`super::ChunkSource::chunk`]).
    pub fn compressed(&self) -> Result<Cow<'a, [u8]>> {
        self.array.store().chunk(self.nchunk)
    }

    /// The items of the box in C order (padding left out), decompressing this chunk only.
    ///
    /// # Errors
    /// As [`NdArray::get_slice_vec`].
    pub fn decode(&self) -> Result<Vec<u8>> {
        self.array.get_slice_vec(&self.slices()).map(|(v, _)| v)
    }

    /// The items of the box as `T`s (see [`NdArray::get_slice_as`]).
    ///
    /// # Errors
    /// As [`NdArray::get_slice_as`].
    pub fn decode_as<T: Scalar>(&self) -> Result<Vec<T>> {
        self.array.get_slice_as(&self.slices()).map(|(v, _)| v)
    }
}

impl<S: ChunkStore> NdArray<S> {
    /// The array's chunks in store order, each with its grid coordinates and the box of items
    /// it covers; nothing is read until a chunk's bytes are asked for.
    pub fn chunks(&self) -> impl ExactSizeIterator<Item = ArrayChunk<'_, S>> + '_ {
        let geom = self.geometry();
        let ndim = self.ndim();
        (0..geom.nchunks()).map(move |nchunk| {
            let coords = geom.chunk_coords(nchunk);
            let extent = geom.chunk_extent(&coords);
            let start: Vec<usize> = (0..ndim)
                .map(|d| coords[d] * geom.chunkshape()[d])
                .collect();
            let stop = start.iter().zip(&extent).map(|(&a, &n)| a + n).collect();
            ArrayChunk {
                array: self,
                nchunk,
                coords: coords[..ndim].to_vec(),
                start,
                stop,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::ndarray::{ArrayParams, Location, NdArray, Scalar, Slice};

    #[test]
    fn every_item_is_in_exactly_one_chunk_box() {
        let params = ArrayParams::from_dtype(&[7, 5, 6], i32::DTYPE)
            .unwrap()
            .with_chunkshape(&[3, 5, 4])
            .with_blockshape(&[2, 2, 3]);
        let data: Vec<i32> = (0..7 * 5 * 6).collect();
        let arr = NdArray::from_items(&params, &Location::Memory, &data).unwrap();
        let chunks: Vec<_> = arr.chunks().collect();
        assert_eq!(chunks.len(), 3 * 2);
        let mut seen = vec![0u8; data.len()];
        for (n, c) in chunks.iter().enumerate() {
            assert_eq!(c.nchunk(), n);
            let items = c.decode_as::<i32>().unwrap();
            let shape = c.shape();
            assert_eq!(items.len(), shape.iter().product::<usize>());
            let mut k = 0;
            for i in c.start()[0]..c.stop()[0] {
                for j in c.start()[1]..c.stop()[1] {
                    for l in c.start()[2]..c.stop()[2] {
                        let at = (i * 5 + j) * 6 + l;
                        assert_eq!(items[k], data[at], "chunk {n} item {k}");
                        seen[at] += 1;
                        k += 1;
                    }
                }
            }
            // The stored chunk holds the padded box (blocks of 2 x 2 x 3: 4 x 6 x 6 items).
            let h = crate::format::chunk::ChunkHeader::parse(&c.compressed().unwrap()).unwrap();
            assert_eq!(h.nbytes, 4 * 6 * 6 * 4);
        }
        assert!(seen.iter().all(|&s| s == 1));
        assert_eq!(chunks[5].coords(), [2, 0, 1]);
        assert_eq!(
            (chunks[5].start(), chunks[5].stop()),
            (&[6, 0, 4][..], &[7, 5, 6][..])
        );
        assert_eq!(
            chunks[5].slices(),
            [Slice::range(6, 7), Slice::range(0, 5), Slice::range(4, 6)]
        );
    }

    #[test]
    fn a_zero_dimensional_array_is_one_chunk_without_coordinates() {
        let params = ArrayParams::from_dtype(&[], f64::DTYPE).unwrap();
        let arr = NdArray::from_items(&params, &Location::Memory, &[2.5f64]).unwrap();
        let chunks: Vec<_> = arr.chunks().collect();
        assert_eq!(chunks.len(), 1);
        assert!(chunks[0].coords().is_empty() && chunks[0].shape().is_empty());
        assert_eq!(chunks[0].decode_as::<f64>().unwrap(), [2.5]);
    }
}
