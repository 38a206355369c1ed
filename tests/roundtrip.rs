//! Round trips of whole chunks over codecs × filters × clevel × typesize × sizes × split modes,
//! plus getitem against slicing of the original bytes.

use proptest::prelude::*;
use strata::chunk::{compress_vec, decompress, decompress_vec, getitem, CParams, SplitMode};
use strata::{CodecId, FilterId};

const CODECS: [CodecId; 5] = [
    CodecId::BLOSCLZ,
    CodecId::LZ4,
    CodecId::LZ4HC,
    CodecId::ZLIB,
    CodecId::ZSTD,
];
const SPLITS: [SplitMode; 4] = [
    SplitMode::Always,
    SplitMode::Never,
    SplitMode::Auto,
    SplitMode::ForwardCompat,
];
const TYPESIZES: [usize; 8] = [1, 2, 3, 4, 8, 16, 200, 300];

/// Filter pipelines as (filters, filters_meta), lossless ones only.
fn pipelines() -> Vec<([FilterId; 6], [u8; 6])> {
    let f = |ids: [u8; 6]| ids.map(FilterId);
    vec![
        (f([0; 6]), [0; 6]),
        (f([0, 0, 0, 0, 0, 1]), [0; 6]),
        (f([0, 0, 0, 0, 0, 2]), [0; 6]),
        (f([3, 1, 0, 0, 0, 0]), [0; 6]),
        (f([0, 0, 0, 0, 3, 2]), [0; 6]),
        (f([1, 35, 0, 0, 0, 0]), [0; 6]),
        (f([1, 34, 0, 0, 0, 0]), [0; 6]),
        (f([1, 2, 3, 0, 0, 0]), [0; 6]),
    ]
}

/// Deterministic test data of `n` bytes: a smooth field with some noise, as climate grids look.
fn field(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    (0..n)
        .map(|i| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let smooth = ((i as f64 / 97.0).sin() * 40.0) as i64 as u8;
            if (x >> 60) == 0 {
                (x >> 33) as u8
            } else {
                smooth.wrapping_add((i % 4) as u8)
            }
        })
        .collect()
}

fn check(cparams: &CParams, data: &[u8]) {
    let chunk =
        compress_vec(cparams, data).unwrap_or_else(|e| panic!("{cparams:?} n={}: {e}", data.len()));
    assert!(
        chunk.len() <= data.len() + 32,
        "{cparams:?}: chunk larger than nbytes + 32"
    );
    let back =
        decompress_vec(&chunk).unwrap_or_else(|e| panic!("{cparams:?} n={}: {e}", data.len()));
    assert_eq!(back, data, "{cparams:?} n={}", data.len());
    // A destination bigger than needed must work and leave the rest alone.
    let mut big = vec![0xAAu8; data.len() + 100];
    assert_eq!(decompress(&chunk, &mut big).unwrap(), data.len());
    assert_eq!(&big[..data.len()], data);
    assert!(big[data.len()..].iter().all(|&b| b == 0xAA));
    // One byte short is an error, not a panic.
    if !data.is_empty() {
        let mut small = vec![0u8; data.len() - 1];
        assert_eq!(decompress(&chunk, &mut small).unwrap_err().code(), -6);
    }
}

#[test]
fn grid_small_sizes() {
    let sizes = [
        0usize, 1, 7, 31, 32, 33, 255, 1000, 4096, 12_345, 65_536, 100_003,
    ];
    for &codec in &CODECS {
        for (filters, filters_meta) in pipelines() {
            for &typesize in &TYPESIZES {
                for (k, &n) in sizes.iter().enumerate() {
                    let clevel = [0u8, 1, 5, 9][(k + typesize) % 4];
                    let splitmode = SPLITS[(k + usize::from(codec.0)) % 4];
                    let cparams = CParams {
                        codec,
                        clevel,
                        typesize,
                        filters,
                        filters_meta,
                        splitmode,
                        ..CParams::default()
                    };
                    check(&cparams, &field(n, k as u64));
                }
            }
        }
    }
}

#[test]
fn every_clevel_and_split_mode() {
    let data = field(200_000, 7);
    for &codec in &CODECS {
        for clevel in 0..=9 {
            for &splitmode in &SPLITS {
                let cparams = CParams {
                    codec,
                    clevel,
                    typesize: 4,
                    splitmode,
                    ..CParams::default()
                };
                check(&cparams, &data);
            }
        }
    }
}

#[test]
fn four_mib_plus_one() {
    let data = field(4 * 1024 * 1024 + 1, 3);
    for &codec in &CODECS {
        for &typesize in &[1usize, 4, 8] {
            let cparams = CParams {
                codec,
                typesize,
                clevel: 5,
                ..CParams::default()
            };
            check(&cparams, &data);
        }
    }
}

#[test]
fn explicit_blocksize_is_honoured() {
    let data = field(100_000, 1);
    for blocksize in [64usize, 1000, 4096, 65_536] {
        let cparams = CParams {
            typesize: 4,
            blocksize,
            ..CParams::default()
        };
        let chunk = compress_vec(&cparams, &data).unwrap();
        let h = strata::format::chunk::ChunkHeader::parse(&chunk).unwrap();
        assert_eq!(h.blocksize, blocksize);
        assert_eq!(decompress_vec(&chunk).unwrap(), data);
    }
}

#[test]
fn trunc_prec_zeroes_the_mantissa_bits() {
    let floats: Vec<f32> = (0..5000)
        .map(|i| (i as f32 * 0.37).sin() * 1000.0)
        .collect();
    let data: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    for (meta, zeroed) in [(10u8, 13u32), ((-5i8) as u8, 5)] {
        let cparams = CParams {
            typesize: 4,
            filters: [4, 1, 0, 0, 0, 0].map(FilterId),
            filters_meta: [meta, 0, 0, 0, 0, 0],
            ..CParams::default()
        };
        let back = decompress_vec(&compress_vec(&cparams, &data).unwrap()).unwrap();
        let expected: Vec<u8> = floats
            .iter()
            .flat_map(|f| (f.to_bits() & !((1u32 << zeroed) - 1)).to_le_bytes())
            .collect();
        assert_eq!(back, expected, "meta {meta}");
    }
    // trunc_prec on typesize 2 is an error naming the filter.
    let cparams = CParams {
        typesize: 2,
        filters: [4, 0, 0, 0, 0, 0].map(FilterId),
        filters_meta: [3, 0, 0, 0, 0, 0],
        ..CParams::default()
    };
    assert_eq!(compress_vec(&cparams, &data).unwrap_err().code(), -18);
}

#[test]
fn bytedelta_meta_zero_is_stored_as_the_typesize() {
    // Meta 0 means "the typesize"; the chunk stores the typesize itself (header bytes 24-29),
    // as python-blosc2 writes it, so that C-Blosc2 decodes it outside a super-chunk too. A
    // typesize over 255 is written as 1 (the chunk is a stream of bytes).
    let data = field(40_000, 7);
    for (typesize, stored) in [(2, 2u8), (4, 4), (8, 8), (255, 255), (300, 1)] {
        for (filter, clevel) in [
            (FilterId::BYTEDELTA, 5),
            (FilterId::BYTEDELTA_BUGGY, 5),
            (FilterId::BYTEDELTA, 0),
        ] {
            let cparams = |meta| {
                CParams::default()
                    .with_typesize(typesize)
                    .with_clevel(clevel)
                    .with_filters(
                        [
                            FilterId::SHUFFLE,
                            filter,
                            FilterId::NOFILTER,
                            FilterId::NOFILTER,
                            FilterId::NOFILTER,
                            FilterId::NOFILTER,
                        ],
                        [0, meta, 0, 0, 0, 0],
                    )
            };
            let chunk = compress_vec(&cparams(0), &data).unwrap();
            let what = format!("typesize {typesize}, filter {filter}, clevel {clevel}");
            assert_eq!(chunk[24..30], [0, stored, 0, 0, 0, 0], "{what}");
            assert_eq!(
                chunk,
                compress_vec(&cparams(stored), &data).unwrap(),
                "{what}"
            );
            assert_eq!(decompress_vec(&chunk).unwrap(), data, "{what}");
        }
    }
}

#[test]
fn zeros_become_a_special_chunk() {
    let data = vec![0u8; 1 << 20];
    let chunk = compress_vec(
        &CParams {
            typesize: 4,
            ..CParams::default()
        },
        &data,
    )
    .unwrap();
    assert_eq!(chunk.len(), 32);
    assert_eq!(chunk[31], 0x10);
    assert_eq!(decompress_vec(&chunk).unwrap(), data);
}

#[test]
fn zstd_dictionary_round_trip() {
    let data = field(1 << 20, 11);
    let cparams = CParams {
        codec: CodecId::ZSTD,
        typesize: 4,
        use_dict: true,
        blocksize: 16 * 1024,
        ..CParams::default()
    };
    let chunk = compress_vec(&cparams, &data).unwrap();
    let h = strata::format::chunk::ChunkHeader::parse(&chunk).unwrap();
    assert!(h.use_dict());
    assert_eq!(decompress_vec(&chunk).unwrap(), data);
    let mut item = [0u8; 40];
    getitem(&chunk, 100_000, 10, &mut item).unwrap();
    assert_eq!(&item[..], &data[400_000..400_040]);
    // A dictionary with another codec is refused.
    let bad = CParams {
        codec: CodecId::LZ4,
        use_dict: true,
        ..CParams::default()
    };
    assert_eq!(compress_vec(&bad, &data).unwrap_err().code(), -9);
}

#[test]
fn getitem_delta_blocks_other_than_zero() {
    // C-Blosc2 2.x returns wrong bytes here; Strata decodes block 0 first.
    let data: Vec<u8> = (0..50_000u32)
        .flat_map(|i| (i * 3 + 17).to_le_bytes())
        .collect();
    let cparams = CParams {
        typesize: 4,
        blocksize: 4096,
        filters: [3, 1, 0, 0, 0, 0].map(FilterId),
        ..CParams::default()
    };
    let chunk = compress_vec(&cparams, &data).unwrap();
    for (start, n) in [
        (0usize, 1usize),
        (1023, 2),
        (1024, 1),
        (5000, 3000),
        (49_999, 1),
        (12_345, 1),
    ] {
        let mut out = vec![0u8; n * 4];
        assert_eq!(getitem(&chunk, start, n, &mut out).unwrap(), n * 4);
        assert_eq!(
            out,
            &data[start * 4..(start + n) * 4],
            "start {start} n {n}"
        );
    }
    let mut out = [0u8; 8];
    assert_eq!(
        getitem(&chunk, 49_999, 2, &mut out).unwrap_err().code(),
        -33
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn random_parameters_round_trip(
        codec_i in 0usize..5,
        pipe_i in 0usize..8,
        clevel in 0u8..=9,
        ts_i in 0usize..8,
        split_i in 0usize..4,
        n in 0usize..70_000,
        seed in any::<u64>(),
        blocksize_pow in 0u32..20,
    ) {
        let (filters, filters_meta) = pipelines()[pipe_i];
        let typesize = TYPESIZES[ts_i];
        let blocksize = if blocksize_pow < 6 { 0 } else { (1usize << blocksize_pow) / typesize.max(1) * typesize.max(1) };
        let cparams = CParams {
            codec: CODECS[codec_i], clevel, typesize, filters, filters_meta,
            splitmode: SPLITS[split_i], blocksize, ..CParams::default()
        };
        let data = field(n, seed);
        check(&cparams, &data);
        // getitem over a random window agrees with slicing.
        let chunk = compress_vec(&cparams, &data).unwrap();
        let h = strata::format::chunk::ChunkHeader::parse(&chunk).unwrap();
        let items = n / h.typesize;
        if items > 0 {
            let start = (seed as usize) % items;
            let count = ((seed >> 20) as usize % (items - start)).max(1).min(items - start);
            let mut out = vec![0u8; count * h.typesize];
            getitem(&chunk, start, count, &mut out).unwrap();
            prop_assert_eq!(&out[..], &data[start * h.typesize..(start + count) * h.typesize]);
        }
    }
}
