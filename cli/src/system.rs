//! `strata system`: what Strata sees of this machine and how it will use it.

use anyhow::Result;
use strata::filters::simd::Level;
use strata::scheduler::SystemInfo;

/// Prints the runtime's cores, workers, pinning and cache sizes with the recommended chunk
/// and block sizes, and the SIMD level the filters use.
///
/// # Errors
/// None today; the signature matches the other subcommands.
pub fn run() -> Result<()> {
    println!("{}", SystemInfo::detect());
    println!(
        "SIMD:        {} (shuffle, bitshuffle)",
        Level::detect().name()
    );
    Ok(())
}
