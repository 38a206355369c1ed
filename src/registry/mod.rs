//! ID → codec and ID → filter, with the ID ranges of Blosc2.
//!
//! | IDs | meaning |
//! |---|---|
//! | 0–31 | defined by Blosc (built-ins) |
//! | 32–159 | the global Blosc2 registry (ZFP, bytedelta, ...) |
//! | 160–255 | user IDs |
//!
//! Built-in codecs and filters are registered through [`Registry::register_codec`] and
//! [`Registry::register_filter`] like any plugin (see [`builtin`]), so the chunk pipeline only
//! ever asks the registry. Format: c-blosc2 `include/blosc2.h` (`BLOSC2_GLOBAL_REGISTERED_*_START`,
//! `BLOSC2_USER_REGISTERED_*_START`).

use crate::codecs::Codec;
use crate::error::{Error, Result};
use crate::filters::Filter;
use std::sync::{Arc, OnceLock, RwLock};

pub mod builtin;

/// First ID of the global Blosc2 registry (codecs and filters).
pub const GLOBAL_REGISTERED_START: u8 = 32;
/// First user ID (codecs and filters).
pub const USER_REGISTERED_START: u8 = 160;

/// A table of codecs and filters by ID.
pub struct Registry {
    codecs: RwLock<Vec<Option<Arc<dyn Codec>>>>,
    filters: RwLock<Vec<Option<Arc<dyn Filter>>>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("codecs", &self.codec_ids())
            .field("filters", &self.filter_ids())
            .finish()
    }
}

impl Registry {
    /// An empty registry (no built-ins). Most callers want [`Registry::global`].
    #[must_use]
    pub fn empty() -> Self {
        Registry {
            codecs: RwLock::new(vec![None; 256]),
            filters: RwLock::new(vec![None; 256]),
        }
    }

    /// A registry holding the built-in codecs and filters.
    #[must_use]
    pub fn with_builtins() -> Self {
        let r = Self::empty();
        builtin::register_all(&r);
        r
    }

    /// The process-wide registry, created with the built-ins on first use.
    pub fn global() -> &'static Registry {
        static GLOBAL: OnceLock<Registry> = OnceLock::new();
        GLOBAL.get_or_init(Registry::with_builtins)
    }

    /// Registers a codec under its ID, replacing nothing.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] if a codec already holds that ID.
    pub fn register_codec(&self, codec: Arc<dyn Codec>) -> Result<()> {
        let id = codec.id();
        let mut table = self
            .codecs
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let slot = &mut table[usize::from(id)];
        if let Some(old) = slot {
            return Err(Error::InvalidParam(format!(
                "codec ID {id} is already taken by {}",
                old.name()
            )));
        }
        *slot = Some(codec);
        Ok(())
    }

    /// Registers a filter under its ID, replacing nothing.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] if a filter already holds that ID, or the ID is 0 (no filter).
    pub fn register_filter(&self, filter: Arc<dyn Filter>) -> Result<()> {
        let id = filter.id();
        if id == 0 {
            return Err(Error::InvalidParam("filter ID 0 means no filter".into()));
        }
        let mut table = self
            .filters
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let slot = &mut table[usize::from(id)];
        if let Some(old) = slot {
            return Err(Error::InvalidParam(format!(
                "filter ID {id} is already taken by {}",
                old.name()
            )));
        }
        *slot = Some(filter);
        Ok(())
    }

    /// The codec registered under `id`.
    ///
    /// # Errors
    /// [`Error::UnknownCodec`] if none is.
    pub fn codec(&self, id: u8) -> Result<Arc<dyn Codec>> {
        let table = self
            .codecs
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        table[usize::from(id)]
            .clone()
            .ok_or(Error::UnknownCodec { id })
    }

    /// The filter registered under `id`.
    ///
    /// # Errors
    /// [`Error::UnknownFilter`] if none is.
    pub fn filter(&self, id: u8) -> Result<Arc<dyn Filter>> {
        let table = self
            .filters
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        table[usize::from(id)]
            .clone()
            .ok_or(Error::UnknownFilter { id })
    }

    /// The codec registered under `name` (as Blosc2 spells it).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] if none is.
    pub fn codec_by_name(&self, name: &str) -> Result<Arc<dyn Codec>> {
        let table = self
            .codecs
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        table
            .iter()
            .flatten()
            .find(|c| c.name() == name)
            .cloned()
            .ok_or_else(|| Error::InvalidParam(format!("no codec named {name:?}")))
    }

    /// The filter registered under `name` (as Blosc2 spells it).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] if none is.
    pub fn filter_by_name(&self, name: &str) -> Result<Arc<dyn Filter>> {
        let table = self
            .filters
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        table
            .iter()
            .flatten()
            .find(|f| f.name() == name)
            .cloned()
            .ok_or_else(|| Error::InvalidParam(format!("no filter named {name:?}")))
    }

    /// IDs of the registered codecs, ascending.
    #[must_use]
    pub fn codec_ids(&self) -> Vec<u8> {
        let table = self
            .codecs
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (0..=255u8)
            .filter(|&i| table[usize::from(i)].is_some())
            .collect()
    }

    /// IDs of the registered filters, ascending.
    #[must_use]
    pub fn filter_ids(&self) -> Vec<u8> {
        let table = self
            .filters
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (0..=255u8)
            .filter(|&i| table[usize::from(i)].is_some())
            .collect()
    }
}
