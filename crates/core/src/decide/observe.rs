//! Observations: what drivers saw, turned into the agent's state. A less confident source never
//! overrides a more confident one (the session log alone reports API errors); entering idle, a
//! dialog or an error starts that trigger's recovery chain; idle seen without hooks must last the
//! policy's grace first.

use std::path::PathBuf;

use super::ground::{clear_timers, set_timer, Cx, Decision};
use super::recovery;
use super::session::{came_up, HEARTBEAT_EVERY_MS, QUIET_MS};
use crate::{
    Agent, AgentId, Cause, Effect, Event, Heartbeat, Observation, SessionState, Source, State, TimerKind, Timestamp,
    Trigger, LINE_MAX,
};

/// Screen checks for a start-up dialog before bosun stops looking, `STARTUP_CHECK_MS` apart:
/// 15 s, as a client's start on a busy machine (a resume under load, its dialog drawn late) can
/// take more than the 7.5 s five gave.
pub const STARTUP_CHECKS: u32 = 10;

pub(super) fn observed(
    cx: Cx,
    a: &Agent,
    source: Source,
    obs: &Observation,
    log: Option<&PathBuf>,
    cause: Option<Cause>,
    d: &mut Decision,
) {
    let Cx { state, now } = cx;
    if a.state.is_dead() {
        return;
    }
    if let Some(path) = log.filter(|p| a.log.as_ref() != Some(*p)) {
        d.event(Event::AgentLogFound { id: a.id.clone(), path: path.clone() });
        // A log new to this agent is read from its start: the agent may have written to it
        // (an API error, say) before it said where it is.
        d.effect(Effect::WatchLog { agent: a.id.clone(), path: path.clone(), session_log: true, from_start: true });
    }
    // A log named nowhere bosun can read (Codex's) is looked for once the agent has reported.
    if log.is_none() && source == Source::Log {
        super::session::find_log(a, d);
    }
    // A report from the agent proves its session is up, even before the spawn is confirmed.
    let current = if a.state == SessionState::Starting {
        came_up(state, a, None, now, d);
        SessionState::Running
    } else {
        a.state.clone()
    };
    heartbeat(a, heartbeat_of(source, obs, cause.as_ref()), now, d);
    // What the current state's source said stands against a less confident source; the session
    // log alone reports API errors and interrupted turns, so it may overrule the hooks on those.
    let outranked = a.source.is_some_and(|top| source < top);
    // The log alone reports API errors and interrupted turns; some agents' screens alone show
    // their approval dialogs (Codex's) or a quota's (Gemini CLI's).
    let log_only = source == Source::Log && matches!(obs, Observation::Error { .. } | Observation::Idle)
        || source == Source::Screen
            && a.driver.behaviour().screen_shows_dialogs()
            && matches!(obs, Observation::Prompt { .. } | Observation::Error { .. });
    // A mere sign of life says "working" only for an agent nothing better reports on.
    let telling_activity =
        !matches!(obs, Observation::Activity { .. }) || a.source.is_none_or(|top| top <= Source::Screen);
    if (outranked && !log_only) || !telling_activity {
        return;
    }
    // A dialog only the screen shows ends when the screen no longer shows it: neither a sign
    // of life (the dialog itself redrawn, a file written) nor the log's word that the turn goes
    // on (written before the dialog, and read after it when reading lags) ends it. The log's
    // end of the turn, or an error, still does.
    // So does a start-up dialog (Claude's trust or API-key dialog), which only the screen shows:
    // its redrawing (a key moving its cursor) is output, not work.
    let dialog_held = matches!(a.state, SessionState::Prompt { .. })
        && a.source == Some(Source::Screen)
        && match obs {
            Observation::Activity { .. } => true,
            Observation::Working => source == Source::Log,
            _ => false,
        };
    if dialog_held {
        return;
    }
    let new = match obs {
        // Its first prompt, or its resume's message, on its command line: a turn runs from the
        // start.
        Observation::Started if a.prompt.is_some() && a.restarts == 0 => SessionState::Running,
        Observation::Started if a.restarts > 0 && super::recovery::resumed_with_message(a) => SessionState::Running,
        Observation::Started => SessionState::Idle,
        Observation::Working | Observation::Activity { .. } => SessionState::Running,
        Observation::Idle => SessionState::Idle,
        Observation::Prompt { kind, .. } => SessionState::Prompt { kind: *kind },
        Observation::Error { error } => SessionState::Error { error: *error },
    };
    let asks = match obs {
        Observation::Prompt { asks, .. } => asks.as_ref(),
        _ => None,
    };
    if new == current && a.source == Some(source) && (asks.is_none() || asks == a.asks.as_ref()) {
        return;
    }
    // What a dialog asks is kept with the state it brings.
    let observation = (cause.is_some() || asks.is_some()).then(|| obs.clone());
    d.event(Event::AgentObserved { id: a.id.clone(), state: new.clone(), source, at: now, observation, cause });
    outlived(state, a, &new, d);
    if matches!(obs, Observation::Started) {
        clear_timers(state, a, |k| matches!(k, TimerKind::Startup { .. }), d);
        // Its input takes what is typed only a moment later: messages wait that long.
        let settle = a.driver.behaviour().input_settle_ms();
        if settle > 0 {
            set_timer(
                state,
                d,
                TimerKind::InputSettling { agent: a.id.clone() },
                Timestamp::from_millis(now.as_millis() + settle),
            );
        }
    }
    if new == current {
        return;
    }
    match &new {
        // The first idle of a fresh session is not the end of a turn; a resumed one that gets no
        // message (or one that says it started again after it had work) is idle for good unless
        // its policy acts, after the grace.
        SessionState::Idle if matches!(obs, Observation::Started) && state.never_given_work(a) => {}
        SessionState::Idle if matches!(obs, Observation::Started) => super::grace::grace(state, a, now, d),
        SessionState::Idle if source == Source::Hook => super::classify::turn_ended(state, a, now, d),
        SessionState::Idle => super::grace::grace(state, a, now, d),
        // The chain (an escalation's reason) sees the dialog or the error it is about.
        SessionState::Prompt { .. } => {
            let held = Agent { state: new.clone(), asks: asks.cloned(), ..a.clone() };
            recovery::fire(state, &held, Trigger::Prompt, None, now, d)
        }
        SessionState::Error { error } => {
            let failed = Agent { state: new.clone(), ..a.clone() };
            recovery::fire(state, &failed, Trigger::Error, Some(*error), now, d)
        }
        _ => {}
    }
}

/// What the agent's new state outlives: a grace once it is not idle; a rate limit's wait once it
/// is past its error by other means (a person's message), which ends its account's too; the
/// count of its waits once a turn ends.
fn outlived(state: &State, a: &Agent, new: &SessionState, d: &mut Decision) {
    if *new != SessionState::Idle {
        clear_timers(state, a, |k| matches!(k, TimerKind::Grace { .. }), d);
    }
    if !matches!(new, SessionState::Error { .. }) {
        clear_timers(state, a, |k| matches!(k, TimerKind::Wake { .. }), d);
    }
    // A turn that ends after a rate limit's wait is past it: the next limit's backoff starts
    // again from the first.
    let at_wait = |p: &crate::Progress| {
        let chain = &a.policy.chain(Trigger::Error, Some(crate::AgentError::RateLimited)).0;
        chain.get(p.step).is_some_and(|s| matches!(s.action, crate::Action::Wait { .. }))
    };
    if *new == SessionState::Idle && a.recovery.get(&Trigger::Error).is_some_and(at_wait) {
        d.event(Event::RecoveryReset { id: a.id.clone(), trigger: Trigger::Error });
    }
}

/// Records a heartbeat unless one of its kind was recorded in the last few seconds.
fn heartbeat(a: &Agent, kind: Heartbeat, now: Timestamp, d: &mut Decision) {
    let recent = a.heartbeats.get(&kind).is_some_and(|t| now.millis_since(*t) < HEARTBEAT_EVERY_MS);
    if !recent {
        d.event(Event::Heartbeat { id: a.id.clone(), heartbeat: kind, at: now });
    }
}

/// The sign of life an observation is: a report of the agent's own program (a Claude hook, a
/// Codex notify) is a hook call whatever tier its state is taken at — a Codex notify's is the
/// log's, and it is no log write.
fn heartbeat_of(source: Source, obs: &Observation, cause: Option<&Cause>) -> Heartbeat {
    match (obs, source, cause) {
        (Observation::Activity { heartbeat }, _, _) => *heartbeat,
        (_, Source::Hook, _) | (_, _, Some(Cause::Hook { .. } | Cause::Notify { .. } | Cause::Report { .. })) => {
            Heartbeat::HookCall
        }
        (_, Source::Log, _) => Heartbeat::LogWrite,
        (_, Source::Process | Source::Screen, _) => Heartbeat::TerminalOutput,
    }
}

/// New lines of one of the agent's logs. Their last telling line decides the state; every line
/// is a sign of life.
pub(super) fn log_lines(
    state: &State,
    agent: &AgentId,
    session_log: bool,
    lines: &[String],
    now: Timestamp,
    d: &mut Decision,
) {
    let Some(a) = state.agents.get(agent).filter(|a| a.state.is_up()) else { return };
    let driver = a.driver.behaviour();
    let (source, observations): (Source, Vec<Observation>) = if session_log {
        (Source::Log, lines.iter().map(|l| driver.log_observation(l)).collect())
    } else {
        // Dialogs that reach neither its reports nor its log (Codex's approvals): its screen
        // shows them.
        if driver.screen_shows_dialogs() {
            // It only tells the state: one capture, no waiting for the screen to settle.
            let (agent, session, colors) = (a.id.clone(), a.session.clone(), driver.screen_colors());
            d.effect(Effect::LookAtScreen { agent, session, settled: false, colors });
        }
        let activity = Observation::Activity { heartbeat: Heartbeat::TerminalOutput };
        let seen = match driver.output_matcher(&a.driver) {
            Some(m) => lines.iter().map(|l| m.observe(l).unwrap_or_else(|| activity.clone())).collect(),
            None => vec![activity],
        };
        (Source::Screen, seen)
    };
    // A session log that says what the agent said at the end of a turn (Codex's rollout) says
    // it as soon as it says the turn ended.
    if session_log {
        if let Some(said) = lines.iter().rev().find_map(|l| driver.log_said(l)) {
            super::classify::said(state, agent, &said, d);
        }
        usage(state, a, lines, now, d);
        limit_reset(a, lines, now, d);
    }
    let telling = observations.iter().rposition(|o| !matches!(o, Observation::Activity { .. }));
    if let Some(i) = telling.or(observations.len().checked_sub(1)) {
        let cause = telling.map(|_| {
            let line = head(&lines[i], LINE_MAX);
            let cut = line.len() < lines[i].len();
            if session_log {
                Cause::LogLine { line, cut }
            } else {
                Cause::Output { line, cut }
            }
        });
        observed(Cx { state, now }, a, source, &observations[i], None, cause, d);
    }
    // A generic agent is idle when its output has stopped for a while.
    let quiet_pending = state.timers.values().any(|t| t.kind == TimerKind::Quiet { agent: a.id.clone() });
    if !session_log && driver.start_up(a).idle_when_quiet && !quiet_pending {
        let at = Timestamp::from_millis(now.as_millis() + QUIET_MS + HEARTBEAT_EVERY_MS);
        set_timer(state, d, TimerKind::Quiet { agent: a.id.clone() }, at);
    }
}

/// What lines of the agent's session log say its model calls used: each response counted once,
/// at its largest count (`Usage::changes`).
pub(super) fn usage(state: &State, a: &Agent, lines: &[String], now: Timestamp, d: &mut Decision) {
    let driver = a.driver.behaviour();
    let prices = if state.prices.is_empty() { crate::price::Prices::shipped() } else { &state.prices };
    let mut usage = a.usage.clone();
    for line in lines {
        if let Some(model) = driver.log_model(line).filter(|m| usage.model.as_ref() != Some(m)) {
            d.event(Event::UsageModel { id: a.id.clone(), model: model.clone() });
            usage.model = Some(model);
        }
        let Some(mut used) = driver.log_usage(line) else { continue };
        if used.model.is_none() {
            used.model = usage.model.clone();
        }
        if usage.changes(&used, a.created_at) {
            used.cost = prices.cost(&used);
            usage.record(&used, now);
            d.event(Event::UsageRecorded { id: a.id.clone(), used, at: now });
        }
    }
    super::budget::spent(state, a, &usage, now, d);
}

/// An agent's session log read whole after a restart of bosun: an error it ends on, when bosun
/// has the agent working, was written while bosun was down (Codex's usage limit, say), past the
/// end its log is followed from; it is taken now, with the reset its turn gave. Only so: an
/// agent bosun knows idle, at a dialog or failed has moved past what its log last said (a resume
/// without a message writes nothing), and one paused at its budget, here or by this read's
/// usage, is left as it is. An error bosun saw before it went down changes nothing.
pub(super) fn missed_error(state: &State, a: &AgentId, lines: &[String], now: Timestamp, d: &mut Decision) {
    let Some(a) = d.agent(state, a).filter(|a| a.state == SessionState::Running && a.paused.is_none()).cloned() else {
        return;
    };
    let driver = a.driver.behaviour();
    let observations: Vec<Observation> = lines.iter().map(|l| driver.log_observation(l)).collect();
    let Some(last) = observations.iter().rposition(|o| !matches!(o, Observation::Activity { .. })) else { return };
    let Observation::Error { .. } = &observations[last] else { return };
    // The reset of this turn's limit, not of one an earlier turn met.
    let turn = observations[..last].iter().rposition(|o| matches!(o, Observation::Working)).map_or(0, |i| i + 1);
    limit_reset(&a, &lines[turn..], now, d);
    let line = &lines[last];
    let cause = Cause::LogLine { line: head(line, LINE_MAX), cut: line.len() > LINE_MAX };
    observed(Cx { state, now }, &a, Source::Log, &observations[last], None, Some(cause), d);
}

/// When the rate limit the agent hit resets, if lines of its session log say so: kept within
/// [now, now + 24 h], a time outside it recorded as given.
fn limit_reset(a: &Agent, lines: &[String], now: Timestamp, d: &mut Decision) {
    let driver = a.driver.behaviour();
    let Some(given) = lines.iter().rev().find_map(|l| driver.log_limit_reset(l)) else { return };
    let until = crate::rate_limit::clamp(given, now);
    if a.limited_until != Some(until) {
        let given = (until != given).then_some(given);
        d.event(Event::RateLimitReset { id: a.id.clone(), until, given, at: now });
    }
}

/// The quiet timer fired. Output heartbeats are recorded at most every `HEARTBEAT_EVERY_MS`, so
/// the last output was at most that long after the last recorded one: quiet for sure once
/// `QUIET_MS` more have passed.
pub(super) fn quiet_check(state: &State, a: &Agent, now: Timestamp, d: &mut Decision) {
    if a.state != SessionState::Running {
        return;
    }
    let last = a.heartbeats.get(&Heartbeat::TerminalOutput).copied().unwrap_or(a.state_since);
    let quiet_since = Timestamp::from_millis(last.as_millis() + HEARTBEAT_EVERY_MS);
    if now.millis_since(quiet_since) >= QUIET_MS {
        observed(Cx { state, now }, a, Source::Screen, &Observation::Idle, None, None, d);
    } else {
        let at = Timestamp::from_millis(quiet_since.as_millis() + QUIET_MS);
        set_timer(state, d, TimerKind::Quiet { agent: a.id.clone() }, at);
    }
}

/// The start-up check's timer fired: look at the screen if the agent has not reported in.
pub(super) fn startup_check(state: &State, a: &Agent, checks: u32, now: Timestamp, d: &mut Decision) {
    if !a.state.is_up() || a.source >= Some(Source::Log) || checks >= STARTUP_CHECKS {
        return;
    }
    let (agent, session, colors) = (a.id.clone(), a.session.clone(), a.driver.behaviour().screen_colors());
    d.effect(Effect::CaptureScreen { agent, session, colors });
    let at = Timestamp::from_millis(now.as_millis() + super::session::STARTUP_CHECK_MS);
    set_timer(state, d, TimerKind::Startup { agent: a.id.clone(), checks: checks + 1 }, at);
}

/// The first `max` bytes of `s`, cut at a character boundary.
fn head(s: &str, max: usize) -> String {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}
