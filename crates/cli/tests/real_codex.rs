//! The real Codex CLI (from the npm registry, pinned in `scripts/real-clients`) through
//! `bosun agent start`, against the fake OpenAI Responses API of `bosun_testkit::fake_model`.
//! Each test skips, saying so in one line, only when the npm registry cannot be reached to
//! install the client.

mod support;

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bosun_core::rate_limit;
use bosun_testkit::clients::{ClientEnv, CodexConfig, WriteOrPanic as _};
use bosun_testkit::fake_model::{FakeModel, Logged, Reply};
use bosun_testkit::poll::{wait_for, wait_until};
use support::*;

/// One bosun, one repository, one fake OpenAI API and a Codex home pointing at it.
struct Real {
    bosun: Bosun,
    repo: TempRepo,
    model: FakeModel,
    env: ClientEnv,
    codex: PathBuf,
    _dir: tempfile::TempDir,
}

impl Real {
    /// None (the test skips) when the client cannot be installed. `configure` gets a config
    /// that trusts the repository (Codex resolves a worktree to it).
    fn new(configure: impl FnOnce(CodexConfig, &std::path::Path) -> CodexConfig) -> Option<Self> {
        let codex = bosun_testkit::tools::codex()?;
        let model = FakeModel::openai();
        let dir = tempfile::tempdir().unwrap();
        let repo = TempRepo::new();
        let env = configure(CodexConfig::new(&model, dir.path()), repo.path()).write();
        Some(Self { bosun: bosun(), repo, model, env, codex, _dir: dir })
    }

    /// `bosun agent start ARGS -- codex REST…`, the agent running with the client's environment.
    fn start(&self, args: &[&str], rest: &[&str]) -> String {
        let codex = self.codex.display().to_string();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--", codex.as_str()]);
        all.extend(rest);
        self.bosun.start_with(self.repo.path(), &all, |cmd| {
            self.env.apply(cmd);
        })
    }
}

fn trusted(c: CodexConfig, repo: &std::path::Path) -> CodexConfig {
    c.trust(repo.canonicalize().unwrap())
}

#[test]
fn a_positional_prompt_is_one_turn_to_idle_and_the_title_thread_is_not_the_agent() {
    let Some(real) = Real::new(trusted) else { return };
    real.model.push(Reply::stall(2, "Fixed the bug for you."));
    let id = real.start(&[], &["fix the bug"]);
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("Fixed the bug for you."), "the main thread's answer, not a title");
    let states = real.bosun.states_seen(&id);
    assert_eq!(states.iter().filter(|s| *s == "idle").count(), 1, "never idle before the turn ended: {states:?}");
    let main = real.model.main_requests();
    assert_eq!(main[0].last_user_text().as_deref(), Some("fix the bug"));
}

/// The ledger: what Codex's rollout records of its model calls (a shell call, then the answer)
/// is, to the token, what the model server reported of each; its title request, which it
/// records nowhere, is not counted.
#[test]
fn the_tokens_of_each_model_call_are_counted_to_the_token_as_the_server_reported_them() {
    let Some(real) = Real::new(trusted) else { return };
    real.model.push(Reply::shell("touch made-by-codex"));
    real.model.push(Reply::text("Made it."));
    let id = real.start(&[], &["make the file"]);
    real.bosun.wait_state(&id, "idle");
    let main = real.model.main_requests();
    assert_eq!(main.len(), 2, "a shell call and the answer");
    assert!(main.iter().all(|r| r.usage.is_some()), "each answer reported its usage");
    let expected = real.model.main_tokens();
    let counted = wait_until(PATIENCE, || real.bosun.agent(&id).usage.total() == expected);
    assert!(counted, "{:?} is not {expected:?}", real.bosun.agent(&id).usage);
    let side = real.model.requests().into_iter().filter(|r| !r.main_loop && r.usage.is_some()).count();
    assert!(side >= 1, "its title request was answered too, and is not in the count");
    // Its records name no model: the one its turn's context names, the one it asked for.
    let usage = real.bosun.agent(&id).usage;
    let asked = main[0].body["model"].as_str().expect("the model it asked").to_owned();
    assert_eq!(usage.by_model.keys().collect::<Vec<_>>(), [&asked]);
    assert_eq!(usage.cost(), (real.model.main_cost(&asked), false), "{asked} priced as the server counted");
}

/// The ledger outlives a crash of bosun: the usage Codex records while no daemon runs is read
/// from its rollout when one runs again (a restarted daemon follows a log from its end).
#[test]
fn usage_recorded_while_no_daemon_ran_is_counted_when_one_runs_again() {
    let Some(real) = Real::new(trusted) else { return };
    real.model.push(Reply::stall(3, "Slowly fixed."));
    let id = real.start(&[], &["fix the bug"]);
    assert!(real.model.wait_main_requests(1, PATIENCE), "its turn started");
    let log = bosun_testkit::poll::wait_for(PATIENCE, || real.bosun.agent(&id).log).expect("its rollout was found");
    real.bosun.kill_daemon_hard();
    // Its answer ends, and Codex records what it used, with no daemon to read it.
    let recorded =
        wait_until(PATIENCE, || std::fs::read_to_string(&log).unwrap_or_default().contains("\"token_usage_record\""));
    assert!(recorded, "Codex recorded its usage");
    let expected = real.model.main_tokens();
    assert!(!expected.is_zero());
    // Any command starts a daemon again.
    let counted = wait_until(PATIENCE, || real.bosun.agent(&id).usage.total() == expected);
    assert!(counted, "{:?} is not {expected:?}", real.bosun.agent(&id).usage);
}

#[test]
fn failed_turns_are_errors_of_their_kind() {
    for (status, label) in [(429, "error(rate_limited)"), (401, "error(unauthorized)")] {
        let Some(real) = Real::new(trusted) else { return };
        real.model.push(Reply::Status(status));
        let id = real.start(&[], &["hello"]);
        real.bosun.wait_state(&id, label);
    }
}

#[test]
fn an_approval_dialog_is_a_permission_prompt_and_answer_allows_it() {
    let Some(real) = Real::new(|c, repo| trusted(c, repo).asking_approval()) else { return };
    real.model.push(Reply::ShellNeedingApproval("touch approved-file".into()));
    real.model.push(Reply::text("Made it."));
    let id = real.start(&[], &["make the file"]);
    let agent = real.bosun.wait_state(&id, "prompt(permission)");
    assert_eq!(agent.asks.as_deref(), Some("run: touch approved-file"));
    real.bosun.ok(real.repo.path(), &["answer", &id, "allow"]);
    let ws = real.bosun.show(&id).workspace.unwrap().path;
    assert!(wait_until(PATIENCE, || ws.join("approved-file").exists()), "the command ran");
    real.bosun.wait_state(&id, "idle");
}

#[test]
fn the_trust_dialog_of_a_new_folder_is_answered() {
    let Some(real) = Real::new(|c, _| c) else { return };
    real.model.push(Reply::text("Hello there."));
    let id = real.start(&[], &["say hello"]);
    let agent = real.bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("Hello there."));
}

#[test]
fn a_fork_of_a_codex_agent_starts_from_its_conversation_in_a_worktree_of_its_own() {
    let Some(real) = Real::new(trusted) else { return };
    real.model.push(Reply::text("First answer."));
    real.model.push(Reply::text("Forked answer."));
    let id = real.start(&[], &["fix the bug"]);
    real.bosun.wait_state(&id, "idle");
    let found = wait_until(PATIENCE, || real.bosun.agent(&id).log.is_some());
    assert!(found, "its rollout log was found:\n{}", real.bosun.log());
    let mut cmd = real.bosun.command(real.repo.path(), &["fork", &id, "--prompt", "try it another way", "--json"]);
    real.env.apply(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let fork = v["agent"].as_str().unwrap().to_owned();
    let forked = real.bosun.wait_state(&fork, "idle");
    assert_eq!(forked.said.as_deref(), Some("Forked answer."), "{}", real.bosun.log());
    let main = real.model.main_requests();
    let last = main.last().expect("the fork asked the model");
    assert!(last.contains("First answer.") && last.contains("try it another way"), "the conversation came along");
    assert_ne!(real.bosun.show(&fork).workspace.unwrap().path, real.bosun.show(&id).workspace.unwrap().path);
    assert_eq!(real.bosun.agent(&id).state.label(), "idle", "the agent forked goes on");
}

/// A plan's usage limit resetting `secs` from now, on a whole second (Codex logs its reset in
/// whole seconds): its reset, and the label `ls` shows for an agent limited until it.
fn usage_limit(real: &Real, secs: u64) -> (SystemTime, String) {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    let until = UNIX_EPOCH + Duration::from_secs(now + secs);
    real.model.usage_limit_until(until);
    real.model.push(Reply::text("After the limit."));
    let at = bosun_core::Timestamp::from_millis((now + secs) * 1_000);
    (until, format!("error(rate_limited until {})", at.clock()))
}

/// The agent's turn after the limit completed, told by bosun alone that the limit had reset:
/// no request after the limit was met started before the reset, and it was told once.
fn resumed_after(real: &Real, id: &str, until: SystemTime) {
    let said = wait_for(PATIENCE * 2, || real.bosun.agent(id).said.filter(|s| s == "After the limit."));
    let screen = || real.bosun.ok(real.repo.path(), &["peek", id]);
    assert!(said.is_some(), "its turn after the limit completed\n{}\n{}", screen(), real.bosun.log());
    let main = real.model.main_requests();
    let woken: Vec<_> =
        main.iter().filter(|r| r.last_user_text().as_deref() == Some(rate_limit::WOKEN_MESSAGE)).collect();
    assert_eq!(woken.len(), 1, "told once that the limit has reset: {main:#?}");
    assert!(woken[0].time >= until, "its turn started after the reset, not before");
    let limited = |r: &&Logged| matches!(r.reply, Some(Reply::Limited(_)));
    let met = main.iter().find(limited).expect("the limit was met").time;
    let answered: Vec<_> = main.iter().filter(|r| r.time > met && !limited(r)).collect();
    assert!(answered.iter().all(|r| r.time >= until), "no request between the limit and its reset was answered");
    let told = real.bosun.show(id).messages.iter().filter(|m| m.text == rate_limit::WOKEN_MESSAGE).count();
    assert_eq!(told, 1);
}

/// Codex records when its plan's usage limit resets (a used-up window's `resets_at`): the agent
/// shows it, and is woken by itself once it has passed, not before, its turn then completing.
#[test]
fn a_usage_limit_is_shown_with_its_reset_and_waited_out() {
    let Some(real) = Real::new(trusted) else { return };
    let (until, label) = usage_limit(&real, 8);
    let id = real.start(&[], &["fix the bug"]);
    let shown = wait_until(PATIENCE, || real.bosun.ok(real.repo.path(), &["ls"]).contains(&label));
    assert!(shown, "ls shows {label}:\n{}", real.bosun.ok(real.repo.path(), &["ls"]));
    let json = real.bosun.ok(real.repo.path(), &["show", &id, "--json"]);
    assert!(json.contains("\"limited_until\""), "{json}");
    resumed_after(&real, &id, until);
}

/// The wait is a durable timer: bosun killed with SIGKILL while it waits, the daemon started
/// again wakes the agent after the reset, once.
#[test]
fn a_usage_limits_wait_outlives_a_sigkill_of_bosun_and_wakes_the_agent_once() {
    let Some(real) = Real::new(trusted) else { return };
    let (until, label) = usage_limit(&real, 12);
    let id = real.start(&[], &["fix the bug"]);
    let shown = wait_until(PATIENCE, || real.bosun.ok(real.repo.path(), &["ls"]).contains(&label));
    assert!(shown, "ls shows {label}");
    real.bosun.kill_daemon_hard();
    // Any command starts a daemon again.
    real.bosun.ok(real.repo.path(), &["ls"]);
    resumed_after(&real, &id, until);
}

/// A usage limit Codex meets while no bosun runs (its error line written past where a daemon
/// started again follows the rollout from) is read at the restart, shown with its reset and
/// waited out: the agent does not stay "running" for good.
#[test]
fn a_usage_limit_met_while_bosun_is_down_is_seen_at_its_restart_and_waited_out() {
    let Some(real) = Real::new(trusted) else { return };
    // The first answer runs a command long enough for bosun to be killed meanwhile (its rollout
    // found, the daemon gone: asserted below); the request that carries its result meets the limit.
    real.model.push(Reply::shell("sleep 8"));
    let id = real.start(&[], &["fix the bug"]);
    assert!(real.model.wait_main_requests(1, PATIENCE), "{}", real.bosun.log());
    let (until, label) = usage_limit(&real, 16);
    let log = wait_for(PATIENCE, || real.bosun.agent(&id).log).expect("its rollout log was found");
    real.bosun.kill_daemon_hard();
    let killed = SystemTime::now();
    let limited = || {
        let main = real.model.main_requests();
        main.into_iter().find(|r| matches!(r.reply, Some(Reply::Limited(_)))).map(|r| r.time)
    };
    let met = wait_for(PATIENCE, limited).expect("the limit was met");
    assert!(met > killed, "the limit was met while bosun was down");
    let logged = wait_until(PATIENCE, || std::fs::read_to_string(&log).is_ok_and(|l| l.contains("usage_limit")));
    assert!(logged, "Codex logged its limit");
    // Any command starts a daemon again.
    let shown = wait_until(PATIENCE, || real.bosun.ok(real.repo.path(), &["ls"]).contains(&label));
    assert!(shown, "ls shows {label}:\n{}", real.bosun.ok(real.repo.path(), &["ls"]));
    resumed_after(&real, &id, until);
}

/// Agents of one account share its window: an agent started on the account (the same
/// `CODEX_HOME`) while another waits out its usage limit does not start until the wait is
/// over, so that it calls nothing before the reset; then both go on.
#[test]
fn an_agent_started_on_an_account_waiting_out_a_limit_starts_after_the_reset() {
    let Some(real) = Real::new(trusted) else { return };
    let (until, label) = usage_limit(&real, 10);
    let first = real.start(&[], &["fix the bug"]);
    let shown = wait_until(PATIENCE, || real.bosun.ok(real.repo.path(), &["ls"]).contains(&label));
    assert!(shown, "ls shows {label}");
    let second = real.start(&[], &["write the docs"]);
    // Held while the first waits: still starting, and nothing of it reached the model.
    assert_eq!(real.bosun.agent(&second).state.label(), "starting");
    let said = |id: &str| real.bosun.agent(id).said;
    let done = wait_until(PATIENCE * 2, || said(&first).is_some() && said(&second).is_some());
    assert!(done, "both turns completed: {:?} {:?}\n{}", said(&first), said(&second), real.bosun.log());
    let of_second: Vec<_> = real
        .model
        .requests()
        .into_iter()
        .filter(|r| r.messages().iter().any(|(_, text)| text == "write the docs"))
        .collect();
    assert!(!of_second.is_empty());
    assert!(of_second.iter().all(|r| r.time >= until), "the second agent called nothing before the reset");
    assert!(of_second.iter().all(|r| !matches!(r.reply, Some(Reply::Limited(_)))));
}

/// `rate_limited = "switch"`: a Codex agent whose account hits its usage limit is resumed on the
/// next account named in bosun's config (another `CODEX_HOME`, whose provider is another model
/// server), its rollout copied there: the resumed turn reaches the second account's server with
/// the conversation's history, and nothing more reaches the first's.
#[test]
fn a_limited_agent_switches_to_the_next_account_and_resumes_its_conversation_there() {
    let Some(real) = Real::new(trusted) else { return };
    let other = FakeModel::openai();
    let dir = tempfile::tempdir().unwrap();
    let two = trusted(CodexConfig::new(&other, dir.path()), real.repo.path()).write();
    let accounts = format!(
        "[accounts.one]\nclient = \"codex\"\nconfig = \"{}\"\n\n[accounts.two]\nclient = \"codex\"\nconfig = \"{}\"\n",
        real.env.config_dir.display(),
        two.config_dir.display()
    );
    std::fs::write(real.bosun.state_dir().join("config.toml"), accounts).unwrap();
    real.model.push(Reply::text("First answer."));
    let id = real.start(&["--account", "one", "--on-error", "rate_limited=switch"], &["fix the bug"]);
    let said = |want: &str| wait_until(PATIENCE * 2, || real.bosun.agent(&id).said.as_deref() == Some(want));
    assert!(said("First answer."), "{}", real.bosun.log());
    let found = wait_until(PATIENCE, || real.bosun.agent(&id).log.is_some());
    assert!(found, "its rollout was found:\n{}", real.bosun.log());
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    real.model.usage_limit_until(UNIX_EPOCH + Duration::from_secs(now + 600));
    other.push(Reply::text("Answered on the other account."));
    real.bosun.ok(real.repo.path(), &["send", &id, "now write the docs"]);
    let screen = || real.bosun.ok(real.repo.path(), &["peek", &id]);
    assert!(said("Answered on the other account."), "{}\n{}", screen(), real.bosun.log());
    let there = other.main_requests();
    let resumed = there.last().expect("the second account's server was asked");
    assert_eq!(resumed.last_user_text().as_deref(), Some(rate_limit::SWITCHED_MESSAGE));
    let history = ["fix the bug", "First answer.", "now write the docs"];
    assert!(history.iter().all(|h| resumed.contains(h)), "the conversation came along: {resumed:#?}");
    let limited = real.model.main_requests().iter().filter(|r| matches!(r.reply, Some(Reply::Limited(_)))).count();
    assert_eq!(limited, 1, "the first account was asked once after its limit, and no more");
    let home = two.config_dir.display().to_string();
    assert_eq!(real.bosun.show(&id).agent.env.get("CODEX_HOME"), Some(&home), "it is on the second account");
    // The limit its copied conversation ends on is not read again as a new one.
    let escalations = real.bosun.ok(real.repo.path(), &["escalations"]);
    assert!(escalations.contains("nothing needs a person"), "{escalations}");
}
