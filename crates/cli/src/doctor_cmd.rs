//! `bosun doctor [--fix]`: what no record owns, and what `--fix` did with it.

use std::process::ExitCode;

use anyhow::Result;
use bosun_core::Leftover;
use bosun_wire::{Finding, Fixed};

use crate::client::Client;
use crate::commands::print_json;

pub fn run(client: &Client, fix: bool, json: bool) -> Result<ExitCode> {
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
