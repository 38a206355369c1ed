//! An open frame: its header, trailer and offsets index held in memory, chunks read on
//! demand through a [`FrameIo`], and every change committed by the write protocol.
//!
//! * `open`: a new frame's first bytes, and opening a stored frame (header, trailer and
//!   offsets index checked against each other and against the store).
//! * `read`: where a chunk is, its header and bytes, partial reads and lazy chunks that read
//!   only the blocks asked for.
//! * `mutate`: append, insert, update, delete, metalayers and vlmetalayers, special fills:
//!   each checks the change and plans the new state.
//! * `commit`: the crash-safe write protocol that lays a contiguous frame's plan down, and the
//!   sync policy.
//! * `sparse`: the same for a sparse frame (chunk files first, then the index).
//!
//! The imports run one way: `mutate` uses `sparse`, `commit` and `read`; `sparse` uses
//! `commit` and `read`; all use the type and helpers of this module.

mod commit;
mod mutate;
mod open;
mod read;
mod sparse;

use super::io::{FrameIo, Obj};
use super::SyncPolicy;
use crate::chunk::{Context, Decoder};
use crate::error::{Error, Result};
use crate::format::chunk::{ChunkHeader, SpecialType, EXTENDED_HEADER_LENGTH};
use crate::format::frame::{FrameHeader, FrameType, Metalayer, Trailer};
use std::sync::atomic::AtomicUsize;

/// A chunk handed to a mutation, checked.
pub(crate) struct NewChunk<'a> {
    /// The chunk bytes (exactly `cbytes`).
    pub bytes: &'a [u8],
    /// Its uncompressed size in bytes.
    pub nbytes: usize,
    /// `Some` for zeros, NaN and uninit chunks, which are stored as index entries only.
    pub special: Option<SpecialType>,
}

impl<'a> NewChunk<'a> {
    /// Parses and checks `chunk`, its codec and filters looked up in `registry`.
    pub fn parse(registry: &crate::registry::Registry, chunk: &'a [u8]) -> Result<Self> {
        let h = ChunkHeader::parse(chunk)?;
        if h.nbytes == 0 {
            return Err(Error::Unsupported {
                what: "a frame cannot hold an empty chunk (nbytes 0)",
            });
        }
        if h.header_len != EXTENDED_HEADER_LENGTH {
            return Err(Error::Unsupported {
                what: "frames hold Blosc2 chunks with a 32-byte header, not Blosc1 chunks",
            });
        }
        Decoder::new(registry, chunk)?;
        let special = match h.special {
            SpecialType::Zero | SpecialType::Nan | SpecialType::Uninit => Some(h.special),
            _ => None,
        };
        Ok(NewChunk {
            bytes: &chunk[..h.cbytes],
            nbytes: h.nbytes,
            special,
        })
    }

    pub(super) fn stored_len(&self) -> u64 {
        if self.special.is_some() {
            0
        } else {
            self.bytes.len() as u64
        }
    }
}

/// An open frame.
pub(crate) struct Frame {
    io: Box<dyn FrameIo>,
    kind: FrameType,
    writable: bool,
    sync: SyncPolicy,
    header: FrameHeader,
    trailer: Trailer,
    trailer_bytes: Vec<u8>,
    offsets: Vec<i64>,
    offsets_chunk: Vec<u8>,
    /// Set when a write failed: the in-memory state may no longer match the store.
    poisoned: bool,
    /// Objects written since the last sync.
    dirty: Vec<Obj>,
    /// How many blocks the chunks read last had: how many `bstarts` a lazy read fetches
    /// with a chunk's header, before the header says.
    nblocks_hint: AtomicUsize,
    /// The cbytes of the chunk read last when it was small enough to be read whole (at most
    /// the lazy-read threshold), else 0: the first read of the next chunk takes that many
    /// bytes and a quarter more, so that an array of small chunks reads each in one read.
    small_chunk_hint: AtomicUsize,
    /// The registry and runtime that check, compress and decompress its chunks.
    ctx: Context,
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame")
            .field("path", &self.path())
            .field("header", &self.header)
            .field("nchunks", &self.offsets.len())
            .finish_non_exhaustive()
    }
}

/// The bytes of a whole frame: header, data pieces, offsets chunk, trailer; sets
/// `header.header_len` and `header.frame_len`.
fn frame_parts(header: &mut FrameHeader, data_len: u64, offsets: &[u8], trailer: &[u8]) {
    header.header_len = header.encoded_len();
    header.frame_len =
        header.header_len as u64 + data_len + offsets.len() as u64 + trailer.len() as u64;
}

impl Frame {
    /// The path of the frame (or index) for messages.
    pub fn path(&self) -> String {
        self.io.path(Obj::Frame)
    }

    /// The registry and runtime the frame works on.
    pub fn ctx(&self) -> &Context {
        &self.ctx
    }

    /// The committed header.
    pub fn header(&self) -> &FrameHeader {
        &self.header
    }

    /// Sets the informational thread counts that the next commit writes into the header.
    pub fn set_header_nthreads(&mut self, compress: i16, decompress: i16) {
        self.header.nthreads_c = compress;
        self.header.nthreads_d = decompress;
    }

    /// The vlmetalayers.
    pub fn vlmetalayers(&self) -> &[Metalayer] {
        &self.trailer.vlmetalayers
    }

    /// Number of chunks.
    pub fn nchunks(&self) -> usize {
        self.offsets.len()
    }

    /// The frame layout.
    pub fn kind(&self) -> FrameType {
        self.kind
    }

    /// The store.
    pub fn io(&self) -> &dyn FrameIo {
        &*self.io
    }

    /// Length of the frame (the index file for sparse frames), in bytes.
    pub fn frame_len(&self) -> u64 {
        self.header.frame_len
    }

    /// Bytes of the data section in use (0 while there is no chunk).
    fn data_len(&self) -> u64 {
        if self.offsets.is_empty() {
            0
        } else {
            self.header.cbytes as u64
        }
    }
}

#[cfg(test)]
pub(super) mod testkit {
    //! Frames in memory for the tests of this module and its children.

    use super::{Frame, NewChunk};
    use crate::chunk::{compress_vec, decompress_vec, CParams, Context};
    use crate::error::Result;
    use crate::format::frame::{FrameHeader, FrameType, Metalayer, Trailer};
    use crate::format::ids::CodecId;
    use crate::frame::io::{FrameIo, MemIo, MemStore, Obj, ReadReq, Traffic};
    use crate::frame::{FaultPlan, FaultyIo, SyncPolicy};
    use std::sync::{Arc, Mutex};

    /// A new, empty frame of layout `kind` in memory (typesize 4), and its store.
    pub fn empty(kind: FrameType) -> (Frame, MemIo) {
        let mut header = FrameHeader::new(4);
        header.frame_type = kind as u8;
        let bytes = Frame::initial_bytes(&mut header, &Trailer::default());
        let io = MemIo::new(
            MemStore {
                frame: bytes,
                chunks: Default::default(),
            },
            kind,
        );
        let frame = Frame::open(
            Box::new(io.clone()),
            true,
            SyncPolicy::None,
            Context::global(),
        )
        .unwrap();
        (frame, io)
    }

    /// The frame a reader finds in a copy of `io` now.
    pub fn reopen(io: &MemIo, kind: FrameType) -> Result<Frame> {
        let copy = MemIo::new(io.snapshot(), kind);
        Frame::open(Box::new(copy), false, SyncPolicy::None, Context::global())
    }

    /// The cparams of the test chunks: typesize 4, shuffle, LZ4, blocks of `blocksize`.
    pub fn cparams(blocksize: usize) -> CParams {
        CParams {
            codec: CodecId::LZ4,
            typesize: 4,
            blocksize,
            ..CParams::default()
        }
    }

    /// A chunk of the `n` u32 items `from, from + 1, …` (4 KiB blocks).
    pub fn ramp(from: u32, n: u32) -> Vec<u8> {
        let data: Vec<u8> = (from..from + n).flat_map(u32::to_le_bytes).collect();
        compress_vec(&cparams(4096), &data).unwrap()
    }

    /// `n` u32 items below 2^16 that LZ4 cannot shrink much: about half the bytes stay.
    pub fn noisy_items(seed: u64, n: usize) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..n)
            .flat_map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ((x & 0xffff) as u32).to_le_bytes()
            })
            .collect()
    }

    /// A chunk of [`noisy_items`] in blocks of `blocksize` bytes, with `cparams`'s filters.
    pub fn noisy(seed: u64, n: usize, blocksize: usize) -> Vec<u8> {
        compress_vec(&cparams(blocksize), &noisy_items(seed, n)).unwrap()
    }

    /// Appends `chunk` in a commit of its own.
    pub fn append(frame: &mut Frame, chunk: &[u8]) {
        frame
            .append(&[NewChunk::parse(&crate::registry::Registry::global(), chunk).unwrap()])
            .unwrap();
    }

    /// The decompressed chunks of `frame`, in order.
    pub fn contents(frame: &Frame) -> Vec<Vec<u8>> {
        (0..frame.nchunks())
            .map(|n| decompress_vec(&frame.read_chunk(n).unwrap()).unwrap())
            .collect()
    }

    /// What a reader of `io` finds: the decompressed chunks and the vlmetalayers.
    pub fn state(io: &MemIo, kind: FrameType) -> (Vec<Vec<u8>>, Vec<Metalayer>) {
        let f = reopen(io, kind).unwrap();
        (contents(&f), f.vlmetalayers().to_vec())
    }

    /// Runs `op` on frames over copies of `base` (layout `kind`) that fail at each mutation in
    /// turn, torn and not: after every failure the store must open as the frame before `op`
    /// or as the frame after it. Returns the number of mutations `op` makes.
    pub fn crash_everywhere(
        base: &MemStore,
        kind: FrameType,
        op: impl Fn(&mut Frame) -> Result<()>,
    ) -> usize {
        let before = state(&MemIo::new(base.clone(), kind), kind);
        let clean = MemIo::new(base.clone(), kind);
        let mut f = Frame::open(
            Box::new(clean.clone()),
            true,
            SyncPolicy::None,
            Context::global(),
        )
        .unwrap();
        op(&mut f).unwrap();
        drop(f);
        let after = state(&clean, kind);
        assert_ne!(before, after, "the change changes nothing");
        for k in 1.. {
            for torn in [false, true] {
                let mem = MemIo::new(base.clone(), kind);
                let plan = FaultPlan::new(k, torn);
                let io = FaultyIo::new(Box::new(mem.clone()), plan.clone());
                let mut f =
                    Frame::open(Box::new(io), true, SyncPolicy::None, Context::global()).unwrap();
                let r = op(&mut f);
                drop(f);
                if !plan.fired() {
                    r.unwrap();
                    return k - 1;
                }
                assert!(r.is_err(), "mutation {k} failed unseen");
                let found = state(&mem, kind);
                assert!(
                    found == before || found == after,
                    "a crash at mutation {k} (torn: {torn}) leaves neither frame: {} chunks, \
                     {} before, {} after; vlmeta {:?}",
                    found.0.len(),
                    before.0.len(),
                    after.0.len(),
                    found.1.iter().map(|m| &m.name).collect::<Vec<_>>()
                );
            }
        }
        unreachable!()
    }

    /// What a [`Recording`] store saw.
    #[derive(Debug, Default)]
    pub struct Log {
        /// Bytes read.
        pub read: u64,
        /// Calls of `read_at`.
        pub singles: usize,
        /// The number of reads of each `read_many`, in order.
        pub batches: Vec<usize>,
        /// The objects synced, in order.
        pub synced: Vec<Obj>,
    }

    /// A [`MemIo`] that counts the bytes read and records the syncs.
    pub struct Recording {
        pub inner: MemIo,
        pub log: Arc<Mutex<Log>>,
    }

    impl Recording {
        pub fn new(inner: MemIo) -> (Self, Arc<Mutex<Log>>) {
            let log = Arc::new(Mutex::new(Log::default()));
            let rec = Recording {
                inner,
                log: log.clone(),
            };
            (rec, log)
        }
    }

    impl FrameIo for Recording {
        fn read_at(&self, obj: Obj, pos: u64, buf: &mut [u8]) -> Result<()> {
            let mut log = self.log.lock().unwrap();
            log.read += buf.len() as u64;
            log.singles += 1;
            self.inner.read_at(obj, pos, buf)
        }
        fn read_many(&self, reqs: &mut [ReadReq<'_>]) -> Result<Traffic> {
            let mut log = self.log.lock().unwrap();
            log.batches.push(reqs.len());
            for r in reqs.iter_mut() {
                log.read += r.buf.len() as u64;
                self.inner.read_at(r.obj, r.pos, r.buf)?;
            }
            let bytes = reqs.iter().map(|r| r.buf.len() as u64).sum();
            Ok(Traffic {
                bytes,
                requests: reqs.len() as u64,
            })
        }
        fn len(&self, obj: Obj) -> Result<u64> {
            self.inner.len(obj)
        }
        fn write_at(&mut self, obj: Obj, pos: u64, data: &[u8]) -> Result<()> {
            self.inner.write_at(obj, pos, data)
        }
        fn set_len(&mut self, obj: Obj, len: u64) -> Result<()> {
            self.inner.set_len(obj, len)
        }
        fn sync(&mut self, obj: Obj) -> Result<()> {
            self.log.lock().unwrap().synced.push(obj);
            self.inner.sync(obj)
        }
        fn replace(&mut self, obj: Obj, parts: &[&[u8]], durable: bool) -> Result<()> {
            self.inner.replace(obj, parts, durable)
        }
        fn remove(&mut self, obj: Obj) -> Result<()> {
            self.inner.remove(obj)
        }
        fn path(&self, obj: Obj) -> String {
            self.inner.path(obj)
        }
        fn frame_type(&self) -> FrameType {
            self.inner.frame_type()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::{empty, ramp};
    use super::*;
    use crate::chunk::{compress_vec, special_chunk, CParams};

    #[test]
    fn new_chunks_are_checked_and_trimmed() {
        let chunk = ramp(0, 1000);
        let mut padded = chunk.clone();
        padded.extend_from_slice(&[0xee; 10]);
        let c = NewChunk::parse(&crate::registry::Registry::global(), &padded).unwrap();
        assert_eq!(c.bytes, &chunk[..]);
        assert_eq!(
            (c.nbytes, c.special, c.stored_len()),
            (4000, None, chunk.len() as u64)
        );

        let cp = CParams {
            typesize: 4,
            ..CParams::default()
        };
        let zeros = special_chunk(&cp, SpecialType::Zero, 4000, None).unwrap();
        let z = NewChunk::parse(&crate::registry::Registry::global(), &zeros).unwrap();
        assert_eq!((z.special, z.stored_len()), (Some(SpecialType::Zero), 0));
        // A repeated value is stored: the index has no entry for it.
        let value =
            special_chunk(&cp, SpecialType::Value, 4000, Some(&7u32.to_le_bytes())).unwrap();
        let v = NewChunk::parse(&crate::registry::Registry::global(), &value).unwrap();
        assert_eq!((v.special, v.stored_len()), (None, value.len() as u64));

        let e = NewChunk::parse(
            &crate::registry::Registry::global(),
            &compress_vec(&cp, &[]).unwrap(),
        )
        .err()
        .unwrap();
        assert!(
            matches!(e, Error::Unsupported { what } if what.contains("empty chunk")),
            "{e}"
        );
        // A Blosc1 chunk (16-byte header, memcpyed): readable, but not in a frame.
        let mut blosc1 = vec![0x02, 0x01, 0x02, 0x01];
        for v in [4i32, 4, 20] {
            blosc1.extend_from_slice(&v.to_le_bytes());
        }
        blosc1.extend_from_slice(&[1, 2, 3, 4]);
        let e = NewChunk::parse(&crate::registry::Registry::global(), &blosc1)
            .err()
            .unwrap();
        assert!(
            matches!(e, Error::Unsupported { what } if what.contains("Blosc1")),
            "{e}"
        );
        // A chunk the decoder refuses (an instrumentation chunk) never reaches a frame.
        let mut instr = chunk.clone();
        instr[31] |= crate::format::chunk::B2FLAG_INSTR_CODEC;
        let e = NewChunk::parse(&crate::registry::Registry::global(), &instr)
            .err()
            .unwrap();
        assert!(e.to_string().contains("instrumentation"), "{e}");
    }

    #[test]
    fn frame_parts_give_the_lengths() {
        let mut h = FrameHeader::new(4);
        h.metalayers.push(Metalayer {
            name: "m".into(),
            content: vec![1, 2, 3],
        });
        frame_parts(&mut h, 100, &[0; 40], &[0; 30]);
        assert_eq!(h.header_len, h.encoded_len());
        assert_eq!(h.to_bytes().len(), h.header_len);
        assert_eq!(h.frame_len, h.header_len as u64 + 170);
    }

    #[test]
    fn the_data_section_is_empty_without_chunks() {
        for kind in [FrameType::Contiguous, FrameType::Sparse] {
            let (mut f, _) = empty(kind);
            assert_eq!((f.nchunks(), f.data_len(), f.kind()), (0, 0, kind));
            let c = ramp(0, 1000);
            super::testkit::append(&mut f, &c);
            assert_eq!(f.data_len(), f.header().cbytes as u64);
            assert_eq!(f.header().cbytes, c.len() as i64);
            f.delete(0).unwrap();
            assert_eq!((f.nchunks(), f.data_len()), (0, 0));
        }
    }
}
