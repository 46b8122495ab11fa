//! Liveness: never silently stuck. A world answers the core's effects (or fails them), agents
//! report and die as they like, time passes and bosun crashes — losing the effects in flight,
//! some of which ran — and starts again with what it finds. After every decision each live
//! agent and each running job has something that will move it on (`State::stuck` is empty), and
//! each answer the core counts on is one the world still owes.

mod support;

use std::collections::BTreeMap;

use bosun_core::driver::claude::HookPayload;
use bosun_core::driver::DriverKind;
use bosun_core::{
    AgentId, Awaited, Effect, ExitStatus, Input, JobId, JobSpec, JobWorkspace, Mover, Name, Next, Nonce, Observation,
    Policy, Reality, SessionName, SessionSeen, Source, StepRun, StepSpec, Subject, Timestamp,
};
use proptest::prelude::*;
use support::Sim;

/// What the world does next.
#[derive(Clone, Debug)]
enum Step {
    /// Starts agent `n` (0 generic, else Claude) on its own.
    StartAgent(u64),
    /// Starts job `n`: an agent step, then a shell step.
    StartJob(u64),
    /// Answers the pending effect at this index (modulo), as asked (true) or failed.
    Answer(usize, bool),
    /// The agent in the session at this index reports.
    Report(usize, u8),
    /// The process in the session at this index ends with this code.
    Exit(usize, i32),
    /// A person types into agent `n`, kills it, or resolves the oldest open escalation.
    Send(u64),
    Kill(u64),
    Resolve(bool),
    /// Time passes by this many seconds; due timers fire.
    Tick(u64),
    /// bosun is SIGKILLed: each effect in flight ran (true) or not, and nothing of it was
    /// recorded; while it is down the agents go on and their reports are spooled (session,
    /// report); it starts again, reconciles with what it finds, then hears the spooled reports.
    Crash(Vec<bool>, Vec<(usize, u8)>),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        1 => (0..3u64).prop_map(Step::StartAgent),
        1 => (0..2u64).prop_map(Step::StartJob),
        8 => (0..8usize, prop::bool::weighted(0.85)).prop_map(|(i, ok)| Step::Answer(i, ok)),
        6 => (0..4usize, 0..7u8).prop_map(|(i, o)| Step::Report(i, o)),
        1 => (0..4usize, 0..3i32).prop_map(|(i, c)| Step::Exit(i, c)),
        1 => (0..3u64).prop_map(Step::Send),
        1 => (0..3u64).prop_map(Step::Kill),
        1 => any::<bool>().prop_map(Step::Resolve),
        4 => (0..20u64).prop_map(Step::Tick),
        2 => (prop::collection::vec(any::<bool>(), 8), prop::collection::vec((0..4usize, 0..8u8), 0..4))
            .prop_map(|(ran, spooled)| Step::Crash(ran, spooled)),
    ]
}

/// Every trigger has a chain, with cooldowns, gates, resumes and escalations in it.
fn busy_policy() -> Policy {
    let chain = |s: &[&str]| bosun_core::Chain(s.iter().map(|x| x.parse().unwrap()).collect());
    Policy {
        on_idle: chain(&["nudge*2:status", "gate:make check", "resume:carry on", "nudge+5s:status again", "done"]),
        on_dead: chain(&["resume*1:Carry on"]),
        on_error: chain(&["nudge+10s:Retry", "escalate"]),
        on_prompt: chain(&["escalate"]),
        grace_ms: 3_000,
        ..Policy::default()
    }
}

struct World {
    sim: Sim,
    /// Effects asked for and not answered yet.
    pending: Vec<Effect>,
    /// Sessions on bosun's server, each with its process.
    sessions: BTreeMap<SessionName, Proc>,
    pids: u32,
}

/// An agent's process as the world knows it.
#[derive(Clone, Debug)]
struct Proc {
    agent: AgentId,
    generation: u32,
    exit: Option<ExitStatus>,
    /// At work (it will report again), or waiting for input (it says nothing until it gets
    /// some).
    working: bool,
    /// Started with a message on its command line (its first prompt, or its resume's), which it
    /// works on once it has said it started; None once it has said so.
    prompted: Option<bool>,
}

impl World {
    fn new() -> Self {
        Self { sim: Sim::new(), pending: Vec::new(), sessions: BTreeMap::new(), pids: 100 }
    }

    /// Feeds an input; keeps the effects whose answers the world owes, and carries out at
    /// once the keys it types.
    fn feed(&mut self, input: Input) {
        if let Ok(effects) = self.sim.feed(input) {
            for e in effects {
                if awaited(&e) {
                    self.pending.push(e);
                } else {
                    self.run(&e);
                }
            }
        }
    }

    fn agent(&self, n: u64) -> AgentId {
        let spec = support::spec(n);
        AgentId::new(&spec.nonce)
    }

    fn live_sessions(&self) -> Vec<SessionName> {
        self.sessions.iter().filter(|(_, p)| p.exit.is_none()).map(|(s, _)| s.clone()).collect()
    }

    /// What the process in live session `i` reports now (`o` picks), as it changes it; none
    /// when it has nothing to say (it waits for input).
    fn report(&mut self, i: usize, o: u8, spooled_at: Option<Timestamp>) -> Option<Input> {
        let live = self.live_sessions();
        let session = live.get(i % live.len().max(1))?.clone();
        let generic = self.agent(0);
        let p = self.sessions.get_mut(&session)?;
        let (agent, generation) = (p.agent.clone(), p.generation);
        if agent == generic {
            // The generic agent: its screen, whatever it shows.
            let observation = match o {
                0 | 1 => Observation::Working,
                _ => Observation::Idle,
            };
            return Some(Input::Observed { agent, source: Source::Screen, observation, log: None, generation: None });
        }
        let hook = |name: &str| HookPayload { hook_event_name: name.into(), ..HookPayload::default() };
        let payload = match (p.working, o) {
            (true, 0 | 1) => HookPayload { tool_name: Some("Bash".into()), ..hook("PostToolUse") },
            (true, 2 | 3) => HookPayload { last_assistant_message: Some(format!("done {o}")), ..hook("Stop") },
            (true, 4) => HookPayload { tool_name: Some("Bash".into()), ..hook("PermissionRequest") },
            (true, 5) => HookPayload { error: Some("rate_limit".into()), ..hook("StopFailure") },
            (true, _) if p.prompted.is_some() => HookPayload { source: Some("startup".into()), ..hook("SessionStart") },
            (true, _) => HookPayload { tool_name: Some("Read".into()), ..hook("PostToolUse") },
            // Waiting, it only says so again, now and then.
            (false, _) => HookPayload { notification_type: Some("idle_prompt".into()), ..hook("Notification") },
        };
        p.working = match payload.hook_event_name.as_str() {
            "SessionStart" => p.prompted.take() == Some(true),
            name => name == "PostToolUse",
        };
        let raw = serde_json::to_string(&payload).unwrap_or_default();
        let report = DriverKind::Claude.behaviour().take_report(&payload.hook_event_name, &raw);
        Some(Input::Report { agent, generation: Some(generation), spooled_at, report })
    }

    /// What an effect does to the world when it runs.
    fn run(&mut self, e: &Effect) {
        match e {
            Effect::SpawnSession { agent, session, replace, .. } => {
                if let Some(old) = replace {
                    self.sessions.remove(old);
                }
                let a = self.sim.state.agents.get(agent);
                let generation = a.map_or(0, |a| a.restarts);
                let prompted = a.is_some_and(|a| match a.restarts {
                    0 => a.prompt.is_some(),
                    _ => a.resume_message.is_some(),
                });
                let p = Proc { agent: agent.clone(), generation, exit: None, working: true, prompted: Some(prompted) };
                self.sessions.insert(session.clone(), p);
            }
            Effect::KillSession { session, .. } => {
                self.sessions.remove(session);
            }
            // Typed, a message (or an answer to a dialog) starts a turn.
            Effect::SendText { session, .. } | Effect::PressKeys { session, .. } => {
                if let Some(p) = self.sessions.get_mut(session).filter(|p| p.exit.is_none()) {
                    p.working = true;
                }
            }
            _ => {}
        }
    }

    /// Runs the effect and gives its answer (or its failure).
    fn answer(&mut self, e: Effect, ok: bool) {
        if ok {
            self.run(&e);
        }
        let input = match e {
            Effect::CreateWorkspace { id, .. } if ok => Input::WorkspaceCreated { id },
            Effect::CreateWorkspace { id, .. } => {
                Input::WorkspaceCreateFailed { id, error: "no room".into(), nothing_left: false }
            }
            Effect::SpawnSession { agent, .. } if ok => {
                self.pids += 1;
                Input::SessionSpawned { agent, pid: Some(self.pids) }
            }
            Effect::SpawnSession { agent, .. } => Input::SessionSpawnFailed { agent, error: "no tmux".into() },
            Effect::KillSession { agent, .. } if ok => Input::SessionKilled { agent },
            Effect::KillSession { agent, .. } => Input::SessionKillFailed { agent, error: "EPERM".into() },
            Effect::SendText { message, .. } if ok => Input::TextDelivered { message },
            Effect::SendText { message, .. } => Input::TextFailed { message, error: "gone".into() },
            Effect::RunGate { agent, run, .. } => Input::GateFinished { agent, run, code: Some(i32::from(!ok)) },
            Effect::Classify { agent, turn, said, .. } => {
                let answer = if ok { Ok("done".to_owned()) } else { Err("classifier failed".to_owned()) };
                Input::Classified { agent, turn, said, answer }
            }
            Effect::InspectWorkspace { id, .. } => Input::WorkspaceInspected { id, dirty: Some(!ok), ahead: 0 },
            Effect::RemoveWorkspace { id, .. } if ok => Input::WorkspaceRemoved { id },
            Effect::RemoveWorkspace { id, .. } => {
                Input::WorkspaceRemoveFailed { id, error: "busy".into(), dirty: false }
            }
            Effect::RunStep { job, step, attempt, .. } => {
                Input::StepFinished { job, step, attempt, ok, detail: (!ok).then(|| "exit 1".into()) }
            }
            other => unreachable!("not awaited: {other:?}"),
        };
        self.feed(input);
    }

    fn step(&mut self, s: &Step) {
        match s {
            Step::StartAgent(n) => {
                let spec = if *n == 0 { support::spec(*n) } else { support::claude(*n, busy_policy()) };
                self.feed(Input::StartAgent(Box::new(spec)));
            }
            Step::StartJob(n) => self.feed(Input::StartJob(Box::new(job(*n)))),
            Step::Answer(i, ok) if !self.pending.is_empty() => {
                let e = self.pending.remove(i % self.pending.len());
                self.answer(e, *ok);
            }
            Step::Answer(..) => {}
            Step::Report(i, o) => {
                if let Some(input) = self.report(*i, *o, None) {
                    self.feed(input);
                }
            }
            Step::Exit(i, code) => {
                let live = self.live_sessions();
                let Some(session) = live.get(i % live.len().max(1)).cloned() else { return };
                let status = ExitStatus::code(*code);
                if let Some(p) = self.sessions.get_mut(&session) {
                    p.exit = Some(status);
                }
                self.feed(Input::SessionExited { session, status });
            }
            Step::Send(n) => {
                self.feed(Input::SendText { agent: self.agent(*n), text: "look again".into(), raw: false, now: false })
            }
            Step::Kill(n) => self.feed(Input::KillAgent { agent: self.agent(*n) }),
            Step::Resolve(with_message) => {
                let Some(e) = self.sim.state.open_escalations().next().map(|e| e.id) else { return };
                let message = with_message.then(|| "go on".to_owned());
                self.feed(Input::Resolve { escalation: e, message });
            }
            Step::Tick(secs) => {
                self.sim.advance(secs * 1_000);
                loop {
                    let due = self.sim.state.timers.values().filter(|t| t.at <= self.sim.clock).map(|t| t.id).next();
                    let Some(id) = due else { break };
                    self.feed(Input::TimerFired { id });
                    self.check(&format!("timer {id:?} fired"));
                }
            }
            Step::Crash(ran, spooled) => {
                for (i, e) in std::mem::take(&mut self.pending).iter().enumerate() {
                    if ran.get(i % ran.len()).copied().unwrap_or(false) {
                        self.run(e);
                    }
                }
                // Down a while: the agents go on, their reports kept in the spool.
                let mut spool = Vec::new();
                for (i, o) in spooled {
                    self.sim.advance(700);
                    spool.extend(self.report(*i, *o, Some(self.sim.clock)));
                }
                self.sim.advance(700);
                let sessions = self
                    .sessions
                    .iter()
                    .map(|(s, p)| SessionSeen { session: s.clone(), pid: Some(7), exit: p.exit })
                    .collect();
                self.feed(Input::Reconcile(Reality { sessions, missing_dirs: Vec::new(), slots: Vec::new() }));
                for input in spool {
                    self.feed(input);
                }
                self.feed(Input::CheckLiveness);
            }
        }
    }

    /// The log, an event a line, the agents' records left out.
    fn told(&self) -> String {
        let line = |e: &bosun_core::Event| match e {
            bosun_core::Event::AgentCreated { agent } => format!("AgentCreated {}", agent.id),
            bosun_core::Event::JobCreated { job } => format!("JobCreated {}", job.spec.id),
            other => format!("{other:?}"),
        };
        self.sim.log.iter().map(line).collect::<Vec<_>>().join("\n")
    }

    /// The invariant: nothing is stuck, and each answer counted on is owed.
    fn check(&self, after: &str) {
        let state = &self.sim.state;
        let stuck = state.stuck();
        assert!(stuck.is_empty(), "after {after}: stuck: {stuck:#?}\nlog:\n{}", self.told());
        let movers = state.agents.values().filter(|a| !a.state.is_dead()).map(|a| state.agent_mover(a));
        let movers = movers.chain(state.jobs.values().filter(|j| !j.state.is_over()).map(|j| state.job_mover(j)));
        // An agent taken to be at work is: its process will report again.
        for a in state.agents.values().filter(|a| !a.state.is_dead() && a.id != self.agent(0)) {
            let idle = self.sessions.get(&a.session).filter(|p| p.exit.is_none() && !p.working);
            if let (Ok(Mover::Reports), Some(p)) = (state.agent_mover(a), idle) {
                panic!(
                    "after {after}: agent {} is taken to be at work, but its process waits for input and will not \
                     report again: {p:?}\nlog:\n{}",
                    a.id,
                    self.told()
                );
            }
        }
        for m in movers {
            if let Ok(Mover::Awaits(w)) = m {
                assert!(
                    self.pending.iter().any(|e| answers(e, &w)),
                    "after {after}: waits for {w:?}, which no effect in flight will bring: {:#?}\nlog:\n{}",
                    self.pending,
                    self.told()
                );
            }
        }
    }
}

/// Whether the effect's answer is awaited (the rest is bookkeeping, notices and keys).
fn awaited(e: &Effect) -> bool {
    matches!(
        e,
        Effect::CreateWorkspace { .. }
            | Effect::SpawnSession { .. }
            | Effect::KillSession { .. }
            | Effect::SendText { .. }
            | Effect::RunGate { .. }
            | Effect::Classify { .. }
            | Effect::InspectWorkspace { .. }
            | Effect::RemoveWorkspace { .. }
            | Effect::RunStep { .. }
    )
}

/// Whether effect `e` brings what `w` waits for.
fn answers(e: &Effect, w: &Awaited) -> bool {
    match (e, w) {
        (Effect::SpawnSession { agent, .. }, Awaited::Spawn(a)) => agent == a,
        (Effect::KillSession { agent, .. }, Awaited::Kill(a)) => agent == a,
        (Effect::SendText { message, .. }, Awaited::Delivery(m)) => message == m,
        (Effect::Classify { agent, .. }, Awaited::Classify(a)) => agent == a,
        (Effect::RunGate { agent, .. }, Awaited::Gate(a)) => agent == a,
        (Effect::CreateWorkspace { id, .. }, Awaited::Workspace(w)) => id == w,
        (Effect::RunStep { job, .. }, Awaited::Step(j)) => job == j,
        _ => false,
    }
}

/// Job `n`: in a worktree of its own, agent `worker` (Claude, the busy policy) works, then a
/// shell step checks.
fn job(n: u64) -> JobSpec {
    let mut spec = support::shell_job(JobId::new(&Nonce::from_bits(1000 + n)), "make check", None);
    let work = StepSpec {
        name: "work".into(),
        run: StepRun::Agent("worker".into()),
        on_done: Some(Next::Step("fix".into())),
        on_fail: None,
        on_cancel: None,
        attempts: 2,
        backoff_ms: 5_000,
    };
    spec.steps.insert(0, work);
    spec.workspace = Some(JobWorkspace {
        name: Name::derive("job"),
        nonce: Nonce::from_bits(2000 + n),
        workspaces_root: "/state/workspaces".into(),
        kind: bosun_core::WorkspaceKind::Folder,
        settings_from: None,
        pool: None,
    });
    let plan = bosun_core::AgentPlan {
        command: vec!["claude".into()],
        driver: DriverKind::Claude,
        prompt: Some("do the work".into()),
        context: None,
        cwd: None,
        env: Default::default(),
        policy: busy_policy(),
        backend: Default::default(),
        runtime: Default::default(),
        account: None,
    };
    spec.agents.insert("worker".into(), plan);
    spec
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// After every decision, with effects answered, failed or lost to crashes in any order,
    /// every live agent and running job has something that will move it on.
    #[test]
    fn nothing_is_ever_silently_stuck(steps in prop::collection::vec(step(), 0..120)) {
        let mut w = World::new();
        for (i, s) in steps.iter().enumerate() {
            w.step(s);
            w.check(&format!("step {i}: {s:?}"));
        }
    }
}

/// The one the soak found (seed 202): the nudge that followed a restart was typed, but the
/// reports of the turn it started were lost with a crash; the agent stays idle, and once its
/// Enter was pressed again to no avail, nothing was left to move it on. Now it goes on with
/// its chain after the grace.
#[test]
fn an_idle_agent_whose_nudge_brought_no_report_goes_on_with_its_chain() {
    let chain = |s: &[&str]| bosun_core::Chain(s.iter().map(|x| x.parse().unwrap()).collect());
    let policy = Policy { on_idle: chain(&["nudge:status three", "done"]), grace_ms: 2_000, ..Policy::default() };
    let mut sim = Sim::new();
    let (a, w) = sim.start_with(support::claude(1, policy));
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    sim.see(&a, Source::Hook, Observation::Working);
    sim.see(&a, Source::Hook, Observation::Idle);
    let typed = sim.in_flight();
    assert_eq!(typed.len(), 1, "the nudge is typed");
    sim.ok(Input::TextDelivered { message: typed[0] });
    // No report comes: not the turn's start, not its end. Enter is pressed again once.
    for _ in 0..2 {
        sim.advance(3_000);
        let effects = sim.fire_due();
        assert!(!effects.iter().any(|e| matches!(e, Effect::KillSession { .. })), "not yet: {effects:?}");
        assert!(sim.state.stuck().is_empty(), "{:#?}", sim.state.stuck());
    }
    sim.advance(1_999);
    assert!(sim.fire_due().is_empty(), "the grace has not passed");
    sim.advance(1);
    let effects = sim.fire_due();
    assert!(effects.iter().any(|e| matches!(e, Effect::KillSession { .. })), "`done` acts: {effects:?}");
    assert_eq!(sim.state.agents[&a].outcome, Some(bosun_core::Outcome::Done));
}

/// What is found stuck at a start is put to a person, saying what was lost.
#[test]
fn a_start_that_finds_an_agent_stuck_asks_a_person_what_was_lost() {
    let chain = |s: &[&str]| bosun_core::Chain(s.iter().map(|x| x.parse().unwrap()).collect());
    let policy = Policy { on_idle: chain(&["nudge:status", "done"]), ..Policy::default() };
    let mut sim = Sim::new();
    let (a, w) = sim.start_with(support::claude(1, policy));
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    sim.see(&a, Source::Hook, Observation::Working);
    sim.see(&a, Source::Hook, Observation::Idle);
    let typed = sim.in_flight();
    // A log written by an older bosun, or a fault of this one: the agent is idle, its nudge
    // typed and confirmed, and nothing is left that will move it on.
    sim.ok(Input::TextDelivered { message: typed[0] });
    let timers: Vec<_> = sim.state.timers.keys().copied().collect();
    for id in timers {
        bosun_core::apply(&mut sim.state, &bosun_core::Event::TimerCleared { id });
    }
    assert_eq!(sim.state.stuck().len(), 1, "stuck: {:?}", sim.state.stuck());
    assert!(matches!(&sim.state.stuck()[0].subject, Subject::Agent(id) if id == &a));

    let session = sim.state.agents[&a].session.clone();
    let seen = SessionSeen { session, pid: Some(7), exit: None };
    sim.ok(Input::Reconcile(Reality { sessions: vec![seen], missing_dirs: Vec::new(), slots: Vec::new() }));
    sim.ok(Input::CheckLiveness);
    let open: Vec<_> = sim.state.open_escalations().filter(|e| e.agent == a).collect();
    assert_eq!(open.len(), 1, "a person is asked: {:?}", sim.state.escalations);
    assert!(open[0].reason.contains("nothing will move it on"), "{}", open[0].reason);
    assert!(open[0].reason.contains("on_idle chain at step 1 of 2"), "{}", open[0].reason);
    assert!(sim.state.stuck().is_empty());
    // Asked once: a second start asks nothing more.
    sim.ok(Input::CheckLiveness);
    assert_eq!(sim.state.open_escalations().count(), 1);
}

fn hook(sim: &Sim, a: &AgentId, event: &str, at: u64) -> Input {
    let payload = HookPayload {
        hook_event_name: event.into(),
        last_assistant_message: (event == "Stop").then(|| format!("said at {at}")),
        ..HookPayload::default()
    };
    let generation = Some(sim.state.agents[a].restarts);
    Input::Report {
        agent: a.clone(),
        generation,
        spooled_at: Some(Timestamp::from_millis(at)),
        report: DriverKind::Claude.behaviour().take_report(event, &serde_json::to_string(&payload).unwrap_or_default()),
    }
}

/// A whole turn made while bosun was down is told from the spool after its start: its end
/// counts too (it was passed over as older than the turn's start, which was recorded when told).
#[test]
fn a_turn_kept_in_the_spool_is_told_to_its_end() {
    let chain = |s: &[&str]| bosun_core::Chain(s.iter().map(|x| x.parse().unwrap()).collect());
    let policy = Policy { on_idle: chain(&["nudge:status", "done"]), ..Policy::default() };
    let mut sim = Sim::new();
    let (a, w) = sim.start_with(support::claude(1, policy));
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
    sim.see(&a, Source::Hook, Observation::Working);
    sim.see(&a, Source::Hook, Observation::Idle);
    let typed = sim.in_flight();
    sim.ok(Input::TextDelivered { message: typed[0] });
    // bosun dies; the agent works on the nudge and ends its turn, both reports spooled.
    let t = sim.clock.as_millis();
    sim.advance(5_000);
    let session = sim.state.agents[&a].session.clone();
    let seen = SessionSeen { session, pid: Some(7), exit: None };
    sim.ok(Input::Reconcile(Reality { sessions: vec![seen], missing_dirs: Vec::new(), slots: Vec::new() }));
    sim.ok(hook(&sim, &a, "UserPromptSubmit", t + 1_000));
    let effects = sim.ok(hook(&sim, &a, "Stop", t + 3_000));
    assert!(effects.iter().any(|e| matches!(e, Effect::KillSession { .. })), "its chain's `done` acts: {effects:?}");
    assert_eq!(sim.state.agents[&a].outcome, Some(bosun_core::Outcome::Done));
}

/// An agent that came up while bosun was down, and reported meanwhile: what it reported counts.
#[test]
fn what_an_agent_reported_while_bosun_was_down_counts_though_its_start_was_seen_after() {
    let chain = |s: &[&str]| bosun_core::Chain(s.iter().map(|x| x.parse().unwrap()).collect());
    let policy = Policy { on_idle: chain(&["done"]), ..Policy::default() };
    let mut sim = Sim::new();
    let (a, w) = sim.start_with(support::claude(1, Policy { ..policy }));
    sim.ok(Input::WorkspaceCreated { id: w });
    // Its session was being started when bosun died; it started, worked and ended its turn.
    let t = sim.clock.as_millis();
    sim.advance(5_000);
    let seen = SessionSeen { session: a.session(), pid: Some(7), exit: None };
    sim.ok(Input::Reconcile(Reality { sessions: vec![seen], missing_dirs: Vec::new(), slots: Vec::new() }));
    assert_eq!(sim.state.agents[&a].state, bosun_core::SessionState::Running);
    sim.ok(hook(&sim, &a, "UserPromptSubmit", t + 1_000));
    sim.ok(hook(&sim, &a, "Stop", t + 3_000));
    assert_eq!(sim.state.agents[&a].outcome, Some(bosun_core::Outcome::Done), "{:?}", sim.state.agents[&a].state);
}
