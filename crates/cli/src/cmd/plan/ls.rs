//! `bosun plan ls`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::cmd::flags::JsonFlag;
use crate::cmd::plan::shown::print_plans;

/// List plans and where each job stands
#[derive(Debug, Args)]
pub struct LsArgs {
    #[command(flatten)]
    flag: JsonFlag,
}

pub fn run(client: &Client, args: LsArgs) -> Result<ExitCode> {
    print_plans(&client.plan_list()?, args.flag.json)
}
