//! In-process plugins: Rust trait objects through `Registry::register_codec` /
//! `register_filter`, the Blosc2 ID rules they must follow, and panics turned into errors.
//! (C descriptors registered in-process: c-examples/register_plugin.c, run by tests/ffi_c.rs.)

use std::sync::Arc;
use strata::block::BlockContext;
use strata::chunk::{
    compress_ctx, decompress_vec_ctx, getitem_ctx, max_compressed_len, CParams, Context, DParams,
};
use strata::codecs::Codec;
use strata::filters::Filter;
use strata::format::b2nd::B2ndMeta;
use strata::registry::{Origin, PluginKind, Registry};
use strata::scheduler::Runtime;
use strata::Result;
use strata::{CodecId, FilterId};

/// Stores the block reversed without its last 16 bytes (restored as zeros); panics when the
/// meta byte is 0xEE (compressing) or 0xEF (decompressing).
struct Reverse {
    id: u8,
    name: &'static str,
}

impl Codec for Reverse {
    fn id(&self) -> CodecId {
        CodecId(self.id)
    }
    fn name(&self) -> &str {
        self.name
    }
    fn compress(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<usize> {
        assert!(ctx.meta != 0xEE, "meta 0xEE makes this codec panic");
        if let Some(nd) = ctx.nd {
            // The N-d context reaches the codec: the block is one blockshape of items.
            let items: i32 = nd.blockshape.iter().product();
            assert_eq!(ctx.blocksize, items as usize * ctx.typesize);
        }
        let n = src.len().saturating_sub(16);
        if dst.len() < n {
            return Ok(0);
        }
        // Lossy, but shows the codec ran.
        for (d, s) in dst[..n].iter_mut().zip(src[..n].iter().rev()) {
            *d = *s;
        }
        Ok(n)
    }
    fn decompress(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<usize> {
        assert!(ctx.meta != 0xEF, "meta 0xEF makes decompression panic");
        for (d, s) in dst.iter_mut().zip(src.iter().rev()) {
            *d = *s;
        }
        dst[src.len()..].fill(0);
        Ok(dst.len())
    }
}

/// Adds the meta byte to every byte.
struct AddMeta;

impl Filter for AddMeta {
    fn id(&self) -> FilterId {
        FilterId(170)
    }
    fn name(&self) -> &str {
        "add_meta"
    }
    fn forward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        assert!(ctx.meta != 0xEE, "filter panic");
        for (d, s) in dst.iter_mut().zip(src) {
            *d = s.wrapping_add(ctx.meta);
        }
        Ok(())
    }
    fn backward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = s.wrapping_sub(ctx.meta);
        }
        Ok(())
    }
}

fn ctx(reg: &Arc<Registry>) -> Context {
    Context::new(Arc::clone(reg), Runtime::global())
}

fn compress(reg: &Arc<Registry>, cparams: &CParams, data: &[u8]) -> Result<Vec<u8>> {
    let mut out = vec![0u8; max_compressed_len(data.len())];
    let n = compress_ctx(&ctx(reg), cparams, data, &mut out)?;
    out.truncate(n);
    Ok(out)
}

fn data() -> Vec<u8> {
    (0..8192u32).map(|i| (i % 251) as u8 | 1).collect()
}

#[test]
fn a_rust_codec_and_filter_register_and_run_in_the_pipeline() {
    let reg = Arc::new(Registry::with_builtins());
    reg.register_codec(Arc::new(Reverse {
        id: 180,
        name: "reverse",
    }))
    .unwrap();
    reg.register_filter(Arc::new(AddMeta)).unwrap();
    let cparams = CParams {
        codec: CodecId(180),
        typesize: 1,
        blocksize: 1024,
        filters: [170, 0, 0, 0, 0, 0].map(FilterId),
        filters_meta: [3, 0, 0, 0, 0, 0],
        nthreads: 1,
        ..CParams::default()
    };
    let src = data();
    let chunk = compress(&reg, &cparams, &src).unwrap();
    let back = decompress_vec_ctx(&ctx(&reg), &DParams::default(), &chunk).unwrap();
    // Each 1024-byte block lost its last 16 bytes to the codec (restored as 0 - 3 by the filter).
    assert!(chunk.len() < src.len());
    for (nblock, (b, s)) in back.chunks(1024).zip(src.chunks(1024)).enumerate() {
        assert_eq!(b[..1008], s[..1008], "block {nblock}");
        assert!(
            b[1008..].iter().all(|&x| x == 0u8.wrapping_sub(3)),
            "block {nblock}"
        );
    }
    let kinds: Vec<_> = reg
        .list()
        .into_iter()
        .filter(|r| r.origin == Origin::InProcess)
        .map(|r| (r.kind, r.id, r.name))
        .collect();
    assert_eq!(
        kinds,
        [
            (PluginKind::Codec, 180, "reverse".into()),
            (PluginKind::Filter, 170, "add_meta".into())
        ]
    );
    assert_eq!(
        reg.list().iter().find(|r| r.id == 5).unwrap().origin,
        Origin::Builtin
    );
}

#[test]
fn ids_and_names_follow_the_blosc2_rules() {
    let reg = Arc::new(Registry::with_builtins());
    let bad = |id, name| {
        reg.register_codec(Arc::new(Reverse { id, name }))
            .unwrap_err()
    };
    assert!(bad(3, "mine").to_string().contains("built-in range"));
    assert!(bad(33, "mine")
        .to_string()
        .contains("Blosc2's zfp_acc, not mine"));
    assert!(bad(99, "mine")
        .to_string()
        .contains("assigns it to nothing"));
    assert!(bad(200, "bad name").to_string().contains("[A-Za-z0-9_]"));
    // Blosc2's own name for a registered ID is accepted.
    reg.register_codec(Arc::new(Reverse {
        id: 33,
        name: "zfp_acc",
    }))
    .unwrap();
    reg.register_codec(Arc::new(Reverse {
        id: 200,
        name: "mine",
    }))
    .unwrap();
    assert!(bad(200, "other")
        .to_string()
        .contains("already taken by mine"));
    assert!(bad(201, "mine")
        .to_string()
        .contains("name mine is already taken by ID 200"));
    assert!(bad(201, "zstd")
        .to_string()
        .contains("name zstd is already taken by ID 5"));
    assert_eq!(bad(3, "x").code(), -12);
}

#[test]
fn a_panicking_rust_plugin_gives_an_error_code_not_an_abort() {
    let reg = Arc::new(Registry::with_builtins());
    reg.register_codec(Arc::new(Reverse {
        id: 181,
        name: "reverse",
    }))
    .unwrap();
    reg.register_filter(Arc::new(AddMeta)).unwrap();
    let base = CParams {
        codec: CodecId(181),
        typesize: 1,
        filters: [FilterId::NOFILTER; 6],
        nthreads: 1,
        ..CParams::default()
    };
    let panics = CParams {
        codec_meta: 0xEE,
        ..base.clone()
    };
    let err = compress(&reg, &panics, &data()).unwrap_err();
    assert_eq!(err, strata::Error::PluginPanic { id: 181 });
    assert_eq!(err.code(), -1000);
    let filter_panics = CParams {
        filters: [170, 0, 0, 0, 0, 0].map(FilterId),
        filters_meta: [0xEE, 0, 0, 0, 0, 0],
        ..base.clone()
    };
    assert_eq!(
        compress(&reg, &filter_panics, &data()).unwrap_err(),
        strata::Error::PluginPanic { id: 170 }
    );
    // On several threads too, and when decompressing.
    let many = CParams {
        codec_meta: 0xEF,
        blocksize: 1024,
        nthreads: 4,
        ..base
    };
    let chunk = compress(&reg, &many, &data()).unwrap();
    let dparams = DParams {
        nthreads: 4,
        ..DParams::default()
    };
    let err = decompress_vec_ctx(&ctx(&reg), &dparams, &chunk).unwrap_err();
    assert_eq!(err, strata::Error::PluginPanic { id: 181 });
    let mut item = [0u8; 4];
    let err = getitem_ctx(&ctx(&reg), &dparams, &chunk, 10, 4, &mut item).unwrap_err();
    assert_eq!(err.code(), -1000);
}

#[test]
fn the_nd_context_reaches_codecs_through_cparams_and_dparams() {
    /// Fails unless it is given the N-d context it expects.
    struct NeedsNd;
    impl Codec for NeedsNd {
        fn id(&self) -> CodecId {
            CodecId(190)
        }
        fn name(&self) -> &str {
            "needs_nd"
        }
        fn compress(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<usize> {
            let nd = ctx.nd.ok_or_else(|| strata::Error::CodecParam {
                id: 190,
                message: "no nd".into(),
            })?;
            assert_eq!(nd.blockshape, [8, 16]);
            dst[..src.len() / 2].copy_from_slice(&src[..src.len() / 2]);
            Ok(src.len() / 2)
        }
        fn decompress(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<usize> {
            let nd = ctx.nd.ok_or_else(|| strata::Error::CodecParam {
                id: 190,
                message: "no nd".into(),
            })?;
            assert_eq!(nd.shape, [20, 40]);
            dst[..src.len()].copy_from_slice(src);
            dst[src.len()..].copy_from_slice(src);
            Ok(dst.len())
        }
    }
    let reg = Arc::new(Registry::with_builtins());
    reg.register_codec(Arc::new(NeedsNd)).unwrap();
    let meta = Arc::new(B2ndMeta::new(vec![20, 40], vec![16, 32], vec![8, 16], "|u1").unwrap());
    let cparams = CParams {
        codec: CodecId(190),
        typesize: 1,
        blocksize: 128,
        filters: [FilterId::NOFILTER; 6],
        nthreads: 1,
        ..CParams::default()
    };
    // Every block is two equal halves, so the halving codec is lossless here.
    let src: Vec<u8> = (0..512).map(|i| ((i % 64) + 1) as u8).collect();
    assert_eq!(compress(&reg, &cparams, &src).unwrap_err().code(), -8);
    let with_nd = CParams {
        nd: Some(meta.clone()),
        ..cparams
    };
    let chunk = compress(&reg, &with_nd, &src).unwrap();
    let c = ctx(&reg);
    assert_eq!(
        decompress_vec_ctx(&c, &DParams::default(), &chunk)
            .unwrap_err()
            .code(),
        -8
    );
    let dparams = DParams {
        nd: Some(meta),
        ..DParams::default()
    };
    assert_eq!(decompress_vec_ctx(&c, &dparams, &chunk).unwrap(), src);
    let mut items = [0u8; 3];
    getitem_ctx(&c, &dparams, &chunk, 130, 3, &mut items).unwrap();
    assert_eq!(items, src[130..133]);
}

#[test]
fn the_c_header_plugin_macros_match_the_abi_crate() {
    let h =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/include/strata.h")).unwrap();
    let define = |name: &str| -> String {
        h.lines()
            .find_map(|l| l.strip_prefix(&format!("#define {name} ")))
            .unwrap_or_else(|| panic!("{name} missing from strata.h"))
            .trim()
            .to_owned()
    };
    use strata_plugin_api as api;
    assert_eq!(
        define("STRATA_PLUGIN_ABI_VERSION"),
        api::ABI_VERSION.to_string()
    );
    assert_eq!(define("STRATA_PLUGIN_CODEC"), api::KIND_CODEC.to_string());
    assert_eq!(define("STRATA_PLUGIN_FILTER"), api::KIND_FILTER.to_string());
    assert_eq!(
        define("STRATA_PLUGIN_CODEC_NEEDS_ND"),
        api::CODEC_NEEDS_ND.to_string()
    );
    assert_eq!(
        define("STRATA_PLUGIN_ENTRY"),
        format!("\"{}\"", api::ENTRY_SYMBOL)
    );
    let load = strata::Error::PluginLoad {
        source_name: String::new(),
        message: String::new(),
    };
    assert_eq!(define("STRATA_ERROR_PLUGIN_LOAD"), load.code().to_string());
    assert_eq!(
        define("STRATA_ERROR_PLUGIN_PANIC"),
        api::ERROR_PANIC.to_string()
    );
    assert_eq!(
        define("STRATA_ERROR_CODEC_PARAM"),
        api::ERROR_CODEC_PARAM.to_string()
    );
    assert_eq!(define("STRATA_ERROR_DATA"), api::ERROR_DATA.to_string());
    assert_eq!(
        define("STRATA_ERROR_INVALID_PARAM"),
        api::ERROR_INVALID_PARAM.to_string()
    );
    assert!(
        h.contains("typedef const strata_plugin *const *(*strata_plugin_entry_fn)(size_t *count);")
    );
    assert!(h.contains("int32_t strata_register_plugin(const strata_plugin *plugin);"));
}
