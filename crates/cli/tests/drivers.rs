//! The generic and Codex drivers through the CLI: output that stops, patterns, and Codex's
//! notify program, played here by a stand-in script that writes exactly the lines and calls a
//! test needs (the real Codex is driven in real_codex.rs).

mod support;

use std::os::unix::fs::PermissionsExt;

use bosun_testkit::poll::wait_until;
use support::*;

#[test]
fn a_generic_agent_whose_output_stops_is_nudged_after_the_grace() {
    let bosun = bosun();
    let repo = TempRepo::new();
    // An interactive shell: it prints its prompt, then waits for input.
    let id =
        bosun.start(repo.path(), &["--grace", "1s", "--on-idle", "nudge:echo nudged > nudged.txt", "--", "sh", "-i"]);
    bosun.wait_state(&id, "idle");
    let ws = bosun.show(&id).workspace.unwrap().path;
    assert!(wait_until(PATIENCE, || ws.join("nudged.txt").exists()), "the nudge was typed and run");
}

#[test]
fn generic_patterns_tell_errors_and_questions() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let script = "echo 'Continue? [y/n]'; read answer; echo \"FATAL: $answer\"; exec sleep 600";
    let id = bosun
        .start(repo.path(), &["--prompt-pattern", r"\[y/n\]", "--error-pattern", "FATAL", "--", "sh", "-c", script]);
    bosun.wait_state(&id, "prompt(question)");
    bosun.ok(repo.path(), &["send", &id, "no"]);
    bosun.wait_state(&id, "error(other)");
}

#[test]
fn a_bad_pattern_is_refused_before_anything_starts() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let err = bosun.fails(repo.path(), &["agent", "start", "--working-pattern", "(unclosed", "--", "true"]);
    assert!(err.contains("working pattern") && err.trim().lines().count() == 1, "{err}");
    assert!(bosun.list().agents.is_empty());
}

#[test]
fn codex_reports_the_end_of_its_turns_through_its_notify_program() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let bin = tempfile::tempdir().unwrap();
    // A stand-in `codex`: it records its arguments and, like Codex at the end of a turn, runs
    // the program given as `-c notify=[...]` with the event's JSON as last argument.
    let fake = bin.path().join("codex");
    std::fs::write(
        &fake,
        r#"#!/usr/bin/env python3
import json, os, subprocess, sys, time
args = sys.argv[1:]
# What bosun asks before it starts Codex: its version and whether it is logged in.
if args[:1] == ["--version"] or args[:2] == ["login", "status"]:
    print("codex-cli 0.171.0" if args[0] == "--version" else "Logged in using an API key")
    sys.exit(0)
open("codex-args.json", "w").write(json.dumps(args))
notify = json.loads(args[args.index("-c") + 1].split("=", 1)[1])
home = os.environ["CODEX_HOME"]
day = os.path.join(home, "sessions", "2026", "11", "22")
os.makedirs(day, exist_ok=True)
log = os.path.join(day, "rollout-2026-11-22T01-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl")
def line(kind, payload):
    with open(log, "a") as f:
        f.write(json.dumps({"timestamp": "2026-11-22T01:00:00Z", "type": kind, "payload": payload}) + "\n")
line("session_meta", {"id": "0199a213-81c0-7800-8aa1-bbab2a035a53", "cwd": os.getcwd()})
line("event_msg", {"type": "task_started"})
time.sleep(0.3)
line("event_msg", {"type": "task_complete"})
subprocess.run(notify + [json.dumps({"type": "agent-turn-complete", "turn-id": "1"})])
# The next turn, as the rollout log tells it.
while not os.path.exists("go-on"):
    time.sleep(0.05)
line("event_msg", {"type": "task_started"})
time.sleep(600)
"#,
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = tempfile::tempdir().unwrap();
    let codex_home = format!("CODEX_HOME={}", home.path().display());
    let id = bosun.start(repo.path(), &["--env", &codex_home, "--prompt", "fix it", "--", fake.to_str().unwrap()]);
    assert_eq!(bosun.agent(&id).driver.kind(), bosun_core::driver::DriverKind::Codex);
    bosun.wait_state(&id, "idle");
    // Its rollout log is found, and followed: a new task there means working.
    let log = bosun_testkit::poll::wait_for(PATIENCE, || bosun.agent(&id).log).expect("the rollout log was found");
    assert!(log.starts_with(home.path()), "{}", log.display());
    let ws = bosun.show(&id).workspace.unwrap().path;
    std::fs::write(ws.join("go-on"), "").unwrap();
    bosun.wait_state(&id, "running");
    let args: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(ws.join("codex-args.json")).unwrap()).unwrap();
    assert_eq!(args.last().map(String::as_str), Some("fix it"), "the first prompt on its command line");
}

#[test]
fn a_file_written_in_the_workspace_is_a_heartbeat() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = bosun.start(repo.path(), &["--", "sleep", "600"]);
    bosun.wait_up(&id);
    assert!(!bosun.agent(&id).heartbeats.contains_key(&bosun_core::Heartbeat::FileWrite));
    let ws = bosun.show(&id).workspace.unwrap().path;
    std::fs::write(ws.join("result.txt"), "work").unwrap();
    let beat = wait_until(PATIENCE, || bosun.agent(&id).heartbeats.contains_key(&bosun_core::Heartbeat::FileWrite));
    assert!(beat, "{:?}", bosun.agent(&id).heartbeats);
}

#[test]
fn a_client_newer_than_bosun_was_tested_with_is_told_once_per_version() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("claude");
    std::fs::write(
        &fake,
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo '99.1.0 (Claude Code)'; exit 0; }\n[ \"$1\" = auth ] && exit 0\nexec \
         sleep 600\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let fake = fake.display().to_string();
    let first = bosun.run(repo.path(), &["agent", "start", "--no-accept-trust", "--", &fake]);
    assert!(first.status.success());
    let err = String::from_utf8_lossy(&first.stderr);
    assert!(
        err.contains("warning: claude-code 99.1.0 is newer than the newest version bosun was tested with")
            && err.contains("run `bosun doctor --clients`"),
        "{err}"
    );
    let second = bosun.run(repo.path(), &["agent", "start", "--no-accept-trust", "--", &fake]);
    assert!(second.status.success());
    assert!(!String::from_utf8_lossy(&second.stderr).contains("warning"), "told once per version");
}

/// A driver defined for tests only (`echo`, `bosun-core`'s feature `test-driver`, which this
/// crate's tests turn on): three files in one crate (`driver/echo.rs`, its kind and record in
/// `driver/kind.rs`, its registration in `driver/mod.rs`). Its program reports through the real hook command as any hook-reporting
/// driver's does, its reports travel as the one generic report, and they change the agent's
/// state as its driver reads them; a hostile report changes nothing.
#[test]
fn a_test_only_drivers_hook_reports_travel_through_the_hook_command_and_change_the_agents_state() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let asks = tempfile::tempdir().unwrap();
    // Its program: for each file `<event>` the test puts in ASKS, it runs the command that reports
    // for it (its last argument) with the event as an argument, the file on stdin as the payload.
    let script = r#"while :; do for f in "$0"/*; do [ -e "$f" ] || continue;
        sh -c "$1 \"\$0\"" "$(basename "$f")" < "$f"; rm -f "$f"; done; sleep 0.05; done"#;
    let dir = asks.path().to_str().unwrap();
    let id = bosun.start(repo.path(), &["--driver", "echo", "--", "sh", "-c", script, dir]);
    let report = |event: &str, payload: &[u8]| {
        let staged = asks.path().join(".staged");
        std::fs::write(&staged, payload).unwrap();
        std::fs::rename(&staged, asks.path().join(event)).unwrap();
        assert!(wait_until(PATIENCE, || !asks.path().join(event).exists()), "the program reported {event}");
    };
    report("working", b"");
    bosun.wait_state(&id, "running");
    report("idle", b"all done here");
    let idle = bosun.wait_state(&id, "idle");
    assert_eq!(idle.said.as_deref(), Some("all done here"), "its driver read what it said in the payload");
    report("asks", b"Bash");
    let asked = bosun.wait_state(&id, "prompt(permission)");
    assert_eq!(asked.asks.as_deref(), Some("Bash"));
    // Untrusted: an event no driver knows and a payload far over any bound are a sign of life,
    // and the hook command run by hand exits as a hook must (0), changing nothing.
    let huge = vec![b'x'; 3 * 1024 * 1024];
    report("\u{1b}[2J;rm", &huge);
    let out = bosun.run(repo.path(), &["hook", "report", "echo", &id, "$(reboot)", &"y".repeat(100 * 1024)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let after = bosun.agent(&id);
    assert_eq!(after.state.label(), "prompt(permission)", "neither changed its state");
    let refused = bosun.run(repo.path(), &["hook", "report", "aider", &id, "idle"]);
    assert!(!refused.status.success(), "no driver is called aider");
}
