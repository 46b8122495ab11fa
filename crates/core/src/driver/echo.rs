//! A driver for tests only (feature `test-driver`): the smallest hook-reporting driver, and what
//! adding one costs. Its program is the user's command, given as its last argument the shell
//! command prefix that reports for it (`… hook report echo <agent>`, then the event, then the
//! payload or nothing and the payload on stdin). It reports `working`; `idle`, the payload what it
//! said; `asks`, the payload the permission it asks for. Anything else is a sign of life.
//!
//! All it took besides this file: its kind and record (`kind.rs`: a `DriverKind` and a `Driver`
//! variant, its name) and its registration (`DriverKind::behaviour` in `mod.rs`). Its reports
//! reach it through the hook command, spool, pod relay, wire and daemon untouched.

use std::path::Path;

use super::{AgentDriver, Driver, DriverKind, Reading, Report, StartUp};
use crate::{Heartbeat, Observation, PromptKind, Source};

/// The test driver.
pub struct Echo;

impl AgentDriver for Echo {
    fn kind(&self) -> DriverKind {
        DriverKind::Echo
    }

    fn record(&self, _ids: (u64, u64), _patterns: super::generic::Patterns) -> Driver {
        Driver::Echo
    }

    fn has_hooks(&self) -> bool {
        true
    }

    /// The user's command, and the command that reports for it.
    fn command_line(&self, a: &crate::Agent, _settings: &Path, _resume: Option<Option<&str>>) -> Vec<String> {
        let mut argv = a.command.clone();
        argv.push(format!("{} report echo {}", a.hook_command, a.id));
        argv
    }

    /// It gets its first prompt typed; its reports say the rest.
    fn start_up(&self, _a: &crate::Agent) -> StartUp {
        StartUp { types_prompt: true, ..StartUp::default() }
    }

    fn read_report(&self, _a: Option<&crate::Agent>, report: &Report) -> Option<Reading> {
        if report.driver != DriverKind::Echo {
            return None;
        }
        let text = || Some(report.payload.trim().to_owned()).filter(|t| !t.is_empty());
        let (observation, said, permission) = match report.event.as_str() {
            "working" => (Observation::Working, None, None),
            "idle" => (Observation::Idle, text(), None),
            "asks" => (Observation::Prompt { kind: PromptKind::Permission, asks: text() }, None, text()),
            _ => (Observation::Activity { heartbeat: Heartbeat::HookCall }, None, None),
        };
        let permission = permission.map(|tool| (tool, None));
        Some(Reading { observation: Some((Source::Hook, observation)), said, permission, ..Reading::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_reports_read_as_its_events_say_and_no_other_drivers_do() {
        let read = |event: &str, payload: &str| {
            Echo.read_report(None, &Echo.take_report(event, payload)).and_then(|r| r.observation).map(|(_, o)| o)
        };
        assert_eq!(read("working", ""), Some(Observation::Working));
        assert_eq!(read("idle", "done"), Some(Observation::Idle));
        assert_eq!(read("\u{0}rm -rf", ""), Some(Observation::Activity { heartbeat: Heartbeat::HookCall }));
        let huge = Echo.take_report("idle", &"x".repeat(super::super::PAYLOAD_KEPT * 4));
        assert_eq!(huge.payload.len(), super::super::PAYLOAD_KEPT, "bounded as any driver's");
        let claude = DriverKind::Claude.behaviour().take_report("Stop", "{}");
        assert_eq!(Echo.read_report(None, &claude), None);
    }
}
