//! `bosun plan resume ID`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::cmd::plan::shown::print_plans;

/// Run a failed plan's failed jobs again (fix what made them fail first)
#[derive(Debug, Args)]
pub struct ResumeArgs {
    id: String,
    /// Print the plan as JSON
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: ResumeArgs) -> Result<ExitCode> {
    print_plans(&client.plan_resume(args.id)?, args.json)
}
