//! `bosun pool init`: the repository's pool and its workspaces, made now.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use bosun_wire::PoolAsk;
use clap::Args;

use crate::client::Client;
use crate::input::repo_or_here;

/// Make the repository's pool and its workspaces now (they are also made when a task needs
/// one): each a worktree `<project>--<n>` at a detached HEAD on the base — the remote's
/// default branch, else the repository's
#[derive(Debug, Args)]
pub struct InitArgs {
    /// How many workspaces it keeps [default: 2, or what the pool has]
    #[arg(long)]
    size: Option<u32>,
    /// The repository [default: the current directory]
    #[arg(long, value_name = "DIR")]
    repo: Option<PathBuf>,
    /// A command run once in each new workspace (`npm ci`), not per task
    #[arg(long, value_name = "COMMAND")]
    setup: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: InitArgs) -> Result<ExitCode> {
    let InitArgs { size, repo, setup, json } = args;
    let ask = PoolAsk { repo: repo_or_here(repo)?, size, setup, branch: None, task: None, no_wait: false };
    crate::cmd::pool::shown::print(&client.pool_init(Box::new(ask))?, json)
}
