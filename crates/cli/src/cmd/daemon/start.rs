//! `bosun daemon start`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;

/// Start the daemon in the background (other commands do this when needed)
#[derive(Debug, Args)]
pub struct StartArgs {}

pub fn run(client: &Client, _: StartArgs) -> Result<ExitCode> {
    if client.connect().is_some() {
        println!("the daemon already runs");
    } else {
        client.start_daemon()?;
        println!("daemon started (log: {})", client.dirs.log().display());
    }
    Ok(ExitCode::SUCCESS)
}
