//! How plans are printed: each with its jobs' states, sources and branches, or as JSON.

use std::process::ExitCode;

use anyhow::Result;
use bosun_core::{Plan, PlanState};

use crate::out::print_json;
use crate::render;

/// Prints `plans`: as JSON, or each as a table of its jobs.
pub fn print_plans(plans: &[Plan], json: bool) -> Result<ExitCode> {
    if json {
        print_json(&plans)?;
    } else if plans.is_empty() {
        println!("no plans yet: start one with `bosun plan run NAME` (see `bosun runbook ls`)");
    } else {
        for p in plans {
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
