//! Reports: what an agent's own program tells bosun (a Claude hook call, a Codex `notify` call),
//! as one kind of input, and what its driver reads in one.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::claude::HookPayload;
use super::DriverKind;
use crate::{Cause, Observation, Source};

/// A report from an agent's program, carrying its raw payload.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Report {
    /// A Claude hook call.
    ClaudeHook(Box<HookPayload>),
    /// Codex called its `notify` program with this JSON.
    CodexNotify(String),
}

impl Report {
    /// The driver whose program sends this kind of report.
    pub fn kind(&self) -> DriverKind {
        match self {
            Self::ClaudeHook(_) => DriverKind::Claude,
            Self::CodexNotify(_) => DriverKind::Codex,
        }
    }

    /// What the report was, for a person: `hook Stop`, `notify {…}` (its payload as `short`
    /// shortens it).
    pub fn describe(&self, short: impl Fn(&str) -> String) -> String {
        match self {
            Self::ClaudeHook(payload) => format!("hook {}", payload.hook_event_name),
            Self::CodexNotify(payload) => format!("notify {}", short(payload)),
        }
    }

    /// The cause a state change read from this report records.
    pub fn cause(&self) -> Cause {
        match self {
            Self::ClaudeHook(payload) => Cause::Hook { payload: payload.clone() },
            Self::CodexNotify(payload) => Cause::Notify { payload: payload.clone() },
        }
    }

    /// The report a recorded cause was read from, when it was one.
    pub fn from_cause(cause: &Cause) -> Option<Self> {
        match cause {
            Cause::Hook { payload } => Some(Self::ClaudeHook(payload.clone())),
            Cause::Notify { payload } => Some(Self::CodexNotify(payload.clone())),
            Cause::LogLine { .. } | Cause::Output { .. } => None,
        }
    }
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
        let hook =
            Report::ClaudeHook(Box::new(HookPayload { hook_event_name: "Stop".into(), ..HookPayload::default() }));
        let notify = Report::CodexNotify(r#"{"type":"agent-turn-complete"}"#.into());
        for report in [hook, notify] {
            let cause = report.cause();
            assert_eq!(Report::from_cause(&cause).as_ref(), Some(&report));
            let json = serde_json::to_value(&cause).unwrap_or_default();
            let from = if report.kind() == DriverKind::Claude { "hook" } else { "notify" };
            assert_eq!(json["from"], from, "the cause's serialized shape is kept: {json}");
            let reading = report.kind().behaviour().read_report(None, &report);
            assert_eq!(reading.and_then(|r| r.observation).map(|(_, o)| o), Some(Observation::Idle));
        }
        assert_eq!(Report::from_cause(&Cause::LogLine { line: "x".into(), cut: false }), None);
    }
}
