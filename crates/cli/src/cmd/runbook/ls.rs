//! `bosun runbook ls`: what the runbooks define, one row each.

use std::process::ExitCode;

use anyhow::Result;
use bosun_runbook::model::Run;
use clap::Args;

use crate::cmd::flags::JsonFlag;
use crate::out::print_json;

/// List the commands, jobs, agents, queues, workers and crons the runbooks define
#[derive(Debug, Args)]
pub struct LsArgs {
    #[command(flatten)]
    flag: JsonFlag,
}

pub fn run(args: LsArgs) -> Result<ExitCode> {
    let flag = args.flag;
    let lowered = match crate::runbooks::checked()? {
        Ok((_, lowered)) => lowered,
        Err(code) => return Ok(code),
    };
    let runbook = lowered.runbook();
    let runs = |r: &Run| match r {
        Run::Shell(s) => format!("shell: {}", s.lines().next().unwrap_or_default()),
        Run::Agent(a) => format!("agent {a}"),
        Run::Job(j) => format!("job {j}"),
        Run::Pr { draft: true } => "pull request (draft)".to_owned(),
        Run::Pr { draft: false } => "pull request".to_owned(),
    };
    let mut rows: Vec<(String, String, String)> = Vec::new();
    for (n, c) in &runbook.commands {
        rows.push(("command".into(), n.clone(), runs(&c.run)));
    }
    for (n, j) in &runbook.jobs {
        let steps: Vec<&str> = j.steps.iter().map(|s| s.name.as_str()).collect();
        rows.push(("job".into(), n.clone(), format!("steps: {}", steps.join(" → "))));
    }
    for (n, a) in &runbook.agents {
        rows.push(("agent".into(), n.clone(), a.command.join(" ")));
    }
    for n in runbook.queues.keys() {
        rows.push(("queue".into(), n.clone(), String::new()));
    }
    for (n, w) in &runbook.workers {
        rows.push(("worker".into(), n.clone(), format!("{} → job {} ×{}", w.queue, w.job, w.concurrency)));
    }
    for (n, c) in &runbook.crons {
        rows.push(("cron".into(), n.clone(), runs(&c.run)));
    }
    for (n, plan) in &runbook.plans {
        rows.push(("plan".into(), n.clone(), plan_levels(plan)));
    }
    if flag.json {
        let v: Vec<_> = rows.iter().map(|(k, n, d)| serde_json::json!({ "kind": k, "name": n, "runs": d })).collect();
        print_json(&v)?;
    } else {
        let rows: Vec<Vec<String>> = rows.into_iter().map(|(k, n, d)| vec![k, n, d]).collect();
        println!("{}", crate::render::table(&["KIND", "NAME", "WHAT"], &rows));
    }
    Ok(ExitCode::SUCCESS)
}

/// A plan's jobs by how deep they are in its graph: those that use none, then those that use
/// only them, and so on (`a → b, c → d` for a diamond).
fn plan_levels(plan: &bosun_runbook::model::Plan) -> String {
    let mut level: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    let mut levels: Vec<Vec<String>> = Vec::new();
    for j in &plan.jobs {
        // `using` names only earlier jobs: theirs are known.
        let at = j.using.iter().filter_map(|u| level.get(u.as_str())).map(|l| l + 1).max().unwrap_or(0);
        level.insert(&j.name, at);
        if levels.len() <= at {
            levels.resize(at + 1, Vec::new());
        }
        levels[at].push(format!("{} (job {})", j.name, j.job));
    }
    levels.iter().map(|l| l.join(", ")).collect::<Vec<_>>().join(" → ")
}
