//! Issue 2's figures: how fast an agent starts, is known, and is listed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bosun_testkit::bosun::Bosun;
use bosun_testkit::repo::TempRepo;

use crate::{now_ns, show, wait, Figure};

const STARTS: usize = 20;
const RECORDED: usize = 200;
const LISTINGS: usize = 50;

pub fn figures(bin: &Path, claudeless: &Path, scenario: &Path) -> Vec<Figure> {
    let starts = measure_starts(bin, claudeless, scenario);
    let listing = measure_listing(bin);
    vec![
        Figure::new("agent process running after `bosun agent start` (n=20)", starts.running, "< 50 ms", "34 ms"),
        Figure::new("state known after `bosun agent start` (n=20)", starts.known, "< 200 ms", "5.75 s"),
        Figure::new("`bosun agent start` returns, start durable (n=20)", starts.acked, "< 100 ms", "509 ms"),
        Figure::new(
            format!("`bosun ls --json`, {RECORDED} agents recorded (n={LISTINGS})"),
            listing,
            "< 5 ms",
            "4-6 ms",
        ),
    ]
}

struct Starts {
    acked: Vec<Duration>,
    running: Vec<Duration>,
    known: Vec<Duration>,
}

/// Starts 20 claudeless agents one after another on a running daemon. Each agent's command
/// first records the time it began (then execs claudeless), so "running" is measured by the
/// agent process itself; "known" is when the daemon first reports the agent Running.
fn measure_starts(bin: &Path, claudeless: &Path, scenario: &Path) -> Starts {
    let bosun = Bosun::new(bin);
    let repo = TempRepo::new();
    bosun.ok(repo.path(), &["daemon", "start"]);
    let mut out = Starts { acked: vec![], running: vec![], known: vec![] };
    let script = format!(
        "date +%s%N > .bosun-bench-started; exec '{}' --scenario '{}'",
        claudeless.display(),
        scenario.display()
    );
    for _ in 0..STARTS {
        let t0 = Instant::now();
        let wall0 = now_ns();
        let output = bosun
            .command(repo.path(), &["agent", "start", "--json", "--", "sh", "-c", &script])
            .output()
            .expect("start");
        let acked = t0.elapsed();
        assert!(output.status.success(), "start failed: {}", String::from_utf8_lossy(&output.stderr));
        let started: serde_json::Value = serde_json::from_slice(&output.stdout).expect("start --json");
        let id = started["agent"].as_str().expect("id").to_owned();
        let marker = PathBuf::from(started["path"].as_str().expect("path")).join(".bosun-bench-started");
        let known = wait(|| {
            show(bosun.state_dir(), &id).filter(|a| a.state != bosun_core::SessionState::Starting).map(|_| t0.elapsed())
        });
        let began: u128 = wait(|| std::fs::read_to_string(&marker).ok()?.trim().parse().ok());
        out.acked.push(acked);
        out.known.push(known);
        out.running.push(Duration::from_nanos(began.saturating_sub(wall0) as u64));
        bosun.ok(repo.path(), &["kill", &id]);
    }
    out
}

/// Records 200 agents (each runs `true` in its own worktree and completes), then times
/// `bosun ls --json` end to end, process start included.
fn measure_listing(bin: &Path) -> Vec<Duration> {
    let bosun = Bosun::new(bin);
    let repo = TempRepo::new();
    bosun.ok(repo.path(), &["daemon", "start"]);
    for _ in 0..RECORDED {
        bosun.ok(repo.path(), &["agent", "start", "--", "true"]);
    }
    wait(|| (bosun.list().agents.iter().filter(|a| a.state.is_dead()).count() == RECORDED).then_some(()));
    (0..LISTINGS)
        .map(|_| {
            let t0 = Instant::now();
            let out = bosun.command(repo.path(), &["ls", "--json"]).output().expect("ls");
            let elapsed = t0.elapsed();
            assert!(out.status.success() && out.stdout.len() > RECORDED * 100, "ls --json lists them all");
            elapsed
        })
        .collect()
}
