//! `bosun fork`: a new agent in a new workspace that starts where another agent is — its branch's
//! commits and, in one more commit made without touching its worktree, what it has not
//! committed — with its conversation forked (`Input::ForkAgent`; Claude: `--resume ID
//! --fork-session` under a session id of its own, its transcript copied where Claude looks;
//! Codex: `codex fork ID`), so one line of work can be tried two ways. The agent forked is left
//! as it is. Once the fork is recorded (its workspace and agent), the core makes them.

use std::collections::BTreeMap;

use bosun_wire::StartAgent;

use super::start::{start_agent_as, started};
use super::*;

pub(super) async fn fork(
    ctx: &Arc<Context>,
    agent: String,
    name: Option<String>,
    prompt: Option<String>,
    inherit: BTreeMap<String, String>,
) -> Answer {
    // Sent again after the daemon died, once recorded: nothing is made again; what it
    // recorded is the answer, and the core makes the rest.
    if let Some(events) = done_already() {
        return started(events);
    }
    let (a, ws) = query(ctx, move |s| {
        let a = s.find_agent(&agent)?.clone();
        let ws = s.workspaces.get(&a.workspace).cloned();
        Ok((a, ws))
    })
    .await?;
    let ws = ws.ok_or_else(|| bad(format!("agent {}'s workspace was removed: there is nothing to fork", a.id)))?;
    let (workspace, runtime) =
        bosun_core::fork_into(&ws.kind, &a.runtime).map_err(|why| bad(format!("agent {}: {why}", a.id)))?;
    if !a.driver.behaviour().can_fork() {
        return Err(bad(format!(
            "agent {} is a {} agent, whose conversation bosun cannot fork",
            a.id,
            a.driver.kind().name()
        )));
    }
    let repo = ws.kind.repo().map(Path::to_path_buf).unwrap_or_default();
    let (workspaces, w, id) = (ctx.workspaces.clone(), ws.clone(), a.id.clone());
    let base = blocking(move || {
        let message = format!("bosun fork of {id}: its work not committed");
        workspaces.snapshot(&w.path, &w.kind, &w.owned_files(), &message)
    })
    .await?;
    crate::faults::step("fork:snapshot");
    let command = a.command.clone();
    let req = StartAgent {
        repo: Some(repo.clone()),
        cwd: repo,
        workspace,
        branch: None,
        base_ref: Some(base),
        name: Some(name.unwrap_or_else(|| format!("{}-fork", a.name))),
        command,
        env: a.env.clone(),
        inherit,
        driver: Some(a.driver.kind()),
        prompt,
        policy: a.policy.clone(),
        patterns: Default::default(),
        task: None,
        session: a.backend,
        runtime,
        no_wait: false,
        account: None,
    };
    start_agent_as(ctx, req, Some(a.id.clone())).await
}
