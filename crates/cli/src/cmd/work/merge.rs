//! `bosun merge ID`: an agent's or job's branch merged into where its workspace started, its
//! agent ended and its workspace removed; on a conflict, its agent may be asked to resolve it.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::calls::MergeOutcome;
use crate::client::Client;
use crate::out::{print_json, short};

/// Merge an agent's or job's branch into the branch its workspace started from (or --into),
/// without touching your checked-out files unless that branch is checked out (then it must
/// be clean); then end its agent and remove its workspace (a pool's is released), deleting
/// its branch only when all of it is merged
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("how").args(["squash", "rebase"])))]
pub struct MergeArgs {
    /// Agent id (any unique prefix) or name, or job id
    id: String,
    /// The branch to merge into [default: the branch its workspace started from, else the
    /// current branch]
    #[arg(long, value_name = "BRANCH")]
    into: Option<String>,
    /// One commit with all its changes (its branch is kept: it is not merged)
    #[arg(long)]
    squash: bool,
    /// Its commits replayed on the target, which then moves to them
    #[arg(long)]
    rebase: bool,
    /// The message of a merge or squash commit
    #[arg(long, short, value_name = "TEXT")]
    message: Option<String>,
    /// Commit what its workspace holds not committed first (the agent's last words as the body)
    #[arg(long)]
    commit: bool,
    /// Merge although its agent is working
    #[arg(long)]
    force: bool,
    /// On a conflict, ask its agent to merge the target into its branch and resolve it, wait
    /// until it is idle again, then try once more
    #[arg(long)]
    resolve_with_agent: bool,
    /// How long to wait for the agent to resolve the conflicts, in seconds
    #[arg(long, default_value_t = 1800, value_name = "SECS", requires = "resolve_with_agent")]
    wait: u64,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: MergeArgs) -> Result<ExitCode> {
    let MergeArgs { id, into, squash, rebase, message, commit, force, resolve_with_agent, wait, json } = args;
    let how = match (squash, rebase) {
        (true, _) => bosun_core::MergeHow::Squash,
        (_, true) => bosun_core::MergeHow::Rebase,
        _ => bosun_core::MergeHow::Merge,
    };
    let ask = bosun_wire::MergeAsk { target: id, into, how, message, commit, force, resolve_with_agent };
    let done = match client.merge(Box::new(ask.clone()))? {
        MergeOutcome::Done(done) => done,
        MergeOutcome::AgentAsked { agent, message, files } => {
            eprintln!(
                "conflicts in {}: asked agent {agent} to resolve them on its branch; waiting for it (up to {wait} s)",
                files.join(", ")
            );
            wait_until_idle_after(client, &agent.to_string(), message, std::time::Duration::from_secs(wait))?;
            let again = bosun_wire::MergeAsk { resolve_with_agent: false, ..ask };
            match client.merge(Box::new(again))? {
                MergeOutcome::Done(done) => done,
                MergeOutcome::AgentAsked { .. } => anyhow::bail!("the merge conflicts still"),
            }
        }
    };
    if json {
        print_json(&done)?;
        return Ok(ExitCode::SUCCESS);
    }
    let m = &done.merged;
    if m.already {
        println!("{} already holds {}", m.into, m.branch);
    } else {
        let what = if m.fast_forward { "fast-forward".to_owned() } else { m.how.label().to_owned() };
        println!("merged {} into {} ({what}): {} is at {}", m.branch, m.into, m.into, short(&m.commit));
    }
    for a in &done.ended {
        println!("ended    {a}");
    }
    match (&done.removed, &done.kept) {
        (Some(r), _) => {
            println!("removed  {}", r.workspace);
            if let Some(b) = &r.branch_deleted {
                println!("deleted  branch {b}");
            }
            if let Some(k) = &r.branch_kept {
                println!("kept     branch {} ({} commit(s) not in {})", k.branch, k.commits, m.into);
            }
        }
        (None, Some(why)) => println!("kept its workspace: {why}"),
        (None, None) => {}
    }
    Ok(ExitCode::SUCCESS)
}

/// Waits until agent `id` has worked on message `message` and waits for input again: looked at
/// again each time an event of it is recorded (the daemon's stream says so), until `limit`.
fn wait_until_idle_after(
    client: &Client,
    id: &str,
    message: bosun_core::MessageId,
    limit: std::time::Duration,
) -> Result<()> {
    let deadline = std::time::Instant::now() + limit;
    // The stream goes on from before the agent is looked at: a change in between wakes too.
    let from = client.last_seq()? + 1;
    let (tx, wakes) = std::sync::mpsc::channel();
    let (stream, agent) = (Client::new(client.dirs.clone()), id.to_owned());
    std::thread::spawn(move || {
        let q = bosun_wire::EventsQuery { from, follow: true, agent: Some(agent), job: None };
        let _ = stream.events(q, |_| Ok(tx.send(()).is_ok()));
    });
    loop {
        let detail = client.show(id.to_owned())?;
        let a = &detail.agent;
        if a.state.is_dead() {
            anyhow::bail!("agent {id} ended before it resolved the conflicts: {}", a.state.label());
        }
        let sent = detail.messages.iter().find(|m| m.id == message).map(|m| m.at);
        if sent.is_some_and(|at| a.state_since > at) && matches!(a.state, bosun_core::SessionState::Idle) {
            return Ok(());
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match wakes.recv_timeout(left) {
            Ok(()) => while wakes.try_recv().is_ok() {},
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                anyhow::bail!("agent {id} did not finish within {} s: merge again once it has", limit.as_secs())
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                anyhow::bail!("the daemon stopped while agent {id} worked: start it again and merge once it has")
            }
        }
    }
}
