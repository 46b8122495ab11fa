//! A driver for tests only (feature `test-driver`): the smallest hook-reporting driver, and what
//! adding one costs. Its program is the user's command, given as its last argument the shell
//! command prefix that reports for it (`… hook report echo <agent>`, then the event, then the
//! payload or nothing and the payload on stdin). It reports `working`; `idle`, the payload what it
//! said; `asks`, the payload the permission it asks for. Anything else is a sign of life.
//!
//! Its program keeps a config directory (`ECHO_CONFIG_DIR`, else `~/.echo`): a confined agent
//! gets one of its own, its `login` copied and its `settings` made from the user's with the
//! folders it trusts. A program called `echo-agent` is probed before it starts here, as Claude
//! Code and Codex are: its `--version`, and its own login check (`echo-agent login status`),
//! unless `ECHO_KEY` is set.
//!
//! All it took besides this file: its kind and record (`kind.rs`: a `DriverKind` and a `Driver`
//! variant, its name) and its registration (`DriverKind::behaviour` in `mod.rs`). Its reports
//! reach it through the hook command, spool, pod relay, wire and daemon untouched; its config
//! and login check through the sandbox, the containers, the pods and the start's probe.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{AgentDriver, Driver, DriverKind, Reading, Report, StartUp};
use crate::client_check::Client;
use crate::own_config::{var, OwnConfig, Seed, SeedError, Seeding, UserConfig};
use crate::{Heartbeat, Observation, PromptKind, Source};

/// The variable its program reads its config directory from.
const CONFIG_VAR: &str = "ECHO_CONFIG_DIR";

/// `echo-agent`, as bosun probes it.
static CLIENT: Client = Client {
    program: "echo-agent",
    package: "echo-agent",
    login_check: ["login", "status"],
    key_vars: &["ECHO_KEY"],
    log_in: "run `echo-agent login`, or set ECHO_KEY",
    config: None,
    otherwise: crate::client_check::no_other_way,
    login_said: None,
    probe_env: &[],
};

/// Its `settings`: the user's lines, then the folders it trusts, one a line.
fn settings(user: Option<&str>, trusted: &[PathBuf]) -> Result<Option<String>, SeedError> {
    let trust: String = trusted.iter().map(|dir| format!("trust {}\n", dir.display())).collect();
    Ok(Some(format!("{}{trust}", user.unwrap_or_default())))
}

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

    fn user_config(&self, env: &BTreeMap<String, String>) -> Option<UserConfig> {
        let dir = var(env, CONFIG_VAR).or_else(|| var(env, "HOME").map(|h| h.join(".echo")));
        Some(UserConfig { dir, state: None })
    }

    fn config_seeds(&self, own: &OwnConfig) -> Vec<Seed> {
        vec![
            Seed { name: "login", from: own.user_file("login"), how: Seeding::Copy },
            Seed { name: "settings", from: own.user_file("settings"), how: Seeding::Made(settings) },
        ]
    }

    fn point_config(&self, dir: &Path, env: &mut BTreeMap<String, String>) {
        env.insert(CONFIG_VAR.into(), dir.display().to_string());
    }

    fn config_env(&self) -> Option<&'static str> {
        Some(CONFIG_VAR)
    }

    fn client(&self) -> Option<&'static Client> {
        Some(&CLIENT)
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

    #[test]
    fn its_config_and_login_check_are_its_own_and_reach_what_claudes_and_codexs_do() {
        let env: BTreeMap<String, String> = [("HOME".to_owned(), "/home/u".to_owned())].into();
        let own = OwnConfig::new(DriverKind::Echo, Path::new("/s/agents/a"), &env).expect("it keeps a config");
        assert_eq!(own.dir, Path::new("/s/agents/a/config"));
        assert_eq!(own.user.as_deref(), Some(Path::new("/home/u/.echo")));
        let seeds = own.seeds();
        assert_eq!(seeds.iter().map(|s| s.name).collect::<Vec<_>>(), ["login", "settings"]);
        assert_eq!(seeds[0].from.as_deref(), Some(Path::new("/home/u/.echo/login")));
        let made = seeds[1].how.make(Some("theme dark\n"), &[PathBuf::from("/s/ws")]).unwrap();
        assert_eq!(made.as_deref(), Some("theme dark\ntrust /s/ws\n"));
        let mut pointed = env.clone();
        own.point(&mut pointed);
        assert_eq!(pointed.get(CONFIG_VAR).map(String::as_str), Some("/s/agents/a/config"));

        use crate::client_check::{assess, Auth, Probe, Ran};
        assert!(Client::of("/opt/bin/echo-agent").is_some_and(|c| std::ptr::eq(c, &CLIENT)));
        let probe = Probe {
            version: Ran::Ok("1.0.0".into()),
            login: Ran::Failed { code: Some(1), said: "Not logged in".into() },
        };
        let nothing = |_: &str| false;
        let refused = assess("/opt/bin/echo-agent", &probe, &Auth { set: &nothing, config: None, args: &[] });
        let line = refused.refusal.expect("refused");
        assert!(line.contains("echo-agent login") && line.contains("ECHO_KEY"), "{line}");
        let key = |v: &str| v == "ECHO_KEY";
        assert_eq!(assess("echo-agent", &probe, &Auth { set: &key, config: None, args: &[] }).refusal, None);
    }
}
