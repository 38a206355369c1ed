//! Fuzz target: a frame opened from memory and read whole. See `check_frame` in `src/lib.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata_fuzz::check_frame(data));
