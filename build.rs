//! Gives the shared library the soname `libstrata.so.<ABI version>`, so programs linked against
//! one ABI never load an incompatible one (`make install` creates the matching links).

fn main() {
    println!("cargo:rerun-if-changed=src/ffi/mod.rs");
    let ffi = std::fs::read_to_string("src/ffi/mod.rs").expect("src/ffi/mod.rs");
    let abi = ffi
        .lines()
        .find_map(|l| l.strip_prefix("pub const STRATA_ABI_VERSION: u32 = "))
        .and_then(|v| v.strip_suffix(';'))
        .expect("STRATA_ABI_VERSION in src/ffi/mod.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libstrata.so.{abi}");
    }
}
