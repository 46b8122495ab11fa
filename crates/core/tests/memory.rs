//! Run memory: which recorded events concern a job, and the checkpoint of where it stands.

mod support;

use bosun_core::driver::{Driver, DriverKind};
use bosun_core::{
    AgentId, AgentPlan, Checkpoint, Event, ExitStatus, Input, JobId, JobScope, JobSpec, JobWorkspace, Name, Nonce,
    Observation, ResumePoint, Source, StepRun, Timestamp, WorkspaceKind,
};
use support::{shell_job, Sim};

/// Job `n`: one step that runs a Claude agent in a folder workspace of its own.
fn agent_job(n: u64) -> JobSpec {
    let mut spec = shell_job(JobId::new(&Nonce::from_bits(n)), "", None);
    spec.steps[0].run = StepRun::Agent("fixer".into());
    spec.workspace = Some(JobWorkspace {
        name: Name::derive("fix"),
        nonce: Nonce::from_bits(100 + n),
        workspaces_root: "/state/workspaces".into(),
        kind: WorkspaceKind::Folder,
        settings_from: None,
        pool: None,
    });
    let policy = serde_json::from_value(serde_json::json!({ "on_idle": { "action": "nudge", "message": "go on" } }));
    let plan = AgentPlan {
        command: vec!["claude".into()],
        driver: DriverKind::Claude,
        prompt: Some("Fix it".into()),
        context: None,
        cwd: None,
        env: Default::default(),
        policy: policy.unwrap(),
        backend: Default::default(),
        runtime: Default::default(),
        account: None,
    };
    spec.agents.insert("fixer".into(), plan);
    spec
}

/// Starts job `n` and brings its agent up; returns the job and its agent.
fn start(sim: &mut Sim, n: u64) -> (JobId, AgentId) {
    let spec = agent_job(n);
    let id = spec.id.clone();
    sim.ok(Input::StartJob(Box::new(spec)));
    let ws = sim.state.jobs[&id].workspace.clone().unwrap();
    sim.ok(Input::WorkspaceCreated { id: ws });
    let agent = sim.state.agents.values().find(|a| a.step.as_ref().is_some_and(|(j, _, _)| *j == id)).unwrap();
    let agent = agent.id.clone();
    sim.ok(Input::SessionSpawned { agent: agent.clone(), pid: Some(100) });
    (id, agent)
}

/// Two jobs run side by side; the first's agent is nudged once, then crashes.
fn two_jobs() -> (Sim, JobId, AgentId, JobId) {
    let mut sim = Sim::new();
    let (mine, agent) = start(&mut sim, 1);
    let (other, theirs) = start(&mut sim, 2);
    for a in [&agent, &theirs] {
        sim.see(a, Source::Hook, Observation::Idle);
    }
    let message = sim.state.messages.values().find(|m| m.agent == agent).map(|m| m.id).unwrap();
    sim.ok(Input::TextDelivered { message });
    sim.see(&agent, Source::Hook, Observation::Working);
    let session = sim.state.agents[&agent].session.clone();
    sim.ok(Input::SessionExited { session, status: ExitStatus { code: None, signal: Some(9) } });
    (sim, mine, agent, other)
}

#[test]
fn a_jobs_scope_takes_its_own_events_and_none_of_another_jobs() {
    let (sim, mine, agent, other) = two_jobs();
    let mut scope = JobScope::of(&sim.state, &mine).unwrap();
    let taken: Vec<&Event> = sim.log.iter().filter(|e| scope.concerns(e)).collect();

    let theirs = JobScope::of(&sim.state, &other).unwrap();
    for e in &taken {
        let text = serde_json::to_string(e).unwrap();
        for id in theirs.agents.iter().map(AgentId::as_str).chain([other.as_str()]) {
            assert!(!text.contains(id), "{text} is about the other job");
        }
    }
    let has = |f: &dyn Fn(&Event) -> bool| taken.iter().any(|e| f(e));
    assert!(has(&|e| matches!(e, Event::JobCreated { job } if job.spec.id == mine)));
    assert!(has(&|e| matches!(e, Event::WorkspaceReady { .. })));
    assert!(has(&|e| matches!(e, Event::AgentCreated { agent: a } if a.id == agent)));
    assert!(has(&|e| matches!(e, Event::MessageDelivered { .. })), "its nudge");
    assert!(has(&|e| matches!(e, Event::AgentDied { id, .. } if *id == agent)));
    assert!(has(&|e| matches!(e, Event::JobFinished { job, .. } if *job == mine)));
    // A timer's clearing comes with its setting.
    let set: Vec<_> =
        taken.iter().filter_map(|e| if let Event::TimerSet { timer } = e { Some(timer.id) } else { None }).collect();
    let cleared: Vec<_> =
        taken.iter().filter_map(|e| if let Event::TimerCleared { id } = e { Some(*id) } else { None }).collect();
    assert!(!cleared.is_empty(), "timers are in it");
    assert!(cleared.iter().all(|id| set.contains(id)), "{cleared:?} cleared, {set:?} set");
    let (mut a, mut b) = (JobScope::of(&sim.state, &mine).unwrap(), JobScope::of(&sim.state, &other).unwrap());
    assert!(sim.log.iter().all(|e| !(a.concerns(e) & b.concerns(e))), "no event is about both jobs");
}

#[test]
fn a_checkpoint_says_where_the_job_stands_and_that_a_resume_goes_on_mid_step() {
    let (sim, mine, agent, _) = two_jobs();
    let now = Timestamp::from_millis(99_000);
    let c = Checkpoint::of(&sim.state, &mine, now).unwrap();
    assert_eq!((c.version, c.exported_at, c.seq), (1, now, sim.state.seq));
    assert_eq!((c.job.step.as_deref(), c.job.attempt), (Some("fix"), 1));
    assert_eq!(c.workspace.as_ref().map(|w| &w.id), sim.state.jobs[&mine].workspace.as_ref());
    assert_eq!(c.agents.iter().map(|a| &a.id).collect::<Vec<_>>(), [&agent]);
    assert!(c.messages.iter().all(|m| m.agent == agent) && !c.messages.is_empty());
    let Driver::Claude { session_id } = &sim.state.agents[&agent].driver else { panic!("a Claude agent") };
    let expected = ResumePoint::MidStep {
        step: "fix".into(),
        attempt: 1,
        agent: agent.clone(),
        session: Some(session_id.clone()),
    };
    assert_eq!(c.resume, Some(expected));
    let back: Checkpoint = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
    assert_eq!(back, c, "it reads back as written");
    assert!(Checkpoint::of(&sim.state, &JobId::new(&Nonce::from_bits(42)), now).is_none());
}

#[test]
fn a_scope_taken_before_its_agents_exist_learns_them_from_the_log() {
    // As a live stream does: the scope of a job just asked for, which has no agent yet.
    let mut sim = Sim::new();
    let spec = agent_job(1);
    let id = spec.id.clone();
    sim.ok(Input::StartJob(Box::new(spec)));
    let mut early = JobScope::of(&sim.state, &id).unwrap();
    assert!(early.agents.is_empty());
    let before = sim.log.len();
    let ws = sim.state.jobs[&id].workspace.clone().unwrap();
    sim.ok(Input::WorkspaceCreated { id: ws });
    let agent = sim.state.agents.values().find(|a| a.step.as_ref().is_some_and(|(j, _, _)| *j == id)).unwrap();
    let agent = agent.id.clone();
    sim.ok(Input::SessionSpawned { agent: agent.clone(), pid: Some(100) });
    let (_, theirs) = start(&mut sim, 2);
    let taken: Vec<&Event> = sim.log[before..].iter().filter(|e| early.concerns(e)).collect();
    assert!(taken.iter().any(|e| matches!(e, Event::AgentCreated { agent: a } if a.id == agent)));
    assert!(taken.iter().any(|e| matches!(e, Event::AgentRunning { id, .. } if *id == agent)), "learnt");
    assert!(!taken.iter().any(|e| serde_json::to_string(e).unwrap().contains(theirs.as_str())), "not another's");
}

#[test]
fn an_agent_s_scope_is_its_own_records() {
    let (sim, _, agent, _) = two_jobs();
    let mut scope = JobScope::of_agent(&sim.state, &agent).unwrap();
    let other = sim.state.agents.keys().find(|a| **a != agent).unwrap().clone();
    let taken: Vec<&Event> = sim.log.iter().filter(|e| scope.concerns(e)).collect();
    assert!(taken.iter().any(|e| matches!(e, Event::AgentDied { id, .. } if *id == agent)));
    assert!(taken.iter().any(|e| matches!(e, Event::MessageDelivered { .. })), "its nudge");
    assert!(!taken.iter().any(|e| serde_json::to_string(e).unwrap().contains(other.as_str())));
}

/// A Claude transcript line recording one answer's usage, of `model`.
fn answer(id: &str, model: &str, input: u64) -> String {
    format!(
        r#"{{"type":"assistant","message":{{"id":"{id}","model":"{model}","content":[],"usage":{{"input_tokens":{input},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":10}}}}}}"#
    )
}

#[test]
fn a_checkpoint_says_what_the_jobs_agents_spent_and_that_a_model_with_no_price_makes_its_cost_unknown() {
    let mut sim = Sim::new();
    let (job, agent) = start(&mut sim, 1);
    let (_, theirs) = start(&mut sim, 2);
    let lines = vec![answer("msg_1", "claude-opus-4-5", 1000)];
    sim.ok(Input::LogLines { agent: agent.clone(), session_log: true, lines: lines.clone() });
    sim.ok(Input::LogLines { agent: theirs, session_log: true, lines: vec![answer("msg_9", "claude-opus-4-5", 7)] });
    let now = Timestamp::from_millis(99_000);
    let priced = Checkpoint::of(&sim.state, &job, now).unwrap();
    assert_eq!((priced.tokens.input, priced.tokens.output), (1000, 10), "its own agent's only");
    let cost = priced.cost.expect("a priced model: its cost is known");
    assert!(cost > 0);
    // An answer of a model with no price: its tokens count, the job's cost is unknown, and the
    // priced model's cost is still said.
    sim.ok(Input::LogLines { agent, session_log: true, lines: vec![answer("msg_2", "mystery-model", 5)] });
    let c = Checkpoint::of(&sim.state, &job, now).unwrap();
    assert_eq!((c.tokens.input, c.cost), (1005, None));
    assert_eq!(c.spent_by_model["claude-opus-4-5"].known_cost(), Some(cost));
    assert!(c.spent_by_model["mystery-model"].unpriced);
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!((&json["tokens"]["input"], &json["cost"]), (&serde_json::json!(1005), &serde_json::Value::Null));
}
