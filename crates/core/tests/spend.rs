//! Budgets over many jobs, as simulations: a plan's agents start with what is left of its budget
//! and once it is spent no job of it starts (those that would fail, saying so, and the plan
//! ends failed); a worker's agents likewise, and once its budget is spent it stops, its queue's
//! items left pending.

mod support;

use std::collections::BTreeMap;

use bosun_core::budget::Budget;
use bosun_core::driver::DriverKind;
use bosun_core::{
    AgentId, AgentPlan, Effect, Event, ExitStatus, Input, ItemId, ItemState, JobId, JobSpec, JobState, JobWorkspace,
    Name, Nonce, Origin, Plan, PlanJob, PlanJobState, PlanState, StepRun, Worker, WorkspaceKind,
};
use support::{shell_job, Sim};

/// The daemon's part: job `id`, one step whose Claude agent works in a folder of its own.
fn agent_job(id: &JobId, n: u64, item: Option<(ItemId, BTreeMap<String, String>)>) -> JobSpec {
    let mut spec = shell_job(id.clone(), "", item);
    spec.steps[0].run = StepRun::Agent("fixer".into());
    spec.workspace = Some(JobWorkspace {
        name: Name::derive("fix"),
        nonce: Nonce::from_bits(500 + n),
        workspaces_root: "/state/workspaces".into(),
        kind: WorkspaceKind::Folder,
        settings_from: None,
        pool: None,
    });
    let plan = AgentPlan {
        command: vec!["claude".into()],
        driver: DriverKind::Claude,
        prompt: Some("Fix it".into()),
        context: None,
        cwd: None,
        env: Default::default(),
        policy: Default::default(),
        backend: Default::default(),
        runtime: Default::default(),
        account: None,
    };
    spec.agents.insert("fixer".into(), plan);
    spec
}

/// Makes the job, brings its agent up, has it answer with `input` tokens (and 10 out), and ends
/// it (its work done); returns its agent and the effects of its end.
fn work(sim: &mut Sim, spec: JobSpec, input: u64) -> (AgentId, Vec<Effect>) {
    let id = spec.id.clone();
    sim.ok(Input::StartJob(Box::new(spec)));
    let ws = sim.state.jobs[&id].workspace.clone().unwrap();
    sim.ok(Input::WorkspaceCreated { id: ws });
    let agent = sim.state.agents.values().find(|a| a.step.as_ref().is_some_and(|(j, _, _)| *j == id)).unwrap();
    let agent = agent.id.clone();
    sim.ok(Input::SessionSpawned { agent: agent.clone(), pid: Some(100) });
    let line = format!(
        r#"{{"type":"assistant","message":{{"id":"m-{agent}","model":"claude-opus-5-5","usage":{{"input_tokens":{input},"output_tokens":10}}}}}}"#
    );
    sim.ok(Input::LogLines { agent: agent.clone(), session_log: true, lines: vec![line] });
    let session = sim.state.agents[&agent].session.clone();
    let effects = sim.ok(Input::SessionExited { session, status: ExitStatus { code: Some(0), signal: None } });
    (agent, effects)
}

fn dispatched(effects: &[Effect]) -> Vec<(Origin, JobId)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Dispatch { origin, job, .. } => Some((origin.clone(), job.clone())),
            _ => None,
        })
        .collect()
}

/// Plan `p1`: jobs `a`, `b` and `c`, using none, one at a time, with `budget`.
fn plan(budget: &str) -> Plan {
    let job = |name: &str| PlanJob::new(name, "fix");
    Plan {
        id: "p1".into(),
        name: "auth".into(),
        base: "main".into(),
        jobs: vec![job("a"), job("b"), job("c")],
        state: PlanState::Running,
        book: Default::default(),
        cwd: "/repo".into(),
        concurrency: 1,
        drop_losers: false,
        budget: Some(budget.parse().unwrap()),
    }
}

fn plan_job(sim: &Sim, (origin, id): &(Origin, JobId), n: u64) -> JobSpec {
    let Origin::Plan(plan, index) = origin else { panic!("{origin:?}") };
    assert_eq!(sim.state.plans[plan].jobs[*index].job_id.as_ref(), Some(id));
    let mut spec = agent_job(id, n, None);
    spec.plan = Some((plan.clone(), *index));
    spec
}

#[test]
fn a_plans_agents_start_with_what_is_left_of_its_budget_and_once_spent_no_job_of_it_starts() {
    let mut sim = Sim::new();
    let first = dispatched(&sim.ok(Input::StartPlan(Box::new(plan("2ktok")))));
    assert_eq!(first.len(), 1);
    let spec = plan_job(&sim, &first[0], 1);
    let (a, effects) = work(&mut sim, spec, 1500);
    assert_eq!(sim.state.agents[&a].policy.budget, Some(Budget::Tokens(2000)), "all of it, to start with");
    let second = dispatched(&effects);
    assert_eq!(second.len(), 1, "1,510 of 2,000 spent: b starts");
    let spec = plan_job(&sim, &second[0], 2);
    let (b, effects) = work(&mut sim, spec, 600);
    assert_eq!(sim.state.agents[&b].policy.budget, Some(Budget::Tokens(490)), "what is left");
    assert!(sim.state.agents[&b].paused.is_some(), "b's agent is paused where the plan's budget ends");
    // Spent: c is not asked for; it fails saying why, and the plan ends failed.
    assert!(dispatched(&effects).is_empty(), "{effects:?}");
    let p = &sim.state.plans["p1"];
    let PlanJobState::Failed { reason } = p.job_state(2) else { panic!("{:?}", p.job_state(2)) };
    assert_eq!(reason, "not started: the plan's budget of 2ktok is spent (2120 tokens used)");
    assert!(matches!(&p.state, PlanState::Failed { job, .. } if job == "c"), "{:?}", p.state);
    assert!(effects.iter().any(|e| matches!(e, Effect::SummarizePlan { .. })), "its summary is written");
    assert_eq!(sim.state.jobs.len(), 2, "no job made for c");
    // A resume is refused while it is spent, and changes nothing.
    let before = sim.log.len();
    let err = sim.feed(Input::ResumePlan { plan: "p1".into() }).unwrap_err().to_string();
    assert!(err.contains("the plan's budget of 2ktok is spent"), "{err}");
    assert_eq!(sim.log.len(), before);
}

#[test]
fn a_worker_whose_budget_is_spent_stops_and_leaves_its_queues_items_pending() {
    let mut sim = Sim::new();
    let worker = Worker {
        name: "fixer".into(),
        queue: "bugs".into(),
        job: "fix".into(),
        concurrency: 1,
        running: false,
        book: Default::default(),
        cwd: "/repo".into(),
        external: None,
        error: None,
        budget: Some("1ktok".parse().unwrap()),
    };
    sim.ok(Input::StartWorker(Box::new(worker)));
    let push = |sim: &mut Sim, title: &str| {
        let data = BTreeMap::from([("title".to_owned(), title.to_owned())]);
        dispatched(&sim.ok(Input::QueuePush { queue: "bugs".into(), data, retry: 0 }))
    };
    let taken = push(&mut sim, "one");
    assert!(push(&mut sim, "two").is_empty(), "one at a time");
    let (Origin::Item(item), job) = &taken[0] else { panic!("{taken:?}") };
    let data = sim.state.items[item].data.clone();
    let (agent, effects) = work(&mut sim, agent_job(job, 1, Some((*item, data))), 1500);
    assert_eq!(sim.state.agents[&agent].policy.budget, Some(Budget::Tokens(1000)));
    assert_eq!(sim.state.jobs[job].state, JobState::Done);
    assert!(dispatched(&effects).is_empty(), "spent: item two is not taken");
    let w = &sim.state.workers["fixer"];
    assert!(!w.running, "stopped");
    assert_eq!(w.error.as_deref(), Some("its budget of 1ktok is spent (1510 tokens used): it takes no new item"));
    let waiting: Vec<&str> =
        sim.state.items.values().filter(|i| i.state == ItemState::Pending).map(|i| i.data["title"].as_str()).collect();
    assert_eq!(waiting, ["two"], "left in its queue");
    let told = effects
        .iter()
        .any(|e| matches!(e, Effect::Notify { notice, .. } if notice.body.contains("1 item(s) wait in queue bugs")));
    assert!(told, "{effects:?}");
    assert!(sim.log.iter().any(|e| matches!(e, Event::WorkerStopped { reason: Some(_), .. })));
}
