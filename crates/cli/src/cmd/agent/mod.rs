//! The commands that start an agent or act on one: `agent start`, and `show`, `peek`,
//! `attach`, `send`, `kill`, `answer`, `fork`, `wait` (top-level words, routed from `cmd`).

pub mod answer;
pub mod attach;
pub mod fork;
pub mod kill;
pub mod peek;
pub mod resume;
pub mod send;
pub mod show;
pub mod start;
pub mod wait;

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;

use crate::client::Client;

/// Start agents
#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    Start(Box<start::StartArgs>),
}

pub fn run(client: &Client, cmd: AgentCommand) -> Result<ExitCode> {
    match cmd {
        AgentCommand::Start(args) => start::run(client, *args),
    }
}
