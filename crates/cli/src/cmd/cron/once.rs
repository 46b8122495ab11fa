//! `bosun cron once NAME`: the cron's job, started now.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;

/// Start the cron's job now, once, whether the cron runs or not
#[derive(Debug, Args)]
pub struct OnceArgs {
    name: String,
    /// Print the job as JSON
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: OnceArgs) -> Result<ExitCode> {
    let (sources, cwd) = crate::runbooks::pairs()?;
    crate::cmd::job::run::print_started(client.cron_once(args.name, sources, cwd)?, args.json)
}
