//! `bosun merge`: an agent's or job's branch into the branch its workspace started from (or
//! `--into`). Refused while its agent works (unless forced), while its job runs, and while its
//! workspace holds work not committed (unless `--commit`, which commits it all with the agent's
//! last words); a conflict changes nothing and names its files. Once merged (recorded as
//! `WorkMerged`), its agents are ended and its workspace removed (a pool's released), its branch
//! deleted only when every commit of it is in the target.

use bosun_core::{AgentId, SessionState, WorkspaceProbe};
use bosun_wire::MergeAsk;

use super::outcome::{kill, remove_workspace_probed, send, wait_state};
use super::*;

pub(super) async fn merge(ctx: &Arc<Context>, ask: MergeAsk) -> Answer {
    let target = ask.target.clone();
    let (ws, agents, said, running_job) = query(ctx, move |s| {
        let ws = s.find_work(&target)?.clone();
        let agents: Vec<(AgentId, SessionState)> = s
            .agents
            .values()
            .filter(|a| a.workspace == ws.id && !a.state.is_dead())
            .map(|a| (a.id.clone(), a.state.clone()))
            .collect();
        // The last words of its newest agent.
        let said = s.last_words(&ws.id);
        let running_job = s
            .jobs
            .values()
            .find(|j| j.workspace.as_ref() == Some(&ws.id) && !j.state.is_over())
            .map(|j| j.spec.id.to_string());
        Ok((ws, agents, said, running_job))
    })
    .await?;
    if let Some(job) = running_job {
        return Err(conflict(format!(
            "job {job} still runs in {}: wait for it (`bosun job wait {job}`) or cancel it",
            ws.id
        )));
    }
    if let Some((agent, _)) =
        agents.iter().find(|(_, state)| matches!(state, SessionState::Running | SessionState::Starting))
    {
        if !ask.force {
            return Err(conflict(format!(
                "agent {agent} is working: wait until it is idle, or merge anyway with --force"
            )));
        }
    }
    let (repo, branch, base_ref) = branch_of(&ws)?;
    // A pod's work comes back only once its agent ended: merging before would take less.
    if ws.kind.away_while_running() && !agents.is_empty() {
        return Err(conflict(format!(
            "agent {}'s work is in its pod until it ends: kill it (its branch comes back), then merge",
            agents[0].0
        )));
    }
    let (git, workspaces, w) = (ctx.git.clone(), ctx.workspaces.clone(), ws.clone());
    let (into, how, message, commit) = (ask.into.clone(), ask.how, ask.message.clone(), ask.commit);
    let resolve = ask.resolve_with_agent;
    let living = agents.first().map(|(agent, _)| agent.clone());
    type Conflict = (String, String, Vec<String>);
    let merged = tokio::task::spawn_blocking(move || -> Result<Result<bosun_core::Merged, Conflict>, WireError> {
        let into = match into {
            Some(into) => into,
            None => default_into(&*git, &repo, base_ref)?,
        };
        if into == branch {
            return Err(bad(format!("{branch} is its own branch: merge it --into another")));
        }
        // Refused before anything changes, its workspace's work committed by --commit included.
        git.check_merge(&repo, &branch, &into).map_err(adapter_error)?;
        // Looking at a volume brings its commits back to its branch first.
        if workspaces.is_dirty(&w.path, &w.kind, &w.owned_files()).map_err(adapter_error)? {
            if !w.kind.on_this_disk() {
                let how = match &living {
                    Some(agent) => format!("ask agent {agent} to commit it (`bosun send`)"),
                    None => "no agent of it lives to commit it: `bosun fork` its last agent, which takes that \
                             work along"
                        .to_owned(),
                };
                return Err(WireError::new(
                    ErrorKind::WouldLoseWork,
                    format!(
                        "{} holds work not committed in its {} workspace, which --commit cannot reach: {how}, \
                         then merge",
                        w.id,
                        w.kind.label()
                    ),
                ));
            }
            if !commit {
                return Err(WireError::new(
                    ErrorKind::WouldLoseWork,
                    format!(
                        "{} holds work not committed: commit it, or pass --commit to commit it all first",
                        w.path.display()
                    ),
                ));
            }
            let words = said.as_deref().map(|s| format!("\n\n{s}")).unwrap_or_default();
            git.commit_all(&w.path, &w.owned_files(), &format!("Work of {}{words}", w.id)).map_err(adapter_error)?;
        }
        match git.merge_branch(&repo, &branch, &into, how, message.as_deref()) {
            Err(AdapterError::MergeConflict { into, from, files }) if resolve => Ok(Err((into, from, files))),
            Err(e @ AdapterError::MergeConflict { .. }) => {
                let (into, from) = (into.as_str(), branch.as_str());
                Err(conflict(format!(
                    "{e}; nothing was changed: merge {into} into {from} in its workspace, resolve them and commit \
                     there (or pass --resolve-with-agent to have its agent do it), then merge again"
                )))
            }
            other => other.map(Ok).map_err(adapter_error),
        }
    })
    .await
    .map_err(|e| WireError::new(ErrorKind::Failed, format!("internal task failed: {e}")))??;
    let merged = match merged {
        Ok(merged) => merged,
        // Its agent merges the target into its branch, resolving the conflicts there.
        Err((into, from, files)) => {
            let Some((agent, _)) = agents.first() else {
                return Err(conflict(format!(
                    "merging {from} into {into} conflicts in {}, and no agent of it lives to resolve them",
                    files.join(", ")
                )));
            };
            let text = format!(
                "Merging your branch {from} into {into} conflicts in: {}. Merge {into} into {from}, resolve the \
                 conflicts, and commit; then stop.",
                files.join(", ")
            );
            let text = bosun_core::message_text::clean(&text);
            let (Response::Sent { message } | Response::SentLater { message, .. }) =
                send(ctx, agent.to_string(), text, false, false).await?
            else {
                return Err(WireError::new(ErrorKind::Failed, "the message was not sent"));
            };
            return Ok(Response::MergeConflictSent { agent: agent.clone(), message, files });
        }
    };
    submit(ctx, Input::WorkMerged { workspace: ws.id.clone(), merged: merged.clone() }).await?;
    let mut ended = Vec::new();
    for (agent, _) in agents {
        kill(ctx, agent.to_string()).await?;
        ended.push(agent);
    }
    // Its dead agents' workspace is looked at once more before it is released.
    let id = ws.id.clone();
    let rx = ctx.engine.subscribe();
    let released = move |s: &bosun_core::State| match s.workspaces.get(&id).map(|w| &w.state) {
        Some(WorkspaceState::InUse { .. } | WorkspaceState::Creating) => None,
        _ => Some(()),
    };
    wait_state(ctx, rx, released).await?;
    let (git, workspaces, w, m) = (ctx.git.clone(), ctx.workspaces.clone(), ws.clone(), merged.clone());
    let probe = blocking(move || {
        let repo = w.kind.repo().map(Path::to_path_buf).unwrap_or_default();
        Ok(WorkspaceProbe {
            dirty: workspaces.is_dirty(&w.path, &w.kind, &w.owned_files())?,
            // Its branch goes only when the target holds all of it.
            commits_ahead: git.unmerged(&repo, &m.branch, &m.into)?,
        })
    })
    .await?;
    match remove_workspace_probed(ctx, ws.id.clone(), false, probe).await {
        Ok(removed) => Ok(Response::Merged { merged, ended, removed: Some(removed), kept: None }),
        Err(e) => Ok(Response::Merged { merged, ended, removed: None, kept: Some(e.message) }),
    }
}

/// The repository, branch and base ref of a workspace whose branch is on this machine.
pub(super) fn branch_of(ws: &bosun_core::Workspace) -> Result<(PathBuf, String, Option<String>), WireError> {
    let (repo, branch, base_ref) = ws.kind.local_branch().map_err(bad)?;
    Ok((repo.to_path_buf(), branch.to_owned(), base_ref.map(str::to_owned)))
}

/// The branch a workspace's work goes into when none is named (see `crate::pull_request`).
pub(super) fn default_into(git: &dyn Git, repo: &Path, base_ref: Option<String>) -> Result<String, WireError> {
    crate::pull_request::target(git, repo, base_ref).map_err(|e| match e {
        crate::pull_request::NoTarget::Git(e) => adapter_error(e),
        e @ crate::pull_request::NoTarget::Detached => bad(e.to_string()),
    })
}

fn conflict(message: String) -> WireError {
    WireError::new(ErrorKind::Conflict, message)
}
