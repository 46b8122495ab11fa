//! A timer fired: cooldowns act, graces end in idle (unless the agent showed life), typed
//! messages get their confirming Enter, start-ups get their screen checked.

use super::ground::{set_timer, Decision};
use super::observe::{quiet_check, startup_check};
use super::recovery;
use crate::{Effect, Event, Heartbeat, SessionState, State, TimerId, TimerKind, Timestamp, Trigger};

pub(super) fn fired(state: &State, id: TimerId, now: Timestamp, d: &mut Decision) {
    let Some(timer) = state.timers.get(&id) else { return };
    d.event(Event::TimerCleared { id });
    if let TimerKind::Backoff { job } = &timer.kind {
        return super::job::backoff_over(state, job, now, d);
    }
    if let TimerKind::Cron { name } = &timer.kind {
        return super::cron::fired(state, name, now, d);
    }
    if let TimerKind::Poll { worker } = &timer.kind {
        return super::queue::poll(state, worker, now, d);
    }
    let Some(a) = timer.kind.agent().and_then(|a| state.agents.get(a)) else { return };
    match &timer.kind {
        TimerKind::Cooldown { trigger, class, .. } => recovery::cooled_down(state, a, *trigger, *class, now, d),
        TimerKind::Wake { message, .. } => recovery::woken(state, a, message.as_deref(), now, d),
        TimerKind::HeldStart { .. } => super::window::start_held(state, a, d),
        TimerKind::Interrupt { left, .. } => super::budget::interrupt_again(state, a, *left, now, d),
        // A chain that acts again where the agent stands (see `recovery::again`).
        TimerKind::Grace { .. } if matches!(a.state, SessionState::Prompt { .. }) => {
            recovery::fire(state, a, Trigger::Prompt, None, now, d)
        }
        TimerKind::Grace { .. } if matches!(a.state, SessionState::Error { .. }) => {
            let error = match a.state {
                SessionState::Error { error } => Some(error),
                _ => None,
            };
            recovery::fire(state, a, Trigger::Error, error, now, d)
        }
        TimerKind::Grace { .. } => {
            if a.state != SessionState::Idle {
                return;
            }
            // Any sign of life since it went idle starts the grace again from that moment.
            let last = [Heartbeat::TerminalOutput, Heartbeat::LogWrite, Heartbeat::FileWrite]
                .iter()
                .filter_map(|k| a.heartbeats.get(k))
                .max()
                .copied()
                .filter(|t| *t > a.state_since);
            match last {
                Some(t) if now.millis_since(t) < a.policy.grace_ms => {
                    let at = Timestamp::from_millis(t.as_millis() + a.policy.grace_ms);
                    set_timer(state, d, TimerKind::Grace { agent: a.id.clone() }, at);
                }
                _ => super::classify::turn_ended(state, a, now, d),
            }
        }
        TimerKind::Confirm { message, seq, again, .. } => {
            let unmoved = a.state.is_up() && a.state != SessionState::Running && a.state_seq <= *seq;
            if unmoved && !again {
                d.effect(Effect::PressEnter { session: a.session.clone() });
                d.event(Event::MessageResubmitted { id: *message });
                // Hold the next message until this Enter has had its chance too.
                let at = Timestamp::from_millis(now.as_millis() + super::session::CONFIRM_MS);
                let kind = TimerKind::Confirm { agent: a.id.clone(), message: *message, seq: *seq, again: true };
                set_timer(state, d, kind, at);
            } else if unmoved {
                // Enter twice and still no turn, or none reported (its reports lost to a crash
                // of bosun): the agent is where it was, and its chain acts again.
                super::grace::again(state, a, now, d);
            }
        }
        TimerKind::Startup { checks, .. } => startup_check(state, a, *checks, now, d),
        TimerKind::Quiet { .. } => quiet_check(state, a, now, d),
        // Cleared above: its held messages go out (`session::dispatch`).
        TimerKind::InputSettling { .. } => {}
        TimerKind::Backoff { .. } | TimerKind::Cron { .. } | TimerKind::Poll { .. } | TimerKind::Window { .. } => {}
    }
}
