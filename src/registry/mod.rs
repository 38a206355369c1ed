//! ID → codec and ID → filter, with the ID ranges of Blosc2.
//!
//! | IDs | meaning |
//! |---|---|
//! | 0–31 | defined by Blosc (built-ins); no plugin may take them |
//! | 32–159 | the global Blosc2 registry: a plugin may take one only under the name Blosc2 assigns to it ([`CodecId::NAMED`], [`FilterId::NAMED`]) |
//! | 160–255 | user IDs, free for any plugin |
//!
//! Built-in codecs and filters are registered through the same table as plugins (see
//! [`builtin`]), so the chunk pipeline only ever asks the registry. A plugin is registered
//! in-process (a Rust [`Codec`] / [`Filter`] trait object with [`Registry::register_codec`] /
//! [`Registry::register_filter`], or a C descriptor with [`Registry::register_descriptor`]), or
//! loaded from a shared library: explicitly ([`Registry::load_plugin`]) or on the first use of an
//! ID that nothing holds, from the plugin search path (see [`dynamic`]).
//!
//! A plugin that panics gives [`Error::PluginPanic`] instead of unwinding through the pipeline.
//! Format: c-blosc2 `include/blosc2.h` (`BLOSC2_GLOBAL_REGISTERED_*_START`,
//! `BLOSC2_USER_REGISTERED_*_START`), `include/blosc2/codecs-registry.h`,
//! `include/blosc2/filters-registry.h`; `docs/plugins.md`.

use crate::block::BlockContext;
use crate::codecs::Codec;
use crate::error::{Error, PluginIdProblem, Result};
use crate::filters::Filter;
use crate::format::ids::{CodecId, FilterId};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

pub mod builtin;
pub mod dynamic;

/// First ID of the global Blosc2 registry (codecs and filters).
pub const GLOBAL_REGISTERED_START: u8 = 32;
/// First user ID (codecs and filters).
pub const USER_REGISTERED_START: u8 = 160;

/// Codec or filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PluginKind {
    /// A codec (compressor).
    Codec,
    /// A filter.
    Filter,
}

impl PluginKind {
    /// `"codec"` or `"filter"`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            PluginKind::Codec => "codec",
            PluginKind::Filter => "filter",
        }
    }
}

impl std::fmt::Display for PluginKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a registered codec or filter came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Part of Strata.
    Builtin,
    /// Registered by the program itself (a Rust trait object or a C descriptor).
    InProcess,
    /// Loaded from this shared library.
    Library(PathBuf),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Builtin => f.write_str("built-in"),
            Origin::InProcess => f.write_str("registered in-process"),
            Origin::Library(path) => write!(f, "{}", path.display()),
        }
    }
}

/// One entry of the registry, as [`Registry::list`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    /// Codec or filter.
    pub kind: PluginKind,
    /// The Blosc2 ID.
    pub id: u8,
    /// The name, as Blosc2 spells it.
    pub name: String,
    /// Where it came from.
    pub origin: Origin,
}

struct Slot<T: ?Sized> {
    item: Arc<T>,
    origin: Origin,
}

type Table<T> = RwLock<Vec<Option<Slot<T>>>>;

/// A table of codecs and filters by ID, with the plugin loader that fills it on demand.
pub struct Registry {
    codecs: Table<dyn Codec>,
    filters: Table<dyn Filter>,
    loader: dynamic::Loader,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("codecs", &self.codec_ids())
            .field("filters", &self.filter_ids())
            .finish_non_exhaustive()
    }
}

fn read<T: ?Sized>(t: &Table<T>) -> std::sync::RwLockReadGuard<'_, Vec<Option<Slot<T>>>> {
    t.read().unwrap_or_else(PoisonError::into_inner)
}

/// Checks that a plugin may take `id` under `name`: the name is `[A-Za-z0-9_]`, 1 to 63
/// bytes; the ID is not a Blosc built-in (0–31) and, in Blosc2's global range (32–159), is one
/// Blosc2 assigns to this very name.
///
/// # Errors
/// [`Error::PluginId`] saying which rule is broken.
pub fn check_plugin_id(kind: PluginKind, id: u8, name: &str) -> Result<()> {
    let refuse = |problem| {
        Err(Error::PluginId {
            kind: kind.name(),
            id,
            name: name.to_owned(),
            problem,
        })
    };
    if name.is_empty()
        || name.len() > 63
        || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return refuse(PluginIdProblem::Name);
    }
    if id < GLOBAL_REGISTERED_START {
        return refuse(PluginIdProblem::Builtin);
    }
    if id < USER_REGISTERED_START {
        let blosc2 = match kind {
            PluginKind::Codec => CodecId(id).name(),
            PluginKind::Filter => FilterId(id).name(),
        };
        return match blosc2 {
            Some(blosc2) if blosc2 == name => Ok(()),
            Some(blosc2) => refuse(PluginIdProblem::Blosc2Assigns(blosc2)),
            None => refuse(PluginIdProblem::Unassigned),
        };
    }
    Ok(())
}

impl Registry {
    /// An empty registry (no built-ins), loading plugins from the default search path
    /// ([`dynamic::default_plugin_dirs`]). Most callers want [`Registry::global`].
    #[must_use]
    pub fn empty() -> Self {
        Registry {
            codecs: RwLock::new((0..256).map(|_| None).collect()),
            filters: RwLock::new((0..256).map(|_| None).collect()),
            loader: dynamic::Loader::default(),
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
    #[must_use]
    pub fn global() -> Arc<Registry> {
        static GLOBAL: OnceLock<Arc<Registry>> = OnceLock::new();
        Arc::clone(GLOBAL.get_or_init(|| Arc::new(Registry::with_builtins())))
    }

    /// Registers a codec under its ID, replacing nothing. The codec's calls are guarded: a
    /// panic becomes [`Error::PluginPanic`].
    ///
    /// # Errors
    /// [`Error::PluginId`] if a codec already holds that ID or name, or the ID / name break
    /// the Blosc2 ranges ([`check_plugin_id`]).
    pub fn register_codec(&self, codec: Arc<dyn Codec>) -> Result<()> {
        check_plugin_id(PluginKind::Codec, codec.id().0, codec.name())?;
        let id = codec.id().0;
        self.insert_codec(Arc::new(Guarded { inner: codec, id }), Origin::InProcess)
    }

    /// Registers a filter under its ID, replacing nothing. The filter's calls are guarded: a
    /// panic becomes [`Error::PluginPanic`].
    ///
    /// # Errors
    /// [`Error::PluginId`] if a filter already holds that ID or name, or the ID / name
    /// break the Blosc2 ranges ([`check_plugin_id`]).
    pub fn register_filter(&self, filter: Arc<dyn Filter>) -> Result<()> {
        check_plugin_id(PluginKind::Filter, filter.id().0, filter.name())?;
        let id = filter.id().0;
        self.insert_filter(Arc::new(Guarded { inner: filter, id }), Origin::InProcess)
    }

    /// Puts `codec` in its slot, unchecked but for a taken ID or name.
    fn insert_codec(&self, codec: Arc<dyn Codec>, origin: Origin) -> Result<()> {
        let (id, name) = (codec.id().0, codec.name().to_owned());
        insert(
            &self.codecs,
            PluginKind::Codec,
            id,
            &name,
            codec,
            origin,
            |c| c.name(),
        )
    }

    /// Puts `filter` in its slot, unchecked but for ID 0 and a taken ID or name.
    fn insert_filter(&self, filter: Arc<dyn Filter>, origin: Origin) -> Result<()> {
        if filter.id() == FilterId::NOFILTER {
            return Err(Error::PluginId {
                kind: "filter",
                id: 0,
                name: filter.name().to_owned(),
                problem: PluginIdProblem::NoFilter,
            });
        }
        let (id, name) = (filter.id().0, filter.name().to_owned());
        insert(
            &self.filters,
            PluginKind::Filter,
            id,
            &name,
            filter,
            origin,
            |f| f.name(),
        )
    }

    /// The codec registered under `id`. An ID of 32 or more that nothing holds is looked for in
    /// the plugin search path first ([`dynamic`]), once per process for a library found there.
    ///
    /// # Errors
    /// [`Error::UnknownCodec`] for an unknown built-in ID (0–31); [`Error::CodecNotFound`],
    /// naming every directory searched, when no plugin provides it.
    pub fn codec(&self, id: CodecId) -> Result<Arc<dyn Codec>> {
        let CodecId(id) = id;
        if let Some(c) = self.registered_codec(id) {
            return Ok(c);
        }
        if id < GLOBAL_REGISTERED_START {
            return Err(Error::UnknownCodec { id });
        }
        self.loader
            .find(self, PluginKind::Codec, dynamic::Key::Id(id))?;
        self.registered_codec(id).ok_or(Error::UnknownCodec { id })
    }

    /// The filter registered under `id`, loading a plugin for it as [`Registry::codec`] does.
    ///
    /// # Errors
    /// [`Error::UnknownFilter`] for an unknown built-in ID (0–31); [`Error::FilterNotFound`],
    /// naming every directory searched, when no plugin provides it.
    pub fn filter(&self, id: FilterId) -> Result<Arc<dyn Filter>> {
        let FilterId(id) = id;
        if let Some(f) = self.registered_filter(id) {
            return Ok(f);
        }
        if id < GLOBAL_REGISTERED_START {
            return Err(Error::UnknownFilter { id });
        }
        self.loader
            .find(self, PluginKind::Filter, dynamic::Key::Id(id))?;
        self.registered_filter(id)
            .ok_or(Error::UnknownFilter { id })
    }

    fn registered_codec(&self, id: u8) -> Option<Arc<dyn Codec>> {
        read(&self.codecs)[usize::from(id)]
            .as_ref()
            .map(|s| s.item.clone())
    }

    fn registered_filter(&self, id: u8) -> Option<Arc<dyn Filter>> {
        read(&self.filters)[usize::from(id)]
            .as_ref()
            .map(|s| s.item.clone())
    }

    /// Whether `kind` `id` is registered (without loading anything).
    fn holds(&self, kind: PluginKind, id: u8) -> bool {
        match kind {
            PluginKind::Codec => self.registered_codec(id).is_some(),
            PluginKind::Filter => self.registered_filter(id).is_some(),
        }
    }

    /// The ID registered under `name` (without loading anything).
    fn id_of(&self, kind: PluginKind, name: &str) -> Option<u8> {
        match kind {
            PluginKind::Codec => find_name(&self.codecs, name, |c| c.name()),
            PluginKind::Filter => find_name(&self.filters, name, |f| f.name()),
        }
    }

    /// The codec registered under `name` (as Blosc2 spells it), looked for in the plugin
    /// search path when nothing registered has that name.
    ///
    /// # Errors
    /// [`Error::NameNotFound`] if no codec has that name.
    pub fn codec_by_name(&self, name: &str) -> Result<Arc<dyn Codec>> {
        if self.id_of(PluginKind::Codec, name).is_none() {
            self.loader
                .find(self, PluginKind::Codec, dynamic::Key::Name(name))?;
        }
        self.id_of(PluginKind::Codec, name)
            .and_then(|id| self.registered_codec(id))
            .ok_or_else(|| Error::NameNotFound {
                what: "codec",
                name: name.to_owned(),
                searched: String::new(),
            })
    }

    /// The filter registered under `name` (as Blosc2 spells it), looked for in the plugin
    /// search path when nothing registered has that name.
    ///
    /// # Errors
    /// [`Error::NameNotFound`] if no filter has that name.
    pub fn filter_by_name(&self, name: &str) -> Result<Arc<dyn Filter>> {
        if self.id_of(PluginKind::Filter, name).is_none() {
            self.loader
                .find(self, PluginKind::Filter, dynamic::Key::Name(name))?;
        }
        self.id_of(PluginKind::Filter, name)
            .and_then(|id| self.registered_filter(id))
            .ok_or_else(|| Error::NameNotFound {
                what: "filter",
                name: name.to_owned(),
                searched: String::new(),
            })
    }

    /// The codec that `s` names or numbers: a number 0–255 or a name (`zstd`, `zfp_acc`, a
    /// plugin's), loading a plugin from the search path when nothing registered answers.
    ///
    /// # Errors
    /// As [`Registry::codec`] for a number, as [`Registry::codec_by_name`] for a name.
    pub fn parse_codec(&self, s: &str) -> Result<Arc<dyn Codec>> {
        match s.parse::<u8>() {
            Ok(id) => self.codec(CodecId(id)),
            Err(_) => self.codec_by_name(s),
        }
    }

    /// The filter ID that `s` names or numbers: `nofilter` (or `noshuffle`, `0`) for an empty
    /// slot, a number 1–255 or a name (`shuffle`, a plugin's), checked to be registered or
    /// loadable from the search path.
    ///
    /// # Errors
    /// As [`Registry::filter`] for a number, as [`Registry::filter_by_name`] for a name.
    pub fn parse_filter(&self, s: &str) -> Result<FilterId> {
        if let Ok(id) = s.parse::<u8>() {
            let id = FilterId(id);
            if id != FilterId::NOFILTER {
                self.filter(id)?;
            }
            return Ok(id);
        }
        if FilterId::from_name(s) == Some(FilterId::NOFILTER) {
            return Ok(FilterId::NOFILTER);
        }
        self.filter_by_name(s).map(|f| f.id())
    }

    /// IDs of the registered codecs, ascending (nothing is loaded).
    #[must_use]
    pub fn codec_ids(&self) -> Vec<CodecId> {
        ids(&self.codecs).into_iter().map(CodecId).collect()
    }

    /// IDs of the registered filters, ascending (nothing is loaded).
    #[must_use]
    pub fn filter_ids(&self) -> Vec<FilterId> {
        ids(&self.filters).into_iter().map(FilterId).collect()
    }

    /// Every registered codec, then every registered filter, by ascending ID, with where
    /// each came from (nothing is loaded; see [`Registry::load_search_path`]).
    #[must_use]
    pub fn list(&self) -> Vec<Registered> {
        let mut out = entries(&self.codecs, PluginKind::Codec, |c| c.name().to_owned());
        out.extend(entries(&self.filters, PluginKind::Filter, |f| {
            f.name().to_owned()
        }));
        out
    }
}

fn ids<T: ?Sized>(t: &Table<T>) -> Vec<u8> {
    let table = read(t);
    (0..=255u8)
        .filter(|&i| table[usize::from(i)].is_some())
        .collect()
}

fn find_name<T: ?Sized>(t: &Table<T>, name: &str, name_of: impl Fn(&T) -> &str) -> Option<u8> {
    let table = read(t);
    (0..=255u8).find(|&i| {
        table[usize::from(i)]
            .as_ref()
            .is_some_and(|s| name_of(&s.item) == name)
    })
}

fn entries<T: ?Sized>(
    t: &Table<T>,
    kind: PluginKind,
    name_of: impl Fn(&T) -> String,
) -> Vec<Registered> {
    let table = read(t);
    (0..=255u8)
        .filter_map(|id| {
            table[usize::from(id)].as_ref().map(|s| Registered {
                kind,
                id,
                name: name_of(&s.item),
                origin: s.origin.clone(),
            })
        })
        .collect()
}

fn insert<T: ?Sized>(
    t: &Table<T>,
    kind: PluginKind,
    id: u8,
    name: &str,
    item: Arc<T>,
    origin: Origin,
    name_of: impl Fn(&T) -> &str,
) -> Result<()> {
    let mut table = t.write().unwrap_or_else(PoisonError::into_inner);
    if let Some(old) = &table[usize::from(id)] {
        return Err(Error::PluginId {
            kind: kind.name(),
            id,
            name: name.to_owned(),
            problem: PluginIdProblem::IdTaken {
                by: name_of(&old.item).to_owned(),
                origin: old.origin.to_string(),
            },
        });
    }
    // Names stay unique, so that a lookup by name is unambiguous.
    if let Some((other, old)) = table.iter().enumerate().find_map(|(i, s)| {
        s.as_ref()
            .filter(|s| name_of(&s.item) == name)
            .map(|s| (i, s))
    }) {
        return Err(Error::PluginId {
            kind: kind.name(),
            id,
            name: name.to_owned(),
            problem: PluginIdProblem::NameTaken {
                id: other as u8,
                origin: old.origin.to_string(),
            },
        });
    }
    table[usize::from(id)] = Some(Slot { item, origin });
    Ok(())
}

/// A codec or filter registered by a program, its calls guarded against panics.
struct Guarded<T: ?Sized> {
    inner: Arc<T>,
    id: u8,
}

impl<T: ?Sized> Guarded<T> {
    fn run<R>(&self, body: impl FnOnce(&T) -> Result<R>) -> Result<R> {
        catch_unwind(AssertUnwindSafe(|| body(&self.inner)))
            .unwrap_or(Err(Error::PluginPanic { id: self.id }))
    }
}

impl Codec for Guarded<dyn Codec> {
    fn id(&self) -> CodecId {
        CodecId(self.id)
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn capabilities(&self) -> crate::codecs::Capabilities {
        self.inner.capabilities()
    }
    fn format_code(&self) -> u8 {
        self.inner.format_code()
    }
    fn version(&self) -> u8 {
        self.inner.version()
    }
    fn compress(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<usize> {
        self.run(|c| c.compress(src, dst, ctx))
    }
    fn decompress(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<usize> {
        self.run(|c| c.decompress(src, dst, ctx))
    }
    fn decompress_items(
        &self,
        src: &[u8],
        dst: &mut [u8],
        start: usize,
        ctx: &BlockContext<'_>,
    ) -> Result<Option<usize>> {
        self.run(|c| c.decompress_items(src, dst, start, ctx))
    }
}

impl Filter for Guarded<dyn Filter> {
    fn id(&self) -> FilterId {
        FilterId(self.id)
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn forward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        self.run(|f| f.forward(src, dst, ctx))
    }
    fn backward(&self, src: &[u8], dst: &mut [u8], ctx: &BlockContext<'_>) -> Result<()> {
        self.run(|f| f.backward(src, dst, ctx))
    }
}
