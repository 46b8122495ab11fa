//! `bosun-soak`: the fault harness of the test suite, run longer by hand —
//! `scripts/soak --kills N --seed S [--jobs J]`. Prints each kill as it lands and, at the end,
//! what held; exits non-zero with the broken promise and the seed that shows it.

use std::path::PathBuf;
use std::process::ExitCode;

use bosun_testkit::faults::{run, Plan};

const USAGE: &str = "usage: bosun-soak BOSUN_BINARY [--kills N] [--seed S] [--jobs J]
  --kills N   SIGKILLs that must land while the jobs run [default: 200]
  --seed S    draws the kills; the same seed gives the same schedule [default: the time]
  --jobs J    jobs of claudeless agents, nudged, restarted and done, one every few kills
              [default: a third of the kills, at least 10]";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(bin) = args.next().and_then(|p| PathBuf::from(p).canonicalize().ok()).filter(|p| p.is_file()) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mut plan = Plan { jobs: 0, kills: 200, seed };
    while let Some(flag) = args.next() {
        let value = args.next().and_then(|v| v.parse::<u64>().ok());
        match (flag.as_str(), value) {
            ("--kills", Some(n)) => plan.kills = n as usize,
            ("--seed", Some(s)) => plan.seed = s,
            ("--jobs", Some(j)) if j > 0 => plan.jobs = j as usize,
            _ => {
                eprintln!("bosun-soak: {flag:?} needs a number\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    if plan.jobs == 0 {
        plan.jobs = (plan.kills / 3).max(10);
    }
    println!("bosun-soak: {} jobs, {} kills, seed {}", plan.jobs, plan.kills, plan.seed);
    match run(&bin, &plan) {
        Ok(r) => {
            println!(
                "held: {} kills ({} at their crash point or moment) in {:.1}s; {} events, {} launches, \
                 {} nudges typed, {} messages cut off; nothing lost, doubled or left behind",
                r.schedule.len(),
                r.schedule.len() - r.unreached,
                r.elapsed.as_secs_f64(),
                r.events,
                r.spawns,
                r.nudges,
                r.cut_off
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "BROKEN (seed {}): {e}\nrerun with: scripts/soak --kills {} --seed {}",
                plan.seed, plan.kills, plan.seed
            );
            ExitCode::FAILURE
        }
    }
}
