//! The same chunk bytes whatever the thread count, and parallel decompression and getitem
//! equal to the serial ones, on every codec and filter pipeline.

use std::sync::Arc;
use strata::chunk::{
    compress_ctx, decompress_ctx, decompress_vec_ctx, getitem_ctx, max_compressed_len, CParams,
    Context, DParams,
};
use strata::registry::Registry;
use strata::scheduler::{Runtime, RuntimeConfig};
use strata::{CodecId, FilterId};

fn field(n: usize) -> Vec<u8> {
    (0..n / 4)
        .flat_map(|i| (((i as f32) / 300.0).sin() * 100.0 + (i % 7) as f32).to_le_bytes())
        .chain(std::iter::repeat_n(7u8, n % 4))
        .collect()
}

fn contexts() -> Vec<Context> {
    [(2, true), (4, false)]
        .into_iter()
        .map(|(workers, pin)| {
            let config = RuntimeConfig::default().with_workers(workers).with_pin(pin);
            Context::new(Registry::global(), Arc::new(Runtime::new(config)))
        })
        .collect()
}

#[test]
fn identical_bytes_for_1_2_and_n_threads() {
    let data = field(3 * 1024 * 1024 + 13);
    let pipelines: [[u8; 6]; 5] = [
        [0; 6],
        [0, 0, 0, 0, 0, 1],
        [0, 0, 0, 0, 0, 2],
        [3, 1, 0, 0, 0, 0],
        [1, 35, 0, 0, 0, 0],
    ];
    for ctx in contexts() {
        for codec in [0u8, 1, 2, 4, 5].map(CodecId) {
            for filters in pipelines {
                let mut reference: Option<Vec<u8>> = None;
                for nthreads in [1usize, 2, 3, 8] {
                    let cparams = CParams {
                        codec,
                        typesize: 4,
                        filters: filters.map(FilterId),
                        nthreads,
                        blocksize: 64 * 1024,
                        ..CParams::default()
                    };
                    let mut out = vec![0u8; max_compressed_len(data.len())];
                    let n = compress_ctx(&ctx, &cparams, &data, &mut out).unwrap();
                    out.truncate(n);
                    match &reference {
                        None => reference = Some(out.clone()),
                        Some(r) => assert!(
                            r == &out,
                            "codec {codec} filters {filters:?}: {nthreads} threads differ"
                        ),
                    }
                    let dparams = DParams {
                        nthreads,
                        ..DParams::default()
                    };
                    assert_eq!(decompress_vec_ctx(&ctx, &dparams, &out).unwrap(), data);
                    let mut back = vec![0u8; data.len() + 8];
                    assert_eq!(
                        decompress_ctx(&ctx, &dparams, &out, &mut back).unwrap(),
                        data.len()
                    );
                    assert_eq!(&back[..data.len()], &data[..]);
                    // A window over many blocks, starting and ending inside blocks.
                    let (start, nitems) = (12_345usize, 400_000usize);
                    let mut items = vec![0u8; nitems * 4];
                    getitem_ctx(&ctx, &dparams, &out, start, nitems, &mut items).unwrap();
                    assert_eq!(items, &data[start * 4..(start + nitems) * 4]);
                }
            }
        }
    }
}

/// Destinations from roomy to too small, on data that barely compresses (noise before a
/// compressible tail): the blocks that meet the end of the destination are compressed again in
/// the room left, and a chunk that cannot fit is stored raw, with the same bytes (or the same
/// error) on every thread count.
#[test]
fn identical_bytes_in_tight_destinations() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut data: Vec<u8> = (0..768 * 1024)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    data.extend(field(256 * 1024));
    let ctx = &contexts()[0];
    let full = max_compressed_len(data.len());
    for codec in [0u8, 1, 5].map(CodecId) {
        let cparams = |nthreads| CParams {
            codec,
            typesize: 4,
            nthreads,
            blocksize: 32 * 1024,
            ..CParams::default()
        };
        let mut out = vec![0u8; full];
        let cbytes = compress_ctx(ctx, &cparams(1), &data, &mut out).unwrap();
        assert!(cbytes < data.len(), "codec {codec}: the tail compresses");
        // Room for the chunk exactly, within one block's worst case of it, and short of it.
        let rooms = [
            cbytes,
            cbytes + 1,
            cbytes + 20_000,
            cbytes + 40_000,
            cbytes - 1,
            full,
        ];
        for room in rooms {
            let mut reference: Option<Result<Vec<u8>, String>> = None;
            for nthreads in [1usize, 2, 3] {
                let cparams = cparams(nthreads);
                let mut out = vec![0u8; room];
                let got = compress_ctx(ctx, &cparams, &data, &mut out)
                    .map(|n| out[..n].to_vec())
                    .map_err(|e| e.to_string());
                if let Ok(chunk) = &got {
                    assert_eq!(
                        decompress_vec_ctx(ctx, &DParams::default(), chunk).unwrap(),
                        data
                    );
                }
                match &reference {
                    None => reference = Some(got),
                    Some(r) => assert!(
                        r == &got,
                        "codec {codec}, {room} bytes of room: {nthreads} threads differ"
                    ),
                }
            }
        }
    }
}

#[test]
fn nthreads_changing_between_calls() {
    let ctx = &contexts()[0];
    let data = field(1 << 20);
    for round in 0..20usize {
        ctx.runtime().set_nthreads(1 + round % 3);
        let cparams = CParams {
            typesize: 4,
            nthreads: 0,
            blocksize: 32 * 1024,
            ..CParams::default()
        };
        let mut out = vec![0u8; max_compressed_len(data.len())];
        let n = compress_ctx(ctx, &cparams, &data, &mut out).unwrap();
        assert_eq!(
            decompress_vec_ctx(ctx, &DParams::default(), &out[..n]).unwrap(),
            data
        );
    }
}

#[test]
fn application_threads_share_the_runtime() {
    let data = Arc::new(field(2 << 20));
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let data = Arc::clone(&data);
            std::thread::spawn(move || {
                let cparams = CParams {
                    codec: [CodecId::BLOSCLZ, CodecId::LZ4, CodecId::ZSTD][t % 3],
                    typesize: 4,
                    blocksize: 64 * 1024,
                    ..CParams::default()
                };
                for _ in 0..5 {
                    let chunk = strata::chunk::compress_vec(&cparams, &data).unwrap();
                    assert_eq!(strata::chunk::decompress_vec(&chunk).unwrap(), *data);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn buffers_bigger_than_a_chunk_split_into_parallel_chunks() {
    use strata::chunk::{compress_chunks, compress_vec, decompress_chunks};
    let data = field(10 * 1024 * 1024 + 5);
    for ctx in contexts() {
        for nthreads in [1usize, 2, 4] {
            let cparams = CParams {
                codec: CodecId::LZ4,
                typesize: 4,
                nthreads,
                ..CParams::default()
            };
            let chunks = compress_chunks(&ctx, &cparams, &data, 4 << 20).unwrap();
            assert_eq!(chunks.len(), 3);
            // Each chunk is what compressing its piece alone gives.
            for (chunk, piece) in chunks.iter().zip(data.chunks(4 << 20)) {
                assert!(
                    *chunk
                        == compress_vec(
                            &CParams {
                                nthreads: 1,
                                ..cparams.clone()
                            },
                            piece
                        )
                        .unwrap()
                );
            }
            let refs: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
            let mut back = vec![0u8; data.len()];
            assert_eq!(
                decompress_chunks(
                    &ctx,
                    &DParams {
                        nthreads,
                        ..DParams::default()
                    },
                    &refs,
                    &mut back
                )
                .unwrap(),
                data.len()
            );
            assert_eq!(back, data);
            let mut short = vec![0u8; data.len() - 1];
            assert_eq!(
                decompress_chunks(
                    &ctx,
                    &DParams {
                        nthreads,
                        ..DParams::default()
                    },
                    &refs,
                    &mut short
                )
                .unwrap_err()
                .code(),
                -6
            );
        }
    }
    assert_eq!(
        compress_chunks(&contexts()[0], &CParams::default(), &data, 0)
            .unwrap_err()
            .code(),
        -12
    );
}
