//! `bosun doctor [--fix]`: what no record owns, and what `--fix` did with it; `--clients`, the
//! clients' self-test (`selftest`).

use std::process::ExitCode;

use anyhow::Result;
use bosun_core::Leftover;
use bosun_wire::{Finding, Fixed};
use clap::Args;

use crate::client::Client;
use crate::out::print_json;

/// Find what no record owns: workspace directories and git worktrees, `ws-*` branches,
/// tmux sessions on bosun's server, agent directories. Exits 1 while any remains.
///
/// Repositories looked at: those bosun's records name, those of leftover worktrees, and the
/// one you stand in. With --fix, each leftover is removed unless someone's work may be in it:
/// a worktree or folder that holds changes, or a branch with commits on no other branch,
/// tag or remote, is kept and said why. --fix also runs `git worktree prune` where a
/// worktree's directory is gone.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Remove the leftovers that hold no one's work
    #[arg(long)]
    fix: bool,
    #[arg(long)]
    json: bool,
    /// Instead: run the installed Claude Code, Codex, Gemini CLI, pi and opencode (those named, else all) through
    /// bosun against a scripted model server on 127.0.0.1, in a temp repository, state and
    /// config with a fake key: a line per check, exit 1 when bosun misreads a client
    #[arg(long, num_args = 0.., value_name = "CLIENT", value_enum, conflicts_with = "fix")]
    clients: Option<Vec<crate::selftest::ClientName>>,
    /// With --clients: give each check this many times its time (20 s; a resume of opencode
    /// 40 s), for a slow or busy machine
    #[arg(long, value_name = "TIMES", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10), requires = "clients")]
    patience: u32,
}

/// The self-test needs no state directory of the user's: `client` is only made for the rest.
pub fn run(client: impl FnOnce() -> Result<Client>, args: DoctorArgs) -> Result<ExitCode> {
    let DoctorArgs { fix, json, clients, patience } = args;
    if let Some(clients) = clients {
        crate::selftest::be_patient(patience);
        return crate::selftest::run(clients, json);
    }
    let client = client()?;
    let cwd = std::env::current_dir().ok();
    let findings = client.doctor(fix, cwd)?;
    let remaining = findings.iter().filter(|f| f.fixed != Some(Fixed::Removed)).count();
    if json {
        print_json(&findings)?;
    } else {
        print(&findings, fix, remaining);
    }
    Ok(if remaining == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn print(findings: &[Finding], fix: bool, remaining: usize) {
    if findings.is_empty() {
        println!("nothing left over: every worktree, branch, session and agent directory has its record");
        return;
    }
    for f in findings {
        let what = describe(&f.orphan.leftover);
        match (&f.fixed, &f.orphan.keep) {
            (Some(Fixed::Removed), _) => println!("removed {what}"),
            (Some(Fixed::Failed { error }), _) => println!("could not remove {what}: {error}"),
            (None, Some(why)) => println!("kept    {what}: {why}"),
            (None, None) => println!("found   {what}"),
        }
    }
    let removable = findings.iter().filter(|f| f.fixed.is_none() && f.orphan.keep.is_none()).count();
    if !fix && removable > 0 {
        println!("{removable} of these hold no one's work: `bosun doctor --fix` removes them");
    }
    if findings.iter().any(|f| f.orphan.keep.is_some()) {
        println!("what is kept may hold work: look at it, and remove it by hand once it is safe to");
    }
    if fix && remaining == 0 {
        println!("all clean");
    }
}

fn describe(leftover: &Leftover) -> String {
    match leftover {
        Leftover::Workspace { path, repo: Some(repo) } => {
            format!("worktree {} (of {})", path.display(), repo.display())
        }
        Leftover::Workspace { path, repo: None } => format!("folder {}", path.display()),
        Leftover::Registration { repo, path } => {
            format!("worktree record {} in {} (its directory is gone)", path.display(), repo.display())
        }
        Leftover::Branch { repo, name } => format!("branch {name} in {}", repo.display()),
        Leftover::Session { name } => format!("session {name}"),
        Leftover::Container { name } => format!("container {name}"),
        Leftover::Volume { name } => format!("volume {name}"),
        Leftover::Pod { namespace, name } => format!("pod {namespace}/{name}"),
        Leftover::Claim { namespace, name } => format!("claim {namespace}/{name}"),
        Leftover::AgentDir { path } => format!("agent directory {}", path.display()),
    }
}
