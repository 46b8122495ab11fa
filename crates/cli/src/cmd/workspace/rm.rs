//! `bosun workspace rm ID`: a workspace removed, and its branch when it holds nothing of its own.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::out::print_json;

/// Remove a workspace; refused when it holds changes unless --force. Its branch is deleted
/// only when it holds no commits beyond where it started, else kept and reported.
#[derive(Debug, Args)]
pub struct RmArgs {
    /// Workspace id (any unique prefix, or its nonce)
    id: String,
    /// Remove it even though it holds uncommitted changes (they are lost)
    #[arg(long)]
    force: bool,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: RmArgs) -> Result<ExitCode> {
    let r = client.workspace_remove(args.id, args.force)?;
    if args.json {
        print_json(&r)?;
        return Ok(ExitCode::SUCCESS);
    }
    print_removed(&r);
    Ok(ExitCode::SUCCESS)
}

/// What became of a workspace removed, and of its branch.
pub fn print_removed(r: &bosun_wire::Removed) {
    println!("removed {} ({})", r.workspace, r.path.display());
    if let Some(b) = &r.branch_deleted {
        println!("deleted branch {b}");
    }
    if let Some(k) = &r.branch_kept {
        println!(
            "kept branch {} : it holds {} commit(s) not on its base (delete it with `git branch -D {}`)",
            k.branch, k.commits, k.branch
        );
    }
}
