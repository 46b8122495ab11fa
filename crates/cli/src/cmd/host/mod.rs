//! `bosun host serve | attach`: bosun's own session host, and a terminal attached to one.
//! They run before the state directory is resolved: a host in a pod has none.

pub mod attach;
pub mod serve;

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

/// bosun's own session host: what the daemon starts for an agent run with `--session host`,
/// and `attach` to one
// Parsed once per process: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum HostCommand {
    Serve(serve::ServeArgs),
    Attach(attach::AttachArgs),
}

pub fn run(cmd: HostCommand) -> Result<ExitCode> {
    match cmd {
        HostCommand::Serve(args) => serve::run(args),
        HostCommand::Attach(args) => attach::run(args),
    }
}
