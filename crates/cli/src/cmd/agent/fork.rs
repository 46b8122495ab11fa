//! `bosun fork ID`: a new agent that starts where this one is, its conversation forked.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;

/// A new agent in a new worktree that starts where this one is (its commits, and what it has
/// not committed in one more commit), its conversation forked, so the work can be tried two
/// ways; the agent forked is left as it is
#[derive(Debug, Args)]
pub struct ForkArgs {
    /// Agent id (any unique prefix) or name
    id: String,
    /// The fork's name [default: NAME-fork]
    #[arg(long)]
    name: Option<String>,
    /// What the fork is told first
    #[arg(long)]
    prompt: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: ForkArgs) -> Result<ExitCode> {
    let inherit =
        std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
    let s = client.fork(args.id, args.name, args.prompt, inherit)?;
    crate::cmd::agent::start::print_started(&s, args.json)
}
