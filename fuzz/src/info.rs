//! The oracle of the `info` fuzz target: what `strata info` runs ([`report_bytes`], the report
//! builder of a file held in memory, then both renderers), on any bytes.
//!
//! Not a module of `strata_fuzz` (whose `lib.rs` `tests/bad_input.rs` includes, with `strata`
//! alone as a dependency): `fuzz_targets/info.rs` and `cli/tests/fuzz_regressions.rs` (which
//! replays the saved `info-*` inputs) include this file with `#[path]`. It uses only
//! `strata_cli`, `serde_json` and `std`.

use strata_cli::commands::info::{report_bytes, InfoReport};
use strata_cli::report::Report;

/// The name the input stands under in the report and in errors.
pub const NAME: &str = "fuzz-input.b2frame";

/// Runs `strata info` on `data` as the file [`NAME`].
///
/// # Panics
/// When `strata info` misbehaves: a panic inside it, an error that does not name the file, a
/// report that does not render, JSON that does not parse or disagrees with the report, or
/// sizes that contradict each other.
pub fn check_info(data: &[u8]) {
    let report = match report_bytes(NAME, data) {
        Ok(r) => r,
        Err(e) => {
            let message = format!("{e:#}");
            assert!(
                message.contains(NAME),
                "an error without the file's name: {message}"
            );
            return;
        }
    };
    let mut text = Vec::new();
    report.write_text(&mut text).expect("the text renders");
    let text = String::from_utf8(text).expect("the text is UTF-8");
    let mut json = Vec::new();
    report.write_json(&mut json).expect("the JSON renders");
    assert_eq!(
        json.iter().filter(|&&b| b == b'\n').count(),
        1,
        "one JSON line"
    );
    let json: serde_json::Value = serde_json::from_slice(&json).expect("the JSON parses");
    match &report {
        InfoReport::Chunk(c) => {
            assert!(text.starts_with("version:"), "{text}");
            assert_eq!(json["nbytes"], c.nbytes);
            assert_eq!(json["cbytes"], c.cbytes);
            assert_eq!(
                json["filters"].as_array().map(Vec::len),
                Some(c.filters.len())
            );
        }
        InfoReport::Frame(f) => {
            assert!(text.starts_with(&format!("{NAME}: {}\n", f.kind)), "{text}");
            assert_eq!(json["nbytes"], f.nbytes);
            assert_eq!(json["stored_bytes"], f.stored_bytes);
            assert!(f.stored_bytes >= f.frame_len);
            let s = f.special_chunks;
            assert!(s.zero + s.nan + s.uninit <= f.nchunks);
            if let Some(m) = &f.b2nd {
                // The array's size is its items', computed without overflow.
                let items = m.shape.iter().try_fold(f.typesize as u128, |acc, &d| {
                    acc.checked_mul(u128::try_from(d).ok()?)
                });
                assert_eq!(items, Some(u128::from(f.nbytes)), "{:?}", m.shape);
            }
        }
        InfoReport::Hdf5(_) => {
            panic!("report_bytes gave an HDF5 report; it reads chunks and frames")
        }
    }
}
