//! A host that relays its agent's hook reports: a report made while no daemon follows is kept
//! (marked as kept) and answered at once; a follower gets it, and the next report's hook waits
//! for and prints the follower's answer; a newer follower takes over from an older one; a hook
//! that sends anything but its agent's report, or too much, is refused and nothing is relayed.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bosun_host::{HostClient, HostEndpoint, HostOptions, Listen};
use bosun_wire::{read_frame, write_frame, Envelope, HookEvent, Request, Response};

const PATIENCE: Duration = Duration::from_secs(20);

fn claude(event: &str) -> HookEvent {
    HookEvent::Report {
        driver: bosun_core::driver::DriverKind::Claude,
        agent: "a1".into(),
        generation: Some(0),
        event: event.into(),
        payload: format!("{{\"hook_event_name\":\"{event}\"}}"),
        spooled_at: None,
    }
}

/// What a hook in the agent does: its report to where the daemon's socket would be.
fn hook(relay: &Path, request: Request) -> Option<Response> {
    let mut conn = UnixStream::connect(relay).unwrap();
    let envelope = Envelope { version: bosun_wire::VERSION.to_owned(), request, id: None };
    write_frame(&mut conn, &envelope).unwrap();
    read_frame(&mut conn).ok()
}

/// A host serving `read l` (it ends when this test does) on a socket, relaying at `relay`.
fn host(dir: &Path) -> (HostClient, PathBuf) {
    let (socket, relay) = (dir.join("host.sock"), dir.join("state/run/bosun.sock"));
    let command = ["sh", "-c", "read l"].map(String::from).to_vec();
    let opts = HostOptions {
        relay: Some(relay.clone()),
        ..HostOptions::new(Listen::Unix(socket.clone()), "relay-test", command)
    };
    std::thread::spawn(move || bosun_host::serve(opts));
    let client = HostClient::new(HostEndpoint::Unix(socket));
    let deadline = Instant::now() + PATIENCE;
    while client.status().is_err() || !relay.exists() {
        assert!(Instant::now() < deadline, "the host never served");
        std::thread::sleep(Duration::from_millis(20));
    }
    (client, relay)
}

#[test]
fn reports_wait_for_a_follower_whose_answer_the_hook_prints() {
    let dir = tempfile::tempdir().unwrap();
    let (client, relay) = host(dir.path());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&relay).unwrap().permissions().mode() & 0o777, 0o600, "the relay is private");

    let answer = hook(&relay, Request::Hook(claude("SessionStart")));
    assert!(matches!(answer, Some(Response::Ok)), "no follower: answered at once, {answer:?}");
    let mut follower = client.reports().unwrap();
    let HookEvent::Report { event, spooled_at, .. } = follower.next_report().unwrap() else {
        panic!("a Claude report")
    };
    assert_eq!((event.as_str(), spooled_at), ("SessionStart", None), "the session's start, before any follower");
    follower.answer(None).unwrap();
    drop(follower);

    // Made once the daemon that followed went: answered at once, and marked as kept.
    let until = Instant::now() + PATIENCE;
    while !matches!(hook(&relay, Request::Hook(claude("Stop"))), Some(Response::Ok)) {
        assert!(Instant::now() < until, "the host lets the gone follower go");
    }
    let mut follower = client.reports().unwrap();
    let HookEvent::Report { event, spooled_at, .. } = follower.next_report().unwrap() else {
        panic!("a Claude report")
    };
    assert_eq!(event, "Stop");
    assert!(spooled_at.is_some(), "it says it was kept");
    follower.answer(None).unwrap();

    let waiting = std::thread::spawn({
        let relay = relay.clone();
        move || hook(&relay, Request::Hook(claude("PermissionRequest")))
    });
    let HookEvent::Report { event, spooled_at, .. } = follower.next_report().unwrap() else {
        panic!("a Claude report")
    };
    assert_eq!((event.as_str(), spooled_at), ("PermissionRequest", None), "heard as it happened");
    follower.answer(Some("{\"decision\":\"allow\"}".into())).unwrap();
    let said = waiting.join().unwrap();
    match said {
        Some(Response::HookReply { stdout }) => assert_eq!(stdout, "{\"decision\":\"allow\"}", "the hook prints it"),
        other => panic!("the follower's answer, not {other:?}"),
    }

    // A newer follower takes over; the older one hears no more.
    let mut newer = client.reports().unwrap();
    assert!(follower.next_report().is_err(), "the older follower is let go");
    let waiting = std::thread::spawn(move || hook(&relay, Request::Hook(claude("Notification"))));
    let HookEvent::Report { event, .. } = newer.next_report().unwrap() else { panic!("a Claude report") };
    assert_eq!(event, "Notification");
    newer.answer(None).unwrap();
    assert!(matches!(waiting.join().unwrap(), Some(Response::Ok)), "no answer: the hook prints nothing");
}

#[test]
fn a_hook_that_sends_anything_but_its_agents_report_is_refused_and_nothing_is_relayed() {
    let dir = tempfile::tempdir().unwrap();
    let (client, relay) = host(dir.path());
    // Another session's end, a request of the daemon's, an oversized frame, garbage.
    let died = HookEvent::PaneDied { session: "bosun-other".into(), status: Some(0), signal: None };
    assert!(matches!(hook(&relay, Request::Hook(died)), Some(Response::Error(_))));
    assert!(matches!(hook(&relay, Request::Shutdown), Some(Response::Error(_))));
    let mut conn = UnixStream::connect(&relay).unwrap();
    conn.write_all(&(64u32 << 20).to_be_bytes()).unwrap();
    assert!(read_frame::<_, Response>(&mut conn).is_err(), "an oversized frame is dropped unread");
    let mut conn = UnixStream::connect(&relay).unwrap();
    conn.write_all(b"\x00\x00\x00\x05hello").unwrap();
    assert!(read_frame::<_, Response>(&mut conn).is_err(), "garbage is dropped");

    hook(&relay, Request::Hook(claude("Stop")));
    let mut follower = client.reports().unwrap();
    let HookEvent::Report { event, .. } = follower.next_report().unwrap() else { panic!("only the report is relayed") };
    assert_eq!(event, "Stop");
}
