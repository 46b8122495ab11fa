//! `bosun fork`: a new agent in a new workspace that starts where another agent is — its branch's
//! commits and, in one more commit made without touching its worktree, what it has not
//! committed — with its conversation forked (`Input::ForkAgent`; Claude: `--resume ID
//! --fork-session` under a session id of its own, its transcript copied where Claude looks;
//! Codex: `codex fork ID`), so one line of work can be tried two ways. The agent forked is left
//! as it is.

use std::collections::BTreeMap;

use bosun_core::Runtime;
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
    // The fork works where its agent does: a worktree of its own, or a volume of its own when
    // its agent's clone is in one (its container's limits and network alike).
    let (workspace, mut runtime) = match (&ws.kind, &a.runtime) {
        (WorkspaceKind::Pod { .. }, _) | (_, Runtime::K8s(_)) => {
            return Err(bad(format!(
                "agent {} runs in a pod, whose work and conversation are in the cluster: fork it once it ended \
                 (its branch comes back), with `bosun agent start --ref BRANCH`",
                a.id
            )))
        }
        (WorkspaceKind::Worktree { .. } | WorkspaceKind::Pool { .. }, _) => {
            (WorkspaceChoice::Worktree, a.runtime.clone())
        }
        (WorkspaceKind::Volume { .. }, Runtime::Docker(_)) => (WorkspaceChoice::Volume, a.runtime.clone()),
        (kind, _) => {
            return Err(bad(format!(
                "agent {} works in a {} workspace: only a worktree's, a pool's or a volume's is forked",
                a.id,
                kind.label()
            )))
        }
    };
    if let Runtime::Docker(container) = &mut runtime {
        container.volume = None;
    }
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
    };
    start_agent_as(ctx, req, Some(a.id.clone())).await
}
