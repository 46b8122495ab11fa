//! `bosun worker start | stop | ls`.

pub mod ls;
pub mod start;
pub mod stop;

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

use crate::client::Client;

/// Workers: each feeds a queue's items into a job
#[derive(Debug, Subcommand)]
pub enum WorkerCommand {
    Start(start::StartArgs),
    Stop(stop::StopArgs),
    Ls(ls::LsArgs),
}

pub fn run(client: &Client, cmd: WorkerCommand) -> Result<ExitCode> {
    match cmd {
        WorkerCommand::Start(args) => start::run(client, args),
        WorkerCommand::Stop(args) => stop::run(client, args),
        WorkerCommand::Ls(args) => ls::run(client, args),
    }
}
