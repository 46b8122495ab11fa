//! Property tests of the core's invariants over arbitrary input sequences.

mod support;

use bosun_core::{apply, Event, ExitStatus, Input, Reality, SessionSeen, State, WorkspaceProbe, WorkspaceState};
use proptest::prelude::*;
use support::{spec, Sim};

/// An input about agent/workspace number `n % 3`, with whatever else it needs.
#[derive(Clone, Debug)]
enum Step {
    Start,
    Created,
    CreateFailed(bool),
    Spawned,
    Exited(i32),
    Closed,
    Kill,
    Killed,
    Inspected(bool),
    Remove {
        dirty: bool,
        ahead: u32,
    },
    Removed,
    RemoveFailed(bool),
    Send,
    Delivered,
    Reconcile {
        alive: bool,
        missing: bool,
    },
    Observed,
    /// A driver report: (source, observation) by index.
    See(u8, u8),
    /// Time passes by this many seconds; due timers fire.
    Tick(u64),
    Gate(bool),
    Resolve,
    Output,
}

fn step() -> impl Strategy<Value = (u64, Step)> {
    let s = prop_oneof![
        Just(Step::Start),
        Just(Step::Created),
        any::<bool>().prop_map(Step::CreateFailed),
        Just(Step::Spawned),
        (0..4i32).prop_map(Step::Exited),
        Just(Step::Closed),
        Just(Step::Kill),
        Just(Step::Killed),
        any::<bool>().prop_map(Step::Inspected),
        (any::<bool>(), 0..3u32).prop_map(|(dirty, ahead)| Step::Remove { dirty, ahead }),
        Just(Step::Removed),
        any::<bool>().prop_map(Step::RemoveFailed),
        Just(Step::Send),
        Just(Step::Delivered),
        Just(Step::Observed),
        (any::<bool>(), any::<bool>()).prop_map(|(alive, missing)| Step::Reconcile { alive, missing }),
        (0..4u8, 0..7u8).prop_map(|(s, o)| Step::See(s, o)),
        (0..40u64).prop_map(Step::Tick),
        any::<bool>().prop_map(Step::Gate),
        Just(Step::Resolve),
        Just(Step::Output),
    ];
    (0..3u64, s)
}

fn input(n: u64, step: &Step, sim: &Sim) -> Input {
    let state = &sim.state;
    // Agent 0 is generic, the others Claude agents with a busy policy.
    let spec = if n == 0 { spec(n) } else { support::claude(n, busy_policy()) };
    let agent = bosun_core::AgentId::new(&spec.nonce);
    let ws = bosun_core::WorkspaceId::new(&spec.name, &spec.nonce);
    // The message being typed, if any: only what was sent can be delivered.
    let message = sim.in_flight().first().copied().unwrap_or(bosun_core::MessageId(1));
    match step.clone() {
        Step::Start => Input::StartAgent(Box::new(spec)),
        Step::Created => Input::WorkspaceCreated { id: ws },
        Step::CreateFailed(nothing_left) => Input::WorkspaceCreateFailed { id: ws, error: "boom".into(), nothing_left },
        Step::Spawned => Input::SessionSpawned { agent, pid: Some(1) },
        Step::Exited(code) => Input::SessionExited { session: agent.session(), status: ExitStatus::code(code) },
        Step::Closed => Input::SessionClosed { session: agent.session() },
        Step::Kill => Input::KillAgent { agent },
        Step::Killed => Input::SessionKilled { agent },
        Step::Inspected(dirty) => Input::WorkspaceInspected { id: ws, dirty: Some(dirty), ahead: 0 },
        Step::Remove { dirty, ahead } => {
            Input::RemoveWorkspace { id: ws, force: false, probe: WorkspaceProbe { dirty, commits_ahead: ahead } }
        }
        Step::Removed => Input::WorkspaceRemoved { id: ws },
        Step::RemoveFailed(dirty) => Input::WorkspaceRemoveFailed { id: ws, error: "no".into(), dirty },
        Step::Send => Input::SendText { agent, text: "go on".into(), raw: false, now: false },
        Step::Delivered => Input::TextDelivered { message },
        Step::Observed => Input::SessionsObserved { sessions: vec![], as_of: state.seq },
        Step::See(s, o) => {
            use bosun_core::{AgentError, Heartbeat, Observation as O, PromptKind, Source};
            let source = [Source::Screen, Source::Process, Source::Log, Source::Hook][s as usize];
            let observation = match o {
                0 => O::Started,
                1 => O::Working,
                2 => O::Idle,
                3 => O::Prompt { kind: PromptKind::Permission, asks: None },
                4 => O::Error { error: AgentError::RateLimited },
                5 => O::Activity { heartbeat: Heartbeat::LogWrite },
                _ => O::Prompt { kind: PromptKind::Setup, asks: None },
            };
            Input::Observed { agent, source, observation, log: None, generation: None }
        }
        Step::Tick(_) => Input::SessionsObserved { sessions: vec![], as_of: 0 },
        Step::Gate(pass) => {
            Input::GateFinished { agent, run: "make check".into(), code: Some(if pass { 0 } else { 1 }) }
        }
        Step::Resolve => Input::Resolve {
            escalation: state.escalations.keys().next().copied().unwrap_or(bosun_core::EscalationId(1)),
            message: Some("go on".into()),
        },
        Step::Output => Input::LogLines { agent, session_log: false, lines: vec!["$ ".into()] },
        Step::Reconcile { alive, missing } => Input::Reconcile(Reality {
            sessions: if alive {
                vec![SessionSeen { session: agent.session(), pid: Some(9), exit: None }]
            } else {
                vec![]
            },
            missing_dirs: if missing { vec![ws] } else { vec![] },
            slots: Vec::new(),
        }),
    }
}

/// Every trigger has a chain, with cooldowns, gates, resumes and escalations in it.
fn busy_policy() -> bosun_core::Policy {
    let chain = |s: &[&str]| bosun_core::Chain(s.iter().map(|x| x.parse().unwrap()).collect());
    bosun_core::Policy {
        on_idle: chain(&["nudge*2+5s:Continue", "gate:make check", "escalate"]),
        on_dead: chain(&["resume*1:Carry on"]),
        on_error: chain(&["nudge+10s:Retry", "escalate"]),
        on_prompt: chain(&["escalate"]),
        grace_ms: 3_000,
        ..bosun_core::Policy::default()
    }
}

/// Feeds a step: a tick moves the clock and fires the timers due.
fn feed(sim: &mut Sim, n: u64, s: &Step) {
    match s {
        Step::Tick(secs) => {
            sim.advance(secs * 1_000);
            sim.fire_due();
        }
        _ => {
            let i = input(n, s, sim);
            let _ = sim.feed(i);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Folding the recorded events again, from nothing, gives the same state.
    #[test]
    fn refolding_the_log_gives_the_same_state(steps in proptest::collection::vec(step(), 0..60)) {
        let mut sim = Sim::new();
        for (n, s) in &steps {
            feed(&mut sim, *n, s);
        }
        // Through the log's encoding, as the store keeps it.
        let mut again = State::default();
        for e in &sim.log {
            let stored = serde_json::to_string(e).unwrap();
            let back: Event = serde_json::from_str(&stored).unwrap();
            prop_assert_eq!(&back, e);
            apply(&mut again, &back);
        }
        prop_assert_eq!(again, sim.state);
    }

    /// Without --force, a workspace found dirty is never removed, and one marked Dirty only
    /// once a look finds it clean (its work committed since).
    #[test]
    fn a_dirty_workspace_is_never_removed(steps in proptest::collection::vec(step(), 0..60)) {
        let mut sim = Sim::new();
        for (n, s) in &steps {
            let i = input(*n, s, &sim);
            let before = sim.state.clone();
            let start = sim.log.len();
            let _ = sim.feed(i.clone());
            for e in &sim.log[start..] {
                if let Event::WorkspaceRemoving { id, .. } = e {
                    let probed_clean = matches!(&i, Input::RemoveWorkspace { probe, .. } if !probe.dirty);
                    prop_assert!(probed_clean || before.workspaces[id].state != WorkspaceState::Dirty);
                    let probed_dirty = matches!(&i, Input::RemoveWorkspace { probe, .. } if probe.dirty);
                    prop_assert!(!probed_dirty, "removal of a workspace found dirty");
                }
            }
        }
    }

    /// A dead agent stays dead, unless its policy resumes it (and then it counts a restart).
    #[test]
    fn the_dead_stay_dead(steps in proptest::collection::vec(step(), 0..60)) {
        let mut sim = Sim::new();
        let mut dead = std::collections::BTreeMap::new();
        for (n, s) in &steps {
            feed(&mut sim, *n, s);
            for (id, a) in &sim.state.agents {
                if let Some(restarts) = dead.get(id) {
                    prop_assert!(a.state.is_dead() || a.restarts > *restarts, "{} came back as {:?}", id, a.state);
                }
                if a.state.is_dead() {
                    dead.insert(id.clone(), a.restarts);
                } else {
                    dead.remove(id);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// At most one message is being typed into an agent at a time: two at once would interleave.
    #[test]
    fn one_message_in_flight_per_agent(steps in proptest::collection::vec(step(), 0..80)) {
        let mut sim = Sim::new();
        for (n, s) in &steps {
            feed(&mut sim, *n, s);
            let mut per_agent = std::collections::BTreeMap::new();
            for m in sim.in_flight() {
                *per_agent.entry(sim.state.messages[&m].agent.clone()).or_insert(0) += 1;
            }
            prop_assert!(per_agent.values().all(|&k| k <= 1), "{:?}", per_agent);
        }
    }

    /// A branch holding commits beyond its base is never deleted.
    #[test]
    fn a_branch_with_commits_is_never_deleted(steps in proptest::collection::vec(step(), 0..60)) {
        let mut sim = Sim::new();
        for (n, s) in &steps {
            let i = input(*n, s, &sim);
            if let Ok(effects) = sim.feed(i.clone()) {
                for e in effects {
                    if let bosun_core::Effect::RemoveWorkspace { delete_branch: true, .. } = e {
                        let ahead = matches!(&i, Input::RemoveWorkspace { probe, .. } if probe.commits_ahead > 0);
                        prop_assert!(!ahead, "deleted a branch with commits");
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// A recovery step never acts more often than its attempts allow, until a person resets it.
    #[test]
    fn attempts_never_exceed_their_limit(steps in proptest::collection::vec(step(), 0..100)) {
        let mut sim = Sim::new();
        for (n, s) in &steps {
            feed(&mut sim, *n, s);
        }
        let mut used: std::collections::BTreeMap<(String, bosun_core::Trigger, usize), u32> = Default::default();
        for e in &sim.log {
            match e {
                Event::RecoveryStep { id, trigger, progress, .. } => {
                    let count = used.entry((id.to_string(), *trigger, progress.step)).or_default();
                    *count += 1;
                    let a = &sim.state.agents[id];
                    let limit = a.policy.chain(*trigger, None).0.get(progress.step).map(|s| s.attempts);
                    if let Some(bosun_core::Attempts::Times(max)) = limit {
                        prop_assert!(*count <= max, "{} {:?} step {} used {} > {}", id, trigger, progress.step, count, max);
                    }
                }
                Event::RecoveryReset { id, trigger } => used.retain(|(a, t, _), _| !(a == id.as_str() && t == trigger)),
                _ => {}
            }
        }
    }
}
