//! `bosun wait ID [--for POINT] [--timeout D] [--json]`: waits, following the daemon's event
//! stream, until an agent reaches a point of its life (`bosun_core::WaitFor`), as `kubectl
//! wait` and `docker wait` do; and the same after `agent start --wait`.

use std::process::ExitCode;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::Result;
use bosun_core::{Reached, WaitFor};
use bosun_wire::{AgentDetail, EventsQuery};
use clap::Args;

use crate::client::Client;
use crate::out::print_json;

/// Wait until an agent reaches a state; exit 0 then, 1 when the time is up or the agent can
/// never reach it (it died first), saying where it stands
#[derive(Debug, Args)]
pub struct WaitArgs {
    /// Agent id (any unique prefix) or name
    id: String,
    /// What to wait for: workspace (made), up (its program runs), running, idle, prompt
    /// (a dialog holds it), dead
    #[arg(long = "for", value_name = "POINT", default_value = "up", value_parser = point())]
    until: WaitFor,
    /// The longest to wait, such as 30s, 5m or 250ms [default: no limit]
    #[arg(long, value_name = "DURATION", value_parser = bosun_core::parse_duration)]
    timeout: Option<u64>,
    /// Print the agent as `bosun show --json` does once the wait is over
    #[arg(long)]
    json: bool,
}

/// `--for POINT`, one of the points' names.
pub fn point() -> impl clap::builder::TypedValueParser<Value = WaitFor> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(WaitFor::ALL.map(WaitFor::name)).try_map(|s| s.parse::<WaitFor>())
}

pub fn run(client: &Client, args: WaitArgs) -> Result<ExitCode> {
    let deadline = args.timeout.map(|ms| Instant::now() + Duration::from_millis(ms));
    let (reached, d) = wait(client, &args.id, args.until, deadline)?;
    if args.json {
        print_json(&d)?;
    }
    let (id, state) = (&d.agent.id, d.agent.state.label());
    Ok(match reached {
        Reached::Yes => {
            if !args.json {
                println!("{id} {state}");
            }
            ExitCode::SUCCESS
        }
        Reached::NotYet => {
            eprintln!("bosun: {id} is still {state}: not {} within the time given", args.until.name());
            ExitCode::FAILURE
        }
        Reached::Never(why) => {
            eprintln!("bosun: {id} will never be {}: {why}", args.until.name());
            ExitCode::FAILURE
        }
    })
}

/// Follows agent `id`'s events until it reaches `until`, never can, or `deadline` passes; where
/// it stands then. Every event of its scope (it, its workspace, its messages) is a reason to
/// look at it again.
pub fn wait(
    client: &Client,
    id: &str,
    until: WaitFor,
    deadline: Option<Instant>,
) -> Result<(Reached, Box<AgentDetail>)> {
    let from = client.last_seq()? + 1;
    let mut d = client.show(id.to_owned())?;
    let (tx, rx) = mpsc::channel();
    let follower = Client { dirs: client.dirs.clone() };
    let q = EventsQuery { from, follow: true, agent: Some(d.agent.id.to_string()), job: None };
    // Ends with the command: a stream that brings nothing more blocks only this thread.
    std::thread::spawn(move || {
        let _ = follower.events(q, |_| Ok(tx.send(()).is_ok()));
    });
    loop {
        let workspace = d.workspace.as_ref().map(|w| &w.state);
        let reached = until.reached(&d.agent.state, workspace);
        if reached != Reached::NotYet {
            return Ok((reached, d));
        }
        let event = match deadline {
            Some(at) => rx.recv_timeout(at.saturating_duration_since(Instant::now())),
            None => rx.recv().map_err(RecvTimeoutError::from),
        };
        match event {
            Ok(()) => {}
            // The time is up: where it stands now.
            Err(RecvTimeoutError::Timeout) => return Ok((Reached::NotYet, client.show(id.to_owned())?)),
            Err(RecvTimeoutError::Disconnected) => anyhow::bail!(
                "the daemon stopped while {} was still {}: start it again and wait again",
                d.agent.id,
                d.agent.state.label()
            ),
        }
        d = client.show(id.to_owned())?;
    }
}
