//! The ground every domain of `decide` stands on: a decision in the making (the events it
//! records, the effects it asks for, and the state those events make) and the effects and
//! timers that more than one domain builds. It calls no domain.

use std::collections::BTreeMap;

use crate::{
    apply, Agent, AgentId, Effect, EscalationId, Event, ItemId, Job, JobId, Message, MessageId, State, Timer, TimerId,
    TimerKind, Timestamp, Workspace, WorkspaceId,
};

/// The facts to record and the effects to carry out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    pub events: Vec<Event>,
    pub effects: Vec<Effect>,
    /// The state `events` make from the one the decision started from, as far as it was asked
    /// for: its seq and counters always; the records the events made, and those read back with
    /// `agent` or `job`; all of it once `state` was asked for. Each event is applied as it is
    /// recorded.
    after: State,
    whole: bool,
}

/// What a decision is made in: the state it starts from, and the time.
#[derive(Clone, Copy)]
pub(super) struct Cx<'a> {
    pub state: &'a State,
    pub now: Timestamp,
}

impl Decision {
    /// A decision that starts from `base`.
    pub(super) fn new(base: &State) -> Self {
        let after =
            State { seq: base.seq, last_timer: base.last_timer, last_item: last_item(base), ..State::default() };
        Self { after, ..Self::default() }
    }

    pub(super) fn event(&mut self, e: Event) {
        apply(&mut self.after, &e);
        self.events.push(e);
    }

    pub(super) fn effect(&mut self, e: Effect) {
        self.effects.push(e);
    }

    /// The whole state as this decision leaves it (made from `base` once, then kept).
    pub(super) fn state(&mut self, base: &State) -> &State {
        if !self.whole {
            let mut after = base.clone();
            for e in &self.events {
                apply(&mut after, e);
            }
            self.after = after;
            self.whole = true;
        }
        &self.after
    }

    /// Agent `id` as this decision leaves it: its own fields (what another record gives it, such
    /// as a pool slot's path, is in `state`).
    pub(super) fn agent(&mut self, base: &State, id: &AgentId) -> Option<&Agent> {
        self.keep(base, id, |s| &s.agents, |s| &mut s.agents);
        self.after.agents.get(id)
    }

    /// Job `id` as this decision leaves it (its own fields, as `agent`).
    pub(super) fn job(&mut self, base: &State, id: &JobId) -> Option<&Job> {
        self.keep(base, id, |s| &s.jobs, |s| &mut s.jobs);
        self.after.jobs.get(id)
    }

    /// Keeps record `id` of `base`'s map `of` in the state this decision makes, with the events
    /// recorded so far applied, unless it is kept already (or the decision made it).
    fn keep<K: Ord + Clone, V: Clone>(
        &mut self,
        base: &State,
        id: &K,
        of: fn(&State) -> &BTreeMap<K, V>,
        of_mut: fn(&mut State) -> &mut BTreeMap<K, V>,
    ) {
        if self.whole || of(&self.after).contains_key(id) {
            return;
        }
        let Some(record) = of(base).get(id) else { return };
        let mut own = State { seq: base.seq, ..State::default() };
        of_mut(&mut own).insert(id.clone(), record.clone());
        for e in &self.events {
            apply(&mut own, e);
        }
        if let Some(record) = of_mut(&mut own).remove(id) {
            of_mut(&mut self.after).insert(id.clone(), record);
        }
    }

    /// The id the next timer gets.
    fn next_timer(&self, base: &State) -> TimerId {
        TimerId(base.last_timer.max(self.after.last_timer) + 1)
    }

    /// The id the next message gets.
    pub(super) fn next_message(&self, base: &State) -> MessageId {
        base.next_message_id().max(self.after.next_message_id())
    }

    /// The id the next escalation gets.
    pub(super) fn next_escalation(&self, base: &State) -> EscalationId {
        base.next_escalation_id().max(self.after.next_escalation_id())
    }

    /// The id the next queue item gets (ids are never reused, even after a drop).
    pub(super) fn next_item(&self, base: &State) -> ItemId {
        ItemId(last_item(base).max(last_item(&self.after)) + 1)
    }
}

/// The last queue item id `state` handed out. (A state saved before `last_item` existed has it
/// at 0: its items still count.)
fn last_item(state: &State) -> u64 {
    state.last_item.max(state.items.keys().next_back().map_or(0, |i| i.0))
}

pub(super) fn create(ws: &Workspace, resume: bool) -> Effect {
    Effect::CreateWorkspace {
        id: ws.id.clone(),
        path: ws.path.clone(),
        kind: ws.kind.clone(),
        settings_from: ws.settings_from.clone(),
        settings_folder: ws.settings_folder.clone(),
        resume,
    }
}

pub(super) fn remove(state: &State, ws: &Workspace, force: bool, delete_branch: bool) -> Effect {
    Effect::RemoveWorkspace {
        id: ws.id.clone(),
        path: ws.path.clone(),
        kind: ws.kind.clone(),
        force,
        delete_branch,
        owned: ws.owned_files(),
        forget: state.agents.values().filter(|a| a.workspace == ws.id).filter_map(Agent::inherited_env).collect(),
    }
}

/// Has the workspace looked at; a merged one's branch is counted against its merge's target.
pub(super) fn inspect(state: &State, ws: &Workspace) -> Effect {
    inspect_against(ws, merge_pending(state, &ws.id).map(|m| m.merged.into.as_str()))
}

/// The merge of workspace `id` still under way, if there is one.
pub(super) fn merge_pending<'a>(state: &'a State, id: &WorkspaceId) -> Option<&'a crate::Merge> {
    state.merges.get(id).filter(|m| m.pending())
}

/// Has the workspace looked at, its branch counted against `into` when given.
pub(super) fn inspect_against(ws: &Workspace, into: Option<&str>) -> Effect {
    Effect::InspectWorkspace {
        id: ws.id.clone(),
        path: ws.path.clone(),
        kind: ws.kind.clone(),
        owned: ws.owned_files(),
        into: into.map(str::to_owned),
    }
}

/// Starts the agent's session: its driver's command line and files, its output copied to
/// `<dir>/output.log`. `resume` restarts it (ending the old session) with its conversation
/// resumed and, for drivers that take one, a first message.
pub(super) fn spawn(agent: &Agent, resume: Option<Option<&str>>) -> Effect {
    spawn_replacing(agent, resume, None)
}

pub(super) fn spawn_replacing(
    agent: &Agent,
    resume: Option<Option<&str>>,
    replace: Option<crate::SessionName>,
) -> Effect {
    // Its files and hooks as where it runs sees them (in a pod: bosun's paths there).
    let settings = agent.runtime.agent_dir(agent).join("settings.json");
    let placed = Agent { hook_command: agent.runtime.hook_command(&agent.hook_command), ..agent.clone() };
    let driver = agent.driver.behaviour();
    let command = driver.command_line(&placed, &settings, resume);
    let files = driver.files(&placed, &settings);
    // A fork's first launch finds the conversation it starts from where its program looks.
    let copies = if resume.is_none() && agent.restarts == 0 { driver.fork_copies(agent) } else { Vec::new() };
    // Copied once it holds the forked agent's last words, which its program may write late.
    let hold = if copies.is_empty() { None } else { driver.fork_waits_for(agent) };
    Effect::SpawnSession {
        copies,
        agent: agent.id.clone(),
        session: agent.session.clone(),
        cwd: agent.cwd.clone(),
        env: agent.runtime.env(agent),
        config: crate::OwnConfig::of(agent).map(Box::new),
        command,
        files,
        output: agent.output_log(),
        replace,
        hold,
        inherit: agent.inherited_env().filter(|_| agent.runtime.inherits()),
        backend: agent.backend,
        place: agent.runtime.place(agent),
    }
}

/// A new timer `kind` at `at`, with an id no other timer had.
pub(super) fn set_timer(state: &State, d: &mut Decision, kind: TimerKind, at: Timestamp) {
    let id = d.next_timer(state);
    d.event(Event::TimerSet { timer: Timer { id, at, kind } });
    d.effect(Effect::SetTimer { id, at });
}

/// Clears the agent's pending timers that `which` selects.
pub(super) fn clear_timers(state: &State, agent: &Agent, which: impl Fn(&TimerKind) -> bool, d: &mut Decision) {
    for t in state.timers.values().filter(|t| t.kind.agent() == Some(&agent.id) && which(&t.kind)) {
        d.event(Event::TimerCleared { id: t.id });
    }
}

pub(super) fn kill(agent: &Agent) -> Effect {
    Effect::KillSession { agent: agent.id.clone(), session: agent.session.clone() }
}

pub(super) fn send(agent: &Agent, m: &Message) -> Effect {
    Effect::SendText { message: m.id, session: agent.session.clone(), text: m.text.clone() }
}
