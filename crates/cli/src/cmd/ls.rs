//! `bosun ls`: agents and workspaces, with their state and age.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::cmd::flags::JsonFlag;
use crate::out::print_json;
use crate::render;

/// List agents and workspaces with their state and age
#[derive(Debug, Args)]
pub struct LsArgs {
    #[command(flatten)]
    flag: JsonFlag,
}

pub fn run(client: &Client, args: LsArgs) -> Result<ExitCode> {
    let list = client.list()?;
    if args.flag.json {
        print_json(&list)?;
        return Ok(ExitCode::SUCCESS);
    }
    if list.agents.is_empty() && list.workspaces.is_empty() {
        println!("no agents yet: start one with `bosun agent start -- COMMAND`");
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", render::agents_table(list.now, &list.agents, &list.workspaces));
    println!();
    println!("{}", render::workspaces_table(list.now, &list.workspaces));
    Ok(ExitCode::SUCCESS)
}
