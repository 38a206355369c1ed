//! Changes along an axis (append, insert, delete, resize with a start, concatenate, stack)
//! against a reference built with plain vectors, the chunk moves they make, their errors
//! (before any write), and the cost of appending one time step to a file.

mod counting;

use counting::Counting;
use std::path::Path;
use std::sync::atomic::Ordering;
use strata::frame::{OpenMode, SyncPolicy};
use strata::ndarray::{ArrayParams, ChunkSource, Location, NdArray, OpenOptions, Slice};
use strata::schunk::SChunk;

// ---------------------------------------------------------------------------------------
// The reference: a C-order array of u16 items as (shape, items).

#[derive(Debug, Clone, PartialEq)]
struct Ref {
    shape: Vec<usize>,
    items: Vec<u16>,
}

impl Ref {
    fn new(shape: &[usize], seed: u16) -> Ref {
        let n: usize = shape.iter().product();
        let items = (0..n)
            .map(|i| (i as u16).wrapping_mul(7).wrapping_add(seed))
            .collect();
        Ref {
            shape: shape.to_vec(),
            items,
        }
    }

    fn bytes(&self) -> Vec<u8> {
        self.items.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// Items before `axis`, along it, and after it.
    fn split(&self, axis: usize) -> (usize, usize, usize) {
        let outer = self.shape[..axis].iter().product();
        let inner = self.shape[axis + 1..].iter().product();
        (outer, self.shape[axis], inner)
    }

    /// `parts` one after the other along `axis`.
    fn concat(parts: &[&Ref], axis: usize) -> Ref {
        let mut shape = parts[0].shape.clone();
        shape[axis] = parts.iter().map(|p| p.shape[axis]).sum();
        let (outer, _, _) = parts[0].split(axis);
        let mut items = Vec::new();
        for o in 0..outer {
            for p in parts {
                let (_, len, inner) = p.split(axis);
                items.extend_from_slice(&p.items[o * len * inner..(o + 1) * len * inner]);
            }
        }
        Ref { shape, items }
    }

    /// Items `[a, b)` along `axis`.
    fn take(&self, axis: usize, a: usize, b: usize) -> Ref {
        let (outer, len, inner) = self.split(axis);
        let mut shape = self.shape.clone();
        shape[axis] = b - a;
        let mut items = Vec::new();
        for o in 0..outer {
            items.extend_from_slice(&self.items[(o * len + a) * inner..(o * len + b) * inner]);
        }
        Ref { shape, items }
    }

    fn insert(&self, axis: usize, at: usize, slab: &Ref) -> Ref {
        let len = self.shape[axis];
        Ref::concat(
            &[&self.take(axis, 0, at), slab, &self.take(axis, at, len)],
            axis,
        )
    }

    fn delete(&self, axis: usize, at: usize, n: usize) -> Ref {
        let len = self.shape[axis];
        Ref::concat(
            &[&self.take(axis, 0, at), &self.take(axis, at + n, len)],
            axis,
        )
    }

    fn zeros(shape: &[usize]) -> Ref {
        Ref {
            shape: shape.to_vec(),
            items: vec![0; shape.iter().product()],
        }
    }

    /// `Ref::zeros` with a new first dimension of 1 put at `axis`.
    fn expand(&self, axis: usize) -> Ref {
        let mut shape = self.shape.clone();
        shape.insert(axis, 1);
        Ref {
            shape,
            items: self.items.clone(),
        }
    }
}

fn params(shape: &[usize], chunks: &[usize], blocks: &[usize]) -> ArrayParams {
    ArrayParams::from_dtype(shape, "<u2")
        .unwrap()
        .with_chunkshape(chunks)
        .with_blockshape(blocks)
}

fn make(r: &Ref, chunks: &[usize], blocks: &[usize], loc: &Location) -> NdArray {
    NdArray::from_buffer(&params(&r.shape, chunks, blocks), loc, &r.bytes()).unwrap()
}

fn check(arr: &NdArray, r: &Ref) {
    assert_eq!(arr.shape(), &r.shape[..]);
    assert_eq!(arr.get_slice_as::<u16>(&[]).unwrap().0, r.items);
}

/// The compressed chunks as stored.
fn stored(arr: &NdArray) -> Vec<Vec<u8>> {
    (0..arr.schunk().nchunks())
        .map(|n| ChunkSource::chunk(arr.schunk(), n).unwrap().into_owned())
        .collect()
}

// ---------------------------------------------------------------------------------------
// Append, insert, delete

#[test]
fn appending_time_steps_one_call_each_equals_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("steps.b2nd");
    // time x lat x lon, chunks of 3 steps over 2 x 2 chunks of the grid
    let p = params(&[0, 6, 10], &[3, 4, 5], &[2, 2, 5]);
    let mut arr = NdArray::zeros(&p, &Location::File(path.clone())).unwrap();
    let mut r = Ref::zeros(&[0, 6, 10]);
    for t in 0..8u16 {
        let step = Ref::new(&[1, 6, 10], 1000 * t);
        assert_eq!(arr.append(0, &step.bytes()).unwrap(), usize::from(t) + 1);
        r = Ref::concat(&[&r, &step], 0);
        check(&arr, &r);
        assert_eq!(arr.schunk().nchunks(), (usize::from(t) / 3 + 1) * 4);
    }
    // two steps in one call, along the last axis and the middle one
    let two = Ref::new(&[8, 6, 2], 5);
    assert_eq!(arr.append(2, &two.bytes()).unwrap(), 12);
    r = Ref::concat(&[&r, &two], 2);
    let rows = Ref::new(&[8, 3, 12], 9);
    assert_eq!(arr.append(1, &rows.bytes()).unwrap(), 9);
    r = Ref::concat(&[&r, &rows], 1);
    check(&arr, &r);
    arr.close().unwrap();
    check(&NdArray::open(&path, OpenMode::Read).unwrap(), &r);
}

#[test]
fn insert_and_delete_inside_move_whole_chunks() {
    let r = Ref::new(&[8, 6], 3);
    let mut arr = make(&r, &[2, 3], &[1, 3], &Location::Memory);
    let before = stored(&arr);
    // 4 rows at row 2: two zero chunks come in per chunk column, the rest move as stored
    let rows = Ref::new(&[4, 6], 50);
    assert_eq!(arr.insert(0, 2, &rows.bytes()).unwrap(), 12);
    let mut r = r.insert(0, 2, &rows);
    check(&arr, &r);
    let after = stored(&arr);
    assert_eq!(after[..2], before[..2]);
    assert_eq!(after[6..], before[2..]);
    // 3 columns at column 3, then one row and one column at the ends (any count there)
    let cols = Ref::new(&[12, 3], 70);
    assert_eq!(arr.insert(1, 3, &cols.bytes()).unwrap(), 9);
    r = r.insert(1, 3, &cols);
    let row = Ref::new(&[1, 9], 90);
    assert_eq!(arr.insert(0, 12, &row.bytes()).unwrap(), 13);
    r = r.insert(0, 12, &row);
    check(&arr, &r);
    // delete rows 4..8 (whole chunks) and the last two columns
    let before = stored(&arr);
    assert_eq!(arr.delete(0, 4, 4).unwrap(), 9);
    r = r.delete(0, 4, 4);
    assert_eq!(stored(&arr)[6..], before[12..]);
    assert_eq!(arr.delete(1, 7, 2).unwrap(), 7);
    r = r.delete(1, 7, 2);
    check(&arr, &r);
    // the last item of a dimension, then everything
    assert_eq!(arr.delete(0, 8, 1).unwrap(), 8);
    r = r.delete(0, 8, 1);
    check(&arr, &r);
    assert_eq!(arr.delete(0, 0, 8).unwrap(), 0);
    check(&arr, &Ref::zeros(&[0, 7]));
    assert_eq!(arr.schunk().nchunks(), 0);
}

#[test]
fn resize_at_places_zeros_at_the_start() {
    let r = Ref::new(&[4, 6], 11);
    let mut arr = make(&r, &[2, 3], &[2, 3], &Location::Memory);
    // grow both dimensions inside: 2 rows at 2, 3 columns at 0
    arr.resize_at(&[6, 9], Some(&[2, 0])).unwrap();
    let want = Ref::concat(
        &[&Ref::zeros(&[6, 3]), &r.insert(0, 2, &Ref::zeros(&[2, 6]))],
        1,
    );
    check(&arr, &want);
    // shrink both: rows 0..2 and columns 3..6 go
    arr.resize_at(&[4, 6], Some(&[0, 3])).unwrap();
    check(&arr, &want.delete(0, 0, 2).delete(1, 3, 3));
    // at the end (start = the old shape) any change goes; gained items are zeros
    let end = arr.get_slice_as::<u16>(&[]).unwrap().0;
    arr.resize_at(&[5, 7], Some(&[4, 6])).unwrap();
    let mut want = Ref {
        shape: vec![4, 6],
        items: end,
    };
    want = Ref::concat(&[&want, &Ref::zeros(&[4, 1])], 1);
    want = Ref::concat(&[&want, &Ref::zeros(&[1, 7])], 0);
    check(&arr, &want);
}

// ---------------------------------------------------------------------------------------
// Errors: clear, and before any write

fn message(e: &strata::Error) -> (i32, String) {
    (e.code(), e.to_string())
}

#[test]
fn errors_come_before_any_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.b2nd");
    let r = Ref::new(&[6, 4], 1);
    make(&r, &[2, 4], &[1, 4], &Location::File(path.clone()))
        .close()
        .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let mut arr = NdArray::open(&path, OpenMode::ReadWrite).unwrap();
    let step = Ref::new(&[1, 4], 0).bytes();
    let cases: Vec<(strata::Error, &str)> = vec![
        (arr.append(2, &step).unwrap_err(), "axis 2 is not below 2"),
        (
            arr.append(0, &step[..6]).unwrap_err(),
            "bytes of data along the axis (whole slabs of the other dimensions) 6 is not a \
             positive multiple of 8",
        ),
        (
            arr.insert(0, 7, &step).unwrap_err(),
            "insert position (at most the axis' length) 7 exceeds 6",
        ),
        (
            arr.insert(0, 3, &step).unwrap_err(),
            "resize start away from the end (whole chunks) 3 is not a positive multiple of 2",
        ),
        (
            arr.insert(0, 2, &step).unwrap_err(),
            "items a resize adds or removes away from the end (whole chunks) 1 is not a \
             positive multiple of 2",
        ),
        (
            arr.delete(0, 5, 2).unwrap_err(),
            "end of the items to delete (at most the axis' length) 7 exceeds 6",
        ),
        (arr.delete(3, 0, 1).unwrap_err(), "axis 3 is not below 2"),
        (
            arr.resize_at(&[6, 4, 1], None).unwrap_err(),
            "dimensions of the new shape (the array's): 3 given, 2 expected",
        ),
        (
            arr.resize_at(&[8, 4], Some(&[7, 0])).unwrap_err(),
            "resize start (at most the dimension's length) 7 exceeds 6",
        ),
    ];
    for (e, want) in &cases {
        let (code, msg) = message(e);
        assert_eq!(code, -12, "{msg}");
        assert!(msg.ends_with(want), "{msg:?} does not end with {want:?}");
    }
    drop(arr);
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    // a read-only handle refuses before writing anything
    let mut ro = NdArray::open(&path, OpenMode::Read).unwrap();
    for e in [
        ro.append(0, &step).unwrap_err(),
        ro.insert(0, 2, &Ref::new(&[2, 4], 0).bytes()).unwrap_err(),
        ro.delete(0, 0, 2).unwrap_err(),
        ro.resize_at(&[8, 4], None).unwrap_err(),
    ] {
        assert_eq!(
            e.io_kind(),
            Some(std::io::ErrorKind::PermissionDenied),
            "{e}"
        );
        assert!(e.to_string().contains("not allowed in Read mode"), "{e}");
    }
    assert_eq!(ro.shape(), [6, 4]);
    drop(ro);
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

// ---------------------------------------------------------------------------------------
// Concatenate and stack

#[test]
fn concatenate_copies_aligned_chunks_as_stored() {
    let (a, b, c) = (
        Ref::new(&[4, 6], 1),
        Ref::new(&[2, 6], 2),
        Ref::new(&[3, 6], 3),
    );
    let m = Location::Memory;
    let (aa, ba, ca) = (
        make(&a, &[2, 3], &[1, 3], &m),
        make(&b, &[2, 3], &[1, 3], &m),
        make(&c, &[2, 3], &[1, 3], &m),
    );
    let out = NdArray::concatenate(&[&aa, &ba, &ca], 0, &m).unwrap();
    check(&out, &Ref::concat(&[&a, &b, &c], 0));
    assert_eq!(
        (out.chunkshape(), out.blockshape()),
        (&[2, 3][..], &[1, 3][..])
    );
    let chunks = stored(&out);
    // a's and b's chunks as stored; c's first row of chunks too (b ends on a chunk edge)
    assert_eq!(chunks[..4], stored(&aa)[..]);
    assert_eq!(chunks[4..6], stored(&ba)[..]);
    assert_eq!(chunks[6..], stored(&ca)[..]);
    // c then a: a starts inside a chunk, so its chunks are built
    let out = NdArray::concatenate(&[&ca, &aa], 0, &m).unwrap();
    check(&out, &Ref::concat(&[&c, &a], 0));
    // along the other axis, with other partitions in the second array
    let d = Ref::new(&[4, 5], 4);
    let da = make(&d, &[3, 2], &[3, 1], &m);
    let out = NdArray::concatenate(&[&aa, &da], 1, &m).unwrap();
    check(&out, &Ref::concat(&[&a, &d], 1));
}

#[test]
fn stack_adds_a_dimension() {
    let m = Location::Memory;
    let refs: Vec<Ref> = (0..3).map(|k| Ref::new(&[4, 5], 100 * k)).collect();
    let arrays: Vec<NdArray> = refs.iter().map(|r| make(r, &[2, 3], &[1, 3], &m)).collect();
    let views: Vec<&NdArray> = arrays.iter().collect();
    for axis in 0..3 {
        let out = NdArray::stack(&views, axis, &m).unwrap();
        let parts: Vec<Ref> = refs.iter().map(|r| r.expand(axis)).collect();
        let parts: Vec<&Ref> = parts.iter().collect();
        check(&out, &Ref::concat(&parts, axis));
        let mut cs = vec![2, 3];
        cs.insert(axis, 1);
        assert_eq!(out.chunkshape(), &cs[..]);
    }
    // along the first axis every chunk is one of the arrays' chunks, as stored
    let out = NdArray::stack(&views, 0, &m).unwrap();
    let all: Vec<Vec<u8>> = arrays.iter().flat_map(stored).collect();
    assert_eq!(stored(&out), all);
}

#[test]
fn joining_arrays_that_disagree_is_refused() {
    let m = Location::Memory;
    let a = make(&Ref::new(&[4, 6], 1), &[2, 3], &[1, 3], &m);
    let b = make(&Ref::new(&[4, 5], 1), &[2, 3], &[1, 3], &m);
    let f = NdArray::from_buffer(
        &ArrayParams::from_dtype(&[4, 6], "<i2").unwrap(),
        &m,
        &[0; 48],
    )
    .unwrap();
    let cases = [
        (
            NdArray::concatenate(&[&a, &b], 0, &m).unwrap_err(),
            "an array to join (the first one's shape but along the axis): shape [4, 5] given, \
             [4, 6] expected",
        ),
        (
            NdArray::concatenate(&[&a, &b], 2, &m).unwrap_err(),
            "axis 2 is not below 2",
        ),
        (
            NdArray::stack(&[&a, &a], 3, &m).unwrap_err(),
            "axis 3 is not below 3",
        ),
        (
            NdArray::concatenate(&[], 0, &m).unwrap_err(),
            "arrays to join 0 is below 1",
        ),
        (
            NdArray::concatenate(&[&a, &f], 0, &m).unwrap_err(),
            "an array to join has it, the first one Some(\"<u2\")",
        ),
    ];
    for (e, want) in &cases {
        let (code, msg) = message(e);
        assert_eq!(code, -12, "{msg}");
        assert!(msg.contains(want), "{msg:?} does not contain {want:?}");
    }
}

// ---------------------------------------------------------------------------------------
// The cost of one time step

/// Items that do not compress much (a 32-bit LCG), `n` of them as f32 bits.
fn noisy(seed: u32, n: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .flat_map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (f32::from(u16::try_from(x >> 16).unwrap()) / 7.0).to_le_bytes()
        })
        .collect()
}

/// Bytes written by appending one more step to a file of `n` steps (chunks of `per_chunk`
/// steps, each step 2 chunks of the grid), and the file's length before.
fn bytes_for_one_more_step(dir: &Path, n: usize, per_chunk: usize) -> (u64, u64) {
    let path = dir.join(format!("t{n}_{per_chunk}.b2nd"));
    let p = ArrayParams::from_dtype(&[0, 45, 90], "<f4")
        .unwrap()
        .with_chunkshape(&[per_chunk, 45, 45])
        .with_blockshape(&[1, 45, 45]);
    let mut arr = NdArray::zeros(&p, &Location::File(path.clone())).unwrap();
    for t in 0..n {
        arr.append(0, &noisy(t as u32, 45 * 90)).unwrap();
    }
    arr.close().unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    let (io, (_, written)) = Counting::open(&path, true);
    let opts = OpenOptions::new(OpenMode::ReadWrite).with_sync(SyncPolicy::None);
    let mut arr = NdArray::from_schunk(SChunk::from_io(Box::new(io), &opts).unwrap()).unwrap();
    arr.append(0, &noisy(n as u32, 45 * 90)).unwrap();
    let w = written.load(Ordering::SeqCst);
    arr.close().unwrap();
    let arr = NdArray::open(&path, OpenMode::Read).unwrap();
    let (last, _) = arr.get_slice_vec(&[Slice::index(n as i64)]).unwrap();
    assert_eq!(last, noisy(n as u32, 45 * 90));
    (w, len)
}

#[test]
fn appending_a_step_writes_one_step() {
    let dir = tempfile::tempdir().unwrap();
    let step = (45 * 90 * 4) as u64;
    // one step per chunk: two new chunks; four per chunk: the last row of chunks updated
    for per_chunk in [1, 4] {
        let (w10, len10) = bytes_for_one_more_step(dir.path(), 10, per_chunk);
        let (w80, len80) = bytes_for_one_more_step(dir.path(), 81, per_chunk);
        assert!(len80 > 60 * step, "{len80}");
        // the step's chunks (moved once when updated: per_chunk steps, twice), the index
        // and the trailer, never the file
        let bound = 2 * per_chunk as u64 * step + step + 4096;
        assert!(
            w10 <= bound && w80 <= bound,
            "{w10} {w80} > {bound} ({len10} {len80})"
        );
        // what grows with the file is the index only (8 bytes a chunk, 142 more chunks here
        // for one step a chunk): relocated, then written again
        assert!(w80 <= w10 + 3 * 8 * 142 + 512, "{w10} {w80}");
    }
}
