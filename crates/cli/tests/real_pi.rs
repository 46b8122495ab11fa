//! The real pi (from the npm registry, pinned in `scripts/real-clients`, run with the Node.js 22
//! installed beside it) through `bosun agent start`, against the fake Anthropic API of
//! `bosun_testkit::fake_model` (a provider of pi's `models.json`): what bosun reads of it (the
//! reports of the extension bosun loads into it with `-e`; its screen) and what it does about it.
//! Each test skips, saying so in one line, only when the npm registry cannot be reached to install
//! the client. pi changes nothing under `CI=true`; the tests run it so all the same, as CI does.

mod support;

use std::path::PathBuf;

use bosun_testkit::clients::{ClientEnv, PiConfig, WriteOrPanic as _};
use bosun_testkit::fake_model::{FakeModel, Reply};
use bosun_testkit::poll::wait_until;
use support::*;

/// One bosun, one repository, one fake Anthropic API and a pi config pointing at it.
struct Real {
    bosun: Bosun,
    repo: TempRepo,
    model: FakeModel,
    env: ClientEnv,
    pi: PathBuf,
    dir: tempfile::TempDir,
}

impl Real {
    /// None (the test skips) when the client cannot be installed.
    fn new() -> Option<Self> {
        Self::with(|config| config)
    }

    /// As `new`, its pi config changed by `config` first.
    fn with(config: impl FnOnce(PiConfig) -> PiConfig) -> Option<Self> {
        let pi = bosun_testkit::tools::pi()?;
        let model = FakeModel::anthropic();
        let dir = tempfile::tempdir().unwrap();
        let env = config(PiConfig::new(&model, dir.path())).write();
        Some(Self { bosun: bosun(), repo: TempRepo::new(), model, env, pi, dir })
    }

    /// `bosun agent start ARGS -- pi REST…`, the agent running with the client's environment.
    fn start(&self, args: &[&str], rest: &[&str]) -> String {
        let pi = self.pi.display().to_string();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--", pi.as_str()]);
        all.extend(rest);
        self.bosun.start_with(self.repo.path(), &all, |cmd| {
            self.env.apply(cmd);
            cmd.env("CI", "true").env("GITHUB_ACTIONS", "true");
        })
    }

    /// `bosun agent start -- pi REST… hello`, which must be refused in one line with exit 2 with
    /// nothing made (no agent, workspace or session; the model never asked): its stderr.
    fn refused(&self, rest: &[&str]) -> String {
        let pi = self.pi.display().to_string();
        let mut all = vec!["agent", "start", "--", pi.as_str()];
        all.extend(rest);
        all.push("hello");
        self.refused_bosun(&all)
    }

    /// `bosun ARGS`, with pi's environment and no provider's key variable, which must be refused
    /// in one line with exit 2 with nothing made: its stderr.
    fn refused_bosun(&self, args: &[&str]) -> String {
        let mut cmd = self.bosun.command(self.repo.path(), args);
        self.env.apply(&mut cmd);
        for key in ["ANTHROPIC_API_KEY", "ANTHROPIC_OAUTH_TOKEN", "OPENAI_API_KEY", "GEMINI_API_KEY"] {
            cmd.env(key, "");
        }
        let out = cmd.env("CI", "true").output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(self.bosun.list().agents.is_empty(), "no agent recorded");
        assert!(self.bosun.sessions().is_empty(), "no session");
        assert_eq!(self.repo.git(&["worktree", "list"]).lines().count(), 1, "no worktree");
        assert!(self.model.main_requests().is_empty(), "the model never asked");
        err
    }

    /// Waits until the agent is idle having said `said`: a turn that ends after an idle of its
    /// own before it (a resumed session's start) is waited for to its end.
    fn wait_said(&self, id: &str, said: &str) {
        let ended = wait_until(PATIENCE, || {
            let a = self.bosun.agent(id);
            a.state.label() == "idle" && a.said.as_deref() == Some(said)
        });
        assert!(ended, "never idle having said {said:?}:\n{}", self.peek(id));
    }

    fn peek(&self, id: &str) -> String {
        self.bosun.ok(self.repo.path(), &["peek", id])
    }

    fn workspace(&self, id: &str) -> PathBuf {
        self.bosun.show(id).workspace.unwrap().path
    }

    /// Writes a user's extension of pi, `source`, and gives its path.
    fn extension(&self, source: &str) -> String {
        let path = self.dir.path().join("users-extension.js");
        std::fs::write(&path, source).unwrap();
        path.display().to_string()
    }
}

/// The ledger: what pi's session file records of its model calls (a shell call, then the
/// answer) is, to the token, what the model server reported of each.
#[test]
fn the_tokens_of_each_model_call_are_counted_to_the_token_as_the_server_reported_them() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::shell("touch made-by-pi"));
    real.model.push(Reply::text("Made it."));
    let id = real.start(&[], &["make the file"]);
    real.bosun.wait_state(&id, "idle");
    let main = real.model.main_requests();
    assert_eq!(main.len(), 2, "a shell call and the answer");
    assert!(main.iter().all(|r| r.usage.is_some()), "each answer reported its usage");
    let expected = real.model.main_tokens();
    let counted = wait_until(PATIENCE, || real.bosun.agent(&id).usage.total() == expected);
    assert!(counted, "{:?} is not {expected:?}", real.bosun.agent(&id).usage);
}

#[test]
fn a_prompt_on_the_command_line_runs_one_turn_to_idle_and_its_session_is_named() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::text("All fixed. Shall I push?"));
    let id = real.start(&[], &["fix the bug"]);
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("All fixed. Shall I push?"), "what it said, from agent_settled");
    let main = real.model.main_requests();
    assert_eq!(main.len(), 1, "one turn: {main:?}");
    assert_eq!(main[0].last_user_text().as_deref(), Some("fix the bug"));
    let states = real.bosun.states_seen(&id);
    assert_eq!(states.iter().filter(|s| *s == "idle").count(), 1, "never idle before the turn ended: {states:?}");
    assert!(!states.iter().any(|s| s.starts_with("prompt")), "it asked nothing: {states:?}");
    // Its session file is pi's, in the user's pi config, and holds the turn; bosun's extension
    // is in the agent's own directory, not in the user's config.
    let log = wait_until(PATIENCE, || real.bosun.agent(&id).log.is_some());
    assert!(log, "its session file was named by session_start:\n{}", real.bosun.log());
    let log = real.bosun.agent(&id).log.unwrap();
    assert!(log.starts_with(real.env.config_dir.join("sessions")), "{}", log.display());
    assert!(std::fs::read_to_string(&log).unwrap().contains("All fixed. Shall I push?"));
    assert!(agent.dir.join("bosun-pi.js").is_file());
    assert!(!real.env.config_dir.join("extensions").exists(), "nothing of bosun's in the user's config");
}

#[test]
fn a_stalled_stream_and_a_long_tool_call_are_never_idle() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::stall(8, "A slow answer, at last."));
    real.model.push(Reply::shell("sleep 8 && touch slept"));
    real.model.push(Reply::text("Slept well."));
    let id = real.start(&[], &["answer slowly"]);
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("A slow answer, at last."));
    // A message sent is typed, submitted and confirmed: its turn runs the tool.
    real.bosun.ok(real.repo.path(), &["send", &id, "now sleep"]);
    assert!(wait_until(PATIENCE, || real.workspace(&id).join("slept").exists()), "the tool ran:\n{}", real.peek(&id));
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("Slept well."));
    let states = real.bosun.states_seen(&id);
    assert_eq!(states.iter().filter(|s| *s == "idle").count(), 2, "idle only at each turn's end: {states:?}");
    let messages = real.bosun.show(&id).messages;
    assert!(
        messages.iter().any(|m| m.text == "now sleep" && m.state == bosun_core::MessageState::Delivered),
        "its delivery confirmed: {messages:?}"
    );
    assert_eq!(real.model.main_requests()[1].last_user_text().as_deref(), Some("now sleep"));
}

/// pi asks nothing before a tool runs; a user's extension may (pi's own example, permission-gate,
/// does). Its dialog about the call is a permission prompt that says what it asks, answered with
/// `bosun answer`.
#[test]
fn an_extensions_dialog_about_a_call_is_a_permission_prompt_and_answer_picks_its_option() {
    let Some(real) = Real::new() else { return };
    let gate = real.extension(
        r#"export default function (pi) {
  pi.on("tool_call", async (event, ctx) => {
    if (event.toolName !== "bash") return undefined;
    const choice = await ctx.ui.select(`Run this?\n\n  ${event.input.command}\n`, ["Yes", "No"]);
    return choice === "Yes" ? undefined : { block: true, reason: "Blocked by user" };
  });
}
"#,
    );
    real.model.push(Reply::shell("touch made-by-pi"));
    real.model.push(Reply::text("Made it."));
    let id = real.start(&[], &["-e", &gate, "make the file"]);
    let agent = real.bosun.wait_state(&id, "prompt(permission)");
    let asks = agent.asks.unwrap_or_default();
    assert!(asks.contains("Run this?") && asks.contains("touch made-by-pi"), "{asks}");
    real.bosun.wait_screen(&id, "→ Yes");
    let out = real.bosun.ok(real.repo.path(), &["answer", &id, "allow"]);
    assert!(out.starts_with(&format!("answered {id}'s dialog with allow")), "{out}");
    let ws = real.workspace(&id);
    assert!(wait_until(PATIENCE, || ws.join("made-by-pi").exists()), "the command ran:\n{}", real.peek(&id));
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("Made it."));
}

#[test]
fn the_permission_policy_denies_a_call_through_its_extension_and_the_model_hears_why() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::shell("touch denied-file"));
    real.model.push(Reply::text("Denied, so I stopped."));
    let id = real.start(&["--deny", "bash(touch *)", "--on-prompt", "escalate"], &["make the file"]);
    let agent = real.bosun.wait_state(&id, "idle");
    assert!(!real.workspace(&id).join("denied-file").exists(), "the call was blocked:\n{}", real.peek(&id));
    let answers: Vec<(bool, &str)> = agent.permissions.iter().map(|p| (p.answer.allows(), p.answer.rule())).collect();
    assert_eq!(answers, [(false, "bash(touch *)")]);
    let main = real.model.main_requests();
    assert!(
        main.len() == 2 && main[1].contains("bosun's permission policy denies this"),
        "the model heard why: {main:?}"
    );
    assert_eq!(agent.said.as_deref(), Some("Denied, so I stopped."));
}

#[test]
fn api_errors_are_errors_of_their_kind() {
    for (status, label) in [(401, "error(unauthorized)"), (429, "error(rate_limited)")] {
        let Some(real) = Real::new() else { return };
        real.model.push(Reply::Status(status));
        let id = real.start(&[], &["hello"]);
        real.bosun.wait_state(&id, label);
        assert!(real.peek(&id).contains(&format!("Error: {status}")), "{}", real.peek(&id));
    }
    // No server where its provider points: a connection refused.
    let Some(real) = Real::new() else { return };
    let Real { bosun, repo, model, env, pi, dir: _dir } = real;
    drop(model);
    let pi = pi.display().to_string();
    let id = bosun.start_with(repo.path(), &["--", &pi, "hello"], |cmd| {
        env.apply(cmd);
        cmd.env("CI", "true");
    });
    bosun.wait_state(&id, "error(no_internet)");
}

/// pi's key check before an agent or a job starts (its model list, run in the agent's
/// environment): a pi with no key for the provider its settings default to, or for the one
/// `--provider` names, is refused in one line that names the provider and how to give it a key,
/// and never shows a key; nothing is made. With the fake model's provider in its `models.json` (its key there) it
/// starts and reaches its first turn.
#[test]
fn a_pi_without_a_key_for_its_provider_is_refused_naming_it_and_starts_with_one() {
    let Some(real) = Real::with(|c| c.settings(serde_json::json!({"defaultProvider": "anthropic"}))) else { return };
    let models = real.env.config_dir.join("models.json");
    let fake_provider = std::fs::read_to_string(&models).unwrap();
    std::fs::remove_file(&models).unwrap();
    let err = real.refused(&[]);
    assert!(err.contains("has no key for provider anthropic (its defaultProvider"), "{err}");
    assert!(err.contains("set ANTHROPIC_API_KEY, or run `pi` and `/login`"), "{err}");
    // A job whose agent runs it: refused before anything is made.
    let runbook = format!(
        "command \"fix\" {{\n  run = {{ agent = \"fixer\" }}\n}}\n\nagent \"fixer\" {{\n  run    = [{:?}]\n  prompt = \"fix it\"\n}}\n",
        real.pi.display().to_string()
    );
    write_runbook(&real.repo, "fix.hcl", &runbook);
    let err = real.refused_bosun(&["run", "fix"]);
    assert!(err.contains("agent \"fixer\" of job") && err.contains("has no key for provider anthropic"), "{err}");
    assert!(!real.bosun.ok(real.repo.path(), &["job", "ls", "--json"]).contains("\"id\""), "no job recorded");

    std::fs::write(&models, &fake_provider).unwrap();
    let err = real.refused(&["--provider", "openai"]);
    assert!(err.contains("has no key for provider openai (named by --provider; it has keys for bosun-fake)"), "{err}");
    assert!(err.contains("set OPENAI_API_KEY"), "{err}");
    let key_tail = &bosun_testkit::clients::FAKE_ANTHROPIC_KEY[20..];
    assert!(!err.contains(key_tail), "no key shown: {err}");

    real.model.push(Reply::text("Signed in."));
    let id = real.start(&[], &["hello"]);
    real.wait_said(&id, "Signed in.");
    assert!(!real.bosun.log().contains(key_tail), "no key in the daemon's log");
}

/// Killed with SIGKILL, it is started again (`on_dead`) with the same session id, which pi opens
/// again in its folder, and a first message on its command line.
#[test]
fn a_killed_pi_resumes_its_conversation_with_a_message() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::text("First answer."));
    real.model.push(Reply::text("After the crash."));
    let id = real.start(&["--on-dead", "resume:go on please"], &["fix it"]);
    real.bosun.wait_state(&id, "idle");
    let pid = real.bosun.agent(&id).pid.expect("its pid");
    let children = std::process::Command::new("pkill").args(["-9", "-P", &pid.to_string()]).status().unwrap();
    assert!(children.success() || children.code() == Some(1));
    assert!(std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap().success());
    assert!(wait_until(PATIENCE, || real.bosun.agent(&id).restarts == 1), "restarted:\n{}", real.bosun.log());
    assert!(wait_until(PATIENCE, || real.model.main_requests().len() >= 2), "asked again:\n{}", real.peek(&id));
    let main = real.model.main_requests();
    assert_eq!(main[1].last_user_text().as_deref(), Some("go on please"), "the message was submitted");
    assert!(main[1].contains("fix it") && main[1].contains("First answer."), "with its history: {:?}", main[1]);
    real.wait_said(&id, "After the crash.");
}

#[test]
fn an_idle_agent_is_nudged_and_the_nudge_is_submitted() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::text("Working on it."));
    real.model.push(Reply::text("Still on it."));
    let id = real.start(&["--grace", "0s", "--on-idle", "nudge*1:status please"], &["start"]);
    assert!(wait_until(PATIENCE, || real.model.main_requests().len() >= 2), "nudged:\n{}", real.peek(&id));
    let main = real.model.main_requests();
    assert_eq!(main[1].last_user_text().as_deref(), Some("status please"));
    real.wait_said(&id, "Still on it.");
}

/// `bosun fork`: the new agent, in a workspace of its own, starts from a copy of the session
/// (`pi --fork <file>`) under a session id of its own; the agent forked goes on.
#[test]
fn a_pi_agent_is_forked_with_its_conversation() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::text("First answer."));
    real.model.push(Reply::text("Forked answer."));
    let id = real.start(&[], &["fix it"]);
    let agent = real.bosun.wait_state(&id, "idle");
    assert!(wait_until(PATIENCE, || real.bosun.agent(&id).log.is_some()), "its session file was named");
    let mut cmd = real.bosun.command(real.repo.path(), &["fork", &id, "--prompt", "try it another way", "--json"]);
    real.env.apply(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let fork = v["agent"].as_str().unwrap().to_owned();
    let forked = real.bosun.wait_state(&fork, "idle");
    assert_eq!(forked.said.as_deref(), Some("Forked answer."));
    let main = real.model.main_requests();
    assert_eq!(main.len(), 2, "one turn each");
    assert_eq!(main[1].last_user_text().as_deref(), Some("try it another way"));
    assert!(main[1].contains("First answer.") && main[1].contains("fix it"), "the conversation came along");
    let (bosun_core::driver::Driver::Pi { session_id: theirs }, bosun_core::driver::Driver::Pi { session_id: ours }) =
        (&agent.driver, &forked.driver)
    else {
        panic!("pi agents")
    };
    assert_ne!(theirs, ours, "a conversation of its own");
    let log = real.bosun.agent(&fork).log.expect("the fork's session file");
    assert!(log.display().to_string().ends_with(&format!("_{ours}.jsonl")), "{}", log.display());
    assert_ne!(real.workspace(&fork), real.workspace(&id));
    assert_eq!(real.bosun.agent(&id).state.label(), "idle", "the agent forked goes on");
}

/// A repository with project resources (`.pi/settings.json`) makes pi ask whether to trust it.
/// bosun's extension trusts it for the run, as its policy says by default; with
/// `--no-accept-trust` the dialog shows and is a setup prompt, answered with `bosun answer`.
#[test]
fn the_project_trust_dialog_is_trusted_by_default_and_else_a_setup_prompt() {
    let Some(real) = Real::new() else { return };
    with_project_settings(&real.repo);
    real.model.push(Reply::text("Trusted."));
    real.model.push(Reply::text("Trusted by a person."));
    let id = real.start(&[], &["hello"]);
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("Trusted."));
    assert!(!real.bosun.states_seen(&id).iter().any(|s| s.starts_with("prompt")), "it asked nothing");

    let other = real.start(&["--no-accept-trust"], &["hello again"]);
    let agent = real.bosun.wait_state(&other, "prompt(setup)");
    assert!(agent.asks.unwrap_or_default().contains("Trust project folder?"));
    real.bosun.wait_screen(&other, "Do not trust");
    // Its options: 1. Trust, 2. Trust parent folder, 3. Trust (this session only), 4. Do not trust…
    real.bosun.ok(real.repo.path(), &["answer", &other, "3"]);
    let agent = real.bosun.wait_state(&other, "idle");
    assert_eq!(agent.said.as_deref(), Some("Trusted by a person."));
}

/// Commits `.pi/settings.json` to `repo`: project resources, which pi loads only once trusted.
fn with_project_settings(repo: &TempRepo) {
    std::fs::create_dir_all(repo.path().join(".pi")).unwrap();
    std::fs::write(repo.path().join(".pi/settings.json"), "{}\n").unwrap();
    repo.git(&["add", ".pi"]);
    repo.git(&["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "pi settings"]);
}

/// In `--runtime sandbox`, with `--no-accept-trust`, in a repository whose project resources make
/// pi ask for trust, pi shows no dialog and reaches its first turn: the config of its own bosun
/// made for it (its keys and providers copied, its workspace and repository trusted in its
/// `trust.json`) is what it reads, and its session is kept there. The user's config is as it
/// was. Its files are where a user's are, in a home: the sandbox shows it that home (the client
/// installed there) and hides `/tmp`.
#[test]
fn a_sandboxed_pi_reaches_its_first_turn_in_a_config_of_its_own() {
    let Some(pi) = bosun_testkit::tools::pi() else { return };
    bosun_testkit::tools::bwrap();
    let home = std::env::var("HOME").expect("a HOME");
    let place = tempfile::Builder::new().prefix(".bosun-test-").tempdir_in(&home).unwrap();
    let model = FakeModel::anthropic();
    let env = PiConfig::new(&model, place.path()).write();
    let settings = env.config_dir.join("settings.json");
    let before = std::fs::read(&settings).unwrap();
    let bosun = Bosun::new_in(env!("CARGO_BIN_EXE_bosun"), place.path());
    let repo = TempRepo::new_in(place.path());
    with_project_settings(&repo);
    model.push(Reply::text("Sandboxed and ready."));

    let pi = pi.display().to_string();
    let args = ["--runtime", "sandbox", "--no-accept-trust", "--on-prompt", "escalate", "--", &pi, "hello"];
    let id = bosun.start_with(repo.path(), &args, |cmd| {
        env.apply(cmd);
        cmd.env("CI", "true");
    });
    let agent = bosun.wait_state(&id, "idle");
    assert_eq!(agent.runtime.label(), "sandbox");
    assert_eq!(agent.said.as_deref(), Some("Sandboxed and ready."), "its first turn");
    let states = bosun.states_seen(&id);
    assert!(!states.iter().any(|s| s.starts_with("prompt")), "it asked something: {states:?}");
    let own = agent.dir.join("config");
    let trusted: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(own.join("trust.json")).unwrap()).unwrap();
    let ws = bosun.show(&id).workspace.unwrap().path;
    for folder in [ws, repo.path().to_owned()] {
        assert_eq!(trusted[folder.display().to_string()], true, "{trusted:#}");
    }
    let log = bosun_testkit::poll::wait_for(PATIENCE, || bosun.agent(&id).log).expect("its session file");
    assert!(log.starts_with(own.join("sessions")), "its conversation is in its own config: {}", log.display());
    assert_eq!(std::fs::read(&settings).unwrap(), before, "the user's settings are as they were");
    assert!(!env.config_dir.join("sessions").exists(), "no session in the user's config");
}
