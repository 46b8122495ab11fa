//! `bosun pool release WORKSPACE`: a pool workspace given back, then reset in the background.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::out::print_json;

/// Give a workspace back: refused while it holds uncommitted or untracked work (unless
/// --force); its branch is kept when it holds commits no other branch, tag or remote has,
/// deleted otherwise; then it is reset in the background (fetch, reset to the base, clean)
#[derive(Debug, Args)]
pub struct ReleaseArgs {
    /// The pool workspace (`<project>--<n>`) or the task's workspace id
    workspace: String,
    /// Release and reset it even with uncommitted work, which is lost
    #[arg(long)]
    force: bool,
    /// Also clean ignored files (build output such as target/ and node_modules/, kept by
    /// default so the next task starts warm)
    #[arg(long)]
    pristine: bool,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: ReleaseArgs) -> Result<ExitCode> {
    let r = client.pool_release(args.workspace, args.force, args.pristine)?;
    if args.json {
        print_json(&r)?;
        return Ok(ExitCode::SUCCESS);
    }
    match &r.removed {
        Some(removed) => {
            println!("released {} ({})", removed.workspace, r.slot);
            if let Some(b) = &removed.branch_deleted {
                println!("deleted branch {b}: it held no commit of its own");
            }
            if let Some(k) = &removed.branch_kept {
                println!(
                    "kept branch {} : it holds {} commit(s) on no other branch, tag or remote",
                    k.branch, k.commits
                );
            }
        }
        None => println!("released {}", r.slot),
    }
    println!("{} is reset in the background (see `bosun pool ls`)", r.slot);
    Ok(ExitCode::SUCCESS)
}
