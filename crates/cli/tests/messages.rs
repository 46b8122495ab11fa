//! What bosun types into an agent, seen from the agent's side: a dialog is answered by the
//! option that means the answer, wherever it is listed (Claude Code 2.1.332's trust dialog lists
//! "No, exit" first and selected), and only once the screen shows the cursor on it; a message
//! never lands in a dialog; a message holds text, never keys, and has one limit on length on
//! both session kinds, refused before anything is recorded.

mod support;

use std::path::{Path, PathBuf};

use bosun_core::{message_text::MESSAGE_MAX, Event};
use bosun_testkit::poll::wait_until;
use support::*;

const ECHO: [&str; 3] = ["sh", "-c", "while read l; do echo \"got: $l\"; done"];
const SESSIONS: [&str; 2] = ["tmux", "host"];

/// A folder holding `claude`: the stand-in that draws 2.1.332's trust dialog.
fn fake_claude() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let claude = dir.path().join("claude");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/trust_dialog.py");
    std::fs::copy(script, &claude).unwrap();
    (dir, claude)
}

fn keys_typed(ws: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(ws.join("keys.log")).unwrap_or_default()).into_owned()
}

/// A bosun, its repository, and an agent in a `session` session that echoes what it reads.
fn echo_agent(session: &str) -> (Bosun, TempRepo, String) {
    let (bosun, repo) = (bosun(), TempRepo::new());
    let mut args = vec!["--session", session, "--"];
    args.extend(ECHO);
    let id = bosun.start(repo.path(), &args);
    bosun.wait_state(&id, "running");
    (bosun, repo, id)
}

fn queued(bosun: &Bosun) -> usize {
    bosun.events().iter().filter(|e| matches!(e, Event::MessageQueued { .. })).count()
}

#[test]
fn the_trust_dialog_with_no_exit_first_is_answered_yes_and_the_agent_lives() {
    for session in SESSIONS {
        let bosun = bosun();
        let repo = TempRepo::new();
        let (_dir, claude) = fake_claude();
        let id = bosun.start(repo.path(), &["--session", session, "--", &claude.display().to_string()]);
        let ws = bosun.show(&id).workspace.unwrap().path;
        let trusted = wait_until(PATIENCE, || ws.join("TRUSTED").exists());
        assert!(trusted, "{session}: the agent trusted its folder:\n{}\n{}", keys_typed(&ws), bosun.log());
        assert!(bosun.agent(&id).state.is_up(), "{session}: it lives: {:?}", bosun.agent(&id).state);
        // Down to "Yes, I trust this folder", then Enter: never Enter on "No, exit".
        let keys = keys_typed(&ws);
        assert!(keys.starts_with("\x1b[B") || keys.starts_with("\x1bOB"), "{session}: {keys:?}");
        let picks: Vec<(String, bool)> = bosun
            .events()
            .into_iter()
            .filter_map(|e| match e {
                Event::DialogKeys { option, picked, .. } => Some((option, picked)),
                _ => None,
            })
            .collect();
        assert_eq!(picks.last(), Some(&("Yes, I trust this folder".to_owned(), true)), "{session}: {picks:?}");
        assert!(picks.iter().all(|(o, _)| o == "Yes, I trust this folder"), "{session}: {picks:?}");
    }
}

#[test]
fn a_message_sent_while_a_dialog_shows_waits_and_send_says_so_and_answer_picks_by_meaning() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (_dir, claude) = fake_claude();
    let id = bosun.start(repo.path(), &["--no-accept-trust", "--", &claude.display().to_string()]);
    bosun.wait_state(&id, "prompt(setup)");
    let ws = bosun.show(&id).workspace.unwrap().path;
    let out = bosun.ok(repo.path(), &["send", &id, "hello"]);
    assert!(out.starts_with("queued m") && out.contains("is at a dialog (prompt(setup)"), "{out}");
    let err = bosun.fails(repo.path(), &["send", "--now", &id, "hello now"]);
    assert!(err.contains("not waiting for input") && err.contains("bosun answer"), "{err}");
    assert_eq!(queued(&bosun), 1, "a refused message is not recorded");
    assert_eq!(keys_typed(&ws), "", "nothing was typed into the dialog");
    assert!(bosun.agent(&id).state.is_up(), "its Enter did not pick \"No, exit\"");
    let out = bosun.ok(repo.path(), &["answer", &id, "allow"]);
    assert!(out.contains("moving to \"Yes, I trust this folder\""), "{out}");
    let events: Vec<String> =
        bosun.events().iter().map(|e| format!("{e:?}")).filter(|e| e.contains("Dialog")).collect();
    assert!(
        wait_until(PATIENCE, || ws.join("TRUSTED").exists()),
        "answered yes:\n{:?}\n{events:?}\n{}",
        keys_typed(&ws),
        bosun.log()
    );
    assert!(bosun.agent(&id).state.is_up());
}

#[test]
fn control_characters_are_refused_unless_raw_and_nothing_is_recorded() {
    for session in SESSIONS {
        let (bosun, repo, id) = echo_agent(session);
        for text in ["\x03", "stop\x04", "\x1b[2J", "line\r"] {
            let out = bosun.run(repo.path(), &["send", &id, text]);
            assert_eq!(out.status.code(), Some(2), "{session} {text:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("control character") && err.contains("--raw"), "{err}");
        }
        assert_eq!(queued(&bosun), 0, "{session}: nothing recorded");
        bosun.ok(repo.path(), &["send", &id, "still here"]);
        bosun.wait_screen(&id, "got: still here");
        // --raw types the keys: Ctrl-C ends the shell.
        // (Its Enter may find the shell gone: the message is then not delivered, exit 1.)
        bosun.run(repo.path(), &["send", "--raw", &id, "\x03"]);
        assert!(wait_until(PATIENCE, || bosun.agent(&id).state.is_dead()), "{session}: Ctrl-C was typed");
    }
}

#[test]
fn one_limit_on_length_for_both_session_kinds_checked_before_anything_is_recorded() {
    for session in SESSIONS {
        let (bosun, repo, id) = echo_agent(session);
        let long = "x".repeat(100_000);
        let out = bosun.run(repo.path(), &["send", &id, &long]);
        assert_eq!(out.status.code(), Some(2), "{session}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("at most {MESSAGE_MAX}")) && err.len() < 400, "{session}: {err}");
        assert_eq!(queued(&bosun), 0, "{session}: the text is not in the log");
        // The longest message that may be sent is typed whole.
        let longest = format!("{}END", "y".repeat(MESSAGE_MAX - 3));
        let out = bosun.ok(repo.path(), &["send", &id, &longest]);
        assert!(out.starts_with("delivered"), "{session}: {out}");
        let typed =
            wait_until(PATIENCE, || bosun.ok(repo.path(), &["peek", &id, "--scrollback", "400"]).contains("yEND"));
        assert!(typed, "{session}: typed whole");
    }
}
