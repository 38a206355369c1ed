//! Fuzz target: getitem. See `check_getitem` in `src/lib.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata_fuzz::check_getitem(data));
