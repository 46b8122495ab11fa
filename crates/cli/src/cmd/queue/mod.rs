//! `bosun queue push | ls | retry | drop`.

pub mod drop;
pub mod ls;
pub mod push;
pub mod retry;

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

use crate::client::Client;

/// Queues of work items for workers
#[derive(Debug, Subcommand)]
pub enum QueueCommand {
    Push(push::PushArgs),
    Ls(ls::LsArgs),
    Retry(retry::RetryArgs),
    Drop(drop::DropArgs),
}

pub fn run(client: &Client, cmd: QueueCommand) -> Result<ExitCode> {
    match cmd {
        QueueCommand::Push(args) => push::run(client, args),
        QueueCommand::Ls(args) => ls::run(client, args),
        QueueCommand::Retry(args) => retry::run(client, args),
        QueueCommand::Drop(args) => drop::run(client, args),
    }
}
