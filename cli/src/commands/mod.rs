//! One module per subcommand: its arguments, the report it builds, and how it runs.

pub(crate) mod bench;
pub(crate) mod chunk;
pub(crate) mod compress;
pub(crate) mod decompress;
pub(crate) mod export;
pub(crate) mod import;
pub mod info;
pub(crate) mod plugins;
pub(crate) mod slice;
pub(crate) mod system;

/// The arguments `argv` (the subcommand's name first) parsed as a subcommand's `A`.
#[cfg(test)]
pub(crate) fn parse_args<A: clap::Args + clap::FromArgMatches>(argv: &[&std::ffi::OsStr]) -> A {
    let cmd = A::augment_args(clap::Command::new("test"));
    A::from_arg_matches(&cmd.get_matches_from(argv)).expect("arguments of the subcommand")
}

/// Writes the b2nd array of `params` holding `data` to the file `path`.
#[cfg(test)]
pub(crate) fn write_array(path: &std::path::Path, params: &strata::ArrayParams, data: &[u8]) {
    let location = strata::schunk::Location::File(path.to_owned());
    strata::NdArray::from_buffer(params, &location, data)
        .and_then(strata::NdArray::close)
        .expect("the array is written");
}
