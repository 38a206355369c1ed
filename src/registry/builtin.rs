//! Registration of the built-in codecs and filters, into the same table plugins go to (without
//! the ID-range check and the panic guard that programs' plugins get).

use super::{Origin, Registry};
use crate::codecs::{blosclz::Blosclz, lz4::Lz4, lz4hc::Lz4hc, zlib::Zlib, zstd::Zstd};
use crate::filters::{
    bitshuffle::Bitshuffle, bytedelta::Bytedelta, bytedelta::BytedeltaBuggy, delta::Delta,
    shuffle::Shuffle, trunc_prec::TruncPrec,
};
use std::sync::Arc;

/// Registers every built-in codec and filter into `r`.
///
/// # Panics
/// Never: `r` is freshly created and the built-in IDs are distinct (checked by a test).
pub(super) fn register_all(r: &Registry) {
    let codecs: [Arc<dyn crate::codecs::Codec>; 5] = [
        Arc::new(Blosclz),
        Arc::new(Lz4),
        Arc::new(Lz4hc),
        Arc::new(Zlib),
        Arc::new(Zstd),
    ];
    for c in codecs {
        r.insert_codec(c, Origin::Builtin)
            .expect("built-in codec IDs are distinct");
    }
    let filters: [Arc<dyn crate::filters::Filter>; 6] = [
        Arc::new(Shuffle),
        Arc::new(Bitshuffle),
        Arc::new(Delta),
        Arc::new(TruncPrec),
        Arc::new(BytedeltaBuggy),
        Arc::new(Bytedelta),
    ];
    for f in filters {
        r.insert_filter(f, Origin::Builtin)
            .expect("built-in filter IDs are distinct");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_have_blosc2_ids() {
        let r = Registry::with_builtins();
        assert_eq!(r.codec_ids(), vec![0, 1, 2, 4, 5]);
        assert_eq!(r.filter_ids(), vec![1, 2, 3, 4, 34, 35]);
        assert_eq!(r.codec(4).unwrap().name(), "zlib");
        assert_eq!(r.codec(3).err().map(|e| e.code()), Some(-7));
        assert_eq!(r.filter(5).err().map(|e| e.code()), Some(-18));
    }
}
