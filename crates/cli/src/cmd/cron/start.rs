//! `bosun cron start NAME`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::calls::Dated;
use crate::client::Client;
use crate::render;

/// Start a cron the runbooks define (it keeps the runbook text it starts with); it skips a
/// turn while the job it started last still runs
#[derive(Debug, Args)]
pub struct StartArgs {
    name: String,
}

pub fn run(client: &Client, args: StartArgs) -> Result<ExitCode> {
    let name = args.name;
    let (sources, cwd) = crate::runbooks::pairs()?;
    let Dated { now, all: crons } = client.cron_start(name.clone(), sources, cwd)?;
    let next = crons.iter().find(|c| c.name == name).and_then(|c| c.next);
    match next {
        Some(at) => println!("cron {name} started: next turn in {}", render::age(at.as_millis(), now)),
        None => println!("cron {name} started"),
    }
    Ok(ExitCode::SUCCESS)
}
