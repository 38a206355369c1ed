//! The oracle of the `hdf5_chunk` fuzz target: one HDF5 chunk through the Blosc2 filter's
//! decoder (`strata::hdf5::chunk::decode`, which the plugin `plugins/hdf5` runs), with
//! fuzzer-chosen `cd_values`.
//!
//! Input layout: `ncd: u8` (taken modulo 25), `ncd` values as `u32` LE, then the chunk bytes.
//! Whatever they are, decoding returns `Ok` or an error, never panics, and allocates at most
//! [`MAX_OUT`] bytes; a chunk that decodes is re-encoded with the filter's plain-frame values
//! and must decode back to the same bytes (for lossless codecs and filters).
//!
//! The target (`fuzz_targets/hdf5_chunk.rs`) and the corpus generator include this file.

use strata::hdf5::cd::MAX_CD_VALUES;
use strata::hdf5::chunk::{decode, encode, Output};

/// Largest decoded chunk the oracle accepts.
pub const MAX_OUT: usize = 4 << 20;

/// An output buffer that refuses more than [`MAX_OUT`] bytes.
struct Bounded(Vec<u8>);

impl Output for Bounded {
    fn alloc(&mut self, len: usize) -> strata::Result<&mut [u8]> {
        if len > MAX_OUT {
            return Err(strata::Error::MemoryAlloc(len));
        }
        self.0.alloc(len)
    }
}

/// An input: the values, then the chunk.
#[must_use]
pub fn input(cd: &[u32], chunk: &[u8]) -> Vec<u8> {
    let mut v = vec![u8::try_from(cd.len()).expect("at most 24 values")];
    for x in cd {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.extend_from_slice(chunk);
    v
}

/// Splits an input into the values and the chunk.
fn parse(data: &[u8]) -> Option<(Vec<u32>, &[u8])> {
    let (&n, rest) = data.split_first()?;
    let n = usize::from(n) % (MAX_CD_VALUES + 1);
    let values = rest.get(..4 * n)?;
    let cd = values
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
        .collect();
    Some((cd, &rest[4 * n..]))
}

/// The check (see the module docs).
pub fn check(data: &[u8]) {
    let Some((cd, chunk)) = parse(data) else {
        return;
    };
    let mut out = Bounded(Vec::new());
    let Ok(n) = decode(&cd, chunk, &mut out) else {
        return;
    };
    let buf = out.0;
    assert!(
        n <= buf.len(),
        "decoded {n} bytes into a buffer of {}",
        buf.len()
    );
    let chunk_bytes = cd[3] as usize;
    assert!(
        buf.len() >= chunk_bytes,
        "buffer of {} under the chunk's {chunk_bytes}",
        buf.len()
    );
    let (filter, codec) = (
        cd.get(5).copied().unwrap_or(1),
        cd.get(6).copied().unwrap_or(0),
    );
    // trunc_prec (4) and the ZFP codecs (33-35) are lossy; only lossless pipelines round-trip.
    if filter == 4 || codec >= 32 || n == 0 {
        return;
    }
    let plain = [
        1,
        cd[1],
        cd[2],
        n as u32,
        cd.get(4).copied().unwrap_or(5).min(9),
        filter,
        codec,
    ];
    if let Ok(frame) = encode(&plain, &buf[..n]) {
        let mut again = Bounded(Vec::new());
        let m = decode(&plain, &frame, &mut again).expect("a frame the filter wrote decodes");
        assert_eq!(
            again.0[..m],
            buf[..n],
            "the re-encoded chunk decodes to other bytes"
        );
    }
}
