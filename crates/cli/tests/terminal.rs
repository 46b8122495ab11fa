//! A person's keys and a terminal's size through the daemon (what the dashboard's panel uses),
//! hostile keys kept as text, and an event stream that ends when the daemon is stopped on
//! purpose instead of starting a new one.

mod support;

use std::process::Stdio;

use bosun_core::TermKey;
use bosun_testkit::poll::wait_for;
use bosun_wire::{ErrorKind, Request, Response};
use support::*;

/// An agent that answers each line it is given.
fn echoer(bosun: &Bosun, repo: &TempRepo) -> String {
    let id = bosun.start(repo.path(), &["--", "sh", "-c", "while read l; do echo \"got: $l\"; done"]);
    bosun.wait_state(&id, "running");
    id
}

fn window(bosun: &Bosun, id: &str) -> String {
    let out =
        bosun.tmux(&["display-message", "-p", "-t", &format!("=bosun-{id}:"), "#{window_width}x#{window_height}"]);
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn refused(answer: Response, kind: ErrorKind, says: &str) {
    match answer {
        Response::Error(e) => {
            assert_eq!(e.kind, kind, "{}", e.message);
            assert!(e.message.contains(says), "{}", e.message);
        }
        other => panic!("expected a refusal saying {says:?}, got {other:?}"),
    }
}

#[test]
fn keys_are_typed_and_the_terminal_sized_through_the_daemon() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = echoer(&bosun, &repo);
    let keys = vec![
        TermKey::Text("hel".into()),
        TermKey::Text("lx".into()),
        TermKey::Backspace,
        TermKey::Text("o".into()),
        TermKey::Enter,
    ];
    let answer = bosun.ask(Request::Press { agent: id.clone(), keys });
    assert!(matches!(answer, Response::Ok), "{answer:?}");
    bosun.wait_screen(&id, "got: hello");

    let before = window(&bosun, &id);
    match bosun.ask(Request::Resize { agent: id.clone(), cols: 70, rows: 20 }) {
        Response::Resized { before: (c, r) } => assert_eq!(format!("{c}x{r}"), before, "its size before"),
        other => panic!("expected its size before, got {other:?}"),
    }
    assert_eq!(window(&bosun, &id), "70x20");
}

#[test]
fn hostile_keys_stay_text_and_bad_ones_change_nothing() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let id = echoer(&bosun, &repo);
    let planted = repo.path().join("planted");
    let text = format!("; kill-server ; $(touch {}) `touch {}` #{{pane_pid}}", planted.display(), planted.display());
    let keys = vec![TermKey::Text(text.clone()), TermKey::Enter];
    let answer = bosun.ask(Request::Press { agent: id.clone(), keys });
    assert!(matches!(answer, Response::Ok), "{answer:?}");
    bosun.wait_screen(&id, &format!("got: {text}"));
    assert!(!planted.exists(), "nothing in the text ran");
    assert_eq!(bosun.agent(&id).state.label(), "running", "tmux's server and the agent live on");

    let before = window(&bosun, &id);
    refused(
        bosun.ask(Request::Press { agent: id.clone(), keys: vec![TermKey::Ctrl(';')] }),
        ErrorKind::BadRequest,
        "Ctrl",
    );
    let many = vec![TermKey::Enter; bosun_core::KEYS_MAX + 1];
    refused(bosun.ask(Request::Press { agent: id.clone(), keys: many }), ErrorKind::BadRequest, "too many keys");
    let long = vec![TermKey::Text("x".repeat(bosun_core::KEYS_TEXT_MAX + 1))];
    refused(bosun.ask(Request::Press { agent: id.clone(), keys: long }), ErrorKind::BadRequest, "too much text");
    refused(bosun.ask(Request::Resize { agent: id.clone(), cols: 0, rows: 24 }), ErrorKind::BadRequest, "0×24");
    refused(
        bosun.ask(Request::Resize { agent: id.clone(), cols: 80, rows: 60_000 }),
        ErrorKind::BadRequest,
        "80×60000",
    );
    refused(
        bosun.ask(Request::Press { agent: "nobody".into(), keys: vec![TermKey::Enter] }),
        ErrorKind::NotFound,
        "nobody",
    );
    assert_eq!(window(&bosun, &id), before, "its size as it was");
    let screen = bosun.wait_screen(&id, "got: ");
    assert_eq!(screen.matches("got:").count(), 1, "no key of a refused request was typed: {screen}");
}

#[test]
fn a_followed_event_stream_ends_when_the_daemon_is_stopped_and_starts_none() {
    let bosun = bosun();
    let dir = bosun.state_dir().to_owned();
    bosun.ok(&dir, &["daemon", "start"]);
    let mut follow =
        bosun.command(&dir, &["events", "-f"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // The stream is open once it has printed an event recorded after it began: a stop before
    // that could find it still connecting.
    let (tx, printed) = std::sync::mpsc::channel();
    let stdout = follow.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let repo = TempRepo::new();
    wait_for(PATIENCE, || {
        bosun.start(repo.path(), &["--", "sleep", "600"]);
        printed.recv_timeout(std::time::Duration::from_millis(500)).ok()
    })
    .expect("the stream prints what is recorded");
    bosun.ok(&dir, &["daemon", "stop"]);
    let status = wait_for(PATIENCE, || follow.try_wait().unwrap()).expect("`events -f` ends");
    let mut err = String::new();
    std::io::Read::read_to_string(follow.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{err}");
    assert!(err.contains("the daemon was stopped"), "{err}");
    assert_eq!(bosun.daemon_pid(), None, "no daemon was started again");
}
