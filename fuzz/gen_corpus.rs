//! Writes the seed corpus of the fuzz targets: valid chunks of every codec, filter pipeline,
//! split mode and special kind, plus hand-built Blosc1 (16-byte header) and C-Blosc2 3.x
//! variable-length-block chunks, each behind the target's input prefix (see `src/lib.rs`).
//!
//! The `frame` seeds are frames made by the library; the `info` seeds are those frames, b2nd
//! arrays (one whose shape's size overflows 64 bits) and the chunks, as files hold them. The
//! files python-blosc2 wrote in `tests/data/peers/` (frames, b2nd arrays, chunks) join the
//! seeds of every target that reads their kind.
//!
//! Usage: `cargo run --release --example gen_corpus -- <corpus dir>`; writes
//! `<dir>/decompress/`, `<dir>/getitem/`, `<dir>/frame/`, `<dir>/info/` and `<dir>/hdf5_chunk/`.

use std::path::{Path, PathBuf};
use strata::chunk::{compress_vec, decompress_vec, CParams, SplitMode};
use strata::codecs::{lz4::Lz4, Codec};
use strata::block::BlockContext;
use strata::ndarray::{ArrayParams, NdArray};
use strata::schunk::Location;
use strata_fuzz::{decompress_input, field, getitem_input, le32, special, text};
use strata::{CodecId, FilterId};

#[path = "src/hdf5_chunk.rs"]
mod hdf5_chunk;

/// HDF5 chunks as the Blosc2 filter writes them (b2nd frames of ranks 2, 3 and 10, plain
/// frames, a chunk with 4 bytes past its items), behind their `cd_values`.
fn hdf5_chunks() -> Vec<(String, Vec<u8>)> {
    use strata::hdf5::chunk::encode;
    let mut rank10 = vec![1, 0, 2, 2048, 5, 1, 0, 10];
    rank10.extend([2; 10]);
    let cases: Vec<(&str, Vec<u32>, Vec<u8>)> = vec![
        (
            "b2nd-2d",
            vec![1, 0, 4, 12000, 5, 1, 5, 2, 50, 60],
            field(12000, 4),
        ),
        (
            "b2nd-3d-blocks",
            vec![1, 256, 4, 4096, 5, 2, 1, 3, 4, 16, 16],
            field(4096, 4),
        ),
        ("b2nd-rank10", rank10, field(2048, 2)),
        ("plain-1d", vec![1, 0, 8, 8000, 5, 1, 0], field(8000, 8)),
        (
            "plain-delta",
            vec![1, 1024, 4, 8192, 9, 3, 4],
            field(8192, 4),
        ),
        (
            "plain-extra-bytes",
            vec![1, 0, 4, 4000, 5, 1, 1, 2, 20, 50],
            field(4004, 4),
        ),
        ("plain-zeros", vec![1, 0, 4, 4000, 5, 1, 0], vec![0; 4000]),
    ];
    cases
        .into_iter()
        .map(|(name, cd, data)| {
            let frame = encode(&cd, &data).unwrap_or_else(|e| panic!("hdf5 seed {name}: {e}"));
            (name.to_string(), hdf5_chunk::input(&cd, &frame))
        })
        .collect()
}

/// Rewrites a version-5 chunk with a 32-byte header (shuffle only, no dict) as a 16-byte-header
/// chunk of `version` (2 = Blosc1): filters move into the flags, bstarts shift by 16.
fn to_short_header(c: &[u8], version: u8) -> Vec<u8> {
    let nbytes = i32::from_le_bytes(c[4..8].try_into().unwrap()) as usize;
    let blocksize = i32::from_le_bytes(c[8..12].try_into().unwrap()) as usize;
    let nblocks = nbytes.div_ceil(blocksize);
    let codec_bits = c[2] & 0xe0;
    let split_bit = c[2] & 0x10;
    let mut flags = codec_bits | split_bit;
    if c[16..22].contains(&1) {
        flags |= 0x01;
    }
    let mut out = vec![version, 1, flags, c[3]];
    out.extend_from_slice(&c[4..12]);
    out.extend_from_slice(&le32(c.len() - 16));
    for b in 0..nblocks {
        let at = 32 + 4 * b;
        let bs = i32::from_le_bytes(c[at..at + 4].try_into().unwrap()) as usize;
        out.extend_from_slice(&le32(bs - 16));
    }
    out.extend_from_slice(&c[32 + 4 * nblocks..]);
    out
}

/// A C-Blosc2 3.x variable-length-block chunk (version 6) of LZ4 blocks.
fn vl_blocks(blocks: &[Vec<u8>]) -> Vec<u8> {
    let nbytes: usize = blocks.iter().map(Vec::len).sum();
    let ctx = BlockContext {
        clevel: 5,
        meta: 0,
        typesize: 1,
        blocksize: 0,
        nblock: 0,
        dict: None,
        nd: None,
        ..BlockContext::default()
    };
    let mut streams = Vec::new();
    let mut starts = Vec::new();
    let base = 32 + 4 * blocks.len();
    for b in blocks {
        starts.push(base + streams.len());
        let mut buf = vec![0u8; 2 * b.len() + 64];
        let n = Lz4.compress(b, &mut buf, &ctx).expect("lz4");
        assert!(n > 0, "lz4 could not compress a VL block");
        streams.extend_from_slice(&le32(b.len()));
        streams.extend_from_slice(&buf[..n]);
    }
    let mut c = vec![0u8; 32];
    c[0] = 6;
    c[1] = 1;
    c[2] = 0x05 | (1 << 5);
    c[3] = 1;
    c[4..8].copy_from_slice(&le32(nbytes));
    c[8..12].copy_from_slice(&le32(blocks.len()));
    c[12..16].copy_from_slice(&le32(base + streams.len()));
    c[22] = 1;
    c[30] = 1;
    for s in starts {
        c.extend_from_slice(&le32(s));
    }
    c.extend_from_slice(&streams);
    c
}

fn chunks() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let pipelines: [(&str, [u8; 6]); 7] = [
        ("nofilter", [0; 6]),
        ("shuffle", [0, 0, 0, 0, 0, 1]),
        ("bitshuffle", [0, 0, 0, 0, 0, 2]),
        ("delta-shuffle", [0, 0, 0, 0, 3, 1]),
        ("trunc-shuffle", [0, 0, 0, 0, 4, 1]),
        ("shuffle-bytedelta", [1, 35, 0, 0, 0, 0]),
        ("shuffle-bytedelta34", [1, 34, 0, 0, 0, 0]),
    ];
    for codec in [0u8, 1, 2, 4, 5] {
        for (pname, filters) in &pipelines {
            for (typesize, n, blocksize) in
                [(4usize, 600usize, 0usize), (8, 6000, 2048), (2, 3001, 1024)]
            {
                let cp = CParams {
                    codec: CodecId(codec),
                    typesize,
                    blocksize,
                    filters: filters.map(FilterId),
                    ..CParams::default()
                };
                let data = field(n, u32::from(codec) + typesize as u32);
                if let Ok(c) = compress_vec(&cp, &data) {
                    out.push((format!("c{codec}-{pname}-ts{typesize}-n{n}"), c));
                }
            }
        }
        for split in [SplitMode::Always, SplitMode::Never] {
            let cp = CParams {
                codec: CodecId(codec),
                typesize: 4,
                blocksize: 1024,
                splitmode: split,
                ..CParams::default()
            };
            if let Ok(c) = compress_vec(&cp, &field(4096, 9)) {
                out.push((format!("c{codec}-split{}", split as u8), c));
            }
        }
        // Streams that are runs of one byte: zero runs and value runs.
        let mut runs = vec![0u8; 2048];
        runs.extend(std::iter::repeat_n(7u8, 2048));
        let cp = CParams {
            codec: CodecId(codec),
            typesize: 4,
            blocksize: 1024,
            ..CParams::default()
        };
        out.push((
            format!("c{codec}-runs"),
            compress_vec(&cp, &runs).expect("runs"),
        ));
        // Typesizes that are odd, large, or stored as 1.
        for typesize in [1usize, 3, 16, 255, 300] {
            let cp = CParams {
                codec: CodecId(codec),
                typesize,
                splitmode: SplitMode::Always,
                ..CParams::default()
            };
            if let Ok(c) = compress_vec(&cp, &field(typesize * 40 + 5, 3)) {
                out.push((format!("c{codec}-odd-ts{typesize}"), c));
            }
        }
    }
    // Chunks big enough (>= 64 KiB, 32 blocks) to decode on several threads.
    for (codec, filters) in [
        (0u8, [0, 0, 0, 0, 0, 1]),
        (5, [0, 0, 0, 0, 3, 1]),
        (1, [1, 35, 0, 0, 0, 0]),
    ] {
        let cp = CParams {
            codec: CodecId(codec),
            typesize: 4,
            blocksize: 4096,
            filters: filters.map(FilterId),
            ..CParams::default()
        };
        out.push((
            format!("c{codec}-parallel"),
            compress_vec(&cp, &field(128 * 1024, 4)).unwrap(),
        ));
    }
    // LZ4 chunks with real LZ4 streams: LZ4HC writes the same block format, and only header
    // byte 22 tells the two apart (Strata's own LZ4 encoder often stores streams raw).
    let lz4: Vec<(String, Vec<u8>)> = out
        .iter()
        .filter(|(name, c)| name.starts_with("c2-") && c[2] & 0x02 == 0 && c[22] == 2)
        .map(|(name, c)| {
            let mut c = c.clone();
            c[22] = 1;
            (format!("lz4hc-as-lz4-{}", &name[3..]), c)
        })
        .collect();
    out.extend(lz4);
    // Memcpyed: clevel 0, tiny input, empty input.
    out.push((
        "memcpy-clevel0".into(),
        compress_vec(
            &CParams {
                clevel: 0,
                ..CParams::default()
            },
            &field(256, 1),
        )
        .unwrap(),
    ));
    out.push((
        "memcpy-tiny".into(),
        compress_vec(&CParams::default(), &field(20, 2)).unwrap(),
    ));
    out.push((
        "empty".into(),
        compress_vec(&CParams::default(), &[]).unwrap(),
    ));
    // Incompressible data falls back to raw streams.
    let noise: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    out.push((
        "noise".into(),
        compress_vec(
            &CParams {
                typesize: 1,
                ..CParams::default()
            },
            &noise,
        )
        .unwrap(),
    ));
    // Special chunks: automatic zeros, and the four constructors.
    out.push((
        "zeros-auto".into(),
        compress_vec(&CParams::default(), &[0u8; 8192]).unwrap(),
    ));
    out.push(("special-zero".into(), special(1, 8, 8000, &[])));
    out.push(("special-nan4".into(), special(2, 4, 4000, &[])));
    out.push(("special-nan8".into(), special(2, 8, 8000, &[])));
    out.push(("special-value".into(), special(3, 4, 4000, &[1, 2, 3, 4])));
    out.push(("special-uninit".into(), special(4, 4, 4000, &[])));
    // A zstd chunk with a trained dictionary.
    let dict = CParams {
        codec: CodecId::ZSTD,
        typesize: 1,
        blocksize: 4096,
        use_dict: true,
        ..CParams::default()
    };
    let c = compress_vec(&dict, &text(40_000)).unwrap();
    assert!(c[31] & 1 == 1, "the dictionary chunk has no dictionary");
    out.push(("zstd-dict".into(), c));
    // Blosc1 (version 2) and compat (version 5) 16-byte headers.
    for codec in [0u8, 1, 4, 5] {
        let cp = CParams {
            codec: CodecId(codec),
            typesize: 4,
            blocksize: 4096,
            splitmode: SplitMode::Always,
            ..CParams::default()
        };
        let data = field(16384, 5);
        let c = compress_vec(&cp, &data).unwrap();
        assert_eq!(
            c[2] & 0x02,
            0,
            "codec {codec}: the 16-byte-header seed is memcpyed"
        );
        for version in [2u8, 5] {
            let short = to_short_header(&c, version);
            assert_eq!(
                decompress_vec(&short).unwrap(),
                data,
                "16-byte header v{version} codec {codec}"
            );
            out.push((format!("short-v{version}-c{codec}"), short));
        }
    }
    // C-Blosc2 3.x variable-length blocks.
    let vl = vl_blocks(&[field(1000, 1), field(2000, 2), field(500, 3)]);
    assert_eq!(decompress_vec(&vl).unwrap().len(), 3500);
    out.push(("vl-blocks".into(), vl));
    out
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(dir.join(name), bytes).unwrap_or_else(|e| panic!("writing {name}: {e}"));
}

/// b2nd arrays as `.b2nd` files hold them: 1-d to 3-d, with and without partitions that
/// divide the shape, and one whose first dimension has bit 62 set (its size overflows).
fn arrays() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (name, shape, chunkshape, blockshape) in [
        ("array-1d", vec![1000usize], vec![300], vec![64]),
        ("array-2d", vec![30, 7], vec![30, 7], vec![30, 7]),
        ("array-3d", vec![9, 10, 11], vec![4, 5, 6], vec![2, 5, 3]),
    ] {
        let nitems: usize = shape.iter().product();
        let data = field(nitems * 4, 7);
        let params = ArrayParams::new(&shape, 4)
            .with_dtype("<f4")
            .with_chunkshape(&chunkshape)
            .with_blockshape(&blockshape);
        let arr = NdArray::from_buffer(&params, &Location::Memory, &data).expect("array");
        out.push((name.to_owned(), arr.schunk().to_cframe().expect("cframe")));
    }
    let (_, good) = &out[1];
    let at = good
        .windows(5)
        .position(|w| w == [0x97, 0, 2, 0x92, 0xd3])
        .expect("a b2nd metalayer")
        + 5;
    let mut crafted = good.clone();
    crafted[at] ^= 0x40;
    out.push(("array-shape-overflow".to_owned(), crafted));
    out
}

/// The files python-blosc2 wrote in tests/data/peers: (contiguous frames and arrays, chunks).
fn peers() -> (Vec<(String, Vec<u8>)>, Vec<(String, Vec<u8>)>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/peers");
    let (mut frames, mut chunks) = (Vec::new(), Vec::new());
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    for path in entries {
        let name = format!("py-{}", path.file_name().unwrap().to_string_lossy());
        match path.extension().and_then(|e| e.to_str()) {
            Some("b2frame" | "b2nd") => frames.push((name, std::fs::read(&path).unwrap())),
            Some("b2") => chunks.push((name, std::fs::read(&path).unwrap())),
            _ => {}
        }
    }
    (frames, chunks)
}

fn main() {
    let root = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "corpus".into()));
    let (dd, gd, fd, id) = (
        root.join("decompress"),
        root.join("getitem"),
        root.join("frame"),
        root.join("info"),
    );
    let hd = root.join("hdf5_chunk");
    for d in [&dd, &gd, &fd, &id, &hd] {
        std::fs::create_dir_all(d).expect("creating the corpus directory");
    }
    let (peer_frames, peer_chunks) = peers();
    for (name, f) in strata_fuzz::frames()
        .into_iter()
        .chain(arrays())
        .chain(peer_frames)
    {
        write(&fd, &name, &f);
        write(&id, &name, &f);
    }
    for (name, c) in hdf5_chunks() {
        hdf5_chunk::check(&c);
        write(&hd, &name, &c);
    }
    let mut chunks = chunks();
    chunks.extend(peer_chunks);
    for (name, c) in &chunks {
        // Every seed must decode: a broken seed would only teach the fuzzer errors.
        let whole =
            decompress_vec(c).unwrap_or_else(|e| panic!("seed {name} does not decode: {e}"));
        let typesize = usize::from(c[3]);
        let nitems = whole.len() / typesize;
        write(&id, name, c);
        write(&dd, name, &decompress_input(0, 0, c));
        write(
            &dd,
            &format!("{name}-short"),
            &decompress_input(0xa5, -1, c),
        );
        write(
            &dd,
            &format!("{name}-long"),
            &decompress_input(0x5a, 100, c),
        );
        let mid = u32::try_from(nitems / 2).unwrap();
        write(&gd, name, &getitem_input(0, 1, c));
        write(
            &gd,
            &format!("{name}-mid"),
            &getitem_input(mid, u16::try_from(nitems - nitems / 2).unwrap_or(1000), c),
        );
    }
    // stratad's request parsers: kind byte, parameters, text (see daemon_requests.rs).
    let rd = root.join("daemon_requests");
    std::fs::create_dir_all(&rd).expect("creating the corpus directory");
    let seeds: [(&str, &[u8], &str); 12] = [
        ("path", &[0], "%40public/dir1/ds-2d.b2nd"),
        ("path-dotdot", &[0], "@public/%2e%2e/%252e/x"),
        ("key-2d", &[1, 2, 10, 20], "3:5, 1:4"),
        ("key-steps", &[1, 3, 9, 8, 7], "::-2,1,-3:"),
        ("key-frame", &[1, 1, 40], "5"),
        ("indices", &[2, 2, 10, 20], r#"[[1,5,9],"0:10"]"#),
        ("indices-mixed", &[2, 3, 5, 6, 7], "[[0,1],null,2]"),
        ("range", &[3, 0, 16, 0, 0], "bytes=0-31,100-200,-50"),
        ("range-open", &[3, 255, 0, 0, 0], "bytes=10-"),
        ("nchunk", &[4], "12"),
        ("token", &[5], "Bearer abc\nc2subauth=tok; x=1"),
        ("cookie", &[5], "Basic x\nc2subauth=\"q\""),
    ];
    for (name, prefix, body) in seeds {
        let mut input = prefix.to_vec();
        input.extend_from_slice(body.as_bytes());
        write(&rd, name, &input);
    }
    println!(
        "wrote {} chunks as {} decompress, {} getitem and {} info seeds, and frames, into {}",
        chunks.len(),
        chunks.len() * 3,
        chunks.len() * 2,
        chunks.len(),
        root.display()
    );
}
