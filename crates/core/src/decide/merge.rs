//! Decisions about a merge once its branch is merged (`bosun merge` did that in git, in one
//! step): its agents are ended; once none lives, its workspace is looked at and removed (a
//! pool's released), its branch kept when the target lacks some of it, the workspace itself kept
//! when it holds work not committed. Each step follows a recorded fact (`WorkMerged`,
//! `AgentDied`, the look's outcome), so a step a crash cut off is taken up again at start, and
//! none is taken twice. Work: merge → pool → workspace → session.

use super::ground::{inspect_against, merge_pending, Cx, Decision};
use super::{pool, session, workspace};
use crate::{Agent, Event, Merged, Rejection, State, Timestamp, WorkspaceId, WorkspaceKind, WorkspaceState};

/// Workspace `id`'s branch was merged: recorded with the agents it ends, which are ended now;
/// with none living, the workspace is looked at at once. A merge already under way owes
/// nothing more.
pub(super) fn merged(
    state: &State,
    id: &WorkspaceId,
    merged: &Merged,
    now: Timestamp,
    d: &mut Decision,
) -> Result<(), Rejection> {
    let ws = state.workspaces.get(id).ok_or_else(|| Rejection::NoSuchWorkspace(id.to_string()))?;
    if merge_pending(state, id).is_some() {
        return Ok(());
    }
    let living: Vec<&Agent> = state.living_in(id).collect();
    let ending = Some(living.iter().map(|a| a.id.clone()).collect());
    d.event(Event::WorkMerged { workspace: id.clone(), merged: merged.clone(), ending });
    for a in &living {
        session::kill(state, &a.id, now, d)?;
    }
    if living.is_empty() && idle(&ws.state) {
        d.effect(inspect_against(ws, Some(&merged.into)));
    }
    Ok(())
}

/// An agent of a merged workspace died: when it was the last to live and nothing else will
/// look at the workspace (the death of the agent it was in use by does), it is looked at.
pub(super) fn agent_died(cx: Cx, e: &Event, d: &mut Decision) {
    let Event::AgentDied { id, .. } = e else { return };
    let Some(ws) = cx.state.agents.get(id).and_then(|a| cx.state.workspaces.get(&a.workspace)) else { return };
    let Some(m) = merge_pending(cx.state, &ws.id) else { return };
    let died_now = |a: &Agent| d.events.iter().any(|e| matches!(e, Event::AgentDied { id, .. } if id == &a.id));
    let lives = cx.state.living_in(&ws.id).any(|a| !died_now(a));
    if !lives && idle(&ws.state) {
        d.effect(inspect_against(ws, Some(&m.merged.into)));
    }
}

/// A workspace was looked at: what its pool does with it first; then, when it is a merged one
/// whose agents all ended, it is removed (a pool's released), or kept when it holds work.
pub(super) fn inspected(
    state: &State,
    id: &WorkspaceId,
    dirty: Option<bool>,
    ahead: u32,
    now: Timestamp,
    d: &mut Decision,
) {
    pool::inspected(state, id, dirty, ahead, now, d);
    let Some(ws) = state.workspaces.get(id) else { return };
    let released = d.events.iter().any(|e| matches!(e, Event::WorkspaceRemoved { id: w, .. } if w == id));
    let busy = matches!(ws.state, WorkspaceState::Creating | WorkspaceState::Waiting | WorkspaceState::Removing { .. });
    if merge_pending(state, id).is_none() || released || busy || !pool::task_over(state, id) {
        return;
    }
    // Where no look reaches (a pod's clone), the mark its agent's end left stands.
    let marked = ws.state == WorkspaceState::Dirty && !ws.kind.seen_from_here();
    if dirty != Some(false) || marked {
        let why = Rejection::WorkspaceDirty(id.clone()).to_string();
        d.event(Event::MergedWorkKept { workspace: id.clone(), why });
        return;
    }
    match ws.kind {
        WorkspaceKind::Pool { .. } => pool::release(state, ws, ahead, false, false, now, d),
        _ => workspace::removing(state, ws, false, ahead, d),
    }
}

/// After a restart: a merged workspace whose agents all ended and that nothing else will look
/// at (its look was cut off) is looked at again.
pub(super) fn after_restart(state: &State, d: &mut Decision) {
    for (id, m) in state.merges.iter().filter(|(_, m)| m.pending()) {
        let Some(ws) = state.workspaces.get(id) else { continue };
        let lives = state.living_in(id).next().is_some();
        if !lives && idle(&ws.state) {
            d.effect(inspect_against(ws, Some(&m.merged.into)));
        }
    }
}

/// Whether a workspace is in no agent's use and not on its way in or out: looked at, it can go.
fn idle(state: &WorkspaceState) -> bool {
    !matches!(
        state,
        WorkspaceState::InUse { .. }
            | WorkspaceState::Creating
            | WorkspaceState::Waiting
            | WorkspaceState::Removing { .. }
    )
}
