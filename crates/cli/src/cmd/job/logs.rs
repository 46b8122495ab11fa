//! `bosun job logs ID [-f]`: the output of a job's shell steps, step by step and try by try.

use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use bosun_wire::EventsQuery;
use clap::Args;

use crate::calls::JobNow;
use crate::client::{Client, StreamEnd};
use crate::cmd::job::wait::ends;

/// Print the output of a job's shell steps, step by step and try by try
#[derive(Debug, Args)]
pub struct LogsArgs {
    id: String,
    /// Keep printing until the job is over
    #[arg(short, long)]
    follow: bool,
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
pub fn run(client: &Client, args: LogsArgs) -> Result<ExitCode> {
    let LogsArgs { id, follow } = args;
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
