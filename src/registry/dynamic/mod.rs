//! Plugin libraries: the only place Strata opens shared libraries.
//!
//! A plugin library exports `strata_plugin_descriptors` (see the `strata-plugin-api` crate and
//! `include/strata.h`), which lists one [`PluginDescriptor`](strata_plugin_api::PluginDescriptor) per codec or filter it provides.
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
//!    the running executable (`/usr/bin/strata` → `/usr/lib/strata/plugins`);
//! 4. `<libdir>/strata/plugins`, where `<libdir>` holds the shared library `libstrata.so` the
//!    program runs (the dynamic linker says where it loaded it from), so every program linking
//!    an installed library finds the plugin directory `make install` made beside it, wherever
//!    the program itself is.
//!
//! Every regular file (symlinks followed) with the platform's library extension (`.so`,
//! `.dylib`, `.dll`) there, in name order, is opened until one provides the ID; the first one
//! wins. Other entries of that name (a directory, a FIFO, a socket, a device, a symlink to
//! nothing) are never opened and are no error; `Registry::skipped_plugin_entries` lists them
//! for a program to warn about once. A library is opened once per
//! registry and kept loaded (never closed), so its other plugins are registered without
//! reopening it when they are asked for. Loading is serialised: many threads asking for an
//! unregistered ID at once open the library once. A search that finds nothing fails with
//! [`Error::CodecNotFound`](crate::Error::CodecNotFound) /
//! [`Error::FilterNotFound`](crate::Error::FilterNotFound), which name every directory searched
//! and why each rejected library was rejected.
//!
//! The loader (`loader`: search path, opening, checks, registration) hands each checked
//! descriptor to the adapter (`adapter`), which implements [`crate::codecs::Codec`] and
//! [`crate::filters::Filter`] over its C functions.
//!
//! A library is opened with every symbol bound at once (`RTLD_NOW`): one that references a
//! symbol nothing defines is refused when it is opened, with the dynamic linker's message,
//! instead of ending the process at its first call.
//!
//! Opening a library runs its initialisers: put only trusted libraries in these directories.
//! Format: the loading protocol mirrors c-blosc2 `blosc/blosc2.c` (`fill_codec`,
//! `fill_filter`) with a versioned descriptor in place of the `info` symbol;
//! `docs/plugins.md`.

#![allow(unsafe_code)]

mod adapter;
mod loader;

pub use loader::{default_plugin_dirs, PLUGIN_PATH_ENV};
pub(super) use loader::{Key, Loader};
