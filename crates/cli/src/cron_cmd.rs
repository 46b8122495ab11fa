//! `bosun cron start | stop | once | ls`.

use std::process::ExitCode;

use anyhow::Result;
use bosun_core::{Cron, Schedule};

use crate::args::CronCommand;
use crate::calls::Dated;
use crate::client::Client;
use crate::commands::print_json;
use crate::render;

pub fn cron(client: &Client, cmd: CronCommand) -> Result<ExitCode> {
    match cmd {
        CronCommand::Start { name } => {
            let (sources, cwd) = crate::runbook_cmd::pairs()?;
            let Dated { now, all: crons } = client.cron_start(name.clone(), sources, cwd)?;
            let next = crons.iter().find(|c| c.name == name).and_then(|c| c.next);
            match next {
                Some(at) => println!("cron {name} started: next turn in {}", render::age(at.as_millis(), now)),
                None => println!("cron {name} started"),
            }
        }
        CronCommand::Stop { name } => {
            client.cron_stop(name.clone())?;
            println!("cron {name} stopped (a job it started runs on)");
        }
        CronCommand::Once { name, json } => {
            let (sources, cwd) = crate::runbook_cmd::pairs()?;
            return crate::job_cmd::started(client.cron_once(name, sources, cwd)?, json);
        }
        CronCommand::Ls(flag) => {
            let Dated { now, all: crons } = client.cron_list()?;
            if flag.json {
                print_json(&crons)?;
            } else if crons.is_empty() {
                println!("no crons started: start one with `bosun cron start NAME` (see `bosun runbook ls`)");
            } else {
                let rows: Vec<Vec<String>> = crons.iter().map(|c| row(now, c)).collect();
                let header = ["CRON", "STATE", "SCHEDULE", "JOB", "NEXT", "TURNS", "LAST JOB", "ERROR"];
                println!("{}", render::table(&header, &rows));
            }
        }
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
