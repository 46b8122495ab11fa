//! `bosun merge`: an agent's or job's branch into the branch its workspace started from (or
//! `--into`). Refused while its agent works (unless forced), while its job runs, and while its
//! workspace holds work not committed (unless `--commit`, which commits it all with the agent's
//! last words); a conflict changes nothing and names its files. The merge itself is one step in
//! git, made here; once made it is recorded (`WorkMerged`), and the core does what follows: its
//! agents are ended and its workspace removed (a pool's released), its branch deleted only when
//! every commit of it is in the target. This waits for that outcome, in the state.

use bosun_core::{AgentId, MergeOutcome, Merged, SessionState, Workspace};
use bosun_wire::MergeAsk;

use super::outcome::{send, wait_outcome};
use super::*;

/// What a merge is of: the workspace, its living agents, its newest agent's last words.
struct Found {
    ws: Workspace,
    agents: Vec<(AgentId, SessionState)>,
    said: Option<String>,
}

/// A conflict to be resolved by its agent: target, branch, files.
type Conflict = (String, String, Vec<String>);

pub(super) async fn merge(ctx: &Arc<Context>, ask: MergeAsk) -> Answer {
    // Sent again after the daemon died, once recorded: it is not merged again; what followed
    // is the answer.
    let recorded = done_already().and_then(|events| {
        events.into_iter().find_map(|e| match e {
            Event::WorkMerged { workspace, .. } => Some(workspace),
            _ => None,
        })
    });
    if let Some(ws) = recorded {
        let rx = ctx.engine.subscribe();
        return followed(ctx, ws, rx).await;
    }
    let found = find(ctx, &ask).await?;
    let merged = match in_git(ctx, &found, &ask).await? {
        Ok(merged) => merged,
        Err(conflict) => return ask_agent(ctx, &found, conflict).await,
    };
    crate::faults::step("merge:merged");
    let rx = ctx.engine.subscribe();
    submit(ctx, Input::WorkMerged { workspace: found.ws.id.clone(), merged }).await?;
    followed(ctx, found.ws.id, rx).await
}

/// The workspace `ask` names and its agents, refused while its job runs, its agent works
/// (unless forced), or its work is away in a pod.
async fn find(ctx: &Arc<Context>, ask: &MergeAsk) -> Result<Found, WireError> {
    let target = ask.target.clone();
    let (found, running_job) = query(ctx, move |s| {
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
        Ok((Found { ws, agents, said }, running_job))
    })
    .await?;
    if let Some(job) = running_job {
        return Err(conflict(format!(
            "job {job} still runs in {}: wait for it (`bosun job wait {job}`) or cancel it",
            found.ws.id
        )));
    }
    let working = found.agents.iter().find(|(_, s)| matches!(s, SessionState::Running | SessionState::Starting));
    if let (Some((agent, _)), false) = (working, ask.force) {
        return Err(conflict(format!("agent {agent} is working: wait until it is idle, or merge anyway with --force")));
    }
    branch_of(&found.ws)?;
    // A pod's work comes back only once its agent ended: merging before would take less.
    if let (true, Some((agent, _))) = (found.ws.kind.away_while_running(), found.agents.first()) {
        return Err(conflict(format!(
            "agent {agent}'s work is in its pod until it ends: kill it (its branch comes back), then merge"
        )));
    }
    Ok(found)
}

/// Merges in git: refused before anything changes (its work not committed included), else
/// made, or a conflict for its agent to resolve when `--resolve-with-agent` asks it to.
async fn in_git(ctx: &Arc<Context>, found: &Found, ask: &MergeAsk) -> Result<Result<Merged, Conflict>, WireError> {
    let (repo, branch, base_ref) = branch_of(&found.ws)?;
    let (git, workspaces, w, said) = (ctx.git.clone(), ctx.workspaces.clone(), found.ws.clone(), found.said.clone());
    let (into, how, message, commit) = (ask.into.clone(), ask.how, ask.message.clone(), ask.commit);
    let resolve = ask.resolve_with_agent;
    let living = found.agents.first().map(|(agent, _)| agent.clone());
    let merged = tokio::task::spawn_blocking(move || -> Result<Result<Merged, Conflict>, WireError> {
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
            refuse_dirty(&w, living.as_ref(), commit)?;
            let words = said.as_deref().map(|s| format!("\n\n{s}")).unwrap_or_default();
            git.commit_all(&w.path, &w.owned_files(), &format!("Work of {}{words}", w.id)).map_err(adapter_error)?;
            crate::faults::step("merge:committed");
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
    });
    merged.await.map_err(|e| WireError::new(ErrorKind::Failed, format!("internal task failed: {e}")))?
}

/// Work not committed in `w` is refused unless `--commit` may commit it, which reaches only a
/// workspace on this disk.
fn refuse_dirty(w: &Workspace, living: Option<&AgentId>, commit: bool) -> Result<(), WireError> {
    if !w.kind.on_this_disk() {
        let how = match living {
            Some(agent) => format!("ask agent {agent} to commit it (`bosun send`)"),
            None => {
                "no agent of it lives to commit it: `bosun fork` its last agent, which takes that work along".to_owned()
            }
        };
        return Err(WireError::new(
            ErrorKind::WouldLoseWork,
            format!(
                "{} holds work not committed in its {} workspace, which --commit cannot reach: {how}, then merge",
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
    Ok(())
}

/// Its agent merges the target into its branch, resolving the conflicts there.
async fn ask_agent(ctx: &Arc<Context>, found: &Found, (into, from, files): Conflict) -> Answer {
    let Some((agent, _)) = found.agents.first() else {
        return Err(conflict(format!(
            "merging {from} into {into} conflicts in {}, and no agent of it lives to resolve them",
            files.join(", ")
        )));
    };
    let text = format!(
        "Merging your branch {from} into {into} conflicts in: {}. Merge {into} into {from}, resolve the conflicts, \
         and commit; then stop.",
        files.join(", ")
    );
    let text = bosun_core::message_text::clean(&text);
    let (Response::Sent { message } | Response::SentLater { message, .. }) =
        send(ctx, agent.to_string(), text, false, false).await?
    else {
        return Err(WireError::new(ErrorKind::Failed, "the message was not sent"));
    };
    Ok(Response::MergeConflictSent { agent: agent.clone(), message, files })
}

/// What followed the merge of workspace `id`, once the core is done with it: its agents ended,
/// its workspace removed or kept. An agent bosun could not end is an error (a person is asked
/// to end it; its workspace goes once it has ended).
async fn followed(ctx: &Arc<Context>, id: WorkspaceId, rx: broadcast::Receiver<Arc<Event>>) -> Answer {
    let wid = id.clone();
    let ended = query(ctx, move |s| Ok(s.merges.get(&wid).map(|m| m.ended.clone()).unwrap_or_default())).await?;
    let in_state = move |s: &State| {
        let m = s.merges.get(&id)?;
        let (removed, kept) = match m.outcome.clone()? {
            MergeOutcome::Removed { branch_kept } => {
                let branch_deleted = branch_kept.is_none().then(|| m.merged.branch.clone());
                (Some(Removed { workspace: id.clone(), path: m.path.clone(), branch_deleted, branch_kept }), None)
            }
            MergeOutcome::Kept { why } => (None, Some(why)),
        };
        Some(Ok(Response::Merged { merged: m.merged.clone(), ended: m.ended.clone(), removed, kept }))
    };
    let in_event = move |e: &Event| match e {
        Event::AgentKillFailed { id, error } if ended.contains(id) => Some(Err(WireError::new(
            ErrorKind::Failed,
            format!("merged, but could not end agent {id}: {error}; its workspace goes once it has ended"),
        ))),
        _ => None,
    };
    wait_outcome(ctx, rx, in_state, in_event).await?
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
