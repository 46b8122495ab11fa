//! `bosun runbook ls | check`: the runbooks of the nearest `.bosun/runbooks/`, read here; they
//! need no daemon.

pub mod check;
pub mod ls;

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

/// Read the runbooks of .bosun/runbooks/ (the nearest up from here)
#[derive(Debug, Subcommand)]
pub enum RunbookCommand {
    Ls(ls::LsArgs),
    Check(check::CheckArgs),
}

pub fn run(cmd: RunbookCommand) -> Result<ExitCode> {
    match cmd {
        RunbookCommand::Ls(args) => ls::run(args),
        RunbookCommand::Check(args) => check::run(args),
    }
}
