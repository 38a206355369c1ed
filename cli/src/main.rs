//! The `strata` binary: everything it does is in the `strata_cli` library.

fn main() -> std::process::ExitCode {
    strata_cli::main()
}
