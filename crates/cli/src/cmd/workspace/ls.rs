//! `bosun workspace ls`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::cmd::flags::JsonFlag;
use crate::out::print_json;
use crate::render;

/// List workspaces
#[derive(Debug, Args)]
pub struct LsArgs {
    #[command(flatten)]
    flag: JsonFlag,
}

pub fn run(client: &Client, args: LsArgs) -> Result<ExitCode> {
    let list = client.list()?;
    if args.flag.json {
        print_json(&list.workspaces)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", render::workspaces_table(list.now, &list.workspaces));
    Ok(ExitCode::SUCCESS)
}
