//! `bosun job cancel ID`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::cmd::job::show::changed;

/// Cancel a job (its on_cancel step, if any, still runs)
#[derive(Debug, Args)]
pub struct CancelArgs {
    id: String,
}

pub fn run(client: &Client, args: CancelArgs) -> Result<ExitCode> {
    changed(&*client.job_cancel(args.id)?);
    Ok(ExitCode::SUCCESS)
}
