//! `bosun doctor --clients [claude|codex|gemini|pi|opencode]…`: the self-test a person runs after
//! each update of a client. It runs the installed Claude Code, Codex, Gemini CLI, pi and opencode
//! (found on `PATH`, as
//! `bosun agent start -- claude` finds them), at their own versions, through bosun itself — a daemon and a tmux server
//! of its own on a temp state directory, a temp git repository, a config directory and a home of
//! each agent's own holding a fake key only — against bosun's scripted model server on 127.0.0.1
//! (`bosun_model_server`). Each check is a line with its latency; the end says which versions
//! bosun was tested with and where to report a failure. Nothing is left behind: when it returns,
//! its daemon, its tmux server, every process that names its temp directory, and the directory
//! itself are gone.
//!
//! `found` finds the clients and reads their versions, `place` owns the temp directory and the
//! private bosun in it, `checks` runs the checks, `report` prints them; `interrupt` turns a
//! Ctrl-C into an orderly stop, so that nothing is left behind then either.

mod checks;
mod found;
mod interrupt;
mod place;
mod report;
mod rig;

use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use bosun_core::client_check::Client;

use found::Found;
use place::Place;

/// A client the self-test knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientName {
    Claude,
    Codex,
    Gemini,
    Pi,
    Opencode,
}

impl ClientName {
    /// In the order of the drivers.
    pub const ALL: [ClientName; 5] = [Self::Claude, Self::Codex, Self::Gemini, Self::Pi, Self::Opencode];

    /// The client its driver probes.
    fn client(self) -> &'static Client {
        match self {
            Self::Claude => &bosun_core::driver::claude_config::CLIENT,
            Self::Codex => &bosun_core::driver::codex_config::CLIENT,
            Self::Gemini => &bosun_core::driver::gemini_config::CLIENT,
            Self::Pi => &bosun_core::driver::pi_config::CLIENT,
            Self::Opencode => &bosun_core::driver::opencode_config::CLIENT,
        }
    }

    /// Its program's name on `PATH`.
    pub fn program(self) -> &'static str {
        self.client().program
    }

    /// Its npm package.
    pub fn package(self) -> &'static str {
        self.client().package
    }

    /// What people call it.
    pub fn title(self) -> &'static str {
        match self {
            Self::Claude => "Claude Code",
            Self::Codex => "Codex",
            Self::Gemini => "Gemini CLI",
            Self::Pi => "pi",
            Self::Opencode => "opencode",
        }
    }
}

/// Runs the self-test of the clients `named` (every client it knows when none is): exit 0 when
/// every check of every client found is right, 1 otherwise, or when a client named is missing,
/// when none is found at all, or when a client's version cannot be read.
/// How many times its time each check is given (`--patience`): once, unless said.
static PATIENCE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();

/// Gives each check `times` its time, for this run.
pub fn be_patient(times: u32) {
    let _ = PATIENCE.set(times.max(1));
}

fn patience() -> u32 {
    PATIENCE.get().copied().unwrap_or(1)
}

pub fn run(named: Vec<ClientName>, json: bool) -> Result<ExitCode> {
    let began = Instant::now();
    interrupt::catch();
    let explicit = !named.is_empty();
    let mut wanted = if explicit { named } else { ClientName::ALL.to_vec() };
    wanted.sort();
    wanted.dedup();
    let place = Place::new()?;
    let found: Vec<(ClientName, Found)> = wanted.iter().map(|&name| (name, found::find(name))).collect();
    let ready: Vec<(ClientName, std::path::PathBuf)> = found
        .iter()
        .filter_map(|(name, f)| match f {
            Found::Ready { path, .. } => Some((*name, path.clone())),
            _ => None,
        })
        .collect();
    let outcomes = match ready.is_empty() {
        true => Ok(Vec::new()),
        false => place.start_bosun().map(|client| checks::run_all(&place, &client, &ready)),
    };
    let leftovers = place.finish();
    let outcomes = outcomes?;
    if interrupt::interrupted() {
        eprintln!("bosun: interrupted; everything the self-test made is removed");
        return Ok(ExitCode::from(130));
    }
    let run = report::Run { explicit, found, outcomes, leftovers, took: began.elapsed() };
    let ok = run.ok();
    if json {
        report::print_json(&run)?;
    } else {
        report::print(&run);
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
