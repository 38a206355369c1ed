//! b2nd arrays: chunk layout, slices against a naive reference, the edge cases, and
//! what the engine decompresses.

use proptest::prelude::*;
use std::borrow::Cow;
use strata::chunk::{compress_vec, decompress_vec, CParams, Context, DParams, Decoder, SplitMode};
use strata::error::Error;
use strata::format::chunk::SpecialType;
use strata::ndarray::slice::{get_slice, set_slice};
use strata::ndarray::{
    ArrayParams, ChunkSource, ChunkStore, Geometry, Location, NdArray, Selection, Slice,
};
use strata::registry::Registry;
use strata::{CodecId, FilterId};

// ---------------------------------------------------------------------------------------
// The naive reference: item by item, straight from the definitions.

/// C-order linear index of `idx` in `shape`.
fn linear(idx: &[usize], shape: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &n)| acc * n + i)
}

/// Every multi-index of `shape` in C order.
fn all_indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    (0..n)
        .map(|mut k| {
            let mut idx = vec![0; shape.len()];
            for d in (0..shape.len()).rev() {
                idx[d] = k % shape[d];
                k /= shape[d];
            }
            idx
        })
        .collect()
}

/// The selected indices of each dimension, as Python's `range(n)[slice]`.
fn picked(shape: &[usize], slices: &[Slice]) -> Vec<Vec<usize>> {
    shape
        .iter()
        .enumerate()
        .map(|(d, &n)| {
            let s = slices.get(d).copied().unwrap_or(Slice::FULL);
            let n = n as i64;
            let norm = |v: i64| if v < 0 { v + n } else { v };
            let mut out = Vec::new();
            if s.step > 0 {
                let mut i = s.start.map_or(0, |v| norm(v).clamp(0, n));
                let stop = s.stop.map_or(n, |v| norm(v).clamp(0, n));
                while i < stop {
                    out.push(i as usize);
                    i += s.step;
                }
            } else {
                let mut i = s.start.map_or(n - 1, |v| norm(v).clamp(-1, n - 1));
                let stop = s.stop.map_or(-1, |v| norm(v).clamp(-1, n - 1));
                while i > stop {
                    out.push(i as usize);
                    i += s.step;
                }
            }
            out
        })
        .collect()
}

/// The selection of `data` (C order, `shape`, items of `ts` bytes), C order.
fn naive_get(data: &[u8], shape: &[usize], ts: usize, slices: &[Slice]) -> Vec<u8> {
    let picks = picked(shape, slices);
    let out_shape: Vec<usize> = picks.iter().map(Vec::len).collect();
    let mut out = Vec::new();
    for o in all_indices(&out_shape) {
        let src: Vec<usize> = o.iter().enumerate().map(|(d, &k)| picks[d][k]).collect();
        let at = linear(&src, shape) * ts;
        out.extend_from_slice(&data[at..at + ts]);
    }
    out
}

/// `data` with the selection replaced by `values` (C order of the selection).
fn naive_set(data: &mut [u8], shape: &[usize], ts: usize, slices: &[Slice], values: &[u8]) {
    let picks = picked(shape, slices);
    let out_shape: Vec<usize> = picks.iter().map(Vec::len).collect();
    for (k, o) in all_indices(&out_shape).iter().enumerate() {
        let dst: Vec<usize> = o.iter().enumerate().map(|(d, &k)| picks[d][k]).collect();
        let at = linear(&dst, shape) * ts;
        data[at..at + ts].copy_from_slice(&values[k * ts..(k + 1) * ts]);
    }
}

/// The uncompressed bytes of chunk `nchunk` as the spec lays them out: blocks in C order over
/// extchunkshape/blockshape, items in C order inside each block, padding zeros.
fn naive_chunk(data: &[u8], g: &Geometry, nchunk: usize) -> Vec<u8> {
    let ts = g.typesize();
    let (shape, cs, bs) = (g.shape(), g.chunkshape(), g.blockshape());
    let ccoords = g.chunk_coords(nchunk);
    let mut out = Vec::new();
    for bcoords in all_indices(g.block_grid()) {
        for item in all_indices(bs) {
            let inside_chunk: Vec<usize> = (0..shape.len())
                .map(|d| bcoords[d] * bs[d] + item[d])
                .collect();
            let global: Vec<usize> = (0..shape.len())
                .map(|d| ccoords[d] * cs[d] + inside_chunk[d])
                .collect();
            let valid = (0..shape.len()).all(|d| inside_chunk[d] < cs[d] && global[d] < shape[d]);
            if valid {
                let at = linear(&global, shape) * ts;
                out.extend_from_slice(&data[at..at + ts]);
            } else {
                out.resize(out.len() + ts, 0);
            }
        }
    }
    out
}

/// Deterministic bytes: item `i` of `ts` bytes holds `i` little-endian (then 0xAB bytes).
fn counting(nitems: usize, ts: usize) -> Vec<u8> {
    (0..nitems)
        .flat_map(|i| {
            let le = (i as u64).to_le_bytes();
            (0..ts).map(move |b| if b < 8 { le[b] } else { 0xAB ^ b as u8 })
        })
        .collect()
}

fn params(shape: &[usize], chunks: &[usize], blocks: &[usize], ts: usize) -> ArrayParams {
    ArrayParams::new(shape, ts)
        .with_chunkshape(chunks)
        .with_blockshape(blocks)
}

/// The compressed chunks of `arr`, chunk 0 first (special chunks as C-Blosc2 rebuilds them).
fn chunks_of<S: ChunkStore>(arr: &NdArray<S>) -> Vec<Vec<u8>> {
    (0..arr.store().nchunks())
        .map(|n| arr.store().chunk(n).unwrap().into_owned())
        .collect()
}

/// Chunks in vectors, as they are given: a store that takes bad chunks too.
#[derive(Debug, Default)]
struct VecStore(Vec<Vec<u8>>);

impl VecStore {
    fn from_chunks(chunks: Vec<Vec<u8>>) -> Self {
        VecStore(chunks)
    }
    fn new() -> Self {
        VecStore::default()
    }
}

impl ChunkSource for VecStore {
    fn nchunks(&self) -> usize {
        self.0.len()
    }
    fn chunk(&self, nchunk: usize) -> strata::Result<Cow<'_, [u8]>> {
        Ok(Cow::Borrowed(&self.0[nchunk]))
    }
}

impl ChunkStore for VecStore {
    fn update_chunk(&mut self, nchunk: usize, chunk: Vec<u8>) -> strata::Result<()> {
        self.0[nchunk] = chunk;
        Ok(())
    }
    fn insert_chunk(&mut self, nchunk: usize, chunk: Vec<u8>) -> strata::Result<()> {
        self.0.insert(nchunk, chunk);
        Ok(())
    }
    fn delete_chunk(&mut self, nchunk: usize) -> strata::Result<()> {
        self.0.remove(nchunk);
        Ok(())
    }
}

fn shape_of(arr: &NdArray) -> Vec<usize> {
    arr.shape().to_vec()
}

// ---------------------------------------------------------------------------------------
// The spec's layout example and the edge cases, exact values.

#[test]
fn spec_example_chunk_layout() {
    let data: Vec<u8> = (1..=35).collect();
    let arr = NdArray::from_buffer(
        &params(&[5, 7], &[4, 4], &[2, 3], 1),
        &Location::Memory,
        &data,
    )
    .unwrap();
    let chunks = chunks_of(&arr);
    assert_eq!(chunks.len(), 4);
    assert_eq!(
        decompress_vec(&chunks[0]).unwrap(),
        [1, 2, 3, 8, 9, 10, 4, 0, 0, 11, 0, 0, 15, 16, 17, 22, 23, 24, 18, 0, 0, 25, 0, 0]
    );
    assert_eq!(
        decompress_vec(&chunks[3]).unwrap(),
        [33, 34, 35, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    );
    // 24-byte chunks are stored raw (memcpyed) with blocksize 6, as C-Blosc2 writes them.
    assert_eq!(
        &chunks[0][..16],
        &[5, 1, 7, 1, 24, 0, 0, 0, 6, 0, 0, 0, 56, 0, 0, 0]
    );
    for (n, c) in chunks.iter().enumerate() {
        assert_eq!(
            decompress_vec(c).unwrap(),
            naive_chunk(&data, arr.geometry(), n)
        );
    }
    assert_eq!(arr.to_vec().unwrap(), data);
}

#[test]
fn five_by_five_sliced_past_the_end() {
    let data: Vec<u8> = (0..25).collect();
    let arr = NdArray::from_buffer(
        &params(&[5, 5], &[2, 3], &[1, 2], 1),
        &Location::Memory,
        &data,
    )
    .unwrap();
    let (v, shape) = arr
        .get_slice_vec(&[Slice::range(4, 6), Slice::range(4, 6)])
        .unwrap();
    assert_eq!((v, shape), (vec![24], vec![1, 1]));
    let (v, shape) = arr
        .get_slice_vec(&[Slice::range(5, 9), Slice::range(-100, 100)])
        .unwrap();
    assert_eq!((v.len(), shape), (0, vec![0, 5]));
    let (v, shape) = arr
        .get_slice_vec(&[Slice::range(-2, 100), Slice::range(3, 4)])
        .unwrap();
    assert_eq!((v, shape), (vec![18, 23], vec![2, 1]));
    let (v, _) = arr
        .get_slice_vec(&[Slice::index(-1), Slice::index(-1)])
        .unwrap();
    assert_eq!(v, [24]);
}

#[test]
fn every_fourth_of_360_is_90() {
    let data = counting(360, 4);
    let arr =
        NdArray::from_buffer(&params(&[360], &[100], &[7], 4), &Location::Memory, &data).unwrap();
    let (v, shape) = arr.get_slice_vec(&[Slice::FULL.step_by(4)]).unwrap();
    assert_eq!(shape, [90]);
    let got: Vec<u32> = v
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(got, (0..360).step_by(4).collect::<Vec<u32>>());
    let (v, shape) = arr.get_slice_vec(&[Slice::FULL.step_by(-4)]).unwrap();
    assert_eq!(shape, [90]);
    assert_eq!(&v[..4], &359u32.to_le_bytes());
    assert_eq!(&v[v.len() - 4..], &3u32.to_le_bytes());
}

#[test]
fn zero_length_dimensions() {
    // python-blosc2 writes chunkshape 0 / blockshape 0 for an empty dimension
    for (shape, chunks, blocks) in [
        (vec![0usize, 5], vec![0, 5], vec![0, 5]),
        (vec![4, 0], vec![2, 3], vec![1, 2]),
        (vec![0], vec![0], vec![0]),
    ] {
        let p = params(&shape, &chunks, &blocks, 4);
        let mut arr = NdArray::zeros(&p, &Location::Memory).unwrap();
        assert_eq!(arr.store().nchunks(), 0);
        assert_eq!(arr.to_vec().unwrap(), Vec::<u8>::new());
        let (v, s) = arr.get_slice_vec(&[Slice::range(1, 3)]).unwrap();
        assert!(v.is_empty() && s.contains(&0), "{shape:?}");
        assert_eq!(arr.set_slice(&[], &[]).unwrap().chunks_written, 0);
        let from = NdArray::from_buffer(&p, &Location::Memory, &[]).unwrap();
        assert_eq!(from.store().nchunks(), 0);
        // growing the empty dimension makes chunks (where chunkshape allows it)
        if !chunks.contains(&0) {
            arr.resize(&[4, 3]).unwrap();
            assert_eq!(arr.to_vec().unwrap(), vec![0; 48]);
            assert_eq!(arr.store().nchunks(), 2);
        }
    }
    // default partitions of an empty shape are the shape, as python-blosc2 chooses
    let arr = NdArray::zeros(&ArrayParams::new(&[0, 7], 8), &Location::Memory).unwrap();
    assert_eq!(
        (&arr.meta().chunkshape[..], &arr.meta().blockshape[..]),
        (&[0, 7][..], &[0, 7][..])
    );
    // an empty dimension with chunkshape 0 cannot grow
    let mut arr = NdArray::zeros(&params(&[0, 5], &[0, 5], &[0, 5], 1), &Location::Memory).unwrap();
    assert_eq!(arr.resize(&[2, 5]).unwrap_err().code(), -12);
}

#[test]
fn one_item_arrays() {
    for shape in [vec![1usize], vec![1, 1], vec![1, 1, 1]] {
        let nd = shape.len();
        let p = params(&shape, &vec![1; nd], &vec![1; nd], 8);
        let mut arr = NdArray::from_buffer(&p, &Location::Memory, &42u64.to_le_bytes()).unwrap();
        assert_eq!(arr.to_vec().unwrap(), 42u64.to_le_bytes());
        arr.set_slice(&[Slice::index(0)], &7u64.to_le_bytes())
            .unwrap();
        let (v, s) = arr.get_slice_vec(&[Slice::index(-1)]).unwrap();
        assert_eq!((v, s), (7u64.to_le_bytes().to_vec(), vec![1; nd]));
        let (v, _) = arr.get_slice_vec(&[Slice::index(1)]).unwrap();
        assert!(v.is_empty());
    }
    // 0-d: one item in one chunk
    let arr = NdArray::from_buffer(
        &ArrayParams::new(&[], 8),
        &Location::Memory,
        &3.5f64.to_le_bytes(),
    )
    .unwrap();
    assert_eq!((arr.meta().ndim(), arr.store().nchunks()), (0, 1));
    assert_eq!(arr.to_vec().unwrap(), 3.5f64.to_le_bytes());
    assert!(arr.get_slice_vec(&[Slice::FULL]).is_err());
}

#[test]
fn last_partial_chunk_and_block() {
    // 23 x 17 in chunks of 10 x 7 (ext 12 x 8 with blocks of 4 x 4): the last chunk holds
    // 3 x 3 items, the last block of a chunk holds 2 x 3 or 3 x 3.
    let ts = 2;
    let data = counting(23 * 17, ts);
    let arr = NdArray::from_buffer(
        &params(&[23, 17], &[10, 7], &[4, 4], ts),
        &Location::Memory,
        &data,
    )
    .unwrap();
    let g = arr.geometry();
    assert_eq!(
        (g.extchunkshape(), g.chunk_grid()),
        (&[12, 8][..], &[3, 3][..])
    );
    for slices in [
        vec![Slice::range(20, 23), Slice::range(14, 17)],
        vec![Slice::range(19, 100), Slice::range(13, 17)],
        vec![Slice::range(8, 12), Slice::range(5, 9)],
        vec![Slice::index(22), Slice::FULL],
        vec![Slice::FULL, Slice::index(16)],
    ] {
        let (v, _) = arr.get_slice_vec(&slices).unwrap();
        assert_eq!(v, naive_get(&data, &[23, 17], ts, &slices), "{slices:?}");
    }
    let (v, _) = arr
        .get_slice_vec(&[Slice::index(22), Slice::index(16)])
        .unwrap();
    assert_eq!(u16::from_le_bytes([v[0], v[1]]), 22 * 17 + 16);
}

#[test]
fn typesize_over_255() {
    let ts = 300;
    let data = counting(9 * 11, ts);
    let p = params(&[9, 11], &[4, 5], &[3, 2], ts).with_dtype("|V300");
    let arr = NdArray::from_buffer(&p, &Location::Memory, &data).unwrap();
    // the chunk header stores typesize 1, the blocksize is one block of 300-byte items
    let c = &chunks_of(&arr)[0];
    assert_eq!(
        (c[3], u32::from_le_bytes(c[8..12].try_into().unwrap())),
        (1, 6 * 300)
    );
    let slices = [Slice::new(None, None, -2), Slice::range(3, 10).step_by(3)];
    let (v, shape) = arr.get_slice_vec(&slices).unwrap();
    assert_eq!(shape, [5, 3]);
    assert_eq!(v, naive_get(&data, &[9, 11], ts, &slices));
    assert_eq!(arr.to_vec().unwrap(), data);
    let full = NdArray::full(&p, &Location::Memory, &data[..ts]).unwrap();
    let (v, _) = full
        .get_slice_vec(&[Slice::index(8), Slice::index(10)])
        .unwrap();
    assert_eq!(v, &data[..ts]);
}

#[test]
fn three_d_uint8_item_by_item_across_borders() {
    let shape = [13usize, 11, 9];
    let data: Vec<u8> = (0..13 * 11 * 9).map(|i| (i * 7 % 251) as u8).collect();
    let arr = NdArray::from_buffer(
        &params(&[13, 11, 9], &[5, 4, 6], &[2, 3, 4], 1),
        &Location::Memory,
        &data,
    )
    .unwrap();
    for idx in all_indices(&shape) {
        let slices: Vec<Slice> = idx.iter().map(|&i| Slice::index(i as i64)).collect();
        let mut item = [0u8];
        let stats = arr.get_slice(&slices, &mut item).unwrap();
        assert_eq!(item[0], data[linear(&idx, &shape)], "{idx:?}");
        assert_eq!((stats.chunks_read, stats.blocks_decompressed), (1, 1));
    }
}

#[test]
fn four_d_uint64_with_delta_at_block_borders() {
    let shape = [6usize, 7, 5, 8];
    let n: usize = shape.iter().product();
    let data: Vec<u8> = (0..n as u64)
        .flat_map(|i| (1_000_000 + i * 3 + (i % 5) * 1000).to_le_bytes())
        .collect();
    let cparams = CParams {
        codec: CodecId::LZ4,
        filters: [0, 0, 0, 0, 3, 1].map(FilterId),
        ..CParams::default()
    };
    let p = params(&[6, 7, 5, 8], &[4, 5, 3, 6], &[2, 2, 2, 3], 8).with_cparams(&cparams);
    let arr = NdArray::from_buffer(&p, &Location::Memory, &data).unwrap();
    // the chunks really use delta
    let chunks = chunks_of(&arr);
    let d = Decoder::new(&Registry::global(), &chunks[0]).unwrap();
    assert!(d.needs_block0());
    for slices in [
        // items on both sides of block borders in every dimension
        vec![
            Slice::range(1, 3),
            Slice::range(1, 3),
            Slice::range(1, 3),
            Slice::range(2, 4),
        ],
        vec![
            Slice::range(3, 5),
            Slice::range(4, 6),
            Slice::range(2, 4),
            Slice::range(5, 7),
        ],
        vec![
            Slice::index(5),
            Slice::index(6),
            Slice::index(4),
            Slice::index(7),
        ],
        vec![
            Slice::FULL.step_by(-1),
            Slice::range(3, 4),
            Slice::FULL.step_by(2),
            Slice::FULL,
        ],
    ] {
        let (v, _) = arr.get_slice_vec(&slices).unwrap();
        assert_eq!(v, naive_get(&data, &shape, 8, &slices), "{slices:?}");
    }
    // one item in a block other than 0: that block and block 0 (the delta reference)
    let mut item = [0u8; 8];
    let stats = arr
        .get_slice(
            &[
                Slice::index(3),
                Slice::index(4),
                Slice::index(2),
                Slice::index(5),
            ],
            &mut item,
        )
        .unwrap();
    assert_eq!(stats.blocks_decompressed, 2);
    // one item in block 0 of a chunk: that block only
    let stats = arr
        .get_slice(
            &[
                Slice::index(4),
                Slice::index(5),
                Slice::index(3),
                Slice::index(6),
            ],
            &mut item,
        )
        .unwrap();
    assert_eq!(stats.blocks_decompressed, 1);
    assert_eq!(arr.to_vec().unwrap(), data);
}

// ---------------------------------------------------------------------------------------
// What the engine decompresses.

#[test]
fn only_touched_blocks_are_decompressed() {
    let data = counting(64 * 64, 4);
    let arr = NdArray::from_buffer(
        &params(&[64, 64], &[32, 32], &[8, 8], 4),
        &Location::Memory,
        &data,
    )
    .unwrap();
    // a 3 x 3 box inside one block
    let mut out = vec![0u8; 9 * 4];
    let s = arr
        .get_slice(&[Slice::range(9, 12), Slice::range(41, 44)], &mut out)
        .unwrap();
    assert_eq!(
        (s.chunks_read, s.blocks_decompressed, s.bytes_copied),
        (1, 1, 36)
    );
    // a row across the whole array: 2 chunks, 8 blocks
    let mut out = vec![0u8; 64 * 4];
    let s = arr.get_slice(&[Slice::index(33)], &mut out).unwrap();
    assert_eq!((s.chunks_read, s.blocks_decompressed), (2, 8));
    // a column with step 16: rows 0, 16, 32, 48 → 4 blocks in 2 chunks
    let mut out = vec![0u8; 4 * 4];
    let s = arr
        .get_slice(&[Slice::FULL.step_by(16), Slice::index(5)], &mut out)
        .unwrap();
    assert_eq!((s.chunks_read, s.blocks_decompressed), (2, 4));
    // blocks that span whole output rows are decompressed in place
    let arr = NdArray::from_buffer(
        &params(&[64, 64], &[32, 64], &[8, 64], 4),
        &Location::Memory,
        &data,
    )
    .unwrap();
    let mut out = vec![0u8; 64 * 64 * 4];
    let s = arr.get_slice(&[], &mut out).unwrap();
    assert_eq!((s.blocks_decompressed, s.blocks_in_place), (8, 8));
    assert_eq!(out, data);
    // a selection outside the array reads nothing
    let s = arr.get_slice(&[Slice::range(70, 80)], &mut out).unwrap();
    assert_eq!(s, Default::default());
}

#[test]
fn sparse_picks_from_shuffled_blocks() {
    // Blocks of 16 x 16 x 8 items with shuffle only: lines and strided picks take a few items
    // of each block (1 in 32 or fewer), which are gathered from the block's byte planes.
    for ts in [1usize, 2, 3, 4, 8, 16] {
        let shape = [40usize, 36, 20];
        let data = counting(shape.iter().product(), ts);
        let arr = NdArray::from_buffer(
            &params(&[40, 36, 20], &[32, 32, 16], &[16, 16, 8], ts),
            &Location::Memory,
            &data,
        )
        .unwrap();
        let chunks = chunks_of(&arr);
        let d = Decoder::new(&Registry::global(), &chunks[0]).unwrap();
        assert_eq!(d.shuffle_planes(), Some(ts));
        for slices in [
            vec![Slice::index(17), Slice::index(5)],
            vec![Slice::FULL, Slice::index(-3), Slice::index(9)],
            vec![Slice::FULL, Slice::FULL, Slice::index(9)],
            vec![
                Slice::FULL.step_by(5),
                Slice::range(2, 30).step_by(-7),
                Slice::index(19),
            ],
            vec![Slice::range(3, 5), Slice::index(30), Slice::FULL.step_by(3)],
        ] {
            let (v, _) = arr.get_slice_vec(&slices).unwrap();
            assert_eq!(
                v,
                naive_get(&data, &shape, ts, &slices),
                "ts {ts} {slices:?}"
            );
        }
    }
}

#[test]
fn writes_rebuild_covered_chunks_without_reading_them() {
    let data = counting(20 * 20, 2);
    let mut arr = NdArray::from_buffer(
        &params(&[20, 20], &[10, 10], &[5, 5], 2),
        &Location::Memory,
        &data,
    )
    .unwrap();
    let mut want = data.clone();
    // covers chunks 0 and 1 whole: nothing read
    let values = counting(200, 2)
        .iter()
        .map(|b| b ^ 0x5A)
        .collect::<Vec<_>>();
    let s = arr.set_slice(&[Slice::range(0, 10)], &values).unwrap();
    naive_set(&mut want, &[20, 20], 2, &[Slice::range(0, 10)], &values);
    assert_eq!(
        (s.chunks_read, s.chunks_written, s.bytes_copied),
        (0, 2, 400)
    );
    // one item: read-modify-write of its chunk
    let s = arr
        .set_slice(&[Slice::index(15), Slice::index(3)], &[9, 9])
        .unwrap();
    naive_set(
        &mut want,
        &[20, 20],
        2,
        &[Slice::index(15), Slice::index(3)],
        &[9, 9],
    );
    assert_eq!(
        (s.chunks_read, s.blocks_decompressed, s.chunks_written),
        (1, 4, 1)
    );
    // a strided, reversed write
    let sel = [Slice::FULL.step_by(-3), Slice::range(2, 19).step_by(4)];
    let vals: Vec<u8> = (0..7 * 5 * 2).map(|i| i as u8).collect();
    arr.set_slice(&sel, &vals).unwrap();
    naive_set(&mut want, &[20, 20], 2, &sel, &vals);
    assert_eq!(arr.to_vec().unwrap(), want);
    // the padding of rebuilt chunks is zeros
    let g = arr.geometry().clone();
    for (n, c) in chunks_of(&arr).iter().enumerate() {
        assert_eq!(decompress_vec(c).unwrap(), naive_chunk(&want, &g, n));
    }
}

#[test]
fn concurrent_reads_of_one_array() {
    let data = counting(50 * 40 * 3, 4);
    let shape = [50usize, 40, 3];
    let arr = NdArray::from_buffer(
        &params(&[50, 40, 3], &[16, 16, 3], &[4, 8, 3], 4),
        &Location::Memory,
        &data,
    )
    .unwrap();
    std::thread::scope(|s| {
        for t in 0..8i64 {
            let (arr, data) = (&arr, &data);
            s.spawn(move || {
                for k in 0..20i64 {
                    let slices = [
                        Slice::range(t * 5, t * 5 + 7 + k),
                        Slice::range(k, 40).step_by(1 + t % 3),
                        Slice::FULL.step_by(if k % 2 == 0 { 1 } else { -1 }),
                    ];
                    let (v, _) = arr.get_slice_vec(&slices).unwrap();
                    assert_eq!(v, naive_get(data, &shape, 4, &slices));
                }
            });
        }
    });
}

// ---------------------------------------------------------------------------------------
// Arrays whole: special chunks, resize, copy.

#[test]
fn special_arrays() {
    let p = params(&[10, 10], &[4, 4], &[2, 2], 8);
    let zeros = NdArray::zeros(&p, &Location::Memory).unwrap();
    // python-blosc2's zero chunk of this array, byte for byte
    let want = [
        0x05, 0x01, 0x05, 0x08, 0x80, 0, 0, 0, 0x20, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ];
    assert!(chunks_of(&zeros).iter().all(|c| c[..] == want));
    assert_eq!(zeros.to_vec().unwrap(), vec![0; 800]);
    let full = NdArray::full(&p, &Location::Memory, &3.5f64.to_le_bytes()).unwrap();
    let c = &chunks_of(&full)[0];
    assert_eq!(
        (c.len(), c[31], &c[32..]),
        (40, 0x30, &3.5f64.to_le_bytes()[..])
    );
    let (v, _) = full
        .get_slice_vec(&[Slice::index(9), Slice::range(8, 10)])
        .unwrap();
    assert_eq!(v, [3.5f64.to_le_bytes(), 3.5f64.to_le_bytes()].concat());
    let un = NdArray::uninit(&p, &Location::Memory).unwrap();
    assert_eq!(chunks_of(&un)[0][31], (SpecialType::Uninit as u8) << 4);
    assert_eq!(un.to_vec().unwrap(), vec![0; 800]);
    assert_eq!(
        NdArray::full(&p, &Location::Memory, &[1, 2])
            .unwrap_err()
            .code(),
        -12
    );
}

#[test]
fn resize_grows_and_shrinks_any_axis() {
    let ts = 4;
    let data = counting(7 * 9, ts);
    let mut arr = NdArray::from_buffer(
        &params(&[7, 9], &[3, 4], &[2, 3], ts),
        &Location::Memory,
        &data,
    )
    .unwrap();
    let mut want = data.clone();
    let mut shape = vec![7usize, 9];
    for new in [
        [9usize, 9],
        [9, 13],
        [4, 13],
        [4, 5],
        [10, 2],
        [10, 11],
        [0, 11],
        [3, 3],
    ] {
        // the reference: keep the common box, zeros elsewhere
        let mut next = vec![0u8; new[0] * new[1] * ts];
        for i in 0..new[0].min(shape[0]) {
            for j in 0..new[1].min(shape[1]) {
                let (a, b) = ((i * shape[1] + j) * ts, (i * new[1] + j) * ts);
                next[b..b + ts].copy_from_slice(&want[a..a + ts]);
            }
        }
        arr.resize(&[new[0], new[1]]).unwrap();
        assert_eq!(shape_of(&arr), new);
        assert_eq!(arr.store().nchunks(), arr.geometry().nchunks());
        assert_eq!(arr.meta().shape, [new[0] as i64, new[1] as i64]);
        assert_eq!(arr.to_vec().unwrap(), next, "resized to {new:?}");
        want = next;
        shape = new.to_vec();
    }
    assert!(arr.resize(&[3]).is_err());
    // A shape the metalayer cannot hold (64-bit signed).
    assert!(arr.resize(&[3, usize::MAX]).is_err());
}

#[test]
fn copy_with_new_partitions_and_cparams() {
    let shape = [30usize, 20, 10];
    let data = counting(6000, 4);
    let arr = NdArray::from_buffer(
        &params(&[30, 20, 10], &[8, 8, 8], &[4, 4, 4], 4),
        &Location::Memory,
        &data,
    )
    .unwrap();
    let zstd = CParams {
        codec: CodecId::ZSTD,
        clevel: 3,
        filters: [0, 0, 0, 0, 0, 2].map(FilterId),
        ..CParams::default()
    };
    let p = arr
        .params()
        .with_chunkshape(&[16, 7, 10])
        .with_blockshape(&[5, 7, 3])
        .with_cparams(&zstd);
    let copy = arr.copy(&p, &Location::Memory).unwrap();
    assert_eq!(copy.meta().chunkshape, [16, 7, 10]);
    assert_eq!(copy.store().nchunks(), 2 * 3);
    let h = Decoder::new(&Registry::global(), &chunks_of(&copy)[0])
        .unwrap()
        .header;
    assert_eq!(
        (h.compcode, h.blocksize, h.filters[5]),
        (CodecId::ZSTD, 5 * 7 * 3 * 4, FilterId::BITSHUFFLE)
    );
    assert_eq!(copy.to_vec().unwrap(), data);
    for (n, c) in chunks_of(&copy).iter().enumerate() {
        assert_eq!(
            decompress_vec(c).unwrap(),
            naive_chunk(&data, copy.geometry(), n)
        );
    }
    // default partitions
    let copy = arr
        .copy(&ArrayParams::new(&[30, 20, 10], 4), &Location::Memory)
        .unwrap();
    assert_eq!(copy.to_vec().unwrap(), data);
    assert_eq!(
        arr.copy(&ArrayParams::new(&[30, 20, 11], 4), &Location::Memory)
            .unwrap_err(),
        Error::ShapeMismatch {
            what: "a copy (the array's shape)",
            expected: vec![30, 20, 10],
            found: vec![30, 20, 11],
        }
    );
    // a slice as a new array
    let sub = arr
        .slice(&[Slice::range(3, 17), Slice::FULL.step_by(-3)])
        .unwrap();
    assert_eq!(shape_of(&sub), [14, 7, 10]);
    let slices = [Slice::range(3, 17), Slice::FULL.step_by(-3)];
    assert_eq!(sub.to_vec().unwrap(), naive_get(&data, &shape, 4, &slices));
}

// ---------------------------------------------------------------------------------------
// The per-block decompression the engine relies on.

#[test]
fn decompress_block_matches_the_whole_chunk() {
    let data = counting(6000, 4);
    let pipelines: [(u8, [u8; 6], bool, u8); 7] = [
        (0, [0, 0, 0, 0, 0, 1], false, 5),
        (1, [0, 0, 0, 0, 3, 1], false, 5),
        (5, [0, 0, 0, 0, 0, 2], true, 5),
        (4, [3, 0, 0, 0, 0, 0], false, 9),
        (1, [1, 35, 0, 0, 0, 0], false, 1),
        (0, [0; 6], false, 0),
        (2, [0, 0, 0, 0, 3, 0], false, 7),
    ];
    for (codec, filters, use_dict, clevel) in pipelines {
        let cparams = CParams {
            codec: CodecId(codec),
            filters: filters.map(FilterId),
            use_dict,
            clevel,
            typesize: 4,
            blocksize: 2000,
            splitmode: SplitMode::Always,
            ..CParams::default()
        };
        let chunk = compress_vec(&cparams, &data).unwrap();
        let whole = decompress_vec(&chunk).unwrap();
        let d = Decoder::new(&Registry::global(), &chunk).unwrap();
        let bs = d.header.blocksize;
        let mut block = vec![0u8; bs];
        let mut block0 = vec![0u8; bs];
        d.decompress_block(0, &mut block0, None).unwrap();
        for nblock in 0..d.header.nblocks() {
            let want = &whole[nblock * bs..(nblock * bs + bs).min(whole.len())];
            let n = d.decompress_block(nblock, &mut block, None).unwrap();
            assert_eq!(&block[..n], want, "{cparams:?} block {nblock}");
            let n = d
                .decompress_block(nblock, &mut block, Some(&block0))
                .unwrap();
            assert_eq!(&block[..n], want);
        }
        let err = d
            .decompress_block(d.header.nblocks(), &mut block, None)
            .unwrap_err();
        assert_eq!(err.code(), -33);
        let err = d
            .decompress_block(0, &mut block[..bs - 1], None)
            .unwrap_err();
        assert_eq!(err.code(), -6);
        if d.needs_block0() {
            let err = d
                .decompress_block(1, &mut block, Some(&block0[1..]))
                .unwrap_err();
            assert_eq!(err.code(), -12);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Bad chunks and bad arguments are errors, not panics.

#[test]
fn bad_chunks_and_arguments() {
    let data = counting(100, 1);
    let arr = NdArray::from_buffer(
        &params(&[10, 10], &[5, 5], &[5, 5], 1),
        &Location::Memory,
        &data,
    )
    .unwrap();
    let meta = arr.meta().clone();
    let mut chunks = chunks_of(&arr).to_vec();
    // a chunk of the wrong size
    chunks[1] = compress_vec(
        &CParams {
            typesize: 1,
            ..CParams::default()
        },
        &[1; 24],
    )
    .unwrap();
    let bad = NdArray::from_store(
        meta.clone(),
        arr.cparams(),
        VecStore::from_chunks(chunks.clone()),
        Context::global(),
    )
    .unwrap();
    assert_eq!(bad.to_vec().unwrap_err().code(), -11);
    // reads that avoid the bad chunk work
    let (v, _) = bad
        .get_slice_vec(&[Slice::range(0, 5), Slice::range(0, 5)])
        .unwrap();
    assert_eq!(
        v,
        naive_get(
            &data,
            &[10, 10],
            1,
            &[Slice::range(0, 5), Slice::range(0, 5)]
        )
    );
    // a truncated chunk
    chunks[1] = chunks_of(&arr)[1][..20].to_vec();
    let bad = NdArray::from_store(
        meta.clone(),
        arr.cparams(),
        VecStore::from_chunks(chunks.clone()),
        Context::global(),
    )
    .unwrap();
    assert!(matches!(bad.to_vec().unwrap_err(), Error::Truncated { .. }));
    let mut bad = bad;
    assert!(bad
        .set_slice(&[Slice::index(0), Slice::index(7)], &[1])
        .is_err());
    // the wrong number of chunks
    chunks.pop();
    let err = NdArray::from_store(
        meta,
        arr.cparams(),
        VecStore::from_chunks(chunks),
        Context::global(),
    )
    .unwrap_err();
    assert_eq!(err.code(), -12);
    // a destination too small, data too short, a zero step, too many slices
    let mut out = [0u8; 3];
    assert_eq!(
        arr.get_slice(&[Slice::range(0, 2), Slice::range(0, 2)], &mut out)
            .unwrap_err()
            .code(),
        -6
    );
    let mut arr = arr;
    assert_eq!(
        arr.set_slice(&[Slice::range(0, 2)], &[0; 19])
            .unwrap_err()
            .code(),
        -12
    );
    assert_eq!(
        arr.get_slice_vec(&[Slice::FULL.step_by(0)])
            .unwrap_err()
            .code(),
        -12
    );
    assert_eq!(
        arr.get_slice_vec(&[Slice::FULL; 3]).unwrap_err().code(),
        -12
    );
    // the engine checks the store against the geometry
    let g = arr.geometry().clone();
    let ctx = Context::global();
    let empty = VecStore::new();
    let sel = Selection::full(g.shape());
    let mut out = vec![0u8; 100];
    assert_eq!(
        get_slice(&ctx, &DParams::default(), &g, &empty, &sel, &mut out)
            .unwrap_err()
            .code(),
        -12
    );
    let mut empty = VecStore::new();
    assert_eq!(
        set_slice(&ctx, &CParams::default(), &g, &mut empty, &sel, &out)
            .unwrap_err()
            .code(),
        -12
    );
}

// ---------------------------------------------------------------------------------------
// Random shapes, partitions and selections against the reference.

fn dim_slice() -> impl Strategy<Value = Slice> {
    let bound = prop_oneof![Just(None), (-14i64..14).prop_map(Some)];
    (bound.clone(), bound, prop_oneof![1i64..4, -4i64..0]).prop_map(|(a, b, s)| Slice::new(a, b, s))
}

/// (shape, chunkshape, blockshape) with 1 to 4 dimensions of 0 to 11 items.
fn partitioned() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, Vec<usize>)> {
    prop::collection::vec((0usize..12, 1usize..8, 1usize..8), 1..=4).prop_map(|dims| {
        let shape = dims.iter().map(|d| d.0).collect();
        let chunks: Vec<usize> = dims.iter().map(|d| d.1).collect();
        let blocks = dims.iter().map(|d| d.2.min(d.1)).collect();
        (shape, chunks, blocks)
    })
}

/// Items of more than 255 bytes are stored with typesize 1 (as C-Blosc2 stores them): a read
/// that decodes only a block's first items must count them in the chunk's typesize. Found by
/// `random_reads_match_the_reference` (the first item read back as the first bytes of it and
/// zeros).
#[test]
fn block_prefixes_of_items_wider_than_255_bytes() {
    for nthreads in [1, 2] {
        let (shape, ts) = (vec![4], 260);
        let data = counting(4, ts);
        #[allow(clippy::needless_update)]
        let dparams = DParams {
            nthreads,
            ..DParams::default()
        };
        let arr = NdArray::from_buffer(&params(&shape, &[3], &[2], ts), &Location::Memory, &data)
            .unwrap()
            .with_dparams(dparams);
        for step in [2, 3] {
            let slices = [Slice::new(None, None, step)];
            let (v, _) = arr.get_slice_vec(&slices).unwrap();
            assert_eq!(v, naive_get(&data, &shape, ts, &slices), "step {step}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_reads_match_the_reference(
        (shape, chunks, blocks) in partitioned(),
        ts in prop::sample::select(vec![1usize, 2, 3, 8, 260]),
        slices in prop::collection::vec(dim_slice(), 0..=4),
        nthreads in 1usize..3,
    ) {
        let slices = &slices[..slices.len().min(shape.len())];
        let ushape = shape.clone();
        let n: usize = ushape.iter().product();
        let data = counting(n, ts);
        // DParams is gaining fields (the N-d context for plugins).
        #[allow(clippy::needless_update)]
        let dparams = DParams { nthreads, ..DParams::default() };
        let arr = NdArray::from_buffer(&params(&shape, &chunks, &blocks, ts), &Location::Memory, &data)
            .unwrap()
            .with_dparams(dparams);
        let (v, out_shape) = arr.get_slice_vec(slices).unwrap();
        prop_assert_eq!(&v, &naive_get(&data, &ushape, ts, slices));
        prop_assert_eq!(out_shape, picked(&ushape, slices).iter().map(Vec::len).collect::<Vec<_>>());
        for (k, c) in chunks_of(&arr).iter().enumerate() {
            prop_assert_eq!(decompress_vec(c).unwrap(), naive_chunk(&data, arr.geometry(), k));
        }
    }

    #[test]
    fn random_writes_match_the_reference(
        (shape, chunks, blocks) in partitioned(),
        ts in prop::sample::select(vec![1usize, 4, 300]),
        writes in prop::collection::vec(prop::collection::vec(dim_slice(), 0..=4), 1..4),
        delta in any::<bool>(),
    ) {
        let ushape = shape.clone();
        let n: usize = ushape.iter().product();
        let mut want = counting(n, ts);
        let cparams = CParams {
            filters: if delta { [0, 0, 0, 0, 3, 1] } else { [0, 0, 0, 0, 0, 1] }.map(FilterId),
            ..CParams::default()
        };
        let p = params(&shape, &chunks, &blocks, ts).with_cparams(&cparams);
        let mut arr = NdArray::from_buffer(&p, &Location::Memory, &want).unwrap();
        for (w, slices) in writes.iter().enumerate() {
            let slices = &slices[..slices.len().min(shape.len())];
            let count: usize = picked(&ushape, slices).iter().map(Vec::len).product();
            let values: Vec<u8> = (0..count * ts).map(|i| (i * 31 + w * 7) as u8).collect();
            arr.set_slice(slices, &values).unwrap();
            naive_set(&mut want, &ushape, ts, slices, &values);
        }
        prop_assert_eq!(arr.to_vec().unwrap(), want.clone());
        for (k, c) in chunks_of(&arr).iter().enumerate() {
            prop_assert_eq!(decompress_vec(c).unwrap(), naive_chunk(&want, arr.geometry(), k));
        }
    }
}
