//! The grace: idle seen without hooks counts once it has lasted the policy's grace quietly, and
//! an agent that nothing came of its chain's last act for is looked at again after it.

use super::ground::{set_timer, Decision};
use crate::{Agent, SessionState, State, TimerKind, Timestamp};

/// Idle reported without hooks: `on_idle` acts once the policy's grace has passed quietly.
pub(super) fn grace(state: &State, a: &Agent, now: Timestamp, d: &mut Decision) {
    let pending = state.timers.values().any(|t| t.kind == TimerKind::Grace { agent: a.id.clone() });
    if !pending {
        let at = Timestamp::from_millis(now.as_millis() + a.policy.grace_ms);
        set_timer(state, d, TimerKind::Grace { agent: a.id.clone() }, at);
    }
}

/// Nothing came of what the agent's chain last did where it stands — its message started no
/// turn (or the reports of one were lost), could not be typed, or a person closed the
/// escalation without a word: once the grace has passed with no sign of life, the chain acts
/// again (`timers::fired`), rather than leave the agent waiting for what will not come.
pub(super) fn again(state: &State, a: &Agent, now: Timestamp, d: &mut Decision) {
    let waits = matches!(a.state, SessionState::Idle | SessionState::Prompt { .. } | SessionState::Error { .. });
    if waits && a.outcome.is_none() && !a.kill_requested {
        grace(state, a, now, d);
    }
}
