//! Who reacts to which recorded event. A domain records what happened in it and calls only the
//! domains below it; what follows from that fact in a domain above (a job's step ends when its
//! agent dies, a plan goes on when one of its jobs ends) reacts to the event here. `settle` runs
//! the reactions of every event of a decision, in order, those of the events they record too,
//! until none is left; then the messages and queue items the decision made ready go out.

use super::ground::{Cx, Decision};
use super::{escalation, job, merge, plan, pod, queue, recovery, session, window};
use crate::Event;

/// One reaction: the events it is for, and what it does.
struct Reaction {
    on: fn(&Event) -> bool,
    react: fn(Cx, &Event, &mut Decision),
}

/// The reactions, in the order they react to one event.
const TABLE: &[Reaction] = &[
    // An agent died: its `on_dead` chain, or a person; then the step it ran, unless its chain
    // resumed it or its pod is still saving.
    Reaction { on: |e| matches!(e, Event::AgentDied { .. }), react: recovery::died },
    Reaction { on: |e| matches!(e, Event::AgentDied { .. }), react: job::agent_died },
    // The last agent of a merged workspace ended: the workspace is looked at, to go.
    Reaction { on: |e| matches!(e, Event::AgentDied { .. }), react: merge::agent_died },
    // A pod's save is known: the step of its agent that died before, then the pod kept or gone.
    Reaction { on: |e| matches!(e, Event::WorkSaved { .. }), react: job::work_saved },
    Reaction { on: |e| matches!(e, Event::WorkSaved { .. }), react: pod::saved },
    // bosun could not end an agent: a person.
    Reaction { on: |e| matches!(e, Event::AgentKillFailed { .. }), react: escalation::kill_failed },
    // A workspace was made, or not: the job waiting for it begins, or fails.
    Reaction { on: |e| matches!(e, Event::WorkspaceReady { .. }), react: job::workspace_ready },
    Reaction { on: |e| matches!(e, Event::WorkspaceCreateFailed { .. }), react: job::workspace_failed },
    // A job ended: its plan goes on.
    Reaction { on: |e| matches!(e, Event::JobFinished { .. }), react: plan::job_finished },
];

/// Reacts to the decision's events until no reaction records more; then types the messages
/// and takes the queue items the decision left ready.
pub(super) fn settle(cx: Cx, d: &mut Decision) {
    let mut next = 0;
    while let Some(e) = d.events.get(next) {
        next += 1;
        if !TABLE.iter().any(|r| (r.on)(e)) {
            continue;
        }
        let e = e.clone();
        for r in TABLE.iter().filter(|r| (r.on)(&e)) {
            (r.react)(cx, &e, d);
        }
    }
    session::dispatch(cx.state, d);
    queue::dispatch(cx.state, cx.now, d);
    window::hold_starts(cx.state, d);
}
