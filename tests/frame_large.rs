//! Frames past 4 GiB: 64-bit nbytes (special chunks) and 64-bit chunk offsets (a chunk placed
//! after a 5 GiB hole of a sparse file), kept fast because the hole is never written.

use strata::chunk::{compress_vec, CParams};
use strata::format::chunk::SpecialType;
use strata::format::frame::{FrameHeader, Trailer};
use strata::frame::OpenMode;
use strata::schunk::{Location, SChunk, SChunkOptions};

fn cp() -> CParams {
    CParams {
        typesize: 4,
        nthreads: 1,
        ..CParams::default()
    }
}

fn piece(i: u32, n: usize) -> Vec<u8> {
    (0..n as u32 / 4)
        .flat_map(|k| (k ^ i).to_le_bytes())
        .collect()
}

#[test]
fn nbytes_past_4_gib() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.b2nd");
    let cs = 4 << 20;
    let o = SChunkOptions {
        cparams: cp(),
        ..SChunkOptions::default()
    };
    let mut s = SChunk::create(&Location::File(path.clone()), &o).unwrap();
    let nitems = (5u64 << 30) / 4;
    assert_eq!(s.fill_special(nitems, SpecialType::Zero, cs).unwrap(), 1280);
    s.append_buffer(&piece(1, cs)).unwrap();
    s.update_buffer(3, &piece(3, cs)).unwrap();
    s.close().unwrap();
    let s = SChunk::open(&path, OpenMode::Read).unwrap();
    assert_eq!(s.nbytes(), (5u64 << 30) + cs as u64);
    assert_eq!(s.nchunks(), 1281);
    assert!(s.frame_len() < 1 << 20);
    assert_eq!(s.decompress_chunk_vec(1280).unwrap(), piece(1, cs));
    assert_eq!(s.decompress_chunk_vec(3).unwrap(), piece(3, cs));
    let mut b = [1u8; 16];
    s.getitem(1279, 1000, 4, &mut b).unwrap();
    assert_eq!(b, [0; 16]);
}

#[test]
fn chunk_offsets_past_4_gib() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hole.b2frame");
    let a = compress_vec(&cp(), &piece(1, 4000)).unwrap();
    let b = compress_vec(&cp(), &piece(2, 4000)).unwrap();
    let hole: u64 = 5 << 30;
    let offsets: Vec<u8> = [0i64, hole as i64]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let off_chunk = compress_vec(
        &CParams {
            typesize: 8,
            ..CParams::default()
        },
        &offsets,
    )
    .unwrap();
    let trailer = Trailer::default().to_bytes();
    let mut h = FrameHeader::new(4);
    h.nbytes = 8000;
    h.chunksize = 4000;
    h.cbytes = (hole + b.len() as u64) as i64;
    let hl = h.encoded_len() as u64;
    h.frame_len = hl + h.cbytes as u64 + off_chunk.len() as u64 + trailer.len() as u64;
    let header = h.to_bytes();
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(h.frame_len).unwrap();
        f.write_all_at(&header, 0).unwrap();
        f.write_all_at(&a, hl).unwrap();
        f.write_all_at(&b, hl + hole).unwrap();
        f.write_all_at(&off_chunk, hl + h.cbytes as u64).unwrap();
        f.write_all_at(&trailer, h.frame_len - trailer.len() as u64)
            .unwrap();
    }
    let mut s = SChunk::open(&path, OpenMode::ReadWrite).unwrap();
    assert_eq!(s.decompress_chunk_vec(1).unwrap(), piece(2, 4000));
    let mut part = vec![0u8; 40];
    s.decompress_range(1, 400..440, &mut part).unwrap();
    assert_eq!(part, piece(2, 4000)[400..440]);
    s.append_buffer(&piece(3, 4000)).unwrap();
    s.vlmeta_set("v", b"past the hole", None).unwrap();
    s.close().unwrap();
    let s = SChunk::open(&path, OpenMode::Read).unwrap();
    assert!(s.cbytes() > 5 << 30);
    assert_eq!(s.nchunks(), 3);
    assert_eq!(s.decompress_chunk_vec(0).unwrap(), piece(1, 4000));
    assert_eq!(s.decompress_chunk_vec(2).unwrap(), piece(3, 4000));
    assert_eq!(s.vlmeta("v").unwrap(), b"past the hole");
    // The hole stayed a hole: the file occupies far less than its length.
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(&path).unwrap();
    assert!(m.len() > 5 << 30);
    assert!(
        m.blocks() * 512 < 64 << 20,
        "{} bytes allocated",
        m.blocks() * 512
    );
}
