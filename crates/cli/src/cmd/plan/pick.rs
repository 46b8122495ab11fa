//! `bosun plan pick ID JOB N`: a person's choice among a plan job's variants.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::cmd::plan::shown::print_plans;

/// Keep variant N of a plan job whose variants a person judges (`keep_best = "person"`)
#[derive(Debug, Args)]
pub struct PickArgs {
    id: String,
    job: String,
    /// The variant to keep: 1 for the job's `-v1` branch, …
    variant: u32,
    /// Print the plan as JSON
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: PickArgs) -> Result<ExitCode> {
    print_plans(&client.plan_pick(args.id, args.job, args.variant)?, args.json)
}
