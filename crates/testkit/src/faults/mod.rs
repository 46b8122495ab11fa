//! The fault harness: a seeded workload of jobs whose claudeless agents are nudged, restarted
//! and finish, then run a shell step, while bosun's daemon is killed with SIGKILL again and
//! again — at its own crash points (`BOSUN_FAULT`: just before an effect runs, or just after,
//! before its outcome is recorded) and at random moments. Then the checks: no acknowledged fact
//! lost, every job ends as it would have without the kills, no agent started twice, no shell
//! step run twice, no message typed twice, nothing left behind. The same seed gives the same
//! schedule of kills.

mod checks;
mod facts;
mod harness;
pub mod sequences;
mod stage;

use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

use facts::Facts;
use harness::Harness;

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub jobs: usize,
    pub kills: usize,
    pub seed: u64,
}

/// How one kill came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kill {
    /// The daemon killed itself as its nth effect was about to run.
    Before(u64),
    /// The daemon killed itself once its nth effect had run, before recording the outcome.
    After(u64),
    /// The harness killed the daemon this long after starting it.
    Timed(Duration),
}

impl fmt::Display for Kill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Before(n) => write!(f, "before effect {n}"),
            Self::After(n) => write!(f, "after effect {n}"),
            Self::Timed(d) => write!(f, "at {} ms", d.as_millis()),
        }
    }
}

/// What a run did.
#[derive(Debug)]
pub struct Report {
    pub schedule: Vec<Kill>,
    /// Crash points the daemon never reached (the workload was quiet): killed from outside.
    pub unreached: usize,
    pub elapsed: Duration,
    pub events: u64,
    pub spawns: usize,
    pub nudges: usize,
    /// Messages bosun gave up on because a crash cut off their typing (never typed twice).
    pub cut_off: usize,
}

/// How long a daemon killed from outside may take to let go of its lock.
const GONE: Duration = Duration::from_secs(10);
/// How long the jobs get to finish once the kills are over.
const FINISH: Duration = Duration::from_secs(240);
/// How long a crash point may take to be reached before the harness kills from outside (the
/// workload is quiet then): short, so that the last kills land while the last job still runs.
const REACH: Duration = Duration::from_secs(1);

/// How long each of the agents' turns takes: long enough for the kills to land while they work.
const TURN_MS: u64 = 2_000;

/// The agents' `on_idle` chain, step by step: every message differs, so each can be counted.
const CHAIN: [(&str, &str); 4] =
    [("nudge", "status one"), ("nudge", "status two"), ("resume", "ping again"), ("nudge", "status three")];

/// The kills a seed draws, in order.
pub fn kills(seed: u64) -> impl Iterator<Item = Kill> {
    let mut rng = fastrand::Rng::with_seed(seed);
    std::iter::from_fn(move || {
        Some(match rng.u8(0..3) {
            0 => Kill::Before(rng.u64(1..=20)),
            1 => Kill::After(rng.u64(1..=20)),
            _ => Kill::Timed(Duration::from_millis(rng.u64(20..=400))),
        })
    })
}

/// Runs the workload under the kills; `Err` says which promise was broken.
pub fn run(bin: &Path, plan: &Plan) -> Result<Report, String> {
    let started = Instant::now();
    let h = Harness::new(bin)?;
    let mut seen = Facts::default();
    let mut jobs = Vec::new();
    // The jobs come one every few kills, so that the last of them still runs when the last
    // kills land, however fast or slow the machine.
    let every = (plan.kills / plan.jobs.max(1)).max(1);
    let (mut schedule, mut unreached) = (Vec::new(), 0);
    let mut draw = kills(plan.seed);
    while schedule.len() < plan.kills {
        if schedule.len() % every == 0 && jobs.len() < plan.jobs {
            h.bosun.ok(h.repo.path(), &["daemon", "start"]);
            jobs.push(h.submit(jobs.len())?);
            let now = h.facts().ok_or("the daemon does not answer")?;
            seen.check_kept(&now).map_err(|e| format!("after {} kills: {e}", schedule.len()))?;
            seen = now;
            h.bosun.ok(h.repo.path(), &["daemon", "stop"]);
        }
        let kill = draw.next().ok_or("no more kills")?;
        schedule.push(kill);
        let fault = match kill {
            Kill::Before(n) => Some(format!("before:{n}")),
            Kill::After(n) => Some(format!("after:{n}")),
            Kill::Timed(_) => None,
        };
        h.start_daemon(fault.as_deref());
        if let Some(now) = h.facts() {
            seen.check_kept(&now).map_err(|e| format!("after {} kills: {e}", schedule.len() - 1))?;
            seen = now;
        }
        if jobs.len() == plan.jobs && seen.jobs.values().all(|over| *over) {
            return Err(format!(
                "the jobs ended after {} of the {} kills: make the workload longer\n{}",
                schedule.len() - 1,
                plan.kills,
                h.told()
            ));
        }
        let reached = match kill {
            Kill::Timed(after) => {
                std::thread::sleep(after);
                if let Some(now) = h.facts() {
                    seen = now;
                }
                true
            }
            _ => h.wait_daemon_gone(REACH),
        };
        if !reached {
            unreached += 1;
        }
        let label = if reached { "" } else { " (not reached: killed from outside)" };
        eprintln!("{:>6.1}s kill {:>2}: {kill}{label}", started.elapsed().as_secs_f64(), schedule.len());
        h.kill_daemon();
    }
    h.start_daemon(None);
    let now = h.facts().ok_or("the daemon does not answer after the last kill")?;
    seen.check_kept(&now).map_err(|e| format!("after the last kill ({:?}): {e}", schedule.last()))?;
    let report = h.check_end(&jobs, schedule, unreached)?;
    Ok(Report { elapsed: started.elapsed(), ..report })
}
