//! `bosun replay JOB | --events FILE`: detection and classification run again over recorded
//! events; every decision that differs is printed, original beside replayed.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use bosun_core::replay::{replay, Decided, Recorded, Replayed};
use clap::Args;

use crate::client::Client;
use crate::out::print_json;

/// Re-run detection and classification over a job's recorded events with this build's rules,
/// and print each decision that comes out differently (original beside replayed). Exits 1
/// when any differs, 0 when all agree.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Job id (any unique prefix); or give --events
    #[arg(required_unless_present = "events", conflicts_with = "events")]
    job: Option<String>,
    /// Replay an `events.jsonl` written by `bosun job export` instead (no daemon needed)
    #[arg(long, value_name = "FILE")]
    events: Option<PathBuf>,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: ReplayArgs) -> Result<ExitCode> {
    let ReplayArgs { job, events, json } = args;
    let (what, replayed) = match (job, events) {
        (_, Some(file)) => (file.display().to_string(), replay(&read(&file)?)),
        (Some(job), None) => {
            let (job, replayed) = client.replay(job)?;
            (format!("job {job}"), replayed)
        }
        (None, None) => return Err(crate::error::usage("name a job, or give --events FILE")),
    };
    if json {
        print_json(&replayed)?;
    } else {
        print(&what, &replayed);
    }
    Ok(if replayed.differences.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The events of an `events.jsonl`, each line checked.
fn read(file: &PathBuf) -> Result<Vec<Recorded>> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| {
                format!("{}:{}: not an event as `bosun job export` writes them", file.display(), i + 1)
            })
        })
        .collect()
}

fn print(what: &str, r: &Replayed) {
    for d in &r.differences {
        let kind = match d.decided {
            Decided::Detection => "detection",
            Decided::Classification => "classification",
            Decided::Permission => "permission",
        };
        println!("event {} agent {} {kind} from {}", d.seq, d.agent, d.from);
        println!("  original  {}", d.original);
        println!("  replayed  {}", d.replayed);
    }
    let differ = r.differences.len();
    match differ {
        0 => println!("{what}: {} decisions replayed, all alike", r.decisions),
        n => println!("{what}: {} decisions replayed, {n} differ", r.decisions),
    }
}
