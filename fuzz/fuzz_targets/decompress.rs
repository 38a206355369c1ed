//! Fuzz target: whole-chunk decompression. See `check_decompress` in `src/lib.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata_fuzz::check_decompress(data));
