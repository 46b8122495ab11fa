//! `bosun-bench`: measures bosun's start-up path and listing against real git, tmux and
//! claudeless, and prints each figure beside its target and a peer's (oj's) figure measured on
//! the same kind of machine. Run it with `scripts/bench` (which builds bosun in release mode).

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bosun_testkit::bosun::Bosun;
use bosun_testkit::repo::TempRepo;
use bosun_wire::{read_frame, write_frame, Envelope, Request, Response};

const STARTS: usize = 20;
const RECORDED: usize = 200;
const LISTINGS: usize = 50;

fn main() {
    let bin = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(sibling_bosun);
    let bin = bin.canonicalize().unwrap_or_else(|_| {
        panic!("no bosun binary at {}: build it with `cargo build --release -p bosun-cli`", bin.display())
    });
    let claudeless = bosun_testkit::tools::claudeless();
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios/chat.toml");
    let scenario = scenario.canonicalize().expect("chat scenario");
    println!("bosun-bench: {} with {}", bin.display(), claudeless.display());

    let starts = measure_starts(&bin, &claudeless, &scenario);
    let listing = measure_listing(&bin);

    println!();
    println!("{:<58} {:>9} {:>9} {:>9}  {:<10} peer (oj)", "figure", "median", "p90", "max", "target");
    row("agent process running after `bosun agent start` (n=20)", &starts.running, "< 50 ms", "34 ms");
    row("state known (Running) after `bosun agent start` (n=20)", &starts.known, "< 200 ms", "5.75 s");
    row("`bosun agent start` returns, start durable (n=20)", &starts.acked, "< 100 ms", "509 ms");
    row(&format!("`bosun ls --json` with {RECORDED} agents recorded (n={LISTINGS})"), &listing, "< 5 ms", "4-6 ms");
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
        let known = wait(|| running(bosun.state_dir(), &id).then(|| t0.elapsed()));
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

/// Whether the daemon reports the agent Running (or later), asked over its socket directly so
/// the poll itself costs well under a millisecond.
fn running(state: &Path, id: &str) -> bool {
    let Ok(mut s) = UnixStream::connect(state.join("bosun.sock")) else {
        return false;
    };
    let request = Envelope { version: bosun_wire::VERSION.into(), request: Request::Show { agent: id.into() } };
    if write_frame(&mut s, &request).is_err() {
        return false;
    }
    match read_frame::<_, Response>(&mut s) {
        Ok(Response::Agent(d)) => d.agent.state != bosun_core::SessionState::Starting,
        _ => false,
    }
}

fn wait<T>(mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(t) = f() {
            return t;
        }
        assert!(Instant::now() < deadline, "timed out");
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn row(name: &str, samples: &[Duration], target: &str, peer: &str) {
    let mut s = samples.to_vec();
    s.sort();
    let pick = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
    println!(
        "{name:<58} {:>9} {:>9} {:>9}  {target:<10} {peer}",
        ms(pick(0.5)),
        ms(pick(0.9)),
        ms(*s.last().expect("samples"))
    );
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn now_ns() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

fn sibling_bosun() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.with_file_name("bosun")
}
