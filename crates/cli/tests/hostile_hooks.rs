//! Hook reports are untrusted: a report that names a transcript somewhere else (a FIFO, a
//! device, a secret) is not read there, and a huge one is cut; either way the hook returns and
//! the daemon goes on.

mod support;

use support::*;

#[test]
fn transcripts_named_outside_the_agents_config_are_never_read() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let id = bosun.start(repo.path(), &["--", &cl, "--scenario", &sc]);
    bosun.wait_state(&id, "idle");
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.jsonl");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let secret = dir.path().join("secret.jsonl");
    std::fs::write(&secret, r#"{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"SECRET"}]}}"#)
        .unwrap();
    for path in [fifo.as_path(), std::path::Path::new("/dev/zero"), secret.as_path()] {
        let prompt = serde_json::json!({"hook_event_name": "UserPromptSubmit", "transcript_path": path});
        assert!(bosun.hook(&id, "UserPromptSubmit", prompt.to_string().as_bytes()).status.success());
        let stop = serde_json::json!({"hook_event_name": "Stop", "transcript_path": path});
        let out = bosun.hook(&id, "Stop", stop.to_string().as_bytes());
        assert!(out.status.success(), "{out:?}");
        let agent = bosun.wait_state(&id, "idle");
        assert!(!agent.said.as_deref().unwrap_or_default().contains("SECRET"), "{path:?} was read");
        assert_ne!(agent.log.as_deref(), Some(path), "{path:?} was taken as its log");
    }
    // The daemon still answers, and follows the agent as before.
    bosun.ok(repo.path(), &["send", &id, "ping"]);
    bosun.wait_screen(&id, "pong");
}

#[test]
fn a_huge_report_is_cut_and_still_reports_its_event() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let id = bosun.start(repo.path(), &["--", &cl, "--scenario", &sc]);
    bosun.wait_state(&id, "idle");
    let huge = format!(r#"{{"hook_event_name":"UserPromptSubmit","prompt":"{}"}}"#, "x".repeat(8 * 1024 * 1024));
    let out = bosun.hook(&id, "UserPromptSubmit", huge.as_bytes());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Cut, its JSON does not parse: the event it was installed for still counts.
    bosun.wait_state(&id, "running");
}

#[test]
fn a_pane_died_report_for_a_live_pane_changes_nothing() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let id = bosun.start(repo.path(), &["--", &cl, "--scenario", &sc]);
    bosun.wait_state(&id, "idle");
    let session = format!("bosun-{id}");
    bosun.ok(bosun.state_dir(), &["hook", "tmux", "pane-died", &session, "0", ""]);
    bosun.ok(bosun.state_dir(), &["hook", "tmux", "session-closed", &session]);
    assert_eq!(bosun.agent(&id).state.label(), "idle", "the pane is alive: the reports were false");
    let out = bosun.ok(repo.path(), &["kill", &id]);
    assert_eq!(out.trim(), format!("{id} dead(killed)"), "and the agent can still be killed");
}

/// An idle agent, its daemon stopped, and a replay a crash cut off: one UserPromptSubmit
/// spooled, with `progress` in its `.told` file. The state the agent is in once replayed.
fn replayed_with(progress: &str) -> String {
    let bosun = bosun();
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless(), scenario("chat"));
    let id = bosun.start(repo.path(), &["--", &cl, "--scenario", &sc]);
    bosun.wait_state(&id, "idle");
    bosun.ok(repo.path(), &["daemon", "stop"]);
    let payload = serde_json::json!({ "hook_event_name": "UserPromptSubmit" }).to_string();
    // As the version before this one spooled it: Claude's own variant, read as the generic report.
    let hook = serde_json::json!({
        "hook": "claude", "agent": id, "generation": 0, "event": "UserPromptSubmit", "payload": payload,
    });
    let file = bosun.state_dir().join("spool/hooks.replaying-0000000000001");
    std::fs::write(&file, format!("{hook}\n")).unwrap();
    std::fs::write(bosun.state_dir().join("spool/hooks.replaying-0000000000001.told"), progress).unwrap();
    let state = bosun.agent(&id).state.label().to_owned();
    assert!(!file.exists(), "the replayed spool is dropped");
    state
}

#[test]
fn a_spooled_report_a_crash_cut_off_after_its_telling_is_not_told_again() {
    assert_eq!(replayed_with("1"), "idle", "not told again: it would say running");
}

#[test]
fn a_spooled_report_the_daemon_died_telling_is_told_again() {
    assert_eq!(replayed_with("0 1"), "running", "begun once, never finished: told again");
}

#[test]
fn a_spooled_report_the_daemon_died_telling_three_times_is_dropped() {
    assert_eq!(replayed_with("0 3"), "idle", "a report that kills the daemon is not told forever");
}

/// A hook that fires after its state directory was removed (a tmux server ending after bosun's
/// state went) makes no state directory again for a report no daemon will read.
#[test]
fn a_hook_whose_state_directory_is_gone_makes_it_not_again() {
    let bosun = bosun();
    let parent = tempfile::tempdir().unwrap();
    let gone = parent.path().join("state");
    let mut cmd = bosun.command(parent.path(), &["hook", "tmux", "session-closed", "bosun-a1b2c3d4"]);
    let out = cmd.env("BOSUN_STATE_DIR", &gone).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!gone.exists(), "no state directory made");
}

/// A confined agent writes its own spool: one left as a FIFO (which would block a read) or as a
/// link to a file of the user's (whose text would be read, and the file moved) is passed over
/// at the next daemon's start, which starts; the linked file stays where it was, as it was.
#[test]
fn a_channel_spool_that_is_a_fifo_or_a_link_is_passed_over_at_start() {
    let bosun = bosun();
    bosun.list();
    bosun.kill_daemon_hard();
    let reports = bosun.state_dir().join("reports");
    let (fifo_spool, link_spool) = (reports.join("fifo0000/spool"), reports.join("link0000/spool"));
    for dir in [&fifo_spool, &link_spool] {
        std::fs::create_dir_all(dir).unwrap();
    }
    assert!(std::process::Command::new("mkfifo").arg(fifo_spool.join("hooks.spool")).status().unwrap().success());
    let users = tempfile::tempdir().unwrap();
    let target = users.path().join("notes.txt");
    let report = r#"{"hook":"claude","agent":"x","generation":0,"event":"Stop","payload":"{}"}"#;
    std::fs::write(&target, format!("{report}\n")).unwrap();
    std::os::unix::fs::symlink(&target, link_spool.join("hooks.spool")).unwrap();

    assert!(bosun.list().agents.is_empty(), "a new daemon answers");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), format!("{report}\n"), "the user's file is as it was");
    assert!(!reports.join("fifo0000").exists() && !reports.join("link0000").exists(), "no agent's: removed");
}

/// A daemon that hears a report but cannot record it (it is stopping, its disk fails) answers
/// with a failure: the report is kept in the spool for the next daemon, not lost. One the daemon
/// refused (it names no agent) was heard, and is not kept.
#[test]
fn a_report_the_daemon_could_not_record_is_kept_for_the_next_one() {
    use bosun_wire::{read_frame, write_frame, Envelope, ErrorKind, Response, WireError};
    let bosun = bosun();
    let run = bosun.state_dir().join("run");
    std::fs::create_dir_all(&run).unwrap();
    let spool = bosun.state_dir().join("spool/hooks.spool");
    let kept = || std::fs::read_to_string(&spool).unwrap_or_default().lines().count();
    for (kind, keeps) in [(ErrorKind::Failed, true), (ErrorKind::NotFound, false), (ErrorKind::BadRequest, false)] {
        // A daemon of its own that answers the one report with `kind`.
        let socket = run.join("bosun.sock");
        let _ = std::fs::remove_file(&socket);
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let answer = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let _: Envelope = read_frame(&mut stream).unwrap();
            write_frame(&mut stream, &Response::Error(WireError::new(kind, "engine stopped"))).unwrap();
        });
        let before = kept();
        let stop = serde_json::json!({"hook_event_name": "Stop"}).to_string();
        let out = bosun.hook("a1b2c3d4", "Stop", stop.as_bytes());
        assert!(out.status.success(), "{out:?}");
        answer.join().unwrap();
        assert_eq!(
            kept() - before,
            usize::from(keeps),
            "{kind:?}: {}",
            std::fs::read_to_string(&spool).unwrap_or_default()
        );
    }
    assert!(std::fs::read_to_string(&spool).unwrap().contains("\"Stop\""));
}

/// Runs the hook command bosun installs for Gemini CLI agent `id` (generation 0), as Gemini CLI
/// would, with `payload` on stdin.
fn gemini_hook(bosun: &Bosun, id: &str, event: &str, payload: &[u8]) -> std::process::Output {
    let mut child = bosun
        .command(bosun.state_dir(), &["hook", "report", "gemini", id, event, "--generation", "0"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the hook");
    let _ = std::io::Write::write_all(&mut child.stdin.take().expect("its stdin"), payload);
    child.wait_with_output().expect("the hook ends")
}

/// Gemini CLI's hook reports (its corpus): a session log named anywhere but where Gemini CLI
/// keeps this agent's, in the home bosun made for it, is never read (a FIFO, a device, a
/// secret, a log of the right name in another home); a huge payload is cut and still reports its
/// event; garbage is a sign of life; the daemon goes on.
#[test]
fn gemini_reports_are_bounded_and_name_no_log_outside_its_home() {
    let bosun = bosun();
    let repo = TempRepo::new();
    // Its program stands in for Gemini CLI, passing over the arguments bosun adds.
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("gemini-stand-in");
    std::fs::write(&program, "#!/bin/sh\nexec sleep 600\n").unwrap();
    std::fs::set_permissions(&program, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let id = bosun.start(repo.path(), &["--driver", "gemini", "--", program.to_str().unwrap()]);
    bosun.wait_up(&id);
    let bosun_core::driver::Driver::Gemini { session_id } = bosun.agent(&id).driver else { panic!("a Gemini agent") };
    let fifo = dir.path().join("fifo.jsonl");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let chats = dir.path().join(".gemini/tmp/project/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let lookalike = chats.join(format!("session-2026-11-28T02-20-{}.jsonl", &session_id[..8]));
    let secret = dir.path().join("secret.jsonl");
    for file in [&lookalike, &secret] {
        std::fs::write(file, r#"{"id":"1","type":"gemini","content":"SECRET"}"#).unwrap();
    }
    // It leads out of the agent's Gemini home to a secret that is there to be read if followed.
    let dotted = bosun.agent(&id).dir.join("config/.gemini/tmp/p/chats/../../../../../secret.jsonl");
    std::fs::write(bosun.agent(&id).dir.join("secret.jsonl"), r#"{"id":"1","type":"gemini","content":"SECRET"}"#)
        .unwrap();
    let paths = [fifo.clone(), "/dev/zero".into(), secret.clone(), lookalike.clone(), dotted];
    for path in &paths {
        let begin = serde_json::json!({"hook_event_name": "BeforeAgent", "prompt": "x", "transcript_path": path});
        assert!(gemini_hook(&bosun, &id, "BeforeAgent", begin.to_string().as_bytes()).status.success());
        bosun.wait_state(&id, "running");
        let end =
            serde_json::json!({"hook_event_name": "AfterAgent", "prompt_response": "ok", "transcript_path": path});
        let out = gemini_hook(&bosun, &id, "AfterAgent", end.to_string().as_bytes());
        assert!(out.status.success(), "{out:?}");
        let agent = bosun.wait_state(&id, "idle");
        assert!(!agent.said.as_deref().unwrap_or_default().contains("SECRET"), "{path:?} was read");
        assert_ne!(agent.log.as_ref(), Some(path), "{path:?} was taken as its log");
    }
    let huge = format!(r#"{{"hook_event_name":"BeforeAgent","prompt":"{}"}}"#, "x".repeat(8 * 1024 * 1024));
    assert!(gemini_hook(&bosun, &id, "BeforeAgent", huge.as_bytes()).status.success());
    bosun.wait_state(&id, "running");
    for garbage in [&b"\x00\xff not json"[..], b"[]", br#"{"hook_event_name": 7}"#] {
        assert!(gemini_hook(&bosun, &id, "Notification", garbage).status.success());
    }
    assert_eq!(bosun.agent(&id).state.label(), "running", "garbage is only a sign of life");
    // The daemon goes on reading the agent.
    let end = serde_json::json!({"hook_event_name": "AfterAgent", "prompt_response": "done"});
    assert!(gemini_hook(&bosun, &id, "AfterAgent", end.to_string().as_bytes()).status.success());
    bosun.wait_state(&id, "idle");
}

/// Runs the report command bosun's extension for pi agent `id` (generation 0) runs, as the
/// extension would, with `payload` on stdin.
fn pi_hook(bosun: &Bosun, id: &str, event: &str, payload: &[u8]) -> std::process::Output {
    let mut child = bosun
        .command(bosun.state_dir(), &["hook", "report", "pi", id, "--generation", "0", event])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the hook");
    let _ = std::io::Write::write_all(&mut child.stdin.take().expect("its stdin"), payload);
    child.wait_with_output().expect("the hook ends")
}

/// pi's reports (its corpus): a session file named anywhere but in a folder of this agent's pi
/// sessions is never taken as its log (a FIFO, a device, a secret, a file of the right name
/// elsewhere, a path that climbs out of the sessions with `..`); a huge payload is cut and still
/// reports its event; garbage is a sign of life; the daemon goes on.
#[test]
fn pi_reports_are_bounded_and_name_no_session_file_outside_its_sessions() {
    let bosun = bosun();
    let repo = TempRepo::new();
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("pi-stand-in");
    std::fs::write(&program, "#!/bin/sh\nexec sleep 600\n").unwrap();
    std::fs::set_permissions(&program, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = dir.path().join("pi");
    let id = bosun.start_with(repo.path(), &["--driver", "pi", "--", program.to_str().unwrap()], |cmd| {
        cmd.env("PI_CODING_AGENT_DIR", &config);
    });
    bosun.wait_up(&id);
    let bosun_core::driver::Driver::Pi { session_id } = bosun.agent(&id).driver else { panic!("a pi agent") };
    let name = format!("2026-11-28T04-25-50-272Z_{session_id}.jsonl");
    let fifo = dir.path().join(&name);
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let elsewhere = dir.path().join("elsewhere/--project--").join(&name);
    let secret = dir.path().join(format!("secret_{session_id}.jsonl"));
    let dotted = config.join(format!("sessions/--p--/../../../secret_{session_id}.jsonl"));
    std::fs::create_dir_all(elsewhere.parent().unwrap()).unwrap();
    for file in [&elsewhere, &secret] {
        std::fs::write(file, "{\"type\":\"session\",\"id\":\"SECRET\"}\n").unwrap();
    }
    let paths = [fifo, "/dev/zero".into(), secret, elsewhere, dotted];
    for path in &paths {
        let start = serde_json::json!({"event": "session_start", "reason": "startup", "session_file": path});
        assert!(pi_hook(&bosun, &id, "session_start", start.to_string().as_bytes()).status.success());
        let begin = serde_json::json!({"event": "before_agent_start", "prompt": "x"});
        assert!(pi_hook(&bosun, &id, "before_agent_start", begin.to_string().as_bytes()).status.success());
        bosun.wait_state(&id, "running");
        let end = serde_json::json!({"event": "agent_settled", "stop_reason": "stop", "text": "ok"});
        assert!(pi_hook(&bosun, &id, "agent_settled", end.to_string().as_bytes()).status.success());
        let agent = bosun.wait_state(&id, "idle");
        assert_ne!(agent.log.as_ref(), Some(path), "{path:?} was taken as its log");
    }
    // Its own session file, where pi keeps it, is taken.
    let own = config.join("sessions/--p--").join(&name);
    let start = serde_json::json!({"event": "session_start", "reason": "startup", "session_file": own});
    assert!(pi_hook(&bosun, &id, "session_start", start.to_string().as_bytes()).status.success());
    let taken = bosun_testkit::poll::wait_until(PATIENCE, || bosun.agent(&id).log.as_ref() == Some(&own));
    assert!(taken, "{}", bosun.log());
    let huge = format!(r#"{{"event":"before_agent_start","prompt":"{}"}}"#, "x".repeat(8 * 1024 * 1024));
    assert!(pi_hook(&bosun, &id, "before_agent_start", huge.as_bytes()).status.success());
    bosun.wait_state(&id, "running");
    for garbage in [&b"\x00\xff not json"[..], b"[]", br#"{"event": 7, "stop_reason": ["error"]}"#] {
        assert!(pi_hook(&bosun, &id, "session_shutdown", garbage).status.success());
    }
    assert_eq!(bosun.agent(&id).state.label(), "running", "garbage is only a sign of life");
    let end = serde_json::json!({"event": "agent_settled", "stop_reason": "stop", "text": "done"});
    assert!(pi_hook(&bosun, &id, "agent_settled", end.to_string().as_bytes()).status.success());
    assert_eq!(bosun.wait_state(&id, "idle").said.as_deref(), Some("done"));
}

/// A report of bosun's opencode plugin, as `bosun hook report opencode` gets it.
fn opencode_report(bosun: &Bosun, id: &str, event: &str, payload: &[u8]) -> std::process::Output {
    let mut child = bosun
        .command(bosun.state_dir(), &["hook", "report", "opencode", id, event, "--generation", "0"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the report");
    let _ = std::io::Write::write_all(&mut child.stdin.take().expect("its stdin"), payload);
    child.wait_with_output().expect("the report ends")
}

/// opencode's plugin reports (its corpus): a session id that is a path (out of the agent's own
/// config, to a secret, to a FIFO) names no session log and no session to resume; a huge payload
/// is cut and still reports its event; garbage and a number where text goes are signs of life;
/// a permission request from a hostile payload is answered by the policy as data; the daemon
/// goes on.
#[test]
fn opencode_reports_are_bounded_and_name_no_file_outside_its_own_config() {
    let bosun = bosun();
    let repo = TempRepo::new();
    // Its program stands in for opencode, passing over the arguments bosun adds.
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("opencode-stand-in");
    std::fs::write(&program, "#!/bin/sh\nexec sleep 600\n").unwrap();
    std::fs::set_permissions(&program, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let args = ["--driver", "opencode", "--deny", "bash(rm *)", "--", program.to_str().unwrap()];
    let id = bosun.start(repo.path(), &args);
    bosun.wait_up(&id);
    let fifo = dir.path().join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let own = bosun.agent(&id).dir.join("config/sessions");
    let escapes = [
        format!("ses_x/../../../../{}", fifo.display()),
        "../../../../../../etc/passwd".to_owned(),
        "ses_../../secret".to_owned(),
        format!("{}", fifo.display()),
        "ses_\u{0}x".to_owned(),
    ];
    for session in &escapes {
        let busy = serde_json::json!({"type": "session.status", "sessionID": session, "status": {"type": "busy"}});
        assert!(opencode_report(&bosun, &id, "session.status", busy.to_string().as_bytes()).status.success());
        bosun.wait_state(&id, "running");
        let idle = serde_json::json!({"type": "session.idle", "sessionID": session, "said": "ok"});
        assert!(opencode_report(&bosun, &id, "session.idle", idle.to_string().as_bytes()).status.success());
        let agent = bosun.wait_state(&id, "idle");
        assert_eq!(agent.log, None, "{session:?} named a session log");
    }
    // A session of its own is one under its own config's sessions folder.
    let real = serde_json::json!({"type": "session.status", "sessionID": "ses_abc123", "status": {"type": "busy"}});
    assert!(opencode_report(&bosun, &id, "session.status", real.to_string().as_bytes()).status.success());
    let agent = bosun.wait_state(&id, "running");
    assert_eq!(agent.log, Some(own.join("ses_abc123.jsonl")));
    // A huge payload is cut: it still reports its event.
    let huge = format!(r#"{{"type":"session.idle","said":"{}"}}"#, "x".repeat(8 * 1024 * 1024));
    assert!(opencode_report(&bosun, &id, "session.idle", huge.as_bytes()).status.success());
    bosun.wait_state(&id, "idle");
    for garbage in [&b"\x00\xff not json"[..], b"[]", br#"{"sessionID": 7, "status": {"type": 7}}"#] {
        assert!(opencode_report(&bosun, &id, "session.status", garbage).status.success());
    }
    assert_eq!(bosun.agent(&id).state.label(), "idle", "garbage is only a sign of life");
    // A permission request is the policy's to answer, whatever its words: printed for the plugin.
    let asked = serde_json::json!({"type": "permission.asked", "sessionID": "ses_abc123",
        "request": {"id": "per_1", "permission": "bash", "patterns": ["rm -rf \"$HOME\"; `reboot`"]}});
    let out = opencode_report(&bosun, &id, "permission.asked", asked.to_string().as_bytes());
    assert!(out.status.success(), "{out:?}");
    let reply: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(reply["reply"], "reject", "{}", String::from_utf8_lossy(&out.stdout));
    let idle = serde_json::json!({"type": "session.idle", "sessionID": "ses_abc123", "said": "done"});
    assert!(opencode_report(&bosun, &id, "session.idle", idle.to_string().as_bytes()).status.success());
    bosun.wait_state(&id, "idle");
}
