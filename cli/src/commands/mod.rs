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
