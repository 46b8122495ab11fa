//! The daemon's life: crash and restart, one per state directory, a private socket, stale
//! sockets, and versions.

mod support;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};

use bosun_testkit::poll::wait_until;
use bosun_wire::{Envelope, ErrorKind, Request, Response};
use support::*;

#[test]
fn a_daemon_killed_with_sigkill_comes_back_with_every_agent_and_adopts_the_live_one() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let live = bosun.start(repo.path(), &["--name", "live", "--", &cl, "--scenario", &sc]);
    let done = bosun.start(repo.path(), &["--name", "done", "--", "true"]);
    let vanished = bosun.start(repo.path(), &["--name", "vanished", "--", "sleep", "600"]);
    bosun.wait_state(&live, "idle");
    bosun.wait_state(&done, "dead(completed)");
    bosun.wait_state(&vanished, "running");
    let pid = bosun.agent(&live).pid;

    bosun.kill_daemon_hard();
    // While bosun is down, one session disappears.
    assert!(bosun.tmux(&["kill-session", "-t", &format!("bosun-{vanished}")]).status.success());

    let list = bosun.list(); // starts a new daemon
    assert_eq!(list.agents.len(), 3, "every agent is still listed");
    let live_agent = bosun.agent(&live);
    assert_eq!(live_agent.state.label(), "idle", "as it was");
    assert_eq!(live_agent.pid, pid, "the same process, adopted, not restarted");
    assert_eq!(bosun.agent(&done).state.label(), "dead(completed)");
    assert_eq!(bosun.agent(&vanished).state.label(), "dead(lost)");

    bosun.wait_screen(&live, "for shortcuts");
    bosun.ok(repo.path(), &["send", &live, "ping"]);
    bosun.wait_screen(&live, "pong");
}

#[test]
fn a_start_acknowledged_just_before_a_crash_is_not_lost() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--", "sleep", "600"]);
    bosun.kill_daemon_hard();
    let list = bosun.list();
    assert!(list.agents.iter().any(|a| a.id.as_str() == id), "acknowledged agent listed after the crash");
    bosun.wait_state(&id, "running");
    assert_eq!(bosun.sessions(), vec![format!("bosun-{id}")], "started exactly once");
}

#[test]
fn one_daemon_per_state_directory_with_a_private_socket() {
    let bosun = bosun();
    let dir = bosun.state_dir().to_owned();
    let out = bosun.ok(&dir, &["daemon", "start"]);
    assert!(out.contains("daemon started"), "{out}");
    let mode = std::fs::metadata(dir.join("run/bosun.sock")).expect("socket").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let err = bosun.fails(&dir, &["daemon", "run"]);
    assert!(err.contains("already runs"), "{err}");
    let out = bosun.ok(&dir, &["daemon", "start"]);
    assert!(out.contains("already runs"), "{out}");
}

#[test]
fn status_start_and_stop() {
    let bosun = bosun();
    let dir = bosun.state_dir().to_owned();
    let out = bosun.run(&dir, &["daemon", "status"]);
    assert_eq!(out.status.code(), Some(4), "not running: the daemon is unavailable");
    bosun.ok(&dir, &["daemon", "start"]);
    let status: serde_json::Value = serde_json::from_str(&bosun.ok(&dir, &["daemon", "status", "--json"])).unwrap();
    assert_eq!(status["running"], true);
    assert_eq!(status["daemon"]["version"], bosun_wire::VERSION);
    let out = bosun.ok(&dir, &["daemon", "stop"]);
    assert!(out.contains("daemon stopped"), "{out}");
    assert_eq!(bosun.run(&dir, &["daemon", "status"]).status.code(), Some(4));
    assert!(!dir.join("run/bosun.sock").exists(), "socket removed on stop");
    let logs = bosun.ok(&dir, &["daemon", "logs"]);
    assert!(logs.contains("daemon stopped"), "{logs}");
}

#[test]
fn a_stale_socket_left_by_a_crashed_daemon_is_replaced() {
    let bosun = bosun();
    let dir = bosun.state_dir().to_owned();
    std::fs::create_dir_all(dir.join("run")).unwrap();
    drop(UnixListener::bind(dir.join("run/bosun.sock")).expect("bind"));
    assert!(dir.join("run/bosun.sock").exists(), "a socket nobody listens on");
    let out = bosun.ok(&dir, &["ls"]);
    assert!(out.contains("no agents yet"), "{out}");
}

#[test]
fn a_socket_path_taken_by_another_file_is_reported_and_left_alone() {
    let bosun = bosun();
    let dir = bosun.state_dir().to_owned();
    std::fs::create_dir_all(dir.join("run")).unwrap();
    std::fs::write(dir.join("run/bosun.sock"), "mine").unwrap();
    let err = bosun.fails(&dir, &["ls"]);
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("is not a socket"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("run/bosun.sock")).unwrap(), "mine");
}

#[test]
fn a_cli_of_another_version_is_told_what_to_do() {
    let bosun = bosun();
    let dir = bosun.state_dir().to_owned();
    bosun.ok(&dir, &["daemon", "start"]);
    let ask = |request: Request| -> Response {
        let mut s = UnixStream::connect(dir.join("run/bosun.sock")).unwrap();
        let frame = bosun_wire::encode(&Envelope { version: "0.0.1-old".into(), request, id: None }).unwrap();
        s.write_all(&frame).unwrap();
        let mut len = [0u8; 4];
        s.read_exact(&mut len).unwrap();
        let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
        s.read_exact(&mut body).unwrap();
        bosun_wire::decode(&body).unwrap()
    };
    match ask(Request::List) {
        Response::Error(e) => {
            assert_eq!(e.kind, ErrorKind::VersionMismatch);
            assert!(e.message.contains("bosun daemon stop"), "{}", e.message);
        }
        other => panic!("expected a version mismatch, got {other:?}"),
    }
    assert!(matches!(ask(Request::Status), Response::Status(_)), "status works across versions");
}

#[test]
fn a_daemon_that_cannot_start_is_reported_with_its_reason_and_log() {
    let bosun = bosun();
    let dir = bosun.state_dir().to_owned();
    std::fs::create_dir(dir.join("bosun.db")).unwrap(); // the database path is taken by a directory
    let err = bosun.fails(&dir, &["ls"]);
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("the daemon did not start") && err.contains("daemon.log"), "{err}");
    assert!(err.contains("event store"), "the reason is given: {err}");
}

#[test]
fn commands_racing_to_start_the_daemon_all_succeed() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let outputs: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6).map(|_| s.spawn(|| bosun.run(repo.path(), &["ls"]))).collect();
        handles.into_iter().map(|h| h.join().expect("ls")).collect()
    });
    for out in outputs {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn stop_returns_once_the_daemon_has_let_go_so_the_next_command_can_start_one() {
    let bosun = bosun();
    let dir = bosun.state_dir().to_owned();
    for _ in 0..3 {
        bosun.ok(&dir, &["daemon", "start"]);
        bosun.ok(&dir, &["daemon", "stop"]);
        assert_eq!(bosun.daemon_pid(), None, "no daemon holds the lock after stop");
    }
}

#[test]
fn a_shell_step_outlives_a_crash_of_bosun_and_is_never_run_twice() {
    let bosun = bosun();
    let marks = tempfile::tempdir().unwrap();
    let m = marks.path().display();
    let runbook = format!(
        r#"
command "step" {{
  args = "<n>"
  run  = "echo start >> {m}/runs-${{args.n}}; until [ -f {m}/go-${{args.n}} ]; do sleep 0.05; done; echo end >> {m}/runs-${{args.n}}"
}}
"#
    );
    let repo = repo_with_runbook("step.hcl", &runbook);
    let runs = |n: u32| std::fs::read_to_string(marks.path().join(format!("runs-{n}"))).unwrap_or_default();
    let go = |n: u32| std::fs::write(marks.path().join(format!("go-{n}")), "").unwrap();
    let start = |n: u32| {
        let v: serde_json::Value =
            serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "step", &n.to_string()])).unwrap();
        assert!(wait_until(PATIENCE, || runs(n) == "start\n"), "step {n} started");
        v["job"].as_str().unwrap().to_owned()
    };

    // It ends while bosun is down: the next bosun reads how it ended.
    let first = start(1);
    bosun.kill_daemon_hard();
    go(1);
    assert!(wait_until(PATIENCE, || runs(1) == "start\nend\n"), "the step went on without bosun");
    let out = bosun.ok(repo.path(), &["job", "wait", &first]);
    assert!(out.contains("done"), "{out}");

    // It still runs when bosun comes back: the next bosun waits for it.
    let second = start(2);
    bosun.kill_daemon_hard();
    bosun.list(); // a new daemon
    go(2);
    let out = bosun.ok(repo.path(), &["job", "wait", &second]);
    assert!(out.contains("done"), "{out}");
    assert_eq!((runs(1), runs(2)), ("start\nend\n".to_owned(), "start\nend\n".to_owned()), "each ran once");
}

/// The user's price file goes over bosun's own as the daemon starts; one that does not parse is
/// named with its line in the daemon's log and changes nothing: the prices recorded stand.
#[test]
fn a_price_file_goes_over_bosuns_and_one_that_does_not_parse_is_named_and_changes_nothing() {
    let bosun = bosun();
    let dir = bosun.state_dir().to_owned();
    let file = dir.join("prices.toml");
    std::fs::write(&file, "taken = \"2026-12-01\"\n[models.\"my-model\"]\ninput = 1\noutput = 2\n").unwrap();
    bosun.ok(&dir, &["daemon", "start"]);
    let set = |bosun: &Bosun| -> Vec<bosun_core::price::Prices> {
        let events = bosun.events().into_iter();
        events
            .filter_map(|e| if let bosun_core::Event::PricesSet { prices } = e { Some(prices) } else { None })
            .collect()
    };
    let recorded = set(&bosun);
    assert_eq!(recorded.len(), 1);
    assert!(recorded[0].of("my-model").is_some() && recorded[0].of("claude-opus-5-5").is_some(), "yours over bosun's");
    assert!(recorded[0].taken.contains("yours: 2026-12-01"), "{}", recorded[0].taken);
    bosun.ok(&dir, &["daemon", "stop"]);
    std::fs::write(&file, "taken = \"2026-12-02\"\n\n[models.\"my-model\"]\ninput = 1\noutput = \"two\"\n").unwrap();
    bosun.ok(&dir, &["daemon", "start"]);
    let logs = bosun.ok(&dir, &["daemon", "logs"]);
    assert!(logs.contains("prices.toml: line 3: my-model: `output` is not a number"), "{logs}");
    assert_eq!(set(&bosun), recorded, "the prices recorded before stand");
}

/// bosun's config file is recorded as the daemon starts, once while it says the same; one that
/// does not parse, or names a key bosun does not know, stops the daemon, named with its line,
/// and changes nothing.
#[test]
fn bosuns_config_is_recorded_when_it_changes_and_a_bad_one_stops_the_daemon_changing_nothing() {
    let bosun = bosun();
    let dir = bosun.state_dir().to_owned();
    let file = dir.join("config.toml");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(&file, "[accounts.work]\nclient = \"claude\"\nconfig = \"/srv/claude-work\"\n").unwrap();
    let recorded = |bosun: &Bosun| -> Vec<bosun_core::config::Config> {
        let events = bosun.events().into_iter();
        events
            .filter_map(|e| if let bosun_core::Event::ConfigSet { config } = e { Some(config) } else { None })
            .collect()
    };
    bosun.ok(&dir, &["daemon", "start"]);
    bosun.ok(&dir, &["daemon", "stop"]);
    bosun.ok(&dir, &["daemon", "start"]);
    let first = recorded(&bosun);
    assert_eq!(first.len(), 1, "recorded once while it says the same: {first:?}");
    assert_eq!(first[0].accounts["work"].config, std::path::Path::new("/srv/claude-work"));
    bosun.ok(&dir, &["daemon", "stop"]);
    let events = bosun.events().len();

    std::fs::write(&file, "[accounts.work]\nclient = \"claude\"\nconfig = \"/srv/claude-work\"\nshell = \"rm\"\n")
        .unwrap();
    let err = bosun.fails(&dir, &["ls"]);
    assert!(err.contains("config.toml: line 4: unknown field `shell`"), "{err}");
    assert!(bosun.daemon_pid().is_none(), "no daemon runs");
    std::fs::write(&file, "[accounts.work\n").unwrap();
    let err = bosun.fails(&dir, &["ls"]);
    assert!(err.contains("config.toml: line 1"), "{err}");
    std::fs::write(&file, "").unwrap();
    bosun.ok(&dir, &["daemon", "start"]);
    assert_eq!(bosun.events().len(), events + 1, "nothing was recorded while it did not parse; now the empty one");
    assert_eq!(recorded(&bosun).last(), Some(&bosun_core::config::Config::default()));
}
