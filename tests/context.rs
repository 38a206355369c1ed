//! The caller's context: a registry and a runtime made by the program, given to super-chunks
//! and arrays through their options, serve every step (frame checks, compression, reads, the
//! default partitions), while the global ones know nothing of them; and nothing keeps the
//! registry alive once its users are gone.

use std::sync::Arc;
use strata::block::BlockContext;
use strata::chunk::{compress_vec_ctx, CParams, Context};
use strata::codecs::Codec;
use strata::ndarray::{ArrayParams, Location, NdArray, OpenMode, OpenOptions, Scalar, Slice};
use strata::registry::Registry;
use strata::scheduler::topology::Topology;
use strata::scheduler::{Runtime, RuntimeConfig};
use strata::schunk::{SChunk, SChunkOptions};
use strata::{CodecId, FilterId, Result};

/// Stores a stream without its trailing zeros (restored from the decoded size): lossless.
struct TrimZeros;

impl Codec for TrimZeros {
    fn id(&self) -> CodecId {
        CodecId(183)
    }
    fn name(&self) -> &str {
        "trim_zeros"
    }
    fn compress(&self, src: &[u8], dst: &mut [u8], _: &BlockContext<'_>) -> Result<usize> {
        let n = src.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        if n == 0 || n > dst.len() {
            return Ok(0);
        }
        dst[..n].copy_from_slice(&src[..n]);
        Ok(n)
    }
    fn decompress(&self, src: &[u8], dst: &mut [u8], _: &BlockContext<'_>) -> Result<usize> {
        dst[..src.len()].copy_from_slice(src);
        dst[src.len()..].fill(0);
        Ok(dst.len())
    }
}

/// A registry holding the built-ins and [`TrimZeros`], and a context of it.
fn custom() -> (Arc<Registry>, Context) {
    let registry = Arc::new(Registry::with_builtins());
    registry.register_codec(Arc::new(TrimZeros)).unwrap();
    let ctx = Context::single_threaded().with_registry(Arc::clone(&registry));
    (registry, ctx)
}

fn cparams() -> CParams {
    CParams::default()
        .with_codec(CodecId(183))
        .with_typesize(1)
        .with_blocksize(1024)
        .with_filters([FilterId::NOFILTER; 6], [0; 6])
}

/// Blocks of 1024 bytes whose second half is zeros.
fn data(n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| {
            if i % 1024 < 512 {
                (i % 251) as u8 | 1
            } else {
                0
            }
        })
        .collect()
}

#[test]
fn a_super_chunk_works_on_the_context_of_its_options() {
    let (registry, ctx) = custom();
    let create = SChunkOptions::default()
        .with_cparams(cparams())
        .with_chunksize(8192)
        .with_context(ctx.clone());
    let mut s = SChunk::new(&create).unwrap();
    let d = data(5 * 8192);
    s.append_data(&d).unwrap();
    assert_eq!(s.context(), &ctx);
    assert!(s.cbytes() < d.len() as u64 * 6 / 10, "{} bytes", s.cbytes());
    let frame = s.to_cframe().unwrap();
    drop(s);

    // The global registry has no codec 183: the frame opens, its chunks do not decode.
    let global = SChunk::from_cframe(frame.clone()).unwrap();
    assert_eq!(global.decompress_all().unwrap_err().code(), -7);
    // With the context, everything works: reads, and appends (checked on the registry).
    let open = OpenOptions::new(OpenMode::ReadWrite).with_context(ctx.clone());
    let mut s = SChunk::from_cframe_with(frame, &open).unwrap();
    assert_eq!(s.decompress_all().unwrap(), d);
    let more = compress_vec_ctx(&ctx, &cparams(), &d[..8192]).unwrap();
    assert_eq!(s.append_chunk(&more).unwrap(), 6);
    // The frame checks a new chunk on the global registry only when given that one.
    let mut plain = SChunk::new(&SChunkOptions::default().with_cparams(cparams())).unwrap();
    assert_eq!(plain.append_chunk(&more).unwrap_err().code(), -7);
    drop((s, global, plain, ctx, create, open));
    assert_eq!(
        Arc::strong_count(&registry),
        1,
        "the registry outlives its users"
    );
}

#[test]
fn an_array_works_on_the_context_of_its_params_and_open_options() {
    let (registry, ctx) = custom();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.b2nd");
    let params = ArrayParams::from_dtype(&[64, 64], u8::DTYPE)
        .unwrap()
        .with_chunkshape(&[32, 64])
        .with_blockshape(&[16, 64])
        .with_cparams(&cparams())
        .with_context(ctx.clone());
    let d = data(64 * 64);
    NdArray::from_items(&params, &Location::File(path.clone()), &d)
        .unwrap()
        .close()
        .unwrap();
    let row = [Slice::index(3)];
    let plain = NdArray::open(&path, OpenMode::Read).unwrap();
    assert_eq!(plain.get_slice_as::<u8>(&row).unwrap_err().code(), -7);
    let arr =
        NdArray::open_with(&path, &OpenOptions::new(OpenMode::Read).with_context(ctx)).unwrap();
    assert_eq!(arr.get_slice_as::<u8>(&row).unwrap().0, d[3 * 64..4 * 64]);
    // A slice copied into a new array keeps the context.
    let part = arr.slice(&[Slice::range(0, 16)]).unwrap();
    assert!(Arc::ptr_eq(part.context().registry(), &registry));
    assert_eq!(part.to_vec().unwrap(), d[..16 * 64]);
    drop((arr, part, plain, params));
    assert_eq!(
        Arc::strong_count(&registry),
        1,
        "the registry outlives its users"
    );
}

#[test]
fn default_partitions_come_from_the_caches_of_the_context() {
    // Small caches: blocks of 64 KiB (L2 / 4), chunks of 4 MiB (L3 / 2).
    let topology = Topology::from_sizes(32 << 10, 256 << 10, 8 << 20);
    let runtime = Runtime::new(
        RuntimeConfig::default()
            .with_workers(0)
            .with_topology(topology),
    );
    let ctx = Context::global().with_runtime(Arc::new(runtime));
    let params = ArrayParams::from_dtype(&[2161, 4320], f32::DTYPE)
        .unwrap()
        .with_context(ctx);
    let arr = NdArray::zeros(&params, &Location::Memory).unwrap();
    assert_eq!(
        (arr.chunkshape(), arr.blockshape()),
        (&[1024, 1024][..], &[128, 128][..])
    );
    assert_eq!(params.meta().unwrap().chunkshape, [1024, 1024]);
}
