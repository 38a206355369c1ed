//! Metalayers (fixed-size, in the frame header: added before the first chunk, then only
//! overwritten in place) and vlmetalayers (variable-length, compressed, in the trailer: added,
//! replaced and removed at any time), raw or as python-blosc2's msgpack values.

use super::values::{self, Value};
use super::SChunk;
use crate::chunk::{compress_vec_ctx, CParams, SplitMode};
use crate::error::{Error, Expected, Result};
use crate::format::b2nd::{B2ndMeta, LEGACY_METALAYER, METALAYER};
use crate::format::chunk::ChunkHeader;
use crate::format::frame::{check_name, Metalayer, MAX_METALAYERS};
use crate::format::ids::CodecId;
use std::sync::Arc;

/// The cparams python-blosc2 compresses vlmetalayers with: Zstd clevel 5, shuffle,
/// typesize 1.
#[must_use]
pub fn vlmeta_cparams() -> CParams {
    CParams {
        codec: CodecId::ZSTD,
        clevel: 5,
        typesize: 1,
        splitmode: SplitMode::Auto,
        ..CParams::default()
    }
}

impl SChunk {
    /// The metalayers' names, in order.
    #[must_use]
    pub fn meta_names(&self) -> Vec<&str> {
        self.frame
            .header()
            .metalayers
            .iter()
            .map(|m| m.name.as_str())
            .collect()
    }

    /// The content of metalayer `name`, or `None`.
    #[must_use]
    pub fn meta(&self, name: &str) -> Option<&[u8]> {
        self.frame
            .header()
            .metalayers
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.content.as_slice())
    }

    /// The msgpack value of metalayer `name` (python-blosc2's encoding).
    ///
    /// # Errors
    /// [`Error::MetalayerNotFound`]; as [`values::unpack`] when it is not msgpack.
    pub fn meta_value(&self, name: &str) -> Result<Value> {
        let c = self
            .meta(name)
            .ok_or_else(|| Error::MetalayerNotFound { name: name.into() })?;
        values::unpack(c)
    }

    /// Adds a metalayer; only before the first chunk (the header grows).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for a bad name or 16 metalayers already, [`Error::Duplicate`] for
    /// a taken name, [`Error::Unsupported`] when chunks are present.
    pub fn meta_add(&mut self, name: &str, content: &[u8]) -> Result<()> {
        self.check_mode(false)?;
        check_name(name)?;
        let mut h = self.frame.header().clone();
        if h.metalayers.iter().any(|m| m.name == name) {
            return Err(Error::Duplicate {
                what: "metalayer",
                name: format!("{name:?}"),
            });
        }
        if h.metalayers.len() >= MAX_METALAYERS {
            return Err(Error::range(
                "metalayers",
                h.metalayers.len() + 1,
                Expected::at_most(MAX_METALAYERS),
            ));
        }
        h.metalayers.push(Metalayer {
            name: name.into(),
            content: content.to_vec(),
        });
        self.frame.set_header(h)?;
        self.set_nd();
        Ok(())
    }

    /// Overwrites metalayer `name` in place with `content`, which may not be longer than the
    /// stored value (a shorter one overwrites its first bytes; the rest keeps its old bytes,
    /// as `blosc2_meta_update` does).
    ///
    /// # Errors
    /// [`Error::MetalayerNotFound`]; [`Error::OutOfRange`] for longer content.
    pub fn meta_update(&mut self, name: &str, content: &[u8]) -> Result<()> {
        self.check_mode(false)?;
        let i = self
            .frame
            .header()
            .metalayers
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| Error::MetalayerNotFound { name: name.into() })?;
        self.frame.update_metalayer(i, content)?;
        self.set_nd();
        Ok(())
    }

    /// Hands the N-d array of the `b2nd` (or legacy `caterva`) metalayer to the codecs and
    /// filters of every chunk this super-chunk compresses or decodes, as C-Blosc2 gives them
    /// the super-chunk (ZFP reads its blockshape there). A metalayer that does not parse hands
    /// nothing; without one, the `nd` the parameters were given stays.
    pub(super) fn set_nd(&mut self) {
        let Some(layer) = self.meta(METALAYER).or_else(|| self.meta(LEGACY_METALAYER)) else {
            return;
        };
        let nd = B2ndMeta::from_bytes(layer).ok().map(Arc::new);
        self.cparams.nd.clone_from(&nd);
        self.dparams.nd = nd;
    }

    /// The vlmetalayers' names, in order.
    #[must_use]
    pub fn vlmeta_names(&self) -> Vec<&str> {
        self.frame
            .vlmetalayers()
            .iter()
            .map(|m| m.name.as_str())
            .collect()
    }

    /// The stored (compressed) content of vlmetalayer `name`.
    #[must_use]
    pub fn vlmeta_chunk(&self, name: &str) -> Option<&[u8]> {
        self.frame
            .vlmetalayers()
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.content.as_slice())
    }

    /// The decompressed content of vlmetalayer `name`.
    ///
    /// # Errors
    /// [`Error::MetalayerNotFound`]; decompression errors (naming the frame) for a corrupt
    /// value.
    pub fn vlmeta(&self, name: &str) -> Result<Vec<u8>> {
        let c = self
            .vlmeta_chunk(name)
            .ok_or_else(|| Error::MetalayerNotFound { name: name.into() })?;
        let h = ChunkHeader::parse(c).map_err(|e| e.in_frame(&self.path()))?;
        if h.cbytes != c.len() {
            let stored = Expected::Exactly(crate::error::to_i64(c.len()));
            let cbytes = Error::header(
                "vlmetalayer chunk cbytes (its stored bytes)",
                h.cbytes,
                stored,
            );
            return Err(Error::frame(self.path(), cbytes));
        }
        crate::chunk::decompress_vec_ctx(self.ctx(), &self.dparams, c)
            .map_err(|e| e.in_frame(&self.path()))
    }

    /// The msgpack value of vlmetalayer `name` (python-blosc2's encoding).
    ///
    /// # Errors
    /// As [`SChunk::vlmeta`]; as [`values::unpack`] when it is not msgpack.
    pub fn vlmeta_value(&self, name: &str) -> Result<Value> {
        values::unpack(&self.vlmeta(name)?)
    }

    /// Adds vlmetalayer `name` or replaces its content, compressing `content` with
    /// `cparams` (`None`: python-blosc2's, [`vlmeta_cparams`]); one commit.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for a bad name or a 17th vlmetalayer; compression errors;
    /// [`Error::Io`].
    pub fn vlmeta_set(
        &mut self,
        name: &str,
        content: &[u8],
        cparams: Option<&CParams>,
    ) -> Result<()> {
        self.check_mode(false)?;
        check_name(name)?;
        let cp = cparams.cloned().unwrap_or_else(vlmeta_cparams);
        let chunk = compress_vec_ctx(self.ctx(), &cp, content)?;
        let mut layers = self.frame.vlmetalayers().to_vec();
        match layers.iter_mut().find(|m| m.name == name) {
            Some(m) => m.content = chunk,
            None => {
                if layers.len() >= MAX_METALAYERS {
                    return Err(Error::range(
                        "vlmetalayers",
                        layers.len() + 1,
                        Expected::at_most(MAX_METALAYERS),
                    ));
                }
                layers.push(Metalayer {
                    name: name.into(),
                    content: chunk,
                });
            }
        }
        self.frame.set_vlmetalayers(layers)
    }

    /// Sets vlmetalayer `name` to the msgpack encoding of `value`, as python-blosc2 does.
    ///
    /// # Errors
    /// As [`SChunk::vlmeta_set`].
    pub fn vlmeta_set_value(&mut self, name: &str, value: &Value) -> Result<()> {
        self.vlmeta_set(name, &values::pack(value), None)
    }

    /// Removes vlmetalayer `name`.
    ///
    /// # Errors
    /// [`Error::MetalayerNotFound`]; [`Error::Io`].
    pub fn vlmeta_delete(&mut self, name: &str) -> Result<()> {
        self.check_mode(false)?;
        let mut layers = self.frame.vlmetalayers().to_vec();
        let i = layers
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| Error::MetalayerNotFound { name: name.into() })?;
        layers.remove(i);
        self.frame.set_vlmetalayers(layers)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{counting, opts};
    use super::*;
    use crate::chunk::{compress_vec, decompress_vec, DParams};
    use crate::schunk::SChunkOptions;

    #[test]
    fn metalayers_are_fixed_once_chunks_exist() {
        let mut s = SChunk::new(&opts(100)).unwrap();
        s.meta_add("a", &[0x93, 1, 2, 3]).unwrap();
        s.meta_add("b", b"bbbb").unwrap();
        let e = s.meta_add("a", b"x").unwrap_err();
        assert!(
            matches!(
                e,
                Error::Duplicate {
                    what: "metalayer",
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(s.meta_names(), ["a", "b"]);
        assert_eq!(
            s.meta_value("a").unwrap(),
            Value::Array(vec![1.into(), 2.into(), 3.into()])
        );
        s.append_buffer(&[0; 400]).unwrap();
        assert!(s.meta_add("c", b"c").is_err());
        s.meta_update("b", b"xy").unwrap();
        assert_eq!(s.meta("b"), Some(&b"xybb"[..]));
        let e = s.meta_update("b", b"12345").unwrap_err();
        assert!(
            matches!(
                e,
                Error::OutOfRange {
                    value: 5,
                    expected: Expected::AtMost(4),
                    ..
                }
            ),
            "{e}"
        );
        let e = s.meta_update("zz", b"1").unwrap_err();
        assert!(matches!(e, Error::MetalayerNotFound { .. }), "{e}");
        assert_eq!(s.meta("zz"), None);
    }

    #[test]
    fn the_b2nd_metalayer_goes_to_the_codecs() {
        let nd = |shape: i64| B2ndMeta::new(vec![shape, 8], vec![4, 8], vec![2, 8], "<f4").unwrap();
        let given = SChunkOptions {
            dparams: DParams {
                nd: Some(Arc::new(nd(1))),
                ..DParams::default()
            },
            ..opts(100)
        };
        // Without a metalayer the nd given stays; the metalayer, once added, replaces it.
        let mut s = SChunk::new(&given).unwrap();
        assert_eq!(s.dparams().nd.as_deref(), Some(&nd(1)));
        assert_eq!(s.cparams().nd, None);
        s.meta_add(METALAYER, &nd(16).to_bytes()).unwrap();
        assert_eq!(s.dparams().nd.as_deref(), Some(&nd(16)));
        assert_eq!(s.cparams().nd.as_deref(), Some(&nd(16)));
        // Updated in place (as a resize does), the codecs see the new shape.
        s.meta_update(METALAYER, &nd(12).to_bytes()).unwrap();
        assert_eq!(s.dparams().nd.as_deref(), Some(&nd(12)));
        // Reopened, the super-chunk reads it from its frame; the legacy name counts.
        let back = SChunk::from_cframe(s.to_cframe().unwrap()).unwrap();
        assert_eq!(back.dparams().nd.as_deref(), Some(&nd(12)));
        let mut legacy = SChunk::new(&opts(100)).unwrap();
        legacy
            .meta_add(LEGACY_METALAYER, &nd(4).to_bytes())
            .unwrap();
        assert_eq!(legacy.cparams().nd.as_deref(), Some(&nd(4)));
        // A metalayer that does not parse hands nothing.
        let mut bad = nd(12).to_bytes();
        bad[0] = 0xc1;
        s.meta_update(METALAYER, &bad).unwrap();
        assert_eq!(
            (s.dparams().nd.clone(), s.cparams().nd.clone()),
            (None, None)
        );
    }

    #[test]
    fn vlmetalayers_come_and_go() {
        let mut s = counting(1000, 300);
        assert_eq!(vlmeta_cparams().codec, CodecId::ZSTD);
        s.vlmeta_set("a", b"first", None).unwrap();
        s.vlmeta_set_value("b", &Value::from("text")).unwrap();
        let lz4 = CParams {
            codec: CodecId::LZ4,
            typesize: 1,
            ..CParams::default()
        };
        s.vlmeta_set("a", b"second", Some(&lz4)).unwrap();
        assert_eq!(s.vlmeta_names(), ["a", "b"]);
        assert_eq!(s.vlmeta("a").unwrap(), b"second");
        // Stored as compressed with the cparams given, python-blosc2's by default.
        let a = compress_vec(&lz4, b"second").unwrap();
        assert_eq!(s.vlmeta_chunk("a"), Some(&a[..]));
        let packed = values::pack(&Value::from("text"));
        let b = compress_vec(&vlmeta_cparams(), &packed).unwrap();
        assert_eq!(s.vlmeta_chunk("b"), Some(&b[..]));
        assert_eq!(decompress_vec(&b).unwrap(), packed);
        assert_eq!(s.vlmeta_value("b").unwrap(), Value::from("text"));
        s.vlmeta_delete("a").unwrap();
        assert_eq!(s.vlmeta_names(), ["b"]);
        let e = s.vlmeta_delete("a").unwrap_err();
        assert!(matches!(e, Error::MetalayerNotFound { .. }), "{e}");
        for i in 0..MAX_METALAYERS - 1 {
            s.vlmeta_set(&format!("v{i}"), b"", None).unwrap();
        }
        let e = s.vlmeta_set("one-too-many", b"", None).unwrap_err();
        assert_eq!(e, Error::range("vlmetalayers", 17, Expected::AtMost(16)));
        // A stored value whose chunk does not fill its place is corrupt.
        let mut bad = a.clone();
        bad.push(0);
        let layer = Metalayer {
            name: "bad".into(),
            content: bad,
        };
        s.frame.set_vlmetalayers(vec![layer]).unwrap();
        let e = s.vlmeta("bad").unwrap_err();
        assert!(
            matches!(
                e.root(),
                Error::InvalidHeader {
                    value: 38,
                    expected: Expected::Exactly(39),
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(s.decompress_all().unwrap().len(), 4000);
    }
}
