//! Plans as simulations: each job is asked for from the branch of the job it uses; jobs whose
//! `using` are done start at once, as many as the plan's concurrency lets; a job that uses
//! several starts from their branches merged; a failure stops only what depends on it; a resume
//! runs the failed jobs again and the plan goes on.

mod support;

use bosun_core::WorkBranch;
use bosun_core::{
    Effect, Input, JobId, JobWorkspace, Name, Nonce, Origin, Plan, PlanBranch, PlanJob, PlanJobState, PlanState,
    WorkspaceKind,
};
use support::{shell_job, Sim};

fn plan() -> Plan {
    let job = |name: &str| PlanJob {
        using: match name {
            "api" => vec!["schema".into()],
            "ui" => vec!["api".into()],
            _ => vec![],
        },
        branch: (name == "ui").then(|| "auth/ui".into()),
        ..PlanJob::new(name, "build")
    };
    Plan {
        budget: None,
        id: "p1".into(),
        name: "auth".into(),
        base: "main".into(),
        jobs: vec![job("schema"), job("api"), job("ui")],
        state: PlanState::Running,
        book: Default::default(),
        cwd: "/repo".into(),
        concurrency: 2,
        drop_losers: false,
    }
}

/// A diamond: `a`; `b` and `c` use `a`; `d` uses `b` and `c`; and `e`, which uses none.
fn diamond(concurrency: u32) -> Plan {
    let mut p = plan();
    let job = |name: &str, using: &[&str]| PlanJob {
        name: name.into(),
        using: using.iter().map(|u| u.to_string()).collect(),
        branch: None,
        ..p.jobs[0].clone()
    };
    p.jobs = vec![job("a", &[]), job("b", &["a"]), job("c", &["a"]), job("d", &["b", "c"])];
    p.concurrency = concurrency;
    p
}

/// Every plan job asked for: its place, id and branch.
fn asked_all(effects: &[Effect]) -> Vec<(usize, JobId, PlanBranch)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Dispatch {
                origin: Origin::Plan(_, index) | Origin::PlanVariant(_, index, _),
                job,
                branch: Some(b),
                ..
            } => Some((*index, job.clone(), b.clone())),
            _ => None,
        })
        .collect()
}

/// The one plan job asked for: its place, id and branch.
fn asked(effects: &[Effect]) -> Option<(usize, JobId, PlanBranch)> {
    let mut found = asked_all(effects).into_iter();
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
        kind: WorkspaceKind::Worktree(WorkBranch {
            repo: "/repo".into(),
            branch: branch.into(),
            base_ref: b.base.clone(),
            base: "abc".into(),
        }),
        settings_from: None,
        pool: None,
    });
    sim.ok(Input::StartJob(Box::new(spec)));
    let ws = sim.state.jobs[id].workspace.clone().unwrap();
    sim.ok(Input::WorkspaceCreated { id: ws });
    sim.ok(Input::StepFinished { job: id.clone(), step: "fix".into(), attempt: 1, ok, detail: None })
}

#[test]
fn each_job_starts_from_the_branch_of_the_job_it_uses() {
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
fn a_failure_stops_a_chain_and_a_resume_goes_on_from_there() {
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

#[test]
fn a_diamond_runs_its_two_middle_jobs_at_once_and_the_last_from_both_branches_merged() {
    let mut sim = Sim::new();
    let a = asked(&sim.ok(Input::StartPlan(Box::new(diamond(2))))).unwrap();
    assert_eq!((a.0, a.2.base.as_str()), (0, "main"));
    let middle = asked_all(&run(&mut sim, &a, "feature/a", true));
    let places: Vec<usize> = middle.iter().map(|m| m.0).collect();
    assert_eq!(places, [1, 2], "b and c at once");
    assert!(middle.iter().all(|m| m.2.base == "feature/a" && m.2.merge.is_empty()), "{middle:?}");
    assert_eq!(sim.state.plans["p1"].job_state(1), PlanJobState::Running);
    assert!(asked_all(&run(&mut sim, &middle[1], "feature/c", true)).is_empty(), "d waits for b");
    let d = asked(&run(&mut sim, &middle[0], "feature/b", true)).unwrap();
    assert_eq!((d.0, d.2.base.as_str(), d.2.merge.clone()), (3, "feature/b", vec!["feature/c".to_owned()]));
    assert_eq!(sim.state.plans["p1"].jobs[3].merged, ["feature/c"], "recorded");
    assert!(asked(&run(&mut sim, &d, "feature/d", true)).is_none());
    assert_eq!(sim.state.plans["p1"].state, PlanState::Done);
}

#[test]
fn a_plans_concurrency_bounds_the_jobs_that_run_at_once() {
    let mut sim = Sim::new();
    let mut p = diamond(1);
    for j in &mut p.jobs {
        j.using.clear();
    }
    let first = asked_all(&sim.ok(Input::StartPlan(Box::new(p))));
    assert_eq!(first.iter().map(|f| f.0).collect::<Vec<_>>(), [0], "one at a time");
    let next = asked_all(&run(&mut sim, &first[0], "feature/a", true));
    assert_eq!(next.iter().map(|f| f.0).collect::<Vec<_>>(), [1]);
}

#[test]
fn a_failed_job_stops_only_what_depends_on_it_and_a_resume_runs_it_again() {
    let mut sim = Sim::new();
    let a = asked(&sim.ok(Input::StartPlan(Box::new(diamond(2))))).unwrap();
    let middle = asked_all(&run(&mut sim, &a, "feature/a", true));
    assert!(asked_all(&run(&mut sim, &middle[0], "feature/b", false)).is_empty(), "d cannot start");
    let plan = &sim.state.plans["p1"];
    assert_eq!(plan.state, PlanState::Running, "c still runs");
    assert_eq!(plan.job_state(3), PlanJobState::Blocked { job: "b".into() });
    assert!(sim.feed(Input::ResumePlan { plan: "p1".into() }).is_err(), "a running plan is not resumed");
    assert!(asked_all(&run(&mut sim, &middle[1], "feature/c", true)).is_empty());
    let plan = &sim.state.plans["p1"];
    assert!(matches!(&plan.state, PlanState::Failed { job, .. } if job == "b"), "{:?}", plan.state);
    assert_eq!(plan.job_state(2), PlanJobState::Done, "c went on and is done");

    let effects = sim.ok(Input::ResumePlan { plan: "p1".into() });
    assert!(effects.iter().any(|e| matches!(e, Effect::RunStep { job, .. } if *job == middle[0].1)), "b again");
    let effects = sim.ok(Input::StepFinished {
        job: middle[0].1.clone(),
        step: "fix".into(),
        attempt: 1,
        ok: true,
        detail: None,
    });
    let d = asked(&effects).unwrap();
    assert_eq!((d.0, d.2.merge.clone()), (3, vec!["feature/c".to_owned()]));
}

#[test]
fn a_job_whose_merge_conflicts_fails_there_and_a_person_is_told_the_files() {
    let mut sim = Sim::new();
    let a = asked(&sim.ok(Input::StartPlan(Box::new(diamond(2))))).unwrap();
    let middle = asked_all(&run(&mut sim, &a, "feature/a", true));
    run(&mut sim, &middle[1], "feature/c", true);
    let d = asked(&run(&mut sim, &middle[0], "feature/b", true)).unwrap();
    let error = "merging feature/c into feature/b conflicts in src/lib.rs, README.md: merge them by hand";
    let effects = sim.ok(Input::DispatchFailed { origin: Origin::Plan("p1".into(), d.0), error: error.into() });
    let told = effects.iter().find_map(|e| match e {
        Effect::Notify { notice, desktop: true, .. } => Some(notice.body.clone()),
        _ => None,
    });
    assert!(told.is_some_and(|b| b.contains("src/lib.rs, README.md")), "{effects:?}");
    assert!(
        matches!(&sim.state.plans["p1"].state, PlanState::Failed { job, reason } if job == "d" && reason.contains("conflicts"))
    );
}

#[test]
fn a_plan_agents_prompt_and_nudges_carry_its_job_branches_and_dependencies() {
    use bosun_core::{Observation, Source};
    let mut sim = Sim::new();
    let first = asked(&sim.ok(Input::StartPlan(Box::new(plan())))).unwrap();
    let second = asked(&run(&mut sim, &first, "feature/schema", true)).unwrap();
    // The api job runs an agent whose idle turns are nudged.
    let mut spec = shell_job(second.1.clone(), "build", None);
    spec.plan = Some(("p1".into(), second.0));
    spec.steps[0].run = bosun_core::StepRun::Agent("coder".into());
    let on_idle = bosun_core::Chain(vec!["nudge*2:Go on.".parse().unwrap()]);
    let policy = bosun_core::Policy { on_idle, ..Default::default() };
    spec.agents.insert(
        "coder".into(),
        bosun_core::AgentPlan {
            command: vec!["claude".into()],
            driver: bosun_core::driver::DriverKind::Claude,
            prompt: Some("Add the login endpoint".into()),
            context: None,
            cwd: None,
            env: Default::default(),
            policy,
            backend: Default::default(),
            runtime: Default::default(),
            account: None,
        },
    );
    spec.workspace = Some(JobWorkspace {
        name: Name::derive("build"),
        nonce: Nonce::from_bits(77),
        workspaces_root: "/ws".into(),
        kind: WorkspaceKind::Worktree(WorkBranch {
            repo: "/repo".into(),
            branch: "feature/api".into(),
            base_ref: "feature/schema".into(),
            base: "abc".into(),
        }),
        settings_from: None,
        pool: None,
    });
    sim.ok(Input::StartJob(Box::new(spec)));
    let ws = sim.state.jobs[&second.1].workspace.clone().unwrap();
    sim.ok(Input::WorkspaceCreated { id: ws });
    let agent = sim.state.agents.values().next().expect("the step's agent").clone();
    let context =
        "[bosun plan auth (p1), job api: it started from feature/schema, works on feature/api, and uses schema.]";
    assert_eq!(agent.context.as_deref(), Some(context));
    let given = format!("{} {}", agent.command.join(" "), agent.prompt.clone().unwrap_or_default());
    assert!(given.contains(&format!("Add the login endpoint\n\n{context}")), "its prompt: {given}");

    sim.ok(Input::SessionSpawned { agent: agent.id.clone(), pid: Some(7) });
    sim.see(&agent.id, Source::Hook, Observation::Started);
    sim.see(&agent.id, Source::Hook, Observation::Working);
    sim.see(&agent.id, Source::Hook, Observation::Idle);
    let nudge = sim.state.messages.values().map(|m| m.text.clone()).collect::<Vec<_>>();
    assert_eq!(nudge, [format!("Go on.\n\n{context}")], "a nudge carries it too");
}

#[test]
fn a_plan_jobs_engine_runs_its_agents_keeping_their_flags_only_for_the_same_kind() {
    use bosun_core::driver::DriverKind;
    let coder = bosun_core::AgentPlan {
        command: vec!["claude".into(), "--model".into(), "opus".into()],
        driver: DriverKind::Claude,
        prompt: None,
        context: None,
        cwd: None,
        env: Default::default(),
        policy: Default::default(),
        backend: Default::default(),
        runtime: Default::default(),
        account: None,
    };
    let def = bosun_core::JobDef {
        vars: vec![],
        defaults: Default::default(),
        locals: Default::default(),
        source: bosun_core::JobSource::Worktree { branch: None, base_ref: None },
        steps: vec![],
        on_done: None,
        on_fail: None,
        max_step_visits: 5,
        budget: None,
        notify: Default::default(),
        agents: [("coder".to_owned(), bosun_core::StepAgent { plan: coder, prompt_file: None })].into(),
    };
    let mut p = diamond(2);
    p.book.jobs.insert("build".into(), def);
    p.jobs[0].engine = Some("codex".into());
    let books = |effects: &[Effect]| -> Vec<bosun_core::AgentPlan> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Dispatch { book, .. } => Some(book.jobs["build"].agents["coder"].plan.clone()),
                _ => None,
            })
            .collect()
    };
    let mut sim = Sim::new();
    let effects = sim.ok(Input::StartPlan(Box::new(p)));
    let a = books(&effects);
    assert_eq!(
        (a[0].command.clone(), a[0].driver),
        (vec!["codex".to_owned()], DriverKind::Codex),
        "claude's flags dropped"
    );
    let first = asked(&effects).unwrap();
    let middle = books(&run(&mut sim, &first, "feature/a", true));
    assert_eq!(middle[0].command, ["claude", "--model", "opus"], "no engine: the agent's own");
    let same = sim.state.plans["p1"].book.with_engine("/opt/bin/claudeless");
    let plan = &same.jobs["build"].agents["coder"].plan;
    assert_eq!(
        (plan.command.clone(), plan.driver),
        (vec!["/opt/bin/claudeless".to_owned(), "--model".into(), "opus".into()], DriverKind::Claude)
    );
}

/// `a`, run as three variants judged by `judge`; `b`, which uses it.
fn with_variants(judge: bosun_core::Judge, drop_losers: bool) -> Plan {
    let mut p = diamond(2);
    p.jobs.truncate(2);
    p.jobs[0].variants = 3;
    p.jobs[0].judge = Some(judge);
    p.jobs[1].using = vec!["a".into()];
    p.drop_losers = drop_losers;
    p
}

fn judged(effects: &[Effect]) -> Option<Vec<(u32, String)>> {
    effects.iter().find_map(|e| match e {
        Effect::JudgeVariants { candidates, .. } => {
            Some(candidates.iter().map(|c| (c.variant, c.branch.clone())).collect())
        }
        _ => None,
    })
}

#[test]
fn a_job_with_variants_runs_each_on_its_branch_and_its_gate_judge_picks_the_branch_what_uses_it_starts_from() {
    let mut sim = Sim::new();
    let gate = bosun_core::Judge::Gate { gate: "cargo test".into() };
    let effects = sim.ok(Input::StartPlan(Box::new(with_variants(gate, false))));
    let runs = asked_all(&effects);
    let branches: Vec<&str> = runs.iter().map(|r| r.2.branch.as_str()).collect();
    assert_eq!(branches, ["feature/a-v1", "feature/a-v2", "feature/a-v3"], "all at once");
    let origins = effects.iter().filter(|e| matches!(e, Effect::Dispatch { origin: Origin::PlanVariant(_, 0, _), .. }));
    assert_eq!(origins.count(), 3);
    assert!(judged(&run(&mut sim, &runs[0], "feature/a-v1", true)).is_none(), "waits for all");
    assert!(judged(&run(&mut sim, &runs[1], "feature/a-v2", false)).is_none());
    let candidates = judged(&run(&mut sim, &runs[2], "feature/a-v3", true)).expect("judged once all ended");
    assert_eq!(
        candidates,
        [(1, "feature/a-v1".to_owned()), (3, "feature/a-v3".to_owned())],
        "the failed one is not weighed"
    );
    assert_eq!(sim.state.plans["p1"].job_state(0), PlanJobState::Judging);

    let origin = "v3: gate passed, 4 lines".to_owned();
    let effects = sim.ok(Input::VariantsJudged { plan: "p1".into(), index: 0, winner: Some(3), detail: origin });
    let b = asked(&effects).expect("what uses it starts");
    assert_eq!((b.0, b.2.base.as_str()), (1, "feature/a-v3"), "from the winner's branch");
    let a = &sim.state.plans["p1"].jobs[0];
    assert_eq!(
        (a.target.as_deref(), a.winner.clone()),
        (Some("feature/a-v3"), Some((3, "v3: gate passed, 4 lines".into())))
    );
    assert!(!effects.iter().any(|e| matches!(e, Effect::RemoveWorkspace { .. })), "losers kept");
}

#[test]
fn no_variant_picked_fails_the_job_and_all_failed_variants_are_not_judged() {
    let mut sim = Sim::new();
    let gate = bosun_core::Judge::Gate { gate: "false".into() };
    let runs = asked_all(&sim.ok(Input::StartPlan(Box::new(with_variants(gate.clone(), false)))));
    for (r, b) in runs.iter().zip(["feature/a-v1", "feature/a-v2", "feature/a-v3"]) {
        run(&mut sim, r, b, true);
    }
    sim.ok(Input::VariantsJudged { plan: "p1".into(), index: 0, winner: None, detail: "no gate passed".into() });
    assert!(
        matches!(&sim.state.plans["p1"].state, PlanState::Failed { job, reason } if job == "a" && reason.contains("no gate passed"))
    );

    let mut sim = Sim::new();
    let runs = asked_all(&sim.ok(Input::StartPlan(Box::new(with_variants(gate, false)))));
    let mut last = Vec::new();
    for (r, b) in runs.iter().zip(["feature/a-v1", "feature/a-v2", "feature/a-v3"]) {
        last = run(&mut sim, r, b, false);
    }
    assert!(judged(&last).is_none(), "nothing to judge");
    assert!(
        matches!(&sim.state.plans["p1"].state, PlanState::Failed { reason, .. } if reason.contains("none of its 3 variants is done"))
    );
}

#[test]
fn a_person_picks_a_variant_and_dropped_losers_go_unless_they_hold_uncommitted_work() {
    let mut sim = Sim::new();
    let effects = sim.ok(Input::StartPlan(Box::new(with_variants(bosun_core::Judge::Person, true))));
    let runs = asked_all(&effects);
    let early = sim.feed(Input::PickVariant { plan: "p1".into(), job: "a".into(), variant: 1 });
    assert!(early.is_err_and(|e| e.to_string().contains("only a job whose variants all ended")));
    run(&mut sim, &runs[0], "feature/a-v1", true);
    run(&mut sim, &runs[1], "feature/a-v2", true);
    let effects = run(&mut sim, &runs[2], "feature/a-v3", true);
    let told = effects.iter().find_map(|e| match e {
        Effect::Notify { notice, .. } if notice.title.contains("pick a variant") => Some(notice.body.clone()),
        _ => None,
    });
    assert!(told.is_some_and(|b| b.contains("v2 on feature/a-v2") && b.contains("bosun plan pick p1 a N")));
    let ws3 = sim.state.jobs[&runs[2].1].workspace.clone().unwrap();
    for bad in [("b", 1), ("a", 9), ("zz", 1)] {
        assert!(
            sim.feed(Input::PickVariant { plan: "p1".into(), job: bad.0.into(), variant: bad.1 }).is_err(),
            "{bad:?}"
        );
    }
    let effects = sim.ok(Input::PickVariant { plan: "p1".into(), job: "a".into(), variant: 2 });
    let removed: Vec<_> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::RemoveWorkspace { id, delete_branch: true, force: false, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    let ws1 = sim.state.jobs[&runs[0].1].workspace.clone().unwrap();
    assert_eq!(removed, [ws1.clone(), ws3.clone()], "the losers go, never forced");
    assert_eq!(asked(&effects).map(|b| b.2.base), Some("feature/a-v2".into()));
    // Git refuses to remove v3's worktree, which holds uncommitted work: it stays, dirty.
    sim.ok(Input::WorkspaceRemoved { id: ws1.clone() });
    sim.ok(Input::WorkspaceRemoveFailed { id: ws3.clone(), error: "uncommitted changes".into(), dirty: true });
    assert!(!sim.state.workspaces.contains_key(&ws1), "v1 is gone");
    assert_eq!(sim.state.workspaces[&ws3].state, bosun_core::WorkspaceState::Dirty, "v3 is kept");
}

#[test]
fn a_crash_while_variants_run_resumes_those_made_and_fails_the_one_never_made() {
    let mut sim = Sim::new();
    let runs = asked_all(&sim.ok(Input::StartPlan(Box::new(with_variants(bosun_core::Judge::Person, false)))));
    // v1 and v2 were made and run; bosun died before it made v3.
    let first = |sim: &mut Sim, r: &(usize, JobId, PlanBranch), branch: &str| {
        let mut spec = shell_job(r.1.clone(), "build", None);
        spec.plan = Some(("p1".into(), r.0));
        spec.workspace = Some(JobWorkspace {
            name: Name::derive("build"),
            nonce: Nonce::from_bits(500 + sim.state.jobs.len() as u64),
            workspaces_root: "/ws".into(),
            kind: WorkspaceKind::Worktree(WorkBranch {
                repo: "/repo".into(),
                branch: branch.into(),
                base_ref: "main".into(),
                base: "abc".into(),
            }),
            settings_from: None,
            pool: None,
        });
        sim.ok(Input::StartJob(Box::new(spec)));
        let ws = sim.state.jobs[&r.1].workspace.clone().unwrap();
        sim.ok(Input::WorkspaceCreated { id: ws });
    };
    first(&mut sim, &runs[0], "feature/a-v1");
    first(&mut sim, &runs[1], "feature/a-v2");
    let effects = sim.ok(Input::Reconcile(Default::default()));
    let runs_again = effects.iter().filter(|e| matches!(e, Effect::RunStep { .. })).count();
    assert_eq!(runs_again, 2, "v1 and v2 run their step again: {effects:?}");
    let a = &sim.state.plans["p1"].jobs[0];
    assert!(a.runs[2].failure.as_deref().is_some_and(|f| f.contains("bosun stopped")), "{:?}", a.runs);
    for r in runs.iter().take(2) {
        sim.ok(Input::StepFinished { job: r.1.clone(), step: "fix".into(), attempt: 1, ok: true, detail: None });
    }
    assert_eq!(sim.state.plans["p1"].job_state(0), PlanJobState::Judging, "judged with what ran");
}
