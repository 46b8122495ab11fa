//! Reports: what an agent's own program tells bosun (a Claude hook call, a Codex `notify` call,
//! any hook-reporting driver's call), as one kind of input — the driver, the event it names and
//! its payload — and what its driver reads in one. Only the driver reads a payload: it keeps
//! what it needs of one as it arrives (`AgentDriver::take_report`, bounded and checked) and reads
//! that (`AgentDriver::read_report`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::DriverKind;
use crate::{Cause, Observation, Source};

/// A report from an agent's program: its driver, the event it names, and its payload as its
/// driver keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub driver: DriverKind,
    pub event: String,
    pub payload: String,
}

/// The most of a report's event name kept.
pub const EVENT_MAX: usize = 100;
/// The most of a report's payload a driver keeps unless it reads it into less.
pub const PAYLOAD_KEPT: usize = crate::LINE_MAX;

impl Report {
    /// A report as it arrived, its event and payload cut to what any driver keeps at most
    /// (`EVENT_MAX`, `max` bytes of payload), each on a character's edge.
    pub fn bounded(driver: DriverKind, event: &str, payload: &str, max: usize) -> Self {
        Self { driver, event: cut(event, EVENT_MAX).to_owned(), payload: cut(payload, max).to_owned() }
    }

    /// The driver whose program sends it.
    pub fn kind(&self) -> DriverKind {
        self.driver
    }

    /// What the report was, for a person: `hook Stop`, `notify {…}`, `report done` (a payload
    /// as `short` shortens it).
    pub fn describe(&self, short: impl Fn(&str) -> String) -> String {
        match self.driver {
            DriverKind::Claude => format!("hook {}", self.event),
            DriverKind::Codex => format!("notify {}", short(&self.payload)),
            _ => format!("report {}", self.event),
        }
    }

    /// The cause a state change read from this report records: Claude's and Codex's in the
    /// shapes the log has always held them in (`hook`, `notify`), any other driver's as a
    /// `report`.
    pub fn cause(&self) -> Cause {
        match self.driver {
            DriverKind::Claude => {
                Cause::Hook { payload: Box::new(serde_json::from_str(&self.payload).unwrap_or_default()) }
            }
            DriverKind::Codex => Cause::Notify { payload: self.payload.clone() },
            _ => Cause::Report { event: self.event.clone(), payload: self.payload.clone() },
        }
    }

    /// The report a recorded cause was read from, when it was one, for an agent of `driver`.
    pub fn from_cause(cause: &Cause, driver: DriverKind) -> Option<Self> {
        match cause {
            Cause::Hook { payload } => {
                let event = payload["hook_event_name"].as_str().unwrap_or_default().to_owned();
                Some(Self { driver: DriverKind::Claude, event, payload: payload.to_string() })
            }
            Cause::Notify { payload } => {
                Some(Self { driver: DriverKind::Codex, event: "notify".into(), payload: payload.clone() })
            }
            Cause::Report { event, payload } => Some(Self { driver, event: event.clone(), payload: payload.clone() }),
            Cause::LogLine { .. } | Cause::Output { .. } => None,
        }
    }
}

/// At most `max` bytes of `s`, cut on a character's edge.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// What a driver read in a report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// The state it reports, at what tier; none when it reports none.
    pub observation: Option<(Source, Observation)>,
    /// What the agent said at the end of the turn it reports.
    pub said: Option<String>,
    /// A permission a policy may answer: the tool, and what it is used on.
    pub permission: Option<(String, Option<String>)>,
    /// The agent's session log, when the report names it.
    pub log: Option<PathBuf>,
    /// The permission mode the report says the client runs in.
    pub mode: Option<crate::PermissionMode>,
    /// A call the client refused by itself (its classifier), when the report says so.
    pub blocked: Option<crate::Refusal>,
}

/// What a driver reads on an agent's screen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Screen {
    /// The folder-trust dialog shows.
    pub trust: bool,
    /// A dialog that asks for something (setup, an approval); none for any other screen.
    pub seen: Option<Observation>,
}

/// What an agent's driver does once its session is up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StartUp {
    /// Look at its screen for a start-up dialog, a few times, until it reports in.
    pub look_at_screen: bool,
    /// Look for its session log at once.
    pub find_log: bool,
    /// It waits for input at once: idle, as its log tier says.
    pub waits_for_input: bool,
    /// Its first prompt is typed, not given on its command line.
    pub types_prompt: bool,
    /// It is idle once its output stops for a while.
    pub idle_when_quiet: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_recorded_as_the_cause_it_always_was_and_read_again_from_it() {
        let hook = DriverKind::Claude.behaviour().take_report("Stop", r#"{"hook_event_name":"Stop"}"#);
        let notify = DriverKind::Codex.behaviour().take_report("notify", r#"{"type":"agent-turn-complete"}"#);
        for report in [hook, notify] {
            let cause = report.cause();
            assert_eq!(Report::from_cause(&cause, report.kind()).as_ref(), Some(&report));
            let json = serde_json::to_value(&cause).unwrap_or_default();
            let from = if report.kind() == DriverKind::Claude { "hook" } else { "notify" };
            assert_eq!(json["from"], from, "the cause's serialized shape is kept: {json}");
            let reading = report.kind().behaviour().read_report(None, &report);
            assert_eq!(reading.and_then(|r| r.observation).map(|(_, o)| o), Some(Observation::Idle));
        }
        let recorded = r#"{"from":"hook","payload":{"hook_event_name":"Stop","last_assistant_message":"done"}}"#;
        let cause: Cause = serde_json::from_str(recorded).unwrap_or(Cause::Notify { payload: String::new() });
        let report = Report::from_cause(&cause, DriverKind::Claude).unwrap_or_else(|| panic!("{cause:?}"));
        assert_eq!(report.event, "Stop");
        let said = report.kind().behaviour().read_report(None, &report).and_then(|r| r.said);
        assert_eq!(said.as_deref(), Some("done"), "a hook the log recorded reads as it did");
        assert_eq!(Report::from_cause(&Cause::LogLine { line: "x".into(), cut: false }, DriverKind::Claude), None);
    }

    #[test]
    fn a_report_is_cut_on_a_character_edge() {
        let r = Report::bounded(DriverKind::Generic, &"é".repeat(80), &"ü".repeat(10), 5);
        assert!(r.event.len() <= EVENT_MAX && r.event.chars().all(|c| c == 'é'));
        assert_eq!(r.payload, "üü");
    }
}
