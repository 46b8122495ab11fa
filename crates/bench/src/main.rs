//! `bosun-bench`: measures bosun against real git, tmux and claudeless, and prints each figure
//! beside its target and a peer's (oj's) figure measured on the same kind of machine. Run it
//! with `scripts/bench [start|detect|nudge|idle|store|clients|gemini|pi|opencode|hostile|pool|dash|host|docker|k8s|plan|limits|window] …` (which builds bosun in release mode first).

mod budget;
mod clients;
mod dash;
mod docker;
mod host;
mod hostile;
mod k8s;
mod limits;
mod plan;
mod pool;
mod start;
mod store;
mod supervise;
mod window;

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bosun_core::Agent;
use bosun_wire::{read_frame, write_frame, Envelope, Request, Response};

/// The CPU processes `pids` use together over `span`, in percent of one core (from their user
/// and system ticks in `/proc`).
pub fn cpu_percent(pids: &[String], span: Duration) -> f64 {
    let ticks = || -> u64 {
        pids.iter()
            .map(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or_default().split_whitespace().collect();
                fields.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
                    + fields.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
            })
            .sum()
    };
    let (t0, c0) = (Instant::now(), ticks());
    std::thread::sleep(span);
    let used = ticks().saturating_sub(c0) as f64 / 100.0;
    used / t0.elapsed().as_secs_f64() * 100.0
}

/// One measured figure.
pub struct Figure {
    name: String,
    samples: Vec<Duration>,
    target: &'static str,
    peer: &'static str,
    /// Printed as a plain value rather than as latency quantiles.
    value: Option<String>,
}

impl Figure {
    pub fn new(name: impl Into<String>, samples: Vec<Duration>, target: &'static str, peer: &'static str) -> Self {
        Self { name: name.into(), samples, target, peer, value: None }
    }

    pub fn value(name: impl Into<String>, value: String, target: &'static str, peer: &'static str) -> Self {
        Self { name: name.into(), samples: Vec::new(), target, peer, value: Some(value) }
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let bin = match args.first() {
        Some(a) if Path::new(a).is_file() => PathBuf::from(args.remove(0)),
        _ => sibling_bosun(),
    };
    let bin = bin.canonicalize().unwrap_or_else(|_| {
        panic!("no bosun binary at {}: build it with `cargo build --release -p bosun-cli`", bin.display())
    });
    let which: Vec<&str> = if args.is_empty() {
        vec!["start", "detect", "nudge", "idle"]
    } else {
        args.iter().map(String::as_str).collect()
    };
    let claudeless = bosun_testkit::tools::claudeless();
    let chat = scenario("chat");
    println!("bosun-bench: {} with {}", bin.display(), claudeless.display());
    let mut figures = Vec::new();
    for w in which {
        match w {
            "start" => figures.extend(start::figures(&bin, &claudeless, &chat)),
            "detect" => figures.extend(supervise::detection(&bin, &claudeless, &chat)),
            "nudge" => figures.extend(supervise::nudges(&bin, &claudeless, &chat)),
            "idle" => figures.extend(supervise::idle_agents(&bin, &claudeless, &chat)),
            "store" => figures.extend(store::figures()),
            "clients" => figures.extend(clients::figures(&bin)),
            "gemini" => figures.extend(clients::gemini(&bin)),
            "pi" => figures.extend(clients::pi(&bin)),
            "opencode" => figures.extend(clients::opencode(&bin)),
            "hostile" => figures.extend(hostile::figures(&bin, &claudeless, &chat)),
            "pool" => figures.extend(pool::figures(&bin)),
            "dash" => figures.extend(dash::figures(&bin)),
            "host" => figures.extend(host::figures(&bin)),
            "docker" => figures.extend(docker::figures(&bin)),
            "k8s" => figures.extend(k8s::figures(&bin)),
            "plan" => figures.extend(plan::figures(&bin, &claudeless)),
            "budget" => figures.extend(budget::figures(&bin)),
            "limits" => {
                figures.extend(limits::figures(&bin));
                figures.extend(window::figures(&bin));
            }
            "window" => figures.extend(window::figures(&bin)),
            other => {
                panic!("unknown benchmark {other:?}: start, detect, nudge, idle, store, clients, gemini, pi, opencode, hostile, pool, dash, host, docker, k8s, plan, budget, limits or window")
            }
        }
    }
    println!();
    println!("{:<62} {:>9} {:>9} {:>9}  {:<12} peer (oj)", "figure", "median", "p99", "max", "target");
    for f in &figures {
        match &f.value {
            Some(v) => println!("{:<62} {v:>31}  {:<12} {}", f.name, f.target, f.peer),
            None => {
                let mut s = f.samples.clone();
                s.sort();
                let pick = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
                println!(
                    "{:<62} {:>9} {:>9} {:>9}  {:<12} {}",
                    f.name,
                    ms(pick(0.5)),
                    ms(pick(0.99)),
                    ms(*s.last().expect("samples")),
                    f.target,
                    f.peer
                );
            }
        }
    }
}

/// The agent as the daemon knows it, asked over its socket directly so a poll costs well under
/// a millisecond.
pub fn show(state: &Path, id: &str) -> Option<Agent> {
    let mut s = UnixStream::connect(state.join("run/bosun.sock")).ok()?;
    let request =
        Envelope { version: bosun_wire::VERSION.into(), request: Request::Show { agent: id.into() }, id: None };
    write_frame(&mut s, &request).ok()?;
    match read_frame::<_, Response>(&mut s).ok()? {
        Response::Agent(d) => Some(d.agent),
        _ => None,
    }
}

/// Polls `f` every 200 µs until it gives a value; panics after `secs` seconds.
pub fn wait_secs<T>(secs: u64, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(t) = f() {
            return t;
        }
        assert!(Instant::now() < deadline, "timed out");
        std::thread::sleep(Duration::from_micros(200));
    }
}

pub fn wait<T>(f: impl FnMut() -> Option<T>) -> T {
    wait_secs(30, f)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

pub fn now_ns() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

pub fn scenario(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../examples/scenarios/{name}.toml"));
    p.canonicalize().expect("scenario")
}

fn sibling_bosun() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    exe.with_file_name("bosun")
}
