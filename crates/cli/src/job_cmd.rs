//! `bosun run` and `bosun job ls | show | cancel | resume | wait | logs | export`.

use std::process::ExitCode;

use anyhow::Result;
use bosun_core::{Job, JobState, CHECKPOINT_FILE, EVENTS_FILE};
use bosun_wire::RunCommand;

use crate::args::JobCommand;
use crate::calls::{Dated, Exported, JobNow, JobStarted};
use crate::client::Client;
use crate::commands::print_json;
use crate::render;

pub fn run(client: &Client, command: String, args: Vec<String>, json: bool) -> Result<ExitCode> {
    let (sources, cwd) = crate::runbook_cmd::pairs()?;
    started(client.run(Box::new(RunCommand { sources, command, args, cwd }))?, json)
}

/// Prints what a started job's answer says: its id, workspace and branch.
pub fn started(answer: JobStarted, json: bool) -> Result<ExitCode> {
    let JobStarted { job, workspace, branch } = answer;
    if json {
        print_json(&serde_json::json!({ "job": job, "workspace": workspace, "branch": branch }))?;
    } else {
        println!("job        {job}");
        if let Some(w) = workspace {
            println!("workspace  {}", w.display());
        }
        if let Some(b) = branch {
            println!("branch     {b}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn job(client: &Client, cmd: JobCommand) -> Result<ExitCode> {
    match cmd {
        JobCommand::Ls(flag) => {
            let Dated { now, all: jobs } = client.job_list()?;
            if flag.json {
                print_json(&jobs)?;
            } else if jobs.is_empty() {
                println!("no jobs yet: start one with `bosun run COMMAND`");
            } else {
                let rows: Vec<Vec<String>> = jobs
                    .iter()
                    .map(|j| {
                        vec![
                            j.spec.id.to_string(),
                            j.spec.name.clone(),
                            j.state.label().to_owned(),
                            j.step.clone().unwrap_or_else(|| "-".into()),
                            render::age(now, j.created_at.as_millis()),
                        ]
                    })
                    .collect();
                println!("{}", render::table(&["JOB", "NAME", "STATE", "STEP", "AGE"], &rows));
            }
            Ok(ExitCode::SUCCESS)
        }
        JobCommand::Show { id, json } => {
            let JobNow { now, job, .. } = client.job_show(id)?;
            if json {
                print_json(&job)?;
            } else {
                show(now, &job);
            }
            Ok(ExitCode::SUCCESS)
        }
        JobCommand::Cancel { id } => {
            changed(&*client.job_cancel(id)?);
            Ok(ExitCode::SUCCESS)
        }
        JobCommand::Resume { id } => {
            let job = client.job_resume(id)?;
            changed(&job);
            if let Some(agent) = &job.resumed_with {
                println!("resumed mid-step: agent {agent} restarted with its conversation");
            }
            Ok(ExitCode::SUCCESS)
        }
        JobCommand::Export { id, dir, force, json } => {
            let dir = std::env::current_dir()?.join(dir);
            let Exported { dir, events, seq } = client.job_export(id, dir, force)?;
            if json {
                print_json(&serde_json::json!({ "dir": dir, "events": events, "seq": seq }))?;
            } else {
                println!("wrote {CHECKPOINT_FILE} and {EVENTS_FILE} to {}", dir.display());
                println!("{events} events, up to event {seq}");
            }
            Ok(ExitCode::SUCCESS)
        }
        JobCommand::Logs { id, follow } => logs(client, id, follow),
        JobCommand::Wait { id } => loop {
            let JobNow { job, over, .. } = client.job_wait(id.clone())?;
            if over {
                println!("{} {}", job.spec.id, outcome(&job.state));
                return Ok(if job.state == JobState::Done { ExitCode::SUCCESS } else { ExitCode::FAILURE });
            }
        },
    }
}

/// Prints each step log once it has grown, in step order, until the job is over (or at once).
fn logs(client: &Client, id: String, follow: bool) -> Result<ExitCode> {
    let mut printed: std::collections::BTreeMap<std::path::PathBuf, u64> = Default::default();
    loop {
        let JobNow { job, over, .. } = client.job_show(id.clone())?;
        let mut files: Vec<_> =
            std::fs::read_dir(&job.spec.logs).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        files.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.created().or_else(|_| m.modified())).ok());
        for f in files {
            let text = std::fs::read(&f).unwrap_or_default();
            if !printed.contains_key(&f) {
                println!("== {} ==", f.file_stem().map(|s| s.to_string_lossy()).unwrap_or_default());
            }
            let done = printed.entry(f.clone()).or_insert(0);
            if (text.len() as u64) > *done {
                print!("{}", String::from_utf8_lossy(&text[*done as usize..]));
                *done = text.len() as u64;
            }
        }
        if !follow || over {
            return Ok(ExitCode::SUCCESS);
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

fn outcome(state: &JobState) -> String {
    match state {
        JobState::Failed { reason } => format!("failed: {reason}"),
        other => other.label().to_owned(),
    }
}

fn show(now: u64, j: &Job) {
    println!("job        {} ({})", j.spec.id, j.spec.name);
    println!("state      {} for {}", outcome(&j.state), render::age(now, j.state_since.as_millis()));
    println!("started    {} ago", render::age(now, j.created_at.as_millis()));
    if let Some(step) = &j.step {
        println!("step       {step} (try {})", j.attempt);
    }
    if let Some(w) = &j.workspace {
        println!("workspace  {w}");
    }
    for (k, v) in &j.spec.vars {
        println!("var        {k} = {v:?}");
    }
    for s in &j.spec.steps {
        println!("visits     {} ×{}", s.name, j.visits.get(&s.name).copied().unwrap_or(0));
    }
    match (&j.resumed_with, j.resumes) {
        (Some(agent), _) => println!("resumed    mid-step: agent {agent} restarted with its conversation"),
        (None, 0) => {}
        (None, n) => println!("resumed    {n} time(s); the last started its step again"),
    }
    println!("runbook    {}", j.spec.runbook_hash);
    println!("logs       {}", j.spec.logs.display());
}

/// Prints the state a job is in after a change.
fn changed(job: &Job) {
    let step = job.step.as_deref().map(|s| format!(" (step {s})")).unwrap_or_default();
    println!("{} {}{step}", job.spec.id, job.state.label());
}
