//! `bosun events [--follow] [--agent A | --job J] [--from SEQ] [--json]`: the daemon's event
//! stream, printed one line per event.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use bosun_core::replay::Recorded;
use bosun_wire::EventsQuery;
use clap::Args;

use crate::client::{Client, StreamEnd};

/// Print the events bosun records, as they are recorded with --follow: every one, or one
/// agent's or job's (`--json`: one object per line with seq, at and event, for scripts)
#[derive(Debug, Args)]
pub struct EventsArgs {
    /// Keep printing events as they are recorded
    #[arg(short, long)]
    follow: bool,
    /// Only this agent's (id, id prefix or name)
    #[arg(long, conflicts_with = "job")]
    agent: Option<String>,
    /// Only this job's (its steps' jobs, workspace and agents)
    #[arg(long)]
    job: Option<String>,
    /// The first event to print, by its seq [default: 1, or with --follow the next one]
    #[arg(long, value_name = "SEQ")]
    from: Option<u64>,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: EventsArgs) -> Result<ExitCode> {
    let EventsArgs { follow, agent, job, from, json } = args;
    let from = from.unwrap_or(if follow { 0 } else { 1 });
    let q = EventsQuery { from, follow, agent, job };
    let mut out = std::io::stdout().lock();
    let end = client.events(q, |r| {
        let line = if json { serde_json::to_string(&r)? } else { line(&r) };
        writeln!(out, "{line}")?;
        out.flush()?;
        Ok(true)
    })?;
    if end == StreamEnd::Stopped {
        eprintln!("bosun: the daemon was stopped (`bosun daemon stop`): no more events follow");
    }
    Ok(ExitCode::SUCCESS)
}

/// `seq  time  type  fields`, the fields as compact JSON cut at 160 characters.
fn line(r: &Recorded) -> String {
    let mut v = serde_json::to_value(&r.event).unwrap_or_default();
    let kind = v.get("type").and_then(|t| t.as_str()).unwrap_or("event").to_owned();
    if let Some(fields) = v.as_object_mut() {
        fields.remove("type");
    }
    let fields = v.to_string();
    let cut: String = fields.chars().take(160).collect();
    let more = if cut.len() < fields.len() { "…" } else { "" };
    format!("{:>7}  {}  {kind}  {cut}{more}", r.seq, time(r.at))
}

/// `HH:MM:SS.mmm` of a time in milliseconds since the epoch, in UTC.
fn time(ms: u64) -> String {
    let day = ms % 86_400_000;
    format!("{:02}:{:02}:{:02}.{:03}", day / 3_600_000, day / 60_000 % 60, day / 1000 % 60, day % 1000)
}
