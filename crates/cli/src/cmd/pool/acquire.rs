//! `bosun pool acquire`: a pool workspace taken by a script, as a lock is taken.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use bosun_wire::PoolAsk;
use clap::Args;

use crate::client::Client;
use crate::input::{read_task, repo_or_here};
use crate::out::print_json;

/// Take a workspace for a script: a new branch in the first available one, waiting in line
/// for one when all are taken (as a lock is taken); prints its path once it is ready (the
/// path alone when the output is not a terminal, `ws=$(bosun pool acquire)`; on a terminal
/// its branch and how to release it too)
#[derive(Debug, Args)]
pub struct AcquireArgs {
    /// The repository [default: the current directory]
    #[arg(long, value_name = "DIR")]
    repo: Option<PathBuf>,
    /// The branch made in it [default: ws-<nonce>]
    #[arg(long)]
    branch: Option<String>,
    /// Written to the workspace's TASK.md (excluded from git)
    #[arg(long, value_name = "FILE")]
    task_file: Option<PathBuf>,
    /// Fail at once when every workspace is taken, instead of waiting for one
    #[arg(long)]
    no_wait: bool,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: AcquireArgs) -> Result<ExitCode> {
    let AcquireArgs { repo, branch, task_file, no_wait, json } = args;
    let task = task_file.as_deref().map(read_task).transpose()?;
    let ask = PoolAsk { repo: repo_or_here(repo)?, size: None, setup: None, branch, task, no_wait };
    let a = client.pool_acquire(Box::new(ask))?;
    if json {
        print_json(&a)?;
    } else if !std::io::stdout().is_terminal() {
        // For `ws=$(bosun pool acquire)`: the path alone.
        println!("{}", a.path.display());
    } else {
        println!("workspace  {}", a.path.display());
        if let Some(b) = &a.branch {
            println!("branch     {b}");
        }
        println!("release it with `bosun pool release {}`", a.workspace);
    }
    Ok(ExitCode::SUCCESS)
}
