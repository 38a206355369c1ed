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
    use crate::format::ids::{CodecId, FilterId};

    #[test]
    fn builtins_have_blosc2_ids() {
        let r = Registry::with_builtins();
        assert_eq!(r.codec_ids(), [0, 1, 2, 4, 5].map(CodecId));
        assert_eq!(r.filter_ids(), [1, 2, 3, 4, 34, 35].map(FilterId));
        assert_eq!(r.codec(CodecId::ZLIB).unwrap().name(), "zlib");
        assert_eq!(r.codec(CodecId(3)).err().map(|e| e.code()), Some(-7));
        assert_eq!(r.filter(FilterId(5)).err().map(|e| e.code()), Some(-18));
        // Each built-in's name is the one Blosc2 gives its ID.
        for id in r.codec_ids() {
            assert_eq!(id.name(), Some(r.codec(id).unwrap().name()));
        }
        for id in r.filter_ids() {
            assert_eq!(id.name(), Some(r.filter(id).unwrap().name()));
        }
    }
}
