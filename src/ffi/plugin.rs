//! C functions for plugins: register a codec or filter described in C, load a plugin library.
//!
//! The descriptor types (`strata_plugin`, `strata_block_ctx`, the `strata_*_fn` callbacks) come
//! from the `strata-plugin-api` crate; see its docs and `plugins/examples/` for how to write a
//! plugin. Format: `docs/plugins.md`.

#![allow(unsafe_code)]

use super::{call, call_status, count, str_in};
use crate::registry::Registry;
use std::ffi::c_char;
use strata_plugin_api::PluginDescriptor;

/// Registers the codec or filter `plugin` describes in the process registry, after checking
/// its ABI version, kind, ID (no Blosc built-in ID 0–31; in 32–159 only Blosc2's name for it;
/// 160–255 free), name and functions. The name is copied; the functions must stay callable for
/// the life of the process. Returns 0, or a negative error code (see `strata_last_error`):
/// `STRATA_ERROR_PLUGIN_LOAD` when a check fails or the ID or name is taken.
///
/// # Safety
/// `plugin` must be NULL or point to a `strata_plugin` (at least its `abi_version` and `size`
/// fields when they differ from this header's) with a NUL-terminated name, whose functions obey
/// the plugin ABI.
#[no_mangle]
pub unsafe extern "C" fn strata_register_plugin(plugin: *const PluginDescriptor) -> i32 {
    call_status(|| {
        if plugin.is_null() {
            return Err(super::Fail::Null("plugin"));
        }
        // SAFETY: the caller's guarantee, forwarded.
        unsafe { Registry::global().register_descriptor(plugin) }?;
        Ok(())
    })
}

/// Loads the plugin library at `path` (a NUL-terminated file name) and registers every codec
/// and filter it lists in the process registry. Returns how many were registered (0 when the
/// library was already loaded), or a negative error code: `STRATA_ERROR_PLUGIN_LOAD` when the
/// library does not load, is not a Strata plugin, a descriptor fails a check, or an ID is taken.
/// Nothing is registered on error.
///
/// Libraries are also found without this call: the first use of an unregistered ID searches
/// `STRATA_PLUGIN_PATH`, `$HOME/.local/lib/strata/plugins` and `<prefix>/lib/strata/plugins`.
///
/// # Safety
/// `path` must be NULL or a NUL-terminated string. Loading runs the library's initialisers.
#[no_mangle]
pub unsafe extern "C" fn strata_load_plugin(path: *const c_char) -> i32 {
    call(|| {
        // SAFETY: NULL or NUL-terminated by the caller's guarantee.
        let path = unsafe { str_in(path, "path") }?;
        Ok(count(Registry::global().load_plugin(path)?.len()))
    }) as i32
}
