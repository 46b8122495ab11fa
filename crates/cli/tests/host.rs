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

/// A `bosun host serve --save-bundle` in `ws`, its branch `agent/b`, relaying at `<ws>/../relay`
/// and writing how it ended to `<ws>/../ended`; its client.
fn bundle_host(ws: &std::path::Path, script: &str) -> (std::process::Child, HostClient) {
    let socket = ws.with_file_name("host.sock");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_bosun"))
        .args(["host", "serve", "--session", "bundled", "--save-bundle", "--save-branch", "agent/b"])
        .arg("--socket")
        .arg(&socket)
        .arg("--exit-file")
        .arg(ws.with_file_name("ended"))
        .arg("--relay")
        .arg(ws.with_file_name("relay"))
        .args(["--", "sh", "-c", script])
        .current_dir(ws)
        .env("BOSUN_LOG", "warn")
        .spawn()
        .unwrap();
    let client = HostClient::new(socket);
    assert!(wait_for(PATIENCE, || client.needs_seed().ok()).is_some(), "the host never listened");
    (child, client)
}

/// A bundle of `branch` in `repo`, as bytes.
fn bundle_of(repo: &TempRepo, branch: &str) -> Vec<u8> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(repo.path())
        .args(["bundle", "create", "-", &format!("refs/heads/{branch}")])
        .output()
        .unwrap();
    assert!(out.status.success());
    out.stdout
}

#[test]
fn a_host_saving_by_bundle_starts_only_once_seeded_and_gives_back_only_the_new_commits_before_it_ends() {
    let repo = TempRepo::new();
    let base = repo.head();
    repo.git(&["branch", "agent/b"]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let script = "echo \"on $(git branch --show-current)\"; read l; echo work > w.txt; git add w.txt; \
                  git -c user.name=a -c user.email=a@b commit -qm pod-work; exit 3";
    let (mut child, client) = bundle_host(&ws, script);

    // Nothing runs before its seed; a seed that is not one, or too big, is refused.
    assert!(client.needs_seed().unwrap());
    let err = client.status().unwrap_err().to_string();
    assert!(err.contains("waits for its seed"), "{err}");
    let err = client.seed(&mut &b"not a bundle"[..], 12).unwrap_err().to_string();
    assert!(err.contains("git fetch failed"), "{err}");
    let mut raw = UnixStream::connect(ws.with_file_name("host.sock")).unwrap();
    bosun_wire::write_frame(&mut raw, &HostRequest::Seed { len: bosun_host::BUNDLE_MOST + 1 }).unwrap();
    match bosun_wire::read_frame::<_, HostResponse>(&mut raw).unwrap() {
        HostResponse::Error { message } => assert!(message.contains("more than"), "{message}"),
        other => panic!("a seed too big is refused: {other:?}"),
    }
    assert!(client.needs_seed().unwrap(), "still waiting for a seed");
    let seed = bundle_of(&repo, "agent/b");
    client.seed(&mut seed.as_slice(), seed.len() as u64).unwrap();
    assert!(!client.needs_seed().unwrap(), "seeded, its program runs");
    let screen = wait_for(PATIENCE, || {
        let HostResponse::Screen { text } = client.ask(&HostRequest::Screen { colors: false, scrollback: 0 }).ok()?
        else {
            return None;
        };
        text.contains("on agent/b").then_some(text)
    });
    assert!(screen.is_some(), "the program runs in a clone on its branch");
    let err = client.bundle(vec![]).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("still runs"), "no bundle while it runs: {err}");

    // Its end is told to its follower; a bundle is given, less what the asker has.
    let mut follower = client.reports().unwrap();
    assert!(matches!(client.ask(&HostRequest::Press { keys: vec![TermKey::Enter] }), Ok(HostResponse::Ok)));
    match follower.hear().unwrap() {
        bosun_host::Heard::Exited(exit) => assert_eq!(exit.code, Some(3)),
        other => panic!("{other:?}"),
    }
    let err = client.bundle(vec!["HEAD; rm -rf /".into()]).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("full commit ids"), "{err}");
    // An asker gone midway leaves it waiting for the next.
    drop(client.bundle(vec![base.clone()]).unwrap());
    let mut given = client.bundle(vec![base.clone()]).unwrap();
    assert!(given.len > 0 && !given.dirty);
    let mut bytes = Vec::new();
    given.read_to(&mut bytes).unwrap();
    let file = dir.path().join("back.bundle");
    std::fs::write(&file, &bytes).unwrap();
    let listed = repo.git(&["bundle", "list-heads", file.to_str().unwrap()]);
    assert!(listed.contains("refs/heads/agent/b") && listed.contains(&given.tip), "{listed}");
    let prerequisites = repo.git(&["bundle", "verify", file.to_str().unwrap()]);
    assert!(prerequisites.contains(&base), "only what {base} lacks: {prerequisites}");
    repo.git(&["fetch", "-q", file.to_str().unwrap(), "refs/heads/agent/b:refs/heads/agent/b"]);
    assert_eq!(repo.git(&["log", "-1", "--format=%s", "agent/b"]).trim(), "pod-work");
    given.fetched(true, "fetched".into()).unwrap();

    // It ends as its program did, saying its work is safe.
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3));
    let ended = bosun_host::Ended::from_message(&std::fs::read_to_string(ws.with_file_name("ended")).unwrap());
    let saved = ended.and_then(|e| e.saved).expect("what became of its work");
    assert!(saved.is_safe(), "{saved:?}");
    assert!(!ws.join(".git/bosun-give.bundle").exists() && !ws.join(".git/bosun-seed.bundle").exists());
}

#[test]
fn a_host_saving_by_bundle_whose_asker_has_it_all_gives_no_bytes_and_a_claims_clone_needs_no_seed() {
    let repo = TempRepo::new();
    repo.git(&["branch", "agent/b"]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    // A clone on the branch already (a claim kept it): no seed is waited for.
    repo.git(&["clone", "-q", "--branch", "agent/b", repo.path().to_str().unwrap(), ws.to_str().unwrap()]);
    std::fs::write(ws.join("scratch"), "uncommitted").unwrap();
    let (mut child, client) = bundle_host(&ws, "read l");
    assert!(!client.needs_seed().unwrap());
    let err = client.seed(&mut &b"x"[..], 1).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("no seed"), "{err}");
    let mut follower = client.reports().unwrap();
    assert!(matches!(client.ask(&HostRequest::Kill), Ok(HostResponse::Ok)));
    assert!(matches!(follower.hear().unwrap(), bosun_host::Heard::Exited(_)));
    assert!(client.status().is_ok(), "killed, it still waits for its work to be fetched");
    let given = client.bundle(vec![repo.head()]).unwrap();
    assert_eq!((given.len, given.tip.as_str(), given.dirty), (0, repo.head().as_str(), true));
    given.fetched(true, "had it".into()).unwrap();
    child.wait().unwrap();
    let ended = bosun_host::Ended::from_message(&std::fs::read_to_string(ws.with_file_name("ended")).unwrap());
    let saved = ended.and_then(|e| e.saved).unwrap();
    assert!(saved.pushed && saved.dirty && !saved.is_safe(), "the uncommitted file is told: {saved:?}");
}

#[test]
fn a_seed_never_writes_over_a_clone_that_holds_work_not_committed() {
    let repo = TempRepo::new();
    repo.git(&["branch", "agent/b"]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    // A claim's clone of another branch, with work in it.
    repo.git(&["clone", "-q", repo.path().to_str().unwrap(), ws.to_str().unwrap()]);
    std::fs::write(ws.join("README.md"), "changed, never committed\n").unwrap();
    let (mut child, client) = bundle_host(&ws, "read l");
    assert!(client.needs_seed().unwrap(), "it lacks agent/b");
    let seed = bundle_of(&repo, "agent/b");
    let err = client.seed(&mut seed.as_slice(), seed.len() as u64).unwrap_err().to_string();
    assert!(err.contains("not seeded over"), "{err}");
    assert_eq!(std::fs::read_to_string(ws.join("README.md")).unwrap(), "changed, never committed\n");
    let _ = client.ask(&HostRequest::Kill);
    let _ = child.wait();
}

#[test]
fn peek_scrollback_reads_what_scrolled_off_above_the_screen_in_tmux_and_in_a_host() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let script = ["sh", "-c", "seq 1 300; echo all-out; sleep 600"];
    let in_host = start_host(&bosun, &repo, &script);
    let mut args = vec!["--"];
    args.extend(script);
    let in_tmux = bosun.start(repo.path(), &args);
    for id in [in_host, in_tmux] {
        bosun.wait_screen(&id, "all-out");
        let screen = bosun.ok(repo.path(), &["peek", &id]);
        assert!(!screen.lines().any(|l| l == "1"), "the screen alone holds the last lines:\n{screen}");
        let all = bosun.ok(repo.path(), &["peek", &id, "--scrollback", "1000"]);
        let lines: Vec<&str> = all.lines().collect();
        assert_eq!(lines.first(), Some(&"1"), "every line, the first first:\n{all}");
        let n = lines.iter().position(|l| *l == "all-out").expect("all-out");
        assert_eq!(lines[n - 1], "300", "in order, none doubled: {:?}", &lines[n.saturating_sub(3)..=n]);
        assert_eq!(lines.iter().filter(|l| **l == "150").count(), 1, "none doubled");
        let some = bosun.ok(repo.path(), &["peek", &id, "--scrollback", "5"]);
        assert_eq!(some.lines().count(), screen.lines().count() + 5, "five lines above the screen:\n{some}");
    }
}
