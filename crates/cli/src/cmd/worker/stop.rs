//! `bosun worker stop NAME`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;

/// Stop a worker (jobs it started run on)
#[derive(Debug, Args)]
pub struct StopArgs {
    name: String,
}

pub fn run(client: &Client, args: StopArgs) -> Result<ExitCode> {
    client.worker_stop(args.name.clone())?;
    println!("worker {} stopped", args.name);
    Ok(ExitCode::SUCCESS)
}
