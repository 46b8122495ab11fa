//! `bosun kill ID`: an agent stopped; its workspace stays.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::out::print_json;

/// Stop an agent (its workspace stays)
#[derive(Debug, Args)]
pub struct KillArgs {
    /// Agent id (any unique prefix) or name
    id: String,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: KillArgs) -> Result<ExitCode> {
    let (agent, state) = client.kill(args.id)?;
    if args.json {
        print_json(&serde_json::json!({ "agent": agent, "state": state }))?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("{agent} {}", state.label());
    Ok(ExitCode::SUCCESS)
}
