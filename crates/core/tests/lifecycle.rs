//! Deterministic simulations of workspace and session lifecycles through `decide` and `apply`.

mod support;

use bosun_core::{
    DeathReason, Effect, Event, ExitStatus, Input, MessageState, Reality, Rejection, SessionSeen, SessionState,
    WorkspaceProbe, WorkspaceState,
};
use support::Sim;

#[test]
fn a_start_records_the_workspace_and_agent_then_creates_then_spawns() {
    let mut sim = Sim::new();
    let (a, w) = sim.start(1);
    assert_eq!(sim.state.workspaces[&w].state, WorkspaceState::Creating);
    assert_eq!(sim.state.agents[&a].state, SessionState::Starting);
    assert_eq!(sim.state.workspaces[&w].path.to_str(), Some("/state/workspaces/ws-agent-10000000"));

    let effects = sim.ok(Input::WorkspaceCreated { id: w.clone() });
    assert!(matches!(effects.as_slice(), [Effect::SpawnSession { agent, .. }] if agent == &a));
    assert_eq!(sim.state.workspaces[&w].state, WorkspaceState::InUse { agent: a.clone() });

    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(42) });
    assert_eq!(sim.state.agents[&a].state, SessionState::Running);
    assert_eq!(sim.state.agents[&a].pid, Some(42));
}

#[test]
fn exit_codes_become_completed_or_crashed_and_the_workspace_is_checked() {
    let mut sim = Sim::new();
    let (a, w) = sim.running(1);
    let session = sim.state.agents[&a].session.clone();
    let effects = sim.ok(Input::SessionExited { session, status: ExitStatus::code(3) });
    assert_eq!(sim.state.agents[&a].state, SessionState::Dead { reason: DeathReason::Crashed { code: 3 } });
    assert!(matches!(effects.as_slice(), [Effect::InspectWorkspace { id, .. }] if id == &w));
    sim.ok(Input::WorkspaceInspected { id: w.clone(), dirty: Some(true), ahead: 0 });
    assert_eq!(sim.state.workspaces[&w].state, WorkspaceState::Dirty);

    let (b, _) = sim.running(2);
    let session = sim.state.agents[&b].session.clone();
    sim.ok(Input::SessionExited { session, status: ExitStatus::code(0) });
    assert_eq!(sim.state.agents[&b].state, SessionState::Dead { reason: DeathReason::Completed });

    let (c, _) = sim.running(3);
    let session = sim.state.agents[&c].session.clone();
    sim.ok(Input::SessionExited { session, status: ExitStatus { code: None, signal: Some(9) } });
    assert_eq!(sim.state.agents[&c].state, SessionState::Dead { reason: DeathReason::Crashed { code: 137 } });
}

#[test]
fn an_exit_reported_before_the_spawn_still_counts() {
    let mut sim = Sim::new();
    let (a, w) = sim.start(1);
    sim.ok(Input::WorkspaceCreated { id: w });
    let session = sim.state.agents[&a].session.clone();
    sim.ok(Input::SessionExited { session, status: ExitStatus::code(3) });
    let effects = sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(1) });
    assert!(effects.is_empty(), "a crashed agent's session is kept for peek: {effects:?}");
    assert_eq!(sim.state.agents[&a].state, SessionState::Dead { reason: DeathReason::Crashed { code: 3 } });
}

#[test]
fn kill_ends_as_killed_whatever_reports_the_end_first() {
    let mut sim = Sim::new();
    let (a, _) = sim.running(1);
    let effects = sim.ok(Input::KillAgent { agent: a.clone() });
    assert!(matches!(effects.as_slice(), [Effect::KillSession { .. }]));
    let session = sim.state.agents[&a].session.clone();
    sim.ok(Input::SessionClosed { session });
    assert_eq!(sim.state.agents[&a].state, SessionState::Dead { reason: DeathReason::Killed });
    sim.ok(Input::SessionKilled { agent: a.clone() });
    let deaths = sim.log.iter().filter(|e| matches!(e, Event::AgentDied { .. })).count();
    assert_eq!(deaths, 1, "one death, recorded once");
    assert_eq!(
        sim.feed(Input::KillAgent { agent: a }),
        Err(Rejection::AgentDead { id: sim.state.agents.keys().next().unwrap().clone(), state: "dead(killed)".into() })
    );
}

#[test]
fn a_session_spawned_after_its_agent_was_killed_is_killed_too() {
    let mut sim = Sim::new();
    let (a, w) = sim.start(1);
    sim.ok(Input::KillAgent { agent: a.clone() });
    sim.ok(Input::SessionKilled { agent: a.clone() });
    assert_eq!(sim.state.agents[&a].state, SessionState::Dead { reason: DeathReason::Killed });
    let effects = sim.ok(Input::WorkspaceCreated { id: w.clone() });
    assert!(effects.is_empty(), "no spawn for a killed agent: {effects:?}");
    assert_eq!(sim.state.workspaces[&w].state, WorkspaceState::Ready);
    let effects = sim.ok(Input::SessionSpawned { agent: a, pid: None });
    assert!(matches!(effects.as_slice(), [Effect::KillSession { .. }]));
}

#[test]
fn messages_wait_for_a_starting_agent_and_fail_when_it_dies() {
    let mut sim = Sim::new();
    let (a, w) = sim.start(1);
    assert!(sim.ok(Input::SendText { agent: a.clone(), text: "hello".into(), raw: false, now: false }).is_empty());
    sim.ok(Input::WorkspaceCreated { id: w });
    let effects = sim.ok(Input::SessionSpawned { agent: a.clone(), pid: None });
    assert!(matches!(effects.as_slice(), [Effect::SendText { text, .. }] if text == "hello"));
    let m = *sim.state.messages.keys().next().unwrap();
    sim.ok(Input::TextDelivered { message: m });
    assert_eq!(sim.state.messages[&m].state, MessageState::Delivered);

    sim.ok(Input::SendText { agent: a.clone(), text: "two".into(), raw: false, now: false });
    let session = sim.state.agents[&a].session.clone();
    sim.ok(Input::SessionExited { session, status: ExitStatus::code(0) });
    assert!(sim.state.messages.values().any(|m| matches!(m.state, MessageState::Failed { .. })));
}

#[test]
fn a_workspace_whose_making_failed_stays_recorded_only_when_something_of_it_was_made() {
    let mut sim = Sim::new();
    let (a, w) = sim.start(1);
    sim.ok(Input::WorkspaceCreateFailed { id: w.clone(), error: "cannot lock ref".into(), nothing_left: true });
    assert!(!sim.state.workspaces.contains_key(&w), "nothing behind it, no record");
    assert!(matches!(sim.state.agents[&a].state, SessionState::Dead { reason: DeathReason::FailedToStart }));
    assert!(sim
        .log
        .iter()
        .any(|e| matches!(e, Event::WorkspaceCreateFailed { error, .. } if error == "cannot lock ref")));

    let (_, kept) = sim.start(2);
    sim.ok(Input::WorkspaceCreateFailed { id: kept.clone(), error: "half made".into(), nothing_left: false });
    assert_eq!(sim.state.workspaces[&kept].state, WorkspaceState::Stale, "kept for `workspace rm`");
}

#[test]
fn a_workspace_marked_dirty_whose_work_was_committed_since_is_removed() {
    let mut sim = Sim::new();
    let (a, w) = sim.running(1);
    sim.ok(Input::KillAgent { agent: a.clone() });
    sim.ok(Input::SessionKilled { agent: a });
    sim.ok(Input::WorkspaceInspected { id: w.clone(), dirty: Some(true), ahead: 0 });
    assert_eq!(sim.state.workspaces[&w].state, WorkspaceState::Dirty);
    // A person committed the work: the look at removal finds it clean, with a commit of its own.
    let probe = WorkspaceProbe { dirty: false, commits_ahead: 1 };
    let effects = sim.ok(Input::RemoveWorkspace { id: w.clone(), force: false, probe });
    assert!(
        matches!(effects.as_slice(), [Effect::RemoveWorkspace { force: false, delete_branch: false, .. }, ..]),
        "removed, not forced, its branch kept: {effects:?}"
    );
}

#[test]
fn a_pods_workspace_marked_dirty_stays_so_though_no_look_from_here_sees_its_work() {
    let mut sim = Sim::new();
    let (a, w) = sim.running(1);
    sim.ok(Input::KillAgent { agent: a.clone() });
    sim.ok(Input::SessionKilled { agent: a });
    sim.ok(Input::WorkspaceInspected { id: w.clone(), dirty: Some(true), ahead: 0 });
    let ws = sim.state.workspaces.get_mut(&w).unwrap();
    ws.kind = bosun_core::WorkspaceKind::Pod(bosun_core::PodClone {
        git: bosun_core::WorkBranch {
            repo: "/repo".into(),
            branch: "agent/x".into(),
            base_ref: "main".into(),
            base: "c1".into(),
        },
        remote: None,
        claim: None,
    });
    // A pod's clone is not here: the look finds nothing, and its mark is all there is.
    let refused = sim.feed(Input::RemoveWorkspace { id: w.clone(), force: false, probe: WorkspaceProbe::default() });
    assert_eq!(refused, Err(Rejection::WorkspaceDirty(w.clone())));
    assert!(!sim.state.prunable().contains(&w), "prune leaves it");
}

#[test]
fn a_dirty_workspace_is_refused_without_force_and_removed_with_it() {
    let mut sim = Sim::new();
    let (a, w) = sim.running(1);
    let busy = sim.feed(Input::RemoveWorkspace { id: w.clone(), force: true, probe: WorkspaceProbe::default() });
    assert!(matches!(busy, Err(Rejection::WorkspaceInUse { .. })), "in use: {busy:?}");
    sim.ok(Input::KillAgent { agent: a.clone() });
    sim.ok(Input::SessionKilled { agent: a });
    sim.ok(Input::WorkspaceInspected { id: w.clone(), dirty: Some(true), ahead: 0 });
    let probe = WorkspaceProbe { dirty: true, commits_ahead: 2 };
    let refused = sim.feed(Input::RemoveWorkspace { id: w.clone(), force: false, probe });
    assert_eq!(refused, Err(Rejection::WorkspaceDirty(w.clone())));
    assert_eq!(sim.state.workspaces[&w].state, WorkspaceState::Dirty);

    let effects = sim.ok(Input::RemoveWorkspace { id: w.clone(), force: true, probe });
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::RemoveWorkspace { force: true, delete_branch: false, .. }, Effect::KillSession { .. }]
        ),
        "{effects:?}"
    );
    sim.ok(Input::WorkspaceRemoved { id: w.clone() });
    assert!(!sim.state.workspaces.contains_key(&w));
    assert!(sim.log.iter().any(|e| matches!(e,
        Event::WorkspaceRemoved { branch_kept: Some(k), .. } if k.commits == 2)));
}

#[test]
fn reconcile_adopts_live_sessions_buries_vanished_ones_and_marks_missing_dirs_stale() {
    let mut sim = Sim::new();
    let (live, _) = sim.running(1);
    let (gone, _) = sim.running(2);
    let (exited, _) = sim.running(3);
    let (_, stale_ws) = sim.running(4);
    let (_, w5) = sim.start(5);
    let seen = |a: &bosun_core::AgentId, exit| SessionSeen { session: a.session(), pid: Some(7), exit };
    let reality = Reality {
        sessions: vec![seen(&live, None), seen(&exited, Some(ExitStatus::code(4)))],
        missing_dirs: vec![stale_ws.clone()],
        slots: Vec::new(),
    };
    let effects = sim.ok(Input::Reconcile(reality));
    assert_eq!(sim.state.agents[&live].state, SessionState::Running);
    assert!(sim.log.iter().any(|e| matches!(e, Event::AgentAdopted { id, .. } if id == &live)));
    assert_eq!(sim.state.agents[&gone].state, SessionState::Dead { reason: DeathReason::Lost });
    assert_eq!(sim.state.agents[&exited].state, SessionState::Dead { reason: DeathReason::Crashed { code: 4 } });
    assert_eq!(sim.state.workspaces[&stale_ws].state, WorkspaceState::Stale);
    assert!(
        effects.iter().any(|e| matches!(e, Effect::CreateWorkspace { id, .. } if id == &w5)),
        "an interrupted creation is resumed: {effects:?}"
    );
}

#[test]
fn a_start_records_an_adoption_only_for_an_agent_whose_process_is_not_the_one_known() {
    let mut sim = Sim::new();
    let (same, _) = sim.running(1);
    let (other, _) = sim.running(2);
    let pid = |a: &bosun_core::AgentId, sim: &Sim| sim.state.agents[a].pid;
    let seen = |a: &bosun_core::AgentId, pid| SessionSeen { session: a.session(), pid, exit: None };
    let adopted = |sim: &Sim, from: usize| -> Vec<bosun_core::AgentId> {
        sim.log[from..]
            .iter()
            .filter_map(|e| match e {
                Event::AgentAdopted { id, .. } => Some(id.clone()),
                _ => None,
            })
            .collect()
    };
    for restart in 0..3 {
        let from = sim.log.len();
        let sessions = vec![seen(&same, pid(&same, &sim)), seen(&other, Some(900 + restart))];
        sim.ok(Input::Reconcile(Reality { sessions, missing_dirs: Vec::new(), slots: Vec::new() }));
        assert_eq!(adopted(&sim, from), vec![other.clone()], "restart {restart}: only the changed one");
        assert_eq!(pid(&other, &sim), Some(900 + restart));
        assert_eq!(sim.state.agents[&same].state, SessionState::Running);
    }
    // Nothing changed at all: nothing is recorded.
    let from = sim.log.len();
    let sessions = vec![seen(&same, pid(&same, &sim)), seen(&other, pid(&other, &sim))];
    sim.ok(Input::Reconcile(Reality { sessions, missing_dirs: Vec::new(), slots: Vec::new() }));
    assert_eq!(sim.log.len(), from, "{:?}", &sim.log[from..]);
}

#[test]
fn ids_resolve_by_unique_prefix_or_name() {
    let mut sim = Sim::new();
    let (a, w) = sim.start(1);
    let (b, _) = sim.start(2);
    assert_eq!(sim.state.find_agent(&a.as_str()[..2]).map(|x| x.id.clone()), Ok(a.clone()));
    assert_eq!(sim.state.find_agent(b.as_str()).map(|x| x.id.clone()), Ok(b.clone()));
    assert!(matches!(sim.state.find_agent("agent"), Err(Rejection::AmbiguousAgent { .. })));
    assert!(matches!(sim.state.find_agent("zz"), Err(Rejection::NoSuchAgent(_))));
    assert_eq!(sim.state.find_workspace(&w.as_str()[..12]).map(|x| x.id.clone()), Ok(w));
}

#[test]
fn a_death_no_hook_reported_is_caught_by_the_session_listing_but_a_newer_agent_is_not_judged() {
    let mut sim = Sim::new();
    let (exited, _) = sim.running(1);
    let (vanished, _) = sim.running(2);
    let (alive, _) = sim.running(3);
    let as_of = sim.state.seq;
    let (newer, _) = sim.running(4);
    let sessions = vec![
        SessionSeen { session: exited.session(), pid: None, exit: Some(ExitStatus::code(2)) },
        SessionSeen { session: alive.session(), pid: None, exit: None },
    ];
    sim.ok(Input::SessionsObserved { sessions, as_of });
    assert_eq!(sim.state.agents[&exited].state, SessionState::Dead { reason: DeathReason::Crashed { code: 2 } });
    assert_eq!(sim.state.agents[&vanished].state, SessionState::Dead { reason: DeathReason::Lost });
    assert_eq!(sim.state.agents[&alive].state, SessionState::Running);
    assert_eq!(sim.state.agents[&newer].state, SessionState::Running, "started after the listing");
}

#[test]
fn messages_are_typed_one_at_a_time_in_order() {
    let mut sim = Sim::new();
    let (a, _) = sim.running(1);
    let first = sim.ok(Input::SendText { agent: a.clone(), text: "one".into(), raw: false, now: false });
    let second = sim.ok(Input::SendText { agent: a.clone(), text: "two".into(), raw: false, now: false });
    assert!(matches!(first.as_slice(), [Effect::SendText { text, .. }] if text == "one"));
    assert!(second.is_empty(), "waits for the first: {second:?}");
    let m1 = *sim.state.messages.keys().next().unwrap();
    let next = sim.ok(Input::TextDelivered { message: m1 });
    assert!(matches!(next.as_slice(), [Effect::SendText { text, .. }] if text == "two"));
}

#[test]
fn after_a_restart_a_possibly_typed_message_is_failed_and_the_next_one_sent() {
    let mut sim = Sim::new();
    let (running, _) = sim.running(1);
    sim.ok(Input::SendText { agent: running.clone(), text: "maybe typed".into(), raw: false, now: false });
    sim.ok(Input::SendText { agent: running.clone(), text: "never typed".into(), raw: false, now: false });
    let (starting, w2) = sim.start(2);
    sim.ok(Input::WorkspaceCreated { id: w2 });
    sim.ok(Input::SendText { agent: starting.clone(), text: "waiting".into(), raw: false, now: false });
    let alive = |a: &bosun_core::AgentId| SessionSeen { session: a.session(), pid: Some(1), exit: None };
    let effects = sim.ok(Input::Reconcile(Reality {
        sessions: vec![alive(&running), alive(&starting)],
        missing_dirs: vec![],
        slots: Vec::new(),
    }));
    let texts: Vec<&str> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::SendText { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, vec!["never typed", "waiting"]);
    let failed: Vec<&str> = sim
        .state
        .messages
        .values()
        .filter(|m| matches!(m.state, MessageState::Failed { .. }))
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(failed, vec!["maybe typed"]);
    assert_eq!(sim.state.agents[&starting].state, SessionState::Running);
}

#[test]
fn a_codex_agent_is_started_with_bosun_as_its_notify_program() {
    let mut sim = Sim::new();
    let spec = bosun_core::AgentSpec {
        command: vec!["codex".into(), "--model".into(), "o4".into()],
        driver: bosun_core::driver::Driver::Codex,
        prompt: Some("fix it".into()),
        ..support::spec(1)
    };
    let (_, w) = sim.start_with(spec);
    let effects = sim.ok(Input::WorkspaceCreated { id: w });
    let Some(Effect::SpawnSession { command, .. }) = effects.first() else { panic!("{effects:?}") };
    assert_eq!(command[0], "codex");
    assert_eq!(command[1], "-c");
    assert!(command[2].starts_with("notify=[\"sh\",\"-c\",\"bosun hook codex 10000000"), "{}", command[2]);
    assert_eq!(&command[3..5], ["-c", "features.daemon_auto_start=false"], "no background app-server");
    assert_eq!(&command[5..7], ["-c", "notice.hide_rate_limit_model_nudge=true"], "no offer to switch models");
    assert_eq!(&command[7..], ["--model", "o4", "fix it"]);
}

#[test]
fn a_codex_agent_is_resumed_with_codex_resume_and_its_session_id() {
    let mut sim = Sim::new();
    let on_dead = bosun_core::Chain(vec!["resume:go on".parse().unwrap()]);
    let spec = bosun_core::AgentSpec {
        command: vec!["codex".into()],
        driver: bosun_core::driver::Driver::Codex,
        policy: bosun_core::Policy { on_dead, ..bosun_core::Policy::default() },
        ..support::spec(1)
    };
    let (a, w) = sim.start_with(spec);
    sim.ok(Input::WorkspaceCreated { id: w });
    sim.ok(Input::SessionSpawned { agent: a.clone(), pid: Some(3) });
    let log = std::path::PathBuf::from(
        "/home/u/.codex/sessions/2026/11/22/rollout-2026-11-22T01-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl",
    );
    let found = bosun_core::Observation::Activity { heartbeat: bosun_core::Heartbeat::LogWrite };
    sim.ok(Input::Observed {
        agent: a.clone(),
        source: bosun_core::Source::Log,
        observation: found,
        log: Some(log),
        generation: None,
    });
    let session = sim.state.agents[&a].session.clone();
    let effects = sim.ok(Input::SessionExited { session, status: ExitStatus::code(1) });
    let command = effects.iter().find_map(|e| match e {
        Effect::SpawnSession { command, replace: Some(_), .. } => Some(command.clone()),
        _ => None,
    });
    let command = command.expect("resumed");
    assert_eq!(&command[..3], ["codex", "resume", "0199a213-81c0-7800-8aa1-bbab2a035a53"]);
    assert_eq!(command[3], "-c");
    assert_eq!(command.last().map(String::as_str), Some("go on"));
}
