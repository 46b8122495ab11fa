//! `bosun attach ID`: this terminal becomes the agent's session's, until a detach.

use std::os::unix::process::CommandExt;
use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};
use clap::Args;

use crate::client::Client;

/// Attach this terminal to an agent's session (detach with Ctrl-b d in tmux, Ctrl+] in
/// bosun's own session host)
#[derive(Debug, Args)]
pub struct AttachArgs {
    /// Agent id (any unique prefix) or name
    id: String,
}

/// Runs the attach command the daemon gives in this process's stead: it returns only when that
/// command could not be run.
pub fn run(client: &Client, args: AttachArgs) -> Result<ExitCode> {
    let argv = client.attach(args.id)?;
    let (program, rest) = argv.split_first().context("the daemon gave no attach command")?;
    let err = bosun_adapters::private::as_user(&mut std::process::Command::new(program))
        .args(rest)
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .exec();
    Err(anyhow!("cannot run {program}: {err}"))
}
