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
    CreateFailed,
    Spawned,
    Exited(i32),
    Closed,
    Kill,
    Killed,
    Inspected(bool),
    Remove { dirty: bool, ahead: u32 },
    Removed,
    RemoveFailed(bool),
    Send,
    Delivered,
    Reconcile { alive: bool, missing: bool },
    Observed,
}

fn step() -> impl Strategy<Value = (u64, Step)> {
    let s = prop_oneof![
        Just(Step::Start),
        Just(Step::Created),
        Just(Step::CreateFailed),
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
    ];
    (0..3u64, s)
}

fn input(n: u64, step: &Step, sim: &Sim) -> Input {
    let state = &sim.state;
    let spec = spec(n);
    let agent = bosun_core::AgentId::new(&spec.nonce);
    let ws = bosun_core::WorkspaceId::new(&spec.name, &spec.nonce);
    // The message being typed, if any: only what was sent can be delivered.
    let message = sim.in_flight().first().copied().unwrap_or(bosun_core::MessageId(1));
    match step.clone() {
        Step::Start => Input::StartAgent(Box::new(spec)),
        Step::Created => Input::WorkspaceCreated { id: ws },
        Step::CreateFailed => Input::WorkspaceCreateFailed { id: ws, error: "boom".into() },
        Step::Spawned => Input::SessionSpawned { agent, pid: Some(1) },
        Step::Exited(code) => Input::SessionExited { session: agent.session(), status: ExitStatus::code(code) },
        Step::Closed => Input::SessionClosed { session: agent.session() },
        Step::Kill => Input::KillAgent { agent },
        Step::Killed => Input::SessionKilled { agent },
        Step::Inspected(dirty) => Input::WorkspaceInspected { id: ws, dirty: Some(dirty) },
        Step::Remove { dirty, ahead } => {
            Input::RemoveWorkspace { id: ws, force: false, probe: WorkspaceProbe { dirty, commits_ahead: ahead } }
        }
        Step::Removed => Input::WorkspaceRemoved { id: ws },
        Step::RemoveFailed(dirty) => Input::WorkspaceRemoveFailed { id: ws, error: "no".into(), dirty },
        Step::Send => Input::SendText { agent, text: "go on".into() },
        Step::Delivered => Input::TextDelivered { message },
        Step::Observed => Input::SessionsObserved { sessions: vec![], as_of: state.seq },
        Step::Reconcile { alive, missing } => Input::Reconcile(Reality {
            sessions: if alive {
                vec![SessionSeen { session: agent.session(), pid: Some(9), exit: None }]
            } else {
                vec![]
            },
            missing_dirs: if missing { vec![ws] } else { vec![] },
        }),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Folding the recorded events again, from nothing, gives the same state.
    #[test]
    fn refolding_the_log_gives_the_same_state(steps in proptest::collection::vec(step(), 0..60)) {
        let mut sim = Sim::new();
        for (n, s) in &steps {
            let i = input(*n, s, &sim);
            let _ = sim.feed(i);
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

    /// Without --force, a workspace that is Dirty, or found dirty, is never removed.
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
                    prop_assert_ne!(&before.workspaces[id].state, &WorkspaceState::Dirty);
                    let probed_dirty = matches!(&i, Input::RemoveWorkspace { probe, .. } if probe.dirty);
                    prop_assert!(!probed_dirty, "removal of a workspace found dirty");
                }
            }
        }
    }

    /// A dead agent stays dead: no event brings it back.
    #[test]
    fn the_dead_stay_dead(steps in proptest::collection::vec(step(), 0..60)) {
        let mut sim = Sim::new();
        let mut dead = std::collections::BTreeSet::new();
        for (n, s) in &steps {
            let i = input(*n, s, &sim);
            let _ = sim.feed(i);
            for (id, a) in &sim.state.agents {
                if dead.contains(id) {
                    prop_assert!(a.state.is_dead(), "{} came back as {:?}", id, a.state);
                }
                if a.state.is_dead() {
                    dead.insert(id.clone());
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
            let i = input(*n, s, &sim);
            let _ = sim.feed(i);
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
