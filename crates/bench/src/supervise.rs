//! Issue 3's figures: how soon bosun knows a turn ended, how fast a nudge gets an idle agent
//! working again, and what supervising fifty idle agents costs the daemon.

use std::path::Path;
use std::time::Duration;

use bosun_core::{Event, MessageKind, SessionState};
use bosun_daemon::Store;
use bosun_testkit::bosun::Bosun;
use bosun_testkit::repo::TempRepo;

use crate::{show, wait, wait_secs, Figure};

const TURNS: usize = 50;
const NUDGES: usize = 30;
const IDLE_AGENTS: usize = 50;
const IDLE_SECONDS: u64 = 60;

/// Sends 50 prompts one after another; for each, the time from claudeless's last log line of
/// the turn (its own timestamp) to bosun recording the agent idle.
pub fn detection(bin: &Path, claudeless: &Path, chat: &Path) -> Vec<Figure> {
    let bosun = Bosun::new(bin);
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless.display().to_string(), chat.display().to_string());
    let id = bosun.start(repo.path(), &["--", &cl, "--scenario", &sc]);
    let mut last = wait(|| show(bosun.state_dir(), &id).filter(|a| a.state == SessionState::Idle));
    let log = wait(|| show(bosun.state_dir(), &id).and_then(|a| a.log));
    let mut samples = Vec::new();
    for _ in 0..TURNS {
        bosun.ok(repo.path(), &["send", &id, "ping"]);
        let idle = wait(|| {
            show(bosun.state_dir(), &id).filter(|a| a.state == SessionState::Idle && a.state_seq > last.state_seq)
        });
        let ended = last_line_ms(&log);
        samples.push(Duration::from_millis(idle.state_since.as_millis().saturating_sub(ended)));
        last = idle;
    }
    vec![Figure::new(
        format!("turn end to Idle, hooks (n={TURNS})"),
        samples,
        "p50<100 p99<500",
        "60.4 s (1 s grace: 1.17 s)",
    )]
}

/// The wall-clock milliseconds of the session log's last line, from claudeless's own timestamp.
fn last_line_ms(log: &Path) -> u64 {
    let text = std::fs::read_to_string(log).expect("session log");
    let line = text.lines().rfind(|l| !l.trim().is_empty()).expect("a line");
    let v: serde_json::Value = serde_json::from_str(line).expect("json line");
    let ts = v["timestamp"].as_str().expect("timestamp");
    parse_rfc3339_ms(ts)
}

/// "2026-11-22T01:09:56.077520126+00:00" → milliseconds since the epoch (UTC offsets only).
fn parse_rfc3339_ms(ts: &str) -> u64 {
    let (date, time) = ts.split_once('T').expect("T");
    let mut d = date.split('-').map(|p| p.parse::<i64>().expect("date"));
    let (y, m, day) = (d.next().unwrap_or(1970), d.next().unwrap_or(1), d.next().unwrap_or(1));
    let time = time.trim_end_matches('Z').split(['+']).next().unwrap_or(time);
    let mut t = time.split(':');
    let (h, min) =
        (t.next().unwrap_or("0").parse::<i64>().unwrap_or(0), t.next().unwrap_or("0").parse::<i64>().unwrap_or(0));
    let sec: f64 = t.next().unwrap_or("0").parse().unwrap_or(0.0);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    ((days * 86_400 + h * 3_600 + min * 60) * 1_000) as u64 + (sec * 1_000.0) as u64
}

/// An agent whose policy nudges it at every idle, forever: from each Idle to the Working that
/// follows its nudge, read from bosun's own event log; and whether every nudge was submitted.
pub fn nudges(bin: &Path, claudeless: &Path, chat: &Path) -> Vec<Figure> {
    let bosun = Bosun::new(bin);
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless.display().to_string(), chat.display().to_string());
    let id = bosun
        .start(repo.path(), &["--prompt", "ping", "--on-idle", "nudge*forever:ping", "--", &cl, "--scenario", &sc]);
    wait_secs(120, || {
        let nudged = bosun.show(&id).messages.iter().filter(|m| m.kind == MessageKind::Nudge).count();
        (nudged > NUDGES).then_some(())
    });
    bosun.ok(repo.path(), &["kill", &id]);
    let store = Store::open(&bosun.state_dir().join("bosun.db")).expect("store");
    let mut idle_at = None;
    let (mut samples, mut resubmitted) = (Vec::new(), 0);
    store
        .for_each(|_, e| match e {
            Event::AgentObserved { state: SessionState::Idle, at, .. } => idle_at = Some(at),
            Event::AgentObserved { state: SessionState::Running, at, .. } => {
                if let Some(i) = idle_at.take() {
                    samples.push(Duration::from_millis(at.millis_since(i)));
                }
            }
            Event::MessageResubmitted { .. } => resubmitted += 1,
            _ => {}
        })
        .expect("events");
    let n = samples.len();
    vec![
        Figure::new(format!("nudge: Idle to Working again (n={n})"), samples, "< 1.5 s", "never submitted"),
        Figure::value("nudges that needed Enter pressed again", format!("{resubmitted} of {n}"), "all submitted", "-"),
    ]
}

/// Fifty idle claudeless agents supervised for 60 s: the daemon's CPU (its own, and with the
/// `tmux` listings it runs) and its resident memory.
pub fn idle_agents(bin: &Path, claudeless: &Path, chat: &Path) -> Vec<Figure> {
    let bosun = Bosun::new(bin);
    let repo = TempRepo::new();
    let (cl, sc) = (claudeless.display().to_string(), chat.display().to_string());
    bosun.ok(repo.path(), &["daemon", "start"]);
    let ids: Vec<String> =
        (0..IDLE_AGENTS).map(|_| bosun.start(repo.path(), &["--", &cl, "--scenario", &sc])).collect();
    for id in &ids {
        wait_secs(60, || show(bosun.state_dir(), id).filter(|a| a.state == SessionState::Idle));
    }
    let pid = bosun.daemon_pid().expect("daemon pid");
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(IDLE_SECONDS));
    let after = cpu_ticks(pid);
    let rss = rss_kib(pid);
    let (anon, file) = (status_kib(pid, "RssAnon:"), status_kib(pid, "RssFile:"));
    let ticks_per_s = 100.0;
    let pct = |t: u64| 100.0 * t as f64 / (IDLE_SECONDS as f64 * ticks_per_s);
    vec![
        Figure::value(
            format!("daemon CPU, {IDLE_AGENTS} idle agents, {IDLE_SECONDS} s (own / with children)"),
            format!("{:.2} % / {:.2} %", pct(after.0 - before.0), pct(after.0 + after.1 - before.0 - before.1)),
            "< 1 % of a core",
            "27 %",
        ),
        Figure::value(
            format!("daemon resident memory, {IDLE_AGENTS} agents"),
            format!("{:.1} MB", rss as f64 / 1024.0),
            "< 64 MB",
            "20 MB",
        ),
        // Of which its own (heap, stacks) and the pages of its binary and libraries it maps:
        // those are shared and clean, the kernel drops them under pressure, and they move with
        // the binary's layout rather than with what the daemon keeps.
        Figure::value(
            "  of which its own (anonymous) / mapped files",
            format!("{:.1} MB / {:.1} MB", anon as f64 / 1024.0, file as f64 / 1024.0),
            "",
            "-",
        ),
    ]
}

/// (own, waited-for children) CPU clock ticks of a process.
fn cpu_ticks(pid: i32) -> (u64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let fields: Vec<&str> = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("").split_whitespace().collect();
    let n = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    // After the command name: state is field 0; utime, stime, cutime, cstime are 11..=14.
    (n(11) + n(12), n(13) + n(14))
}

fn rss_kib(pid: i32) -> u64 {
    status_kib(pid, "VmRSS:")
}

/// A memory figure of `/proc/PID/status` (`VmRSS:`, `VmHWM:`), in KiB.
pub fn status_kib(pid: i32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
