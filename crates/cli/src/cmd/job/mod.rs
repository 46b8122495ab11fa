//! `bosun job ls | show | cancel | resume | export | wait | logs`, and `bosun run` (`run.rs`),
//! which starts a job.

pub mod cancel;
pub mod export;
pub mod logs;
pub mod ls;
pub mod resume;
pub mod run;
pub mod show;
pub mod wait;

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

use crate::client::Client;

/// Jobs started by `bosun run`
#[derive(Debug, Subcommand)]
pub enum JobCommand {
    Ls(ls::LsArgs),
    Show(show::ShowArgs),
    Cancel(cancel::CancelArgs),
    Resume(resume::ResumeArgs),
    Export(export::ExportArgs),
    Wait(wait::WaitArgs),
    Logs(logs::LogsArgs),
}

pub fn run(client: &Client, cmd: JobCommand) -> Result<ExitCode> {
    match cmd {
        JobCommand::Ls(args) => ls::run(client, args),
        JobCommand::Show(args) => show::run(client, args),
        JobCommand::Cancel(args) => cancel::run(client, args),
        JobCommand::Resume(args) => resume::run(client, args),
        JobCommand::Export(args) => export::run(client, args),
        JobCommand::Wait(args) => wait::run(client, args),
        JobCommand::Logs(args) => logs::run(client, args),
    }
}
