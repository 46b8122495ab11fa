//! `bosun pool init | ls | resize | acquire | release | rm`: the repositories' pools of warm
//! workspaces, as the daemon keeps them (`shown.rs` prints them).

pub mod acquire;
pub mod init;
pub mod ls;
pub mod release;
pub mod resize;
pub mod rm;
pub mod shown;

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

use crate::client::Client;

/// Workspace pools: warm worktrees per repository, handed to one task at a time and reset
/// after it (`bosun agent start --workspace pool`)
#[derive(Debug, Subcommand)]
pub enum PoolCommand {
    Init(init::InitArgs),
    Ls(ls::LsArgs),
    Resize(resize::ResizeArgs),
    Acquire(acquire::AcquireArgs),
    Release(release::ReleaseArgs),
    Rm(rm::RmArgs),
}

pub fn run(client: &Client, cmd: PoolCommand) -> Result<ExitCode> {
    match cmd {
        PoolCommand::Init(args) => init::run(client, args),
        PoolCommand::Ls(args) => ls::run(client, args),
        PoolCommand::Resize(args) => resize::run(client, args),
        PoolCommand::Acquire(args) => acquire::run(client, args),
        PoolCommand::Release(args) => release::run(client, args),
        PoolCommand::Rm(args) => rm::run(client, args),
    }
}
