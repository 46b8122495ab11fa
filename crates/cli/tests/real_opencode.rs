//! The real opencode (from the npm registry, pinned in `scripts/real-clients`) through
//! `bosun agent start`, against the fake Anthropic API of `bosun_testkit::fake_model` (a provider
//! of its config): what bosun reads of it (the reports of the plugin bosun gives it, named in
//! `OPENCODE_CONFIG_CONTENT`; its screen), and what it does about it. Each test runs opencode
//! under `CI=true` and `GITHUB_ACTIONS=true`, as CI does, and skips, saying so in one line, only
//! when the npm registry cannot be reached to install the client.

mod support;

use std::path::PathBuf;

use bosun_testkit::clients::{ClientEnv, OpencodeConfig, WriteOrPanic as _};
use bosun_testkit::fake_model::{FakeModel, Reply};
use bosun_testkit::poll::{wait_for, wait_until};
use support::*;

/// One bosun, one repository, one fake Anthropic API and an opencode config pointing at it.
struct Real {
    bosun: Bosun,
    repo: TempRepo,
    model: FakeModel,
    env: ClientEnv,
    opencode: PathBuf,
    _dir: tempfile::TempDir,
}

impl Real {
    /// None (the test skips) when the client cannot be installed.
    fn new() -> Option<Self> {
        Self::with(|c| c)
    }

    /// As `new`, its config as `config` makes it.
    fn with(config: impl FnOnce(OpencodeConfig) -> OpencodeConfig) -> Option<Self> {
        let opencode = bosun_testkit::tools::opencode()?;
        let model = FakeModel::anthropic();
        let dir = tempfile::tempdir().unwrap();
        let env = config(OpencodeConfig::new(&model, dir.path())).write();
        Some(Self { bosun: bosun(), repo: TempRepo::new(), model, env, opencode, _dir: dir })
    }

    /// `bosun agent start ARGS -- opencode REST…`, the agent running with the client's
    /// environment, under CI's variables.
    fn start(&self, args: &[&str], rest: &[&str]) -> String {
        let opencode = self.opencode.display().to_string();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--", opencode.as_str()]);
        all.extend(rest);
        self.bosun.start_with(self.repo.path(), &all, |cmd| {
            self.env.apply(cmd);
            cmd.env("CI", "true").env("GITHUB_ACTIONS", "true");
        })
    }

    fn peek(&self, id: &str) -> String {
        self.bosun.ok(self.repo.path(), &["peek", id])
    }

    fn workspace(&self, id: &str) -> PathBuf {
        self.bosun.show(id).workspace.unwrap().path
    }

    /// Waits until the agent is `label`, allowing for opencode's first start (it installs its
    /// plugin package into a new config directory first).
    fn wait_first(&self, id: &str, label: &str) -> bosun_core::Agent {
        let reached = wait_until(PATIENCE * 3, || self.bosun.agent(id).state.label() == label);
        assert!(reached, "{id} never became {label}: {}\n{}", self.bosun.agent(id).state.label(), self.peek(id));
        self.bosun.agent(id)
    }
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

#[test]
fn a_prompt_runs_one_turn_to_idle_the_users_config_untouched_and_no_fork() {
    let Some(real) = Real::new() else { return };
    let config = real.env.config_dir.join("opencode.json");
    let before = std::fs::read(&config).unwrap();
    real.model.push(Reply::text("All fixed. Shall I push?"));
    let id = real.start(&["--prompt", "fix the bug"], &[]);
    let agent = real.wait_first(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("All fixed. Shall I push?"), "what it said, from its plugin");
    let main = real.model.main_requests();
    assert_eq!(main.len(), 1, "one turn: {main:?}");
    assert_eq!(main[0].last_user_text().as_deref(), Some("fix the bug"));
    let states = real.bosun.states_seen(&id);
    assert_eq!(states.iter().filter(|s| *s == "idle").count(), 1, "never idle before the turn ended: {states:?}");
    assert!(!states.iter().any(|s| s.starts_with("prompt")), "it asked nothing: {states:?}");
    // Its session is named by the plugin's file in the agent's own config; the user's config is
    // as it was, and holds nothing of bosun's.
    let log = agent.log.expect("its session's file");
    assert!(log.starts_with(agent.dir.join("config/sessions")), "{}", log.display());
    assert!(log.file_name().unwrap().to_string_lossy().starts_with("ses_"), "{}", log.display());
    assert_eq!(std::fs::read(&config).unwrap(), before, "the user's config is as it was");
    let bosuns = walk(&real.env.config_dir).into_iter().filter(|p| p.to_string_lossy().contains("bosun-plugin"));
    assert_eq!(bosuns.count(), 0, "no plugin of bosun's in the user's config");
    // Its session cannot be forked into a worktree of its own (docs/clients/opencode.md): bosun
    // says so.
    let err = real.bosun.fails(real.repo.path(), &["fork", &id]);
    assert!(err.contains("cannot fork"), "{err}");
}

/// Each main-loop call's tokens, which its plugin keeps from opencode's assistant messages, are
/// the agent's, to the token as the model server reported them. Its title request is not
/// counted: opencode records it nowhere.
#[test]
fn the_tokens_of_each_model_call_are_counted_to_the_token_as_the_server_reported_them() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::shell("touch made-by-opencode"));
    real.model.push(Reply::text("Made it."));
    let id = real.start(&["--prompt", "make the file"], &[]);
    real.wait_first(&id, "idle");
    let main = real.model.main_requests();
    assert_eq!(main.len(), 2, "a shell call and the answer");
    assert!(main.iter().all(|r| r.usage.is_some()), "each answer reported its usage");
    let expected = real.model.main_tokens();
    let counted = wait_until(PATIENCE, || real.bosun.agent(&id).usage.total() == expected);
    let log = real.bosun.agent(&id).log.map(std::fs::read_to_string);
    assert!(counted, "{:?} is not {expected:?}: {log:?}", real.bosun.agent(&id).usage);
    let side = real.model.requests().into_iter().filter(|r| !r.main_loop).collect::<Vec<_>>();
    let tokens = |r: &bosun_testkit::fake_model::Logged| {
        r.usage.map_or(0, |u| u.input + u.output + u.cache_write + u.cache_read)
    };
    let (side_tokens, all) =
        (side.iter().map(tokens).sum::<u64>(), real.model.requests().iter().map(tokens).sum::<u64>());
    eprintln!("not counted: {} side requests, {side_tokens} of the server's {all} tokens", side.len());
}

#[test]
fn a_stalled_stream_and_a_long_tool_call_are_never_idle() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::stall(8, "A slow answer, at last."));
    real.model.push(Reply::shell("sleep 8 && touch slept"));
    real.model.push(Reply::text("Slept well."));
    let id = real.start(&["--prompt", "answer slowly"], &[]);
    let agent = real.wait_first(&id, "idle");
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

/// At its budget the agent is paused and its turn in flight is stopped with opencode's own
/// interrupt key, Escape, pressed twice as a person does (once only arms it). opencode counts a
/// step's tokens once its tool calls are done: the crossing is seen as the next step's answer
/// streams, and that answer (stalled for a minute) is cut; no model request follows.
#[test]
fn at_its_budget_the_agent_is_paused_and_its_turn_stopped_by_escape_twice() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::shell("true"));
    real.model.push(Reply::stall(60, "An answer never finished."));
    real.model.push(Reply::text("Went on."));
    // Its first answer alone (a prompt of thousands of tokens) spends more than this.
    let id = real.start(&["--budget", "1ktok", "--prompt", "make the file"], &[]);
    let paused = wait_for(PATIENCE * 3, || real.bosun.agent(&id).paused);
    assert!(paused.is_some(), "paused at its budget:\n{}\n{}", real.peek(&id), real.bosun.log());
    let stopped = wait_until(PATIENCE, || real.bosun.agent(&id).state.label() == "idle");
    assert!(stopped, "its turn was stopped:\n{}", real.peek(&id));
    let agent = real.bosun.agent(&id);
    assert_eq!(agent.state_label(), "paused(budget)");
    assert_ne!(agent.said.as_deref(), Some("An answer never finished."), "its stalled answer was cut");
    assert!(real.model.main_requests().len() <= 2, "no request after the one streaming at the crossing");
}

/// opencode's permission dialog is a prompt that says what it asks, and the call waits. `bosun
/// answer` reads the dialog (its options in a row, the selected one shown by its background
/// alone) and picks the option named: allow runs the call, deny does not, and the model hears
/// the rejection at the next turn (the message given with it).
#[test]
fn a_permission_dialog_is_a_prompt_that_says_what_it_asks_and_bosun_answer_allows_and_denies_it() {
    let Some(real) = Real::with(OpencodeConfig::asking) else { return };
    real.model.push(Reply::shell("touch allowed-file"));
    real.model.push(Reply::text("Made it."));
    real.model.push(Reply::shell("touch denied-file"));
    real.model.push(Reply::text("Understood, I left it."));
    let id = real.start(&["--on-prompt", "escalate"], &["--prompt", "make the file"]);
    let agent = real.wait_first(&id, "prompt(permission)");
    assert_eq!(agent.asks.as_deref(), Some("bash: touch allowed-file"));
    real.bosun.wait_screen(&id, "Permission required");
    real.bosun.wait_screen(&id, "Allow once");
    assert!(!real.workspace(&id).join("allowed-file").exists(), "it waits:\n{}", real.peek(&id));
    let out = real.bosun.ok(real.repo.path(), &["answer", &id, "allow"]);
    assert!(out.starts_with(&format!("answered {id}'s dialog with allow")), "{out}");
    let ws = real.workspace(&id);
    assert!(wait_until(PATIENCE, || ws.join("allowed-file").exists()), "the call ran:\n{}", real.peek(&id));
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("Made it."));

    // Reject is the last option: the cursor moves there (right), a look shows it, Enter.
    real.bosun.ok(real.repo.path(), &["send", &id, "now the other file"]);
    real.bosun.wait_state(&id, "prompt(permission)");
    real.bosun.wait_screen(&id, "Allow once");
    real.bosun.ok(real.repo.path(), &["answer", &id, "deny", "--message", "why did you want that file?"]);
    let asked = wait_until(PATIENCE * 2, || real.model.main_requests().len() >= 4);
    assert!(asked, "the model was asked again:\n{}", real.peek(&id));
    assert!(!ws.join("denied-file").exists(), "the denied call did not run");
    let main = real.model.main_requests();
    assert_eq!(main[3].last_user_text().as_deref(), Some("why did you want that file?"));
    assert!(main[3].contains("The user rejected permission"), "the model heard the rejection: {:?}", main[3]);
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("Understood, I left it."));
}

#[test]
fn the_permission_policy_answers_through_its_plugin_and_the_model_hears_a_denial() {
    let Some(real) = Real::with(OpencodeConfig::asking) else { return };
    real.model.push(Reply::shell("touch allowed-file"));
    real.model.push(Reply::shell("touch denied-file"));
    real.model.push(Reply::text("Denied, so I stopped."));
    let policy = ["--allow", "bash(touch allowed*)", "--deny", "bash(touch denied*)", "--on-prompt", "escalate"];
    let id = real.start(&policy, &["--prompt", "make the files"]);
    let agent = real.wait_first(&id, "idle");
    let ws = real.workspace(&id);
    assert!(ws.join("allowed-file").exists(), "the allowed call ran:\n{}", real.peek(&id));
    assert!(!ws.join("denied-file").exists(), "the denied call did not:\n{}", real.peek(&id));
    let answers: Vec<(bool, &str)> = agent.permissions.iter().map(|p| (p.answer.allows(), p.answer.rule())).collect();
    assert_eq!(answers, [(true, "bash(touch allowed*)"), (false, "bash(touch denied*)")]);
    assert_eq!(agent.said.as_deref(), Some("Denied, so I stopped."));
    let main = real.model.main_requests();
    assert!(
        main.len() == 3 && main[2].contains("bosun's permission policy denies this"),
        "the model heard why: {main:?}"
    );
    assert!(real.bosun.ok(real.repo.path(), &["escalations"]).contains("nothing needs a person"));
}

#[test]
fn api_errors_are_errors_of_their_kind() {
    // A 401 ends the turn; a 429 is retried, and the agent is rate limited while it waits.
    for (status, label) in [(401, "error(unauthorized)"), (429, "error(rate_limited)")] {
        let Some(real) = Real::new() else { return };
        real.model.push(Reply::Status(status));
        let id = real.start(&["--prompt", "hello"], &[]);
        real.wait_first(&id, label);
        if status == 429 {
            // Its next try gets an answer: the turn goes on to its end.
            let agent = real.bosun.wait_state(&id, "idle");
            assert_eq!(agent.said.as_deref(), Some(bosun_testkit::fake_model::DEFAULT_TEXT));
        } else {
            // The failed turn's end, reported after the error (its session's file keeps each
            // report once bosun heard it), says nothing more: the error stands.
            let log = real.bosun.agent(&id).log.expect("its session's file");
            let ended =
                wait_until(PATIENCE, || std::fs::read_to_string(&log).unwrap_or_default().contains("session.idle"));
            assert!(ended, "its turn ended:\n{}", real.peek(&id));
            assert_eq!(real.bosun.agent(&id).state.label(), label, "{:?}", real.bosun.states_seen(&id));
        }
    }
}

/// Killed with SIGKILL, it is started again (`on_dead`) in the session its plugin named
/// (`--session`, the id its reports gave, kept in the agent's record: the session's file may be
/// out of reach, in a pod), and the resume's message is typed once it is up.
#[test]
fn a_killed_opencode_resumes_its_session_with_a_message() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::text("First answer."));
    real.model.push(Reply::text("After the crash."));
    let id = real.start(&["--on-dead", "resume:go on please", "--prompt", "fix it"], &[]);
    let agent = real.wait_first(&id, "idle");
    let session = agent.driver.found().expect("the session its plugin reported").to_owned();
    assert!(session.starts_with("ses_"), "{session}");
    let pid = agent.pid.expect("its pid");
    assert!(std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap().success());
    assert!(wait_until(PATIENCE, || real.bosun.agent(&id).restarts == 1), "restarted:\n{}", real.bosun.log());
    let argv = wait_until(PATIENCE, || real.bosun.agent(&id).pid.is_some_and(|p| p != pid));
    assert!(argv, "running again:\n{}", real.bosun.log());
    let pid = real.bosun.agent(&id).pid.unwrap();
    let argv = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let argv: Vec<String> = argv.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
    assert!(argv.windows(2).any(|w| w == ["--session", session.as_str()]), "resumed with its session: {argv:?}");
    assert!(wait_until(PATIENCE * 2, || real.model.main_requests().len() >= 2), "asked again:\n{}", real.peek(&id));
    let main = real.model.main_requests();
    assert_eq!(main[1].last_user_text().as_deref(), Some("go on please"), "the message was submitted");
    assert!(main[1].contains("fix it") && main[1].contains("First answer."), "with its history: {:?}", main[1]);
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("After the crash."));
}

#[test]
fn an_idle_agent_is_nudged_and_the_nudge_is_submitted() {
    let Some(real) = Real::new() else { return };
    real.model.push(Reply::text("Working on it."));
    real.model.push(Reply::text("Still on it."));
    let id = real.start(&["--grace", "0s", "--on-idle", "nudge*1:status please", "--prompt", "start"], &[]);
    assert!(wait_until(PATIENCE * 3, || real.model.main_requests().len() >= 2), "nudged:\n{}", real.peek(&id));
    let main = real.model.main_requests();
    assert_eq!(main[1].last_user_text().as_deref(), Some("status please"));
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("Still on it."));
}

/// In `--runtime sandbox`, its home (the user's) read-only, opencode reads its config (the
/// user's, copied) and writes its database, logs and snapshots in its own config directory, and
/// reaches its first turn with bosun's plugin; the user's config is as it was. Its files are where a user's are, in a home: the sandbox shows it
/// that home (the client installed there) and hides `/tmp`.
#[test]
fn a_sandboxed_opencode_reaches_its_first_turn_writing_its_data_in_its_own_config() {
    let Some(opencode) = bosun_testkit::tools::opencode() else { return };
    bosun_testkit::tools::bwrap();
    let home = std::env::var("HOME").expect("a HOME");
    let place = tempfile::Builder::new().prefix(".bosun-test-").tempdir_in(&home).unwrap();
    let model = FakeModel::anthropic();
    let env = OpencodeConfig::new(&model, place.path()).write();
    let config = env.config_dir.join("opencode.json");
    let before = std::fs::read(&config).unwrap();
    let bosun = Bosun::new_in(env!("CARGO_BIN_EXE_bosun"), place.path());
    let repo = TempRepo::new_in(place.path());
    model.push(Reply::text("Sandboxed and ready."));

    let opencode = opencode.display().to_string();
    let args = ["--runtime", "sandbox", "--on-prompt", "escalate", "--prompt", "hello", "--", &opencode];
    let id = bosun.start_with(repo.path(), &args, |cmd| {
        env.apply(cmd);
        cmd.env("CI", "true").env("GITHUB_ACTIONS", "true");
    });
    let reached = wait_until(PATIENCE * 3, || bosun.agent(&id).state.label() == "idle");
    assert!(reached, "{}: {}", bosun.agent(&id).state.label(), bosun.ok(repo.path(), &["peek", &id]));
    let agent = bosun.agent(&id);
    assert_eq!(agent.runtime.label(), "sandbox");
    assert_eq!(agent.said.as_deref(), Some("Sandboxed and ready."), "its first turn");
    let own = agent.dir.join("config");
    assert!(own.join("data/opencode/opencode.db").is_file(), "its database is in its own config");
    let made: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(own.join("config/opencode/opencode.json")).unwrap()).unwrap();
    assert_eq!(made["model"], bosun_testkit::clients::OPENCODE_MODEL, "its config is the user's: {made:#}");
    let log = agent.log.expect("its session's file");
    assert!(log.starts_with(own.join("sessions")), "{}", log.display());
    assert_eq!(std::fs::read(&config).unwrap(), before, "the user's config is as it was");
}
