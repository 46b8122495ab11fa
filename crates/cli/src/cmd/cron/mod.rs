//! `bosun cron start | stop | once | ls`.

pub mod ls;
pub mod once;
pub mod start;
pub mod stop;

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

use crate::client::Client;

/// Crons: each starts a job on a schedule (cron expressions are read in UTC)
#[derive(Debug, Subcommand)]
pub enum CronCommand {
    Start(start::StartArgs),
    Stop(stop::StopArgs),
    Once(once::OnceArgs),
    Ls(ls::LsArgs),
}

pub fn run(client: &Client, cmd: CronCommand) -> Result<ExitCode> {
    match cmd {
        CronCommand::Start(args) => start::run(client, args),
        CronCommand::Stop(args) => stop::run(client, args),
        CronCommand::Once(args) => once::run(client, args),
        CronCommand::Ls(args) => ls::run(client, args),
    }
}
