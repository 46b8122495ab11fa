//! `bosun daemon status`: whether the daemon runs (exit 3 when not), its pid, version and counts.

use std::process::ExitCode;

use anyhow::{bail, Result};
use bosun_wire::{Request, Response};
use clap::Args;

use crate::client::Client;
use crate::cmd::flags::JsonFlag;
use crate::out::print_json;

/// Say whether the daemon runs, and its pid, version and counts (exit 3 when not running)
#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    flag: JsonFlag,
}

pub fn run(client: &Client, args: StatusArgs) -> Result<ExitCode> {
    let flag = args.flag;
    match client.request_if_running(Request::Status)? {
        Some(Response::Status(s)) => {
            if flag.json {
                print_json(&serde_json::json!({ "running": true, "daemon": s }))?;
            } else {
                println!("running   pid {} (version {})", s.pid, s.version);
                println!("state     {}", s.state_dir.display());
                println!("agents    {} ({} alive)", s.agents, s.live_agents);
                println!("workspaces {}", s.workspaces);
                println!("events    {}", s.events);
                if s.version != bosun_wire::VERSION {
                    println!(
                        "note      this bosun is {}: run `bosun daemon stop` so the next command starts a matching daemon",
                        bosun_wire::VERSION
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(_) => bail!("the daemon gave an unexpected answer"),
        None => {
            if flag.json {
                print_json(&serde_json::json!({ "running": false, "state_dir": client.dirs.root() }))?;
            } else {
                println!("not running (state directory {})", client.dirs.root().display());
            }
            Ok(ExitCode::from(crate::error::Kind::DaemonUnavailable.code()))
        }
    }
}
