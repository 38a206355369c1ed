//! Fuzz target: `strata info` of a file's bytes. See `check_info` in `src/info.rs`.
#![no_main]

#[path = "../src/info.rs"]
mod info;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if !strata_fuzz::frame_too_big(data) {
        info::check_info(data);
    }
});
