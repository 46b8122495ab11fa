//! Agent drivers: how each kind of agent is launched, resumed and read. One trait,
//! `AgentDriver`, with one module per agent (`claude`, `codex`, `generic`) implementing it; the
//! serialized `Driver` record reaches its module only through `Driver::behaviour`. The pure
//! half lives here — command lines, the files an agent needs, the reading of its reports, log
//! lines and screen into `Observation`s; the adapters do the reading and writing.

pub mod argv;
pub mod claude;
pub mod claude_config;
mod claude_hook;
pub mod codex;
pub mod codex_config;
pub mod dialog;
#[cfg(feature = "test-driver")]
pub mod echo;
pub mod gemini;
pub mod gemini_config;
pub mod generic;
pub mod kind;
mod limit_reset;
pub mod opencode;
pub mod opencode_config;
pub mod opencode_dialog;
pub mod pi;
pub mod pi_config;
mod report;
mod session_usage;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use report::{Reading, Report, Screen, StartUp, EVENT_MAX, PAYLOAD_KEPT};

pub use kind::{Driver, DriverKind, UnknownDriver};

use crate::client_check::Client;
use crate::own_config::{OwnConfig, Seed, UserConfig};
use crate::{Agent, Observation};
/// What one kind of agent knows about itself: how it is launched and resumed, the files it
/// needs, and how its reports, session log, output and screen read. Each driver module has one;
/// `Driver::behaviour` is the one place a `Driver` record finds it.
pub trait AgentDriver: Sync {
    fn kind(&self) -> DriverKind;

    /// A new record of this driver: `ids` seed a session id for one that picks its own,
    /// `patterns` are the user's for one that reads output with them.
    fn record(&self, ids: (u64, u64), patterns: generic::Patterns) -> Driver;

    /// How its command line holds a positional prompt, when it takes one there.
    fn grammar(&self) -> Option<&'static argv::Grammar> {
        None
    }

    /// Where the user's config of its program is, as an agent's recorded `env` names it; none
    /// when its program keeps no config, so that a confined agent gets no own config
    /// (`OwnConfig`).
    fn user_config(&self, _env: &BTreeMap<String, String>) -> Option<UserConfig> {
        None
    }

    /// The files of the own config `own` of a confined agent, made from the user's.
    fn config_seeds(&self, _own: &OwnConfig) -> Vec<Seed> {
        Vec::new()
    }

    /// Points its program's variables in `env` at config directory `dir`.
    fn point_config(&self, _dir: &Path, _env: &mut BTreeMap<String, String>) {}

    /// Points its program's variables at `dir` (`POD_CONFIG`) in a pod, beyond `config_env`.
    fn pod_env(&self, _dir: &Path, _env: &mut BTreeMap<String, String>) {}

    /// Why the environment it is given (the variables given and inherited) cannot be its.
    fn check_env(&self, _env: &BTreeMap<String, String>) -> Result<(), String> {
        Ok(())
    }

    /// The value of `key` an agent runs with when it inherits `theirs` from its caller and
    /// bosun sets `ours`: none where bosun's replaces the caller's.
    fn merge_inherited(&self, _key: &str, _theirs: &str, _ours: &str) -> Option<String> {
        None
    }

    /// Points the variables of its program that name where it writes, beyond its config, into
    /// its own config directory `dir`, where it runs confined (a sandbox, a container), whose
    /// home is the user's, read-only: opencode's data, state and cache (`XDG_DATA_HOME`, …).
    fn confined_env(&self, _dir: &Path, _env: &mut BTreeMap<String, String>) {}

    /// The variable its program reads its config directory from (`CLAUDE_CONFIG_DIR`,
    /// `CODEX_HOME`), pointed where bosun keeps the agent's config (a pod's claim).
    fn config_env(&self) -> Option<&'static str> {
        None
    }

    /// Variables its program is given unless the agent's own `--env` says otherwise, so that it
    /// runs as the interactive terminal program it is in bosun's session even when bosun was
    /// started from a CI job (Gemini CLI runs headless, one prompt and out, under `CI=true`).
    fn terminal_env(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// How long after its client reports its start (`Observation::Started`) what is typed into
    /// it reaches its input: a message is held that long (see `TimerKind::InputSettling`).
    fn input_settle_ms(&self) -> u64 {
        0
    }

    /// The client bosun probes (its version, its own login check) before an agent runs it
    /// here, when its program has a login check.
    fn client(&self) -> Option<&'static Client> {
        None
    }

    /// Whether its program gets a config of its own (`OwnConfig`) wherever it runs, not only
    /// when confined: one that takes bosun's hooks from its config only (Gemini CLI).
    fn own_config_always(&self) -> bool {
        false
    }

    /// Whether it reports through hooks, so that idle is certain when reported.
    fn has_hooks(&self) -> bool {
        false
    }

    /// The repository's own settings for it, copied into its workspace when the repository has
    /// them (seed 000's settings sync): Claude's `.claude/settings.json` as its project-local
    /// settings, Gemini CLI's `.gemini/settings.json` as itself.
    fn repo_settings(&self) -> Option<RepoSettings> {
        None
    }

    /// The command line that starts agent `a` (`resume: None`), or restarts it with its
    /// conversation resumed and, when given, a first message. `settings` is the file its
    /// `files` are written to. A resume never repeats the first positional prompt.
    fn command_line(&self, a: &Agent, settings: &Path, resume: Option<Option<&str>>) -> Vec<String>;

    /// Whether an agent of this kind's conversation can be forked (`bosun fork`).
    fn can_fork(&self) -> bool {
        false
    }

    /// The files a fork `a` (`a.fork`) needs where its program looks for them before its first
    /// launch: `(from, to)`.
    fn fork_copies(&self, _a: &Agent) -> Vec<(PathBuf, PathBuf)> {
        Vec::new()
    }

    /// The files agent `a`'s conversation needs where its program looks for them under config
    /// directory `config` (another account's, `switch`): `(from, to)`.
    fn switch_copies(&self, _a: &Agent, _config: &Path) -> Vec<(PathBuf, PathBuf)> {
        Vec::new()
    }

    /// The files written before its session starts.
    fn files(&self, _a: &Agent, _settings: &Path) -> Vec<(PathBuf, String)> {
        Vec::new()
    }

    /// The conversation a resume continues, when it can continue one; resumed, it then takes
    /// its first message on its command line.
    fn conversation(&self, _a: &Agent) -> Option<String> {
        None
    }

    /// What its conversation's file must hold before a running session of it is ended to be
    /// resumed: a client that writes its transcript after its turn ends would otherwise lose
    /// the turn (the file, and a piece of the text it must hold).
    fn resume_waits_for(&self, _a: &Agent) -> Option<(PathBuf, String)> {
        None
    }

    /// As `resume_waits_for`, for the transcript of the agent a fork `a` starts from, before it
    /// is copied.
    fn fork_waits_for(&self, _a: &Agent) -> Option<(PathBuf, String)> {
        None
    }

    /// What it does once its session is up.
    fn start_up(&self, a: &Agent) -> StartUp;

    /// Where to look for its session log when nothing names it (Codex's `sessions` folder).
    fn log_search(&self, _a: &Agent) -> Option<PathBuf> {
        None
    }

    /// The working directory its session log records, by which the log is told from others':
    /// the agent's own, unless its command moves it elsewhere (Codex's `-C DIR`).
    fn log_cwd(&self, a: &Agent) -> PathBuf {
        a.cwd.clone()
    }

    /// Whether each session it starts writes a new session log (a restarted Codex does), so
    /// that a restart forgets the old one.
    fn new_log_per_session(&self) -> bool {
        false
    }

    /// The report its program made for `event` with `payload` (untrusted: any size, any
    /// bytes), as bosun keeps it: bounded, and read into what it needs when it reads it into less.
    fn take_report(&self, event: &str, payload: &str) -> Report {
        Report::bounded(self.kind(), event, payload, report::PAYLOAD_KEPT)
    }

    /// What a report from agent `a` (none when replayed) says.
    fn read_report(&self, _a: Option<&Agent>, _report: &Report) -> Option<Reading> {
        None
    }

    /// The conversation a report of its names, when its client picks it and the driver keeps it
    /// in its record (`Driver::found_conversation`: opencode's session).
    fn named_conversation(&self, _report: &Report) -> Option<String> {
        None
    }

    /// What a line of its session log says.
    fn log_observation(&self, _line: &str) -> Observation {
        Observation::Activity { heartbeat: crate::Heartbeat::LogWrite }
    }

    /// What it said at the end of a turn, when a line of its session log says so.
    fn log_said(&self, _line: &str) -> Option<String> {
        None
    }

    /// The model its client says it asks, when a line of its session log says so and its usage
    /// records do not (Codex's `turn_context`).
    fn log_model(&self, _line: &str) -> Option<String> {
        None
    }

    /// The usage of a model call, when a line of its session log records one.
    fn log_usage(&self, _line: &str) -> Option<crate::usage::Used> {
        None
    }

    /// When the rate limit it hit resets, when a line of its session log says so.
    fn log_limit_reset(&self, _line: &str) -> Option<crate::Timestamp> {
        None
    }

    /// How lines of its terminal output read (beyond being signs of life).
    fn output_matcher(&self, _driver: &Driver) -> Option<generic::Matcher> {
        None
    }

    /// Whether anything tells when it waits for input.
    fn tells_waiting(&self, _driver: &Driver) -> bool {
        true
    }

    /// What its screen shows; none when its screen is not read.
    fn screen(&self, _text: &str) -> Option<Screen> {
        None
    }

    /// Whether its screen is read with its colours (`screen` and `menu` get them): its dialogs
    /// show the selected option by colour alone.
    fn screen_colors(&self) -> bool {
        false
    }

    /// The options of the dialog on its screen, and which one is selected.
    fn menu(&self, screen: &str) -> Option<dialog::Menu> {
        dialog::menu(screen)
    }

    /// Whether what it asks (a prompt) is answered by typing a line of text, as a shell's
    /// `[y/n]` is; else its dialogs pick an option, and a message typed there would pick one.
    fn prompts_take_text(&self) -> bool {
        false
    }

    /// Whether its screen must be looked at whenever it writes output (its approval dialogs
    /// reach nothing else), and a dialog seen there stands against its other sources.
    fn screen_shows_dialogs(&self) -> bool {
        false
    }

    /// The session log whose end says what it said last, when a report does not say it.
    fn said_in_log(&self, _a: &Agent, _report: &Report) -> Option<PathBuf> {
        None
    }

    /// What it said last, from the end of its session log.
    fn said_in_tail(&self, _tail: &str) -> Option<String> {
        None
    }

    /// What its report call prints to answer the permission request `report` makes.
    fn permission_reply(&self, _report: &Report, _answer: &crate::PermissionAnswer) -> Option<String> {
        None
    }

    /// The permission mode agent `a` runs in, for a client that has permission modes.
    /// The keys that stop its turn in flight, as a person would stop it (its conversation
    /// kept), when they are known for its client; none for a client whose key is not.
    fn interrupt_keys(&self) -> Option<&'static [crate::TermKey]> {
        None
    }

    fn runs_in(&self, _a: &Agent) -> Option<crate::RunsIn> {
        None
    }
}

/// A client's project settings file and where a workspace gets its copy (both relative: to the
/// repository and to the workspace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RepoSettings {
    pub file: &'static str,
    pub copy_to: &'static str,
    /// A folder of settings beside it, copied into the workspace's folder of that name
    /// (`workspace::SettingsFolder`).
    pub folder: Option<&'static str>,
}

/// Escape, alone: the key most clients stop a turn with.
static ESC: [crate::TermKey; 1] = [crate::TermKey::Esc];

/// Where the settings file `from` (some driver's `RepoSettings::file` in a repository) is copied
/// to in a workspace, relative to it. A record made before drivers said so holds Claude's.
pub fn settings_copy_to(from: &Path) -> PathBuf {
    let settings = DriverKind::ALL.iter().filter_map(|k| k.behaviour().repo_settings());
    let copy_to = settings.filter(|s| from.ends_with(s.file)).map(|s| s.copy_to).next();
    PathBuf::from(copy_to.unwrap_or(claude::SETTINGS_LOCAL))
}

impl DriverKind {
    /// The driver of this kind: the one registration of a driver module.
    pub fn behaviour(self) -> &'static dyn AgentDriver {
        match self {
            Self::Claude => &claude::Claude,
            Self::Codex => &codex::Codex,
            Self::Gemini => &gemini::Gemini,
            Self::Pi => &pi::Pi,
            Self::Opencode => &opencode::Opencode,
            Self::Generic => &generic::Generic,
            #[cfg(feature = "test-driver")]
            Self::Echo => &echo::Echo,
        }
    }
}

impl Driver {
    /// What this driver knows and does.
    pub fn behaviour(&self) -> &'static dyn AgentDriver {
        self.kind().behaviour()
    }

    /// The user's command and first prompt as bosun keeps them: a prompt given on the command
    /// line (`claude "fix it"`) is taken out of it, so that it is given at start only and a
    /// resume sends its own message instead. An explicit `prompt` leaves the command as it is.
    pub fn split_prompt(&self, command: Vec<String>, prompt: Option<String>) -> (Vec<String>, Option<String>) {
        match (prompt, self.behaviour().grammar()) {
            (Some(p), _) => (command, Some(p)),
            (None, Some(grammar)) => grammar.split_prompt(&command),
            (None, None) => (command, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_driver_is_reached_through_its_registration() {
        let drivers = [
            Driver::Claude { session_id: "s".into() },
            Driver::Codex,
            Driver::Gemini { session_id: "s".into() },
            Driver::Pi { session_id: "s".into() },
            Driver::Opencode { session: None },
            Driver::Generic { patterns: generic::Patterns::default() },
        ];
        for d in &drivers {
            assert_eq!(d.behaviour().kind(), d.kind(), "{d:?}");
            assert_eq!(d.kind().behaviour().record((1, 2), generic::Patterns::default()).kind(), d.kind());
        }
        for &kind in DriverKind::ALL {
            assert_eq!(kind.behaviour().kind(), kind);
            assert_eq!(kind.name().parse(), Ok(kind));
            let serialized = serde_json::to_string(&kind).unwrap_or_default();
            assert_eq!(serialized, format!("\"{}\"", kind.name()), "its name is its serialized name");
        }
        assert!("aider".parse::<DriverKind>().is_err());
    }
}
