//! The generic and Codex drivers through the CLI: output that stops, patterns, and Codex's
//! notify program (played by a stand-in script, as codex is not installed here).

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
import json, subprocess, sys, time
args = sys.argv[1:]
open("codex-args.json", "w").write(json.dumps(args))
notify = json.loads(args[args.index("-c") + 1].split("=", 1)[1])
time.sleep(0.5)
subprocess.run(notify + [json.dumps({"type": "agent-turn-complete", "turn-id": "1"})])
time.sleep(600)
"#,
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let id = bosun.start(repo.path(), &["--prompt", "fix it", "--", fake.to_str().unwrap()]);
    assert_eq!(bosun.agent(&id).driver.kind(), bosun_core::driver::DriverKind::Codex);
    bosun.wait_state(&id, "idle");
    let ws = bosun.show(&id).workspace.unwrap().path;
    let args: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(ws.join("codex-args.json")).unwrap()).unwrap();
    assert_eq!(args.last().map(String::as_str), Some("fix it"), "the first prompt on its command line");
}
