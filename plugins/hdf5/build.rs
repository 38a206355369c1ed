//! The plugin library exports only `H5PLget_plugin_type` and `H5PLget_plugin_info`: the
//! archives it is linked from (Strata, its codecs, std) keep their symbols to themselves, so
//! neither Strata's C ABI nor a bundled LZ4 or Zstd leaks into the host process. It gets its
//! own soname.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,--exclude-libs,ALL");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libstrata_hdf5_filter.so");
    }
}
