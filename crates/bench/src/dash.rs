//! Issue 12's figures, with `bosun dash` running in a tmux server of the bench's own beside 50
//! agents: a new agent to its row on the dashboard, an agent's state change to its row, a key
//! typed in the workspace view to its echo in the panel, and the dashboard's CPU while nothing
//! happens; and the time to draw a frame of 100 agents (the dashboard's own unit benchmark,
//! built and run in release mode).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use bosun_testkit::bosun::Bosun;
use bosun_testkit::repo::TempRepo;
use bosun_testkit::screen::Screen;

use crate::{wait_secs, Figure};

const AGENTS: usize = 50;
const NEW: usize = 10;
const KEYS: usize = 20;
const IDLE: Duration = Duration::from_secs(20);

pub fn figures(bin: &Path) -> Vec<Figure> {
    let bosun = Bosun::new(bin);
    let repo = TempRepo::new();
    let echo = ["--", "sh", "-c", "while read l; do echo \"got: $l\"; done"];
    for n in 0..AGENTS {
        let name = format!("idle{n}");
        let mut args = vec!["--name", name.as_str()];
        args.extend_from_slice(&echo);
        bosun.start(repo.path(), &args);
    }
    wait_secs(120, || {
        (bosun.list().agents.iter().filter(|a| a.state.label() == "running").count() == AGENTS).then_some(())
    });
    // `exec`: the pane's process is the dashboard itself, for its CPU.
    let screen = Screen::bosun(&bosun, "dash", (200, 50), "");
    screen.shows(&format!("idle{}", AGENTS - 1));
    let cpu = cpu_while_idle(&screen);
    let mut shown = Vec::new();
    for n in 0..NEW {
        let name = format!("probe{n}");
        let mut args = vec!["--name", name.as_str()];
        args.extend_from_slice(&echo);
        bosun.start(repo.path(), &args);
        // The start returned: the agent is recorded. Until the dashboard shows it:
        let t0 = Instant::now();
        screen.shows(&name);
        shown.push(t0.elapsed());
    }
    // Killed: the kill returned once its end was recorded. Until its row says so:
    let mut changed = Vec::new();
    for n in 0..NEW {
        // The newest of the first ones: their rows are on screen, below the probes'.
        let name = format!("idle{}", AGENTS - 1 - n);
        bosun.ok(repo.path(), &["kill", &name]);
        let t0 = Instant::now();
        screen.until(|t| t.lines().any(|l| l.contains(&format!(" {name} ")) && l.contains("dead(killed)")));
        changed.push(t0.elapsed());
    }
    // The newest agent is on top: open its workspace view and type into it.
    screen.keys(&["w"]);
    screen.shows("Ctrl+\\:sidebar");
    let mut echoed = Vec::new();
    let mut typed = String::new();
    for n in 0..KEYS {
        let c = char::from(b'a' + (n % 26) as u8);
        typed.push(c);
        let t0 = Instant::now();
        screen.keys(&["-l", &c.to_string()]);
        screen.shows(&typed);
        echoed.push(t0.elapsed());
    }
    vec![
        Figure::new(format!("new agent to its row in `bosun dash`, {AGENTS} agents (n={NEW})"), shown, "< 100 ms", "-"),
        Figure::new(format!("agent's state change to its row, {AGENTS} agents (n={NEW})"), changed, "< 100 ms", "-"),
        Figure::new(format!("key typed in the workspace view to its echo (n={KEYS})"), echoed, "< 50 ms", "-"),
        Figure::value(
            format!("dashboard CPU, {AGENTS} agents, nothing happening, {} s", IDLE.as_secs()),
            format!("{cpu:.2} % of a core"),
            "< 2 %",
            "-",
        ),
        Figure::new("frame drawn, 100 agents in the list, 200×50 (n=500)", frames("tasks"), "< 5 ms", "-"),
        Figure::new("frame drawn, workspace view, 200×50 (n=500)", frames("workspace"), "-", "-"),
    ]
}

/// The dashboard's frame times for `view`, from its unit benchmark (`frame_render_samples`).
fn frames(view: &str) -> Vec<Duration> {
    let out = Command::new("cargo")
        .args(["test", "--release", "--quiet", "-p", "bosun-cli", "--bin", "bosun", "frame_render_samples"])
        .args(["--", "--ignored", "--nocapture"])
        .output()
        .expect("cargo runs the dashboard's frame benchmark");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("frame_us ")?.strip_prefix(view)?.trim().parse().ok())
        .map(Duration::from_micros)
        .collect()
}

/// The dashboard process's CPU over `IDLE`, in percent of one core.
fn cpu_while_idle(screen: &Screen) -> f64 {
    crate::cpu_percent(&[screen.format("#{pane_pid}")], IDLE)
}
