//! `bosun wait` and `agent start --wait`: a script waits for a point of an agent's life instead of
//! polling, and is told when the agent can never reach it or the time is up.

mod support;

use std::path::PathBuf;

use support::*;

#[test]
fn waiting_for_the_workspace_returns_once_its_directory_is_there() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let out = bosun.ok(repo.path(), &["agent", "start", "--json", "--", "sleep", "600"]);
    let started: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (id, path) = (started["agent"].as_str().unwrap().to_owned(), PathBuf::from(started["path"].as_str().unwrap()));
    let said = bosun.ok(repo.path(), &["wait", &id, "--for", "workspace", "--timeout", "30s"]);
    assert!(said.starts_with(&id), "{said}");
    assert!(path.join(".git").exists(), "the worktree is there once the wait returns: {}", path.display());
    bosun.ok(repo.path(), &["kill", &id]);
}

#[test]
fn start_with_wait_returns_with_the_program_running() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let out = bosun.ok(repo.path(), &["agent", "start", "--wait", "--json", "--", "sleep", "600"]);
    let started: serde_json::Value = serde_json::from_str(&out).unwrap();
    let id = started["agent"].as_str().unwrap();
    // No polling: the very next look finds it up, with its process.
    let agent = bosun.agent(id);
    assert_eq!(agent.state.label(), "running");
    assert!(agent.pid.is_some_and(pid_alive), "its process runs: {:?}", agent.pid);
    bosun.ok(repo.path(), &["kill", id]);
}

#[test]
fn an_agent_that_dies_first_is_never_idle_and_the_wait_says_so() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--", "sh", "-c", "sleep 0.5; exit 3"]);
    let out = bosun.run(repo.path(), &["wait", &id, "--for", "idle"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("will never be idle") && err.contains("dead"), "{err}");
    // Waiting for its death now returns at once.
    let said = bosun.ok(repo.path(), &["wait", &id, "--for", "dead", "--timeout", "5s"]);
    assert!(said.contains("dead(crashed"), "{said}");
}

#[test]
fn a_wait_whose_time_is_up_exits_1_saying_where_the_agent_stands() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--", "sleep", "600"]);
    bosun.wait_up(&id);
    let out = bosun.run(repo.path(), &["wait", &id, "--for", "dead", "--timeout", "300ms"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("still running") && err.contains("not dead"), "{err}");
    assert_eq!(bosun.agent(&id).state.label(), "running", "waiting changed nothing");
    bosun.ok(repo.path(), &["kill", &id]);
}

#[test]
fn bad_waits_are_refused_with_the_reason() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--", "sleep", "600"]);
    for (args, code, says) in [
        (vec!["wait", id.as_str(), "--for", "soon"], 2, "possible values"),
        (vec!["wait", id.as_str(), "--timeout", "a while"], 2, "not a duration"),
        (vec!["wait", "nosuchagent"], 3, "nosuchagent"),
    ] {
        let out = bosun.run(repo.path(), &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    bosun.ok(repo.path(), &["kill", &id]);
}
