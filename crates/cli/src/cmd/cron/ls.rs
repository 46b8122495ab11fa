//! `bosun cron ls`: the crons started, their schedules, next turns and last jobs.

use std::process::ExitCode;

use anyhow::Result;
use bosun_core::{Cron, Schedule};
use clap::Args;

use crate::calls::Dated;
use crate::client::Client;
use crate::cmd::flags::JsonFlag;
use crate::out::print_json;
use crate::render;

/// List started crons: schedule, next turn, last job
#[derive(Debug, Args)]
pub struct LsArgs {
    #[command(flatten)]
    flag: JsonFlag,
}

pub fn run(client: &Client, args: LsArgs) -> Result<ExitCode> {
    let Dated { now, all: crons } = client.cron_list()?;
    if args.flag.json {
        print_json(&crons)?;
    } else if crons.is_empty() {
        println!("no crons started: start one with `bosun cron start NAME` (see `bosun runbook ls`)");
    } else {
        let rows: Vec<Vec<String>> = crons.iter().map(|c| row(now, c)).collect();
        let header = ["CRON", "STATE", "SCHEDULE", "JOB", "NEXT", "TURNS", "LAST JOB", "ERROR"];
        println!("{}", render::table(&header, &rows));
    }
    Ok(ExitCode::SUCCESS)
}

fn row(now: u64, c: &Cron) -> Vec<String> {
    let schedule = match &c.schedule {
        Schedule::Every { ms } => format!("every {}", render::age(*ms, 0)),
        Schedule::Expr(e) => format!("{e} (UTC)"),
    };
    vec![
        c.name.clone(),
        if c.running { "running" } else { "stopped" }.into(),
        schedule,
        c.job.clone(),
        c.next.map_or("-".into(), |at| format!("in {}", render::age(at.as_millis(), now))),
        c.fired.to_string(),
        c.last_job.as_ref().map_or("-".into(), ToString::to_string),
        c.error.clone().unwrap_or_else(|| "-".into()),
    ]
}
