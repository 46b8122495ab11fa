//! `bosun worker start NAME`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;

/// Start a worker the runbooks define (it keeps the runbook text it starts with)
#[derive(Debug, Args)]
pub struct StartArgs {
    name: String,
}

pub fn run(client: &Client, args: StartArgs) -> Result<ExitCode> {
    let (sources, cwd) = crate::runbooks::pairs()?;
    client.worker_start(args.name.clone(), sources, cwd)?;
    println!("worker {} started", args.name);
    Ok(ExitCode::SUCCESS)
}
