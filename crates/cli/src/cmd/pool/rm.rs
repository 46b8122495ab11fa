//! `bosun pool rm PROJECT [WORKSPACE]`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;

/// Remove a pool workspace, or the whole pool; never one bound to a task, nor (without
/// --force) one holding work
#[derive(Debug, Args)]
pub struct RmArgs {
    project: String,
    /// One workspace (`<project>--<n>`) [default: all of them, and the pool]
    workspace: Option<String>,
    #[arg(long)]
    force: bool,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: RmArgs) -> Result<ExitCode> {
    let RmArgs { project, workspace, force, json } = args;
    crate::cmd::pool::shown::print(&client.pool_remove(project, workspace, force)?, json)
}
