//! `bosun daemon stop`: the daemon stopped, its agents left running.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use bosun_wire::{Request, Response};
use clap::Args;

use crate::client::Client;

/// Stop the daemon; agents keep running and are adopted again at the next start
#[derive(Debug, Args)]
pub struct StopArgs {}

pub fn run(client: &Client, _: StopArgs) -> Result<ExitCode> {
    let live = match client.request_if_running(Request::Status)? {
        Some(Response::Status(s)) => s.live_agents,
        _ => 0,
    };
    if client.request_if_running(Request::Shutdown)?.is_none() {
        println!("the daemon does not run");
        return Ok(ExitCode::SUCCESS);
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    // Gone once it no longer holds its lock: a new daemon can start at once.
    while client.daemon_alive() {
        if Instant::now() > deadline {
            bail!("the daemon did not stop within 15s; see {}", client.dirs.log().display());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    match live {
        0 => println!("daemon stopped"),
        n => println!("daemon stopped; {n} agent(s) keep running in tmux and are adopted at the next start"),
    }
    Ok(ExitCode::SUCCESS)
}
