//! `stratad`: see the crate documentation and `daemon/README.md`.

use clap::Parser;
use std::io::{IsTerminal as _, Read as _};
use strata_daemon::config::{Command, Config, Flags};

fn main() {
    let flags = Flags::parse();
    if let Some(Command::HashToken) = flags.command {
        let mut token = String::new();
        if std::io::stdin().read_to_string(&mut token).is_err() || token.trim().is_empty() {
            eprintln!("stratad hash-token: give the token on stdin");
            std::process::exit(2);
        }
        println!(
            "sha256 = \"{}\"",
            strata_daemon::auth::hash_hex(token.trim())
        );
        return;
    }
    let config = match Config::from_flags(&flags) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("stratad: {e}");
            std::process::exit(2);
        }
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("STRATAD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    if config.json_logs {
        logs.json().init();
    } else {
        logs.init();
    }
    if let Err(e) = strata_daemon::run(config) {
        eprintln!("stratad: {e}");
        std::process::exit(1);
    }
}
