//! The ZFP plugin loaded as a shared library into a Strata registry, as a user gets it: every
//! rank and float type, the error bounds, the errors for what ZFP cannot do, hostile streams,
//! and FIXED_RATE items read cell by cell. (Interop with C-Blosc2: tests/interop/test_zfp.py.)

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;
use strata::block::BlockContext;
use strata::chunk::{
    compress_ctx, decompress_vec_ctx, getitem_ctx, max_compressed_len, CParams, Context, DParams,
};
use strata::format::b2nd::B2ndMeta;
use strata::registry::{Origin, Registry};
use strata::scheduler::Runtime;
use strata::{CodecId, FilterId};

/// target/<profile>/libstrata_zfp.so, built for this test's profile.
fn plugin_lib() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    let mut cargo = Command::new(env!("CARGO"));
    cargo.args(["build", "--quiet", "-p", "strata-zfp", "--lib"]);
    if dir.file_name().and_then(|n| n.to_str()) == Some("release") {
        cargo.arg("--release");
    }
    assert!(
        cargo.status().unwrap().success(),
        "building the ZFP plugin failed"
    );
    dir.join(format!(
        "{}strata_zfp.{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_EXTENSION
    ))
}

fn registry() -> Arc<Registry> {
    let r = Arc::new(Registry::with_builtins());
    r.set_plugin_dirs(Some(Vec::new()));
    let got = r.load_plugin(plugin_lib()).unwrap();
    let names: Vec<_> = got.iter().map(|g| (g.id, g.name.as_str())).collect();
    assert_eq!(names, [(33, "zfp_acc"), (34, "zfp_prec"), (35, "zfp_rate")]);
    // Each declares that it works on the array's items (so shuffle may not precede it).
    for id in [CodecId::ZFP_ACC, CodecId::ZFP_PREC, CodecId::ZFP_RATE] {
        assert!(r.codec(id).unwrap().capabilities().needs_nd, "{id}");
    }
    r
}

fn ctx(r: &Arc<Registry>) -> Context {
    Context::new(Arc::clone(r), Runtime::global())
}

/// A chunk's worth of blocks: `nblocks` blocks of `blockshape`, smooth values with a trend.
fn field(blockshape: &[i32], nblocks: usize, typesize: usize) -> Vec<u8> {
    let items: usize = blockshape.iter().map(|&b| b as usize).product::<usize>() * nblocks;
    let values = (0..items).map(|i| {
        let x = i as f64;
        (x / 37.0).sin() * 50.0 + (x / 500.0).cos() * 7.0 + x * 1e-3
    });
    if typesize == 4 {
        values.flat_map(|v| (v as f32).to_le_bytes()).collect()
    } else {
        values.flat_map(f64::to_le_bytes).collect()
    }
}

fn floats(bytes: &[u8], typesize: usize) -> Vec<f64> {
    if typesize == 4 {
        bytes
            .chunks_exact(4)
            .map(|b| f64::from(f32::from_le_bytes(b.try_into().unwrap())))
            .collect()
    } else {
        bytes
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
            .collect()
    }
}

fn max_err(a: &[u8], b: &[u8], typesize: usize) -> f64 {
    floats(a, typesize)
        .iter()
        .zip(floats(b, typesize))
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// The b2nd metalayer of a chunk of 2 blocks along the first dimension.
fn meta(blockshape: &[i32]) -> Arc<B2ndMeta> {
    let mut chunkshape = blockshape.to_vec();
    chunkshape[0] *= 2;
    let shape = chunkshape.iter().map(|&c| i64::from(c)).collect();
    Arc::new(B2ndMeta::new(shape, chunkshape, blockshape.to_vec(), "<f4").unwrap())
}

fn cparams(codec: u8, meta_byte: u8, typesize: usize, nd: &Arc<B2ndMeta>) -> CParams {
    let items: i32 = nd.blockshape.iter().product();
    CParams {
        codec: CodecId(codec),
        codec_meta: meta_byte,
        typesize,
        blocksize: items as usize * typesize,
        filters: [FilterId::NOFILTER; 6],
        nthreads: 1,
        nd: Some(nd.clone()),
        ..CParams::default()
    }
}

fn compress(r: &Arc<Registry>, p: &CParams, src: &[u8]) -> strata::Result<Vec<u8>> {
    let mut out = vec![0u8; max_compressed_len(src.len())];
    let n = compress_ctx(&ctx(r), p, src, &mut out)?;
    out.truncate(n);
    Ok(out)
}

fn dparams(nd: &Arc<B2ndMeta>) -> DParams {
    DParams {
        nd: Some(nd.clone()),
        ..DParams::default()
    }
}

const SHAPES: [&[i32]; 4] = [&[256], &[16, 24], &[8, 8, 12], &[4, 8, 4, 12]];

#[test]
fn every_rank_and_float_type_round_trips_within_the_tolerance() {
    let r = registry();
    assert!(matches!(
        r.list().iter().find(|e| e.id == 35).unwrap().origin,
        Origin::Library(_)
    ));
    for blockshape in SHAPES {
        let nd = meta(blockshape);
        for typesize in [4, 8] {
            let src = field(blockshape, 2, typesize);
            for (codec, meta_byte, bound) in [
                (33u8, (-3i8) as u8, 1e-3),
                (33, (-1i8) as u8, 0.1),
                (34, 24, 1e-2),
                (35, 50, 1.0),
            ] {
                let what =
                    format!("{blockshape:?} typesize {typesize} codec {codec} meta {meta_byte}");
                let chunk = compress(&r, &cparams(codec, meta_byte, typesize, &nd), &src).unwrap();
                assert_eq!(chunk[22], codec, "{what}");
                assert!(chunk.len() < src.len(), "{what}: {} bytes", chunk.len());
                let back = decompress_vec_ctx(&ctx(&r), &dparams(&nd), &chunk).unwrap();
                let err = max_err(&src, &back, typesize);
                assert!(err <= bound, "{what}: max error {err}");
                assert!(err > 0.0 || codec == 34, "{what}: lossless?");
            }
        }
    }
}

#[test]
fn fixed_rate_takes_the_asked_share_of_the_input() {
    let r = registry();
    let nd = meta(&[16, 24]);
    let src = field(&[16, 24], 2, 4);
    for rate in [10u8, 25, 50, 75] {
        let chunk = compress(&r, &cparams(35, rate, 4, &nd), &src).unwrap();
        // 2 blocks of 24 cells, each cell 16 values at rate% of 32 bits, in 64-bit words.
        let bits_per_cell = (16.0 * f64::from(rate) / 100.0 * 32.0 + 0.5).floor() as usize;
        let stream = (24 * bits_per_cell).div_ceil(64) * 8;
        assert_eq!(chunk.len(), 32 + 2 * 4 + 2 * (4 + stream), "rate {rate}");
    }
}

#[test]
fn what_zfp_cannot_do_is_a_clear_error() {
    let r = registry();
    let nd = meta(&[16, 24]);
    let src = field(&[16, 24], 2, 4);
    let err = |p: &CParams, src: &[u8]| compress(&r, p, src).unwrap_err();
    // Not float32/float64.
    let e = err(
        &CParams {
            blocksize: 16 * 24 * 2,
            ..cparams(33, 0, 2, &nd)
        },
        &src[..16 * 24 * 4],
    );
    assert!(e.to_string().contains("not typesize 2"), "{e}");
    // Blocks smaller than a cell, more than 4 dimensions.
    let small = meta(&[16, 3]);
    let e = err(&cparams(34, 10, 4, &small), &src[..16 * 3 * 4 * 2]);
    assert!(e.to_string().contains("at least 4"), "{e}");
    let five = Arc::new(B2ndMeta::new(vec![4; 5], vec![4; 5], vec![4; 5], "<f4").unwrap());
    let e = err(&cparams(33, 0, 4, &five), &field(&[4, 4, 4, 4, 4], 1, 4));
    assert!(e.to_string().contains("1 to 4 dimensions"), "{e}");
    // A rate outside 1-100 %.
    for rate in [0u8, 101, 255] {
        let e = err(&cparams(35, rate, 4, &nd), &src);
        assert_eq!(e.code(), -8);
        assert!(e.to_string().contains("not a rate of 1 to 100"), "{e}");
    }
    // Shuffle before ZFP, refused as by C-Blosc2.
    let mut p = cparams(33, 0, 4, &nd);
    p.filters[5] = FilterId::SHUFFLE;
    assert_eq!(err(&p, &src).code(), -12);
    // Decoding without the context: the error says how to give it.
    let chunk = compress(&r, &cparams(33, 0, 4, &nd), &src).unwrap();
    let e = decompress_vec_ctx(&ctx(&r), &DParams::default(), &chunk).unwrap_err();
    assert_eq!(e.code(), -8, "{e}");
    assert_eq!(
        e.to_string(),
        "codec parameter: codec 33 (zfp_acc) failed with code -8: ZFP needs the array's blockshape: read the chunk from its \
         b2nd array or super-chunk, or give the b2nd metalayer (DParams::nd; strata chunk \
         --shape/--chunkshape/--blockshape) (codec 33)"
    );
    // A FIXED_RATE meta above 100 in a chunk is refused when read too; 0, which C-Blosc2
    // writes when the meta is left at its default, is read (at zfp's lowest rate).
    let chunk = compress(&r, &cparams(35, 50, 4, &nd), &src).unwrap();
    let mut zero = chunk.clone();
    zero[23] = 0;
    let out = decompress_vec_ctx(&ctx(&r), &dparams(&nd), &zero).unwrap();
    assert_eq!(out.len(), src.len());
    for rate in [101u8, 255] {
        let mut bad = chunk.clone();
        bad[23] = rate;
        let e = decompress_vec_ctx(&ctx(&r), &dparams(&nd), &bad).unwrap_err();
        assert_eq!(e.code(), -8);
        assert_eq!(
            e.to_string(),
            format!(
                "codec parameter: codec 35 (zfp_rate) failed with code -8: ZFP_RATE meta {rate} \
                 is not a rate of 1 to 100 (percent of the input size) (codec 35)"
            )
        );
        let mut item = [0u8; 4];
        let e = getitem_ctx(&ctx(&r), &dparams(&nd), &bad, 5, 1, &mut item).unwrap_err();
        assert_eq!(e.code(), -8, "{e}");
    }
    // Decoding with a blockshape that does not match the chunk's blocks.
    let wrong = meta(&[16, 16]);
    let e = decompress_vec_ctx(&ctx(&r), &dparams(&wrong), &chunk).unwrap_err();
    assert_eq!(e.code(), -3, "{e}");
}

#[test]
fn without_the_nd_context_blocks_are_stored_raw_as_in_cblosc2() {
    // C-Blosc2's ZFP encoders store a block raw when there is no super-chunk to read the b2nd
    // metalayer from: the chunk is memcpyed, and decodes without any context.
    let r = registry();
    let nd = meta(&[16, 24]);
    let src = field(&[16, 24], 2, 4);
    for (codec, meta_byte) in [(33, 0xfe), (34, 10), (35, 50), (35, 0)] {
        let p = CParams {
            nd: None,
            ..cparams(codec, meta_byte, 4, &nd)
        };
        let chunk = compress(&r, &p, &src).unwrap();
        assert_eq!(chunk.len(), 32 + src.len(), "codec {codec}");
        assert_eq!(chunk[2] & 0x02, 0x02, "memcpyed");
        assert_eq!((chunk[22], chunk[23]), (codec, meta_byte));
        assert_eq!(&chunk[32..], &src[..]);
        assert_eq!(
            decompress_vec_ctx(&ctx(&r), &DParams::default(), &chunk).unwrap(),
            src
        );
    }
}

#[test]
fn split_streams_are_stored_raw_as_in_cblosc2() {
    let r = registry();
    let nd = meta(&[16, 24]);
    let src = field(&[16, 24], 2, 4);
    let p = CParams {
        splitmode: strata::chunk::SplitMode::Always,
        ..cparams(33, (-2i8) as u8, 4, &nd)
    };
    let chunk = compress(&r, &p, &src).unwrap();
    // A split stream is a quarter block: not a zfp field, stored raw, so the chunk is memcpyed.
    assert_eq!(chunk.len(), 32 + src.len());
    assert_eq!(
        decompress_vec_ctx(&ctx(&r), &dparams(&nd), &chunk).unwrap(),
        src
    );
}

#[test]
fn hostile_streams_give_errors_or_values_never_out_of_bounds_reads() {
    let r = registry();
    let blockshape = [16, 24];
    let nd = meta(&blockshape);
    let block = 16 * 24 * 4;
    let mut out = vec![0u8; block];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for id in [33u8, 34, 35] {
        let codec = r.codec(CodecId(id)).unwrap();
        for round in 0..300 {
            let len = (next() % 400) as usize;
            let junk: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let c = BlockContext {
                clevel: 0,
                meta: next() as u8,
                typesize: 4,
                blocksize: block,
                nblock: 0,
                dict: None,
                nd: Some(&nd),
                ..BlockContext::default()
            };
            // Random bytes decode to some values or fail; what matters is no crash (run under
            // the address sanitizer, this is where an over-read would show).
            match codec.decompress(&junk, &mut out, &c) {
                Ok(n) => assert_eq!(n, block, "codec {id} round {round}"),
                Err(e) => assert!(e.code() == -3 || e.code() == -8, "codec {id}: {e}"),
            }
        }
    }
    // A FIXED_RATE chunk whose meta byte claims a higher rate than its streams hold.
    let src = field(&blockshape, 2, 4);
    let mut chunk = compress(&r, &cparams(35, 20, 4, &nd), &src).unwrap();
    chunk[23] = 90;
    let e = decompress_vec_ctx(&ctx(&r), &dparams(&nd), &chunk).unwrap_err();
    assert_eq!(e.code(), -3);
    assert!(e.to_string().contains("FIXED_RATE stream"), "{e}");
    let mut item = [0u8; 4];
    let e = getitem_ctx(&ctx(&r), &dparams(&nd), &chunk, 5, 1, &mut item).unwrap_err();
    assert_eq!(e.code(), -3);
}

/// A FIXED_RATE chunk of one 64×64 float32 block, with its bstart-relative stream offset.
fn rate_chunk(r: &Arc<Registry>) -> (Arc<B2ndMeta>, Vec<u8>, Vec<u8>) {
    let blockshape = [64, 64];
    let nd = Arc::new(B2ndMeta::new(vec![64, 64], vec![64, 64], vec![64, 64], "<f4").unwrap());
    let src = field(&blockshape, 1, 4);
    let chunk = compress(r, &cparams(35, 25, 4, &nd), &src).unwrap();
    (nd, src, chunk)
}

#[test]
fn fixed_rate_items_read_cell_by_cell_equal_the_whole_decode() {
    let r = registry();
    let (nd, _, chunk) = rate_chunk(&r);
    let c = ctx(&r);
    let whole = decompress_vec_ctx(&c, &dparams(&nd), &chunk).unwrap();
    for (start, nitems) in [
        (0, 1),
        (3, 2),
        (4, 1),
        (63, 2),
        (64, 4),
        (130, 7),
        (2000, 9),
        (4095, 1),
        (1000, 60),
    ] {
        let mut got = vec![0u8; nitems * 4];
        getitem_ctx(&c, &dparams(&nd), &chunk, start, nitems, &mut got).unwrap();
        assert_eq!(
            got,
            whole[start * 4..(start + nitems) * 4],
            "{start}+{nitems}"
        );
    }
}

#[test]
fn fixed_rate_items_decode_only_their_cells() {
    let r = registry();
    let (nd, _, chunk) = rate_chunk(&r);
    let c = ctx(&r);
    let whole = decompress_vec_ctx(&c, &dparams(&nd), &chunk).unwrap();
    // Item (0, 0) lives in cell 0, the stream's first 16 * 8 = 128 bits (25 % of 32 bits per
    // value). Damage the stream's last cells: the whole block decodes differently, the item does not.
    let mut damaged = chunk.clone();
    let n = damaged.len();
    for b in &mut damaged[n - 64..] {
        *b ^= 0xA5;
    }
    let redecoded = decompress_vec_ctx(&c, &dparams(&nd), &damaged).unwrap();
    assert_ne!(redecoded, whole, "the damage must show in a whole decode");
    let mut item = [0u8; 4];
    getitem_ctx(&c, &dparams(&nd), &damaged, 0, 1, &mut item).unwrap();
    assert_eq!(item, whole[..4], "the item's own cell is intact");
}

#[test]
fn fixed_rate_item_reads_are_faster_than_the_block() {
    let r = registry();
    let (nd, _, chunk) = rate_chunk(&r);
    let c = ctx(&r);
    let dp = dparams(&nd);
    let time = |f: &mut dyn FnMut()| {
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t = Instant::now();
            for _ in 0..200 {
                f();
            }
            best = best.min(t.elapsed().as_secs_f64() / 200.0);
        }
        best
    };
    let mut item = [0u8; 4];
    let cells = time(&mut || {
        getitem_ctx(&c, &dp, &chunk, 2080, 1, &mut item).unwrap();
    });
    let block = time(&mut || {
        decompress_vec_ctx(&c, &dp, &chunk).unwrap();
    });
    println!(
        "FIXED_RATE 64x64 float32 block, rate 25 %: one item {:.2} us, whole block {:.2} us ({:.0}x)",
        cells * 1e6,
        block * 1e6,
        block / cells
    );
    assert!(block > 4.0 * cells, "item {cells} s, block {block} s");
}

#[test]
fn a_zfp_array_reads_through_its_super_chunk_as_cblosc2_reads_it() {
    // python-blosc2's ZFP_RATE array: the super-chunk hands its own b2nd metalayer to the
    // codec, as C-Blosc2 does, in Rust and through the C ABI (where it failed with -8).
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/peers/zfp.b2nd");
    Registry::global().load_plugin(plugin_lib()).unwrap();
    let s = strata::schunk::SChunk::open(&path, strata::frame::OpenMode::Read).unwrap();
    let nd = Arc::new(B2ndMeta::from_bytes(s.meta("b2nd").unwrap()).unwrap());
    assert_eq!(nd.blockshape, [4, 4]);
    let chunk = s.chunk(0).unwrap();
    let want = decompress_vec_ctx(&Context::global(), &dparams(&nd), &chunk).unwrap();
    assert_eq!(want.len(), 8 * 8 * 4);
    assert_eq!(s.decompress_chunk_vec(0).unwrap(), want);
    let mut items = [0u8; 12];
    assert_eq!(s.getitem(0, 5, 3, &mut items).unwrap(), 12);
    assert_eq!(items[..], want[20..32]);

    use strata::capi::schunk::{
        strata_schunk_decompress_chunk, strata_schunk_free, strata_schunk_getitem,
        strata_schunk_open, STRATA_OPEN_READ,
    };
    let cpath = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let mut handle = std::ptr::null_mut();
    // SAFETY: a NUL-terminated path, NULL dparams (the defaults), a place for the handle.
    let rc = unsafe {
        strata_schunk_open(
            cpath.as_ptr(),
            STRATA_OPEN_READ,
            0,
            std::ptr::null(),
            &mut handle,
        )
    };
    assert_eq!(rc, 0);
    let mut out = vec![0u8; want.len()];
    // SAFETY: a live handle and a buffer of `out.len()` bytes.
    let n = unsafe { strata_schunk_decompress_chunk(handle, 0, out.as_mut_ptr(), out.len()) };
    assert_eq!(n, want.len() as i64);
    assert_eq!(out, want);
    let mut items = [0u8; 12];
    // SAFETY: as above, 12 bytes.
    let n = unsafe { strata_schunk_getitem(handle, 3, 5, 3, items.as_mut_ptr(), items.len()) };
    assert_eq!(n, 12);
    let chunk3 =
        decompress_vec_ctx(&Context::global(), &dparams(&nd), &s.chunk(3).unwrap()).unwrap();
    assert_eq!(items[..], chunk3[20..32]);
    // SAFETY: the live handle, freed once.
    unsafe { strata_schunk_free(handle) };
}

#[test]
fn a_super_chunk_with_a_b2nd_metalayer_compresses_zfp_with_its_blockshape() {
    // C-Blosc2 hands the super-chunk to the codec when compressing too: chunks appended to a
    // b2nd super-chunk are ZFP streams (the same bytes as with the N-d context given), and a
    // metalayer added before the first chunk counts; without one they are stored raw.
    Registry::global().load_plugin(plugin_lib()).unwrap();
    let nd = meta(&[16, 24]);
    let src = field(&[16, 24], 2, 4);
    let with_nd = cparams(35, 50, 4, &nd);
    let want = compress(&Registry::global(), &with_nd, &src).unwrap();
    assert!(
        want.len() < src.len() && want[2] & 0x02 == 0,
        "a ZFP stream"
    );
    let opts = |metalayers| strata::schunk::SChunkOptions {
        cparams: CParams {
            nd: None,
            ..with_nd.clone()
        },
        metalayers,
        ..Default::default()
    };
    let mut s = strata::schunk::SChunk::new(&opts(vec![("b2nd".into(), nd.to_bytes())])).unwrap();
    s.append_buffer(&src).unwrap();
    assert_eq!(s.chunk(0).unwrap(), want);
    assert!(max_err(&s.decompress_chunk_vec(0).unwrap(), &src, 4) < 1.0);
    let mut s = strata::schunk::SChunk::new(&opts(Vec::new())).unwrap();
    s.meta_add("b2nd", &nd.to_bytes()).unwrap();
    s.append_buffer(&src).unwrap();
    assert_eq!(s.chunk(0).unwrap(), want);
    let mut s = strata::schunk::SChunk::new(&opts(Vec::new())).unwrap();
    s.append_buffer(&src).unwrap();
    let raw = s.chunk(0).unwrap();
    assert_eq!(
        (raw.len(), raw[2] & 0x02),
        (32 + src.len(), 0x02),
        "memcpyed"
    );
}
