//! `bosun fork`: a new agent in a new worktree that starts where another agent is — its branch's
//! commits and, in one more commit made without touching its worktree, what it has not
//! committed — with its conversation forked (`Input::ForkAgent`; Claude: `--resume ID
//! --fork-session` under a session id of its own, its transcript copied where Claude looks;
//! Codex: `codex fork ID`), so one line of work can be tried two ways. The agent forked is left
//! as it is.

use std::collections::BTreeMap;

use bosun_wire::{StartAgent, WorkspaceChoice};

use super::start::start_agent_as;
use super::*;

pub(super) async fn fork(
    ctx: &Arc<Context>,
    agent: String,
    name: Option<String>,
    prompt: Option<String>,
    inherit: BTreeMap<String, String>,
) -> Answer {
    let (a, ws) = query(ctx, move |s| {
        let a = s.find_agent(&agent)?.clone();
        let ws = s.workspaces.get(&a.workspace).cloned();
        Ok((a, ws))
    })
    .await?;
    let ws = ws.ok_or_else(|| bad(format!("agent {}'s workspace was removed: there is nothing to fork", a.id)))?;
    if !ws.kind.on_this_disk() || !matches!(ws.kind, WorkspaceKind::Worktree { .. } | WorkspaceKind::Pool { .. }) {
        return Err(bad(format!(
            "agent {} works in a {} workspace: only a worktree or a pool's is forked",
            a.id,
            ws.kind.label()
        )));
    }
    if !a.runtime.is_local() {
        return Err(bad(format!(
            "agent {} runs in a container or a pod: only an agent that runs here is forked",
            a.id
        )));
    }
    if !a.driver.behaviour().can_fork() {
        return Err(bad(format!(
            "agent {} is a {} agent, whose conversation bosun cannot fork",
            a.id,
            a.driver.kind().name()
        )));
    }
    let repo = ws.kind.repo().map(Path::to_path_buf).unwrap_or_default();
    let (git, w, id) = (ctx.git.clone(), ws.clone(), a.id.clone());
    let base = blocking(move || {
        git.snapshot(&w.path, &w.owned_files(), &format!("bosun fork of {id}: its work not committed"))
    })
    .await?;
    let command = a.command.clone();
    let req = StartAgent {
        repo: Some(repo.clone()),
        cwd: repo,
        workspace: WorkspaceChoice::Worktree,
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
        runtime: a.runtime.clone(),
        no_wait: false,
    };
    start_agent_as(ctx, req, Some(a.id.clone())).await
}
