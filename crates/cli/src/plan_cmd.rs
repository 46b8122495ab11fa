//! `bosun plan run | ls | resume | pick | show`.

use std::process::ExitCode;

use anyhow::Result;
use bosun_core::{Plan, PlanState};

use crate::args::PlanCommand;
use crate::client::Client;
use crate::commands::print_json;
use crate::render;

pub fn plan(client: &Client, cmd: PlanCommand) -> Result<ExitCode> {
    let (plans, json) = match cmd {
        PlanCommand::Run { name, drop_losers, json } => {
            let (sources, cwd) = crate::runbook_cmd::pairs()?;
            let (plans, warnings) = client.plan_run(name, sources, cwd, drop_losers)?;
            for w in warnings {
                eprintln!("warning: {w}");
            }
            (plans, json)
        }
        PlanCommand::Ls(flag) => (client.plan_list()?, flag.json),
        PlanCommand::Resume { id, json } => (client.plan_resume(id)?, json),
        PlanCommand::Pick { id, job, variant, json } => (client.plan_pick(id, job, variant)?, json),
        PlanCommand::Show { id, json } => {
            let summary = client.plan_show(id)?;
            if json {
                print_json(&summary)?;
            } else {
                print!("{}", summary.text());
            }
            return Ok(ExitCode::SUCCESS);
        }
    };
    if json {
        print_json(&plans)?;
    } else if plans.is_empty() {
        println!("no plans yet: start one with `bosun plan run NAME` (see `bosun runbook ls`)");
    } else {
        for p in &plans {
            print(p);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print(p: &Plan) {
    let state = match &p.state {
        PlanState::Running => "running".to_owned(),
        PlanState::Done => "done".to_owned(),
        PlanState::Failed { job, reason } => format!("failed at {job}: {reason}"),
    };
    println!("plan {} ({}) {state}", p.id, p.name);
    let rows: Vec<Vec<String>> = p
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            vec![
                j.name.clone(),
                p.job_state(i).label().to_owned(),
                j.source.clone().unwrap_or_else(|| "-".into()),
                j.target.clone().unwrap_or_else(|| j.wanted_branch().0),
                j.job_id.as_ref().map_or("-".into(), ToString::to_string),
            ]
        })
        .collect();
    println!("{}", render::table(&["JOB", "STATE", "FROM", "BRANCH", "JOB ID"], &rows));
}
