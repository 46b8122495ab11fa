//! The self-test's checks: each starts one agent of one client through the private bosun's typed
//! calls (`Client::start_agent`, `show`, `answer`, `events`), in a workspace of the temp
//! repository, with a config directory and a model server of its own, and says what bosun read of
//! it and how soon. The clients are checked at once (see `run_all`); no check shares a model
//! server, a config or a workspace with another, so none sees another's turns.
//!
//! A check waits for the state it expects at most its time (`Check::time`: `CHECK_TIME`, more
//! for opencode's resume) (and none starts after its client's deadline, `deadline`),
//! but stops as soon as the agent settles elsewhere (idle when an error was due, dead, a dialog
//! nobody answers, for `SETTLED`), saying what bosun saw instead.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant, SystemTime};

use bosun_core::driver::dialog::{DialogAnswer, Want};
use bosun_core::{Agent, AgentError, Event, PermissionRule, Policy, PromptKind, SessionState, Step};
use bosun_model_server::Reply;
use bosun_wire::EventsQuery;

use super::place::Place;
use super::rig::{describe, holds, interrupted, last_lines, millis_of, Check, Config, Fail, Rig, POLL};
use super::ClientName;
use crate::client::Client;

/// How long after the checks start the last may end: a check not started by then is not run,
/// so the whole run stays within 90 s even when every check of a client hangs.
pub const DEADLINE: Duration = Duration::from_secs(75);
/// The same for opencode, each of whose starts takes 4–9 s on two busy cores (its five checks
/// start it six times): with it, the run stays within 125 s.
pub const OPENCODE_DEADLINE: Duration = Duration::from_secs(110);

/// How long after the checks start the last check of `client` may end.
fn deadline(client: ClientName) -> Duration {
    let deadline = match client {
        ClientName::Opencode => OPENCODE_DEADLINE,
        _ => DEADLINE,
    };
    deadline * super::patience()
}
/// What the first turn's answer says.
const HELLO: &str = "Hello from bosun's self-test.";
/// The files the shell checks make in the agent's workspace.
const SHELL_FILE: &str = "bosun-selftest-shell";
const ALLOWED_FILE: &str = "bosun-selftest-allowed";
/// The policy rule that allows the permission check's command (pi's shell tool is `bash`).
const ALLOW_RULE: &str = "Bash(touch bosun-selftest-*)";
const PI_ALLOW_RULE: &str = "bash(touch bosun-selftest-*)";
/// The first prompt of the resume check, the message it is resumed with, and the answers.
const REMEMBER: &str = "remember the number 4817";
const RESUME_WITH: &str = "go on after the crash";
const FIRST_ANSWER: &str = "I will remember 4817.";

/// What a check found.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Outcome {
    pub client: ClientName,
    pub check: Check,
    pub title: &'static str,
    pub ok: bool,
    /// How soon bosun read what it checks (what of, the detail says).
    #[serde(rename = "latency_ms", serialize_with = "millis")]
    pub latency: Option<Duration>,
    /// How long the whole check took.
    #[serde(rename = "took_ms", serialize_with = "millis")]
    pub took: Option<Duration>,
    pub detail: String,
    /// The agent's screen when the check went wrong (its last lines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

fn millis<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        None => s.serialize_none(),
    }
}

/// Runs the checks of every client in `clients`: the clients at once, each on a thread of its
/// own, and each client's checks one after the other. Run all at once, twelve agents starting
/// together on a small machine, a client's screen can lag bosun's keys by more than bosun waits
/// for them (Claude Code's trust dialog was left to a person so on two cores): the checks would
/// measure the machine, not how bosun reads the client. The outcomes in the order of `clients`,
/// then of `Check::of` the client.
pub fn run_all(place: &Place, client: &Client, clients: &[(ClientName, PathBuf)]) -> Vec<Outcome> {
    let began = Instant::now();
    std::thread::scope(|scope| {
        let running: Vec<_> = clients
            .iter()
            .map(|(name, program)| {
                let deadline = began + deadline(*name);
                let handle = scope.spawn(move || {
                    Check::of(*name)
                        .iter()
                        .map(|check| run(place, client, *name, program, *check, deadline))
                        .collect::<Vec<_>>()
                });
                (*name, handle)
            })
            .collect();
        running
            .into_iter()
            .flat_map(|(name, handle)| {
                handle.join().unwrap_or_else(|_| {
                    Check::of(name)
                        .iter()
                        .map(|&check| Outcome {
                            client: name,
                            check,
                            title: check.title(name),
                            ok: false,
                            latency: None,
                            took: None,
                            detail: "the check itself failed (a bug of bosun's: please report it)".into(),
                            screen: None,
                            agent: None,
                        })
                        .collect()
                })
            })
            .collect()
    })
}

/// A check that went right: how soon, and what was seen.
pub(super) struct Pass {
    latency: Option<Duration>,
    detail: String,
}

fn run(place: &Place, client: &Client, name: ClientName, program: &Path, check: Check, deadline: Instant) -> Outcome {
    let began = Instant::now();
    if began + Duration::from_secs(5) >= deadline || super::interrupt::interrupted() {
        return Outcome {
            client: name,
            check,
            title: check.title(name),
            ok: false,
            latency: None,
            took: None,
            detail: match super::interrupt::interrupted() {
                true => "not run: interrupted".into(),
                false => format!(
                    "not run: the checks before it used up the self-test's {} s",
                    self::deadline(name).as_secs()
                ),
            },
            screen: None,
            agent: None,
        };
    }
    let deadline = deadline.min(began + check.time(name));
    let mut rig = Rig { place, client, name, program, check, deadline, server: None, env: None, agent: None };
    let result = rig.run();
    let (ok, latency, detail) = match result {
        Ok(pass) => (true, pass.latency, pass.detail),
        Err(Fail(detail)) => (false, None, detail),
    };
    let screen = match (&rig.agent, ok) {
        (Some(id), false) => client.peek(id.clone(), false, 0).ok().map(|s| last_lines(&s, 12)),
        _ => None,
    };
    // Its agent is done with: ended now, rather than left idle (an idle opencode still draws)
    // beside the next checks until the take-down.
    let took = began.elapsed();
    if let Some(id) = &rig.agent {
        let _ = client.kill(id.clone());
    }
    Outcome {
        client: name,
        check,
        title: check.title(name),
        ok,
        latency,
        took: Some(took),
        detail,
        screen,
        agent: rig.agent,
    }
}

impl Rig<'_> {
    fn run(&mut self) -> Result<Pass, Fail> {
        match self.check {
            Check::Turn => self.turn(),
            Check::Shell => self.shell(),
            Check::Permission if self.name == ClientName::Claude => self.policy_permission(ALLOW_RULE),
            Check::Permission if self.name == ClientName::Pi => self.policy_permission(PI_ALLOW_RULE),
            Check::Permission => self.approval_dialog(),
            Check::RateLimit => self.rate_limit(),
            Check::Resume => self.resume(),
            Check::Trust => self.trust(),
        }
    }

    fn turn(&mut self) -> Result<Pass, Fail> {
        self.prepare(Config::Trusted, &[Reply::text(HELLO)])?;
        let id = self.start(Policy::default(), &["say hello"])?;
        let idle = self.wait(&id, "idle", 0, |a| a.state == SessionState::Idle)?;
        self.asked_model()?;
        self.said(&idle, HELLO)?;
        let latency = self.since_answer(&idle);
        Ok(Pass { latency, detail: format!("idle after the turn ended; it said {HELLO:?}") })
    }

    fn shell(&mut self) -> Result<Pass, Fail> {
        let (config, flags): (Config, &[&str]) = match self.name {
            // Bypass mode runs the command without asking in every version.
            ClientName::Claude => (Config::Bypass, &["--dangerously-skip-permissions"]),
            ClientName::Codex | ClientName::Pi => (Config::Trusted, &[]),
            ClientName::Gemini => (Config::Trusted, &["--approval-mode", "yolo"]),
            // It runs a shell command without asking unless its config says to ask.
            ClientName::Opencode => (Config::Trusted, &[]),
        };
        self.prepare(config, &[Reply::shell(format!("touch {SHELL_FILE}")), Reply::text("Made the file.")])?;
        let mut argv = flags.to_vec();
        argv.push("make the file");
        let id = self.start(Policy::default(), &argv)?;
        let idle = self.wait(&id, "idle", 0, |a| a.state == SessionState::Idle)?;
        self.asked_model()?;
        self.landed(&id, SHELL_FILE)?;
        let latency = self.since_answer(&idle);
        Ok(Pass { latency, detail: format!("{SHELL_FILE} is in its workspace; idle after the turn ended") })
    }

    /// The policy, through the client's hook (Claude) or bosun's extension (pi), allows the
    /// call `allow` names.
    fn policy_permission(&mut self, allow: &str) -> Result<Pass, Fail> {
        self.prepare(Config::Trusted, &[Reply::shell(format!("touch {ALLOWED_FILE}")), Reply::text("Done.")])?;
        let rule = PermissionRule::from_str(allow).map_err(|e| Fail(format!("the rule: {e}")))?;
        let policy = Policy { allow: vec![rule], ..Policy::default() };
        let id = self.start(policy, &["make the file"])?;
        let idle = self.wait(&id, "idle", 0, |a| a.state == SessionState::Idle)?;
        self.asked_model()?;
        let Some(decision) = idle.permissions.first() else {
            return Err(Fail("idle, but the policy was never asked before the call ran".into()));
        };
        if !decision.answer.allows() || decision.answer.rule() != allow {
            return Err(Fail(format!("the policy's answer was {:?}", decision.answer)));
        }
        self.landed(&id, ALLOWED_FILE)?;
        let asked = self.main_requests().first().and_then(|r| r.answered).map(millis_of);
        let latency = asked.map(|at| Duration::from_millis(decision.at.0.saturating_sub(at)));
        let subject = decision.subject.as_deref().unwrap_or_default();
        Ok(Pass {
            latency,
            detail: format!("{allow} allowed {} {subject:?} after the model asked; the file landed", decision.tool),
        })
    }

    fn approval_dialog(&mut self) -> Result<Pass, Fail> {
        let command = format!("touch {ALLOWED_FILE}");
        self.prepare(Config::Asking, &[Reply::ShellNeedingApproval(command.clone()), Reply::text("Done.")])?;
        let id = self.start(Policy::default(), &["make the file"])?;
        let permission = |a: &Agent| a.state == SessionState::Prompt { kind: PromptKind::Permission };
        let prompt = self.wait(&id, "prompt(permission)", 0, permission)?;
        let asks = prompt.asks.clone().unwrap_or_default();
        if !asks.contains(&command) {
            return Err(Fail(format!("prompt(permission), but it asks {asks:?}, not to run {command:?}")));
        }
        let latency = self.since_answer(&prompt);
        if matches!(self.name, ClientName::Gemini | ClientName::Opencode) {
            // Its hook or plugin reports the dialog as it is being drawn: answered when it
            // shows, as a person would (opencode's from its colours: bosun answer reads them).
            self.screen_shows(&id, "Allow once")?;
        }
        self.client
            .answer(id.clone(), DialogAnswer::Allow, None)
            .map_err(|e| Fail(format!("`bosun answer {id} allow` failed: {e:#}")))?;
        let seq = prompt.state_seq;
        self.wait(&id, "idle after the answer", seq, |a| a.state_seq > seq && a.state == SessionState::Idle)?;
        self.landed(&id, ALLOWED_FILE)?;
        Ok(Pass { latency, detail: format!("it asks {asks:?}; answered allow, the file landed") })
    }

    fn rate_limit(&mut self) -> Result<Pass, Fail> {
        self.prepare(Config::Trusted, &[Reply::Status(429)])?;
        let id = self.start(Policy::default(), &["hello"])?;
        let limited = |a: &Agent| a.state == SessionState::Error { error: AgentError::RateLimited };
        let error = self.wait(&id, "error(rate_limited)", 0, limited)?;
        Ok(Pass { latency: self.since_answer(&error), detail: "error(rate_limited) after the 429".into() })
    }

    fn resume(&mut self) -> Result<Pass, Fail> {
        self.prepare(Config::Trusted, &[Reply::text(FIRST_ANSWER), Reply::text("Going on.")])?;
        let step = Step::from_str(&format!("resume:{RESUME_WITH}")).map_err(|e| Fail(format!("the policy: {e}")))?;
        let mut policy = Policy::default();
        policy.on_dead.0.push(step);
        let id = self.start(policy, &[REMEMBER])?;
        let idle = self.wait(&id, "idle", 0, |a| a.state == SessionState::Idle)?;
        self.asked_model()?;
        // Its conversation on disk, its answer in it: a resume starts from there (a client killed
        // before it wrote its last turn resumes without it, whatever bosun does).
        let idle = loop {
            let a = self.agent(&id)?;
            if a.log.as_deref().is_some_and(|log| holds(log, FIRST_ANSWER)) {
                break a;
            }
            if Instant::now() >= self.deadline || a.state_seq != idle.state_seq {
                let what = if a.log.is_some() { "its answer in its conversation log" } else { "its conversation" };
                return Err(Fail(format!("bosun never found {what}; it is {}", describe(&a))));
            }
            interrupted()?;
            std::thread::sleep(POLL);
        };
        let pid = idle.pid.ok_or_else(|| Fail("bosun knows no pid of it".into()))?;
        let pid = i32::try_from(pid).map_err(|_| Fail(format!("pid {pid} out of range")))?;
        // The client's whole process group: its session's leader and what it started.
        nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL)
            .map_err(|e| Fail(format!("cannot kill -9 its process group {pid}: {e}")))?;
        let killed = millis_of(SystemTime::now());
        let resumed = loop {
            if let Some(r) = self.main_requests().get(1).cloned() {
                break r;
            }
            if Instant::now() >= self.deadline {
                let a = self.agent(&id)?;
                return Err(Fail(format!("never resumed: bosun saw {} ({} restarts)", describe(&a), a.restarts)));
            }
            interrupted()?;
            std::thread::sleep(POLL);
        };
        let latency = Duration::from_millis(millis_of(resumed.time).saturating_sub(killed));
        if resumed.last_user_text().as_deref() != Some(RESUME_WITH) {
            return Err(Fail(format!("resumed, but its message was {:?}", resumed.last_user_text())));
        }
        if !(resumed.contains(FIRST_ANSWER) && resumed.contains(REMEMBER)) {
            return Err(Fail("resumed without its conversation: the earlier turn is not in its request".into()));
        }
        let seq = idle.state_seq;
        self.wait(&id, "idle after the resume", seq, |a| a.restarts >= 1 && a.state == SessionState::Idle)?;
        Ok(Pass { latency: Some(latency), detail: "resumed after kill -9, the earlier turn in its request".into() })
    }

    fn trust(&mut self) -> Result<Pass, Fail> {
        const READY: &str = "Trusted and ready.";
        self.prepare(Config::Fresh, &[Reply::text(READY)])?;
        let id = self.start(Policy::default(), &["say hello"])?;
        let idle = self.wait(&id, "idle", 0, |a| a.state == SessionState::Idle)?;
        self.asked_model()?;
        self.said(&idle, READY)?;
        let mut keys = Vec::new();
        let query = EventsQuery { from: 1, follow: false, agent: Some(id.clone()), job: None };
        self.client
            .events(query, |r| {
                if let Event::DialogKeys { want: Want::Trust, option, picked, at, .. } = r.event {
                    keys.push((option, picked, at));
                }
                Ok(true)
            })
            .map_err(|e| Fail(format!("cannot read its events: {e:#}")))?;
        let Some((first, _, first_at)) = keys.first() else {
            let latency = self.since_answer(&idle);
            return Ok(Pass { latency, detail: "no trust dialog showed; its first turn ended".into() });
        };
        let Some((option, _, picked_at)) = keys.iter().find(|(_, picked, _)| *picked) else {
            return Err(Fail(format!("bosun moved to {first:?} but never picked it")));
        };
        let latency = Some(Duration::from_millis(picked_at.0.saturating_sub(first_at.0)));
        let presses = keys.len();
        Ok(Pass {
            latency,
            detail: format!("bosun read it and picked {option:?} ({presses} key presses); its first turn ended"),
        })
    }
}
