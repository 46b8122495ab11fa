//! The real Claude Code (from the npm registry, pinned in `scripts/real-clients`) through
//! `bosun agent start`, against the fake Anthropic API of `bosun_testkit::fake_model`: what bosun
//! reads of it, and what it does about it. Each test skips, saying so in one line, only when the
//! npm registry cannot be reached to install the client.

mod support;

use std::path::PathBuf;

use bosun_testkit::clients::{ClaudeConfig, ClientEnv};
use bosun_testkit::fake_model::{FakeModel, Reply};
use bosun_testkit::poll::wait_until;
use support::*;

/// One bosun, one repository, one fake Anthropic API and a Claude config pointing at it.
struct Real {
    bosun: Bosun,
    repo: TempRepo,
    model: FakeModel,
    env: ClientEnv,
    claude: PathBuf,
    _dir: tempfile::TempDir,
}

impl Real {
    /// None (the test skips) when the client cannot be installed.
    fn new(configure: impl FnOnce(ClaudeConfig) -> ClaudeConfig) -> Option<Self> {
        let claude = bosun_testkit::tools::claude_code()?;
        let model = FakeModel::anthropic();
        let dir = tempfile::tempdir().unwrap();
        let env = configure(ClaudeConfig::new(&model, dir.path())).write();
        Some(Self { bosun: bosun(), repo: TempRepo::new(), model, env, claude, _dir: dir })
    }

    /// `bosun agent start ARGS -- claude REST…`, the agent running with the client's environment.
    fn start(&self, args: &[&str], rest: &[&str]) -> String {
        let claude = self.claude.display().to_string();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--", claude.as_str()]);
        all.extend(rest);
        self.bosun.start_with(self.repo.path(), &all, |cmd| {
            self.env.apply(cmd);
        })
    }

    fn peek(&self, id: &str) -> String {
        self.bosun.ok(self.repo.path(), &["peek", id])
    }
}

#[test]
fn a_prompt_on_the_command_line_runs_one_turn_to_idle_through_the_trust_dialog() {
    let Some(real) = Real::new(|c| c) else { return };
    real.model.push(Reply::text("All fixed. Shall I push?"));
    let id = real.start(&[], &["fix the bug"]);
    // The workspace is new to Claude: bosun answers its trust dialog.
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("All fixed. Shall I push?"), "what it said, from the Stop hook");
    let main = real.model.main_requests();
    assert_eq!(main.len(), 1, "one turn: {main:?}");
    assert_eq!(main[0].last_user_text().as_deref(), Some("fix the bug"));
    let states = real.bosun.states_seen(&id);
    assert_eq!(states.iter().filter(|s| *s == "idle").count(), 1, "never idle before the turn ended: {states:?}");
}

#[test]
fn a_permission_dialog_is_a_prompt_that_says_what_it_asks_and_answer_allows_it() {
    let Some(real) = Real::new(|c| c) else { return };
    real.model.push(Reply::shell("touch made-by-claude"));
    real.model.push(Reply::text("Made it."));
    let id = real.start(&[], &["make the file"]);
    let agent = real.bosun.wait_state(&id, "prompt(permission)");
    assert_eq!(agent.asks.as_deref(), Some("Bash: touch made-by-claude"));
    let out = real.bosun.ok(real.repo.path(), &["answer", &id, "allow"]);
    assert!(out.starts_with(&format!("answered {id}'s dialog with allow")), "{out}");
    let ws = real.bosun.show(&id).workspace.unwrap().path;
    assert!(wait_until(PATIENCE, || ws.join("made-by-claude").exists()), "the command ran:\n{}", real.peek(&id));
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("Made it."));
}

#[test]
fn the_permission_policy_answers_claudes_request_without_a_dialog() {
    let Some(real) = Real::new(|c| c) else { return };
    real.model.push(Reply::shell("touch allowed-file"));
    real.model.push(Reply::text("Done with it."));
    let id = real.start(&["--allow", "Bash(touch *)", "--on-prompt", "escalate"], &["make the file"]);
    let agent = real.bosun.wait_state(&id, "idle");
    let ws = real.bosun.show(&id).workspace.unwrap().path;
    assert!(ws.join("allowed-file").exists(), "the command ran");
    assert_eq!(agent.permissions.len(), 1, "{:?}", agent.permissions);
    assert_eq!(agent.permissions[0].answer.rule(), "Bash(touch *)");
    assert!(real.bosun.ok(real.repo.path(), &["escalations"]).contains("nothing needs a person"));
}

#[test]
fn api_errors_are_errors_of_their_kind() {
    for (status, label) in [(429, "error(rate_limited)"), (401, "error(unauthorized)")] {
        let Some(real) = Real::new(|c| c) else { return };
        real.model.push(Reply::Status(status));
        let id = real.start(&[], &["hello"]);
        real.bosun.wait_state(&id, label);
    }
}

#[test]
fn a_model_server_that_refuses_connections_is_no_internet() {
    let Some(real) = Real::new(|c| c) else { return };
    // Nothing listens there any more.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let claude = real.claude.display().to_string();
    let id = real.bosun.start_with(real.repo.path(), &["--", &claude, "hello"], |cmd| {
        real.env.apply(cmd);
        cmd.env("ANTHROPIC_BASE_URL", &closed);
    });
    real.bosun.wait_state(&id, "error(no_internet)");
}

#[test]
fn a_resume_right_after_a_turn_sends_only_its_own_message_with_the_conversation() {
    let Some(real) = Real::new(|c| c) else { return };
    real.model.push(Reply::text("First answer."));
    real.model.push(Reply::text("Going on."));
    // At the end of the first turn bosun restarts it at once, its conversation resumed.
    let id = real.start(&["--on-idle", "resume:go on"], &["fix it"]);
    let resumed = wait_until(PATIENCE, || real.model.main_requests().len() >= 2);
    assert!(resumed, "the resumed agent asked the model again:\n{}", real.bosun.log());
    let main = real.model.main_requests();
    assert_eq!(main[1].last_user_text().as_deref(), Some("go on"), "the resume's message arrives");
    let users: Vec<String> = main[1].messages().into_iter().filter(|(r, _)| r == "user").map(|(_, t)| t).collect();
    assert_eq!(
        users.iter().filter(|t| t.contains("fix it")).count(),
        1,
        "the first prompt is history, not sent again: {users:?}"
    );
    assert!(main[1].contains("First answer."), "the conversation came along");
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.restarts, 1);
    assert_eq!(agent.said.as_deref(), Some("Going on."));
}

#[test]
fn an_unapproved_api_key_dialog_is_a_setup_prompt() {
    let Some(real) = Real::new(ClaudeConfig::unapproved_key) else { return };
    let id = real.start(&["--on-prompt", "escalate"], &["hello"]);
    let agent = real.bosun.wait_state(&id, "prompt(setup)");
    assert!(agent.asks.as_deref().is_some_and(|a| a.contains("API key")), "{:?}", agent.asks);
    let escalations = real.bosun.ok(real.repo.path(), &["escalations"]);
    assert!(escalations.contains("setup dialog: Detected a custom API key"), "{escalations}");
    assert!(!escalations.contains("trust"), "bosun answered the trust dialog itself: {escalations}");
}
