//! `bosun cron stop NAME`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;

/// Stop a cron (a job it started runs on)
#[derive(Debug, Args)]
pub struct StopArgs {
    name: String,
}

pub fn run(client: &Client, args: StopArgs) -> Result<ExitCode> {
    client.cron_stop(args.name.clone())?;
    println!("cron {} stopped (a job it started runs on)", args.name);
    Ok(ExitCode::SUCCESS)
}
