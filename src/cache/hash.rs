//! The hash of a [`BlockKey`](super::BlockKey) for the cache's shards and maps: a seeded
//! multiply-mix over the key's integer fields with a final avalanche, rather than SipHash.
//! A key is three integers (dataset version, chunk, block), looked up for every block a read
//! touches, so the hash is on the hot path of every cached read; the keys are not strings an
//! outsider picks, and the seed (random per cache) keeps their placement unpredictable.
#![forbid(unsafe_code)]

use std::hash::{BuildHasher, Hasher};

/// An odd 64-bit constant with well-spread bits (the golden ratio's).
const K: u64 = 0x9e37_79b9_7f4a_7c15;

/// Builds [`KeyHasher`]s from one seed.
#[derive(Debug, Clone, Copy)]
pub(super) struct KeyHashes {
    seed: u64,
}

impl KeyHashes {
    /// A random seed (the standard library's per-process random keys, varied per call).
    pub(super) fn random() -> KeyHashes {
        KeyHashes {
            seed: std::collections::hash_map::RandomState::new().hash_one(K),
        }
    }
}

impl BuildHasher for KeyHashes {
    type Hasher = KeyHasher;

    fn build_hasher(&self) -> KeyHasher {
        KeyHasher(self.seed)
    }
}

/// The running state: each word is mixed in by xor, multiply and rotate.
#[derive(Debug, Clone, Copy)]
pub(super) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for part in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..part.len()].copy_from_slice(part);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(K).rotate_left(29);
    }

    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }

    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }

    fn finish(&self) -> u64 {
        // The finalizer of MurmurHash3 (every input bit reaches every output bit).
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn keys_spread_over_every_bit() {
        let h = KeyHashes { seed: 1 };
        // Neighbouring keys differ in about half their bits, and the shard bits (40..45)
        // take every value over a few hundred keys.
        let a = h.hash_one((7u64, 3u64, 0u32));
        let b = h.hash_one((7u64, 3u64, 1u32));
        let flipped = (a ^ b).count_ones();
        assert!((16..=48).contains(&flipped), "{flipped}");
        let shards: HashSet<u64> = (0..512u32)
            .map(|n| (h.hash_one((7u64, 3u64, n)) >> 40) % 32)
            .collect();
        assert_eq!(shards.len(), 32);
        // Another seed, other hashes.
        assert_ne!(KeyHashes { seed: 2 }.hash_one((7u64, 3u64, 0u32)), a);
        // Byte input is read by words, the tail padded.
        let mut x = h.build_hasher();
        x.write(&[1, 0, 0, 0, 0, 0, 0, 0, 2]);
        let mut y = h.build_hasher();
        y.write_u64(1);
        y.write_u64(2);
        assert_eq!(x.finish(), y.finish());
    }
}
