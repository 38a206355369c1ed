//! Plugin libraries: the only place Strata opens shared libraries.
//!
//! A plugin library exports `strata_plugin_descriptors` (see the `strata-plugin-api` crate and
//! `include/strata.h`), which lists one [`PluginDescriptor`] per codec or filter it provides.
//! Before anything is registered, every descriptor of the library is checked: ABI version and
//! size, kind, name (`[A-Za-z0-9_]`), ID ([`super::check_plugin_id`]: no Blosc built-in ID, and
//! Blosc2's name for an ID of its global registry) and function pointers. One bad descriptor
//! rejects the whole library, and nothing of it is registered.
//!
//! **Search path.** When a codec or filter ID of 32 or more (or a name) is asked for and
//! nothing holds it, the loader looks, in order, in:
//! 1. every directory of `STRATA_PLUGIN_PATH` (separated by `:`, `;` on Windows);
//! 2. `$HOME/.local/lib/strata/plugins`;
//! 3. `<prefix>/lib/strata/plugins`, where `<prefix>` is the parent of the directory holding
//!    the running executable (`/usr/bin/strata` → `/usr/lib/strata/plugins`).
//!
//! Every file with the platform's library extension (`.so`, `.dylib`, `.dll`) there, in name
//! order, is opened until one provides the ID; the first one wins. A library is opened once per
//! registry and kept loaded (never closed), so its other plugins are registered without
//! reopening it when they are asked for. Loading is serialised: many threads asking for an
//! unregistered ID at once open the library once. A search that finds nothing fails with
//! [`Error::CodecNotFound`] / [`Error::FilterNotFound`], which name every directory searched
//! and why each rejected library was rejected.
//!
//! Opening a library runs its initialisers: put only trusted libraries in these directories.
//! Format: the loading protocol mirrors c-blosc2 `blosc/blosc2.c` (`fill_codec`,
//! `fill_filter`) with a versioned descriptor in place of the `info` symbol;
//! `shared/spec/plugins-abi.md` §5.

#![allow(unsafe_code)]

use super::{check_plugin_id, Origin, PluginKind, Registered, Registry};
use crate::codecs::{Codec, CodecCtx};
use crate::error::{Error, Result};
use crate::filters::{Filter, FilterCtx};
use crate::format::b2nd::B2ndMeta;
use libloading::Library;
use std::ffi::{c_char, CStr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use strata_plugin_api as api;
use strata_plugin_api::{BlockContext, PluginDescriptor};

/// The environment variable listing plugin directories.
pub const PLUGIN_PATH_ENV: &str = "STRATA_PLUGIN_PATH";

/// Most descriptors one library may list.
const MAX_DESCRIPTORS: usize = 512;

/// Bytes a plugin may write as its error message.
const ERRBUF_LEN: usize = 256;

/// The plugin search path from the environment: `STRATA_PLUGIN_PATH`, then
/// `$HOME/.local/lib/strata/plugins`, then `<prefix>/lib/strata/plugins` (see the module docs).
#[must_use]
pub fn default_plugin_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os(PLUGIN_PATH_ENV)
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        dirs.push(PathBuf::from(home).join(".local/lib/strata/plugins"));
    }
    if let Some(prefix) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().and_then(Path::parent).map(Path::to_path_buf))
    {
        dirs.push(prefix.join("lib/strata/plugins"));
    }
    dirs
}

/// What a search looks for.
#[derive(Debug, Clone, Copy)]
pub(super) enum Key<'a> {
    Id(u8),
    Name(&'a str),
}

/// A descriptor that passed every check, with its function pointers copied out.
#[derive(Clone)]
struct Checked {
    kind: PluginKind,
    id: u8,
    name: String,
    version: u8,
    funcs: Funcs,
}

#[derive(Clone, Copy)]
enum Funcs {
    Codec {
        encode: api::CodecEncodeFn,
        decode: api::CodecDecodeFn,
        decode_items: api::CodecDecodeItemsFn,
    },
    Filter {
        forward: api::FilterFn,
        backward: api::FilterFn,
    },
}

impl Checked {
    fn matches(&self, kind: PluginKind, key: Key<'_>) -> bool {
        self.kind == kind
            && match key {
                Key::Id(id) => self.id == id,
                Key::Name(name) => self.name == name,
            }
    }
}

/// A library that passed the checks, kept open.
struct Loaded {
    path: PathBuf,
    lib: Arc<Library>,
    plugins: Vec<Checked>,
}

/// A file of the search path that was refused, and why: not opened again by searches while it
/// stays the same file (same size and modification time).
struct Rejected {
    path: PathBuf,
    stamp: Option<(u64, std::time::SystemTime)>,
    why: String,
}

fn stamp(path: &Path) -> Option<(u64, std::time::SystemTime)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.len(), m.modified().ok()?))
}

/// What a loader has opened and refused.
#[derive(Default)]
struct Libraries {
    loaded: Vec<Loaded>,
    rejected: Vec<Rejected>,
}

/// The loader of one [`Registry`]: its search path and the libraries it has opened.
#[derive(Default)]
pub(super) struct Loader {
    /// `None`: [`default_plugin_dirs`], read at each search.
    dirs: RwLock<Option<Vec<PathBuf>>>,
    /// Held for the whole of a load, so that a library is opened once.
    libs: Mutex<Libraries>,
}

impl Loader {
    fn dirs(&self) -> Vec<PathBuf> {
        self.dirs
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .unwrap_or_else(default_plugin_dirs)
    }

    /// Makes `kind` `key` registered in `reg` from the search path, or says where it looked.
    pub(super) fn find(&self, reg: &Registry, kind: PluginKind, key: Key<'_>) -> Result<()> {
        let mut libs = self.libs.lock().unwrap_or_else(PoisonError::into_inner);
        let Libraries { loaded, rejected } = &mut *libs;
        // Another thread may have loaded it while this one waited.
        let present = match key {
            Key::Id(id) => reg.holds(kind, id),
            Key::Name(name) => reg.id_of(kind, name).is_some(),
        };
        if present {
            return Ok(());
        }
        for lib in loaded.iter() {
            if let Some(p) = lib.plugins.iter().find(|p| p.matches(kind, key)) {
                return register(reg, p, &lib.lib, &lib.path);
            }
        }
        let dirs = self.dirs();
        let mut problems = Vec::new();
        for dir in &dirs {
            for path in candidates(dir) {
                if loaded.iter().any(|l| l.path == path) {
                    continue;
                }
                let now = stamp(&path);
                if let Some(r) = rejected.iter().find(|r| r.path == path && r.stamp == now) {
                    problems.push(r.why.clone());
                    continue;
                }
                match open(&path) {
                    Ok(lib) => {
                        let hit = lib.plugins.iter().position(|p| p.matches(kind, key));
                        let result =
                            hit.map(|i| register(reg, &lib.plugins[i], &lib.lib, &lib.path));
                        loaded.push(lib);
                        if let Some(result) = result {
                            return result;
                        }
                    }
                    Err(e) => {
                        let why = e.to_string();
                        rejected.retain(|r| r.path != path);
                        rejected.push(Rejected {
                            path: path.clone(),
                            stamp: now,
                            why: why.clone(),
                        });
                        problems.push(why);
                    }
                }
            }
        }
        let mut searched = if dirs.is_empty() {
            "no directory: the plugin search path is empty".to_owned()
        } else {
            dirs.iter()
                .map(|d| {
                    let missing = if d.is_dir() { "" } else { " (missing)" };
                    format!("{}{missing}", d.display())
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !problems.is_empty() {
            searched.push_str("; rejected: ");
            searched.push_str(&problems.join("; "));
        }
        Err(match (kind, key) {
            (PluginKind::Codec, Key::Id(id)) => Error::CodecNotFound { id, searched },
            (PluginKind::Filter, Key::Id(id)) => Error::FilterNotFound { id, searched },
            (_, Key::Name(name)) => {
                Error::InvalidParam(format!("no {kind} named {name:?} (searched {searched})"))
            }
        })
    }
}

/// Files in `dir` with the platform's library extension, in name order (none if `dir` cannot
/// be read).
fn candidates(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension().and_then(|e| e.to_str()) == Some(std::env::consts::DLL_EXTENSION)
        })
        .collect();
    out.sort();
    out
}

fn load_error(path: &Path, message: impl Into<String>) -> Error {
    Error::PluginLoad {
        source_name: path.display().to_string(),
        message: message.into(),
    }
}

/// Opens the library at `path` and checks every descriptor it lists.
fn open(path: &Path) -> Result<Loaded> {
    let path = path
        .canonicalize()
        .map_err(|e| load_error(path, e.to_string()))?;
    // SAFETY: opening a library runs its initialisers. Plugin libraries come from the
    // directories the user configured or named explicitly, which are trusted (module docs).
    let lib = unsafe { Library::new(&path) }
        .map_err(|e| load_error(&path, format!("cannot be loaded: {e}")))?;
    let entry_name = format!("{}\0", api::ENTRY_SYMBOL);
    // SAFETY: the symbol, when present, is the plugin entry point of type `PluginEntryFn`,
    // as the ABI requires of every plugin library.
    let entry = unsafe { lib.get::<api::PluginEntryFn>(entry_name.as_bytes()) }.map_err(|_| {
        load_error(
            &path,
            format!(
                "no {} symbol: not a Strata plugin library",
                api::ENTRY_SYMBOL
            ),
        )
    })?;
    let Some(entry) = *entry else {
        return Err(load_error(&path, format!("{} is NULL", api::ENTRY_SYMBOL)));
    };
    let mut count = 0usize;
    // SAFETY: the entry point takes a writable count and returns an array of that many
    // descriptor pointers (ABI contract); `count` is a valid local.
    let list = unsafe { entry(&mut count) };
    if list.is_null() || count == 0 || count > MAX_DESCRIPTORS {
        return Err(load_error(
            &path,
            format!(
                "{} lists {count} plugins (1 to {MAX_DESCRIPTORS} expected)",
                api::ENTRY_SYMBOL
            ),
        ));
    }
    let mut plugins: Vec<Checked> = Vec::with_capacity(count);
    for i in 0..count {
        // SAFETY: the entry point returned `count` readable pointers.
        let desc = unsafe { list.add(i).read() };
        // SAFETY: a non-NULL pointer the library gave as a descriptor, which lives as long as
        // the library (kept open below).
        let checked =
            unsafe { check(desc) }.map_err(|m| load_error(&path, format!("plugin {i}: {m}")))?;
        if plugins
            .iter()
            .any(|p| p.kind == checked.kind && (p.id == checked.id || p.name == checked.name))
        {
            return Err(load_error(
                &path,
                format!(
                    "lists {} ID {} ({}) twice",
                    checked.kind, checked.id, checked.name
                ),
            ));
        }
        plugins.push(checked);
    }
    Ok(Loaded {
        path,
        lib: Arc::new(lib),
        plugins,
    })
}

/// Checks one descriptor and copies out what the registry needs.
///
/// # Safety
/// `desc` must be NULL or point to memory readable as the ABI-version and size words of a
/// descriptor and, when they match this ABI, to a whole [`PluginDescriptor`] whose `name` is
/// NULL or NUL-terminated.
unsafe fn check(desc: *const PluginDescriptor) -> std::result::Result<Checked, String> {
    if desc.is_null() {
        return Err("the descriptor pointer is NULL".into());
    }
    // SAFETY: the first two words are `abi_version` and `size` in every ABI version.
    let (abi, size) = unsafe { (desc.cast::<u32>().read(), desc.cast::<u32>().add(1).read()) };
    if abi != api::ABI_VERSION {
        return Err(format!(
            "built for plugin ABI version {abi}, this Strata reads version {}",
            api::ABI_VERSION
        ));
    }
    let need = std::mem::size_of::<PluginDescriptor>();
    if (size as usize) < need {
        return Err(format!(
            "descriptor of {size} bytes, ABI version {abi} has {need}"
        ));
    }
    // SAFETY: same ABI version and at least its size: a whole descriptor.
    let d = unsafe { &*desc };
    let kind = match d.kind {
        api::KIND_CODEC => PluginKind::Codec,
        api::KIND_FILTER => PluginKind::Filter,
        other => {
            return Err(format!(
                "kind {other} is neither codec ({}) nor filter ({})",
                api::KIND_CODEC,
                api::KIND_FILTER
            ))
        }
    };
    if d.name.is_null() {
        return Err(format!("{kind} ID {} has a NULL name", d.id));
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's guarantee.
    let name = unsafe { CStr::from_ptr(d.name) }
        .to_str()
        .map_err(|_| format!("{kind} ID {} has a name that is not UTF-8", d.id))?
        .to_owned();
    check_plugin_id(kind, d.id, &name)?;
    let funcs = match (kind, d.encode, d.decode, d.forward, d.backward) {
        (PluginKind::Codec, Some(_), Some(_), _, _) => Funcs::Codec {
            encode: d.encode,
            decode: d.decode,
            decode_items: d.decode_items,
        },
        (PluginKind::Filter, _, _, Some(_), Some(_)) => Funcs::Filter {
            forward: d.forward,
            backward: d.backward,
        },
        (PluginKind::Codec, ..) => {
            return Err(format!("codec {name} lacks an encode or decode function"))
        }
        (PluginKind::Filter, ..) => {
            return Err(format!(
                "filter {name} lacks a forward or backward function"
            ))
        }
    };
    Ok(Checked {
        kind,
        id: d.id,
        name,
        version: d.version,
        funcs,
    })
}

/// Registers a checked plugin of library `lib` (loaded from `path`).
fn register(reg: &Registry, p: &Checked, lib: &Arc<Library>, path: &Path) -> Result<()> {
    let plugin = Plugin {
        id: p.id,
        name: p.name.clone(),
        version: p.version,
        funcs: p.funcs,
        _lib: Some(lib.clone()),
    };
    let origin = Origin::Library(path.to_path_buf());
    match p.kind {
        PluginKind::Codec => reg.insert_codec(Arc::new(plugin), origin),
        PluginKind::Filter => reg.insert_filter(Arc::new(plugin), origin),
    }
}

impl Registry {
    /// Replaces the plugin search path (`None`: back to [`default_plugin_dirs`], read from the
    /// environment at each search).
    pub fn set_plugin_dirs(&self, dirs: Option<Vec<PathBuf>>) {
        *self
            .loader
            .dirs
            .write()
            .unwrap_or_else(PoisonError::into_inner) = dirs;
    }

    /// The plugin search path in use.
    #[must_use]
    pub fn plugin_dirs(&self) -> Vec<PathBuf> {
        self.loader.dirs()
    }

    /// Loads the plugin library at `path` and registers every codec and filter it provides
    /// (those already registered from this same library are skipped). Loading the same
    /// library again is harmless.
    ///
    /// # Errors
    /// [`Error::PluginLoad`] when the library does not load, lacks the entry symbol, a
    /// descriptor fails a check (ABI version, kind, ID, name, functions), or one of its IDs or
    /// names is already taken by another codec or filter. Nothing is registered then.
    pub fn load_plugin(&self, path: impl AsRef<Path>) -> Result<Vec<Registered>> {
        let path = path.as_ref();
        let mut libs = self
            .loader
            .libs
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let loaded = &mut libs.loaded;
        let canonical = path
            .canonicalize()
            .map_err(|e| load_error(path, e.to_string()))?;
        let at = match loaded.iter().position(|l| l.path == canonical) {
            Some(at) => at,
            None => {
                loaded.push(open(&canonical)?);
                loaded.len() - 1
            }
        };
        let lib = &loaded[at];
        let origin = Origin::Library(lib.path.clone());
        let mut todo = Vec::new();
        for p in &lib.plugins {
            let mine = self
                .list()
                .into_iter()
                .any(|r| r.kind == p.kind && r.id == p.id && r.origin == origin);
            if mine {
                continue;
            }
            if self.holds(p.kind, p.id) || self.id_of(p.kind, &p.name).is_some() {
                return Err(load_error(
                    &lib.path,
                    format!(
                        "{} ID {} ({}) is already taken in this registry",
                        p.kind, p.id, p.name
                    ),
                ));
            }
            todo.push(p);
        }
        let mut out = Vec::with_capacity(todo.len());
        for p in todo {
            register(self, p, &lib.lib, &lib.path)?;
            out.push(Registered {
                kind: p.kind,
                id: p.id,
                name: p.name.clone(),
                origin: origin.clone(),
            });
        }
        Ok(out)
    }

    /// Loads every plugin library in the search path and registers what they provide, skipping
    /// IDs and names already taken. Returns the problems met (one line per rejected library or
    /// skipped plugin); [`Registry::list`] then shows everything.
    pub fn load_search_path(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for dir in self.plugin_dirs() {
            for path in candidates(&dir) {
                if let Err(e) = self.load_plugin_lenient(&path) {
                    problems.push(e);
                }
            }
        }
        problems
    }

    /// [`Registry::load_plugin`], registering what it can and reporting the rest.
    fn load_plugin_lenient(&self, path: &Path) -> std::result::Result<(), String> {
        let mut libs = self
            .loader
            .libs
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let loaded = &mut libs.loaded;
        let canonical = path
            .canonicalize()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let at = match loaded.iter().position(|l| l.path == canonical) {
            Some(at) => at,
            None => {
                loaded.push(open(&canonical).map_err(|e| e.to_string())?);
                loaded.len() - 1
            }
        };
        let lib = &loaded[at];
        let mut skipped = Vec::new();
        for p in &lib.plugins {
            if self.holds(p.kind, p.id) || self.id_of(p.kind, &p.name).is_some() {
                let origin = Origin::Library(lib.path.clone());
                let mine = self
                    .list()
                    .into_iter()
                    .any(|r| r.kind == p.kind && r.id == p.id && r.origin == origin);
                if !mine {
                    skipped.push(format!("{} {} ({}) already taken", p.kind, p.id, p.name));
                }
                continue;
            }
            register(self, p, &lib.lib, &lib.path).map_err(|e| e.to_string())?;
        }
        if skipped.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{}: skipped {}",
                lib.path.display(),
                skipped.join(", ")
            ))
        }
    }

    /// Registers the codec or filter a C descriptor describes, after the checks a loaded
    /// library's descriptors get (ABI version, kind, ID, name, functions). The name is copied;
    /// the functions are called for as long as the process runs.
    ///
    /// # Errors
    /// [`Error::PluginLoad`] when a check fails or the ID or name is already taken.
    ///
    /// # Safety
    /// `desc` must be NULL or point to a descriptor laid out as `strata_plugin` (at least its
    /// `abi_version` and `size` words, and all of it when those match this ABI), with a
    /// NUL-terminated name, whose functions stay callable for the life of the process and obey
    /// the ABI's contract.
    pub unsafe fn register_descriptor(&self, desc: *const PluginDescriptor) -> Result<Registered> {
        let load = |message: String| Error::PluginLoad {
            source_name: "in-process descriptor".into(),
            message,
        };
        // SAFETY: the caller's guarantee.
        let p = unsafe { check(desc) }.map_err(load)?;
        let plugin = Plugin {
            id: p.id,
            name: p.name.clone(),
            version: p.version,
            funcs: p.funcs,
            _lib: None,
        };
        let result = match p.kind {
            PluginKind::Codec => self.insert_codec(Arc::new(plugin), Origin::InProcess),
            PluginKind::Filter => self.insert_filter(Arc::new(plugin), Origin::InProcess),
        };
        result.map_err(|e| load(e.to_string()))?;
        Ok(Registered {
            kind: p.kind,
            id: p.id,
            name: p.name,
            origin: Origin::InProcess,
        })
    }
}

/// A codec or filter behind C function pointers (a loaded library's or a C descriptor's).
struct Plugin {
    id: u8,
    name: String,
    version: u8,
    funcs: Funcs,
    /// Keeps the library, and so the functions, loaded.
    _lib: Option<Arc<Library>>,
}

/// The block context handed to a plugin, borrowing the N-d shapes and an error buffer.
#[allow(clippy::too_many_arguments)]
fn block_context(
    id: u8,
    meta: u8,
    clevel: u8,
    typesize: usize,
    blocksize: usize,
    nblock: usize,
    nd: Option<&B2ndMeta>,
    errbuf: &mut [u8; ERRBUF_LEN],
) -> BlockContext {
    let (ndim, shape, chunkshape, blockshape): (u8, *const i64, *const i32, *const i32) = match nd {
        // `B2ndMeta` keeps ndim <= 16, so it fits a byte.
        Some(m) if m.ndim() > 0 => (
            u8::try_from(m.ndim()).unwrap_or(0),
            m.shape.as_ptr(),
            m.chunkshape.as_ptr(),
            m.blockshape.as_ptr(),
        ),
        _ => (0, std::ptr::null(), std::ptr::null(), std::ptr::null()),
    };
    let dtype = nd.and_then(|m| m.dtype.as_deref());
    BlockContext {
        size: std::mem::size_of::<BlockContext>(),
        typesize,
        blocksize,
        nblock,
        id,
        meta,
        clevel,
        ndim,
        shape,
        chunkshape,
        blockshape,
        dtype: dtype.map_or(std::ptr::null(), |d| d.as_ptr().cast::<c_char>()),
        dtype_len: dtype.map_or(0, str::len),
        errbuf: errbuf.as_mut_ptr().cast(),
        errbuf_len: ERRBUF_LEN,
    }
}

impl Plugin {
    /// The error for a negative return `code`, with the message the plugin left.
    fn failure(&self, kind: PluginKind, code: i64, errbuf: &[u8; ERRBUF_LEN]) -> Error {
        if code == i64::from(api::ERROR_PANIC) {
            return Error::PluginPanic { id: self.id };
        }
        let text = CStr::from_bytes_until_nul(errbuf)
            .ok()
            .and_then(|m| m.to_str().ok())
            .filter(|m| !m.is_empty())
            .unwrap_or("no message");
        let message = format!(
            "{kind} {} ({}) failed with code {code}: {text}",
            self.id, self.name
        );
        match kind {
            PluginKind::Filter => Error::Filter {
                id: self.id,
                message,
            },
            PluginKind::Codec if code == i64::from(api::ERROR_CODEC_PARAM) => {
                Error::CodecParam(message)
            }
            PluginKind::Codec if code == i64::from(api::ERROR_INVALID_PARAM) => {
                Error::InvalidParam(message)
            }
            PluginKind::Codec => Error::Data(message),
        }
    }

    fn codec_ctx(&self, ctx: &CodecCtx<'_>, errbuf: &mut [u8; ERRBUF_LEN]) -> BlockContext {
        block_context(
            self.id,
            ctx.meta,
            ctx.clevel,
            ctx.typesize,
            ctx.blocksize,
            ctx.nblock,
            ctx.nd,
            errbuf,
        )
    }

    fn filter(&self, forward: bool, src: &[u8], dst: &mut [u8], ctx: &FilterCtx<'_>) -> Result<()> {
        let Funcs::Filter {
            forward: Some(fwd),
            backward: Some(backward),
        } = self.funcs
        else {
            return Err(Error::UnknownFilter { id: self.id });
        };
        if src.len() != dst.len() {
            return Err(Error::Filter {
                id: self.id,
                message: format!("{} bytes in, {} bytes out", src.len(), dst.len()),
            });
        }
        let mut errbuf = [0u8; ERRBUF_LEN];
        let bc = block_context(
            self.id,
            ctx.meta,
            0,
            ctx.typesize,
            src.len(),
            ctx.nblock,
            ctx.nd,
            &mut errbuf,
        );
        let f = if forward { fwd } else { backward };
        // SAFETY: `src` and `dst` are distinct buffers of `src.len()` bytes and `bc` is valid for
        // the call; the descriptor passed its checks and its library stays loaded (`_lib`).
        let r = unsafe { f(src.as_ptr(), dst.as_mut_ptr(), src.len(), &bc) };
        if r == 0 {
            Ok(())
        } else {
            Err(self.failure(PluginKind::Filter, i64::from(r), &errbuf))
        }
    }
}

impl Codec for Plugin {
    fn id(&self) -> u8 {
        self.id
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> u8 {
        self.version
    }
    fn compress(&self, src: &[u8], dst: &mut [u8], ctx: &CodecCtx<'_>) -> Result<usize> {
        let Funcs::Codec {
            encode: Some(encode),
            ..
        } = self.funcs
        else {
            return Err(Error::UnknownCodec { id: self.id });
        };
        let mut errbuf = [0u8; ERRBUF_LEN];
        let bc = self.codec_ctx(ctx, &mut errbuf);
        // SAFETY: the buffers are valid for their lengths and distinct, `bc` is valid for the
        // call; the descriptor passed its checks and its library stays loaded (`_lib`).
        let r = unsafe { encode(src.as_ptr(), src.len(), dst.as_mut_ptr(), dst.len(), &bc) };
        if r < 0 {
            return Err(self.failure(PluginKind::Codec, r, &errbuf));
        }
        match usize::try_from(r) {
            Ok(n) if n <= dst.len() => Ok(n),
            _ => Err(Error::Data(format!(
                "codec {} ({}) says it wrote {r} bytes into {} bytes of room",
                self.id,
                self.name,
                dst.len()
            ))),
        }
    }
    fn decompress(&self, src: &[u8], dst: &mut [u8], ctx: &CodecCtx<'_>) -> Result<usize> {
        let Funcs::Codec {
            decode: Some(decode),
            ..
        } = self.funcs
        else {
            return Err(Error::UnknownCodec { id: self.id });
        };
        let mut errbuf = [0u8; ERRBUF_LEN];
        let bc = self.codec_ctx(ctx, &mut errbuf);
        // SAFETY: as in `compress`.
        let r = unsafe { decode(src.as_ptr(), src.len(), dst.as_mut_ptr(), dst.len(), &bc) };
        if r < 0 {
            return Err(self.failure(PluginKind::Codec, r, &errbuf));
        }
        usize::try_from(r)
            .ok()
            .filter(|&n| n == dst.len())
            .ok_or_else(|| {
                Error::Data(format!(
                    "codec {} ({}) decoded {r} bytes, expected {}",
                    self.id,
                    self.name,
                    dst.len()
                ))
            })
    }
    fn decompress_items(
        &self,
        src: &[u8],
        dst: &mut [u8],
        start: usize,
        ctx: &CodecCtx<'_>,
    ) -> Result<Option<usize>> {
        let Funcs::Codec {
            decode_items: Some(decode_items),
            ..
        } = self.funcs
        else {
            return Ok(None);
        };
        if ctx.typesize == 0 || !dst.len().is_multiple_of(ctx.typesize) {
            return Ok(None);
        }
        let nitems = dst.len() / ctx.typesize;
        let mut errbuf = [0u8; ERRBUF_LEN];
        let bc = self.codec_ctx(ctx, &mut errbuf);
        // SAFETY: `dst` holds `nitems * typesize` bytes, `src` its length; as in `compress`.
        let r = unsafe {
            decode_items(
                src.as_ptr(),
                src.len(),
                dst.as_mut_ptr(),
                start,
                nitems,
                &bc,
            )
        };
        match r {
            0 => Ok(None),
            r if r < 0 => Err(self.failure(PluginKind::Codec, r, &errbuf)),
            r => usize::try_from(r)
                .ok()
                .filter(|&n| n == dst.len())
                .map(Some)
                .ok_or_else(|| {
                    Error::Data(format!(
                        "codec {} ({}) decoded {r} bytes of items, expected {}",
                        self.id,
                        self.name,
                        dst.len()
                    ))
                }),
        }
    }
}

impl Filter for Plugin {
    fn id(&self) -> u8 {
        self.id
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn forward(&self, src: &[u8], dst: &mut [u8], ctx: &FilterCtx<'_>) -> Result<()> {
        self.filter(true, src, dst, ctx)
    }
    fn backward(&self, src: &[u8], dst: &mut [u8], ctx: &FilterCtx<'_>) -> Result<()> {
        self.filter(false, src, dst, ctx)
    }
}
