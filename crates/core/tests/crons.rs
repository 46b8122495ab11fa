//! Crons as simulations: a started cron starts its job at each turn, skips a turn while its last
//! job still runs, takes a turn missed while the daemon was down once, and stops when told.

mod support;

use bosun_core::{Cron, Effect, Input, JobId, Origin, Schedule, StepRun, TimerKind};
use support::{shell_job, Sim};

const MINUTE: u64 = 60_000;

fn cron(schedule: Schedule) -> Cron {
    Cron {
        name: "nightly".into(),
        schedule,
        job: "sweep".into(),
        running: false,
        book: bosun_core::JobBook { hash: "pinned".into(), jobs: Default::default() },
        cwd: "/repo".into(),
        next: None,
        fired: 0,
        last_job: None,
        last_started: None,
        error: None,
    }
}

fn turns(effects: &[Effect]) -> Vec<JobId> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Dispatch { origin: Origin::Cron(name), job, job_name, book, .. } => {
                assert_eq!((name.as_str(), job_name.as_str()), ("nightly", "sweep"));
                assert_eq!(book.hash, "pinned", "the job as lowered when the cron started");
                Some(job.clone())
            }
            _ => None,
        })
        .collect()
}

fn cron_timers(sim: &Sim) -> usize {
    sim.state.timers.values().filter(|t| matches!(t.kind, TimerKind::Cron { .. })).count()
}

/// The daemon makes the job and it starts; returns the step it runs.
fn start_job(sim: &mut Sim, job: &JobId) {
    let effects = sim.ok(Input::StartJob(Box::new(shell_job(job.clone(), "sweep", None))));
    assert!(effects.iter().any(|e| matches!(e, Effect::RunStep { run: StepRun::Shell(c), .. } if c == "sweep")));
}

fn finish_job(sim: &mut Sim, job: &JobId) {
    sim.ok(Input::StepFinished { job: job.clone(), step: "fix".into(), attempt: 1, ok: true, detail: None });
    assert!(sim.state.jobs[job].state.is_over());
}

#[test]
fn a_started_cron_starts_its_job_each_turn_and_skips_a_turn_while_it_still_runs() {
    let mut sim = Sim::new();
    assert!(turns(&sim.ok(Input::StartCron(Box::new(cron(Schedule::every(MINUTE).unwrap()))))).is_empty());
    assert!(turns(&sim.fire_due()).is_empty(), "not yet");
    sim.advance(MINUTE);
    let first = turns(&sim.fire_due());
    assert_eq!(first.len(), 1, "its turn");
    start_job(&mut sim, &first[0]);
    sim.advance(MINUTE);
    assert!(turns(&sim.fire_due()).is_empty(), "the last job still runs: the turn is skipped");
    assert_eq!(sim.state.crons["nightly"].fired, 2);
    finish_job(&mut sim, &first[0]);
    sim.advance(MINUTE);
    let second = turns(&sim.fire_due());
    assert_eq!(second.len(), 1);
    assert_ne!(second, first, "a new job for a new turn");
    assert_eq!(cron_timers(&sim), 1, "one timer: the next turn");
}

#[test]
fn turns_missed_while_the_daemon_was_down_are_taken_once_and_the_schedule_goes_on_from_now() {
    let mut sim = Sim::new();
    sim.ok(Input::StartCron(Box::new(cron(Schedule::every(MINUTE).unwrap()))));
    sim.advance(10 * MINUTE);
    assert_eq!(turns(&sim.fire_due()).len(), 1, "ten turns missed, one taken");
    let next = sim.state.crons["nightly"].next.unwrap();
    assert!(next > sim.clock && next.millis_since(sim.clock) <= MINUTE, "next turn is within a minute from now");
}

#[test]
fn a_cron_expression_fires_at_the_minute_it_names() {
    let mut sim = Sim::new();
    sim.ok(Input::StartCron(Box::new(cron(Schedule::expr("*/5 * * * *").unwrap()))));
    let next = sim.state.crons["nightly"].next.unwrap();
    assert_eq!(next.as_millis() % (5 * MINUTE), 0, "on a five-minute mark");
    sim.advance(next.millis_since(sim.clock));
    assert_eq!(turns(&sim.fire_due()).len(), 1);
    assert_eq!(sim.state.crons["nightly"].next.unwrap().millis_since(next), 5 * MINUTE);
}

#[test]
fn a_stopped_cron_starts_nothing_and_a_job_that_cannot_be_made_is_recorded() {
    let mut sim = Sim::new();
    sim.ok(Input::StartCron(Box::new(cron(Schedule::every(MINUTE).unwrap()))));
    sim.ok(Input::StartCron(Box::new(cron(Schedule::every(MINUTE).unwrap()))));
    assert_eq!(cron_timers(&sim), 1, "started again: still one timer");
    sim.advance(MINUTE);
    let job = turns(&sim.fire_due());
    sim.ok(Input::DispatchFailed { origin: Origin::Cron("nightly".into()), error: "no job \"sweep\"".into() });
    assert!(sim.state.crons["nightly"].error.as_deref().is_some_and(|e| e.contains("sweep")), "{job:?}");
    sim.advance(MINUTE);
    assert_eq!(turns(&sim.fire_due()).len(), 1, "the next turn comes all the same");
    sim.ok(Input::StopCron { name: "nightly".into() });
    assert_eq!(cron_timers(&sim), 0);
    sim.advance(10 * MINUTE);
    assert!(turns(&sim.fire_due()).is_empty());
    assert!(sim.feed(Input::StopCron { name: "nightly".into() }).is_err(), "already stopped");
    assert!(sim.feed(Input::StopCron { name: "other".into() }).is_err(), "no such cron");
    let never = cron(Schedule::expr("0 0 31 2 *").unwrap());
    assert!(sim.feed(Input::StartCron(Box::new(never))).is_err(), "31 February never comes");
}

#[test]
fn a_turn_waits_for_a_job_still_being_made_but_not_for_one_that_never_comes() {
    let mut sim = Sim::new();
    sim.ok(Input::StartCron(Box::new(cron(Schedule::every(MINUTE).unwrap()))));
    sim.advance(MINUTE);
    assert_eq!(turns(&sim.fire_due()).len(), 1);
    sim.advance(MINUTE);
    assert!(turns(&sim.fire_due()).is_empty(), "its job is still being made: skipped");
    sim.advance(10 * MINUTE);
    assert_eq!(turns(&sim.fire_due()).len(), 1, "that job never came (bosun died making it): a new one");
}

#[test]
fn a_cron_an_older_bosun_recorded_with_runbook_text_reads_with_no_jobs() {
    let mut old = serde_json::to_value(cron(Schedule::every(MINUTE).unwrap())).unwrap();
    let fields = old.as_object_mut().unwrap();
    fields.remove("book");
    fields.insert("sources".into(), serde_json::json!([["/repo/.bosun/runbooks/a.hcl", "job \"sweep\" {}"]]));
    let read: Cron = serde_json::from_value(old).unwrap();
    assert!(read.book.jobs.is_empty() && read.book.hash.is_empty(), "making its job says to start it again");
}
