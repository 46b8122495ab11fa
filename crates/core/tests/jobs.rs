//! The job and step state machines as deterministic simulations: steps chosen by outcomes,
//! loops stopped by the visit limit, failed steps tried again after their backoff, cancels.

mod support;

use bosun_core::driver::Driver;
use bosun_core::{
    AgentId, Effect, Event, ExitStatus, Input, JobId, JobSpec, JobState, Next, Nonce, Observation, Outcome,
    SessionState, Source, StepRun, StepSpec,
};
use support::Sim;

fn step(name: &str, on_done: Option<Next>, on_fail: Option<Next>) -> StepSpec {
    StepSpec {
        name: name.into(),
        run: StepRun::Shell(format!("run {name}")),
        on_done,
        on_fail,
        on_cancel: None,
        attempts: 1,
        backoff_ms: 0,
    }
}

fn job(steps: Vec<StepSpec>) -> JobSpec {
    JobSpec {
        id: JobId::new(&Nonce::from_bits(7)),
        name: "build".into(),
        vars: Default::default(),
        steps,
        on_done: None,
        on_fail: None,
        max_step_visits: 3,
        budget: None,
        runbook_hash: "h".into(),
        locals: Default::default(),
        cwd: "/repo".into(),
        workspace: None,
        logs: "/state/jobs/j7".into(),
        agents: Default::default(),
        agents_root: "/state/agents".into(),
        hook_command: "bosun hook".into(),
        item: None,
        children: Default::default(),
        parent: None,
        notify: Default::default(),
        plan: None,
    }
}

/// The step runs asked for, as (step, attempt).
fn runs(effects: &[Effect]) -> Vec<(String, u32)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::RunStep { step, attempt, .. } => Some((step.clone(), *attempt)),
            _ => None,
        })
        .collect()
}

fn finish(sim: &mut Sim, id: &JobId, ok: bool) -> Vec<Effect> {
    let j = &sim.state.jobs[id];
    let (step, attempt) = (j.step.clone().unwrap(), j.attempt);
    sim.ok(Input::StepFinished { job: id.clone(), step, attempt, ok, detail: Some("exit 1".into()) })
}

fn next(s: &str) -> Option<Next> {
    Some(Next::Step(s.into()))
}

#[test]
fn steps_follow_their_outcomes_to_the_end() {
    let mut sim = Sim::new();
    let spec = job(vec![
        step("plan", next("implement"), None),
        step("implement", next("check"), None),
        step("check", Some(Next::Done), next("implement")),
    ]);
    let id = spec.id.clone();
    assert_eq!(runs(&sim.ok(Input::StartJob(Box::new(spec)))), [("plan".into(), 1)]);
    assert_eq!(runs(&finish(&mut sim, &id, true)), [("implement".into(), 1)]);
    assert_eq!(runs(&finish(&mut sim, &id, true)), [("check".into(), 1)]);
    assert_eq!(runs(&finish(&mut sim, &id, false)), [("implement".into(), 1)], "on_fail goes back");
    finish(&mut sim, &id, true);
    finish(&mut sim, &id, true);
    assert_eq!(sim.state.jobs[&id].state, JobState::Done);
    assert_eq!(sim.state.jobs[&id].visits["implement"], 2);
}

#[test]
fn a_step_without_on_fail_fails_the_job_with_the_reason() {
    let mut sim = Sim::new();
    let spec = job(vec![step("only", None, None)]);
    let id = spec.id.clone();
    sim.ok(Input::StartJob(Box::new(spec)));
    finish(&mut sim, &id, false);
    assert_eq!(sim.state.jobs[&id].state, JobState::Failed { reason: "step \"only\" failed: exit 1".into() });
}

#[test]
fn a_broken_on_fail_loop_is_stopped_by_the_visit_limit() {
    let mut sim = Sim::new();
    let spec = job(vec![step("a", next("b"), next("b")), step("b", next("a"), next("a"))]);
    let id = spec.id.clone();
    sim.ok(Input::StartJob(Box::new(spec)));
    for _ in 0..10 {
        if sim.state.jobs[&id].state.is_over() {
            break;
        }
        finish(&mut sim, &id, false);
    }
    let JobState::Failed { reason } = &sim.state.jobs[&id].state else { panic!("{:?}", sim.state.jobs[&id].state) };
    assert!(reason.contains("entered 3 times"), "{reason}");
    assert!(sim.state.jobs[&id].visits.values().all(|v| *v <= 3));
}

#[test]
fn a_failed_step_is_tried_again_after_its_backoff() {
    let mut sim = Sim::new();
    let spec = job(vec![StepSpec { attempts: 3, backoff_ms: 5_000, ..step("flaky", None, None) }]);
    let id = spec.id.clone();
    sim.ok(Input::StartJob(Box::new(spec)));
    assert!(runs(&finish(&mut sim, &id, false)).is_empty(), "waits out the backoff");
    assert_eq!(sim.state.jobs[&id].state, JobState::Waiting);
    sim.advance(4_999);
    assert!(runs(&sim.fire_due()).is_empty());
    sim.advance(1);
    assert_eq!(runs(&sim.fire_due()), [("flaky".into(), 2)]);
    // A late report about the first try changes nothing.
    sim.ok(Input::StepFinished { job: id.clone(), step: "flaky".into(), attempt: 1, ok: true, detail: None });
    assert_eq!(sim.state.jobs[&id].state, JobState::Running);
    finish(&mut sim, &id, true);
    assert_eq!(sim.state.jobs[&id].state, JobState::Done);
}

#[test]
fn attempts_run_out_into_on_fail() {
    let mut sim = Sim::new();
    let spec = job(vec![
        StepSpec { attempts: 2, ..step("flaky", None, next("report")) },
        step("report", Some(Next::Fail), None),
    ]);
    let id = spec.id.clone();
    sim.ok(Input::StartJob(Box::new(spec)));
    assert_eq!(runs(&finish(&mut sim, &id, false)), [("flaky".into(), 2)], "no backoff: at once");
    assert_eq!(runs(&finish(&mut sim, &id, false)), [("report".into(), 1)]);
    finish(&mut sim, &id, true);
    assert!(matches!(sim.state.jobs[&id].state, JobState::Failed { .. }));
}

#[test]
fn a_cancel_runs_the_on_cancel_step_then_ends_cancelled() {
    let mut sim = Sim::new();
    let spec =
        job(vec![StepSpec { on_cancel: next("cleanup"), ..step("work", None, None) }, step("cleanup", None, None)]);
    let id = spec.id.clone();
    sim.ok(Input::StartJob(Box::new(spec)));
    let effects = sim.ok(Input::CancelJob { job: id.clone() });
    assert!(effects.iter().any(|e| matches!(e, Effect::CancelStep { step, .. } if step == "work")));
    assert_eq!(runs(&effects), [("cleanup".into(), 1)]);
    finish(&mut sim, &id, true);
    assert_eq!(sim.state.jobs[&id].state, JobState::Cancelled);
    assert!(sim.feed(Input::CancelJob { job: id }).is_err(), "already over");
}

#[test]
fn a_job_with_a_workspace_starts_once_it_is_made_and_renders_its_steps_there() {
    let mut sim = Sim::new();
    let nonce = Nonce::from_bits(9);
    let mut spec = job(vec![StepSpec {
        run: StepRun::Shell("echo ${var.name} on ${source.branch} in \"${workspace.path}\"".into()),
        ..step("hello", None, None)
    }]);
    spec.vars.insert("name".into(), "it's me".into());
    spec.workspace = Some(bosun_core::JobWorkspace {
        name: bosun_core::Name::parse("build").unwrap(),
        nonce: nonce.clone(),
        workspaces_root: "/state/workspaces".into(),
        kind: bosun_core::WorkspaceKind::Worktree(bosun_core::WorkBranch {
            repo: "/repo".into(),
            branch: "feature/auth".into(),
            base_ref: "HEAD".into(),
            base: "c0ffee".into(),
        }),
        settings_from: None,
        pool: None,
    });
    let id = spec.id.clone();
    let effects = sim.ok(Input::StartJob(Box::new(spec)));
    assert!(runs(&effects).is_empty(), "waits for its workspace");
    assert!(effects.iter().any(|e| matches!(e, Effect::CreateWorkspace { .. })));
    let ws = bosun_core::WorkspaceId::new(&bosun_core::Name::parse("build").unwrap(), &nonce);
    let effects = sim.ok(Input::WorkspaceCreated { id: ws.clone() });
    let Some(Effect::RunStep { run: StepRun::Shell(cmd), env, cwd, .. }) =
        effects.iter().find(|e| matches!(e, Effect::RunStep { .. }))
    else {
        panic!("{effects:?}")
    };
    // Values are never in the text: it names them, and they come in the environment.
    assert_eq!(cmd, "echo \"${BOSUN_VAR_NAME}\" on \"${BOSUN_SOURCE_BRANCH}\" in \"${BOSUN_WORKSPACE_PATH}\"");
    assert_eq!(env["BOSUN_VAR_NAME"], "it's me");
    assert_eq!(env["BOSUN_SOURCE_BRANCH"], "feature/auth");
    assert_eq!(env["BOSUN_WORKSPACE_PATH"], "/state/workspaces/ws-build-90000000");
    assert_eq!(cwd, &std::path::PathBuf::from("/state/workspaces/ws-build-90000000"));
    let refused = sim.feed(Input::RemoveWorkspace { id: ws, force: true, probe: Default::default() });
    assert!(matches!(refused, Err(bosun_core::Rejection::WorkspaceOfJob { .. })), "{refused:?}");
    finish(&mut sim, &id, true);
    assert_eq!(sim.state.jobs[&id].state, JobState::Done);
}

#[test]
fn after_a_restart_a_running_shell_step_runs_again() {
    let mut sim = Sim::new();
    let spec = job(vec![step("build", None, None)]);
    let id = spec.id.clone();
    sim.ok(Input::StartJob(Box::new(spec)));
    let effects = sim.ok(Input::Reconcile(Default::default()));
    assert_eq!(runs(&effects), [("build".into(), 1)], "the same try, again");
    finish(&mut sim, &id, true);
    assert_eq!(sim.state.jobs[&id].state, JobState::Done);
}

/// A parent whose `checks` step runs the job `verify` (lint, then test), then goes to `ship`.
fn parent_with_child() -> JobSpec {
    let mut verify = job(vec![step("lint", next("test"), None), step("test", None, None)]);
    verify.name = "verify".into();
    let mut checks = step("checks", next("ship"), next("repair"));
    checks.run = StepRun::Job("verify".into());
    let mut parent = job(vec![checks, step("ship", None, None), step("repair", Some(Next::Fail), None)]);
    parent.children.insert("verify".into(), verify);
    parent
}

/// The running job run as a step of `parent`.
fn child_of(sim: &Sim, parent: &JobId) -> JobId {
    let running = |j: &&bosun_core::Job| j.spec.parent.as_ref().is_some_and(|(p, _, _)| p == parent);
    sim.state.jobs.values().filter(running).find(|j| !j.state.is_over()).unwrap().spec.id.clone()
}

#[test]
fn a_job_step_runs_the_job_and_its_end_moves_the_parent_on() {
    let mut sim = Sim::new();
    let spec = parent_with_child();
    let id = spec.id.clone();
    let effects = sim.ok(Input::StartJob(Box::new(spec)));
    assert_eq!(runs(&effects), [("lint".into(), 1)], "the child's first step");
    let child = child_of(&sim, &id);
    assert_eq!(sim.state.jobs[&child].spec.parent, Some((id.clone(), "checks".into(), 1)));
    assert_eq!(runs(&finish(&mut sim, &child, true)), [("test".into(), 1)]);
    assert_eq!(runs(&finish(&mut sim, &child, true)), [("ship".into(), 1)], "the child done: the parent goes on");
    assert_eq!(sim.state.jobs[&child].state, JobState::Done);
    finish(&mut sim, &id, true);
    assert_eq!(sim.state.jobs[&id].state, JobState::Done);
}

#[test]
fn a_failed_job_step_follows_on_fail_and_a_cancel_takes_the_child_with_it() {
    let mut sim = Sim::new();
    let spec = parent_with_child();
    let id = spec.id.clone();
    sim.ok(Input::StartJob(Box::new(spec)));
    let child = child_of(&sim, &id);
    assert_eq!(runs(&finish(&mut sim, &child, false)), [("repair".into(), 1)], "the parent's on_fail");
    assert!(matches!(&sim.state.jobs[&child].state, JobState::Failed { .. }));

    let mut sim = Sim::new();
    let spec = parent_with_child();
    sim.ok(Input::StartJob(Box::new(spec)));
    let child = child_of(&sim, &id);
    let effects = sim.ok(Input::CancelJob { job: id.clone() });
    assert!(effects.iter().any(|e| matches!(e, Effect::CancelStep { job, step } if *job == child && step == "lint")));
    assert_eq!(sim.state.jobs[&child].state, JobState::Cancelled);
    assert_eq!(sim.state.jobs[&id].state, JobState::Cancelled);
}

#[test]
fn a_failed_job_resumes_at_the_step_that_failed_with_its_visits_counted_afresh() {
    let mut sim = Sim::new();
    let spec = job(vec![step("build", next("test"), None), step("test", None, next("test"))]);
    let id = spec.id.clone();
    sim.ok(Input::StartJob(Box::new(spec)));
    finish(&mut sim, &id, true);
    for _ in 0..3 {
        finish(&mut sim, &id, false);
    }
    let JobState::Failed { reason } = &sim.state.jobs[&id].state else { panic!("{:?}", sim.state.jobs[&id].state) };
    assert!(reason.contains("max_step_visits"), "{reason}");
    assert_eq!(runs(&sim.ok(Input::ResumeJob { job: id.clone() })), [("test".into(), 1)], "where it stopped");
    assert_eq!(sim.state.jobs[&id].state, JobState::Running);
    assert_eq!(sim.state.jobs[&id].visits.get("test"), Some(&1), "visits counted afresh");
    finish(&mut sim, &id, true);
    assert_eq!(sim.state.jobs[&id].state, JobState::Done);
    assert!(sim.feed(Input::ResumeJob { job: id }).is_err(), "a done job is not resumed");
}

#[test]
fn a_job_tells_a_person_it_started_and_how_it_ended_with_its_values() {
    let notes = |effects: &[Effect]| -> Vec<String> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Notify { notice, desktop: true, webhook: None } => Some(notice.body.clone()),
                _ => None,
            })
            .collect()
    };
    let mut spec = job(vec![step("build", None, None)]);
    spec.vars.insert("name".into(), "auth".into());
    spec.notify = bosun_core::JobNotify {
        on_start: Some("building ${var.name}".into()),
        on_done: Some("${var.name} is built".into()),
        on_fail: Some("${var.name} did not build".into()),
        webhook: None,
    };
    let id = spec.id.clone();
    let mut sim = Sim::new();
    assert_eq!(notes(&sim.ok(Input::StartJob(Box::new(spec.clone())))), ["building auth"]);
    assert_eq!(notes(&finish(&mut sim, &id, true)), ["auth is built"]);

    let mut sim = Sim::new();
    sim.ok(Input::StartJob(Box::new(spec)));
    assert_eq!(notes(&finish(&mut sim, &id, false)), ["auth did not build (step \"build\" failed: exit 1)"]);
}

#[test]
fn a_job_with_a_webhook_and_no_messages_posts_its_end_only_and_the_delivery_is_recorded() {
    let hook = bosun_core::WebhookUrl::parse("http://127.0.0.1:9/hook").unwrap();
    let posts = |effects: &[Effect]| -> Vec<(bosun_core::NoticeKind, bool)> {
        effects
            .iter()
            .filter_map(|e| match e {
                Effect::Notify { notice, desktop, webhook: Some(_) } => Some((notice.kind, *desktop)),
                _ => None,
            })
            .collect()
    };
    let mut spec = job(vec![step("build", None, None)]);
    spec.notify.webhook = Some(hook);
    let id = spec.id.clone();
    let mut sim = Sim::new();
    assert!(posts(&sim.ok(Input::StartJob(Box::new(spec.clone())))).is_empty(), "a start without a message");
    assert_eq!(posts(&finish(&mut sim, &id, false)), [(bosun_core::NoticeKind::JobFailed, false)]);
    let sent = Input::WebhookSent { notice: bosun_core::NoticeKind::JobFailed, attempts: 2, error: None };
    sim.ok(sent);
    assert!(sim.log.iter().any(|e| matches!(e, Event::WebhookSent { attempts: 2, error: None, .. })));
}

/// A job in a folder workspace whose one step runs agent `fixer` with `context` and `cwd`.
fn agent_job(cwd: &str) -> JobSpec {
    let mut fix = step("fix", None, None);
    fix.run = StepRun::Agent("fixer".into());
    let mut spec = job(vec![fix]);
    spec.vars.insert("name".into(), "auth".into());
    spec.workspace = Some(bosun_core::JobWorkspace {
        name: bosun_core::Name::derive("build"),
        nonce: Nonce::from_bits(9),
        workspaces_root: "/state/workspaces".into(),
        kind: bosun_core::WorkspaceKind::Folder,
        settings_from: None,
        pool: None,
    });
    let plan = bosun_core::AgentPlan {
        command: vec!["claude".into()],
        driver: bosun_core::driver::DriverKind::Claude,
        prompt: Some("Fix ${var.name}".into()),
        context: Some("You work on ${var.name} in ${workspace.path}".into()),
        cwd: Some(cwd.into()),
        env: Default::default(),
        policy: Default::default(),
        backend: Default::default(),
        runtime: Default::default(),
        account: None,
    };
    spec.agents.insert("fixer".into(), plan);
    spec
}

fn start_in_workspace(sim: &mut Sim, spec: JobSpec) -> JobId {
    let id = spec.id.clone();
    sim.ok(Input::StartJob(Box::new(spec)));
    let ws = sim.state.jobs[&id].workspace.clone().unwrap();
    sim.ok(Input::WorkspaceCreated { id: ws });
    id
}

#[test]
fn an_agent_gets_its_context_before_its_prompt_and_runs_where_its_cwd_says() {
    let mut sim = Sim::new();
    start_in_workspace(&mut sim, agent_job("services/auth"));
    let agent = sim.state.agents.values().next().expect("the step's agent");
    let ws = sim.state.workspaces.values().next().unwrap().path.clone();
    assert_eq!(agent.cwd, ws.join("services/auth"));
    assert_eq!(agent.prompt.as_deref(), Some(format!("You work on auth in {}\n\nFix auth", ws.display()).as_str()));

    let mut sim = Sim::new();
    let id = start_in_workspace(&mut sim, agent_job("../elsewhere"));
    let JobState::Failed { reason } = &sim.state.jobs[&id].state else { panic!("{:?}", sim.state.jobs[&id]) };
    assert!(reason.contains("must be a path inside its workspace"), "{reason}");
    assert!(sim.state.agents.is_empty());
}

/// Starts `spec`'s job in its workspace and brings its step's agent up; returns the job and agent.
fn agent_up(sim: &mut Sim, spec: JobSpec) -> (JobId, AgentId) {
    let id = start_in_workspace(sim, spec);
    let agent = sim.state.agents.keys().next().cloned().expect("the step's agent");
    sim.ok(Input::SessionSpawned { agent: agent.clone(), pid: Some(100) });
    (id, agent)
}

/// Ends the agent's process with `status`; the job it ran must have failed with it.
fn agent_exits(sim: &mut Sim, job: &JobId, agent: &AgentId, status: ExitStatus) {
    let session = sim.state.agents[agent].session.clone();
    sim.ok(Input::SessionExited { session, status });
    let ended = &sim.state.jobs[job].state;
    assert!(matches!(ended, JobState::Failed { .. }), "{ended:?}");
}

#[test]
fn a_job_whose_agent_crashed_is_resumed_mid_step_by_the_same_agent_with_its_conversation() {
    let mut sim = Sim::new();
    let (id, agent) = agent_up(&mut sim, agent_job("."));
    let Driver::Claude { session_id } = sim.state.agents[&agent].driver.clone() else { panic!("a Claude agent") };
    let first_session = sim.state.agents[&agent].session.clone();
    agent_exits(&mut sim, &id, &agent, ExitStatus { code: None, signal: Some(9) });

    let effects = sim.ok(Input::ResumeJob { job: id.clone() });
    let spawned: Vec<_> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::SpawnSession { agent, session, command, replace, .. } => Some((agent, session, command, replace)),
            _ => None,
        })
        .collect();
    let [(who, session, command, replace)] = spawned.as_slice() else { panic!("one spawn: {effects:?}") };
    assert_eq!(*who, &agent, "the same agent");
    assert!(command.windows(2).any(|w| w[0] == "--resume" && w[1] == session_id), "{command:?}");
    assert_ne!(*session, &first_session, "a new session, as for any restart");
    assert_eq!(replace.as_ref(), Some(&first_session));
    assert_eq!(sim.state.agents.len(), 1, "no new agent");
    let a = &sim.state.agents[&agent];
    assert_eq!((a.restarts, &a.state), (1, &SessionState::Starting));
    let j = &sim.state.jobs[&id];
    assert_eq!((&j.state, j.step.as_deref(), j.attempt), (&JobState::Running, Some("fix"), 1), "the same step and try");
    assert_eq!(j.resumed_with.as_ref(), Some(&agent));
    assert!(sim.log.iter().any(|e| matches!(e, Event::StepResumed { agent: a, .. } if *a == agent)));

    // The conversation goes on; once the agent's work is done, so is the job.
    sim.ok(Input::SessionSpawned { agent: agent.clone(), pid: Some(101) });
    let session = sim.state.agents[&agent].session.clone();
    sim.ok(Input::SessionExited { session, status: ExitStatus::code(0) });
    assert_eq!(sim.state.jobs[&id].state, JobState::Done);
}

#[test]
fn a_job_whose_agent_was_lost_and_escalated_is_resumed_mid_step_and_the_escalation_settled() {
    let mut sim = Sim::new();
    let (id, agent) = agent_up(&mut sim, agent_job("."));
    let session = sim.state.agents[&agent].session.clone();
    sim.ok(Input::SessionClosed { session });
    assert_eq!(sim.state.open_escalations().count(), 1, "a person is asked about the lost agent");
    assert!(matches!(sim.state.jobs[&id].state, JobState::Failed { .. }));

    sim.ok(Input::ResumeJob { job: id.clone() });
    assert_eq!(sim.state.open_escalations().count(), 0, "the resume settled it");
    assert_eq!((sim.state.agents[&agent].restarts, sim.state.jobs[&id].resumed_with.as_ref()), (1, Some(&agent)));
    assert!(sim.feed(Input::ResumeJob { job: id }).is_err(), "a running job is not resumed");
}

#[test]
fn a_job_whose_shell_step_failed_is_resumed_from_the_start_of_the_step() {
    let mut sim = Sim::new();
    let spec = job(vec![step("build", None, None)]);
    let id = spec.id.clone();
    sim.ok(Input::StartJob(Box::new(spec)));
    finish(&mut sim, &id, false);
    let effects = sim.ok(Input::ResumeJob { job: id.clone() });
    assert_eq!(runs(&effects), [("build".into(), 1)], "the step runs again");
    assert_eq!(sim.state.jobs[&id].resumed_with, None);
    assert!(!sim.log.iter().any(|e| matches!(e, Event::StepResumed { .. })));
}

#[test]
fn a_job_whose_agent_ended_failed_by_its_policy_is_resumed_from_the_start_of_the_step_by_a_new_agent() {
    let mut spec = agent_job(".");
    let policy = serde_json::from_value(serde_json::json!({ "on_idle": { "action": "fail" } })).unwrap();
    spec.agents.get_mut("fixer").unwrap().policy = policy;
    let mut sim = Sim::new();
    let (id, first) = agent_up(&mut sim, spec);
    sim.see(&first, Source::Hook, Observation::Idle);
    assert_eq!(sim.state.agents[&first].outcome, Some(Outcome::Failed), "its policy said fail");
    agent_exits(&mut sim, &id, &first, ExitStatus::UNKNOWN);

    let effects = sim.ok(Input::ResumeJob { job: id.clone() });
    assert_eq!(sim.state.agents.len(), 2, "a second agent, with an id of its own");
    let second = sim.state.agents.keys().find(|a| **a != first).cloned().unwrap();
    let spawned = effects.iter().find_map(|e| match e {
        Effect::SpawnSession { agent, command, .. } => Some((agent, command)),
        _ => None,
    });
    let (who, command) = spawned.expect("the new agent is spawned");
    assert_eq!(who, &second);
    assert!(command.iter().any(|c| c == "--session-id") && !command.iter().any(|c| c == "--resume"), "{command:?}");
    assert_eq!(sim.state.agents[&first].restarts, 0, "the first is left as it ended");
    assert_eq!(sim.state.jobs[&id].resumed_with, None);
}

#[test]
fn a_job_step_whose_job_ends_at_once_counts_each_visit_once() {
    let mut empty = job(vec![]);
    empty.name = "verify".into();
    let mut again = step("again", next("again"), None);
    again.run = StepRun::Job("verify".into());
    let mut spec = job(vec![step("first", next("again"), None), again]);
    spec.max_step_visits = 4;
    spec.children.insert("verify".into(), empty);
    let id = spec.id.clone();
    let mut sim = Sim::new();
    sim.ok(Input::StartJob(Box::new(spec)));
    finish(&mut sim, &id, true);
    let JobState::Failed { reason } = &sim.state.jobs[&id].state else { panic!("{:?}", sim.state.jobs[&id]) };
    assert!(reason.contains("entered 4 times"), "{reason}");
    assert_eq!(sim.state.jobs[&id].visits["again"], 4);
}

#[test]
fn a_job_step_whose_agent_runs_in_a_pod_ends_only_once_its_pod_said_what_its_save_did() {
    let mut spec = agent_job(".");
    let source = bosun_core::PodSource {
        remote: Some("git://r".into()),
        repo: "/r".into(),
        base: "c0ffee".into(),
        branch: "b".into(),
    };
    let pod = bosun_core::Pod { source: Some(Box::new(source)), ..bosun_core::Pod::new("default", "agent:1") };
    let ws = spec.workspace.as_mut().unwrap();
    ws.kind = bosun_core::WorkspaceKind::Pod(bosun_core::PodClone {
        git: bosun_core::WorkBranch {
            repo: "/repo".into(),
            branch: "b".into(),
            base_ref: "HEAD".into(),
            base: "c0ffee".into(),
        },
        remote: Some("git://r".into()),
        claim: None,
    });
    spec.agents.get_mut("fixer").unwrap().runtime = bosun_core::Runtime::K8s(pod);
    let mut sim = Sim::new();
    let (id, agent) = agent_up(&mut sim, spec);
    // Killed (its policy's `done`, say): its host saves as it ends, after the session is gone.
    sim.ok(Input::KillAgent { agent: agent.clone() });
    sim.ok(Input::SessionKilled { agent: agent.clone() });
    assert!(sim.state.agents[&agent].state.is_dead());
    assert!(matches!(sim.state.jobs[&id].state, JobState::Running), "the step waits for the save");
    let session = sim.state.agents[&agent].session.clone();
    let saved = Some(bosun_core::SavedWork { pushed: true, dirty: false, said: "pushed".into() });
    sim.ok(Input::PodEnded { session, status: ExitStatus::code(143), saved });
    assert!(!matches!(sim.state.jobs[&id].state, JobState::Running), "{:?}", sim.state.jobs[&id].state);
}

/// A job's budget: its agent starts with what is left of it (and is paused at it); once it is
/// spent, the job enters no new step.
#[test]
fn a_jobs_agents_start_with_what_is_left_of_its_budget_and_a_spent_one_enters_no_step() {
    let mut spec = agent_job("services/auth");
    spec.steps[0].on_done = Some(Next::Step("again".into()));
    let mut again = step("again", None, None);
    again.run = StepRun::Agent("fixer".into());
    spec.steps.push(again);
    spec.budget = Some("1ktok".parse().unwrap());
    let mut sim = Sim::new();
    let (job, agent) = agent_up(&mut sim, spec);
    assert_eq!(sim.state.agents[&agent].policy.budget, Some("1ktok".parse().unwrap()), "all of it, to start with");
    let line = r#"{"type":"assistant","message":{"id":"m1","model":"claude-opus-5-5","usage":{"input_tokens":1500,"output_tokens":10}}}"#;
    sim.ok(Input::LogLines { agent: agent.clone(), session_log: true, lines: vec![line.to_owned()] });
    assert!(sim.state.agents[&agent].paused.is_some(), "its agent is paused at the job's budget");
    // Its step ends (a person ended the agent's work): the next is not entered.
    let session = sim.state.agents[&agent].session.clone();
    sim.ok(Input::SessionExited { session, status: ExitStatus { code: Some(0), signal: None } });
    let JobState::Failed { reason } = &sim.state.jobs[&job].state else { panic!("{:?}", sim.state.jobs[&job].state) };
    assert!(reason.contains("step \"again\" was not started: the job's budget of 1ktok is spent"), "{reason}");
    assert_eq!(sim.state.agents.len(), 1, "no agent started for it");
}
