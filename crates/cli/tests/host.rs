//! Agents in bosun's own session host (`--session host`): typed into, read, resized, attached
//! to and killed as in tmux; an exit reported at once with its status; a host that outlives a
//! daemon SIGKILL adopted, not restarted; one that vanishes makes its agent lost; its socket
//! private, and hostile frames on it change nothing.

mod support;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;

use bosun_core::TermKey;
use bosun_host::{HostClient, HostRequest, HostResponse};
use bosun_testkit::poll::wait_for;
use bosun_testkit::screen::Screen;
use bosun_wire::{Request, Response};
use support::*;

const ECHO: [&str; 4] = ["sh", "-c", "while read l; do echo \"got: $l\"; done", ""];

fn start_host(bosun: &Bosun, repo: &TempRepo, command: &[&str]) -> String {
    let mut args = vec!["--session", "host", "--"];
    args.extend(command.iter().copied().filter(|a| !a.is_empty()));
    bosun.start(repo.path(), &args)
}

fn host_of(bosun: &Bosun, id: &str) -> HostClient {
    HostClient::new(bosun.state_dir().join("h").join(format!("bosun-{id}")))
}

fn pid_alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn an_agent_in_bosuns_own_host_is_sent_to_read_resized_and_killed_without_tmux() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = start_host(&bosun, &repo, &ECHO);
    bosun.wait_state(&id, "running");
    assert!(bosun.sessions().is_empty(), "no tmux session: {:?}", bosun.sessions());

    bosun.ok(repo.path(), &["send", &id, "hello host"]);
    bosun.wait_screen(&id, "got: hello host");
    let keys = vec![TermKey::Text("ab".into()), TermKey::Backspace, TermKey::Text("c".into()), TermKey::Enter];
    assert!(matches!(bosun.ask(Request::Press { agent: id.clone(), keys }), Response::Ok));
    bosun.wait_screen(&id, "got: ac");
    match bosun.ask(Request::Resize { agent: id.clone(), cols: 70, rows: 20 }) {
        Response::Resized { before } => assert_eq!(before, (160, 48)),
        other => panic!("{other:?}"),
    }
    assert_eq!((host_of(&bosun, &id).status().unwrap().cols, host_of(&bosun, &id).status().unwrap().rows), (70, 20));
    let colored = bosun.ok(repo.path(), &["peek", &id, "--colors", "always"]);
    assert!(colored.contains("got: ac"), "{colored}");

    let pid = bosun.agent(&id).pid.expect("its pid");
    let out = bosun.ok(repo.path(), &["kill", &id]);
    assert_eq!(out.trim(), format!("{id} dead(killed)"));
    assert!(wait_for(PATIENCE, || (!pid_alive(pid)).then_some(())).is_some(), "its program is gone");
    let socket = host_of(&bosun, &id).socket().unwrap().to_owned();
    assert!(wait_for(PATIENCE, || (!socket.exists()).then_some(())).is_some(), "and its host with its socket");
}

#[test]
fn an_exit_in_a_host_is_reported_at_once_with_its_status_and_its_last_screen_kept() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = start_host(&bosun, &repo, &["sh", "-c", "read l; echo \"last words $l\"; exit 3"]);
    bosun.wait_state(&id, "running");
    bosun.ok(repo.path(), &["send", &id, "now"]);
    bosun.wait_state(&id, "dead(crashed:3)");
    bosun.wait_screen(&id, "last words now");
}

#[test]
fn a_host_outlives_a_daemon_sigkill_and_is_adopted_not_restarted() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let id = start_host(&bosun, &repo, &[&cl, "--scenario", &sc]);
    bosun.wait_state(&id, "idle");
    let pid = bosun.agent(&id).pid;
    bosun.kill_daemon_hard();
    let agent = bosun.agent(&id); // a new daemon
    assert_eq!(agent.state.label(), "idle", "as it was");
    assert_eq!(agent.pid, pid, "the same process, adopted");
    bosun.ok(repo.path(), &["send", &id, "ping"]);
    bosun.wait_screen(&id, "pong");
    bosun.wait_state(&id, "idle");
}

#[test]
fn a_host_that_vanishes_makes_its_agent_lost() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = start_host(&bosun, &repo, &["sleep", "600"]);
    bosun.wait_state(&id, "running");
    let serve =
        std::process::Command::new("pgrep").args(["-f", "--", &format!("--session bosun-{id} ")]).output().unwrap();
    let host_pid = String::from_utf8_lossy(&serve.stdout).trim().to_owned();
    assert!(!host_pid.is_empty(), "its host runs");
    assert!(std::process::Command::new("kill").args(["-9", &host_pid]).status().unwrap().success());
    bosun.wait_state(&id, "dead(lost)");
}

#[test]
fn bosun_attach_shows_a_host_session_types_into_it_and_detaches_with_ctrl_bracket() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = start_host(&bosun, &repo, &ECHO);
    bosun.wait_state(&id, "running");
    bosun.ok(repo.path(), &["send", &id, "before"]);
    bosun.wait_screen(&id, "got: before");
    let screen = Screen::bosun(&bosun, &format!("attach {id}"), (100, 30), "echo attach-over; sleep 600");
    screen.shows("got: before");
    screen.keys(&["-l", "typed here"]);
    screen.keys(&["Enter"]);
    screen.shows("got: typed here");
    screen.keys(&["C-]"]);
    screen.shows("attach-over");
    bosun.wait_screen(&id, "got: typed here");
    assert_eq!(bosun.agent(&id).state.label(), "running", "detaching leaves it running");
}

#[test]
fn a_hosts_socket_is_private_and_hostile_frames_change_nothing() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = start_host(&bosun, &repo, &ECHO);
    bosun.wait_state(&id, "running");
    let host = host_of(&bosun, &id);
    let mode = std::fs::metadata(host.socket().unwrap()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "only its owner may connect");
    let dir_mode = std::fs::metadata(host.socket().unwrap().parent().unwrap()).unwrap().permissions().mode() & 0o777;
    assert_eq!(dir_mode & 0o077, 0, "nor look into its directory: {dir_mode:o}");

    // A length of 4 GiB, garbage JSON, a frame cut short, an unknown request: each connection
    // fails alone.
    for bytes in [
        &b"\xff\xff\xff\xff"[..],
        b"\x00\x00\x00\x05{{{{{",
        b"\x00\x00\x01\x00{\"type\"",
        b"\x00\x00\x00\x10{\"type\":\"rm\"}   ",
    ] {
        let mut c = UnixStream::connect(host.socket().unwrap()).unwrap();
        c.write_all(bytes).unwrap();
        let _ = c.shutdown(std::net::Shutdown::Write);
        let mut answer = Vec::new();
        let _ = c.read_to_end(&mut answer);
    }
    match host.ask(&HostRequest::Press { keys: vec![TermKey::Ctrl(';')] }) {
        Err(e) => assert!(e.to_string().contains("Ctrl"), "{e}"),
        Ok(answer) => panic!("a control key that is none was typed: {answer:?}"),
    }
    assert!(host.ask(&HostRequest::Resize { cols: 0, rows: 0 }).is_err(), "a 0×0 terminal is refused");
    let text = "$(touch planted) ; `id` #{pane_pid}";
    assert!(matches!(
        host.ask(&HostRequest::Press { keys: vec![TermKey::Text(text.into()), TermKey::Enter] }),
        Ok(HostResponse::Ok)
    ));
    bosun.wait_screen(&id, &format!("got: {text}"));
    let ws = bosun.show(&id).workspace.unwrap().path;
    assert!(!ws.join("planted").exists(), "the text ran nothing");
    assert_eq!(host.status().unwrap().cols, 160, "the host serves on, its terminal as it was");
}

#[test]
fn a_runbook_agent_with_session_host_runs_in_a_host_and_an_unknown_session_is_refused() {
    let bosun = bosun();
    let runbook = |session: &str| {
        format!(
            r#"
command "build" {{
  run = {{ job = "build" }}
}}

job "build" {{
  source {{ git = true }}
  step "plan" {{
    run     = {{ agent = "planner" }}
    on_done = "done"
  }}
}}

agent "planner" {{
  run     = ["{cl}", "--scenario", "{sc}"]
  prompt  = "write the plan"
  session = "{session}"
  on_idle = {{ action = "done" }}
}}
"#,
            cl = claudeless(),
            sc = scenario("writer")
        )
    };
    let bad = repo_with_runbook("build.hcl", &runbook("docker"));
    let err = bosun.fails(bad.path(), &["runbook", "check"]);
    assert!(err.contains("session \"docker\"") && err.contains("\"host\""), "{err}");

    let repo = repo_with_runbook("build.hcl", &runbook("host"));
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["run", "--json", "build"])).unwrap();
    let job = v["job"].as_str().unwrap().to_owned();
    let hosts = bosun.state_dir().join("h");
    let seen = wait_for(PATIENCE, || {
        let listed = std::fs::read_dir(&hosts).ok()?;
        listed.flatten().any(|e| !e.path().to_string_lossy().ends_with(".log")).then_some(())
    });
    assert!(seen.is_some(), "its agent's session is in a host");
    let out = bosun.run(repo.path(), &["job", "wait", &job]);
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), bosun.log());
    assert!(bosun.sessions().is_empty(), "and none in tmux");
}

#[test]
fn a_host_serves_no_other_user_even_opened_up_by_hand() {
    use std::os::unix::process::CommandExt;
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: only root can connect as another user here");
        return;
    }
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = start_host(&bosun, &repo, &ECHO);
    bosun.wait_state(&id, "running");
    let socket = host_of(&bosun, &id).socket().unwrap().to_owned();
    for open in [bosun.state_dir(), socket.parent().unwrap(), &socket] {
        std::fs::set_permissions(open, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let socket_arg = socket.display().to_string();
    let nobody = bosun
        .command(std::path::Path::new("/"), &["host", "attach", "--socket", &socket_arg])
        .uid(65534)
        .gid(65534)
        .env("HOME", "/")
        .output()
        .unwrap();
    assert!(!nobody.status.success(), "another user was served: {}", String::from_utf8_lossy(&nobody.stdout));
    let log = bosun.state_dir().join("h").join(format!("bosun-{id}.log"));
    let refused = wait_for(PATIENCE, || {
        std::fs::read_to_string(&log).ok().filter(|l| l.contains("refused a connection: its peer is uid 65534"))
    });
    assert!(refused.is_some(), "{}", std::fs::read_to_string(&log).unwrap_or_default());
    assert!(host_of(&bosun, &id).status().is_ok(), "its own user is served");
}
