//! Fuzz target: stratad's request parsers — request paths, the `slice_`/`sel` grammar
//! resolved with NumPy's rules, `indices` JSON, `Range` headers, chunk numbers and tokens.
//! Whatever the text, each gives a value or an error, never a panic, and what it gives holds
//! its promises: path segments are plain names, resolved keys fit the shape (and agree with
//! the library's own selection), ranges are sorted, disjoint and inside the body.
//!
//! Input: `kind: u8`, then per kind a few bytes of parameters and the text (lossy UTF-8).
#![no_main]

use strata::ndarray::Selection;
use strata_daemon::parse::{self, Ranges};
use strata_daemon::select::{self, FancyAxis, Indexed};

/// A shape of up to 4 axes of up to 40 items from the first bytes.
fn shape(data: &[u8]) -> (Vec<usize>, &[u8]) {
    let Some((&n, rest)) = data.split_first() else {
        return (vec![], data);
    };
    let n = (n % 5) as usize;
    let dims: Vec<usize> = rest.iter().take(n).map(|&b| (b % 41) as usize).collect();
    let k = dims.len();
    (dims, &rest[k..])
}

fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    match kind % 6 {
        0 => {
            if let Ok(segs) = parse::request_path(&text(rest)) {
                assert!(!segs.is_empty() && segs.len() <= parse::MAX_SEGMENTS);
                for s in &segs {
                    assert!(!s.is_empty() && s != "." && s != "..");
                    assert!(!s.contains(['/', '\\', '\0']));
                }
            }
        }
        1 => {
            let (shape, rest) = shape(rest);
            if let Ok(items) = parse::key(&text(rest)) {
                if let Ok(b) = select::basic(&items, &shape) {
                    assert_eq!(b.slices.len(), shape.len());
                    let sel = Selection::new(&shape, &b.slices).expect("a resolved key selects");
                    // NumPy's shape is the library's with the integer axes dropped.
                    let kept: Vec<usize> = sel
                        .shape()
                        .iter()
                        .zip(0..)
                        .filter(|(_, d)| !matches!(items.get(*d), Some(parse::KeyItem::Index(_))))
                        .map(|(&n, _)| n)
                        .collect();
                    assert_eq!(kept, b.shape);
                    if b.whole {
                        assert_eq!(b.shape, shape);
                    }
                }
                let nitems = shape.iter().product::<usize>() as u64;
                if let Ok(r) = select::flat(&items, nitems) {
                    assert!(r.start <= r.end && r.end <= nitems);
                }
            }
        }
        2 => {
            let (shape, rest) = shape(rest);
            if let Ok(entries) = parse::indices(&text(rest), 1000) {
                match select::indexed(&entries, &shape) {
                    Ok(Indexed::Fancy(f)) => {
                        assert_eq!(f.axes.len(), shape.len());
                        for (d, ax) in f.axes.iter().enumerate() {
                            if let FancyAxis::Points(p) = ax {
                                assert!(p.len() == 1 || p.len() == f.npoints);
                                assert!(p.iter().all(|&c| c < shape[d]));
                            }
                        }
                        assert!(f.shape.contains(&f.npoints));
                    }
                    Ok(Indexed::Basic(b)) => assert!(b.shape.len() <= shape.len()),
                    Err(_) => {}
                }
            }
        }
        3 => {
            let mut len = [0u8; 4];
            let n = rest.len().min(4);
            len[..n].copy_from_slice(&rest[..n]);
            let len = u64::from(u32::from_le_bytes(len));
            if let Ranges::Spans(spans) = parse::range(&text(&rest[n..]), len, 64) {
                assert!(!spans.is_empty() && spans.len() <= 64);
                for w in spans.windows(2) {
                    assert!(w[0].1 + 1 < w[1].0, "spans overlap or touch");
                }
                for &(a, b) in &spans {
                    assert!(a <= b && b < len);
                }
            }
        }
        4 => {
            let t = text(rest);
            if let Ok(n) = parse::nchunk(&t) {
                let digits = t.trim();
                assert!(digits.bytes().all(|c| c.is_ascii_digit()));
                assert_eq!(digits.parse::<u128>().ok(), Some(u128::from(n)));
            }
        }
        _ => {
            let t = text(rest);
            let (auth, cookie) = t.split_once('\n').unwrap_or((&t, ""));
            if let Ok(Some(tok)) = strata_daemon::auth::token_of(Some(auth), std::iter::once(cookie)) {
                assert!(!tok.is_empty());
            }
            if let Ok(Some(tok)) = strata_daemon::auth::token_of(None, std::iter::once(cookie)) {
                assert!(!tok.is_empty());
            }
        }
    }
});
