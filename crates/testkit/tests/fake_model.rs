//! The fake model servers with the real clients: Claude Code and Codex, installed from the npm
//! registry at the versions pinned in `scripts/real-clients`, each headless and in its TUI in a
//! private tmux server, in a git repository of its own. These tests skip, saying so, only when
//! the npm registry cannot be reached to install the clients.

use std::fs;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use bosun_adapters::{Sessions, SpawnSpec};
use bosun_core::SessionName;
use bosun_testkit::clients::{
    processes_using, run_within, ClaudeConfig, ClientEnv, CodexConfig, WriteOrPanic as _, FAKE_ANTHROPIC_KEY,
    FAKE_OPENAI_KEY,
};
use bosun_testkit::fake_model::{FakeModel, Logged, Reply, DEFAULT_TEXT};
use bosun_testkit::poll::{wait_for, wait_until};
use bosun_testkit::repo::TempRepo;
use bosun_testkit::tools::{self, TmuxServer};
use serde_json::Value;
use tempfile::TempDir;

/// How long a client gets for something that takes it a second or two.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

/// A git repository to run a client in, and a dir for the client's config.
struct Place {
    repo: TempRepo,
    dir: TempDir,
}

impl Place {
    fn new() -> Self {
        Self {
            repo: TempRepo::new(),
            dir: tempfile::Builder::new().prefix("bosun-client-").tempdir().expect("temp dir"),
        }
    }
}

impl Drop for Place {
    /// Waits for the client to be gone (a TUI ends only once its tmux server is killed, which
    /// happens just before), so that it writes nothing more into the dirs as they are removed.
    fn drop(&mut self) {
        let gone = wait_until(CLIENT_TIMEOUT, || {
            processes_using(self.dir.path()).is_empty() && processes_using(self.repo.path()).is_empty()
        });
        if !gone {
            eprintln!("processes still use {}: {:?}", self.dir.path().display(), processes_using(self.dir.path()));
        }
    }
}

fn run(env: &ClientEnv, program: &Path, cwd: &Path, args: &[&str]) -> Output {
    let mut cmd = env.command(program);
    cmd.args(args).current_dir(cwd);
    run_within(&mut cmd, CLIENT_TIMEOUT)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Claude's `-p --output-format json` result.
fn claude_result(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("claude printed no JSON ({e}):\n{}\n{}", text(&out.stdout), text(&out.stderr)))
}

fn user_said(request: &Logged, prompt: &str) -> bool {
    request.messages().iter().any(|(role, text)| role == "user" && text == prompt)
}

#[test]
fn claude_headless_gets_the_fake_text_and_the_log_shows_the_prompt() {
    let Some(claude) = tools::claude_code() else { return };
    let place = Place::new();
    let model = FakeModel::anthropic();
    model.push(Reply::text("Hello from the fake model"));
    let env = ClaudeConfig::new(&model, place.dir.path()).write();

    let out = run(&env, &claude, place.repo.path(), &["-p", "say hello", "--output-format", "json"]);
    let result = claude_result(&out);
    assert_eq!(result["result"], "Hello from the fake model", "{result}");
    assert_eq!(result["is_error"], false);
    let main = model.main_requests();
    assert_eq!(main.len(), 1, "{main:?}");
    assert!(user_said(&main[0], "say hello"), "{:?}", main[0].messages());
    assert_eq!(main[0].header("x-api-key"), Some(FAKE_ANTHROPIC_KEY));
}

#[test]
fn claude_runs_a_shell_reply_and_its_file_appears() {
    let Some(claude) = tools::claude_code() else { return };
    let place = Place::new();
    let model = FakeModel::anthropic();
    model.push(Reply::shell("echo made-by-claude > made.txt"));
    model.push(Reply::text("Made the file."));
    let env = ClaudeConfig::new(&model, place.dir.path()).write();

    let args = ["-p", "make the file", "--output-format", "json", "--dangerously-skip-permissions"];
    let out = run(&env, &claude, place.repo.path(), &args);
    assert_eq!(claude_result(&out)["result"], "Made the file.");
    let made = fs::read_to_string(place.repo.path().join("made.txt")).expect("made.txt written by the Bash call");
    assert_eq!(made, "made-by-claude\n");
    // The follow-up request carries the tool call and its result.
    let main = model.main_requests();
    assert_eq!(main.len(), 2);
    let follow_up = main[1].messages();
    assert!(follow_up.iter().any(|(_, t)| t.starts_with("tool Bash") && t.contains("made.txt")), "{follow_up:?}");
    assert!(follow_up.iter().any(|(_, t)| t.starts_with("result")), "{follow_up:?}");
}

#[test]
fn claude_gets_a_stalled_answer_whole() {
    let Some(claude) = tools::claude_code() else { return };
    let place = Place::new();
    let model = FakeModel::anthropic();
    model.push(Reply::stall(1, "first half, second half"));
    let env = ClaudeConfig::new(&model, place.dir.path()).write();

    let out = run(&env, &claude, place.repo.path(), &["-p", "hi", "--output-format", "json"]);
    assert_eq!(claude_result(&out)["result"], "first half, second half");
}

#[test]
fn claude_reports_a_429_as_an_error() {
    let Some(claude) = tools::claude_code() else { return };
    let place = Place::new();
    let model = FakeModel::anthropic();
    model.push(Reply::Status(429));
    let env = ClaudeConfig::new(&model, place.dir.path()).write();

    let out = run(&env, &claude, place.repo.path(), &["-p", "hi", "--output-format", "json"]);
    let result = claude_result(&out);
    assert!(!out.status.success());
    assert_eq!(
        (result["is_error"].as_bool(), result["api_error_status"].as_u64()),
        (Some(true), Some(429)),
        "{result}"
    );
    // CLAUDE_CODE_MAX_RETRIES=0: asked once.
    assert_eq!(model.main_requests().len(), 1);
}

#[test]
fn codex_exec_gets_the_fake_text_and_the_log_shows_the_prompt() {
    let Some(codex) = tools::codex() else { return };
    let place = Place::new();
    let model = FakeModel::openai();
    model.push(Reply::text("Hello from the fake model"));
    let env = CodexConfig::new(&model, place.dir.path()).trust(place.repo.path()).write();

    let out = run(&env, &codex, place.repo.path(), &["exec", "say hello"]);
    assert!(out.status.success(), "{}\n{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Hello from the fake model");
    let main = model.main_requests();
    assert_eq!(main.len(), 1, "{main:?}");
    assert_eq!(main[0].last_user_text().as_deref(), Some("say hello"));
    let bearer = format!("Bearer {}", FAKE_OPENAI_KEY);
    assert_eq!(main[0].header("authorization"), Some(bearer.as_str()));
}

#[test]
fn codex_exec_runs_an_exec_command_and_its_file_appears() {
    let Some(codex) = tools::codex() else { return };
    let place = Place::new();
    let model = FakeModel::openai();
    model.push(Reply::shell("echo made-by-codex > made.txt"));
    model.push(Reply::text("Made the file."));
    let env = CodexConfig::new(&model, place.dir.path()).trust(place.repo.path()).write();

    let out = run(&env, &codex, place.repo.path(), &["exec", "make the file"]);
    assert!(out.status.success(), "{}\n{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Made the file.");
    let made = fs::read_to_string(place.repo.path().join("made.txt")).expect("made.txt written by exec_command");
    assert_eq!(made, "made-by-codex\n");
    let follow_up = model.main_requests()[1].messages();
    assert!(
        follow_up.iter().any(|(_, t)| t.starts_with("tool exec_command") && t.contains("made.txt")),
        "{follow_up:?}"
    );
    assert!(follow_up.iter().any(|(r, t)| r == "tool" && t.contains("exited with code 0")), "{follow_up:?}");
}

#[test]
fn codex_exec_reports_a_429_as_an_error() {
    let Some(codex) = tools::codex() else { return };
    let place = Place::new();
    let model = FakeModel::openai();
    model.push(Reply::Status(429));
    let env = CodexConfig::new(&model, place.dir.path()).trust(place.repo.path()).write();

    let out = run(&env, &codex, place.repo.path(), &["exec", "hi"]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("429 Too Many Requests"), "{stderr}");
    assert_eq!(model.main_requests().len(), 1);
}

/// Starts `command` in a session of `server`, in `cwd`, with `env`.
fn start(server: &TmuxServer, session: &SessionName, cwd: &Path, env: &ClientEnv, command: &[&str]) {
    let command: Vec<String> = command.iter().map(|a| (*a).to_owned()).collect();
    server.tmux().spawn(SpawnSpec::here(session, cwd, &env.vars, &command)).expect("start the client in tmux");
}

/// Waits until the screen shows `needle`, and returns the screen.
fn wait_for_screen(server: &TmuxServer, session: &SessionName, needle: &str) -> String {
    let mut last = String::new();
    wait_for(CLIENT_TIMEOUT, || {
        last = server.tmux().capture(session, false).unwrap_or_default();
        last.contains(needle).then(|| last.clone())
    })
    .unwrap_or_else(|| panic!("the screen never showed {needle:?}; it shows:\n{last}"))
}

/// Waits for the dialog showing `question`, then presses Enter (its default answer), and again
/// when the screen still shows it a while later: an Enter that comes the instant a dialog is
/// drawn can be lost (seen with Codex 0.169's approval dialog).
fn answer_with_enter(server: &TmuxServer, session: &SessionName, question: &str) {
    wait_for_screen(server, session, question);
    for _ in 0..5 {
        server.tmux().press_enter(session).expect("Enter");
        let screen = || server.tmux().capture(session, false).unwrap_or_default();
        if wait_until(Duration::from_secs(2), || !screen().contains(question)) {
            return;
        }
    }
    panic!("the dialog {question:?} stayed after five Enters");
}

/// Answers the trust dialog on the screen by what its options say: the cursor moved to the
/// option that trusts, Enter once the screen shows it there.
fn trust_by_reading(server: &TmuxServer, session: &SessionName, question: &str) {
    use bosun_core::driver::dialog::{menu, Step, Want};
    wait_for_screen(server, session, question);
    let screen = || server.tmux().capture(session, false).unwrap_or_default();
    for _ in 0..5 {
        let shown = screen();
        if !shown.contains(question) {
            return;
        }
        // A menu half drawn is read again once the screen changes.
        let Some(m) = menu(&shown) else {
            wait_until(Duration::from_secs(5), || screen() != shown);
            continue;
        };
        let to = m.find(Want::Trust).expect("an option that trusts");
        let keys = match m.step(to, false).expect("the cursor is seen") {
            Step::Pick(keys) | Step::Move(keys) => keys,
        };
        server.tmux().press(session, &keys).expect("keys");
        wait_until(Duration::from_secs(5), || screen() != shown);
    }
    // The last key's effect may be drawn late on a busy machine.
    let gone = wait_until(Duration::from_secs(20), || !screen().contains(question));
    assert!(gone, "the trust dialog stayed:\n{}", screen());
}

#[test]
fn codex_tui_starts_without_first_run_screens_and_answers_a_positional_prompt() {
    let Some(codex) = tools::codex() else { return };
    let place = Place::new();
    let model = FakeModel::openai();
    model.push(Reply::text("Hello from the fake model"));
    model.push(Reply::text("Second answer"));
    let env = CodexConfig::new(&model, place.dir.path()).trust(place.repo.path()).write();
    let server = TmuxServer::new();
    let session = SessionName::from_reported("codex");

    start(&server, &session, place.repo.path(), &env, &[codex.to_str().expect("utf-8 path"), "say hello"]);
    wait_for_screen(&server, &session, "Hello from the fake model");
    server.tmux().send_text(&session, "and again").expect("type");
    wait_for_screen(&server, &session, "Second answer");
    let main = model.main_requests();
    assert_eq!(main.iter().filter_map(Logged::last_user_text).collect::<Vec<_>>(), ["say hello", "and again"]);
}

#[test]
fn claude_tui_answers_in_a_trusted_folder() {
    let Some(claude) = tools::claude_code() else { return };
    let place = Place::new();
    let model = FakeModel::anthropic();
    model.push(Reply::text("Hello from the fake model"));
    let env = ClaudeConfig::new(&model, place.dir.path()).trust(place.repo.path()).write();
    let server = TmuxServer::new();
    let session = SessionName::from_reported("claude");

    start(&server, &session, place.repo.path(), &env, &[claude.to_str().expect("utf-8 path"), "say hello"]);
    wait_for_screen(&server, &session, "Hello from the fake model");
    assert!(model.main_requests().iter().any(|r| user_said(r, "say hello")));
}

#[test]
fn claude_tui_asks_about_an_untrusted_folder() {
    let Some(claude) = tools::claude_code() else { return };
    let place = Place::new();
    let model = FakeModel::anthropic();
    let env = ClaudeConfig::new(&model, place.dir.path()).write();
    let server = TmuxServer::new();
    let session = SessionName::from_reported("claude");

    start(&server, &session, place.repo.path(), &env, &[claude.to_str().expect("utf-8 path"), "say hello"]);
    wait_for_screen(&server, &session, "Is this a project you created or one you trust?");
    assert!(model.main_requests().is_empty(), "asked the model before the folder was trusted");
    // The option that trusts, wherever it is listed (2.1.332 lists "No, exit" first and
    // selected): the cursor moved to it, then Enter; then the prompt runs.
    trust_by_reading(&server, &session, "Is this a project you created or one you trust?");
    wait_for_screen(&server, &session, DEFAULT_TEXT);
}

#[test]
fn claude_tui_asks_before_running_a_shell_command_and_runs_it_once_approved() {
    let Some(claude) = tools::claude_code() else { return };
    let place = Place::new();
    let model = FakeModel::anthropic();
    model.push(Reply::ShellNeedingApproval("echo approved > approved.txt".into()));
    model.push(Reply::text("Ran it."));
    let env = ClaudeConfig::new(&model, place.dir.path()).trust(place.repo.path()).write();
    let server = TmuxServer::new();
    let session = SessionName::from_reported("claude");

    // 2.1.3xx starts in auto mode, which asks nobody: the mode that asks is named.
    let claude = claude.to_str().expect("utf-8 path");
    start(&server, &session, place.repo.path(), &env, &[claude, "--permission-mode", "default", "run it"]);
    wait_for_screen(&server, &session, "Do you want to proceed?");
    assert!(!place.repo.path().join("approved.txt").exists(), "ran before it was approved");
    // Enter takes the default answer, "1. Yes".
    answer_with_enter(&server, &session, "Do you want to proceed?");
    wait_for_screen(&server, &session, "Ran it.");
    assert!(place.repo.path().join("approved.txt").is_file());
}

#[test]
fn codex_tui_asks_before_running_an_escalated_command_and_runs_it_once_approved() {
    let Some(codex) = tools::codex() else { return };
    let place = Place::new();
    let model = FakeModel::openai();
    model.push(Reply::ShellNeedingApproval("echo approved > approved.txt".into()));
    model.push(Reply::text("Ran it."));
    let env = CodexConfig::new(&model, place.dir.path()).trust(place.repo.path()).asking_approval().write();
    let server = TmuxServer::new();
    let session = SessionName::from_reported("codex");

    start(&server, &session, place.repo.path(), &env, &[codex.to_str().expect("utf-8 path"), "run it"]);
    wait_for_screen(&server, &session, "Would you like to run the following command?");
    assert!(!place.repo.path().join("approved.txt").exists(), "ran before it was approved");
    // Enter takes the default answer, "1. Yes, proceed (y)".
    answer_with_enter(&server, &session, "Would you like to run the following command?");
    wait_for_screen(&server, &session, "Ran it.");
    assert!(place.repo.path().join("approved.txt").is_file());
}

#[test]
fn codex_tui_leaves_no_background_server_behind() {
    let Some(codex) = tools::codex() else { return };
    let place = Place::new();
    let model = FakeModel::openai();
    let env = CodexConfig::new(&model, place.dir.path()).trust(place.repo.path()).write();
    let server = TmuxServer::new();
    let session = SessionName::from_reported("codex");

    start(&server, &session, place.repo.path(), &env, &[codex.to_str().expect("utf-8 path"), "hi"]);
    wait_for_screen(&server, &session, DEFAULT_TEXT);
    // With `daemon_auto_start` on, the TUI would have started `codex app-server` (installed
    // under CODEX_HOME/packages/app-server-daemon), which outlives the TUI.
    let daemon = env.config_dir.join("app-server-daemon");
    assert!(!daemon.exists() && !env.config_dir.join("packages").exists(), "a background server was set up");
    server.tmux().kill(&session).expect("kill");
    let gone = wait_until(CLIENT_TIMEOUT, || processes_using(&env.config_dir).is_empty());
    assert!(gone, "processes still use CODEX_HOME: {:?}", processes_using(&env.config_dir));
}

#[test]
fn claude_tui_asks_about_an_unapproved_api_key_after_the_trust_dialog() {
    let Some(claude) = tools::claude_code() else { return };
    let place = Place::new();
    let model = FakeModel::anthropic();
    let env = ClaudeConfig::new(&model, place.dir.path()).unapproved_key().write();
    let server = TmuxServer::new();
    let session = SessionName::from_reported("claude");

    start(&server, &session, place.repo.path(), &env, &[claude.to_str().expect("utf-8 path")]);
    trust_by_reading(&server, &session, "Is this a project you created or one you trust?");
    let screen = wait_for_screen(&server, &session, "Do you want to use this API key?");
    // The default answer is No (2.1.197 numbers it "2. No (recommended)"; 2.1.332 does not).
    let menu = bosun_core::driver::dialog::menu(&screen).expect("its options");
    let selected = menu.selected.map(|i| menu.options[i].text.as_str());
    assert_eq!(selected, Some("No (recommended)"), "{screen}");
}

#[test]
fn claude_tui_skipping_permissions_runs_a_shell_reply_without_any_dialog() {
    let Some(claude) = tools::claude_code() else { return };
    let place = Place::new();
    let model = FakeModel::anthropic();
    model.push(Reply::shell("echo made > made.txt"));
    model.push(Reply::text("Made it."));
    let env = ClaudeConfig::new(&model, place.dir.path()).trust(place.repo.path()).accept_bypass_permissions().write();
    let server = TmuxServer::new();
    let session = SessionName::from_reported("claude");

    let claude = claude.to_str().expect("utf-8 path");
    start(&server, &session, place.repo.path(), &env, &[claude, "--dangerously-skip-permissions", "make it"]);
    wait_for_screen(&server, &session, "Made it.");
    assert!(place.repo.path().join("made.txt").is_file());
}
