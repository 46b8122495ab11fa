//! `bosun run COMMAND ARGS…`: a runbook command started as a job.

use std::process::ExitCode;

use anyhow::Result;
use bosun_wire::RunCommand;
use clap::Args;

use crate::calls::JobStarted;
use crate::client::Client;
use crate::out::print_json;

/// Run a runbook command: `bosun run build auth "Add login" --base main`
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The command's name
    command: String,
    /// Its arguments, as its `args` spec says
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: RunArgs) -> Result<ExitCode> {
    let RunArgs { command, args, json } = args;
    let (sources, cwd) = crate::runbooks::pairs()?;
    print_started(client.run(Box::new(RunCommand { sources, command, args, cwd }))?, json)
}

/// Prints what a started job's answer says: its id, workspace and branch.
pub fn print_started(answer: JobStarted, json: bool) -> Result<ExitCode> {
    let JobStarted { job, workspace, branch, warnings } = answer;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    if json {
        print_json(&serde_json::json!({ "job": job, "workspace": workspace, "branch": branch }))?;
    } else {
        println!("job        {job}");
        if let Some(w) = workspace {
            println!("workspace  {}", w.display());
        }
        if let Some(b) = branch {
            println!("branch     {b}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
