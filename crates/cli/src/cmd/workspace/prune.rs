//! `bosun workspace prune`: every workspace no agent runs in and that holds no changes, removed.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::cmd::workspace::rm::print_removed;
use crate::out::print_json;

/// Remove every workspace no agent runs in and that holds no changes
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Only say what would be removed
    #[arg(long)]
    dry_run: bool,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: PruneArgs) -> Result<ExitCode> {
    let dry_run = args.dry_run;
    let p = client.workspace_prune(dry_run)?;
    if args.json {
        print_json(&p)?;
        return Ok(ExitCode::SUCCESS);
    }
    for r in &p.removed {
        if dry_run {
            println!("would remove {}", r.workspace);
        } else {
            print_removed(r);
        }
    }
    for (id, why) in &p.skipped {
        println!("kept {id}: {why}");
    }
    if p.removed.is_empty() {
        println!("nothing to prune");
    }
    Ok(ExitCode::SUCCESS)
}
