//! Crash safety, by fault injection: every operation is stopped after each of its writes
//! (the k-th write fails, and with `torn` lands only up to its last sector boundary), for
//! every k, on a contiguous frame in memory and in a file and on a sparse frame. Each time the
//! store must reopen as the frame before the operation or the frame after it — never a mix,
//! never an error — and accept further writes.

use std::collections::BTreeMap;
use std::path::Path;
use strata::chunk::{compress_vec, special_chunk, CParams};
use strata::format::chunk::SpecialType;
use strata::format::frame::FrameType;
use strata::frame::{FaultPlan, FaultyIo, FileIo, FrameIo, MemIo, MemStore, OpenMode, SyncPolicy};
use strata::schunk::{Location, OpenOptions, SChunk, SChunkOptions};

const CS: usize = 4000;

fn cp() -> CParams {
    CParams {
        typesize: 4,
        nthreads: 1,
        ..CParams::default()
    }
}

fn piece(i: u32) -> Vec<u8> {
    (0..CS as u32 / 4)
        .flat_map(|k| (k * 3 + i * 1000).to_le_bytes())
        .collect()
}

fn chunk(i: u32) -> Vec<u8> {
    compress_vec(&cp(), &piece(i)).unwrap()
}

/// Random-looking data compresses worse: a bigger chunk.
fn big_chunk(i: u32) -> Vec<u8> {
    let d: Vec<u8> = (0..CS as u32 / 4)
        .flat_map(|k| (k.wrapping_mul(2_654_435_761) ^ i).to_le_bytes())
        .collect();
    compress_vec(&cp(), &d).unwrap()
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Append,
    AppendMany,
    Insert,
    UpdateBigger,
    UpdateSameSize,
    UpdateSmaller,
    UpdateToSpecial,
    UpdateFromSpecial,
    UpdateMany,
    Delete,
    MetaUpdate,
    VlmetaAdd,
    VlmetaUpdate,
    VlmetaDelete,
}

const OPS: [Op; 14] = [
    Op::Append,
    Op::AppendMany,
    Op::Insert,
    Op::UpdateBigger,
    Op::UpdateSameSize,
    Op::UpdateSmaller,
    Op::UpdateToSpecial,
    Op::UpdateFromSpecial,
    Op::UpdateMany,
    Op::Delete,
    Op::MetaUpdate,
    Op::VlmetaAdd,
    Op::VlmetaUpdate,
    Op::VlmetaDelete,
];

fn run(s: &mut SChunk, op: Op) -> strata::Result<()> {
    match op {
        Op::Append => s.append_chunk(&chunk(50)).map(drop),
        Op::AppendMany => s
            .append_chunks(&[&chunk(51), &big_chunk(52), &chunk(53)])
            .map(drop),
        Op::Insert => s.insert_chunk(1, &big_chunk(54)).map(drop),
        Op::UpdateBigger => s.update_chunk(0, &big_chunk(55)),
        Op::UpdateSameSize => {
            let c = big_chunk(60);
            assert_eq!(c.len(), big_chunk(1).len(), "the same stored size");
            s.update_chunk(1, &c)
        }
        Op::UpdateSmaller => s.update_chunk(
            2,
            &special_chunk(&cp(), SpecialType::Value, CS, Some(&[1, 2, 3, 4])).unwrap(),
        ),
        Op::UpdateToSpecial => s.update_chunk(
            1,
            &special_chunk(&cp(), SpecialType::Zero, CS, None).unwrap(),
        ),
        Op::UpdateFromSpecial => s.update_chunk(3, &chunk(56)),
        Op::UpdateMany => {
            let value = special_chunk(&cp(), SpecialType::Value, CS, Some(&[7, 7, 7, 7])).unwrap();
            let zeros = special_chunk(&cp(), SpecialType::Zero, CS, None).unwrap();
            s.update_chunks(&[
                (2, &value),
                (0, &big_chunk(57)),
                (3, &chunk(58)),
                (1, &zeros),
            ])
        }
        Op::Delete => s.delete_chunk(0).map(drop),
        Op::MetaUpdate => s.meta_update("m", &[0xaa, 0xbb]),
        Op::VlmetaAdd => s.vlmeta_set("new", &[5; 100], None),
        Op::VlmetaUpdate => s.vlmeta_set("v", &[6; 300], None),
        Op::VlmetaDelete => s.vlmeta_delete("v"),
    }
}

/// What a reader sees.
#[derive(Debug, PartialEq, Eq)]
struct State {
    data: Vec<Vec<u8>>,
    meta: Vec<u8>,
    vlmeta: BTreeMap<String, Vec<u8>>,
}

fn state(s: &SChunk) -> State {
    State {
        data: s.iter().map(Result::unwrap).collect(),
        meta: s.meta("m").unwrap().to_vec(),
        vlmeta: s
            .vlmeta_names()
            .iter()
            .map(|n| (n.to_string(), s.vlmeta(n).unwrap()))
            .collect(),
    }
}

/// The base frame: 4 chunks (the 4th all zeros), a metalayer, a vlmetalayer.
fn build(loc: &Location) -> SChunk {
    let o = SChunkOptions {
        cparams: cp(),
        metalayers: vec![("m".into(), vec![1, 2, 3])],
        overwrite: true,
        ..SChunkOptions::default()
    };
    let mut s = SChunk::create(loc, &o).unwrap();
    s.append_chunks(&[&chunk(0), &big_chunk(1), &chunk(2)])
        .unwrap();
    s.append_chunk(&special_chunk(&cp(), SpecialType::Zero, CS, None).unwrap())
        .unwrap();
    s.vlmeta_set("v", b"vl value", None).unwrap();
    s
}

/// A store to run one attempt on, and how to reopen what it left.
trait Layout {
    fn fresh(&self) -> Box<dyn FrameIo>;
    fn reopen(&self) -> SChunk;
}

struct Mem {
    base: MemStore,
    kind: FrameType,
    cur: std::cell::RefCell<Option<MemIo>>,
}

impl Layout for Mem {
    fn fresh(&self) -> Box<dyn FrameIo> {
        let io = MemIo::new(self.base.clone(), self.kind);
        *self.cur.borrow_mut() = Some(io.clone());
        Box::new(io)
    }
    fn reopen(&self) -> SChunk {
        let io = self.cur.borrow().as_ref().unwrap().clone();
        SChunk::from_io(
            Box::new(io),
            &OpenOptions::new(OpenMode::ReadWrite).with_sync(SyncPolicy::None),
        )
        .unwrap()
    }
}

struct File {
    base: Vec<u8>,
    path: std::path::PathBuf,
}

impl Layout for File {
    fn fresh(&self) -> Box<dyn FrameIo> {
        std::fs::write(&self.path, &self.base).unwrap();
        Box::new(FileIo::open(&self.path, true).unwrap())
    }
    fn reopen(&self) -> SChunk {
        SChunk::open(&self.path, OpenMode::ReadWrite).unwrap()
    }
}

fn load_dir(d: &Path) -> MemStore {
    let mut st = MemStore::default();
    for e in std::fs::read_dir(d).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        let bytes = std::fs::read(e.path()).unwrap();
        if name == "chunks.b2frame" {
            st.frame = bytes;
        } else {
            let id = u64::from_str_radix(name.trim_end_matches(".chunk"), 16).unwrap();
            st.chunks.insert(id, bytes);
        }
    }
    st
}

/// Stops `op` after each write k = 1, 2, … (torn or not) until it completes.
fn check(layout: &dyn Layout, op: Op, what: &str) -> usize {
    let before = state(&layout.reopen_base());
    let after = {
        let mut s = SChunk::from_io(
            layout.fresh(),
            &OpenOptions::new(OpenMode::ReadWrite).with_sync(SyncPolicy::EveryWrite),
        )
        .unwrap();
        run(&mut s, op).unwrap();
        drop(s);
        state(&layout.reopen())
    };
    assert_ne!(before, after, "{what} {op:?} changes nothing");
    let mut saw_before = false;
    for k in 1.. {
        let mut completed = false;
        for torn in [false, true] {
            let plan = FaultPlan::new(k, torn);
            let io = FaultyIo::new(layout.fresh(), plan.clone());
            let mut s = SChunk::from_io(
                Box::new(io),
                &OpenOptions::new(OpenMode::ReadWrite).with_sync(SyncPolicy::EveryWrite),
            )
            .unwrap();
            let r = run(&mut s, op);
            drop(s);
            let mut re = layout.reopen();
            let got = state(&re);
            if !plan.fired() {
                r.unwrap();
                assert_eq!(got, after, "{what} {op:?} completed");
                completed = true;
            } else {
                assert!(
                    r.is_err(),
                    "{what} {op:?} k={k}: the injected fault was swallowed"
                );
                assert!(
                    got == before || got == after,
                    "{what} {op:?}: stopped at write {k} (torn {torn}): neither old nor new"
                );
                saw_before |= got == before;
            }
            // The recovered frame takes more writes.
            let last_full = match re.chunksize() {
                None => true,
                Some(cs) => {
                    re.nchunks() == 0 || re.chunk_info(re.nchunks() - 1).unwrap().nbytes == cs
                }
            };
            if last_full {
                re.append_chunk(&chunk(99)).unwrap();
                let n = re.nchunks();
                drop(re);
                let again = layout.reopen();
                assert_eq!(again.nchunks(), n);
                assert_eq!(again.decompress_chunk_vec(n - 1).unwrap(), piece(99));
            }
        }
        if completed {
            assert!(saw_before, "{what} {op:?}: no stop left the old frame");
            return k;
        }
    }
    unreachable!()
}

trait Base {
    fn reopen_base(&self) -> SChunk;
}

impl<T: Layout + ?Sized> Base for T {
    fn reopen_base(&self) -> SChunk {
        let io = self.fresh();
        SChunk::from_io(
            io,
            &OpenOptions::new(OpenMode::ReadWrite).with_sync(SyncPolicy::None),
        )
        .unwrap()
    }
}

#[test]
fn contiguous_in_memory() {
    let base = build(&Location::Memory).to_cframe().unwrap();
    let layout = Mem {
        base: MemStore {
            frame: base,
            chunks: BTreeMap::new(),
        },
        kind: FrameType::Contiguous,
        cur: std::cell::RefCell::new(None),
    };
    for op in OPS {
        let writes = check(&layout, op, "memory");
        // Relocate (copies, offsets, trailer, header) then rewrite (data, offsets, trailer,
        // header, truncate); a metalayer update is one write.
        let expected = if matches!(op, Op::MetaUpdate) { 1 } else { 7 };
        assert!(
            writes >= expected,
            "{op:?} completed after {} writes",
            writes - 1
        );
    }
}

#[test]
fn contiguous_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.b2frame");
    let base = build(&Location::Memory).to_cframe().unwrap();
    let layout = File { base, path };
    for op in [
        Op::Append,
        Op::UpdateBigger,
        Op::UpdateSameSize,
        Op::UpdateMany,
        Op::Delete,
        Op::VlmetaUpdate,
    ] {
        check(&layout, op, "file");
    }
}

#[test]
fn sparse() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("s.b2frame");
    build(&Location::Dir(d.clone())).close().unwrap();
    let layout = Mem {
        base: load_dir(&d),
        kind: FrameType::Sparse,
        cur: std::cell::RefCell::new(None),
    };
    for op in OPS {
        check(&layout, op, "sparse");
    }
}

#[test]
fn first_append_into_an_empty_frame() {
    let o = SChunkOptions {
        cparams: cp(),
        metalayers: vec![("m".into(), vec![1])],
        ..SChunkOptions::default()
    };
    let mut s = SChunk::new(&o).unwrap();
    s.vlmeta_set("v", b"x", None).unwrap();
    let layout = Mem {
        base: MemStore {
            frame: s.to_cframe().unwrap(),
            chunks: BTreeMap::new(),
        },
        kind: FrameType::Contiguous,
        cur: std::cell::RefCell::new(None),
    };
    // One atomic replace each.
    assert_eq!(check(&layout, Op::Append, "empty"), 2);
    assert_eq!(check(&layout, Op::VlmetaUpdate, "empty"), 2);
}

#[test]
fn deleting_the_only_chunk() {
    let o = SChunkOptions {
        cparams: cp(),
        metalayers: vec![("m".into(), vec![1])],
        ..SChunkOptions::default()
    };
    let mut s = SChunk::new(&o).unwrap();
    s.append_chunk(&chunk(1)).unwrap();
    let layout = Mem {
        base: MemStore {
            frame: s.to_cframe().unwrap(),
            chunks: BTreeMap::new(),
        },
        kind: FrameType::Contiguous,
        cur: std::cell::RefCell::new(None),
    };
    check(&layout, Op::Delete, "one chunk");
}
