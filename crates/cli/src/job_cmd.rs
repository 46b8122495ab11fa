//! `bosun run` and `bosun job ls | show | cancel | resume | wait | logs | export`.

use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use bosun_core::{Event, Job, JobId, JobState, CHECKPOINT_FILE, EVENTS_FILE};
use bosun_wire::{EventsQuery, RunCommand};

use crate::args::JobCommand;
use crate::calls::{Dated, Exported, JobNow, JobStarted};
use crate::client::{Client, StreamEnd};
use crate::commands::print_json;
use crate::render;

pub fn run(client: &Client, command: String, args: Vec<String>, json: bool) -> Result<ExitCode> {
    let (sources, cwd) = crate::runbook_cmd::pairs()?;
    started(client.run(Box::new(RunCommand { sources, command, args, cwd }))?, json)
}

/// Prints what a started job's answer says: its id, workspace and branch.
pub fn started(answer: JobStarted, json: bool) -> Result<ExitCode> {
    let JobStarted { job, workspace, branch, warnings } = answer;
    for w in warnings {
        eprintln!("warning: {w}");
    }
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
        JobCommand::Wait { id } => wait(client, id),
    }
}

/// Waits for the job's end on the daemon's event stream, then prints how it ended.
fn wait(client: &Client, id: String) -> Result<ExitCode> {
    // The stream goes on from before the job is looked at: an end in between is not missed.
    let from = client.last_seq()? + 1;
    let JobNow { job, over, .. } = client.job_show(id)?;
    if !over {
        let q = EventsQuery { from, follow: true, agent: None, job: Some(job.spec.id.to_string()) };
        let end = client.events(q, |r| Ok(!ends(&r.event, &job.spec.id)))?;
        if end == StreamEnd::Stopped {
            bail!(
                "the daemon was stopped before job {} was over: start it again (`bosun daemon start`) and wait again",
                job.spec.id
            );
        }
    }
    let JobNow { job, .. } = client.job_show(job.spec.id.to_string())?;
    println!("{} {}", job.spec.id, outcome(&job.state));
    Ok(if job.state == JobState::Done { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Whether `event` says job `id` is over.
fn ends(event: &Event, id: &JobId) -> bool {
    matches!(event, Event::JobFinished { job, state, .. } if job == id && state.is_over())
}

/// How often `job logs -f` reads the logs when nothing woke it.
const LOGS_AT_LEAST: std::time::Duration = std::time::Duration::from_secs(1);

/// What wakes `job logs -f`.
enum Wake {
    /// A file in the job's log directory was written.
    Written,
    /// An event of the job was recorded; true when it says the job is over.
    Recorded(bool),
    /// The stream ended (the daemon was stopped).
    Ended(Result<StreamEnd>),
}

/// Prints each step log once it has grown, in step order, until the job is over (or at once).
/// Following, it wakes when the kernel says a log was written or the job's events say it moved
/// on: nothing polls.
fn logs(client: &Client, id: String, follow: bool) -> Result<ExitCode> {
    let from = client.last_seq()? + 1;
    let JobNow { job, over, .. } = client.job_show(id)?;
    let mut printed = Printed::default();
    printed.more(&job.spec.logs)?;
    if !follow || over {
        return Ok(ExitCode::SUCCESS);
    }
    let (tx, wakes) = std::sync::mpsc::channel();
    let (stream, recorded, id) = (Client::new(client.dirs.clone()), tx.clone(), job.spec.id.clone());
    std::thread::spawn(move || {
        let q = EventsQuery { from, follow: true, agent: None, job: Some(id.to_string()) };
        let end = stream.events(q, |r| Ok(recorded.send(Wake::Recorded(ends(&r.event, &id))).is_ok()));
        let _ = recorded.send(Wake::Ended(end));
    });
    let mut watch = None;
    loop {
        if watch.is_none() {
            // The directory is made with the job's first step.
            let written = tx.clone();
            watch =
                bosun_adapters::Changes::in_dir(&job.spec.logs, |_| true, move || _ = written.send(Wake::Written)).ok();
            // What was written before the watch began is read now: no wake may come for it.
            if watch.is_some() {
                printed.more(&job.spec.logs)?;
            }
        }
        // Pushed by the stream and the kernel; read again at least every second all the same,
        // so a wake that never came (a watch begun late) costs a second, not the output.
        let wake = match wakes.recv_timeout(LOGS_AT_LEAST) {
            Ok(wake) => wake,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Wake::Written,
            Err(e) => return Err(e).context("the job's event stream ended"),
        };
        printed.more(&job.spec.logs)?;
        match wake {
            Wake::Written | Wake::Recorded(false) => {}
            Wake::Recorded(true) => return Ok(ExitCode::SUCCESS),
            Wake::Ended(Ok(StreamEnd::Stopped)) => bail!("the daemon was stopped before job {} was over", job.spec.id),
            Wake::Ended(end) => return end.map(|_| ExitCode::SUCCESS),
        }
    }
}

/// How much of each step log was printed.
#[derive(Default)]
struct Printed(std::collections::BTreeMap<std::path::PathBuf, u64>);

impl Printed {
    /// Prints what the logs in `dir` gained since, each under its step's name the first time.
    fn more(&mut self, dir: &std::path::Path) -> Result<()> {
        use std::io::Write;
        let mut files: Vec<_> =
            std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        files.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.created().or_else(|_| m.modified())).ok());
        let mut out = std::io::stdout().lock();
        for f in files {
            let text = std::fs::read(&f).unwrap_or_default();
            if !self.0.contains_key(&f) {
                writeln!(out, "== {} ==", f.file_stem().map(|s| s.to_string_lossy()).unwrap_or_default())?;
            }
            let done = self.0.entry(f.clone()).or_insert(0);
            if (text.len() as u64) > *done {
                out.write_all(String::from_utf8_lossy(&text[*done as usize..]).as_bytes())?;
                *done = text.len() as u64;
            }
        }
        Ok(out.flush()?)
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
