//! `bosun queue retry ITEM`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;

/// Put a dead item back in its queue
#[derive(Debug, Args)]
pub struct RetryArgs {
    item: String,
}

pub fn run(client: &Client, args: RetryArgs) -> Result<ExitCode> {
    client.queue_retry(args.item.clone())?;
    println!("{} is pending again", args.item);
    Ok(ExitCode::SUCCESS)
}
