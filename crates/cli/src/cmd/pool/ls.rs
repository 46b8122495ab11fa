//! `bosun pool ls`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::cmd::flags::JsonFlag;

/// List the pools' workspaces: state (available, bound to whom, resetting, dirty), disk
/// usage and age, and the tasks waiting
#[derive(Debug, Args)]
pub struct LsArgs {
    #[command(flatten)]
    flag: JsonFlag,
}

pub fn run(client: &Client, args: LsArgs) -> Result<ExitCode> {
    crate::cmd::pool::shown::print(&client.pool_list()?, args.flag.json)
}
