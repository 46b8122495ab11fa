//! `bosun plan show ID`: what a plan did, job by job.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::out::print_json;

/// What a plan did: per job, what it uses, where it started and what it merged, its
/// branch, its agents' turns and their classes, how it ended; and the plan's final branch
#[derive(Debug, Args)]
pub struct ShowArgs {
    id: String,
    /// Print the summary as JSON
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: ShowArgs) -> Result<ExitCode> {
    let summary = client.plan_show(args.id)?;
    if args.json {
        print_json(&summary)?;
    } else {
        print!("{}", summary.text());
    }
    Ok(ExitCode::SUCCESS)
}
