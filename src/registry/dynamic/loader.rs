//! The loader: the plugin search path, libraries opened once per registry (and files refused,
//! remembered while they stay the same), every descriptor checked before anything of a library
//! is registered, and the registry's loading methods.

use super::adapter::{Funcs, Plugin};
use crate::codecs::Capabilities;
use crate::error::{Error, Result};
use crate::registry::{check_plugin_id, Origin, PluginKind, Registered, Registry};
use libloading::Library;
use std::ffi::CStr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use strata_plugin_api as api;
use strata_plugin_api::PluginDescriptor;

/// The environment variable listing plugin directories.
pub const PLUGIN_PATH_ENV: &str = "STRATA_PLUGIN_PATH";

/// Most descriptors one library may list.
const MAX_DESCRIPTORS: usize = 512;

/// The plugin search path from the environment: `STRATA_PLUGIN_PATH`, then
/// `$HOME/.local/lib/strata/plugins`, then `<prefix>/lib/strata/plugins`, then
/// `<libdir>/strata/plugins` beside a shared libstrata (see the module docs).
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
    if let Some(libdir) = shared_library_dir() {
        let beside = libdir.join("strata/plugins");
        if !dirs.contains(&beside) {
            dirs.push(beside);
        }
    }
    dirs
}

/// The directory of the shared library (`libstrata.so`) this code runs from, as the dynamic
/// linker loaded it; `None` when it is linked into the program itself (`libstrata.a`, a Rust
/// program) or the linker cannot say.
#[cfg(unix)]
fn shared_library_dir() -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    let here = shared_library_dir as fn() -> Option<PathBuf>;
    // SAFETY: `dladdr` only looks the address up and writes `info`; the address is a function
    // of this library.
    let found = unsafe { libc::dladdr(here as *const libc::c_void, info.as_mut_ptr()) };
    if found == 0 {
        return None;
    }
    // SAFETY: `dladdr` succeeded, so it filled `info` (zeroed before, so every field is valid).
    let info = unsafe { info.assume_init() };
    if info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: a non-NULL `dli_fname` is the NUL-terminated path of the loaded object, which
    // stays loaded (it holds this function).
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    let object = Path::new(std::ffi::OsStr::from_bytes(name.to_bytes()))
        .canonicalize()
        .ok()?;
    let exe = std::env::current_exe().and_then(|e| e.canonicalize()).ok();
    if exe.as_deref() == Some(object.as_path()) {
        return None;
    }
    object.parent().map(Path::to_path_buf)
}

#[cfg(not(unix))]
fn shared_library_dir() -> Option<PathBuf> {
    None
}

/// What a search looks for.
#[derive(Debug, Clone, Copy)]
pub(in crate::registry) enum Key<'a> {
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
    caps: Capabilities,
}

impl Checked {
    /// The codec or filter this descriptor describes, keeping `lib` (its library) loaded.
    fn plugin(&self, lib: Option<Arc<Library>>) -> Plugin {
        Plugin::new(
            self.id,
            self.name.clone(),
            self.version,
            self.funcs,
            self.caps,
            lib,
        )
    }

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

impl Libraries {
    /// The library at `canonical` (a canonical path), opened and checked the first time.
    fn get_or_open(&mut self, canonical: PathBuf) -> Result<&Loaded> {
        let at = match self.loaded.iter().position(|l| l.path == canonical) {
            Some(at) => at,
            None => {
                self.loaded.push(open(&canonical)?);
                self.loaded.len() - 1
            }
        };
        Ok(&self.loaded[at])
    }
}

/// The loader of one [`Registry`]: its search path and the libraries it has opened.
#[derive(Default)]
pub(in crate::registry) struct Loader {
    /// `None`: [`default_plugin_dirs`], read at each search.
    dirs: RwLock<Option<Vec<PathBuf>>>,
    /// Held for the whole of a load, so that a library is opened once.
    libs: Mutex<Libraries>,
}

impl Loader {
    /// The libraries, held for the whole of a load.
    fn lock(&self) -> MutexGuard<'_, Libraries> {
        self.libs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn dirs(&self) -> Vec<PathBuf> {
        self.dirs
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .unwrap_or_else(default_plugin_dirs)
    }

    /// Makes `kind` `key` registered in `reg` from the search path, or says where it looked.
    pub(in crate::registry) fn find(
        &self,
        reg: &Registry,
        kind: PluginKind,
        key: Key<'_>,
    ) -> Result<()> {
        let mut libs = self.lock();
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
            (_, Key::Name(name)) => Error::NameNotFound {
                what: kind.name(),
                name: name.to_owned(),
                searched,
            },
        })
    }
}

/// Files in `dir` with the platform's library extension, in name order (none if `dir` cannot
/// be read).
fn candidates(dir: &Path) -> Vec<PathBuf> {
    let (files, _) = named_like_libraries(dir);
    files
}

/// The entries of `dir` with the platform's library extension, in name order: the regular
/// files (symlinks followed), and the others, each with what it is. Only regular files are
/// ever opened.
fn named_like_libraries(dir: &Path) -> (Vec<PathBuf>, Vec<(PathBuf, &'static str)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (Vec::new(), Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some(std::env::consts::DLL_EXTENSION))
        .collect();
    paths.sort();
    let mut files = Vec::new();
    let mut others = Vec::new();
    for p in paths {
        match std::fs::metadata(&p) {
            Ok(m) if m.is_file() => files.push(p),
            Ok(m) => others.push((p, file_kind(&m.file_type()))),
            Err(_) => others.push((p, "a symlink to nothing, or unreadable")),
        }
    }
    (files, others)
}

/// What a file that is not a regular file is, in words.
fn file_kind(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

fn load_error(path: &Path, message: impl Into<String>) -> Error {
    Error::PluginLoad {
        source_name: path.display().to_string(),
        message: message.into(),
    }
}

/// Opens the library at `path` with every symbol bound now (`RTLD_NOW`): a symbol that nothing
/// defines fails the load, where lazy binding would end the process at the first call that
/// needs it. Windows binds a library's imports when it loads it.
fn open_library(path: &Path) -> std::result::Result<Library, libloading::Error> {
    #[cfg(unix)]
    {
        use libloading::os::unix::{Library as UnixLibrary, RTLD_LOCAL, RTLD_NOW};
        // SAFETY: opening a library runs its initialisers. Plugin libraries come from the
        // directories the user configured or named explicitly, which are trusted (module
        // docs).
        unsafe { UnixLibrary::open(Some(path), RTLD_NOW | RTLD_LOCAL) }.map(Library::from)
    }
    #[cfg(not(unix))]
    {
        // SAFETY: as above.
        unsafe { Library::new(path) }
    }
}

/// Opens the library at `path` and checks every descriptor it lists.
fn open(path: &Path) -> Result<Loaded> {
    let path = path
        .canonicalize()
        .map_err(|e| load_error(path, e.to_string()))?;
    let lib =
        open_library(&path).map_err(|e| load_error(&path, format!("cannot be loaded: {e}")))?;
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
    if list.is_null() {
        return Err(load_error(
            &path,
            format!(
                "{} returned NULL instead of its descriptor list (count {count})",
                api::ENTRY_SYMBOL
            ),
        ));
    }
    if count == 0 || count > MAX_DESCRIPTORS {
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
        let same_kind = || plugins.iter().filter(|p| p.kind == checked.kind);
        if let Some(p) = same_kind().find(|p| p.id == checked.id) {
            return Err(load_error(
                &path,
                format!(
                    "lists {} ID {} twice ({} and {})",
                    checked.kind, checked.id, p.name, checked.name
                ),
            ));
        }
        if let Some(p) = same_kind().find(|p| p.name == checked.name) {
            return Err(load_error(
                &path,
                format!(
                    "lists two {}s named {} (IDs {} and {})",
                    checked.kind, checked.name, p.id, checked.id
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

/// Longest name a descriptor may give, its NUL included (names are 1 to 63 characters).
const NAME_ROOM: usize = 64;

/// The name at `ptr` (not NULL), read through a pipe one byte at a time up to its NUL, so
/// that a name that is not NUL-terminated, or runs into unmapped memory, is refused instead
/// of being read past its end: the kernel answers `EFAULT` for a byte it cannot read, where
/// reading it here would crash the process.
fn descriptor_name(ptr: *const std::ffi::c_char) -> std::result::Result<String, String> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!(
            "has a name that could not be read ({})",
            std::io::Error::last_os_error()
        ));
    }
    let mut name = Vec::with_capacity(NAME_ROOM);
    let outcome = loop {
        if name.len() == NAME_ROOM {
            break Err(format!("has a name with no NUL within {NAME_ROOM} bytes"));
        }
        let at = ptr.cast::<u8>().wrapping_add(name.len());
        // SAFETY: write(2) reads one byte at `at` in the kernel, which fails with EFAULT
        // rather than faulting when the address is not readable; `fds[1]` is our pipe.
        let wrote = unsafe { libc::write(fds[1], at.cast(), 1) };
        if wrote != 1 {
            break Err(format!(
                "has a name that is not readable memory after {} bytes",
                name.len()
            ));
        }
        let mut byte = 0u8;
        // SAFETY: one byte into `byte` from our pipe, which holds the byte just written.
        if unsafe { libc::read(fds[0], (&raw mut byte).cast(), 1) } != 1 {
            break Err("has a name that could not be read".to_string());
        }
        if byte == 0 {
            break Ok(());
        }
        name.push(byte);
    };
    for fd in fds {
        // SAFETY: closing the pipe's two descriptors, opened above and used nowhere else.
        unsafe { libc::close(fd) };
    }
    outcome?;
    String::from_utf8(name).map_err(|_| "has a name that is not UTF-8".to_string())
}

/// Checks one descriptor and copies out what the registry needs.
///
/// A descriptor of at least the first version's fields is read up to its `size`: fields it
/// does not reach read as zero (a plugin built before they existed), fields past this ABI's
/// are ignored.
///
/// # Safety
/// `desc` must be NULL or point to memory readable as the ABI-version and size words of a
/// descriptor and, when they match this ABI, as `size` bytes of a [`PluginDescriptor`] (its
/// `name` is read through [`descriptor_name`], which survives any pointer).
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
    // The first version of the descriptor ended where `flags` begins.
    let need = std::mem::offset_of!(PluginDescriptor, flags);
    if (size as usize) < need {
        return Err(format!(
            "descriptor of {size} bytes, ABI version {abi} has at least {need}"
        ));
    }
    let ours = std::mem::size_of::<PluginDescriptor>();
    let mut copy = std::mem::MaybeUninit::<PluginDescriptor>::zeroed();
    // SAFETY: the caller guarantees `size` readable bytes at `desc`, and at most `ours` are
    // copied into `copy`, which holds `ours` bytes; the two do not overlap.
    unsafe {
        std::ptr::copy_nonoverlapping(
            desc.cast::<u8>(),
            copy.as_mut_ptr().cast::<u8>(),
            (size as usize).min(ours),
        );
    }
    // SAFETY: every field of a descriptor is valid as zero bytes (integers, NULL pointers,
    // `None` function pointers), and the bytes copied over them are the plugin's descriptor.
    let d = unsafe { copy.assume_init() };
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
    let name = descriptor_name(d.name).map_err(|why| format!("{kind} ID {} {why}", d.id))?;
    check_plugin_id(kind, d.id, &name).map_err(|e| e.detail())?;
    if d.flags & !api::KNOWN_FLAGS != 0 {
        return Err(format!(
            "{kind} {name} declares flags {:#x} this Strata does not know",
            d.flags & !api::KNOWN_FLAGS
        ));
    }
    if kind == PluginKind::Filter && d.flags != 0 {
        return Err(format!("filter {name} declares codec flags {:#x}", d.flags));
    }
    let caps = Capabilities {
        needs_nd: d.flags & api::CODEC_NEEDS_ND != 0,
        ..Capabilities::default()
    };
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
        caps,
    })
}

/// Registers a checked plugin of library `lib` (loaded from `path`).
fn register(reg: &Registry, p: &Checked, lib: &Arc<Library>, path: &Path) -> Result<()> {
    let plugin = p.plugin(Some(lib.clone()));
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

    /// The entries of the search path named like plugin libraries that are not regular files
    /// (a directory, a FIFO, a socket, a device, a symlink to nothing), each with what it is,
    /// in search order. Searches skip them without opening them: never an error, something
    /// for a program to warn about once.
    #[must_use]
    pub fn skipped_plugin_entries(&self) -> Vec<(PathBuf, &'static str)> {
        self.plugin_dirs()
            .iter()
            .flat_map(|d| named_like_libraries(d).1)
            .collect()
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
        let mut libs = self.loader.lock();
        let canonical = path
            .canonicalize()
            .map_err(|e| load_error(path, e.to_string()))?;
        let lib = libs.get_or_open(canonical)?;
        let origin = Origin::Library(lib.path.clone());
        let mut todo = Vec::new();
        for p in &lib.plugins {
            if self.holds_from(p, &origin) {
                continue;
            }
            if let Some(clash) = self.clash(p) {
                return Err(load_error(&lib.path, clash));
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
        let mut libs = self.loader.lock();
        let canonical = path
            .canonicalize()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let lib = libs.get_or_open(canonical).map_err(|e| e.to_string())?;
        let mut skipped = Vec::new();
        for p in &lib.plugins {
            if let Some(clash) = self.clash(p) {
                if !self.holds_from(p, &Origin::Library(lib.path.clone())) {
                    skipped.push(clash);
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

    /// What in this registry already holds `p`'s ID or name, said as the clash it is (an ID
    /// taken, or only the name); `None` when both are free.
    fn clash(&self, p: &Checked) -> Option<String> {
        let held: Vec<Registered> = self
            .list()
            .into_iter()
            .filter(|r| r.kind == p.kind)
            .collect();
        if let Some(r) = held.iter().find(|r| r.id == p.id) {
            return Some(format!(
                "{} ID {} ({}) is already taken in this registry by {}",
                p.kind, p.id, p.name, r.name
            ));
        }
        held.iter().find(|r| r.name == p.name).map(|r| {
            format!(
                "{} ID {} ({}): the name {} is already taken in this registry by ID {}",
                p.kind, p.id, p.name, p.name, r.id
            )
        })
    }

    /// Whether this registry holds `p` as registered from `origin`.
    fn holds_from(&self, p: &Checked, origin: &Origin) -> bool {
        self.list()
            .into_iter()
            .any(|r| r.kind == p.kind && r.id == p.id && &r.origin == origin)
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
        let plugin = p.plugin(None);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::ids::{CodecId, FilterId};
    use crate::registry::Origin;
    use std::ffi::c_char;
    use strata_plugin_api::BlockContext;

    /// A codec function that copies nothing and declines (never called by these tests).
    unsafe extern "C" fn codec_fn(
        _src: *const u8,
        _srclen: usize,
        _dst: *mut u8,
        _dstlen: usize,
        _ctx: *const BlockContext,
    ) -> i64 {
        0
    }

    /// A filter function that does nothing (never called by these tests).
    unsafe extern "C" fn filter_fn(
        _src: *const u8,
        _dst: *mut u8,
        _size: usize,
        _ctx: *const BlockContext,
    ) -> i32 {
        0
    }

    fn codec(id: u8, name: &'static CStr) -> PluginDescriptor {
        PluginDescriptor {
            abi_version: api::ABI_VERSION,
            size: std::mem::size_of::<PluginDescriptor>() as u32,
            kind: api::KIND_CODEC,
            id,
            version: 3,
            name: name.as_ptr(),
            encode: Some(codec_fn),
            decode: Some(codec_fn),
            decode_items: None,
            forward: None,
            backward: None,
            flags: 0,
        }
    }

    /// [`check`] of a descriptor built here.
    fn checked(d: &PluginDescriptor) -> std::result::Result<Checked, String> {
        // SAFETY: `d` is a whole descriptor whose name is NULL or a C string.
        unsafe { check(d) }
    }

    fn refused(d: &PluginDescriptor, why: &str) {
        let e = checked(d).err().unwrap();
        assert!(e.contains(why), "{e:?} lacks {why:?}");
    }

    #[test]
    fn descriptors_are_checked_field_by_field() {
        let good = codec(200, c"rot");
        let c = checked(&good).unwrap();
        assert_eq!(
            (c.kind, c.id, c.name.as_str(), c.version),
            (PluginKind::Codec, 200, "rot", 3)
        );
        assert!(c.matches(PluginKind::Codec, Key::Id(200)));
        assert!(c.matches(PluginKind::Codec, Key::Name("rot")));
        assert!(!c.matches(PluginKind::Filter, Key::Id(200)));
        // SAFETY: NULL is allowed.
        let e = unsafe { check(std::ptr::null()) }.err().unwrap();
        assert!(e.contains("NULL"), "{e}");
        refused(
            &PluginDescriptor {
                abi_version: 2,
                ..good
            },
            "ABI version 2",
        );
        refused(
            &PluginDescriptor { size: 8, ..good },
            "descriptor of 8 bytes",
        );
        // A descriptor of the first version (no `flags`) declares nothing; flags are read
        // when its size reaches them, and unknown ones are refused.
        let flagged = PluginDescriptor {
            flags: api::CODEC_NEEDS_ND,
            ..codec(200, c"rot")
        };
        assert!(checked(&flagged).unwrap().caps.needs_nd);
        let v1 = PluginDescriptor {
            size: std::mem::offset_of!(PluginDescriptor, flags) as u32,
            ..codec(200, c"rot")
        };
        let v1 = PluginDescriptor {
            flags: api::CODEC_NEEDS_ND,
            ..v1
        };
        assert_eq!(checked(&v1).unwrap().caps, Capabilities::default());
        refused(
            &PluginDescriptor {
                flags: 1 << 7,
                ..codec(200, c"rot")
            },
            "declares flags 0x80 this Strata does not know",
        );
        refused(&PluginDescriptor { kind: 3, ..good }, "kind 3");
        refused(
            &PluginDescriptor {
                name: std::ptr::null(),
                ..good
            },
            "NULL name",
        );
        let not_utf8 = c"\xff";
        let name: *const c_char = not_utf8.as_ptr();
        refused(&PluginDescriptor { name, ..good }, "not UTF-8");
        refused(
            &PluginDescriptor {
                decode: None,
                ..good
            },
            "lacks an encode or decode",
        );
        refused(&codec(5, c"rot"), "built-in range");
        refused(&codec(200, c"r-o-t"), "is not 1 to 63 characters");
        let filter = PluginDescriptor {
            kind: api::KIND_FILTER,
            encode: None,
            decode: None,
            forward: Some(filter_fn),
            backward: Some(filter_fn),
            ..good
        };
        assert_eq!(checked(&filter).unwrap().kind, PluginKind::Filter);
        refused(
            &PluginDescriptor {
                flags: api::CODEC_NEEDS_ND,
                ..filter
            },
            "declares codec flags",
        );
        refused(
            &PluginDescriptor {
                backward: None,
                ..filter
            },
            "lacks a forward or backward",
        );
    }

    #[test]
    fn a_search_names_every_directory_and_remembers_refusals() {
        let dir = tempfile::tempdir().unwrap();
        let so = |name: &str| {
            dir.path()
                .join(format!("{name}.{}", std::env::consts::DLL_EXTENSION))
        };
        std::fs::write(so("b"), b"not a library").unwrap();
        std::fs::write(dir.path().join("a.txt"), b"").unwrap();
        std::fs::create_dir(so("c")).unwrap();
        let fifo = std::ffi::CString::new(so("d").into_os_string().into_encoded_bytes()).unwrap();
        // SAFETY: mkfifo(3) on a NUL-terminated path in our own temporary directory.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::os::unix::fs::symlink(dir.path().join("nothing"), so("e")).unwrap();
        assert_eq!(candidates(dir.path()), [so("b")]);
        assert!(candidates(&dir.path().join("missing")).is_empty());

        let reg = Registry::empty();
        let missing = dir.path().join("missing");
        reg.set_plugin_dirs(Some(vec![dir.path().to_path_buf(), missing.clone()]));
        assert_eq!(
            reg.plugin_dirs(),
            [dir.path().to_path_buf(), missing.clone()]
        );
        // What is named like a library but is none is never opened, and is said.
        assert_eq!(
            reg.skipped_plugin_entries(),
            [
                (so("c"), "a directory"),
                (so("d"), "a FIFO"),
                (so("e"), "a symlink to nothing, or unreadable")
            ]
        );
        for _ in 0..2 {
            let Err(Error::CodecNotFound { id, searched }) = reg.codec(CodecId(200)) else {
                panic!("codec 200 found")
            };
            assert_eq!(id, 200);
            assert!(
                searched.contains(&format!("{} (missing)", missing.display())),
                "{searched}"
            );
            assert!(
                searched.contains("rejected: ") && searched.contains("b."),
                "{searched}"
            );
        }
        let libs = reg.loader.lock();
        assert_eq!((libs.loaded.len(), libs.rejected.len()), (0, 1));
        drop(libs);
        let e = reg.codec_by_name("rot").err().unwrap();
        assert!(e.to_string().contains("no codec named \"rot\""), "{e}");
        reg.set_plugin_dirs(Some(Vec::new()));
        let Err(Error::FilterNotFound { searched, .. }) = reg.filter(FilterId(201)) else {
            panic!("filter 201 found")
        };
        assert!(
            searched.contains("the plugin search path is empty"),
            "{searched}"
        );
        let e = reg.load_plugin(so("b")).unwrap_err();
        assert!(matches!(e, Error::PluginLoad { .. }), "{e}");
        assert_eq!(reg.load_search_path(), Vec::<String>::new());
    }

    #[test]
    fn an_in_process_descriptor_is_registered_once() {
        let reg = Registry::empty();
        let d = codec(201, c"inproc");
        // SAFETY: a whole descriptor with a C string name and functions that live forever.
        let r = unsafe { reg.register_descriptor(&d) }.unwrap();
        assert_eq!(
            (r.id, r.name.as_str(), r.origin),
            (201, "inproc", Origin::InProcess)
        );
        assert_eq!(reg.codec(CodecId(201)).unwrap().name(), "inproc");
        // SAFETY: as above.
        let e = unsafe { reg.register_descriptor(&d) }.unwrap_err();
        assert!(matches!(e, Error::PluginLoad { .. }), "{e}");
        // SAFETY: as above.
        let e = unsafe {
            reg.register_descriptor(&PluginDescriptor {
                abi_version: 9,
                ..d
            })
        }
        .unwrap_err();
        assert!(e.to_string().contains("ABI version 9"), "{e}");
    }
}
