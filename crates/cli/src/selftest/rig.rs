//! What a check is (`Check`, `Fail`, `CHECK_TIME`) and one check's rig: its model server and
//! client config (`prepare`), its agent started through the private bosun (`start`), and the
//! waits and looks the checks (`checks.rs`) are made of.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bosun_core::{Agent, Policy, SessionState};
use bosun_model_server::clients::{ClaudeConfig, ClientEnv, CodexConfig, GeminiConfig};
use bosun_model_server::pi_config::PiConfig;
use bosun_model_server::{Api, ModelServer, OpencodeConfig, Reply};
use bosun_wire::StartAgent;

use super::place::Place;
use super::ClientName;
use crate::client::Client;

/// How long one check may take (a check of a client that works takes 2–10 s on two cores).
pub const CHECK_TIME: Duration = Duration::from_secs(20);
/// How often an agent's state is looked at.
pub(super) const POLL: Duration = Duration::from_millis(10);
/// How long a state that is not the one awaited has to last to count as where the agent settled.
const SETTLED: Duration = Duration::from_millis(1500);

/// One check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    Turn,
    Shell,
    Permission,
    RateLimit,
    Resume,
    Trust,
}

impl Check {
    pub const ALL: [Check; 6] = [Self::Turn, Self::Shell, Self::Permission, Self::RateLimit, Self::Resume, Self::Trust];

    /// The checks of `client`: all of them, but the folder-trust dialog's for opencode, which has
    /// none (and whose every start takes seconds: the run keeps within its time).
    pub fn of(client: ClientName) -> &'static [Check] {
        match client {
            ClientName::Opencode => &Self::ALL[..5],
            _ => &Self::ALL,
        }
    }

    /// How long it may take for `client`: a resume of opencode, which starts it twice (each
    /// start 4–9 s on two busy cores), twice as long as any other.
    pub fn time(self, client: ClientName) -> Duration {
        let time = match (self, client) {
            (Self::Resume, ClientName::Opencode) => CHECK_TIME * 2,
            _ => CHECK_TIME,
        };
        time * super::patience()
    }

    pub fn title(self, client: ClientName) -> &'static str {
        match (self, client) {
            (Self::Turn, _) => "start → turn end → idle",
            (Self::Shell, _) => "a shell tool call runs",
            (Self::Permission, ClientName::Claude) => "a permission request answered by a policy",
            // pi asks nothing before a tool runs: bosun's extension asks the policy.
            (Self::Permission, ClientName::Pi) => "a tool call answered by a policy",
            (Self::Permission, _) => "an approval dialog → prompt(permission)",
            (Self::RateLimit, _) => "a 429 → error(rate_limited)",
            (Self::Resume, _) => "kill -9 → resume with the conversation",
            // bosun trusts its workspace in the Gemini home it makes for the agent.
            (Self::Trust, ClientName::Gemini | ClientName::Opencode) => "a folder new to it: no trust dialog",
            // The repository has project resources (`.pi/settings.json`): bosun's extension trusts them.
            (Self::Trust, ClientName::Pi) => "project resources: trusted by its extension",
            (Self::Trust, _) => "the folder-trust dialog, fresh config",
        }
    }
}

/// A check that went wrong: what bosun saw instead.
pub(super) struct Fail(pub(super) String);

/// One check's agent: its model server, its client's config, and the agent once started.
pub(super) struct Rig<'a> {
    pub(super) place: &'a Place,
    pub(super) client: &'a Client,
    pub(super) name: ClientName,
    pub(super) program: &'a Path,
    pub(super) check: Check,
    pub(super) deadline: Instant,
    pub(super) server: Option<ModelServer>,
    pub(super) env: Option<ClientEnv>,
    pub(super) agent: Option<String>,
}

/// How a config is made.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Config {
    /// The repository trusted, nothing else asked.
    Trusted,
    /// Nothing trusted: a fresh config.
    Fresh,
    /// Trusted, and Claude's bypass mode accepted.
    Bypass,
    /// Trusted, and Codex asks before it runs a command outside its sandbox (Gemini CLI asks
    /// by default).
    Asking,
}

impl Rig<'_> {
    /// A model server and a config of this check's own, with `replies` queued.
    pub(super) fn prepare(&mut self, config: Config, replies: &[Reply]) -> Result<(), Fail> {
        let api = match self.name {
            ClientName::Claude | ClientName::Pi | ClientName::Opencode => Api::Anthropic,
            ClientName::Codex => Api::OpenAi,
            ClientName::Gemini => Api::Gemini,
        };
        let server = ModelServer::start(api).map_err(|e| Fail(e.to_string()))?;
        for reply in replies {
            server.push(reply.clone());
        }
        // opencode's checks share one: it installs its plugin package (from the npm registry)
        // into a config directory new to it before it loads a plugin, bosun's too.
        let dir = match self.name {
            ClientName::Opencode => self.place.config_dir("opencode"),
            _ => self.place.config_dir(&format!("{}-{:?}", self.name.program(), self.check).to_lowercase()),
        };
        let repo = self.place.repo();
        let env = match self.name {
            ClientName::Claude => {
                let mut c = ClaudeConfig::new(&server, &dir);
                if config != Config::Fresh {
                    c = c.trust(&repo);
                }
                if config == Config::Bypass {
                    c = c.accept_bypass_permissions();
                }
                c.try_write()
            }
            ClientName::Codex => {
                let mut c = CodexConfig::new(&server, &dir);
                if config != Config::Fresh {
                    c = c.trust(&repo);
                }
                if config == Config::Asking {
                    c = c.asking_approval();
                }
                c.try_write()
            }
            // Gemini CLI gets a home of bosun's making (its workspace trusted there) and asks
            // before a shell command by default.
            ClientName::Gemini => GeminiConfig::new(&server, &dir).try_write(),
            // pi: a provider of its models.json for the server, its retries off; it trusts nothing.
            ClientName::Pi => PiConfig::new(&server, &dir).try_write(),
            // opencode asks nothing at start; asking, before a shell command.
            ClientName::Opencode => match config {
                Config::Asking => OpencodeConfig::new(&server, &dir).asking().try_write(),
                _ => OpencodeConfig::new(&server, &dir).try_write(),
            },
        };
        self.env = Some(env.map_err(|e| Fail(e.to_string()))?);
        self.server = Some(server);
        Ok(())
    }

    /// Starts the agent: the client with `argv` after it, in a worktree of the repository, with
    /// this process's environment and the client's config.
    pub(super) fn start(&mut self, policy: Policy, argv: &[&str]) -> Result<String, Fail> {
        let env = self.env.as_ref().ok_or_else(|| Fail("no config".into()))?;
        let mut inherit: std::collections::BTreeMap<String, String> =
            std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
        inherit.extend(env.vars.clone());
        let mut command = vec![self.program.display().to_string()];
        command.extend(argv.iter().map(|a| (*a).to_owned()));
        // opencode's prompt is `--prompt`'s (its word alone names a directory).
        if self.name == ClientName::Opencode && !argv.is_empty() {
            let prompt = command.pop().unwrap_or_default();
            command.extend(["--prompt".to_owned(), prompt]);
        }
        let repo = self.place.repo();
        let started = self
            .client
            .start_agent(Box::new(StartAgent {
                repo: Some(repo.clone()),
                cwd: repo,
                workspace: bosun_core::WorkspaceAsk::Worktree,
                branch: None,
                base_ref: None,
                name: None,
                command,
                env: Default::default(),
                inherit,
                driver: None,
                prompt: None,
                policy,
                patterns: Default::default(),
                task: None,
                session: Default::default(),
                runtime: Default::default(),
                no_wait: false,
                account: None,
            }))
            .map_err(|e| Fail(format!("bosun could not start it: {e:#}")))?;
        let id = started.agent.to_string();
        self.agent = Some(id.clone());
        Ok(id)
    }

    pub(super) fn agent(&self, id: &str) -> Result<Agent, Fail> {
        self.client.show(id.to_owned()).map(|d| d.agent).map_err(|e| Fail(format!("`bosun show {id}` failed: {e:#}")))
    }

    /// Waits until the agent is as `want` says; fails at the deadline, or as soon as it settles
    /// elsewhere (idle, an error, a dialog, dead: none of which passes by itself) in a state
    /// entered after the one numbered `after` (the state the check acted on, still shown a
    /// moment after).
    pub(super) fn wait(&self, id: &str, what: &str, after: u64, want: impl Fn(&Agent) -> bool) -> Result<Agent, Fail> {
        loop {
            let a = self.agent(id)?;
            if want(&a) {
                return Ok(a);
            }
            let settled = a.state_seq > after && !matches!(a.state, SessionState::Starting | SessionState::Running);
            // Dead with a resume to come is on its way back.
            let coming_back = a.state.is_dead() && !a.policy.on_dead.0.is_empty() && a.restarts == 0;
            if settled && !coming_back && self.settled_for_good(id, &a)? {
                return Err(Fail(format!("bosun saw {} instead of {what}", describe(&a))));
            }
            if Instant::now() >= self.deadline {
                let secs = self.check.time(self.name).as_secs();
                return Err(Fail(format!("no {what} within {secs} s: bosun saw {}", describe(&a))));
            }
            interrupted()?;
            std::thread::sleep(POLL);
        }
    }

    /// Whether the agent is still in the state it was seen in `SETTLED` later (a state passed
    /// through on the way is not wrong yet).
    fn settled_for_good(&self, id: &str, seen: &Agent) -> Result<bool, Fail> {
        let until = Instant::now() + SETTLED;
        while Instant::now() < until {
            if self.agent(id)?.state_seq != seen.state_seq {
                return Ok(false);
            }
            std::thread::sleep(POLL);
        }
        Ok(true)
    }

    /// Waits until the agent's screen shows `text`.
    pub(super) fn screen_shows(&self, id: &str, text: &str) -> Result<(), Fail> {
        loop {
            let screen = self.client.peek(id.to_owned(), false, 0).map_err(|e| Fail(format!("{e:#}")))?;
            if screen.contains(text) {
                return Ok(());
            }
            if Instant::now() >= self.deadline {
                return Err(Fail(format!("its screen never showed {text:?}")));
            }
            interrupted()?;
            std::thread::sleep(POLL);
        }
    }

    pub(super) fn main_requests(&self) -> Vec<bosun_model_server::Logged> {
        self.server.as_ref().map(ModelServer::main_requests).unwrap_or_default()
    }

    /// The client asked the model server (not something else that went idle).
    pub(super) fn asked_model(&self) -> Result<(), Fail> {
        if self.main_requests().is_empty() {
            return Err(Fail("idle, but the client never asked the model server".into()));
        }
        Ok(())
    }

    pub(super) fn said(&self, a: &Agent, want: &str) -> Result<(), Fail> {
        if a.said.as_deref() != Some(want) {
            return Err(Fail(format!("idle, but bosun read that it said {:?}, not {want:?}", a.said)));
        }
        Ok(())
    }

    /// `file` is in the agent's workspace.
    pub(super) fn landed(&self, id: &str, file: &str) -> Result<(), Fail> {
        let detail = self.client.show(id.to_owned()).map_err(|e| Fail(format!("{e:#}")))?;
        let ws = detail.workspace.ok_or_else(|| Fail("it has no workspace".into()))?;
        if !ws.path.join(file).exists() {
            return Err(Fail(format!("idle, but no {file} in its workspace {}", ws.path.display())));
        }
        Ok(())
    }

    /// From the last byte of the model's newest answer to `a`'s state.
    /// The model server notes the time after its last write: the client may act on the answer
    /// (and bosun see it) before the server's thread has noted it, so that is waited for.
    pub(super) fn since_answer(&self, a: &Agent) -> Option<Duration> {
        /// How long the newest answer's time is waited for.
        const NOTED_WAIT: Duration = Duration::from_secs(2);
        let deadline = Instant::now() + NOTED_WAIT;
        while Instant::now() < deadline && self.main_requests().last().is_some_and(|r| r.answered.is_none()) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let answered = self.main_requests().iter().rev().find_map(|r| r.answered).map(millis_of)?;
        Some(Duration::from_millis(a.state_since.0.saturating_sub(answered)))
    }
}

/// Whether the file at `path` (its first `LOG_READ_MAX` bytes) holds `text`.
pub(super) fn holds(path: &Path, text: &str) -> bool {
    use std::io::Read;
    /// The most of a conversation log read: the self-test's are a few kilobytes.
    const LOG_READ_MAX: u64 = 8 * 1024 * 1024;
    let mut bytes = Vec::new();
    std::fs::File::open(path).and_then(|f| f.take(LOG_READ_MAX).read_to_end(&mut bytes)).is_ok()
        && String::from_utf8_lossy(&bytes).contains(text)
}

/// A check stops at its next look once the self-test is interrupted.
pub(super) fn interrupted() -> Result<(), Fail> {
    match super::interrupt::interrupted() {
        true => Err(Fail("interrupted".into())),
        false => Ok(()),
    }
}

/// An agent's state as a person reads it: its label, with what it asks or its error.
pub(super) fn describe(a: &Agent) -> String {
    let mut text = a.state.label();
    if let Some(asks) = a.asks.as_deref().filter(|_| matches!(a.state, SessionState::Prompt { .. })) {
        text.push_str(&format!(" asking {:?}", short(asks)));
    }
    if let Some(error) = &a.error {
        text.push_str(&format!(" ({})", short(error)));
    }
    text
}

fn short(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = line.chars().take(120).collect();
    if cut.len() < line.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

pub(super) fn millis_of(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The last `n` lines of `screen` that are not blank.
pub(super) fn last_lines(screen: &str, n: usize) -> String {
    let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
