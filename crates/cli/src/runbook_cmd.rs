//! `bosun runbook ls | check`: reading the runbooks of the nearest `.bosun/runbooks/`. It needs
//! no daemon.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use bosun_runbook::load::{find_dir, read_dir};
use bosun_runbook::lower::{lower, LowerError};
use bosun_runbook::model::Run;

use crate::args::RunbookCommand;
use crate::commands::print_json;

/// The runbook files of the nearest `.bosun/runbooks/` (as path and text), its directory, and
/// the current directory.
pub fn sources() -> Result<(Vec<bosun_runbook::load::SourceFile>, PathBuf, PathBuf)> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let Some(dir) = find_dir(&here) else {
        return Err(crate::error::usage(format!(
            "no .bosun/runbooks/ here or in any parent of {}: create one with *.hcl or *.toml runbooks",
            here.display()
        )));
    };
    let sources = read_dir(&dir)?;
    Ok((sources, dir, here))
}

/// The runbook files as the daemon takes them, and the current directory.
pub fn pairs() -> Result<(Vec<(PathBuf, String)>, PathBuf)> {
    let (sources, _, here) = sources()?;
    Ok((sources.into_iter().map(|s| (s.path, s.text)).collect(), here))
}

pub fn run(cmd: RunbookCommand) -> Result<ExitCode> {
    let (sources, dir, here) = sources()?;
    let shown = |p: &PathBuf| p.strip_prefix(&here).map(PathBuf::from).unwrap_or_else(|_| p.clone());
    let sources: Vec<_> =
        sources.into_iter().map(|s| bosun_runbook::load::SourceFile { path: shown(&s.path), text: s.text }).collect();
    let failed = |errors: Vec<String>| {
        for e in &errors {
            eprintln!("{e}");
        }
        eprintln!("bosun: {} error(s) in {}", errors.len(), dir.display());
        Ok(ExitCode::from(crate::error::Kind::Usage.code()))
    };
    let lowered = match lower(&sources) {
        Ok(lowered) => lowered,
        Err(LowerError::Invalid(errors)) => return failed(errors.iter().map(ToString::to_string).collect()),
        Err(other) => return failed(vec![other.to_string()]),
    };
    // A runbook that reads well but holds a job that could not start (too deep, too many) is wrong too.
    let problems = lowered.problems();
    if !problems.is_empty() {
        return failed(problems.iter().map(ToString::to_string).collect());
    }
    let runbook = lowered.runbook();
    match cmd {
        RunbookCommand::Check => {
            println!(
                "ok: {} file(s), {} command(s), {} job(s), {} agent(s), {} queue(s), {} worker(s), {} cron(s), {} plan(s)",
                sources.len(),
                runbook.commands.len(),
                runbook.jobs.len(),
                runbook.agents.len(),
                runbook.queues.len(),
                runbook.workers.len(),
                runbook.crons.len(),
                runbook.plans.len()
            );
        }
        RunbookCommand::Ls(flag) => {
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
                let v: Vec<_> =
                    rows.iter().map(|(k, n, d)| serde_json::json!({ "kind": k, "name": n, "runs": d })).collect();
                print_json(&v)?;
            } else {
                let rows: Vec<Vec<String>> = rows.into_iter().map(|(k, n, d)| vec![k, n, d]).collect();
                println!("{}", crate::render::table(&["KIND", "NAME", "WHAT"], &rows));
            }
        }
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
