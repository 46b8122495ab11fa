//! `bosun pool resize PROJECT N`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;

/// Keep N workspaces: more are made now; available ones beyond N are removed now, bound
/// ones when released
#[derive(Debug, Args)]
pub struct ResizeArgs {
    project: String,
    size: u32,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: ResizeArgs) -> Result<ExitCode> {
    crate::cmd::pool::shown::print(&client.pool_resize(args.project, args.size)?, args.json)
}
