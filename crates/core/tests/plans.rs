//! Plans as simulations: each job is asked for from the branch the one before worked on; a
//! failure stops the plan; a resume runs the failed job again and the plan goes on.

mod support;

use bosun_core::{
    Effect, Input, JobId, JobWorkspace, Name, Nonce, Origin, Plan, PlanBranch, PlanJob, PlanState, WorkspaceKind,
};
use support::{shell_job, Sim};

fn plan() -> Plan {
    let job = |name: &str| PlanJob {
        name: name.into(),
        job: "build".into(),
        vars: Default::default(),
        using: vec![],
        branch: (name == "ui").then(|| "auth/ui".into()),
        job_id: None,
        target: None,
        source: None,
        done: false,
    };
    Plan {
        id: "p1".into(),
        name: "auth".into(),
        base: "main".into(),
        jobs: vec![job("schema"), job("api"), job("ui")],
        state: PlanState::Running,
        book: Default::default(),
        cwd: "/repo".into(),
    }
}

/// The one plan job asked for: its place, id and branch.
fn asked(effects: &[Effect]) -> Option<(usize, JobId, PlanBranch)> {
    let mut found = effects.iter().filter_map(|e| match e {
        Effect::Dispatch { origin: Origin::Plan(_, index), job, branch: Some(b), .. } => {
            Some((*index, job.clone(), b.clone()))
        }
        _ => None,
    });
    let one = found.next();
    assert!(found.next().is_none(), "one job at a time");
    one
}

/// The daemon makes the asked-for job on its branch (with `suffix` when taken), its worktree is
/// made, and its one step ends `ok`; returns what the end asks for.
fn run(sim: &mut Sim, (index, id, b): &(usize, JobId, PlanBranch), branch: &str, ok: bool) -> Vec<Effect> {
    let mut spec = shell_job(id.clone(), "build", None);
    spec.plan = Some(("p1".into(), *index));
    spec.workspace = Some(JobWorkspace {
        name: Name::derive("build"),
        nonce: Nonce::from_bits(*index as u64 + 100 * sim.state.jobs.len() as u64),
        workspaces_root: "/ws".into(),
        kind: WorkspaceKind::Worktree {
            repo: "/repo".into(),
            branch: branch.into(),
            base_ref: b.base.clone(),
            base: "abc".into(),
        },
        settings_from: None,
        pool: None,
    });
    sim.ok(Input::StartJob(Box::new(spec)));
    let ws = sim.state.jobs[id].workspace.clone().unwrap();
    sim.ok(Input::WorkspaceCreated { id: ws });
    sim.ok(Input::StepFinished { job: id.clone(), step: "fix".into(), attempt: 1, ok, detail: None })
}

#[test]
fn each_job_starts_from_the_branch_the_one_before_worked_on() {
    let mut sim = Sim::new();
    let first = asked(&sim.ok(Input::StartPlan(Box::new(plan())))).unwrap();
    assert_eq!(
        (first.0, first.2.base.as_str(), first.2.branch.as_str(), first.2.suffix),
        (0, "main", "feature/schema", true)
    );
    let second = asked(&run(&mut sim, &first, "feature/schema", true)).unwrap();
    assert_eq!((second.0, second.2.base.as_str(), second.2.branch.as_str()), (1, "feature/schema", "feature/api"));
    // The daemon found feature/api taken and made feature/api-2: the next job starts there.
    let third = asked(&run(&mut sim, &second, "feature/api-2", true)).unwrap();
    assert_eq!((third.2.base.as_str(), third.2.branch.as_str(), third.2.suffix), ("feature/api-2", "auth/ui", false));
    assert!(asked(&run(&mut sim, &third, "auth/ui", true)).is_none());
    assert_eq!(sim.state.plans["p1"].state, PlanState::Done);
}

#[test]
fn a_failure_stops_the_plan_and_a_resume_goes_on_from_there() {
    let mut sim = Sim::new();
    let first = asked(&sim.ok(Input::StartPlan(Box::new(plan())))).unwrap();
    let second = asked(&run(&mut sim, &first, "feature/schema", true)).unwrap();
    assert!(asked(&run(&mut sim, &second, "feature/api", false)).is_none(), "stopped");
    assert!(matches!(&sim.state.plans["p1"].state, PlanState::Failed { job, .. } if job == "api"));
    assert!(sim.feed(Input::ResumePlan { plan: "p9".into() }).is_err());

    let effects = sim.ok(Input::ResumePlan { plan: "p1".into() });
    assert!(effects.iter().any(|e| matches!(e, Effect::RunStep { job, .. } if *job == second.1)), "its job again");
    assert_eq!(sim.state.plans["p1"].state, PlanState::Running);
    let effects =
        sim.ok(Input::StepFinished { job: second.1.clone(), step: "fix".into(), attempt: 1, ok: true, detail: None });
    let third = asked(&effects).unwrap();
    assert_eq!(third.2.base, "feature/api");
    assert!(sim.feed(Input::ResumePlan { plan: "p1".into() }).is_err(), "a running plan is not resumed");
}

#[test]
fn a_job_that_cannot_be_made_stops_the_plan_and_is_asked_for_again_on_resume() {
    let mut sim = Sim::new();
    let first = asked(&sim.ok(Input::StartPlan(Box::new(plan())))).unwrap();
    let origin = Origin::Plan("p1".into(), 0);
    sim.ok(Input::DispatchFailed { origin, error: "job \"build\" needs var \"x\"".into() });
    assert!(matches!(&sim.state.plans["p1"].state, PlanState::Failed { reason, .. } if reason.contains("needs var")));
    let again = asked(&sim.ok(Input::ResumePlan { plan: "p1".into() })).unwrap();
    assert_eq!((again.0, again.2.base.as_str()), (0, "main"));
    assert_ne!(again.1, first.1, "a new job id");
}
