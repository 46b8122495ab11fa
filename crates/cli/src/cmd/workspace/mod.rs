//! `bosun workspace ls | rm | prune`.

pub mod ls;
pub mod prune;
pub mod rm;

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

use crate::client::Client;

/// Manage workspaces
#[derive(Debug, Subcommand)]
pub enum WorkspaceCommand {
    Ls(ls::LsArgs),
    Rm(rm::RmArgs),
    Prune(prune::PruneArgs),
}

pub fn run(client: &Client, cmd: WorkspaceCommand) -> Result<ExitCode> {
    match cmd {
        WorkspaceCommand::Ls(args) => ls::run(client, args),
        WorkspaceCommand::Rm(args) => rm::run(client, args),
        WorkspaceCommand::Prune(args) => prune::run(client, args),
    }
}
