//! Crons through the CLI: a started cron runs its job each turn, goes on after a daemon crash,
//! stops when told; `cron once` runs the job now; bad names and runs are refused.

mod support;

use bosun_testkit::poll::wait_for;
use support::*;

const RUNBOOK: &str = r#"
cron "tick" {
  every = "1s"
  run   = { job = "sweep" }
}

cron "direct" {
  schedule = "0 3 * * *"
  run      = "echo not a job > direct.txt"
}

job "sweep" {
  step "sweep" {
    run = "echo turn >> turns.log"
  }
}
"#;

fn tick(bosun: &Bosun, repo: &TempRepo) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["cron", "ls", "--json"])).unwrap();
    v.as_array().unwrap().iter().find(|c| c["name"] == "tick").cloned().unwrap()
}

fn turns(repo: &TempRepo) -> usize {
    std::fs::read_to_string(repo.path().join("turns.log")).map_or(0, |t| t.lines().count())
}

#[test]
fn a_started_cron_runs_its_job_each_turn_goes_on_after_a_crash_and_stops() {
    let bosun = bosun();
    let repo = repo_with_runbook("crons.hcl", RUNBOOK);
    let out = bosun.ok(repo.path(), &["cron", "ls"]);
    assert!(out.contains("no crons started"), "{out}");
    let out = bosun.ok(repo.path(), &["cron", "start", "tick"]);
    assert!(out.contains("cron tick started: next turn in"), "{out}");
    let two = wait_for(PATIENCE, || (turns(&repo) >= 2).then_some(()));
    assert!(two.is_some(), "{}\n{}", tick(&bosun, &repo), bosun.log());
    let last = tick(&bosun, &repo)["last_job"].as_str().unwrap().to_owned();
    let shown = bosun.ok(repo.path(), &["job", "show", &last]);
    assert!(shown.contains("sweep"), "{shown}");

    bosun.kill_daemon_hard();
    let before = turns(&repo);
    assert_eq!(tick(&bosun, &repo)["running"], true, "still started after the crash");
    let more = wait_for(PATIENCE, || (turns(&repo) >= before + 2).then_some(()));
    assert!(more.is_some(), "turns go on after the restart\n{}", bosun.log());

    bosun.ok(repo.path(), &["cron", "stop", "tick"]);
    let stopped = tick(&bosun, &repo);
    assert_eq!((stopped["running"].clone(), stopped["next"].clone()), (false.into(), serde_json::Value::Null));
    let err = bosun.fails(repo.path(), &["cron", "stop", "tick"]);
    assert!(err.contains("already stopped"), "{err}");
}

#[test]
fn cron_once_runs_the_job_now_and_bad_crons_are_refused() {
    let bosun = bosun();
    let repo = repo_with_runbook("crons.hcl", RUNBOOK);
    let out = bosun.ok(repo.path(), &["cron", "once", "tick", "--json"]);
    let job: serde_json::Value = serde_json::from_str(&out).unwrap();
    let id = job["job"].as_str().unwrap();
    bosun.ok(repo.path(), &["job", "wait", id]);
    assert_eq!(turns(&repo), 1, "the job ran once");

    let err = bosun.fails(repo.path(), &["cron", "start", "nope"]);
    assert!(err.contains("no cron \"nope\"") && err.contains("tick"), "{err}");
    let out = bosun.ok(repo.path(), &["cron", "once", "direct", "--json"]);
    let direct: serde_json::Value = serde_json::from_str(&out).unwrap();
    bosun.ok(repo.path(), &["job", "wait", direct["job"].as_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(repo.path().join("direct.txt")).unwrap(), "not a job\n", "a shell cron runs");
    let err = bosun.fails(repo.path(), &["cron", "stop", "tick"]);
    assert!(err.contains("no cron \"tick\""), "never started: {err}");
    let listed: serde_json::Value = serde_json::from_str(&bosun.ok(repo.path(), &["cron", "ls", "--json"])).unwrap();
    assert_eq!(listed, serde_json::json!([]), "nothing was recorded");
}

#[test]
fn a_schedule_that_is_not_a_cron_expression_is_a_runbook_error_with_its_place() {
    let bosun = bosun();
    let repo = repo_with_runbook("crons.hcl", RUNBOOK);
    let path = repo.path().join(".bosun/runbooks/crons.hcl");
    std::fs::write(&path, RUNBOOK.replace("0 3 * * *", "0 25 * * *")).unwrap();
    let err = bosun.fails(repo.path(), &["runbook", "check"]);
    assert!(err.contains("crons.hcl:") && err.contains("\"0 25 * * *\" is not a five-field cron expression"), "{err}");
}
