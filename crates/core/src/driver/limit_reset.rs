//! When a client's session log says a rate limit resets. Codex 0.171 writes a `token_count`
//! event whose `rate_limits` snapshot holds each window of the plan (`primary`, `secondary`):
//! its `used_percent` and `resets_at` (Unix seconds). A window used up (100 %) is a limit
//! reached; it resets at its `resets_at`. Claude Code 2.1.332 records no reset time (its API
//! error line says only that the request was rate limited).

use serde::Deserialize;

use crate::Timestamp;

#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    payload: Option<Payload>,
}

#[derive(Deserialize)]
struct Payload {
    #[serde(rename = "type")]
    kind: Option<String>,
    rate_limits: Option<Limits>,
}

#[derive(Deserialize)]
struct Limits {
    primary: Option<Window>,
    secondary: Option<Window>,
}

#[derive(Deserialize)]
struct Window {
    used_percent: Option<f64>,
    resets_at: Option<i64>,
}

/// The reset of the latest window a Codex `token_count` line says is used up, if any. A time
/// that is not a sane Unix time (negative, or past the year 9999) is none.
pub fn codex(line: &str) -> Option<Timestamp> {
    if !line.contains("rate_limits") {
        return None;
    }
    let l: Line = serde_json::from_str(line).ok()?;
    let p = l.payload.filter(|p| l.kind == "event_msg" && p.kind.as_deref() == Some("token_count"))?;
    let limits = p.rate_limits?;
    [limits.primary, limits.secondary]
        .into_iter()
        .flatten()
        .filter(|w| w.used_percent.is_some_and(|u| u >= 100.0))
        .filter_map(|w| w.resets_at.filter(|s| (0..253_402_300_800).contains(s)))
        .max()
        .map(|s| Timestamp::from_millis(s.unsigned_abs() * 1_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As the real Codex 0.171 wrote it, answered `usage_limit_reached` (docs/clients/codex.md).
    const REACHED: &str = r#"{"timestamp":"2026-11-28T10:29:21.521Z","ordinal":9,"type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"limit_id":"codex","limit_name":null,"primary":{"used_percent":100.0,"window_minutes":300,"resets_at":1795861784},"secondary":null,"credits":null,"individual_limit":null,"spend_control_reached":null,"plan_type":null,"rate_limit_reached_type":null}}}"#;

    #[test]
    fn a_used_up_window_says_when_it_resets() {
        assert_eq!(codex(REACHED), Some(Timestamp::from_millis(1_795_861_784_000)));
        let both = REACHED.replace(
            r#""secondary":null"#,
            r#""secondary":{"used_percent":100.0,"window_minutes":10080,"resets_at":1795900000}"#,
        );
        assert_eq!(codex(&both), Some(Timestamp::from_millis(1_795_900_000_000)), "the later of two");
    }

    #[test]
    fn windows_with_room_nothing_or_nonsense_say_no_reset() {
        assert_eq!(codex(&REACHED.replace("100.0", "42.5")), None, "room left");
        let none =
            r#"{"type":"event_msg","payload":{"type":"token_count","rate_limits":{"primary":null,"secondary":null}}}"#;
        assert_eq!(codex(none), None);
        assert_eq!(codex(&REACHED.replace("1795861784", "-5")), None);
        assert_eq!(codex(&REACHED.replace("1795861784", "99999999999999")), None);
        assert_eq!(codex(&REACHED.replace("1795861784", "\"soon\"")), None);
        assert_eq!(codex(&REACHED.replace("token_count", "task_complete")), None);
        assert_eq!(codex("{not json rate_limits"), None);
    }
}
