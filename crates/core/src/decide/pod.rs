//! What becomes of an agent's pod once its save is known: a pod whose work is safe goes; one
//! whose work is not is kept, and a person is asked. On a claim, what the save did not carry
//! stays on the claim, so the pod may go.

use super::escalation::escalate;
use super::ground::{kill, Cx, Decision};
use crate::PodClone;
use crate::{Event, Trigger, WorkspaceKind};

/// The save of an agent's pod is recorded (`WorkSaved`), after its death and what its death set
/// off (its `on_dead` chain may have resumed it).
pub(super) fn saved(cx: Cx, e: &Event, d: &mut Decision) {
    let Event::WorkSaved { agent, saved } = e else { return };
    let Some(a) = cx.state.agents.get(agent) else { return };
    // A resume (its `on_dead`) replaces the pod itself; a kill reported for the agent would
    // end the resumed one.
    let resumed = d.agent(cx.state, agent).is_some_and(|now| !now.state.is_dead());
    // On a claim, what the save did not carry stays there, not in the pod: the pod may go.
    let claim = cx.state.workspaces.get(&a.workspace).and_then(|w| match &w.kind {
        WorkspaceKind::Pod(PodClone { claim, .. }) => claim.clone(),
        _ => None,
    });
    if (saved.is_safe() || claim.is_some()) && !resumed {
        d.effect(kill(a));
    }
    if saved.is_safe() || (claim.is_some() && resumed) {
        return;
    }
    let why = match &claim {
        Some(c) => format!(
            "the work of agent {} did not all come back from its pod; it is kept on claim {}/{} until its \
             workspace is removed: {}",
            a.id,
            c.namespace,
            c.name,
            saved.said.trim()
        ),
        None => format!(
            "the work of agent {} is still only in its pod {}, which is kept: {}",
            a.id,
            a.session,
            saved.said.trim()
        ),
    };
    escalate(cx.state, a, Trigger::Dead, why, cx.now, d);
}
