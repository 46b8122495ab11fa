//! The fault harness in the suite: ten jobs of claudeless agents that are nudged, restarted
//! and finish, then run a shell step, while the daemon is killed with SIGKILL thirty times. `scripts/soak --kills N
//! --seed S` runs the same harness longer. And the sequences `bosun merge`, `fork` and `pr` set
//! off, the daemon killed at each of their steps in turn.

use bosun_testkit::faults::sequences::{crash_at, Sequence};
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

/// Runs `seq` once per crash point, its daemon killed there; every broken promise is told.
fn every_step(seq: Sequence) {
    let bin: &std::path::Path = env!("CARGO_BIN_EXE_bosun").as_ref();
    let broken: Vec<String> = seq
        .points()
        .iter()
        .filter_map(|point| crash_at(bin, seq, point).err().map(|e| format!("--- killed at {point}: {e}")))
        .collect();
    assert!(
        broken.is_empty(),
        "{seq:?}, {} of {} crash points:\n{}",
        broken.len(),
        seq.points().len(),
        broken.join("\n")
    );
}

#[test]
fn a_merge_killed_at_every_step_ends_merged_once_its_agent_gone_its_worktree_and_branch_removed() {
    every_step(Sequence::Merge);
}

#[test]
fn a_pool_merge_killed_at_every_step_ends_with_its_slot_released_and_reset() {
    every_step(Sequence::PoolMerge);
}

#[test]
fn a_fork_killed_at_every_step_ends_with_one_fork_launched_once_in_its_own_worktree_with_the_conversation() {
    every_step(Sequence::Fork);
}

#[test]
fn a_pr_killed_at_every_step_ends_with_one_pull_request_opened_and_recorded() {
    every_step(Sequence::Pr);
}
