//! What the hooks bosun installs report: a tmux session's end, and any agent's own program's
//! report as one generic report (its driver, the event it names, its payload), which only its
//! driver reads (`AgentDriver::take_report`, `read_report`).
//!
//! Compatibility: a hook process or a spool of the version before this one sent Claude's and
//! Codex's reports as variants of their own (`{"hook":"claude",…}`, `{"hook":"codex",…}`); they
//! are still read, as the generic report they are, for one version, so that reports made during
//! an upgrade are not lost. Nothing sends them any more.

use bosun_core::driver::DriverKind;
use serde::{Deserialize, Serialize};

/// A report from a hook bosun installs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "hook", rename_all = "snake_case", from = "Sent")]
pub enum HookEvent {
    PaneDied {
        session: String,
        status: Option<i32>,
        signal: Option<i32>,
    },
    SessionClosed {
        session: String,
    },
    /// An agent's program reported: its driver, the agent it names, the event and its payload
    /// as the program gave them (the hook command bounds them; the driver reads them).
    /// `generation`: the restart count the reporting process was started with, when it says.
    /// `spooled_at` (unix ms) is set on a report kept while no daemon answered.
    Report {
        driver: DriverKind,
        agent: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generation: Option<u32>,
        event: String,
        payload: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        spooled_at: Option<u64>,
    },
}

impl HookEvent {
    /// The agent a report names; none for a session's end.
    pub fn agent(&self) -> Option<&str> {
        match self {
            Self::Report { agent, .. } => Some(agent),
            Self::PaneDied { .. } | Self::SessionClosed { .. } => None,
        }
    }
}

/// What a hook sends, the shapes of the version before this one included.
#[derive(Deserialize)]
#[serde(tag = "hook", rename_all = "snake_case")]
enum Sent {
    PaneDied {
        session: String,
        status: Option<i32>,
        signal: Option<i32>,
    },
    SessionClosed {
        session: String,
    },
    Report {
        driver: DriverKind,
        agent: String,
        #[serde(default)]
        generation: Option<u32>,
        event: String,
        payload: String,
        #[serde(default)]
        spooled_at: Option<u64>,
    },
    /// The previous version's Claude hook report.
    Claude {
        agent: String,
        generation: Option<u32>,
        event: String,
        payload: String,
        #[serde(default)]
        spooled_at: Option<u64>,
    },
    /// The previous version's Codex notify report.
    Codex {
        agent: String,
        payload: String,
    },
}

impl From<Sent> for HookEvent {
    fn from(sent: Sent) -> Self {
        match sent {
            Sent::PaneDied { session, status, signal } => Self::PaneDied { session, status, signal },
            Sent::SessionClosed { session } => Self::SessionClosed { session },
            Sent::Report { driver, agent, generation, event, payload, spooled_at } => {
                Self::Report { driver, agent, generation, event, payload, spooled_at }
            }
            Sent::Claude { agent, generation, event, payload, spooled_at } => {
                Self::Report { driver: DriverKind::Claude, agent, generation, event, payload, spooled_at }
            }
            Sent::Codex { agent, payload } => Self::Report {
                driver: DriverKind::Codex,
                agent,
                generation: None,
                event: NOTIFY.into(),
                payload,
                spooled_at: None,
            },
        }
    }
}

/// The event Codex's notify program reports.
pub const NOTIFY: &str = "notify";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_previous_versions_reports_read_as_the_generic_report() {
        let claude = r#"{"hook":"claude","agent":"a1","generation":2,"event":"Stop","payload":"{}","spooled_at":5}"#;
        let codex = r#"{"hook":"codex","agent":"a2","payload":"{\"type\":\"agent-turn-complete\"}"}"#;
        let read = |s: &str| serde_json::from_str::<HookEvent>(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(
            read(claude),
            HookEvent::Report {
                driver: DriverKind::Claude,
                agent: "a1".into(),
                generation: Some(2),
                event: "Stop".into(),
                payload: "{}".into(),
                spooled_at: Some(5),
            }
        );
        let HookEvent::Report { driver, agent, event, .. } = read(codex) else { panic!("{codex}") };
        assert_eq!((driver, agent.as_str(), event.as_str()), (DriverKind::Codex, "a2", NOTIFY));
    }

    #[test]
    fn a_report_travels_as_itself() {
        let sent = HookEvent::Report {
            driver: DriverKind::Generic,
            agent: "a".into(),
            generation: None,
            event: "done".into(),
            payload: "x".into(),
            spooled_at: None,
        };
        let json = serde_json::to_string(&sent).unwrap_or_default();
        assert_eq!(serde_json::from_str::<HookEvent>(&json).ok(), Some(sent), "{json}");
        assert!(serde_json::from_str::<HookEvent>(
            r#"{"hook":"report","driver":"aider","agent":"a","event":"e","payload":""}"#
        )
        .is_err());
    }
}
