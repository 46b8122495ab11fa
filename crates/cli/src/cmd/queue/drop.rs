//! `bosun queue drop ITEM`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;

/// Remove an item that no job works on
#[derive(Debug, Args)]
pub struct DropArgs {
    item: String,
}

pub fn run(client: &Client, args: DropArgs) -> Result<ExitCode> {
    client.queue_drop(args.item.clone())?;
    println!("{} dropped", args.item);
    Ok(ExitCode::SUCCESS)
}
