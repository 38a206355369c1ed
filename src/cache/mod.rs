//! The shared cache of decompressed blocks: byte-bounded, sharded, shared by `Arc` between
//! arrays, threads and the daemon's clients, so that a block many readers touch is
//! decompressed once.
//!
//! * [`BlockCache`]: up to `capacity` bytes of blocks in shards (one per [`SHARD_BYTES`] of
//!   capacity, at most [`SHARDS`]), each its own lock, evicting by CLOCK (second chance: a block read since the hand last passed is
//!   kept one more round). Loads are single-flight: readers missing the same block at once
//!   wait for the one that decompresses it ([`BlockCache::get_or_load`]).
//! * [`BlockKey`]: dataset version, chunk number, block number; hashed by a seeded
//!   multiply-mix, not SipHash (`hash`: every cached read hashes one key per block it touches).
//! * [`DatasetVersion`]: what names one state of a dataset: the file's identity (device,
//!   inode, size, modification and change times, taken from the open descriptor) and the
//!   frame's state (its header, metalayers and vlmetalayers, its chunk count). A file
//!   replaced, appended to or rewritten in place gets a new version, so its old blocks are
//!   never served for it; they age out of the cache.
//! * [`CacheStats`]: hits, misses (= loads: blocks decompressed), evictions, bytes held.
//!
//! [`crate::ndarray::NdArray::with_cache`] makes an array read its blocks through a cache.
//!
//! ```
//! use std::sync::Arc;
//! use strata::cache::{BlockCache, BlockKey, DatasetVersion};
//! let cache = Arc::new(BlockCache::new(1 << 20));
//! let key = BlockKey { dataset: DatasetVersion::unique(), nchunk: 3, nblock: 7 };
//! let a = cache.get_or_load(key, 4, |out| { out.copy_from_slice(&[1, 2, 3, 4]); Ok(()) })?;
//! let b = cache.get_or_load(key, 4, |_| unreachable!("a hit"))?;
//! assert_eq!((&a[..], &b[..]), (&[1u8, 2, 3, 4][..], &[1u8, 2, 3, 4][..]));
//! let s = cache.stats();
//! assert_eq!((s.hits, s.misses, s.entries), (1, 1, 1));
//! # Ok::<(), strata::Error>(())
//! ```
#![forbid(unsafe_code)]

mod hash;

use crate::error::Result;
pub use crate::frame::FileIdentity;
use crate::schunk::SChunk;
use hash::KeyHashes;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher};
use std::ops::Deref;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// Most shards of a cache (each its own lock).
pub const SHARDS: usize = 32;
/// Capacity per shard below which a cache has fewer shards (a block is kept only if it fits
/// in its shard's share).
pub const SHARD_BYTES: u64 = 8 << 20;
/// Bytes counted per entry besides its data (key, slot, map entry, allocation).
pub const ENTRY_OVERHEAD: u64 = 96;

/// One state of one dataset (see the module docs), as a 64-bit name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DatasetVersion(pub u64);

/// Makes unique versions: a counter, mixed so that they do not collide with hashed ones in
/// practice.
static UNIQUE: AtomicU64 = AtomicU64::new(1);

impl DatasetVersion {
    /// A version no other dataset has (for data without a file, or after a change made
    /// through the array itself).
    #[must_use]
    pub fn unique() -> DatasetVersion {
        let n = UNIQUE.fetch_add(1, Ordering::Relaxed);
        DatasetVersion(n.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5bd1_e995_0000_0001)
    }

    /// The version of the dataset in `schunk`: its file's identity when it was opened (for
    /// a remote frame, its validator: URL, `ETag` or `Last-Modified`, length) and its frame's
    /// state (header, metalayers, vlmetalayers, chunk count); a unique version for a
    /// super-chunk in memory, or a remote one whose server sends no validator.
    #[must_use]
    pub fn of(schunk: &SChunk) -> DatasetVersion {
        let (id, validator) = (schunk.identity(), schunk.validator());
        if id.is_none() && validator.is_none() {
            return DatasetVersion::unique();
        }
        let header = schunk.header().fixed_bytes();
        let nchunks = (schunk.nchunks() as u64).to_le_bytes();
        let mut parts: Vec<&[u8]> = vec![&header, &nchunks];
        for name in schunk.meta_names() {
            parts.push(name.as_bytes());
            parts.push(schunk.meta(name).unwrap_or_default());
        }
        for name in schunk.vlmeta_names() {
            parts.push(name.as_bytes());
            parts.push(schunk.vlmeta_chunk(name).unwrap_or_default());
        }
        match (id, validator) {
            (Some(id), _) => DatasetVersion::of_file(&id, &parts),
            (None, v) => DatasetVersion::hashed(&("remote", v), &parts),
        }
    }

    /// The version of a dataset stored in the file of identity `file`, whose frame has
    /// `frame_state` (the bytes that change whenever its chunks, metalayers or
    /// vlmetalayers do).
    #[must_use]
    pub fn of_file(file: &FileIdentity, frame_state: &[&[u8]]) -> DatasetVersion {
        DatasetVersion::hashed(file, frame_state)
    }

    /// The hash of `store` (what names the stored file's version) and `frame_state`.
    fn hashed(store: &impl Hash, frame_state: &[&[u8]]) -> DatasetVersion {
        let mut h = std::hash::DefaultHasher::new();
        store.hash(&mut h);
        for part in frame_state {
            part.hash(&mut h);
        }
        DatasetVersion(h.finish())
    }
}

/// A block: dataset version, chunk, block in the chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockKey {
    /// The dataset's version.
    pub dataset: DatasetVersion,
    /// The chunk number.
    pub nchunk: u64,
    /// The block number in the chunk.
    pub nblock: u32,
}

/// A decompressed block held by the cache (shared; dropping it does not evict it).
#[derive(Debug, Clone)]
pub struct Block(Arc<Vec<u8>>);

impl Deref for Block {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl AsRef<[u8]> for Block {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// What a cache did since it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Reads answered from the cache (those that waited for another reader's load included).
    pub hits: u64,
    /// Reads that loaded (decompressed) the block.
    pub misses: u64,
    /// Of the hits, reads that waited for a load another reader was doing.
    pub coalesced: u64,
    /// Blocks stored.
    pub inserts: u64,
    /// Blocks evicted to make room.
    pub evictions: u64,
    /// Bytes held now (data plus [`ENTRY_OVERHEAD`] per block).
    pub bytes: u64,
    /// Blocks held now.
    pub entries: u64,
    /// The byte bound.
    pub capacity: u64,
}

/// A load in progress: readers of the same key wait on it.
#[derive(Debug, Default)]
struct Pending {
    done: Mutex<bool>,
    cv: Condvar,
}

impl Pending {
    fn finish(&self) {
        *self.done.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.cv.notify_all();
    }

    fn wait(&self) {
        let mut done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
        while !*done {
            done = self.cv.wait(done).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

#[derive(Debug)]
struct Slot {
    key: BlockKey,
    data: Arc<Vec<u8>>,
    referenced: bool,
}

#[derive(Debug)]
struct Shard {
    index: HashMap<BlockKey, usize, KeyHashes>,
    slots: Vec<Option<Slot>>,
    free: Vec<usize>,
    hand: usize,
    bytes: u64,
    loading: HashMap<BlockKey, Arc<Pending>, KeyHashes>,
}

fn cost(len: usize) -> u64 {
    len as u64 + ENTRY_OVERHEAD
}

impl Shard {
    fn new(hashes: KeyHashes) -> Shard {
        Shard {
            index: HashMap::with_hasher(hashes),
            slots: Vec::new(),
            free: Vec::new(),
            hand: 0,
            bytes: 0,
            loading: HashMap::with_hasher(hashes),
        }
    }

    fn get(&mut self, key: &BlockKey) -> Option<Arc<Vec<u8>>> {
        let &i = self.index.get(key)?;
        let slot = self.slots[i].as_mut()?;
        slot.referenced = true;
        Some(Arc::clone(&slot.data))
    }

    /// Inserts `data` for `key` within `limit` bytes; returns the blocks evicted.
    fn insert(&mut self, key: BlockKey, data: Arc<Vec<u8>>, limit: u64) -> u64 {
        let need = cost(data.len());
        if need > limit || self.index.contains_key(&key) {
            return 0;
        }
        let mut evicted = 0;
        while self.bytes + need > limit && !self.index.is_empty() {
            let n = self.slots.len();
            let i = self.hand % n;
            self.hand = (i + 1) % n;
            let Some(slot) = self.slots[i].as_mut() else {
                continue;
            };
            if slot.referenced {
                slot.referenced = false;
                continue;
            }
            if let Some(s) = self.slots[i].take() {
                self.index.remove(&s.key);
                self.bytes -= cost(s.data.len());
                self.free.push(i);
                evicted += 1;
            }
        }
        let slot = Slot {
            key,
            data,
            referenced: false,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(slot);
                i
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        };
        self.index.insert(key, i);
        self.bytes += need;
        evicted
    }
}

/// The cache (see the module docs).
#[derive(Debug)]
pub struct BlockCache {
    shards: Box<[Mutex<Shard>]>,
    capacity: u64,
    hashes: KeyHashes,
    hits: AtomicU64,
    misses: AtomicU64,
    coalesced: AtomicU64,
    inserts: AtomicU64,
    evictions: AtomicU64,
}

/// Ends a load whatever happens to the loader (error, panic): the key stops being loading
/// and its waiters wake.
struct LoadGuard<'c> {
    shard: &'c Mutex<Shard>,
    key: BlockKey,
    pending: Arc<Pending>,
}

impl Drop for LoadGuard<'_> {
    fn drop(&mut self) {
        lock(self.shard).loading.remove(&self.key);
        self.pending.finish();
    }
}

fn lock(m: &Mutex<Shard>) -> MutexGuard<'_, Shard> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl BlockCache {
    /// A cache of at most `capacity` bytes (0: nothing is kept, every read loads).
    #[must_use]
    pub fn new(capacity: u64) -> BlockCache {
        let n = (capacity / SHARD_BYTES).clamp(1, SHARDS as u64) as usize;
        let hashes = KeyHashes::random();
        BlockCache {
            shards: (0..n).map(|_| Mutex::new(Shard::new(hashes))).collect(),
            capacity,
            hashes,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            coalesced: AtomicU64::new(0),
            inserts: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
        }
    }

    /// The byte bound.
    #[must_use]
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    fn shard(&self, key: &BlockKey) -> &Mutex<Shard> {
        // Bits the shard's maps hardly use (they take the low bits for the bucket, the top
        // ones for the tag), so that keys of one shard still spread over its buckets.
        let h = self.hashes.hash_one(key) >> 40;
        &self.shards[(h as usize) % self.shards.len()]
    }

    fn shard_limit(&self) -> u64 {
        self.capacity / self.shards.len() as u64
    }

    /// The block `key`, if held (counted as a hit or a miss).
    #[must_use]
    pub fn get(&self, key: &BlockKey) -> Option<Block> {
        let got = lock(self.shard(key)).get(key);
        let counter = if got.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        got.map(Block)
    }

    /// The blocks `keys`, if every one is held (counted as hits then; nothing is counted
    /// otherwise).
    #[must_use]
    pub fn get_all(&self, keys: &[BlockKey]) -> Option<Vec<Block>> {
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            out.push(Block(lock(self.shard(k)).get(k)?));
        }
        self.hits.fetch_add(keys.len() as u64, Ordering::Relaxed);
        Some(out)
    }

    /// Stores `data` as block `key` (unless it is larger than a shard's share of the
    /// capacity, `capacity / shards`, or `key` is held already), evicting other blocks as
    /// needed; returns `data` as a shared block, held or not.
    pub fn insert(&self, key: BlockKey, data: Vec<u8>) -> Block {
        let data = Arc::new(data);
        self.put(self.shard(&key), key, Arc::clone(&data));
        Block(data)
    }

    fn put(&self, shard: &Mutex<Shard>, key: BlockKey, data: Arc<Vec<u8>>) {
        let len = data.len();
        let evicted = lock(shard).insert(key, data, self.shard_limit());
        if cost(len) <= self.shard_limit() {
            self.inserts.fetch_add(1, Ordering::Relaxed);
        }
        self.evictions.fetch_add(evicted, Ordering::Relaxed);
    }

    /// The block `key` of `len` bytes: from the cache, or made by `load` (which fills a
    /// zeroed buffer of `len` bytes) and kept. Readers that miss the same key while it loads
    /// wait for that load instead of repeating it; if it fails, they load it themselves.
    ///
    /// # Errors
    /// `load`'s error; [`crate::Error::MemoryAlloc`] when the buffer cannot be allocated. A panic in
    /// `load` is resumed here after the waiters were released.
    pub fn get_or_load(
        &self,
        key: BlockKey,
        len: usize,
        load: impl FnOnce(&mut [u8]) -> Result<()>,
    ) -> Result<Block> {
        let shard = self.shard(&key);
        let mut waited = false;
        let pending = loop {
            let mut s = lock(shard);
            if let Some(d) = s.get(&key) {
                self.hits.fetch_add(1, Ordering::Relaxed);
                if waited {
                    self.coalesced.fetch_add(1, Ordering::Relaxed);
                }
                return Ok(Block(d));
            }
            if let Some(p) = s.loading.get(&key).map(Arc::clone) {
                drop(s);
                p.wait();
                waited = true;
                continue;
            }
            let p = Arc::new(Pending::default());
            s.loading.insert(key, Arc::clone(&p));
            break p;
        };
        let _guard = LoadGuard {
            shard,
            key,
            pending,
        };
        self.misses.fetch_add(1, Ordering::Relaxed);
        let mut buf = crate::alloc::zeroed(len)?;
        match panic::catch_unwind(AssertUnwindSafe(|| load(&mut buf))) {
            Ok(Ok(())) => {
                let data = Arc::new(buf);
                self.put(shard, key, Arc::clone(&data));
                Ok(Block(data))
            }
            Ok(Err(e)) => Err(e),
            Err(payload) => panic::resume_unwind(payload),
        }
    }

    /// Drops every block (the counters stay).
    pub fn clear(&self) {
        for s in self.shards.iter() {
            let mut s = lock(s);
            s.index.clear();
            s.slots.clear();
            s.free.clear();
            s.bytes = 0;
            s.hand = 0;
        }
    }

    /// The counters and what is held now.
    #[must_use]
    pub fn stats(&self) -> CacheStats {
        let (mut bytes, mut entries) = (0, 0);
        for s in self.shards.iter() {
            let s = lock(s);
            bytes += s.bytes;
            entries += s.index.len() as u64;
        }
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        CacheStats {
            hits: get(&self.hits),
            misses: get(&self.misses),
            coalesced: get(&self.coalesced),
            inserts: get(&self.inserts),
            evictions: get(&self.evictions),
            bytes,
            entries,
            capacity: self.capacity,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    fn key(v: DatasetVersion, nchunk: u64, nblock: u32) -> BlockKey {
        BlockKey {
            dataset: v,
            nchunk,
            nblock,
        }
    }

    #[test]
    fn bounded_by_bytes_and_evicts() {
        let cap = 4 * (1000 + ENTRY_OVERHEAD);
        let c = BlockCache::new(cap);
        assert_eq!(c.shards.len(), 1);
        let v = DatasetVersion::unique();
        for n in 0..1000 {
            c.insert(key(v, n, 0), vec![n as u8; 1000]);
            assert!(c.stats().bytes <= cap);
        }
        let s = c.stats();
        assert_eq!(s.inserts, 1000);
        assert_eq!((s.entries, s.evictions), (4, 996), "{s:?}");
        assert_eq!(s.evictions + s.entries, 1000);
        // what is held is right
        for n in 0..1000 {
            if let Some(b) = c.get(&key(v, n, 0)) {
                assert_eq!(b[..], vec![n as u8; 1000][..]);
            }
        }
        // too large for a shard: returned, not kept
        let big = c.get_or_load(key(v, 5000, 0), 1 << 20, |o| {
            o.fill(7);
            Ok(())
        });
        assert_eq!(big.unwrap().len(), 1 << 20);
        assert!(c.get(&key(v, 5000, 0)).is_none());
        c.clear();
        assert_eq!((c.stats().bytes, c.stats().entries), (0, 0));
        let none = BlockCache::new(0);
        none.insert(key(v, 0, 0), vec![1]);
        assert_eq!(none.stats().entries, 0);
    }

    #[test]
    fn second_chance_keeps_blocks_in_use() {
        // One shard: 3 blocks fit.
        let c = BlockCache::new(3 * (100 + ENTRY_OVERHEAD));
        let v = DatasetVersion::unique();
        // Find keys of one shard.
        let mut same = Vec::new();
        let first = key(v, 0, 0);
        for n in 0.. {
            let k = key(v, n, 0);
            if std::ptr::eq(c.shard(&k), c.shard(&first)) {
                same.push(k);
            }
            if same.len() == 5 {
                break;
            }
        }
        for k in &same[..3] {
            c.insert(*k, vec![1; 100]);
        }
        assert!(c.get(&same[0]).is_some()); // used: survives the next eviction
        c.insert(same[3], vec![2; 100]);
        assert!(c.get(&same[0]).is_some());
        assert!(c.get(&same[1]).is_none(), "the unused block goes first");
    }

    #[test]
    fn versions_separate_datasets() {
        let c = BlockCache::new(1 << 20);
        let id = FileIdentity {
            dev: 1,
            ino: 2,
            size: 3,
            mtime_ns: 4,
            ctime_ns: 5,
        };
        let a = DatasetVersion::of_file(&id, &[b"header", b"index"]);
        assert_eq!(a, DatasetVersion::of_file(&id, &[b"header", b"index"]));
        let appended =
            DatasetVersion::of_file(&FileIdentity { size: 4, ..id }, &[b"header", b"index"]);
        let rewritten = DatasetVersion::of_file(&id, &[b"header", b"index2"]);
        let replaced =
            DatasetVersion::of_file(&FileIdentity { ino: 9, ..id }, &[b"header", b"index"]);
        assert!(a != appended && a != rewritten && a != replaced);
        assert_ne!(DatasetVersion::unique(), DatasetVersion::unique());
        c.insert(key(a, 0, 0), vec![1]);
        assert!(c.get(&key(appended, 0, 0)).is_none());
        assert!(c.get(&key(a, 0, 0)).is_some());
    }

    #[test]
    fn concurrent_misses_load_once() {
        let c = Arc::new(BlockCache::new(1 << 20));
        let k = key(DatasetVersion::unique(), 1, 2);
        let loads = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (c, loads) = (Arc::clone(&c), Arc::clone(&loads));
                std::thread::spawn(move || {
                    let b = c
                        .get_or_load(k, 8, |o| {
                            loads.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(50));
                            o.copy_from_slice(b"abcdefgh");
                            Ok(())
                        })
                        .unwrap();
                    assert_eq!(&b[..], b"abcdefgh");
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(loads.load(Ordering::SeqCst), 1);
        let s = c.stats();
        assert_eq!((s.misses, s.hits), (1, 15));
        assert!(s.coalesced >= 1);
    }

    #[test]
    fn a_failed_or_panicking_load_releases_the_waiters() {
        let c = BlockCache::new(1 << 20);
        let k = key(DatasetVersion::unique(), 0, 0);
        let broken = || Error::Codec {
            id: 1,
            message: "broken".into(),
        };
        let e = c.get_or_load(k, 4, |_| Err(broken()));
        assert_eq!(e.unwrap_err(), broken());
        let p = panic::catch_unwind(AssertUnwindSafe(|| {
            let _ = c.get_or_load(k, 4, |_| panic!("in a load"));
        }));
        assert!(p.is_err());
        // Neither left the key loading: the next read loads it.
        let b = c.get_or_load(k, 4, |o| {
            o.fill(9);
            Ok(())
        });
        assert_eq!(&b.unwrap()[..], &[9, 9, 9, 9]);
        assert_eq!(c.stats().misses, 3);
    }
}
