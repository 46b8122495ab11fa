//! `bosun job wait ID`: until a job is over, its outcome as the exit code.

use std::process::ExitCode;

use anyhow::{bail, Result};
use bosun_core::{Event, JobId, JobState};
use bosun_wire::EventsQuery;
use clap::Args;

use crate::calls::JobNow;
use crate::client::{Client, StreamEnd};

/// Wait until a job is over; exit 0 when done, 1 when failed or cancelled
#[derive(Debug, Args)]
pub struct WaitArgs {
    id: String,
}

/// Waits for the job's end on the daemon's event stream, then prints how it ended.
pub fn run(client: &Client, args: WaitArgs) -> Result<ExitCode> {
    let id = args.id;
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
    println!("{} {}", job.spec.id, crate::cmd::job::show::outcome(&job.state));
    Ok(if job.state == JobState::Done { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Whether `event` says job `id` is over.
pub fn ends(event: &Event, id: &JobId) -> bool {
    matches!(event, Event::JobFinished { job, state, .. } if job == id && state.is_over())
}
