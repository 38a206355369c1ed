//! Gives the shared library the soname `libstrata.so.<ABI version>`, so programs linked against
//! one ABI never load an incompatible one (`make install` creates the matching links).
//!
//! `rustc-link-arg`, not `rustc-cdylib-link-arg`: Cargo passes the latter on to the cdylibs of
//! every crate that depends on this one (rust-lang/cargo#9562), which would give plugins such
//! as `plugins/hdf5` this soname too.

fn main() {
    println!("cargo:rerun-if-changed=src/ffi/mod.rs");
    let ffi = std::fs::read_to_string("src/ffi/mod.rs").expect("src/ffi/mod.rs");
    let abi = ffi
        .lines()
        .find_map(|l| l.strip_prefix("pub const STRATA_ABI_VERSION: u32 = "))
        .and_then(|v| v.strip_suffix(';'))
        .expect("STRATA_ABI_VERSION in src/ffi/mod.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg=-Wl,-soname,libstrata.so.{abi}");
    }
}
