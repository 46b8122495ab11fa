//! `bosun hook …` (hidden): the reports of the hooks bosun installs (tmux, an agent's program,
//! an agent's output), passed to the daemon or kept in its spool. Every agent program's report
//! travels as one generic report (its driver, the event, its payload, bounded here) that only
//! its driver reads; `claude` and `codex` are the names Claude's and Codex's hooks were
//! installed with, and stay for the agents that run with them.

use std::process::ExitCode;

use anyhow::{Context, Result};
use bosun_core::driver::DriverKind;
use bosun_wire::{HookEvent, Request, Response};
use clap::Subcommand;

use crate::client::Client;

/// Entry point for hooks bosun installs (tmux); not for people
#[derive(Debug, Subcommand)]
pub enum HookCommand {
    #[command(subcommand)]
    Tmux(TmuxHook),
    /// An agent program's report to its driver: the event, its payload as the last argument or
    /// else on stdin
    Report {
        driver: bosun_core::driver::DriverKind,
        agent: String,
        event: String,
        payload: Option<String>,
        /// The restart count the reporting process was started with
        #[arg(long)]
        generation: Option<u32>,
    },
    /// A Claude Code hook (payload on stdin)
    Claude { agent: String, generation: u32, event: String },
    /// Codex's notify program (payload as the last argument)
    Codex { agent: String, payload: String },
    /// An agent's terminal output (on stdin, from tmux's pipe-pane), appended to FILE, which is
    /// rotated to FILE.1 at --max bytes
    Output {
        file: std::path::PathBuf,
        #[arg(long)]
        max: u64,
    },
}

#[derive(Debug, Subcommand)]
pub enum TmuxHook {
    PaneDied { session: String, status: String, signal: String },
    SessionClosed { session: String },
}

/// Reports from the hooks bosun installs (tmux, Claude Code, Codex). Silent, and never starts
/// a daemon: while none runs, the report is kept in the spool the next daemon reads at start.
pub fn run(client: &Client, hook: HookCommand) -> Result<ExitCode> {
    let num = |s: &str| s.trim().parse::<i32>().ok();
    let event = match hook {
        HookCommand::Output { file, max } => {
            bosun_adapters::output_log::append_rotating(std::io::stdin().lock(), &file, max)
                .with_context(|| format!("writing {}", file.display()))?;
            return Ok(ExitCode::SUCCESS);
        }
        HookCommand::Tmux(TmuxHook::PaneDied { session, status, signal }) => {
            HookEvent::PaneDied { session, status: num(&status), signal: num(&signal) }
        }
        HookCommand::Tmux(TmuxHook::SessionClosed { session }) => HookEvent::SessionClosed { session },
        HookCommand::Report { driver, agent, event, payload, generation } => {
            let payload = match payload {
                Some(given) => bounded(given),
                None => bounded_stdin(HOOK_PAYLOAD_MAX)?,
            };
            report(driver, agent, generation, event, payload)
        }
        HookCommand::Claude { agent, generation, event } => {
            let payload = bounded_stdin(HOOK_PAYLOAD_MAX)?;
            report(DriverKind::Claude, agent, Some(generation), event, payload)
        }
        HookCommand::Codex { agent, payload } => {
            // Too large to be a notification Codex sends: only its end is of use, and none of it
            // is kept beyond the agent's last words.
            let payload = if payload.len() > HOOK_PAYLOAD_MAX { String::new() } else { payload };
            report(DriverKind::Codex, agent, None, bosun_wire::NOTIFY.into(), payload)
        }
    };
    // Spooled when no daemon answers, also one that died while it was being told, or that
    // could not record it (it was stopping, its disk failed): reports are states, so one told
    // twice changes nothing, while one lost is a state missed. A daemon that refused it has
    // heard it: that report is not kept for later.
    let heard = match client.request_if_running(Request::Hook(event.clone())) {
        Ok(Some(Response::HookReply { stdout })) => {
            println!("{stdout}");
            true
        }
        Ok(answer) => answer.is_some(),
        Err(e) => crate::client::wire_error(&e).is_some_and(|w| w.kind != bosun_wire::ErrorKind::Failed),
    };
    // A state directory that is gone (removed with everything bosun knew) is not made again for
    // a report no daemon will ever read.
    if !heard && client.dirs.root().is_dir() {
        let mut event = event;
        if let HookEvent::Report { spooled_at, .. } = &mut event {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            *spooled_at = now.ok().map(|d| d.as_millis() as u64);
        }
        let mut line = serde_json::to_vec(&event)?;
        line.push(b'\n');
        let path = client.dirs.hook_spool();
        if let Some(dir) = path.parent() {
            std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700).create(dir)?;
        }
        let mut spool = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        std::io::Write::write_all(&mut spool, &line)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The most of a hook report read: a larger one is cut, and then reads as its event alone.
const HOOK_PAYLOAD_MAX: usize = 1024 * 1024;

/// An agent program's report, its event name bounded.
fn report(driver: DriverKind, agent: String, generation: Option<u32>, event: String, payload: String) -> HookEvent {
    let event = event.chars().take(bosun_core::driver::EVENT_MAX).collect();
    HookEvent::Report { driver, agent, generation, event, payload, spooled_at: None }
}

/// A payload given as an argument: one too large for a report is none.
fn bounded(payload: String) -> String {
    if payload.len() > HOOK_PAYLOAD_MAX {
        String::new()
    } else {
        payload
    }
}

/// At most `max` bytes of stdin, as text; the rest is left unread.
fn bounded_stdin(max: usize) -> Result<String> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(std::io::stdin().lock(), max as u64), &mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
