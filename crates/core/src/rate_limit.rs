//! Rate-limit windows: when a limited agent is woken. A reset time its client gave is kept
//! within reason (`clamp`); the wake is that time plus a jitter, or, when no time was given,
//! an exponential, bounded backoff plus a jitter. The core has no randomness: the jitter is
//! derived from the agent's id and the attempt, the same on replay and spread across agents.

use crate::{AgentId, Timestamp};

/// The furthest ahead a reset time is believed: a client's time beyond it is taken as this.
pub const RESET_MOST_MS: u64 = 24 * 3_600_000;
/// After a known reset, the agent is woken this long later at the least …
pub const AFTER_RESET_MS: u64 = 1_000;
/// … and at most this much later again (the jitter), so that agents woken by the same reset
/// do not all call at once.
pub const RESET_JITTER_MS: u64 = 1_000;
/// The first backoff when the client gave no reset time; it doubles with each attempt …
pub const BACKOFF_FIRST_MS: u64 = 30_000;
/// … up to this.
pub const BACKOFF_MOST_MS: u64 = 30 * 60_000;
/// The message a woken agent is given when the step names none.
pub const WOKEN_MESSAGE: &str = "The rate limit has reset. Carry on where you left off.";

/// What an agent moved to another account (`switch`) is told first, unless its step says.
pub const SWITCHED_MESSAGE: &str =
    "The rate limit was reached on the account you were on; you are on another one now. Carry on where you left off.";

/// A reset time a client gave, kept within [now, now + 24 h].
pub fn clamp(given: Timestamp, now: Timestamp) -> Timestamp {
    let most = now.as_millis().saturating_add(RESET_MOST_MS);
    Timestamp::from_millis(given.as_millis().clamp(now.as_millis(), most))
}

/// When a limited agent is woken for its `attempt`th wait (1 for the first): just after the
/// reset when it is known, else after the backoff; each plus the agent's jitter.
pub fn wake_at(agent: &AgentId, attempt: u32, until: Option<Timestamp>, now: Timestamp) -> Timestamp {
    let at = match until {
        Some(until) => until.max(now).as_millis() + AFTER_RESET_MS + jitter(agent, attempt, RESET_JITTER_MS),
        None => {
            let wait = backoff_ms(attempt);
            now.as_millis() + wait + jitter(agent, attempt, wait / 5)
        }
    };
    Timestamp::from_millis(at)
}

/// The backoff before the `attempt`th try (1 for the first): doubling from the first, bounded.
pub fn backoff_ms(attempt: u32) -> u64 {
    let doublings = attempt.saturating_sub(1).min(16);
    BACKOFF_FIRST_MS.saturating_mul(1 << doublings).min(BACKOFF_MOST_MS)
}

/// A number in [0, span) derived from the agent's id and the attempt (FNV-1a, then mixed).
pub fn jitter(agent: &AgentId, attempt: u32, span: u64) -> u64 {
    if span == 0 {
        return 0;
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in agent.as_str().bytes().chain(attempt.to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    // splitmix64's finish: nearby ids land far apart.
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    h % span
}

/// A state as `ls` and `show` say it: a rate limit with its reset, when known
/// (`error(rate_limited until 12:04:31)`).
pub fn state_label(state: &crate::SessionState, until: Option<Timestamp>) -> String {
    match (state, until) {
        (crate::SessionState::Error { error }, Some(t)) => format!("error({} until {})", error.label(), clock(t)),
        _ => state.label(),
    }
}

/// `HH:MM:SS` (UTC) of a time, as `ls` and `show` show a reset.
pub fn clock(t: Timestamp) -> String {
    let s = t.as_millis() / 1_000 % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3_600, s % 3_600 / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> AgentId {
        serde_json::from_value(serde_json::Value::from(s)).unwrap()
    }

    #[test]
    fn a_reset_in_the_past_or_years_away_is_kept_within_a_day() {
        let now = Timestamp::from_millis(1_000_000_000);
        assert_eq!(clamp(Timestamp::from_millis(5), now), now);
        let years = Timestamp::from_millis(now.as_millis() + 3 * 365 * 86_400_000);
        assert_eq!(clamp(years, now).as_millis(), now.as_millis() + RESET_MOST_MS);
        let soon = Timestamp::from_millis(now.as_millis() + 30_000);
        assert_eq!(clamp(soon, now), soon);
    }

    #[test]
    fn a_known_reset_wakes_just_after_it_and_a_backoff_doubles_to_its_bound() {
        let now = Timestamp::from_millis(1_000_000);
        let until = Timestamp::from_millis(now.as_millis() + 30_000);
        for n in 0..50 {
            let at = wake_at(&id(&format!("a-{n}")), 1, Some(until), now).as_millis();
            assert!(at >= until.as_millis() + AFTER_RESET_MS, "never before the reset");
            assert!(at < until.as_millis() + AFTER_RESET_MS + RESET_JITTER_MS);
        }
        assert_eq!((backoff_ms(1), backoff_ms(2), backoff_ms(3)), (30_000, 60_000, 120_000));
        assert_eq!((backoff_ms(7), backoff_ms(1_000)), (BACKOFF_MOST_MS, BACKOFF_MOST_MS));
        let at = wake_at(&id("a"), 2, None, now).as_millis() - now.as_millis();
        assert!((60_000..72_000).contains(&at), "{at}");
    }

    #[test]
    fn the_jitter_is_the_same_on_replay_and_spread_across_agents_and_attempts() {
        assert_eq!(jitter(&id("claude-1"), 1, 2_000), jitter(&id("claude-1"), 1, 2_000));
        let spread: std::collections::BTreeSet<u64> =
            (0..20).map(|n| jitter(&id(&format!("claude-{n}")), 1, 1_000) / 50).collect();
        assert!(spread.len() >= 10, "twenty agents fall into at least ten of twenty slots: {spread:?}");
        let attempts: std::collections::BTreeSet<u64> = (1..20).map(|n| jitter(&id("x"), n, 2_000)).collect();
        assert!(attempts.len() >= 15, "{attempts:?}");
        assert_eq!(jitter(&id("x"), 1, 0), 0);
    }

    #[test]
    fn a_clock_time_is_shown_in_utc() {
        let t = Timestamp::from_millis(1_795_854_600_000 + 3_725_000);
        assert_eq!(clock(t), "09:32:05");
        let limited = crate::SessionState::Error { error: crate::AgentError::RateLimited };
        assert_eq!(state_label(&limited, Some(t)), "error(rate_limited until 09:32:05)");
        assert_eq!(state_label(&limited, None), "error(rate_limited)");
        assert_eq!(state_label(&crate::SessionState::Idle, Some(t)), "idle");
    }
}
