//! Codec and filter IDs: the bytes a chunk header (bytes 16–22) and a frame header store, as
//! named types.
//!
//! [`CodecId`] and [`FilterId`] wrap the Blosc2 ID byte. Their constants are the IDs Blosc
//! defines (0–31) and those Blosc2's global registry assigns (32–159); any other byte is a
//! valid ID too (160–255 are free for user plugins). `Display` writes the name Blosc2 gives an
//! ID (`zstd`, `bitshuffle`…) or, for an ID without one, its number; `FromStr` reads either, so
//! the two round-trip. Names of user plugins are known only to a registry
//! ([`crate::registry::Registry::parse_codec`], [`crate::registry::Registry::parse_filter`]).
//!
//! Format: c-blosc2 `include/blosc2.h` (`BLOSC_BLOSCLZ`…, `BLOSC_NOFILTER`…),
//! `include/blosc2/codecs-registry.h`, `include/blosc2/filters-registry.h`.
//!
//! ```
//! use strata::{CodecId, FilterId};
//! assert_eq!(CodecId::ZSTD, CodecId(5));
//! assert_eq!(CodecId::ZFP_ACC.to_string(), "zfp_acc");
//! assert_eq!("lz4hc".parse::<CodecId>().unwrap(), CodecId::LZ4HC);
//! assert_eq!("200".parse::<CodecId>().unwrap().to_string(), "200");
//! assert_eq!("bitshuffle".parse::<FilterId>().unwrap(), FilterId::BITSHUFFLE);
//! assert!("lz5".parse::<CodecId>().is_err());
//! ```

use crate::error::{Error, Result};

/// Defines an ID newtype over the ID byte, with its named constants, `Display` and `FromStr`.
macro_rules! blosc_id {
    (
        $(#[$meta:meta])*
        $name:ident, $what:literal,
        aliases: [$($alias:literal => $alias_id:ident),* $(,)?],
        [$($(#[$cmeta:meta])* $cname:ident = $value:literal, $text:literal;)+]
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        #[repr(transparent)]
        pub struct $name(pub u8);

        impl $name {
            $($(#[$cmeta])* pub const $cname: $name = $name($value);)+

            /// Every ID Blosc or Blosc2's global registry names, with its name, by ascending ID.
            pub const NAMED: &'static [($name, &'static str)] = &[$(($name($value), $text)),+];

            /// The name Blosc2 gives this ID, if it gives one.
            #[must_use]
            pub fn name(self) -> Option<&'static str> {
                Self::NAMED
                    .iter()
                    .find(|(id, _)| *id == self)
                    .map(|&(_, name)| name)
            }

            /// The ID Blosc2 names `name` (ASCII case ignored), if any.
            #[must_use]
            pub fn from_name(name: &str) -> Option<$name> {
                Self::NAMED
                    .iter()
                    .find(|(_, n)| n.eq_ignore_ascii_case(name))
                    .map(|&(id, _)| id)
                    $(.or_else(|| name.eq_ignore_ascii_case($alias).then_some($name::$alias_id)))*
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self.name() {
                    Some(name) => f.write_str(name),
                    None => write!(f, "{}", self.0),
                }
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({} {self})", stringify!($name), self.0)
            }
        }

        impl std::str::FromStr for $name {
            type Err = Error;

            /// A name Blosc2 gives an ID (ASCII case ignored) or a number 0–255; anything else
            /// is [`Error::NameNotFound`].
            fn from_str(s: &str) -> Result<$name> {
                if let Some(id) = $name::from_name(s) {
                    return Ok(id);
                }
                s.parse::<u8>().map($name).map_err(|_| Error::NameNotFound {
                    what: $what,
                    name: s.to_owned(),
                    searched: String::new(),
                })
            }
        }

        impl From<u8> for $name {
            fn from(id: u8) -> $name {
                $name(id)
            }
        }

        impl From<$name> for u8 {
            fn from(id: $name) -> u8 {
                id.0
            }
        }
    };
}

blosc_id! {
    /// A codec ID (Blosc2 `compcode`, chunk header byte 22).
    CodecId, "codec",
    aliases: [],
    [
        /// BloscLZ (`BLOSC_BLOSCLZ`), the default.
        BLOSCLZ = 0, "blosclz";
        /// LZ4 (`BLOSC_LZ4`).
        LZ4 = 1, "lz4";
        /// LZ4HC (`BLOSC_LZ4HC`).
        LZ4HC = 2, "lz4hc";
        /// Snappy (`BLOSC_SNAPPY`), Blosc1 only: Strata has no Snappy codec.
        SNAPPY = 3, "snappy";
        /// Zlib (`BLOSC_ZLIB`).
        ZLIB = 4, "zlib";
        /// Zstd (`BLOSC_ZSTD`).
        ZSTD = 5, "zstd";
        /// NDLZ, an N-d LZ codec (`BLOSC_CODEC_NDLZ`, a plugin).
        NDLZ = 32, "ndlz";
        /// ZFP in fixed-accuracy mode (`BLOSC_CODEC_ZFP_FIXED_ACCURACY`, a plugin).
        ZFP_ACC = 33, "zfp_acc";
        /// ZFP in fixed-precision mode (`BLOSC_CODEC_ZFP_FIXED_PRECISION`, a plugin).
        ZFP_PREC = 34, "zfp_prec";
        /// ZFP in fixed-rate mode (`BLOSC_CODEC_ZFP_FIXED_RATE`, a plugin).
        ZFP_RATE = 35, "zfp_rate";
        /// OpenHTJ2K (`BLOSC_CODEC_OPENHTJ2K`, a plugin).
        OPENHTJ2K = 36, "openhtj2k";
        /// Grok JPEG 2000 (`BLOSC_CODEC_GROK`, a plugin).
        GROK = 37, "grok";
        /// OpenZL (`BLOSC_CODEC_OPENZL`, a plugin).
        OPENZL = 38, "openzl";
        /// JPEG 2000 (`BLOSC_CODEC_J2K`, a plugin).
        J2K = 39, "j2k";
        /// High-throughput JPEG 2000 (`BLOSC_CODEC_HTJ2K`, a plugin).
        HTJ2K = 40, "htj2k";
    ]
}

blosc_id! {
    /// A filter ID (chunk header bytes 16–21, one per filter slot).
    FilterId, "filter",
    aliases: ["noshuffle" => NOFILTER],
    [
        /// An empty slot (`BLOSC_NOFILTER`; Blosc1's `NOSHUFFLE`, also accepted by name).
        NOFILTER = 0, "nofilter";
        /// Byte shuffle (`BLOSC_SHUFFLE`).
        SHUFFLE = 1, "shuffle";
        /// Bit shuffle (`BLOSC_BITSHUFFLE`).
        BITSHUFFLE = 2, "bitshuffle";
        /// XOR delta against block 0 (`BLOSC_DELTA`).
        DELTA = 3, "delta";
        /// Mantissa truncation (`BLOSC_TRUNC_PREC`).
        TRUNC_PREC = 4, "trunc_prec";
        /// N-d cell filter (`BLOSC_FILTER_NDCELL`, a plugin).
        NDCELL = 32, "ndcell";
        /// N-d mean filter (`BLOSC_FILTER_NDMEAN`, a plugin).
        NDMEAN = 33, "ndmean";
        /// Byte delta, its first (buggy) variant (`BLOSC_FILTER_BYTEDELTA_BUGGY`).
        BYTEDELTA_BUGGY = 34, "bytedelta_buggy";
        /// Byte delta (`BLOSC_FILTER_BYTEDELTA`).
        BYTEDELTA = 35, "bytedelta";
        /// Integer truncation (`BLOSC_FILTER_INT_TRUNC`, a plugin).
        INT_TRUNC = 36, "int_trunc";
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_the_blosc2_ids() {
        let codecs = [
            (CodecId::BLOSCLZ, 0),
            (CodecId::LZ4, 1),
            (CodecId::LZ4HC, 2),
            (CodecId::ZLIB, 4),
            (CodecId::ZSTD, 5),
            (CodecId::ZFP_ACC, 33),
            (CodecId::ZFP_PREC, 34),
            (CodecId::ZFP_RATE, 35),
        ];
        for (id, byte) in codecs {
            assert_eq!(u8::from(id), byte);
        }
        let filters = [
            (FilterId::NOFILTER, 0),
            (FilterId::SHUFFLE, 1),
            (FilterId::BITSHUFFLE, 2),
            (FilterId::DELTA, 3),
            (FilterId::TRUNC_PREC, 4),
            (FilterId::BYTEDELTA_BUGGY, 34),
            (FilterId::BYTEDELTA, 35),
        ];
        for (id, byte) in filters {
            assert_eq!(u8::from(id), byte);
        }
        assert_eq!(CodecId::default(), CodecId::BLOSCLZ);
        assert_eq!(FilterId::default(), FilterId::NOFILTER);
    }

    #[test]
    fn names_and_numbers_round_trip() {
        for n in 0..=255u8 {
            let c = CodecId(n);
            assert_eq!(c.to_string().parse::<CodecId>().unwrap(), c);
            let f = FilterId(n);
            assert_eq!(f.to_string().parse::<FilterId>().unwrap(), f);
        }
        assert_eq!(CodecId::ZSTD.to_string(), "zstd");
        assert_eq!(CodecId(7).to_string(), "7");
        assert_eq!(FilterId::TRUNC_PREC.to_string(), "trunc_prec");
        assert_eq!(format!("{:?}", CodecId::LZ4), "CodecId(1 lz4)");
        assert_eq!("ZSTD".parse::<CodecId>().unwrap(), CodecId::ZSTD);
        assert_eq!("noshuffle".parse::<FilterId>().unwrap(), FilterId::NOFILTER);
        assert_eq!("33".parse::<CodecId>().unwrap(), CodecId::ZFP_ACC);
    }

    #[test]
    fn unknown_names_are_errors_naming_what_was_asked() {
        let e = "lz5".parse::<CodecId>().unwrap_err();
        assert_eq!(e.code(), -12);
        assert_eq!(
            e,
            Error::NameNotFound {
                what: "codec",
                name: "lz5".into(),
                searched: String::new()
            }
        );
        assert!("256".parse::<CodecId>().is_err());
        assert!("-1".parse::<FilterId>().is_err());
        let e = "shufle".parse::<FilterId>().unwrap_err();
        assert!(e.to_string().ends_with("no filter named \"shufle\""), "{e}");
        assert_eq!(CodecId::from_name("zfp_rate"), Some(CodecId::ZFP_RATE));
        assert_eq!(CodecId(200).name(), None);
    }
}
