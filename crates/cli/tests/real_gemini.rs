//! The real Gemini CLI (from the npm registry, pinned in `scripts/real-clients`) through
//! `bosun agent start`, against the fake Gemini API of `bosun_testkit::fake_model`: what bosun
//! reads of it (its hooks, from the extension bosun writes in the agent's own Gemini home; its
//! session log; its screen), and what it does about it. Each test skips, saying so in one line,
//! only when the npm registry cannot be reached to install the client.

mod support;

use std::path::PathBuf;

use bosun_testkit::clients::{ClientEnv, GeminiConfig, WriteOrPanic as _};
use bosun_testkit::fake_model::{FakeModel, Reply};
use bosun_testkit::poll::wait_until;
use support::*;

/// One bosun, one repository, one fake Gemini API and a Gemini config pointing at it.
struct Real {
    bosun: Bosun,
    repo: TempRepo,
    model: FakeModel,
    env: ClientEnv,
    gemini: PathBuf,
    _dir: tempfile::TempDir,
}

impl Real {
    /// None (the test skips) when the client cannot be installed.
    fn new() -> Option<Self> {
        let gemini = bosun_testkit::tools::gemini_cli()?;
        let model = FakeModel::gemini();
        let dir = tempfile::tempdir().unwrap();
        let env = GeminiConfig::new(&model, dir.path()).write();
        Some(Self { bosun: bosun(), repo: TempRepo::new(), model, env, gemini, _dir: dir })
    }

    /// `bosun agent start ARGS -- gemini REST…`, the agent running with the client's environment.
    fn start(&self, args: &[&str], rest: &[&str]) -> String {
        let gemini = self.gemini.display().to_string();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--", gemini.as_str()]);
        all.extend(rest);
        self.bosun.start_with(self.repo.path(), &all, |cmd| {
            self.env.apply(cmd);
            // As CI runs these tests, wherever they run: Gemini CLI goes headless under either.
            cmd.env("CI", "true").env("GITHUB_ACTIONS", "true");
        })
    }

    fn peek(&self, id: &str) -> String {
        self.bosun.ok(self.repo.path(), &["peek", id])
    }

    fn workspace(&self, id: &str) -> PathBuf {
        self.bosun.show(id).workspace.unwrap().path
    }
}

#[test]
fn a_prompt_on_the_command_line_runs_one_turn_to_idle_the_users_config_untouched_and_no_fork() {
    let Some(real) = Real::new() else { return };
    let settings = real.env.config_dir.join("settings.json");
    let before = std::fs::read(&settings).unwrap();
    real.model.push(Reply::text("All fixed. Shall I push?"));
    let id = real.start(&[], &["fix the bug"]);
    // The workspace is new to Gemini CLI: the home bosun made for it trusts it, so no trust
    // dialog shows, and its hooks (an extension there) report the turn.
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("All fixed. Shall I push?"), "what it said, from AfterAgent");
    let main = real.model.main_requests();
    assert_eq!(main.len(), 1, "one turn: {main:?}");
    assert_eq!(main[0].last_user_text().as_deref(), Some("fix the bug"));
    let states = real.bosun.states_seen(&id);
    assert_eq!(states.iter().filter(|s| *s == "idle").count(), 1, "never idle before the turn ended: {states:?}");
    assert!(!states.iter().any(|s| s.starts_with("prompt")), "it asked nothing: {states:?}");
    // Its session log is in its own home. The user's settings are as they were, and neither
    // bosun's hooks nor the agent's conversation went into the user's config. (The login check
    // bosun runs first, `gemini --list-sessions`, has Gemini CLI note the project in its
    // `projects.json` there, as any run of it does.)
    let log = wait_until(PATIENCE, || real.bosun.agent(&id).log.is_some());
    assert!(log, "its session log was named by a hook:\n{}", real.bosun.log());
    let log = real.bosun.agent(&id).log.unwrap();
    assert!(log.starts_with(agent.dir.join("config")), "{}", log.display());
    assert_eq!(std::fs::read(&settings).unwrap(), before, "the user's settings are as they were");
    assert!(!real.env.config_dir.join("extensions").exists(), "no hooks of bosun's in the user's config");
    let chats = walk(&real.env.config_dir).into_iter().filter(|p| p.to_string_lossy().contains("/chats/")).count();
    assert_eq!(chats, 0, "no conversation in the user's config");
    // A conversation of Gemini CLI's cannot be forked: bosun says so.
    let err = real.bosun.fails(real.repo.path(), &["fork", &id]);
    assert!(err.contains("cannot fork"), "{err}");
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The ledger: what Gemini CLI's session file records of its model calls (a shell call, then
/// the answer) is, to the token, what the model server reported of each; its side requests
/// (the model router's), which it records nowhere, are not counted.
#[test]
fn the_tokens_of_each_model_call_are_counted_to_the_token_as_the_server_reported_them() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::shell("touch made-by-gemini"));
    real.model.push(Reply::text("Made it."));
    let id = real.start(&[], &["--approval-mode", "yolo", "make the file"]);
    real.bosun.wait_state(&id, "idle");
    let main = real.model.main_requests();
    assert_eq!(main.len(), 2, "a shell call and the answer");
    assert!(main.iter().all(|r| r.usage.is_some()), "each answer reported its usage");
    let expected = real.model.main_tokens();
    let counted = wait_until(PATIENCE, || real.bosun.agent(&id).usage.total() == expected);
    assert!(counted, "{:?} is not {expected:?}", real.bosun.agent(&id).usage);
}

#[test]
fn a_stalled_stream_and_a_long_tool_call_are_never_idle() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::stall(8, "A slow answer, at last."));
    real.model.push(Reply::shell("sleep 8 && touch slept"));
    real.model.push(Reply::text("Slept well."));
    // yolo: Gemini CLI runs the shell command without asking.
    let id = real.start(&[], &["--approval-mode", "yolo", "answer slowly"]);
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

#[test]
fn a_permission_dialog_is_a_prompt_that_says_what_it_asks_and_answer_allows_it() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::ShellNeedingApproval("touch made-by-gemini".into()));
    real.model.push(Reply::text("Made it."));
    let id = real.start(&[], &["make the file"]);
    let agent = real.bosun.wait_state(&id, "prompt(permission)");
    let asks = agent.asks.unwrap_or_default();
    assert!(asks.contains("touch made-by-gemini"), "{asks}");
    // Its Notification hook comes as the dialog is being drawn: a person answers what they see.
    real.bosun.wait_screen(&id, "Allow once");
    let out = real.bosun.ok(real.repo.path(), &["answer", &id, "allow"]);
    assert!(out.starts_with(&format!("answered {id}'s dialog with allow")), "{out}");
    let ws = real.workspace(&id);
    assert!(wait_until(PATIENCE, || ws.join("made-by-gemini").exists()), "the command ran:\n{}", real.peek(&id));
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("Made it."));
}

#[test]
fn the_permission_policy_denies_a_call_through_its_hook_and_the_model_hears_why() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::shell("touch denied-file"));
    real.model.push(Reply::text("Denied, so I stopped."));
    let id = real.start(&["--deny", "run_shell_command(touch *)", "--on-prompt", "escalate"], &["make the file"]);
    let agent = real.bosun.wait_state(&id, "idle");
    assert!(!real.workspace(&id).join("denied-file").exists(), "the call was blocked:\n{}", real.peek(&id));
    let answers: Vec<(bool, &str)> = agent.permissions.iter().map(|p| (p.answer.allows(), p.answer.rule())).collect();
    assert_eq!(answers, [(false, "run_shell_command(touch *)")]);
    let main = real.model.main_requests();
    assert!(
        main.len() == 2 && main[1].contains("bosun's permission policy denies this"),
        "the model heard why: {main:?}"
    );
    assert!(real.bosun.ok(real.repo.path(), &["escalations"]).contains("nothing needs a person"));
}

#[test]
fn api_errors_are_errors_of_their_kind() {
    // A 401 reaches its session log; a 429 of a quota (a long retry delay) its screen's dialog.
    for (status, label) in [(401, "error(unauthorized)"), (429, "error(rate_limited)")] {
        let Some(real) = Real::new() else { return };
        real.model.push(Reply::Status(status));
        let id = real.start(&[], &["hello"]);
        real.bosun.wait_state(&id, label);
        if status == 429 {
            // The quota's dialog waits for a person, who answers it as any dialog: "2. Stop".
            real.bosun.wait_screen(&id, "Keep trying");
            real.bosun.ok(real.repo.path(), &["answer", &id, "2"]);
            let gone = wait_until(PATIENCE, || !real.peek(&id).contains("Usage limit reached"));
            assert!(gone, "the dialog was answered:\n{}", real.peek(&id));
            // Stopped, the turn ends in the error its log then says.
            real.bosun.wait_state(&id, label);
        }
    }
}

/// Killed with SIGKILL, it is started again (`on_dead`) with its conversation resumed and a first
/// message on its command line (a message typed within about half a second of a resumed Gemini
/// CLI's `SessionStart` is lost: its input is not ready yet; docs/clients/gemini.md).
#[test]
fn a_killed_gemini_resumes_its_conversation_with_a_message() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::text("First answer."));
    real.model.push(Reply::text("After the crash."));
    let id = real.start(&["--on-dead", "resume:go on please"], &["fix it"]);
    real.bosun.wait_state(&id, "idle");
    let pid = real.bosun.agent(&id).pid.expect("its pid");
    // The client and what it started (Node.js relaunches itself) die at once.
    let children = std::process::Command::new("pkill").args(["-9", "-P", &pid.to_string()]).status().unwrap();
    assert!(children.success() || children.code() == Some(1));
    assert!(std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap().success());
    assert!(wait_until(PATIENCE, || real.bosun.agent(&id).restarts == 1), "restarted:\n{}", real.bosun.log());
    assert!(wait_until(PATIENCE, || real.model.main_requests().len() >= 2), "asked again:\n{}", real.peek(&id));
    let main = real.model.main_requests();
    assert_eq!(main[1].last_user_text().as_deref(), Some("go on please"), "the message was submitted");
    assert!(main[1].contains("fix it") && main[1].contains("First answer."), "with its history: {:?}", main[1]);
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("After the crash."));
}

/// Resumed without a message, it is idle as soon as it reports its start, before its input
/// takes what is typed: a message sent then is held until it does, then submitted, not lost.
#[test]
fn a_message_sent_the_moment_a_resumed_gemini_is_idle_is_submitted() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::text("First answer."));
    real.model.push(Reply::text("Got your message."));
    let id = real.start(&["--on-dead", "resume"], &["fix it"]);
    real.bosun.wait_state(&id, "idle");
    let pid = real.bosun.agent(&id).pid.expect("its pid");
    let children = std::process::Command::new("pkill").args(["-9", "-P", &pid.to_string()]).status().unwrap();
    assert!(children.success() || children.code() == Some(1));
    assert!(std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap().success());
    let back = wait_until(PATIENCE, || {
        let a = real.bosun.agent(&id);
        a.restarts == 1 && a.state == bosun_core::SessionState::Idle
    });
    assert!(back, "resumed and idle:\n{}", real.bosun.log());
    real.bosun.ok(real.repo.path(), &["send", &id, "are you there"]);
    assert!(wait_until(PATIENCE, || real.model.main_requests().len() >= 2), "submitted:\n{}", real.peek(&id));
    let main = real.model.main_requests();
    assert_eq!(main[1].last_user_text().as_deref(), Some("are you there"));
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("Got your message."));
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
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("Still on it."));
}

/// In `--runtime sandbox`, in a fresh repository nobody trusted, Gemini CLI shows no trust dialog
/// and reaches its first turn: the Gemini home bosun made for it (writable in the sandbox, its
/// workspace and repository trusted, the user's key way of signing in kept) is what it reads.
/// The user's settings are as they were. Its files are where a user's are, in a home: the
/// sandbox shows it that home (the client installed there) and hides `/tmp`.
#[test]
fn a_sandboxed_gemini_in_a_fresh_repository_reaches_its_first_turn_in_a_home_of_its_own() {
    let Some(gemini) = bosun_testkit::tools::gemini_cli() else { return };
    bosun_testkit::tools::bwrap();
    let home = std::env::var("HOME").expect("a HOME");
    let place = tempfile::Builder::new().prefix(".bosun-test-").tempdir_in(&home).unwrap();
    let model = FakeModel::gemini();
    let env = GeminiConfig::new(&model, place.path()).write();
    let settings = env.config_dir.join("settings.json");
    let before = std::fs::read(&settings).unwrap();
    let bosun = Bosun::new_in(env!("CARGO_BIN_EXE_bosun"), place.path());
    let repo = TempRepo::new_in(place.path());
    model.push(Reply::text("Sandboxed and ready."));

    let gemini = gemini.display().to_string();
    let args = ["--runtime", "sandbox", "--no-accept-trust", "--on-prompt", "escalate", "--", &gemini, "hello"];
    let id = bosun.start_with(repo.path(), &args, |cmd| {
        env.apply(cmd);
        cmd.env("CI", "true").env("GITHUB_ACTIONS", "true");
    });
    let agent = bosun.wait_state(&id, "idle");
    assert_eq!(agent.runtime.label(), "sandbox");
    assert_eq!(agent.said.as_deref(), Some("Sandboxed and ready."), "its first turn");
    let states = bosun.states_seen(&id);
    assert!(!states.iter().any(|s| s.starts_with("prompt")), "it asked something: {states:?}");
    let own = agent.dir.join("config/.gemini");
    let trusted: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(own.join("trustedFolders.json")).unwrap()).unwrap();
    let ws = bosun.show(&id).workspace.unwrap().path;
    for folder in [ws, repo.path().to_owned()] {
        assert_eq!(trusted[folder.display().to_string()], "TRUST_FOLDER", "{trusted:#}");
    }
    let log = agent.log.expect("its session log");
    assert!(log.starts_with(&own), "its conversation is in its own home: {}", log.display());
    assert_eq!(std::fs::read(&settings).unwrap(), before, "the user's settings are as they were");
    assert!(!env.config_dir.join("extensions").exists(), "no hooks of bosun's in the user's config");
}
