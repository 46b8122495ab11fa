//! `bosun plan run NAME`: a plan the runbooks define, started.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::cmd::plan::shown::print_plans;

/// Start a plan the runbooks define: each job starts once the jobs it uses are done (at
/// most the plan's `concurrency` at once), on `feature/<job>` (a numeric suffix when taken),
/// from the plan's `base` (else the current commit) when it uses none, else from the branch
/// of the first it uses with the others merged in; a failure stops what depends on it
#[derive(Debug, Args)]
pub struct RunArgs {
    name: String,
    /// Remove the variants a judge did not keep: their workspaces and branches (one holding
    /// work not committed is kept)
    #[arg(long)]
    drop_losers: bool,
    /// Print the plan as JSON
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: RunArgs) -> Result<ExitCode> {
    let (sources, cwd) = crate::runbooks::pairs()?;
    let (plans, warnings) = client.plan_run(args.name, sources, cwd, args.drop_losers)?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    print_plans(&plans, args.json)
}
