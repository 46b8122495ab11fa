//! `bosun daemon run`: the daemon, in this process.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use crate::client::Client;

/// Run the daemon in the foreground (logs to stderr)
#[derive(Debug, Args)]
pub struct RunArgs {
    #[arg(long, hide = true)]
    detach: bool,
}

pub fn run(client: &Client, args: RunArgs) -> Result<ExitCode> {
    let filter = tracing_subscriber::EnvFilter::try_from_env("BOSUN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colours only on a terminal: in the background its stderr is daemon.log. A log it
    // cannot write (its disk full) is passed over: the fallback, a line on stderr, would
    // panic for the same reason and take the daemon down.
    let ansi = crate::out::colors_wanted(std::io::stderr().is_terminal());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .log_internal_errors(false)
        .init();
    let exe = std::env::current_exe().context("cannot find the bosun executable")?;
    bosun_daemon::run(bosun_daemon::Options { dirs: client.dirs.clone(), exe, detach: args.detach })?;
    Ok(ExitCode::SUCCESS)
}
