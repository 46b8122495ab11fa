//! The real Claude Code (from the npm registry, pinned in `scripts/real-clients`) through
//! `bosun agent start`, against the fake Anthropic API of `bosun_testkit::fake_model`: what bosun
//! reads of it, and what it does about it. Each test skips, saying so in one line, only when the
//! npm registry cannot be reached to install the client.

mod support;

use std::path::PathBuf;

use bosun_adapters::{Sessions, SpawnSpec};
use bosun_core::{ModeFrom, PermissionMode, SessionName};
use bosun_testkit::clients::{ClaudeConfig, ClientEnv, WriteOrPanic as _};
use bosun_testkit::fake_model::{FakeModel, Reply};
use bosun_testkit::poll::{wait_for, wait_until};
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

/// The ledger: what the agent's transcript records of its model calls (a tool call, then the
/// answer) is, to the token, what the model server reported of each, under the model Claude
/// asked for.
#[test]
fn the_tokens_of_each_model_call_are_counted_to_the_token_as_the_server_reported_them() {
    let Some(real) = Real::new(ClaudeConfig::accept_bypass_permissions) else { return };
    real.model.push(Reply::shell("touch made-by-claude"));
    real.model.push(Reply::text("Made it."));
    let id = real.start(&[], &["--dangerously-skip-permissions", "make the file"]);
    real.bosun.wait_state(&id, "idle");
    let main = real.model.main_requests();
    assert_eq!(main.len(), 2, "a tool call and the answer");
    assert!(main.iter().all(|r| r.usage.is_some()), "each answer reported its usage");
    let expected = real.model.main_tokens();
    let model = main[0].body["model"].as_str().expect("the model it asked").to_owned();
    let counted = wait_for(PATIENCE, || {
        let usage = real.bosun.agent(&id).usage;
        (usage.total() == expected).then_some(usage)
    });
    let usage = counted.unwrap_or_else(|| panic!("{:?} is not {expected:?}", real.bosun.agent(&id).usage));
    assert_eq!(usage.by_model.keys().collect::<Vec<_>>(), [&model]);
    // What a person and a script read of it.
    let by_model: serde_json::Value =
        serde_json::from_str(&real.bosun.ok(real.repo.path(), &["usage", "--by", "model", "--json"])).unwrap();
    assert_eq!(by_model["lines"][0]["of"], model.as_str(), "{by_model}");
    assert_eq!(by_model["total"]["total"], expected.total(), "{by_model}");
    assert_eq!(by_model["total"]["cache_read"], expected.cache_read, "{by_model}");
    // Counts are written with thousands apart: 14,192.
    let written = |n: u64| {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    // Its cost: each answer's tokens at Claude Code 2.1.332's own prices for the model.
    let cost = bosun_core::price::dollars(real.model.main_cost(&model));
    assert!(by_model["total"]["cost_usd"].as_f64().is_some_and(|c| c > 0.0), "{by_model}");
    assert_eq!(by_model["total"]["cost_unknown"], false, "{by_model}");
    let shown = real.bosun.ok(real.repo.path(), &["show", &id]);
    assert!(shown.contains(&format!("{} cache read ({model}, {cost})", written(expected.cache_read))), "{shown}");
    let listed = real.bosun.ok(real.repo.path(), &["usage"]);
    let line = listed.lines().find(|l| l.starts_with(&id)).unwrap_or_else(|| panic!("{listed}"));
    assert!(line.trim_end().ends_with(&format!("{}  {cost}", written(expected.total()))), "{listed}");
    let ls = real.bosun.ok(real.repo.path(), &["ls"]);
    let total = format!("{}  {cost}", written(expected.total()));
    assert!(ls.lines().any(|l| l.starts_with(&id) && l.trim_end().ends_with(&total)), "{ls}");
}

/// `--dangerously-skip-permissions`, not yet accepted in the user's settings, opens on a warning
/// whose default answer is "No, exit": a setup prompt for a person, which bosun never answers
/// (the client still waits there, and nothing reached the model).
#[test]
fn the_bypass_permissions_warning_is_a_setup_prompt_left_to_a_person() {
    let Some(real) = Real::new(|c| c) else { return };
    let id = real.start(&[], &["--dangerously-skip-permissions", "fix the bug"]);
    let agent = real.bosun.wait_state(&id, "prompt(setup)");
    assert_eq!(agent.asks.as_deref(), Some("Claude Code running in Bypass Permissions mode"));
    real.bosun.wait_screen(&id, "Yes, I accept");
    assert!(real.bosun.agent(&id).state.is_up(), "it waits at the warning: {}", real.peek(&id));
    assert!(real.model.main_requests().is_empty(), "nothing was asked of the model");
}

#[test]
fn a_permission_dialog_is_a_prompt_that_says_what_it_asks_and_answer_allows_it() {
    let Some(real) = Real::new(|c| c) else { return };
    real.model.push(Reply::shell("touch made-by-claude"));
    real.model.push(Reply::text("Made it."));
    // Claude Code 2.1.3xx starts in auto mode, whose classifier asks nobody: the mode that
    // shows the dialog is named (without a policy, the client's own default stands).
    let id = real.start(&[], &["--permission-mode", "default", "make the file"]);
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
    // bosun chose the mode in which Claude asks (its policy is asked first), and Claude runs in it.
    assert_eq!(agent.permission_mode, Some(PermissionMode::Default), "as its hooks report");
    let mode = real.bosun.show(&id).permission_mode.expect("a Claude agent has a mode");
    assert_eq!((mode.mode, mode.from), (Some(PermissionMode::Default), ModeFrom::Bosun));
}

/// The reason the fake model's classifier gives for the calls it blocks.
const BLOCKED_BECAUSE: &str = "Creating files was not part of the task.";

#[test]
fn a_call_auto_modes_classifier_blocks_is_an_event_with_its_reason_that_on_prompt_escalates() {
    let Some(real) = Real::new(|c| c) else { return };
    real.model.push(Reply::shell_blocked("touch blocked-file", BLOCKED_BECAUSE));
    real.model.push(Reply::text("The command was blocked, so I stopped."));
    // No policy: Claude's own default, auto mode, stands.
    let id = real.start(&["--on-prompt", "escalate"], &["make the file"]);
    let agent = real.bosun.wait_state(&id, "idle");
    let ws = real.bosun.show(&id).workspace.unwrap().path;
    assert!(!ws.join("blocked-file").exists(), "the classifier blocked the call:\n{}", real.peek(&id));
    let main = real.model.main_requests();
    assert!(main.len() == 2 && main[1].contains("auto mode classifier"), "the model heard of the block: {main:?}");
    let blocked = agent.blocked.as_ref().expect("the block is recorded").call.clone();
    assert_eq!(
        (blocked.tool.as_str(), blocked.subject.as_deref(), blocked.reason.as_str()),
        ("Bash", Some("touch blocked-file"), BLOCKED_BECAUSE)
    );
    let escalations = real.bosun.ok(real.repo.path(), &["escalations"]);
    assert!(escalations.contains("blocked") && escalations.contains(BLOCKED_BECAUSE), "{escalations}");
    let shown = real.peek(&id);
    assert!(shown.contains("Blocked by auto mode"), "the screen says so too:\n{shown}");
    let mode = real.bosun.show(&id).permission_mode.expect("a Claude agent has a mode");
    assert_eq!((mode.mode, mode.from), (Some(PermissionMode::Auto), ModeFrom::Client));
    let text = real.bosun.ok(real.repo.path(), &["show", &id]);
    assert!(text.contains("mode       auto (reported by the client)"), "{text}");
    assert!(text.contains(&format!("blocked    Bash \"touch blocked-file\": {BLOCKED_BECAUSE}")), "{text}");
}

#[test]
fn bosuns_rules_are_asked_before_the_classifier_in_a_mode_the_command_names() {
    let Some(real) = Real::new(|c| c) else { return };
    // The classifier would block the first call; bosun's rule allows it first.
    real.model.push(Reply::shell_blocked("touch allowed-file", BLOCKED_BECAUSE));
    // The classifier would let the second run; bosun's rule denies it first.
    real.model.push(Reply::shell("touch denied-file"));
    real.model.push(Reply::text("Done what I could."));
    let id = real.start(
        &["--allow", "Bash(touch allowed-*)", "--deny", "Bash(touch denied-*)", "--on-prompt", "escalate"],
        &["--permission-mode", "auto", "make the files"],
    );
    let agent = real.bosun.wait_state(&id, "idle");
    let ws = real.bosun.show(&id).workspace.unwrap().path;
    assert!(ws.join("allowed-file").exists(), "bosun's allow stood over the classifier:\n{}", real.peek(&id));
    assert!(!ws.join("denied-file").exists(), "bosun's deny stood");
    let answers: Vec<(bool, &str)> = agent.permissions.iter().map(|p| (p.answer.allows(), p.answer.rule())).collect();
    assert_eq!(answers, [(true, "Bash(touch allowed-*)"), (false, "Bash(touch denied-*)")]);
    assert!(agent.blocked.is_none(), "nothing reached the classifier's block: {:?}", agent.blocked);
    assert!(real.bosun.ok(real.repo.path(), &["escalations"]).contains("nothing needs a person"));
    let mode = real.bosun.show(&id).permission_mode.expect("a Claude agent has a mode");
    assert_eq!((mode.mode, mode.from), (Some(PermissionMode::Auto), ModeFrom::Command));
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

#[test]
fn a_fork_starts_from_its_agents_conversation_and_work_in_a_worktree_of_its_own() {
    let Some(real) = Real::new(|c| c) else { return };
    real.model.push(Reply::text("First answer."));
    real.model.push(Reply::text("Forked answer."));
    let id = real.start(&[], &["fix it"]);
    let agent = real.bosun.wait_state(&id, "idle");
    // Its transcript is found (the fork's conversation is copied from it).
    let found = wait_until(PATIENCE, || real.bosun.agent(&id).log.is_some());
    assert!(found, "its transcript was found:\n{}", real.bosun.log());
    let ws = real.bosun.show(&id).workspace.unwrap().path;
    std::fs::write(ws.join("done.txt"), "committed\n").unwrap();
    let git = |dir: &std::path::Path, args: &[&str]| {
        let out = std::process::Command::new("git").args(args).current_dir(dir).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    git(&ws, &["add", "done.txt"]);
    git(&ws, &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "done"]);
    std::fs::write(ws.join("loose.txt"), "not committed\n").unwrap();
    let (status, head) = (git(&ws, &["status", "--porcelain"]), git(&ws, &["rev-parse", "HEAD"]));

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
    let (
        bosun_core::driver::Driver::Claude { session_id: theirs },
        bosun_core::driver::Driver::Claude { session_id: ours },
    ) = (&agent.driver, &forked.driver)
    else {
        panic!("Claude agents")
    };
    assert_ne!(theirs, ours, "a conversation of its own");

    let fork_ws = real.bosun.show(&fork).workspace.unwrap().path;
    assert_ne!(fork_ws, ws);
    assert_eq!(std::fs::read_to_string(fork_ws.join("done.txt")).unwrap(), "committed\n");
    assert_eq!(std::fs::read_to_string(fork_ws.join("loose.txt")).unwrap(), "not committed\n");
    let log = git(&fork_ws, &["log", "--format=%s", "-2"]);
    assert_eq!(log, format!("bosun fork of {id}: its work not committed\ndone"));
    assert_eq!((git(&ws, &["status", "--porcelain"]), git(&ws, &["rev-parse", "HEAD"])), (status, head), "untouched");
    assert_eq!(real.bosun.agent(&id).state.label(), "idle", "the agent forked goes on");
    // Each counts its own turn: the fork's transcript copies the history, not its usage.
    let own = |r: &bosun_testkit::fake_model::Logged| {
        let u = r.usage.expect("its usage");
        bosun_core::usage::Tokens {
            input: u.input,
            output: u.output,
            cache_write: u.cache_write,
            cache_read: u.cache_read,
        }
    };
    let counted = wait_until(PATIENCE, || {
        (real.bosun.agent(&id).usage.total(), real.bosun.agent(&fork).usage.total()) == (own(&main[0]), own(&main[1]))
    });
    assert!(counted, "{:?} / {:?}", real.bosun.agent(&id).usage, real.bosun.agent(&fork).usage);

    let err = real.bosun.fails(real.repo.path(), &["fork", "nope"]);
    assert!(err.contains("no agent"), "{err}");
    let plain = real.bosun.start(real.repo.path(), &["--", "sh", "-c", "sleep 600"]);
    let err = real.bosun.fails(real.repo.path(), &["fork", &plain]);
    assert!(err.contains("cannot fork"), "{err}");
}

const FAKE_ANSWER: &str = "Hello from a pod.";

/// Real Claude started in a repository (as a pod's workspace is: a clone, its own main
/// repository) with, as its `.claude.json`, the state bosun writes in a pod's config directory
/// for it (`own_state`), its folder trusted or not, the fake API key approved besides (the one
/// thing bosun cannot know there): the screen once it shows the model's answer or the trust
/// dialog. None when the client cannot be installed.
fn first_screen_with_bosuns_state(trusted: bool) -> Option<String> {
    let claude = bosun_testkit::tools::claude_code()?;
    let model = FakeModel::anthropic();
    model.push(Reply::text(FAKE_ANSWER));
    let repo = TempRepo::new();
    let config = tempfile::tempdir().unwrap();
    let env = ClaudeConfig::new(&model, config.path()).write();
    let path = env.config_dir.join(".claude.json");
    let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let state = bosun_core::driver::claude::own_state(repo.path().to_str().filter(|_| trusted));
    let mut state: serde_json::Value = serde_json::from_str(&state).unwrap();
    state["customApiKeyResponses"] = written["customApiKeyResponses"].clone();
    std::fs::write(&path, state.to_string()).unwrap();

    let server = bosun_testkit::tools::TmuxServer::new();
    let session = SessionName::from_reported("claude");
    let command = vec![claude.display().to_string(), "say hello".to_owned()];
    let spec = SpawnSpec::here(&session, repo.path(), &env.vars, &command);
    server.tmux().spawn(spec).expect("start Claude in tmux");
    let trust = bosun_core::driver::claude::is_trust_dialog;
    let screen = wait_for(PATIENCE, || {
        let screen = server.tmux().capture(&session, false).unwrap_or_default();
        (screen.contains(FAKE_ANSWER) || trust(&screen)).then_some(screen)
    });
    Some(screen.expect("Claude showed neither its answer nor the trust dialog"))
}

#[test]
fn the_state_bosun_writes_in_a_pods_claude_config_is_read_no_trust_dialog_and_no_onboarding_show() {
    let trust = bosun_core::driver::claude::is_trust_dialog;
    let Some(screen) = first_screen_with_bosuns_state(true) else { return };
    assert!(screen.contains(FAKE_ANSWER) && !trust(&screen), "it went straight to work:\n{screen}");
    // The same without the trust entry: the dialog shows, so the entry is what Claude read.
    let Some(screen) = first_screen_with_bosuns_state(false) else { return };
    assert!(trust(&screen), "{screen}");
}

/// In `--runtime sandbox`, in a fresh repository nobody trusted, Claude Code 2.1.3xx (which
/// decides a worktree's trust through its main repository) shows no trust dialog at all: the
/// config bosun made for it records the workspace and its repository as trusted. With trust
/// dialogs left to a person (`--no-accept-trust`), it reaches its first turn all the same, and
/// the user's config is as it was. Its fork, sandboxed too, finds the conversation in a config of
/// its own. Its files are where a user's are, in a home: the sandbox shows it that home (the
/// client installed there) and hides `/tmp`.
#[test]
fn a_sandboxed_claude_in_a_fresh_repository_shows_no_trust_dialog_reaches_its_first_turn_and_forks() {
    let Some(claude) = bosun_testkit::tools::claude_code() else { return };
    bosun_testkit::tools::bwrap();
    let home = std::env::var("HOME").expect("a HOME");
    let place = tempfile::Builder::new().prefix(".bosun-test-").tempdir_in(&home).unwrap();
    let model = FakeModel::anthropic();
    let env = ClaudeConfig::new(&model, place.path()).write();
    let bosun = Bosun::new_in(env!("CARGO_BIN_EXE_bosun"), place.path());
    let repo = TempRepo::new_in(place.path());
    let before = snapshot(std::slice::from_ref(&env.config_dir));
    model.push(Reply::text("Sandboxed and ready."));

    let claude = claude.display().to_string();
    let args = ["--runtime", "sandbox", "--no-accept-trust", "--on-prompt", "escalate", "--", &claude, "hello"];
    let id = bosun.start_with(repo.path(), &args, |cmd| {
        env.apply(cmd);
    });
    let agent = bosun.wait_state(&id, "idle");
    assert_eq!(agent.runtime.label(), "sandbox");
    assert_eq!(agent.said.as_deref(), Some("Sandboxed and ready."), "its first turn");
    let drawn = std::fs::read_to_string(agent.output_log()).unwrap_or_default();
    assert!(!drawn.contains("Quick safety check") && !drawn.contains("trust this folder"), "a trust dialog:\n{drawn}");
    let states = bosun.states_seen(&id);
    assert!(!states.iter().any(|s| s.starts_with("prompt")), "it asked something: {states:?}");
    assert!(bosun.ok(repo.path(), &["escalations"]).contains("nothing needs a person"));

    let own = agent.dir.join("config");
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(own.join(".claude.json")).unwrap()).unwrap();
    let ws = bosun.show(&id).workspace.unwrap().path;
    for trusted in [ws, repo.path().to_owned()] {
        let key = trusted.display().to_string();
        assert_eq!(state["projects"][&key]["hasTrustDialogAccepted"], true, "{key} trusted in {state:#}");
    }
    assert_eq!(snapshot(std::slice::from_ref(&env.config_dir)), before, "the user's config is as it was");

    model.push(Reply::text("Forked in the sandbox."));
    assert!(wait_until(PATIENCE, || bosun.agent(&id).log.is_some()), "its transcript was found");
    let mut cmd = bosun.command(repo.path(), &["fork", &id, "--prompt", "another way", "--json"]);
    env.apply(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let fork = v["agent"].as_str().unwrap().to_owned();
    let forked = bosun.wait_state(&fork, "idle");
    assert_eq!((forked.runtime.label().as_str(), forked.said.as_deref()), ("sandbox", Some("Forked in the sandbox.")));
    let main = model.main_requests();
    assert!(main[1].contains("Sandboxed and ready.") && main[1].contains("hello"), "the conversation came along");
    assert!(forked.log.is_some_and(|log| log.starts_with(forked.dir.join("config"))), "in its own config");
    assert_eq!(snapshot(std::slice::from_ref(&env.config_dir)), before, "the user's config is as it was");
}

/// At its budget the agent is paused: its turn in flight (a long shell call) is stopped with
/// Claude's own interrupt key and no model request follows, a person is asked; `bosun resume
/// --budget` goes on in the same conversation. (How soon after a crossing requests stop, with
/// an answer cut mid-stream, is `bosun-bench budget`'s figure.)
#[test]
fn at_its_budget_the_agent_is_paused_its_turn_stopped_and_a_raised_budget_goes_on() {
    let Some(real) = Real::new(ClaudeConfig::accept_bypass_permissions) else { return };
    real.model.push(Reply::shell("tail -f /dev/null; touch never-made"));
    real.model.push(Reply::text("Went on."));
    // Its first answer alone (a prompt of about 14,000 tokens) spends more than this.
    let id = real.start(&["--budget", "5ktok"], &["--dangerously-skip-permissions", "make the file"]);
    let paused = wait_for(PATIENCE, || real.bosun.agent(&id).paused).unwrap_or_else(|| panic!("{}", real.bosun.log()));
    assert_eq!(paused.budget.to_string(), "5ktok");
    // Its turn was stopped, its shell call cut: it waits, paused.
    let stopped = wait_for(PATIENCE, || {
        let transcript = real.bosun.agent(&id).log?;
        std::fs::read_to_string(transcript).ok().filter(|t| t.contains("[Request interrupted by user"))
    });
    let transcript = real.bosun.agent(&id).log.and_then(|t| std::fs::read_to_string(t).ok()).unwrap_or_default();
    assert!(stopped.is_some(), "its turn was interrupted:\n{}\n{transcript}", real.peek(&id));
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.state_label(), "paused(budget)");
    assert_eq!(real.model.main_requests().len(), 1, "no request after the one that crossed");
    let ls = real.bosun.ok(real.repo.path(), &["ls"]);
    assert!(ls.lines().any(|l| l.starts_with(&id) && l.contains("paused(budget)")), "{ls}");
    let escalations = real.bosun.ok(real.repo.path(), &["escalations"]);
    assert!(escalations.contains("reached its budget of 5ktok"), "{escalations}");
    // Nothing is typed into it while paused.
    let refused = real.bosun.fails(real.repo.path(), &["send", &id, "hello?"]);
    assert!(refused.contains("paused") && refused.contains("bosun resume"), "{refused}");
    let low = real.bosun.fails(real.repo.path(), &["resume", &id, "--budget", "6ktok"]);
    assert!(low.contains("give more"), "{low}");
    assert!(real.bosun.fails(real.repo.path(), &["resume", &id, "--budget", "lots"]).contains("`5usd`"));
    // Raised: it goes on in the same conversation.
    let out = real.bosun.ok(real.repo.path(), &["resume", &id, "--budget", "1Mtok"]);
    assert!(out.contains("goes on"), "{out}");
    let agent = wait_for(PATIENCE, || {
        let a = real.bosun.agent(&id);
        (a.said.as_deref() == Some("Went on.") && a.state.label() == "idle").then_some(a)
    });
    assert!(agent.is_some_and(|a| a.paused.is_none()), "it went on:\n{}", real.peek(&id));
    let main = real.model.main_requests();
    assert_eq!(main.len(), 2);
    assert!(main[1].contains("make the file") && main[1].contains("tail -f /dev/null"), "its history: {:?}", main[1]);
    let said = main[1].last_user_text();
    assert!(said.as_deref().is_some_and(|t| t.contains("budget was raised")), "{said:?}");
}

/// Claude Code records no reset time (docs/clients/claude.md): the agent is `error(rate_limited)`
/// with none, and its wait backs off, 30 s at first; woken then, past the reset, by bosun alone,
/// it completes its turn, and nothing of it reached the model during the backoff.
#[test]
fn a_rate_limit_claude_gives_no_reset_for_is_waited_out_by_a_backoff() {
    let Some(real) = Real::new(|c| c) else { return };
    // Long enough to be hit by its first request (its start takes seconds), short of the backoff.
    let until = std::time::SystemTime::now() + std::time::Duration::from_secs(20);
    real.model.limit_until(until);
    real.model.push(Reply::text("After the limit."));
    let id = real.start(&[], &["fix the bug"]);
    let limited = real.bosun.wait_state(&id, "error(rate_limited)");
    assert_eq!(limited.limited_until, None, "Claude records no reset time");
    let said = wait_for(PATIENCE * 3, || real.bosun.agent(&id).said.filter(|s| s == "After the limit."));
    assert!(said.is_some(), "its turn after the limit completed\n{}\n{}", real.peek(&id), real.bosun.log());
    let main = real.model.main_requests();
    let woken = bosun_core::rate_limit::WOKEN_MESSAGE;
    let resumed: Vec<_> = main.iter().filter(|r| r.last_user_text().as_deref() == Some(woken)).collect();
    assert_eq!(resumed.len(), 1, "told once: {main:#?}");
    let backoff = std::time::Duration::from_millis(bosun_core::rate_limit::BACKOFF_FIRST_MS);
    let failed = std::time::UNIX_EPOCH + std::time::Duration::from_millis(limited.state_since.as_millis());
    assert!(resumed[0].time >= failed + backoff, "nothing before the backoff was over");
    assert_eq!(main.len(), 2, "the limited request and the resumed one: nothing in between");
}

/// `rate_limited = "switch"`: a Claude agent whose account is rate limited is resumed on the
/// next account named in bosun's config (another `CLAUDE_CONFIG_DIR`, whose settings point it at
/// another model server), its transcript copied where Claude looks there: the resumed turn
/// reaches the second account's server with the conversation's history.
#[test]
fn a_limited_agent_switches_to_the_next_account_and_resumes_its_conversation_there() {
    let Some(real) = Real::new(|c| c) else { return };
    let other = FakeModel::anthropic();
    let dir = tempfile::tempdir().unwrap();
    let url = serde_json::json!({"env": {"ANTHROPIC_BASE_URL": other.base_url()}});
    let two = ClaudeConfig::new(&other, dir.path()).settings(url).write();
    let accounts = format!(
        "[accounts.one]\nclient = \"claude\"\nconfig = \"{}\"\n\n[accounts.two]\nclient = \"claude\"\nconfig = \"{}\"\n",
        real.env.config_dir.display(),
        two.config_dir.display()
    );
    std::fs::write(real.bosun.state_dir().join("config.toml"), accounts).unwrap();
    real.model.push(Reply::text("First answer."));
    let id = real.start(&["--account", "one", "--on-error", "rate_limited=switch"], &["fix the bug"]);
    let said = |want: &str| wait_until(PATIENCE * 2, || real.bosun.agent(&id).said.as_deref() == Some(want));
    assert!(said("First answer."), "{}", real.bosun.log());
    real.model.limit_until(std::time::SystemTime::now() + std::time::Duration::from_secs(600));
    other.push(Reply::text("Answered on the other account."));
    real.bosun.ok(real.repo.path(), &["send", &id, "now write the docs"]);
    assert!(said("Answered on the other account."), "{}\n{}", real.peek(&id), real.bosun.log());
    let there = other.main_requests();
    let resumed = there.last().expect("the second account's server was asked");
    assert_eq!(resumed.last_user_text().as_deref(), Some(bosun_core::rate_limit::SWITCHED_MESSAGE));
    let history = ["fix the bug", "First answer.", "now write the docs"];
    assert!(history.iter().all(|h| resumed.contains(h)), "the conversation came along: {resumed:#?}");
    let home = two.config_dir.display().to_string();
    assert_eq!(real.bosun.show(&id).agent.env.get("CLAUDE_CONFIG_DIR"), Some(&home), "on the second account");
    // The limit its copied conversation ends on is not read again as a new one.
    let escalations = real.bosun.ok(real.repo.path(), &["escalations"]);
    assert!(escalations.contains("nothing needs a person"), "{escalations}");
}
