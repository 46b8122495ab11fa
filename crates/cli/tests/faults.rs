//! The fault harness in the suite: ten jobs of claudeless agents that are nudged, restarted
//! and finish, then run a shell step, while the daemon is killed with SIGKILL thirty times. `scripts/soak --kills N
//! --seed S` runs the same harness longer.

use bosun_testkit::faults::{run, Plan};

#[test]
fn ten_jobs_come_through_thirty_sigkills_of_the_daemon_with_nothing_lost_doubled_or_left_behind() {
    let seed = std::env::var("BOSUN_FAULT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(20_261_122);
    let plan = Plan { jobs: 10, kills: 30, seed };
    match run(env!("CARGO_BIN_EXE_bosun").as_ref(), &plan) {
        Ok(r) => {
            let reached = r.schedule.len() - r.unreached;
            println!(
                "seed {seed}: {} kills ({reached} at their crash point or moment) in {:?}",
                r.schedule.len(),
                r.elapsed
            );
            println!(
                "{} events, {} launches, {} nudges typed, {} messages cut off",
                r.events, r.spawns, r.nudges, r.cut_off
            );
        }
        Err(e) => panic!("seed {seed}: {e}\nrerun with BOSUN_FAULT_SEED={seed}"),
    }
}
