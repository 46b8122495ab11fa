//! The daemon's memory under hostile input: twenty half-sent frames that claim 64 MB, hook
//! reports naming `/dev/zero` and a FIFO as their transcript, and a 70 MB hook payload, while a
//! claudeless agent runs. Its peak resident memory (VmHWM) is the figure.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Stdio;

use bosun_core::SessionState;
use bosun_testkit::bosun::Bosun;
use bosun_testkit::repo::TempRepo;

use crate::supervise::status_kib;
use crate::{show, wait, Figure};

pub fn figures(bin: &Path, claudeless: &Path, chat: &Path) -> Vec<Figure> {
    let bosun = Bosun::new(bin);
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless.display().to_string(), chat.display().to_string());
    let id = bosun.start(repo.path(), &["--", &cl, "--scenario", &sc]);
    wait(|| show(bosun.state_dir(), &id).filter(|a| a.state == SessionState::Idle));
    let pid = bosun.daemon_pid().expect("daemon pid");
    let before = status_kib(pid, "VmRSS:");
    // Half-sent frames, kept open.
    let socket = bosun.state_dir().join("run/bosun.sock");
    let mut open = Vec::new();
    for _ in 0..20 {
        if let Ok(mut s) = UnixStream::connect(&socket) {
            let _ = s.write_all(&(64u32 * 1024 * 1024).to_be_bytes());
            let _ = s.write_all(&vec![b'x'; 4 * 1024 * 1024]);
            open.push(s);
        }
    }
    // Transcripts that never end or never open.
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("fifo.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
    assert!(made, "mkfifo failed");
    for n in 0..200 {
        let path = if n % 2 == 0 { Path::new("/dev/zero") } else { fifo.as_path() };
        let stop = serde_json::json!({"hook_event_name": "Stop", "transcript_path": path});
        hook(&bosun, &id, "Stop", stop.to_string().as_bytes());
    }
    let huge = format!(r#"{{"hook_event_name":"Stop","prompt":"{}"}}"#, "x".repeat(70 * 1024 * 1024));
    hook(&bosun, &id, "Stop", huge.as_bytes());
    // Still answering, then the peak.
    wait(|| show(bosun.state_dir(), &id));
    let peak = status_kib(pid, "VmHWM:");
    drop(open);
    let mb = |kib: u64| format!("{:.1} MB", kib as f64 / 1024.0);
    vec![
        Figure::value("daemon resident memory before hostile input", mb(before), "", "-"),
        Figure::value(
            "daemon peak memory: 20 half-sent 64 MB frames, 200 bad transcripts, a 70 MB report",
            mb(peak),
            "< 100 MB",
            "2.1 GB before issue 10",
        ),
    ]
}

fn hook(bosun: &Bosun, id: &str, event: &str, payload: &[u8]) {
    let mut child = bosun
        .command(bosun.state_dir(), &["hook", "claude", id, "0", event])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("bosun hook");
    // The hook stops reading past its bound: a broken pipe is expected.
    let _ = child.stdin.take().expect("stdin").write_all(payload);
    let _ = child.wait();
}
