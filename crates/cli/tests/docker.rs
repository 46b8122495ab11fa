//! `--runtime docker`: the agent's session host runs in a container of the test's own Docker
//! engine (started by the test), bosun's binary bound in; typed into, read and killed as any
//! agent, its work landing in its worktree, run as the daemon's user; a claudeless agent's hooks
//! reach the daemon from inside, and one made while no daemon runs is kept for the next; a daemon
//! SIGKILL adopts it again; the real Codex's notify reaches the daemon from inside, and its API
//! key is never recorded; a container removed behind bosun's back makes its agent lost; one
//! killed inside is resumed in a new container with its conversation; doctor finds containers
//! no agent owns; a missing image or engine is a clear error.

mod support;

use std::path::PathBuf;

use bosun_core::{Cause, Event, Heartbeat, SessionState};
use bosun_testkit::clients::{CodexConfig, FAKE_OPENAI_KEY};
use bosun_testkit::docker::DockerEngine;
use bosun_testkit::fake_model::{FakeModel, Reply};
use bosun_testkit::poll::{wait_for, wait_until};
use support::*;

/// The test image: busybox, with bosun's and claudeless's libraries (bosun's own binary is
/// bound in by bosun itself) and bash, which claudeless runs its hooks with (`/bin/bash`).
fn image(engine: &DockerEngine) -> String {
    let bosun = std::path::PathBuf::from(env!("CARGO_BIN_EXE_bosun"));
    let claudeless = std::path::PathBuf::from(claudeless());
    engine.image("bosun-agent:test", &[&bosun, &claudeless, std::path::Path::new("/bin/bash")])
}

fn docker_bosun(engine: &DockerEngine) -> Bosun {
    bosun().with_env("DOCKER_HOST", engine.host())
}

fn containers(engine: &DockerEngine, id: &str) -> String {
    engine.run(&["ps", "-a", "--filter", &format!("label=bosun.session=bosun-{id}"), "--format", "{{.Names}}"])
}

/// An agent that sleeps in a container, running: the engine, the image, its bosun, its
/// repository and its id.
fn sleeper() -> (&'static DockerEngine, String, Bosun, TempRepo, String) {
    let engine = DockerEngine::start();
    let image = image(engine);
    let bosun = docker_bosun(engine);
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--runtime", "docker", "--image", &image, "--", "sleep", "600"]);
    bosun.wait_state(&id, "running");
    (engine, image, bosun, repo, id)
}

/// The engine, the image, a bosun and a repository whose commit holds claudeless's scenario
/// `name` as `<name>.toml`: the scenario travels with the repository, since a container sees its
/// worktree, not this tree.
fn with_scenario(name: &str) -> (&'static DockerEngine, String, Bosun, TempRepo) {
    let engine = DockerEngine::start();
    let image = image(engine);
    let bosun = docker_bosun(engine);
    let repo = TempRepo::new();
    let file = format!("{name}.toml");
    std::fs::copy(scenario(name), repo.path().join(&file)).unwrap();
    repo.git(&["add", &file]);
    repo.git(&["commit", "-qm", "scenario"]);
    (engine, image, bosun, repo)
}

const ECHO: &str = "while read l; do echo \"got: $l\" | tee -a said.txt; done";

#[test]
fn an_agent_in_a_container_is_typed_into_read_and_killed_and_its_work_lands_in_its_worktree() {
    let engine = DockerEngine::start();
    let image = image(engine);
    let bosun = docker_bosun(engine);
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--runtime", "docker", "--image", &image, "--", "sh", "-c", ECHO]);
    bosun.wait_state(&id, "running");
    assert_eq!(containers(engine, &id).trim(), format!("bosun-{id}"), "one container, labelled");
    assert!(bosun.sessions().is_empty(), "no tmux session");

    bosun.ok(repo.path(), &["send", &id, "from outside"]);
    bosun.wait_screen(&id, "got: from outside");
    let ws = bosun.show(&id).workspace.unwrap().path;
    let said = wait_for(PATIENCE, || std::fs::read_to_string(ws.join("said.txt")).ok().filter(|s| !s.is_empty()));
    assert_eq!(said.as_deref(), Some("got: from outside\n"), "its work is in its worktree");
    // Run as the daemon's user, so what it writes in the worktree is that user's, not root's.
    let user = engine.run(&["inspect", "--format", "{{.Config.User}}", &format!("bosun-{id}")]);
    let me = format!("{}:{}", nix::unistd::getuid(), nix::unistd::getgid());
    assert_eq!(user.trim(), me, "the container runs as the daemon's user");

    let out = bosun.ok(repo.path(), &["kill", &id]);
    assert_eq!(out.trim(), format!("{id} dead(killed)"));
    let gone = wait_for(PATIENCE, || containers(engine, &id).trim().is_empty().then_some(()));
    assert!(gone.is_some(), "its container is removed");
}

#[test]
fn claudeless_in_a_container_goes_idle_through_its_hooks_and_is_adopted_after_a_daemon_sigkill() {
    let (_engine, image, bosun, repo) = with_scenario("chat");
    let args = ["--runtime", "docker", "--image", &image, "--", &claudeless(), "--scenario", "chat.toml"];
    let id = bosun.start(repo.path(), &args);
    bosun.wait_state(&id, "idle");
    let heard = bosun
        .events()
        .into_iter()
        .any(|e| matches!(e, bosun_core::Event::AgentObserved { source: bosun_core::Source::Hook, .. }));
    assert!(heard, "its hooks reached the daemon from inside the container");
    // Its hooks may say it is idle before its container's start is confirmed with its pid.
    let pid = wait_for(PATIENCE, || bosun.agent(&id).pid).expect("its pid (in its container)");
    bosun.kill_daemon_hard();
    let agent = bosun.agent(&id);
    assert_eq!((agent.state.label(), agent.pid), ("idle".to_owned(), Some(pid)), "adopted as it was");
    let before = bosun.events().len();
    bosun.ok(repo.path(), &["send", &id, "ping"]);
    bosun.wait_screen(&id, "pong");
    bosun.wait_state(&id, "idle");
    let heard_again = bosun.events()[before..]
        .iter()
        .any(|e| matches!(e, bosun_core::Event::AgentObserved { source: bosun_core::Source::Hook, .. }));
    assert!(heard_again, "its hooks reach the new daemon too");
}

#[test]
fn a_hook_of_an_agent_in_a_container_made_while_no_daemon_runs_is_kept_for_the_next() {
    let (_engine, image, bosun, repo) = with_scenario("tools");
    let cl = claudeless();
    let args =
        ["--runtime", "docker", "--image", &image, "--prompt", "slow build", "--", &cl, "--scenario", "tools.toml"];
    let id = bosun.start(repo.path(), &args);
    let ws = bosun.show(&id).workspace.unwrap().path;
    assert!(wait_until(PATIENCE, || ws.join("tool-started").exists()), "the tool runs");
    assert_eq!(bosun.agent(&id).state.label(), "running");
    bosun.kill_daemon_hard();
    // The turn ends while no daemon runs: its Stop hook, made inside the container, is spooled.
    let spool = bosun.state_dir().join("spool/hooks.spool");
    let spooled = wait_until(PATIENCE, || std::fs::read_to_string(&spool).is_ok_and(|s| s.contains("Stop")));
    assert!(spooled, "the Stop hook was kept");
    bosun.list(); // a new daemon
    bosun.wait_state(&id, "idle");
    assert!(!spool.exists(), "the spool was read and dropped");
}

#[test]
fn a_container_removed_behind_bosuns_back_makes_its_agent_lost() {
    let (engine, _image, bosun, _repo, id) = sleeper();
    engine.run(&["rm", "-f", &format!("bosun-{id}")]);
    bosun.wait_state(&id, "dead(lost)");
}

#[test]
fn a_missing_image_or_engine_or_option_is_a_clear_error() {
    let engine = DockerEngine::start();
    let repo = TempRepo::new();
    let bosun = docker_bosun(engine);
    let err = bosun.fails(repo.path(), &["agent", "start", "--runtime", "docker", "--", "sh"]);
    assert!(err.contains("--runtime docker needs --image"), "{err}");
    let err = bosun.fails(repo.path(), &["agent", "start", "--image", "x", "--", "sh"]);
    assert!(err.contains("apply to --runtime docker"), "{err}");
    let err = bosun
        .fails(repo.path(), &["agent", "start", "--runtime", "docker", "--image", "x", "--memory", "1k", "--", "sh"]);
    assert!(err.contains("too little memory"), "{err}");

    let id = bosun.start(repo.path(), &["--runtime", "docker", "--image", "no-such-image:1", "--", "sh"]);
    let agent = bosun.wait_state(&id, "dead(failed-to-start)");
    assert!(agent.error.as_deref().unwrap_or_default().contains("no-such-image:1"), "{:?}", agent.error);

    let nowhere = support::bosun().with_env("DOCKER_HOST", "unix:///nonexistent/docker.sock");
    let err = nowhere.fails(repo.path(), &["agent", "start", "--runtime", "docker", "--image", "x", "--", "sh"]);
    assert!(err.to_lowercase().contains("docker"), "{err}");
    assert!(nowhere.list().agents.is_empty(), "nothing recorded");
}

#[test]
fn doctor_finds_a_container_no_agent_owns_and_fix_removes_it_leaving_the_agents() {
    let (engine, image, bosun, repo, id) = sleeper();
    // Made behind bosun's back with its labels, as a crash between its start and its record would.
    let state = format!("bosun.state={}", bosun.state_dir().display());
    engine.run(&[
        "run",
        "-d",
        "--name",
        "bosun-stray",
        "--label",
        &state,
        "--label",
        "bosun.session=bosun-stray",
        &image,
        "sleep",
        "600",
    ]);
    let out = bosun.run(repo.path(), &["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success() && text.contains("container bosun-stray"), "{text}");
    assert!(!text.contains(&format!("bosun-{id}")), "the agent's own container is not a leftover: {text}");
    bosun.run(repo.path(), &["doctor", "--fix"]);
    let gone = wait_for(PATIENCE, || {
        engine.run(&["ps", "-a", "--filter", "name=bosun-stray", "-q"]).trim().is_empty().then_some(())
    });
    assert!(gone.is_some(), "the stray container is removed");
    assert_eq!(containers(engine, &id).trim(), format!("bosun-{id}"), "the agent's stays");
    assert_eq!(bosun.agent(&id).state.label(), "running");
}

#[test]
fn a_claudeless_agent_killed_in_its_container_is_resumed_in_a_new_one_with_its_conversation() {
    let (engine, image, bosun, repo) = with_scenario("chat");
    let cl = claudeless();
    let args = [
        "--runtime",
        "docker",
        "--image",
        &image,
        "--prompt",
        "hello",
        "--on-dead",
        "resume:ping",
        "--",
        &cl,
        "--scenario",
        "chat.toml",
    ];
    let id = bosun.start(repo.path(), &args);
    bosun.wait_state(&id, "idle");
    let log = wait_for(PATIENCE, || bosun.agent(&id).log).expect("its session log, known from its hooks");
    let pid = bosun.agent(&id).pid.expect("its pid (in its container)").to_string();
    engine.run(&["exec", &format!("bosun-{id}"), "kill", "-9", &pid]);
    let resumed = wait_for(PATIENCE, || Some(bosun.agent(&id)).filter(|a| a.restarts == 1 && a.state.is_up()));
    let agent = resumed.unwrap_or_else(|| panic!("not resumed: {:#?}\n{}", bosun.show(&id), bosun.log()));
    assert_eq!(agent.log.as_ref(), Some(&log), "the same conversation");
    let named =
        |e: &DockerEngine| e.run(&["ps", "-a", "--filter", &format!("name=bosun-{id}"), "--format", "{{.Names}}"]);
    let only_new = wait_for(PATIENCE, || (named(engine).trim() == format!("bosun-{id}-r1")).then_some(()));
    assert!(only_new.is_some(), "in a new container, the old one gone: {}", named(engine));
    bosun.wait_screen(&id, "pong");
}

/// The causes of the agent's idle states, in order: `Some("notify")` or `Some("log_line")` for
/// Codex's own reports, `None` for a screen or a timer.
fn idle_causes(events: &[Event], id: &str) -> Vec<Option<&'static str>> {
    let cause = |c: &Option<Cause>| match c {
        Some(Cause::Notify { .. }) => Some("notify"),
        Some(Cause::LogLine { .. }) => Some("log_line"),
        Some(Cause::Hook { .. }) => Some("hook"),
        Some(Cause::Output { .. }) => Some("output"),
        None => None,
    };
    events
        .iter()
        .filter_map(|e| match e {
            Event::AgentObserved { id: a, state: SessionState::Idle, cause: c, .. } if a.to_string() == id => {
                Some(cause(c))
            }
            _ => None,
        })
        .collect()
}

/// Whether a call of bosun's hook by the agent's own program (a Codex notify) reached the daemon.
fn hook_called(events: &[Event], id: &str) -> bool {
    events
        .iter()
        .any(|e| matches!(e, Event::Heartbeat { id: a, heartbeat: Heartbeat::HookCall, .. } if a.to_string() == id))
}

/// The real Codex (the static program its npm launcher runs, pinned in `scripts/real-clients`)
/// in a container with this machine's network, talking to the fake OpenAI API on its loopback:
/// its notify program (bosun's own binary, bound in, run by the image's busybox `sh`) reaches
/// the daemon's socket from inside, and its turns end idle from its own reports — its notify or
/// its rollout log, whichever the daemon hears first (both tell the turn's end at the same tier),
/// never its screen; its shell tool runs in the container (busybox's `sh`), its work landing in
/// the worktree. Its API key reaches it as the container's environment, and is neither on its
/// command line nor in the event log.
#[test]
fn the_real_codex_in_a_container_goes_idle_through_its_notify_and_its_key_is_never_recorded() {
    let Some(codex) = bosun_testkit::tools::codex_native() else { return };
    let engine = DockerEngine::start();
    let bosun_bin = PathBuf::from(env!("CARGO_BIN_EXE_bosun"));
    // Static: busybox (whose `sh` runs the notify command) and the binary are all it needs.
    let image = engine.image("bosun-codex:test", &[&bosun_bin, &codex]);
    let bosun = docker_bosun(engine);
    let model = FakeModel::openai();
    let dir = tempfile::tempdir().unwrap();
    let repo = TempRepo::new();
    let env = CodexConfig::new(&model, dir.path()).trust(repo.path().canonicalize().unwrap()).write();
    model.push(Reply::stall(2, "Fixed the bug for you."));
    let codex = codex.display().to_string();
    let args = ["--runtime", "docker", "--image", &image, "--", &codex, "fix the bug"];
    let id = bosun.start_with(repo.path(), &args, |cmd| {
        env.apply(cmd);
    });
    let agent = bosun.wait_state(&id, "idle");
    assert_eq!(agent.said.as_deref(), Some("Fixed the bug for you."), "the main thread's answer, not a title");
    let states = bosun.states_seen(&id);
    assert_eq!(states.iter().filter(|s| *s == "idle").count(), 1, "never idle before the turn ended: {states:?}");
    assert_eq!(containers(engine, &id).trim(), format!("bosun-{id}"), "it runs in its container");
    let heard = wait_for(PATIENCE, || hook_called(&bosun.events(), &id).then_some(()));
    assert!(heard.is_some(), "its notify reached the daemon from inside: {:#?}\n{}", bosun.events(), bosun.log());

    model.push(Reply::shell("echo pong > pong.txt"));
    model.push(Reply::text("Pong."));
    bosun.ok(repo.path(), &["send", &id, "ping"]);
    let again = wait_for(PATIENCE, || {
        Some(bosun.agent(&id)).filter(|a| a.state.label() == "idle" && a.said.as_deref() == Some("Pong."))
    });
    assert!(again.is_some(), "the second turn came back idle: {:#?}\n{}", bosun.agent(&id), bosun.log());
    let ws = bosun.show(&id).workspace.unwrap().path;
    let made = std::fs::read_to_string(ws.join("pong.txt")).ok();
    assert_eq!(made.as_deref(), Some("pong\n"), "its shell tool ran in its container, its work in its worktree");
    let main = model.main_requests();
    assert_eq!(main.last().and_then(|r| r.last_user_text()).as_deref(), Some("ping"));
    let causes = idle_causes(&bosun.events(), &id);
    assert_eq!(causes.len(), 2, "idle once a turn: {causes:?}");
    assert!(causes.iter().all(|c| matches!(c, Some("notify" | "log_line"))), "from its own reports: {causes:?}");

    let key = main[0].header("authorization").unwrap_or_default().to_owned();
    assert!(key.contains(FAKE_OPENAI_KEY), "the key reached Codex in its container: {key:?}");
    let events = bosun.ok(repo.path(), &["events", "--json"]);
    assert!(!events.contains(FAKE_OPENAI_KEY), "the key is in the event log:\n{events}");
    let inspect =
        |what: &str| engine.run(&["inspect", "--format", &format!("{{{{json {what}}}}}"), &format!("bosun-{id}")]);
    assert!(inspect(".Config.Env").contains(FAKE_OPENAI_KEY), "it is given as the container's environment");
    for elsewhere in [".Config.Cmd", ".Config.Labels", ".Args"] {
        let shown = inspect(elsewhere);
        assert!(!shown.contains(FAKE_OPENAI_KEY), "the key is in the container's {elsewhere}: {shown}");
    }
}
