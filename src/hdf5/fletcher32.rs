//! HDF5's Fletcher32 checksum, which its filter 3 appends to each chunk (4 bytes, the
//! machine's byte order; HDF5 before 1.6.3 wrote the halves' bytes swapped, and HDF5 still
//! accepts both).
//!
//! Format: HDF5's `H5checksum.c` (`H5_checksum_fletcher32`: 16-bit words, high byte first,
//! sums folded every 360 words) and `H5Zfletcher32.c`.
#![forbid(unsafe_code)]

use crate::error::{Error, Expected, Result};

/// The Fletcher32 checksum of `data`, as HDF5 computes it.
#[must_use]
pub fn fletcher32(data: &[u8]) -> u32 {
    let (mut sum1, mut sum2) = (0u32, 0u32);
    let fold = |x: u32| (x & 0xffff) + (x >> 16);
    for words in data.chunks(720) {
        for w in words.chunks(2) {
            let word = (u32::from(w[0]) << 8) | w.get(1).map_or(0, |&b| u32::from(b));
            sum1 += word;
            sum2 += sum1;
        }
        sum1 = fold(sum1);
        sum2 = fold(sum2);
    }
    sum1 = fold(sum1);
    sum2 = fold(sum2);
    (sum2 << 16) | sum1
}

/// Checks the 4-byte Fletcher32 checksum at the end of `stored` against the bytes before it.
///
/// # Errors
/// [`Error::InvalidHeader`] naming both checksums when they differ, or the length when
/// `stored` is under 4 bytes.
pub fn verify(stored: &[u8]) -> Result<()> {
    let Some(at) = stored.len().checked_sub(4) else {
        let what = "bytes of a chunk with a Fletcher32 checksum";
        return Err(Error::header(what, stored.len(), Expected::at_least(4)));
    };
    let want = fletcher32(&stored[..at]);
    let found: [u8; 4] = stored[at..].try_into().expect("4 bytes");
    let mine = want.to_ne_bytes();
    let swapped = [mine[1], mine[0], mine[3], mine[2]];
    if found == mine || found == swapped {
        Ok(())
    } else {
        let what = "Fletcher32 checksum stored (not the one computed: the chunk is damaged)";
        Err(Error::header(
            what,
            u32::from_ne_bytes(found),
            Expected::exactly(want),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // What h5py 3.16 (HDF5 2.0) stores after these bytes with fletcher32=True.
        assert_eq!(fletcher32(b"abcde"), 0x4ff0_29c7);
        assert_eq!(fletcher32(b"abcdef"), 0x5056_2a2d);
        assert_eq!(fletcher32(b"abcdefgh"), 0xe1eb_9195);
        assert_eq!(fletcher32(&[]), 0);
    }

    #[test]
    fn long_inputs_fold_and_verify_catches_flips() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut stored = data.clone();
        stored.extend_from_slice(&fletcher32(&data).to_ne_bytes());
        assert_eq!(verify(&stored), Ok(()));
        stored[500] ^= 1;
        let e = verify(&stored).unwrap_err();
        assert!(e.to_string().contains("damaged"), "{e}");
        let computed = i64::from(fletcher32(&stored[..stored.len() - 4]));
        assert!(
            matches!(e, Error::InvalidHeader { expected: Expected::Exactly(c), .. } if c == computed),
            "{e}"
        );
        let e = verify(&[1, 2]).unwrap_err();
        assert!(matches!(e, Error::InvalidHeader { value: 2, .. }), "{e}");
    }
}
