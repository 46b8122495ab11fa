//! The event stream through the CLI: `bosun events` prints the log from a seq, follows it as
//! events are recorded, keeps to one agent or job, and goes on from where it was after the
//! daemon is killed, missing nothing and repeating nothing.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Instant;

use support::*;

fn events(bosun: &Bosun, repo: &TempRepo, args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["events", "--json"];
    all.extend_from_slice(args);
    bosun.ok(repo.path(), &all).lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

/// `bosun events --follow --json ARGS` in the background, from the next event recorded (so
/// what happens after this returns is seen), its lines sent to the receiver.
fn follow(bosun: &Bosun, repo: &TempRepo, args: &[&str]) -> (Child, mpsc::Receiver<serde_json::Value>) {
    let next = (events(bosun, repo, &[]).len() + 1).to_string();
    let mut all = vec!["events", "--follow", "--json", "--from", &next];
    all.extend_from_slice(args);
    let mut child = bosun.command(repo.path(), &all).stdout(Stdio::piped()).spawn().expect("run bosun events");
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(serde_json::from_str(&line).expect("a JSON line")).is_err() {
                return;
            }
        }
    });
    (child, rx)
}

/// Lines from the follower until `want` holds for one; all of them.
fn until(rx: &mpsc::Receiver<serde_json::Value>, want: impl Fn(&serde_json::Value) -> bool) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + PATIENCE;
    let mut seen = Vec::new();
    while let Ok(v) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        let done = want(&v);
        seen.push(v);
        if done {
            return seen;
        }
    }
    panic!("the stream never gave what was waited for; it gave {seen:?}");
}

fn kind(v: &serde_json::Value) -> &str {
    v["event"]["type"].as_str().unwrap_or_default()
}

fn seqs(vs: &[serde_json::Value]) -> Vec<u64> {
    vs.iter().map(|v| v["seq"].as_u64().unwrap()).collect()
}

#[test]
fn the_log_is_printed_in_order_from_any_seq() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--", "true"]);
    bosun.wait_state(&id, "dead(completed)");
    // The workspace is given back just after the death is recorded: the log is still until then.
    let released = bosun_testkit::poll::wait_until(PATIENCE, || {
        events(&bosun, &repo, &[]).last().is_some_and(|v| kind(v) == "workspace_released")
    });
    assert!(released, "the workspace is released after the agent");
    let all = events(&bosun, &repo, &[]);
    let n = all.len() as u64;
    assert!(n >= 5, "{all:?}");
    assert_eq!(seqs(&all), (1..=n).collect::<Vec<_>>(), "every event, once, in order");
    assert_eq!(kind(&all[0]), "agent_created");
    assert_eq!(seqs(&events(&bosun, &repo, &["--from", "3"])), (3..=n).collect::<Vec<_>>());
    assert!(events(&bosun, &repo, &["--from", &(n + 100).to_string()]).is_empty(), "nothing after the last");
    let text = bosun.ok(repo.path(), &["events"]);
    assert!(text.lines().next().is_some_and(|l| l.contains("agent_created")), "{text}");
}

#[test]
fn a_follower_gets_each_event_as_it_is_recorded_and_one_agent_s_only_when_asked() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let a = bosun.start(repo.path(), &["--name", "first", "--", "sleep", "600"]);
    bosun.wait_state(&a, "running");
    let (mut all, rx_all) = follow(&bosun, &repo, &[]);
    let (mut only_a, rx_a) = follow(&bosun, &repo, &["--agent", &a]);
    bosun.ok(repo.path(), &["send", &a, "hello"]);
    until(&rx_a, |v| kind(v) == "message_queued");
    let b = bosun.start(repo.path(), &["--name", "second", "--", "true"]);
    let seen = until(&rx_all, |v| kind(v) == "agent_died" && v["event"]["id"] == b.as_str());
    assert!(seen.iter().any(|v| kind(v) == "agent_created" && v["event"]["agent"]["id"] == b.as_str()));
    let s = seqs(&seen);
    assert!(s.windows(2).all(|w| w[1] == w[0] + 1), "consecutive: {s:?}");

    bosun.ok(repo.path(), &["kill", &a]);
    let mine = until(&rx_a, |v| kind(v) == "agent_died");
    let about_b = |v: &serde_json::Value| v.to_string().contains(b.as_str());
    assert!(!mine.iter().any(about_b), "only the first agent's: {mine:?}");
    all.kill().unwrap();
    only_a.kill().unwrap();
    all.wait().unwrap();
    only_a.wait().unwrap();
}

#[test]
fn a_job_s_stream_has_its_steps_and_its_end() {
    let bosun = bosun();
    let repo = repo_with_runbook(
        "ci.hcl",
        r#"
command "ci" {
  run = { job = "ci" }
}
job "ci" {
  step "one" {
    run     = "true"
    on_done = { step = "two" }
  }
  step "two" {
    run = "true"
  }
}
"#,
    );
    let job = bosun.run_job(repo.path(), &["ci"]);
    bosun.ok(repo.path(), &["job", "wait", &job]);
    let other = bosun.start(repo.path(), &["--", "true"]);
    bosun.wait_state(&other, "dead(completed)");
    let mine = events(&bosun, &repo, &["--job", &job]);
    let kinds: Vec<&str> = mine.iter().map(kind).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "step_entered").count(), 2, "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"job_finished"));
    assert!(!mine.iter().any(|v| v.to_string().contains(other.as_str())), "not the other agent's");
}

#[test]
fn a_follower_goes_on_after_the_daemon_is_killed_missing_nothing() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let a = bosun.start(repo.path(), &["--", "sleep", "600"]);
    bosun.wait_state(&a, "running");
    let (mut child, rx) = follow(&bosun, &repo, &[]);
    bosun.ok(repo.path(), &["send", &a, "before"]);
    let before = until(&rx, |v| kind(v) == "message_queued");
    bosun.kill_daemon_hard();
    // The next command starts a daemon; the follower asks it to go on from where it was.
    let b = bosun.start(repo.path(), &["--", "true"]);
    let after = until(&rx, |v| kind(v) == "agent_created" && v["event"]["agent"]["id"] == b.as_str());
    let s = seqs(&[before, after].concat());
    assert!(s.windows(2).all(|w| w[1] == w[0] + 1), "nothing missed or repeated across the kill: {s:?}");
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn bad_stream_requests_say_what_is_wrong() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let out = bosun.run(repo.path(), &["events", "--agent", "nope"]);
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no agent matches"));
    let out = bosun.run(repo.path(), &["events", "--job", "jnope"]);
    assert_eq!(out.status.code(), Some(3));
    let out = bosun.run(repo.path(), &["events", "--agent", "a", "--job", "j"]);
    assert_eq!(out.status.code(), Some(2), "usage");
    let out = bosun.run(repo.path(), &["events", "--from", "-1"]);
    assert_eq!(out.status.code(), Some(2), "usage");
}
