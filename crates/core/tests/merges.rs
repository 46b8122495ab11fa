//! A merge once its branch is merged, as the core drives it: its agents ended, then its
//! workspace looked at and removed (a pool's released), its branch kept when its target lacks
//! some of it; and a restart at any step takes the sequence up where it was, nothing done twice.

mod support;

use bosun_core::{
    BranchKept, Effect, Event, Input, MergeHow, MergeOutcome, Merged, Reality, SessionSeen, State, WorkspaceId,
    WorkspaceState,
};
use support::Sim;

fn merged(branch: &str) -> Merged {
    Merged {
        into: "main".into(),
        branch: branch.into(),
        how: MergeHow::Merge,
        commit: "c1".into(),
        already: false,
        fast_forward: true,
        branch_merged: true,
    }
}

fn merge_input(sim: &Sim, w: &WorkspaceId) -> Input {
    let branch = sim.state.workspaces[w].branch().unwrap().to_owned();
    Input::WorkMerged { workspace: w.clone(), merged: merged(&branch) }
}

fn outcome(state: &State, w: &WorkspaceId) -> Option<MergeOutcome> {
    state.merges[w].outcome.clone()
}

#[test]
fn a_merge_ends_its_agent_then_removes_its_workspace_and_deletes_its_merged_branch() {
    let mut sim = Sim::new();
    let (a, w) = sim.running(1);
    let effects = sim.ok(merge_input(&sim, &w));
    assert!(matches!(effects.as_slice(), [Effect::KillSession { agent, .. }] if agent == &a), "{effects:?}");
    let recorded = sim.log.iter().find_map(|e| match e {
        Event::WorkMerged { ending, .. } => ending.clone(),
        _ => None,
    });
    assert_eq!(recorded, Some(vec![a.clone()]), "the log says what the merge ends");
    assert!(sim.state.merges[&w].pending());

    let effects = sim.ok(Input::SessionKilled { agent: a.clone() });
    let into = effects.iter().find_map(|e| match e {
        Effect::InspectWorkspace { id, into, .. } if id == &w => Some(into.clone()),
        _ => None,
    });
    assert_eq!(into, Some(Some("main".into())), "its branch counted against the target: {effects:?}");

    let effects = sim.ok(Input::WorkspaceInspected { id: w.clone(), dirty: Some(false), ahead: 0 });
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::RemoveWorkspace { id, delete_branch: true, force: false, .. } if id == &w)),
        "{effects:?}"
    );
    assert!(matches!(sim.state.workspaces[&w].state, WorkspaceState::Removing { keep_branch: None, .. }));
    sim.ok(Input::WorkspaceRemoved { id: w.clone() });
    assert!(!sim.state.workspaces.contains_key(&w));
    assert_eq!(outcome(&sim.state, &w), Some(MergeOutcome::Removed { branch_kept: None }));
    assert_eq!(sim.state.merges[&w].ended, vec![a]);
}

#[test]
fn a_branch_the_target_lacks_some_of_is_kept_and_a_workspace_holding_work_is_kept_whole() {
    let mut sim = Sim::new();
    let (a, w) = sim.running(1);
    sim.ok(merge_input(&sim, &w));
    sim.ok(Input::SessionKilled { agent: a });
    let effects = sim.ok(Input::WorkspaceInspected { id: w.clone(), dirty: Some(false), ahead: 2 });
    assert!(effects.iter().any(|e| matches!(e, Effect::RemoveWorkspace { delete_branch: false, .. })), "{effects:?}");
    sim.ok(Input::WorkspaceRemoved { id: w.clone() });
    let branch = sim.state.merges[&w].merged.branch.clone();
    assert_eq!(
        outcome(&sim.state, &w),
        Some(MergeOutcome::Removed { branch_kept: Some(BranchKept { branch, commits: 2 }) })
    );

    let (b, v) = sim.running(2);
    sim.ok(merge_input(&sim, &v));
    sim.ok(Input::SessionKilled { agent: b });
    let effects = sim.ok(Input::WorkspaceInspected { id: v.clone(), dirty: Some(true), ahead: 0 });
    assert!(!effects.iter().any(|e| matches!(e, Effect::RemoveWorkspace { .. })), "never lose work: {effects:?}");
    assert_eq!(sim.state.workspaces[&v].state, WorkspaceState::Dirty);
    assert!(matches!(outcome(&sim.state, &v), Some(MergeOutcome::Kept { why }) if why.contains("uncommitted")));
    // A look that could not be made counts as holding work.
    let (c, u) = sim.running(3);
    sim.ok(merge_input(&sim, &u));
    sim.ok(Input::SessionKilled { agent: c });
    sim.ok(Input::WorkspaceInspected { id: u.clone(), dirty: None, ahead: 0 });
    assert!(matches!(outcome(&sim.state, &u), Some(MergeOutcome::Kept { .. })));
}

#[test]
fn a_workspace_whose_agent_ended_before_is_looked_at_at_once() {
    let mut sim = Sim::new();
    let (a, w) = sim.running(1);
    sim.ok(Input::SessionKilled { agent: a });
    sim.ok(Input::WorkspaceInspected { id: w.clone(), dirty: Some(true), ahead: 1 });
    assert_eq!(sim.state.workspaces[&w].state, WorkspaceState::Dirty);
    // A person committed the work since: the look now says so.
    let effects = sim.ok(merge_input(&sim, &w));
    assert!(matches!(effects.as_slice(), [Effect::InspectWorkspace { into: Some(_), .. }]), "{effects:?}");
    let effects = sim.ok(Input::WorkspaceInspected { id: w.clone(), dirty: Some(false), ahead: 0 });
    assert!(effects.iter().any(|e| matches!(e, Effect::RemoveWorkspace { .. })), "{effects:?}");
}

#[test]
fn a_merge_asked_again_while_under_way_owes_nothing_more() {
    let mut sim = Sim::new();
    let (_, w) = sim.running(1);
    sim.ok(merge_input(&sim, &w));
    let events = sim.log.len();
    assert!(sim.ok(merge_input(&sim, &w)).is_empty());
    assert_eq!(sim.log.len(), events, "nothing recorded twice");
}

/// The daemon restarted with `state`, finding `sessions` alive: what it does.
fn restart(state: &State, sessions: Vec<SessionSeen>) -> (Sim, Vec<Effect>) {
    let mut sim = Sim::new();
    sim.state = state.clone();
    let effects = sim.ok(Input::Reconcile(Reality { sessions, ..Reality::default() }));
    (sim, effects)
}

/// Carries out what is left of a merge from `effects`, as the daemon would: each effect once,
/// its outcome fed back. How many agents were ended, looks taken and removals made.
fn finish(sim: &mut Sim, mut effects: Vec<Effect>, dirty: bool) -> (usize, usize, usize) {
    let (mut kills, mut looks, mut removals) = (0, 0, 0);
    while let Some(e) = effects.pop() {
        let next = match e {
            // A dead agent's kept session ends with its workspace, as at any removal: not a
            // second end of the agent.
            Effect::KillSession { agent, .. } if sim.state.agents[&agent].state.is_dead() => continue,
            Effect::KillSession { agent, .. } => {
                kills += 1;
                Input::SessionKilled { agent }
            }
            Effect::InspectWorkspace { id, .. } => {
                looks += 1;
                Input::WorkspaceInspected { id, dirty: Some(dirty), ahead: 0 }
            }
            Effect::RemoveWorkspace { id, .. } => {
                removals += 1;
                Input::WorkspaceRemoved { id }
            }
            _ => continue,
        };
        effects.extend(sim.ok(next));
    }
    (kills, looks, removals)
}

#[test]
fn a_restart_at_every_step_of_a_merge_takes_it_up_where_it_was_and_does_nothing_twice() {
    // The steps, each as the log leaves it: merged (agent to end), its agent dead (workspace
    // to look at), its removal under way.
    let mut sim = Sim::new();
    let (a, w) = sim.running(1);
    let session = sim.state.agents[&a].session.clone();
    sim.ok(merge_input(&sim, &w));
    let merged_state = sim.state.clone();
    sim.ok(Input::SessionKilled { agent: a.clone() });
    let dead_state = sim.state.clone();
    sim.ok(Input::WorkspaceInspected { id: w.clone(), dirty: Some(false), ahead: 0 });
    let removing_state = sim.state.clone();

    let alive = vec![SessionSeen { session: session.clone(), pid: Some(101), exit: None }];
    let cases = [
        ("merged, its agent still running", &merged_state, alive, (1, 1, 1)),
        ("merged, its agent's session gone unseen", &merged_state, vec![], (0, 1, 1)),
        ("its agent dead, its workspace not looked at", &dead_state, vec![], (0, 1, 1)),
        ("its removal under way", &removing_state, vec![], (0, 0, 1)),
    ];
    for (step, state, sessions, expected) in cases {
        let (mut sim, effects) = restart(state, sessions);
        let done = finish(&mut sim, effects, false);
        assert_eq!(done, expected, "{step}: (kills, looks, removals) after the restart");
        assert!(!sim.state.workspaces.contains_key(&w), "{step}: its workspace is removed");
        assert!(sim.state.agents[&a].state.is_dead(), "{step}: its agent is dead");
        assert_eq!(outcome(&sim.state, &w), Some(MergeOutcome::Removed { branch_kept: None }), "{step}");
        let (_, again) = restart(&sim.state, vec![]);
        assert!(
            again.iter().all(|e| !matches!(e, Effect::InspectWorkspace { .. } | Effect::RemoveWorkspace { .. })),
            "{step}: done is done: {again:?}"
        );
    }
}
