//! `bosun job export ID --dir DIR`: a job's run memory written out.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use bosun_core::{CHECKPOINT_FILE, EVENTS_FILE};
use clap::Args;

use crate::calls::Exported;
use crate::client::Client;
use crate::out::print_json;

/// Write a job's run memory into a directory: state.json and events.jsonl
///
/// state.json is a checkpoint of where the job stands: its step and try, visits, vars, its
/// workspace (path and branch), the agents its steps ran (with each one's conversation id,
/// e.g. Claude's session id), their messages and escalations, and where `bosun job resume`
/// would take it up again. events.jsonl holds every recorded event that concerns the job
/// (the job, the jobs it ran as steps, its workspace, its agents and their messages, timers
/// and escalations), in order, one JSON object a line: {"seq":N,"at":MS,"event":{…}}.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  bosun job export j3kq9 --dir ./memory/j3kq9")]
pub struct ExportArgs {
    /// The job (its id, or the start of it)
    id: String,
    /// Where to write (created if missing)
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
    /// Overwrite an earlier export in DIR
    #[arg(long)]
    force: bool,
    /// Print {"dir":…,"events":N,"seq":N}
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: ExportArgs) -> Result<ExitCode> {
    let ExportArgs { id, dir, force, json } = args;
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
