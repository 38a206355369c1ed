//! Arrays reading through the shared block cache (`NdArray::with_cache`): the same values as
//! uncached reads, each block decompressed once however many handles and threads read it,
//! and never a stale block: a file rewritten in place, appended to or replaced on disk,
//! opened again, gets its new blocks, and a write through a cached array is read back.

use std::sync::{Arc, Barrier};
use strata::cache::{BlockCache, DatasetVersion};
use strata::ndarray::{ArrayParams, Location, NdArray, OpenMode, Slice};

fn items(n: usize, salt: u32) -> Vec<u8> {
    (0..n as u32)
        .flat_map(|i| (i.wrapping_mul(2_654_435_761) ^ salt).to_le_bytes())
        .collect()
}

/// A (300, 400) `<u4` array in chunks of (100, 128), blocks of (20, 32).
fn make(path: &std::path::Path, salt: u32) -> Vec<u8> {
    let data = items(300 * 400, salt);
    let params = ArrayParams::from_dtype(&[300, 400], "<u4")
        .unwrap()
        .with_chunkshape(&[100, 128])
        .with_blockshape(&[20, 32])
        .with_overwrite(true);
    NdArray::from_buffer(&params, &Location::File(path.to_path_buf()), &data)
        .unwrap()
        .close()
        .unwrap();
    data
}

/// Items `[r0..r1, c0..c1]` of a (300, 400) `<u4` C-order buffer.
fn window(data: &[u8], r: std::ops::Range<usize>, c: std::ops::Range<usize>) -> Vec<u8> {
    r.flat_map(|i| data[(i * 400 + c.start) * 4..(i * 400 + c.end) * 4].to_vec())
        .collect()
}

#[test]
fn cached_reads_equal_uncached_and_share_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.b2nd");
    let data = make(&path, 1);
    let cache = Arc::new(BlockCache::new(64 << 20));
    let plain = NdArray::open(&path, OpenMode::Read).unwrap();
    let a = NdArray::open(&path, OpenMode::Read)
        .unwrap()
        .with_cache(Arc::clone(&cache));
    let b = NdArray::open(&path, OpenMode::Read)
        .unwrap()
        .with_cache(Arc::clone(&cache));
    assert_eq!(
        a.cache().unwrap().1,
        b.cache().unwrap().1,
        "one file, one version"
    );
    let keys = [
        vec![Slice::range(10, 30), Slice::range(50, 90)],
        vec![Slice::index(150), Slice::FULL],
        vec![Slice::FULL, Slice::index(399)],
        vec![Slice::new(Some(-1), None, -7), Slice::new(None, None, 13)],
        vec![Slice::FULL, Slice::FULL],
    ];
    for k in &keys {
        let want = plain.get_slice_vec(k).unwrap();
        assert_eq!(a.get_slice_vec(k).unwrap(), want, "{k:?}");
        let before = cache.stats();
        assert_eq!(b.get_slice_vec(k).unwrap(), want, "{k:?}");
        let after = cache.stats();
        assert_eq!(
            after.misses, before.misses,
            "{k:?}: b decompressed what a had"
        );
    }
    assert_eq!(
        a.get_slice_vec(&[Slice::range(0, 300), Slice::range(0, 400)])
            .unwrap()
            .0,
        data
    );
    // The whole array: every block holding items, 5 x 4 per chunk of the first three chunk
    // columns, 5 x 1 in the last (columns 384..400), over 3 chunk rows.
    let s = cache.stats();
    assert_eq!(s.entries, 3 * (3 * 5 * 4 + 5));
    assert!(s.bytes <= s.capacity);
    let mut out = vec![0u8; 20 * 40 * 4];
    let st = b
        .get_slice(&[Slice::range(20, 40), Slice::range(32, 72)], &mut out)
        .unwrap();
    assert_eq!((st.blocks_decompressed, st.blocks_from_cache), (0, 2));
    assert_eq!(out, window(&data, 20..40, 32..72));
}

#[test]
fn a_hyperplane_read_by_64_threads_decompresses_each_block_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.b2nd");
    let data = make(&path, 2);
    let cache = Arc::new(BlockCache::new(64 << 20));
    let arr = Arc::new(
        NdArray::open(&path, OpenMode::Read)
            .unwrap()
            .with_cache(Arc::clone(&cache)),
    );
    let barrier = Arc::new(Barrier::new(64));
    let want: Vec<u8> = (0..300)
        .flat_map(|i| data[(i * 400 + 77) * 4..(i * 400 + 78) * 4].to_vec())
        .collect();
    let threads: Vec<_> = (0..64)
        .map(|_| {
            let (arr, barrier, want) = (Arc::clone(&arr), Arc::clone(&barrier), want.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let (got, shape) = arr.get_slice_vec(&[Slice::FULL, Slice::index(77)]).unwrap();
                assert_eq!(shape, [300, 1]);
                assert_eq!(got, want);
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // Column 77 crosses 3 chunks of 5 blocks each along axis 0: 15 blocks.
    let s = cache.stats();
    assert_eq!(s.misses, 15, "{s:?}");
    assert_eq!(s.hits, 63 * 15, "{s:?}");
}

#[test]
fn files_changed_on_disk_are_never_served_stale() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.b2nd");
    let cache = Arc::new(BlockCache::new(64 << 20));
    let key = [Slice::range(100, 140), Slice::range(0, 64)];
    let first = make(&path, 3);
    let a = NdArray::open(&path, OpenMode::Read)
        .unwrap()
        .with_cache(Arc::clone(&cache));
    assert_eq!(
        a.get_slice_vec(&key).unwrap().0,
        window(&first, 100..140, 0..64)
    );
    // Rewritten in place by another writer (the same inode).
    {
        let mut w = NdArray::open(&path, OpenMode::ReadWrite).unwrap();
        w.set_slice(&key, &vec![7u8; 40 * 64 * 4]).unwrap();
        w.close().unwrap();
    }
    let b = NdArray::open(&path, OpenMode::Read)
        .unwrap()
        .with_cache(Arc::clone(&cache));
    assert_ne!(a.cache().unwrap().1, b.cache().unwrap().1);
    assert_eq!(
        b.get_slice_vec(&key).unwrap().0,
        vec![7u8; 40 * 64 * 4],
        "stale after an in-place write"
    );
    // Appended to (resized: new chunks at the end).
    {
        let mut w = NdArray::open(&path, OpenMode::ReadWrite).unwrap();
        w.resize(&[400, 400]).unwrap();
        w.close().unwrap();
    }
    let c = NdArray::open(&path, OpenMode::Read)
        .unwrap()
        .with_cache(Arc::clone(&cache));
    assert_eq!(c.shape(), [400, 400]);
    assert_eq!(c.get_slice_vec(&key).unwrap().0, vec![7u8; 40 * 64 * 4]);
    assert_eq!(
        c.get_slice_vec(&[Slice::index(350), Slice::range(0, 2)])
            .unwrap()
            .0,
        vec![0u8; 8]
    );
    // Replaced by another file (rename over it).
    let tmp = dir.path().join("b.b2nd");
    let other = make(&tmp, 4);
    std::fs::rename(&tmp, &path).unwrap();
    let d = NdArray::open(&path, OpenMode::Read)
        .unwrap()
        .with_cache(Arc::clone(&cache));
    assert_eq!(
        d.get_slice_vec(&key).unwrap().0,
        window(&other, 100..140, 0..64),
        "stale after a replace"
    );
    // The first handle still reads the file it opened, and its blocks are its own.
    assert_eq!(
        a.get_slice_vec(&key).unwrap().0,
        window(&first, 100..140, 0..64)
    );
}

#[test]
fn writes_through_a_cached_array_are_read_back() {
    let cache = Arc::new(BlockCache::new(8 << 20));
    let params = ArrayParams::from_dtype(&[64, 64], "|u1")
        .unwrap()
        .with_chunkshape(&[32, 32])
        .with_blockshape(&[8, 8]);
    let data: Vec<u8> = (0..64 * 64).map(|i| (i % 251) as u8).collect();
    let mut a = NdArray::from_buffer(&params, &Location::Memory, &data)
        .unwrap()
        .with_cache_as(Arc::clone(&cache), DatasetVersion::unique());
    let key = [Slice::range(0, 8), Slice::range(0, 8)];
    assert_eq!(a.get_slice_vec(&key).unwrap().0, window8(&data));
    a.set_slice(&key, &[9u8; 64]).unwrap();
    assert_eq!(a.get_slice_vec(&key).unwrap().0, [9u8; 64]);
    a.resize(&[64, 70]).unwrap();
    assert_eq!(a.get_slice_vec(&key).unwrap().0, [9u8; 64]);
}

fn window8(data: &[u8]) -> Vec<u8> {
    (0..8)
        .flat_map(|i| data[i * 64..i * 64 + 8].to_vec())
        .collect()
}

#[test]
fn a_small_cache_stays_within_its_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.b2nd");
    let data = make(&path, 5);
    // Room for a few blocks of 20 x 32 x 4 = 2560 bytes.
    let cache = Arc::new(BlockCache::new(16 * (2560 + strata::cache::ENTRY_OVERHEAD)));
    let a = NdArray::open(&path, OpenMode::Read)
        .unwrap()
        .with_cache(Arc::clone(&cache));
    for r in (0..300).step_by(17) {
        let k = [Slice::range(r as i64, (r + 5).min(300) as i64), Slice::FULL];
        assert_eq!(
            a.get_slice_vec(&k).unwrap().0,
            window(&data, r..(r + 5).min(300), 0..400)
        );
        let s = cache.stats();
        assert!(s.bytes <= s.capacity, "{s:?}");
    }
    let s = cache.stats();
    assert!(s.evictions > 0 && s.entries <= 16, "{s:?}");
}
