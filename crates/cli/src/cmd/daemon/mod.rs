//! `bosun daemon run | start | stop | status | logs`: the daemon's life, systemctl-style.

pub mod logs;
pub mod run;
pub mod start;
pub mod status;
pub mod stop;

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

use crate::client::Client;

/// Manage the background daemon
#[derive(Debug, Subcommand)]
pub enum DaemonCommand {
    Run(run::RunArgs),
    Start(start::StartArgs),
    Stop(stop::StopArgs),
    Status(status::StatusArgs),
    Logs(logs::LogsArgs),
}

pub fn run(client: &Client, cmd: DaemonCommand) -> Result<ExitCode> {
    match cmd {
        DaemonCommand::Run(args) => run::run(client, args),
        DaemonCommand::Start(args) => start::run(client, args),
        DaemonCommand::Stop(args) => stop::run(client, args),
        DaemonCommand::Status(args) => status::run(client, args),
        DaemonCommand::Logs(args) => logs::run(client, args),
    }
}
