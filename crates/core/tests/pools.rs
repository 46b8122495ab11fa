//! Workspace pools as simulations: a task is bound to an available slot or waits in line, first
//! come first served; a released slot is reset and handed to the next; a dirty workspace is
//! never reset without force; a branch with commits of its own is kept; a restart finishes what
//! was cut short. And a property test: no slot is ever bound to two tasks.

mod support;

use std::path::PathBuf;

use bosun_core::{
    AgentId, AgentSpec, Effect, Event, ExitStatus, Input, PoolAsk, PoolBase, PoolSpec, Reality, Rejection, SlotId,
    SlotProbe, SlotState, WorkspaceId, WorkspaceKind, WorkspaceProbe, WorkspaceState,
};
use bosun_core::{PoolTask, WorkBranch};
use proptest::prelude::*;
use support::{spec, Sim};

fn pool_spec(size: u32) -> PoolSpec {
    PoolSpec {
        repo: PathBuf::from("/repo"),
        project: "repo".into(),
        size,
        base: PoolBase { base_ref: "origin/main".into(), remote: Some("origin".into()) },
        root: PathBuf::from("/state/workspaces"),
        setup: None,
    }
}

fn pooled(n: u64, size: u32, wait: bool) -> AgentSpec {
    let s = spec(n);
    let branch = s.nonce.default_branch();
    AgentSpec {
        kind: WorkspaceKind::Pool(PoolTask {
            git: WorkBranch { repo: PathBuf::from("/repo"), branch, base: String::new(), base_ref: String::new() },
            slot: None,
            task: Some(format!("task {n}")),
        }),
        pool: Some(PoolAsk { spec: pool_spec(size), wait }),
        backend: Default::default(),
        runtime: Default::default(),
        ..s
    }
}

fn slot(n: u32) -> SlotId {
    SlotId::new("repo", n)
}

/// Slots the effects ask to be made, by number.
fn made(effects: &[Effect]) -> Vec<u32> {
    effects.iter().filter_map(|e| if let Effect::CreateSlot { n, .. } = e { Some(*n) } else { None }).collect()
}

/// Workspaces the effects bind (make in a slot), with the slot's path.
fn bound(effects: &[Effect]) -> Vec<(WorkspaceId, PathBuf)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::CreateWorkspace { id, path, kind: WorkspaceKind::Pool(_), .. } => Some((id.clone(), path.clone())),
            _ => None,
        })
        .collect()
}

fn resets(effects: &[Effect]) -> Vec<(u32, Option<String>, bool)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::ResetSlot { n, reset, .. } => Some((*n, reset.delete_branch.clone(), reset.force)),
            _ => None,
        })
        .collect()
}

/// The slot a workspace is bound to.
fn slot_of(sim: &Sim, ws: &WorkspaceId) -> Option<u32> {
    let pool = sim.state.pools.get("repo")?;
    pool.slots.iter().find(|(_, s)| s.state == SlotState::Bound { workspace: ws.clone() }).map(|(n, _)| *n)
}

/// Starts pooled agent `n`; its ids and the effects.
fn start(sim: &mut Sim, n: u64, size: u32) -> (AgentId, WorkspaceId, Vec<Effect>) {
    let s = pooled(n, size, true);
    let ids = (AgentId::new(&s.nonce), WorkspaceId::new(&s.name, &s.nonce));
    let effects = sim.ok(Input::StartAgent(Box::new(s)));
    (ids.0, ids.1, effects)
}

/// The agent's workspace is made where it was bound, and the agent runs.
fn runs(sim: &mut Sim, a: &AgentId, w: &WorkspaceId) {
    sim.ok(Input::WorkspaceCreated { id: w.clone() });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(7) });
}

/// The agent exits; its workspace is found as `dirty`, with `ahead` commits of its own.
fn ends(sim: &mut Sim, a: &AgentId, w: &WorkspaceId, dirty: bool, ahead: u32) -> Vec<Effect> {
    let session = sim.state.agents[a].session.clone();
    sim.ok(Input::SessionExited { session, status: ExitStatus::code(0) });
    sim.ok(Input::WorkspaceInspected { id: w.clone(), dirty: Some(dirty), ahead })
}

#[test]
fn a_task_bound_in_its_starts_own_decision_starts_in_its_slot() {
    let mut sim = Sim::new();
    sim.ok(Input::PoolInit(Box::new(pool_spec(1))));
    sim.ok(Input::SlotCreated { project: "repo".into(), n: 1, commit: "c1".into() });
    let (a, w, effects) = start(&mut sim, 1, 1);
    let path = PathBuf::from("/state/workspaces/repo--1");
    assert_eq!(bound(&effects), [(w.clone(), path.clone())], "bound at once, no waiting");
    let agent = &sim.state.agents[&a];
    assert_eq!(agent.cwd, path, "the agent works where its slot is");
    assert_eq!(agent.env["BOSUN_WORKSPACE"], path.display().to_string());
    let effects = sim.ok(Input::WorkspaceCreated { id: w });
    let cwd = effects.iter().find_map(|e| match e {
        Effect::SpawnSession { cwd, .. } => Some(cwd.clone()),
        _ => None,
    });
    assert_eq!(cwd, Some(path), "its session starts in its slot");
}

#[test]
fn a_first_task_makes_the_pool_and_a_slot_and_is_bound_to_it_once_made() {
    let mut sim = Sim::new();
    let (a, w, effects) = start(&mut sim, 1, 2);
    assert_eq!(made(&effects), [1], "one slot, for the one task: the rest are made when needed");
    assert_eq!(sim.state.workspaces[&w].state, WorkspaceState::Waiting);
    assert_eq!(sim.state.pools["repo"].waiting, std::slice::from_ref(&w));

    let effects = sim.ok(Input::SlotCreated { project: "repo".into(), n: 1, commit: "c1".into() });
    let path = PathBuf::from("/state/workspaces/repo--1");
    assert_eq!(bound(&effects), [(w.clone(), path.clone())]);
    let ws = &sim.state.workspaces[&w];
    assert_eq!(ws.state, WorkspaceState::Creating);
    assert!(
        matches!(&ws.kind, WorkspaceKind::Pool(PoolTask { git: WorkBranch { base, .. }, slot: Some(s), .. }) if s == &slot(1) && base == "c1")
    );
    assert_eq!(sim.state.agents[&a].cwd, path, "the agent works where its workspace is");
    assert_eq!(sim.state.agents[&a].env["BOSUN_WORKSPACE"], path.display().to_string());
    assert!(sim.state.pools["repo"].waiting.is_empty());

    runs(&mut sim, &a, &w);
    let effects = ends(&mut sim, &a, &w, false, 0);
    let branch = sim.log.iter().rev().find_map(|e| match e {
        Event::WorkspaceRemoved { id, branch_kept } if id == &w => Some(branch_kept.clone()),
        _ => None,
    });
    assert_eq!(branch, Some(None), "released, its branch deleted: it held no commit of its own");
    assert!(matches!(resets(&effects).as_slice(), [(1, Some(_), false)]));
    sim.ok(Input::SlotReset { project: "repo".into(), n: 1, commit: "c2".into() });
    let s = &sim.state.pools["repo"].slots[&1];
    assert_eq!((&s.state, s.commit.as_deref()), (&SlotState::Available, Some("c2")));

    // The next task gets the same place at once: no slot made, no waiting.
    let (_, w2, effects) = start(&mut sim, 2, 2);
    assert!(made(&effects).is_empty());
    assert_eq!(bound(&effects), [(w2, path)]);
}

#[test]
fn pool_init_makes_its_slots_now_and_a_task_takes_the_first_available() {
    let mut sim = Sim::new();
    let effects = sim.ok(Input::PoolInit(Box::new(pool_spec(3))));
    assert_eq!(made(&effects), [1, 2, 3]);
    for n in [2, 1] {
        sim.ok(Input::SlotCreated { project: "repo".into(), n, commit: "c".into() });
    }
    let (_, w, _) = start(&mut sim, 1, 3);
    assert_eq!(slot_of(&sim, &w), Some(1), "the first available, by number");
    // Asked again, the pool is the same one, grown to the new size.
    let effects = sim.ok(Input::PoolInit(Box::new(pool_spec(4))));
    assert_eq!(made(&effects), [4]);
    assert_eq!(sim.state.pools.len(), 1);
}

#[test]
fn twenty_tasks_on_a_pool_of_three_are_served_in_the_order_they_came() {
    let mut sim = Sim::new();
    let mut tasks = Vec::new();
    let mut order = Vec::new();
    for n in 1..=20 {
        let (a, w, effects) = start(&mut sim, n, 3);
        assert!(made(&effects).len() <= 1);
        tasks.push((a, w));
    }
    assert_eq!(sim.state.pools["repo"].slots.len(), 3, "never more than its size");
    assert_eq!(sim.state.pools["repo"].waiting.len(), 20);
    let mut effects = Vec::new();
    for n in 1..=3 {
        effects.extend(sim.ok(Input::SlotCreated { project: "repo".into(), n, commit: "c".into() }));
    }
    let mut pending: Vec<(WorkspaceId, PathBuf)> = bound(&effects);
    while let Some((w, _)) = pending.first().cloned() {
        pending.remove(0);
        order.push(w.clone());
        let (a, _) = tasks.iter().find(|(_, x)| x == &w).cloned().unwrap();
        let n = slot_of(&sim, &w).expect("bound");
        let others: Vec<_> = tasks.iter().filter(|(_, x)| x != &w && slot_of(&sim, x) == Some(n)).collect();
        assert!(others.is_empty(), "slot {n} bound twice");
        runs(&mut sim, &a, &w);
        ends(&mut sim, &a, &w, false, 0);
        pending.extend(bound(&sim.ok(Input::SlotReset { project: "repo".into(), n, commit: "c".into() })));
    }
    let all: Vec<WorkspaceId> = tasks.iter().map(|(_, w)| w.clone()).collect();
    assert_eq!(order, all, "first come, first served");
    assert!(sim.state.pools["repo"].slots.values().all(|s| s.state == SlotState::Available));
}

#[test]
fn a_task_that_may_not_wait_is_refused_when_every_slot_is_taken_and_nothing_is_recorded() {
    let mut sim = Sim::new();
    sim.ok(Input::PoolInit(Box::new(pool_spec(1))));
    sim.ok(Input::SlotCreated { project: "repo".into(), n: 1, commit: "c".into() });
    start(&mut sim, 1, 1);
    let events = sim.log.len();
    let refused = sim.feed(Input::StartAgent(Box::new(pooled(2, 1, false))));
    assert!(matches!(refused, Err(Rejection::PoolExhausted { ref project, size: 1 }) if project == "repo"));
    assert_eq!(sim.log.len(), events);
}

#[test]
fn a_dirty_workspace_stays_bound_and_is_reset_only_by_force() {
    let mut sim = Sim::new();
    let (a, w, _) = start(&mut sim, 1, 1);
    sim.ok(Input::SlotCreated { project: "repo".into(), n: 1, commit: "c".into() });
    runs(&mut sim, &a, &w);
    let effects = ends(&mut sim, &a, &w, true, 0);
    assert!(resets(&effects).is_empty(), "never reset with work in it");
    assert_eq!(sim.state.workspaces[&w].state, WorkspaceState::Dirty);
    assert_eq!(slot_of(&sim, &w), Some(1), "and never handed to another task");
    let (_, w2, _) = start(&mut sim, 2, 1);
    assert_eq!(sim.state.workspaces[&w2].state, WorkspaceState::Waiting);

    let probe = WorkspaceProbe { dirty: true, commits_ahead: 0 };
    let refused = sim.feed(Input::PoolRelease { slot: slot(1), force: false, pristine: false, probe });
    assert!(matches!(refused, Err(Rejection::WorkspaceDirty(ref id)) if id == &w));
    let effects = sim.ok(Input::PoolRelease { slot: slot(1), force: true, pristine: true, probe });
    assert!(matches!(resets(&effects).as_slice(), [(1, Some(_), true)]));
    let effects = sim.ok(Input::SlotReset { project: "repo".into(), n: 1, commit: "c".into() });
    assert_eq!(bound(&effects).len(), 1, "the waiting task gets it");
    assert_eq!(slot_of(&sim, &w2), Some(1));
}

#[test]
fn a_branch_with_commits_of_its_own_is_kept_when_its_workspace_is_released() {
    let mut sim = Sim::new();
    let (a, w, _) = start(&mut sim, 1, 1);
    sim.ok(Input::SlotCreated { project: "repo".into(), n: 1, commit: "c".into() });
    runs(&mut sim, &a, &w);
    let effects = ends(&mut sim, &a, &w, false, 3);
    assert!(matches!(resets(&effects).as_slice(), [(1, None, false)]), "not deleted");
    let kept = sim.log.iter().find_map(|e| match e {
        Event::WorkspaceRemoved { branch_kept: Some(b), .. } => Some(b.commits),
        _ => None,
    });
    assert_eq!(kept, Some(3));
}

#[test]
fn a_release_is_refused_while_the_agent_lives_and_a_killed_waiting_task_leaves_the_line() {
    let mut sim = Sim::new();
    let (a, w, _) = start(&mut sim, 1, 1);
    sim.ok(Input::SlotCreated { project: "repo".into(), n: 1, commit: "c".into() });
    runs(&mut sim, &a, &w);
    let refused =
        sim.feed(Input::PoolRelease { slot: slot(1), force: true, pristine: false, probe: Default::default() });
    assert!(matches!(refused, Err(Rejection::WorkspaceInUse { .. })));

    let (b, w2, _) = start(&mut sim, 2, 1);
    sim.ok(Input::KillAgent { agent: b.clone() });
    assert!(sim.state.agents[&b].state.is_dead());
    assert!(!sim.state.workspaces.contains_key(&w2));
    assert!(sim.state.pools["repo"].waiting.is_empty());
    ends(&mut sim, &a, &w, false, 0);
    let effects = sim.ok(Input::SlotReset { project: "repo".into(), n: 1, commit: "c".into() });
    assert!(bound(&effects).is_empty(), "the killed task is not served");
}

#[test]
fn a_restart_finishes_what_was_cut_short_and_never_hands_out_a_slot_found_dirty_or_gone() {
    let mut sim = Sim::new();
    sim.ok(Input::PoolInit(Box::new(pool_spec(3))));
    for n in 1..=3 {
        sim.ok(Input::SlotCreated { project: "repo".into(), n, commit: "c".into() });
    }
    let (a, w, _) = start(&mut sim, 1, 3);
    runs(&mut sim, &a, &w);
    ends(&mut sim, &a, &w, false, 0);
    assert!(matches!(sim.state.pools["repo"].slots[&1].state, SlotState::Resetting { .. }));

    let probes = vec![
        (slot(2), SlotProbe { exists: true, dirty: true, head: Some("c".into()) }),
        (slot(3), SlotProbe { exists: false, dirty: false, head: None }),
    ];
    let effects = sim.ok(Input::Reconcile(Reality { slots: probes, ..Default::default() }));
    assert_eq!(resets(&effects).len(), 1, "the reset cut short runs again");
    let pool = &sim.state.pools["repo"];
    assert_eq!(pool.slots[&2].state, SlotState::Dirty);
    assert_eq!(pool.slots[&3].state, SlotState::Missing);
    let (_, w2, _) = start(&mut sim, 2, 3);
    assert_eq!(sim.state.workspaces[&w2].state, WorkspaceState::Waiting, "neither is handed out");
    let effects = sim.ok(Input::SlotReset { project: "repo".into(), n: 1, commit: "c".into() });
    assert_eq!(bound(&effects).len(), 1);
}

#[test]
fn resizing_removes_available_slots_beyond_the_size_and_rm_refuses_bound_ones() {
    let mut sim = Sim::new();
    sim.ok(Input::PoolInit(Box::new(pool_spec(3))));
    for n in 1..=3 {
        sim.ok(Input::SlotCreated { project: "repo".into(), n, commit: "c".into() });
    }
    let (_, w, _) = start(&mut sim, 1, 3);
    let effects = sim.ok(Input::PoolResize { project: "repo".into(), size: 1 });
    let removed: Vec<u32> =
        effects.iter().filter_map(|e| if let Effect::RemoveSlot { n, .. } = e { Some(*n) } else { None }).collect();
    assert_eq!(removed, [3, 2], "the available ones, the task's stays");
    assert!(matches!(sim.feed(Input::PoolResize { project: "repo".into(), size: 0 }), Err(Rejection::PoolSizeZero(_))));
    let refused = sim.feed(Input::PoolRemove { project: "repo".into(), slot: None, force: true });
    assert!(matches!(refused, Err(Rejection::SlotBusy { .. })), "one is bound");
    assert_eq!(slot_of(&sim, &w), Some(1));
}

#[derive(Clone, Debug)]
enum Op {
    Start(bool),
    Created(u32),
    Ends { task: usize, dirty: bool },
    Reset(u32),
    Release { slot: u32, dirty: bool, force: bool },
    Kill(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<bool>().prop_map(Op::Start),
        (1u32..4).prop_map(Op::Created),
        (0usize..12, any::<bool>()).prop_map(|(task, dirty)| Op::Ends { task, dirty }),
        (1u32..4).prop_map(Op::Reset),
        (1u32..4, any::<bool>(), any::<bool>()).prop_map(|(slot, dirty, force)| Op::Release { slot, dirty, force }),
        (0usize..12).prop_map(Op::Kill),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever happens, in whatever order: a slot is bound to at most one task, a task to at
    /// most one slot, and a workspace that holds work is never reset without force.
    #[test]
    fn no_slot_is_bound_twice_and_no_dirty_workspace_is_reset_without_force(ops in proptest::collection::vec(op(), 1..60)) {
        let mut sim = Sim::new();
        let mut tasks: Vec<(AgentId, WorkspaceId)> = Vec::new();
        let mut dirty: std::collections::BTreeSet<WorkspaceId> = Default::default();
        for op in ops {
            let before = sim.log.len();
            let effects = match op {
                Op::Start(wait) => {
                    let n = tasks.len() as u64 + 1;
                    let s = pooled(n, 3, wait);
                    let ids = (AgentId::new(&s.nonce), WorkspaceId::new(&s.name, &s.nonce));
                    match sim.feed(Input::StartAgent(Box::new(s))) {
                        Ok(e) => { tasks.push(ids); e }
                        Err(_) => continue,
                    }
                }
                Op::Created(n) => sim.feed(Input::SlotCreated { project: "repo".into(), n, commit: "c".into() }).unwrap_or_default(),
                Op::Ends { task, dirty: d } => {
                    let Some((a, w)) = tasks.get(task).cloned() else { continue };
                    if sim.state.workspaces.get(&w).is_some_and(|x| x.state == WorkspaceState::Creating) {
                        let _ = sim.feed(Input::WorkspaceCreated { id: w.clone() });
                        let _ = sim.feed(Input::SessionSpawned { agent: a.clone(), pid: Some(1) });
                    }
                    let Some(agent) = sim.state.agents.get(&a) else { continue };
                    if agent.state.is_dead() { continue }
                    let session = agent.session.clone();
                    let _ = sim.feed(Input::SessionExited { session, status: ExitStatus::code(0) });
                    if d { dirty.insert(w.clone()); }
                    sim.feed(Input::WorkspaceInspected { id: w, dirty: Some(d), ahead: 0 }).unwrap_or_default()
                }
                Op::Reset(n) => sim.feed(Input::SlotReset { project: "repo".into(), n, commit: "c".into() }).unwrap_or_default(),
                Op::Release { slot: n, dirty: d, force } => {
                    let bound_ws = sim.state.pools.get("repo").and_then(|p| p.slots.get(&n)).and_then(|s| match &s.state {
                        SlotState::Bound { workspace } => Some(workspace.clone()),
                        _ => None,
                    });
                    let d = d || bound_ws.as_ref().is_some_and(|w| dirty.contains(w));
                    let probe = WorkspaceProbe { dirty: d, commits_ahead: 0 };
                    sim.feed(Input::PoolRelease { slot: slot(n), force, pristine: false, probe }).unwrap_or_default()
                }
                Op::Kill(task) => {
                    let Some((a, _)) = tasks.get(task).cloned() else { continue };
                    sim.feed(Input::KillAgent { agent: a }).unwrap_or_default()
                }
            };
            let released: Vec<&WorkspaceId> = sim.log[before..].iter().filter_map(|e| match e {
                Event::WorkspaceRemoved { id, .. } => Some(id),
                _ => None,
            }).collect();
            for e in &effects {
                if let Effect::ResetSlot { reset, .. } = e {
                    for w in &released {
                        prop_assert!(reset.force || !dirty.contains(*w), "dirty workspace {} reset without force", w);
                    }
                }
            }
            let pool = sim.state.pools.get("repo");
            let bound: Vec<&WorkspaceId> = pool.iter().flat_map(|p| p.slots.values()).filter_map(|s| match &s.state {
                SlotState::Bound { workspace } => Some(workspace),
                _ => None,
            }).collect();
            let distinct: std::collections::BTreeSet<_> = bound.iter().collect();
            prop_assert_eq!(distinct.len(), bound.len(), "a task bound to two slots");
            for w in &bound {
                let in_line = pool.is_some_and(|p| p.waiting.contains(w));
                prop_assert!(!in_line, "bound and still waiting");
            }
            prop_assert!(pool.is_none_or(|p| p.slots.len() <= 3), "more slots than its size");
        }
    }
}
