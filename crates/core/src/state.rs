//! `State`: everything bosun knows, as folded from the event log, and `apply`, the fold.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

use crate::{
    Agent, AgentId, Escalation, EscalationId, Event, Message, MessageId, MessageState, Rejection, Resolution,
    SessionName, SessionState, SlotState, Timer, TimerId, Timestamp, Workspace, WorkspaceId, WorkspaceState,
};
use crate::{Cron, Item, ItemId, ItemState, Job, JobId, JobState, Plan, RequestId, Worker};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// How many events have been applied.
    #[serde(default)]
    pub seq: u64,
    pub workspaces: BTreeMap<WorkspaceId, Workspace>,
    pub agents: BTreeMap<AgentId, Agent>,
    /// The pull requests `bosun pr` opened, by the workspace whose branch each is of (kept
    /// after the workspace goes).
    #[serde(default)]
    pub pull_requests: BTreeMap<WorkspaceId, crate::PullRequest>,
    /// The merges `bosun merge` made, by the workspace whose branch each is of: what each still
    /// owes, and what became of its workspace (kept after the workspace goes).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub merges: crate::merging::Merges,
    pub messages: BTreeMap<MessageId, Message>,
    #[serde(default)]
    pub escalations: BTreeMap<EscalationId, Escalation>,
    /// Pending timers.
    #[serde(default)]
    pub timers: BTreeMap<TimerId, Timer>,
    #[serde(default)]
    pub jobs: BTreeMap<JobId, Job>,
    #[serde(default)]
    pub items: BTreeMap<ItemId, Item>,
    #[serde(default)]
    pub workers: BTreeMap<String, Worker>,
    #[serde(default)]
    pub crons: BTreeMap<String, Cron>,
    #[serde(default)]
    pub plans: BTreeMap<String, Plan>,
    /// Workspace pools, by project.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pools: BTreeMap<String, crate::Pool>,
    /// The last timer id handed out (ids are never reused).
    #[serde(default)]
    pub last_timer: u64,
    /// The last queue item id handed out (ids are never reused, even after a drop).
    #[serde(default)]
    pub last_item: u64,
    /// The newest requests carried out (at most `REQUESTS_KEPT`), oldest first: each one's id,
    /// the seq of its first event and how many it recorded.
    #[serde(default, skip_serializing_if = "VecDeque::is_empty")]
    pub requests: VecDeque<(RequestId, u64, u32)>,
}

/// How many requests are remembered as carried out: far more than can be sent again while a
/// daemon restarts.
pub const REQUESTS_KEPT: usize = 4096;

impl State {
    /// The events request `id` recorded, as (first seq, count), when it was carried out.
    pub fn request(&self, id: RequestId) -> Option<(u64, u32)> {
        self.requests.iter().rev().find(|(r, ..)| *r == id).map(|&(_, first, n)| (first, n))
    }
}

/// Folds one event into the state. Never fails: an event about a record that is gone changes
/// nothing.
pub fn apply(state: &mut State, event: &Event) {
    state.seq += 1;
    let seq = state.seq;
    crate::merging::follow(&mut state.merges, &state.workspaces, event);
    match event {
        // Recorded for people and scripts; it changes nothing bosun decides (a merge is
        // followed above).
        Event::WebhookSent { .. } | Event::WorkMerged { .. } | Event::MergedWorkKept { .. } => {}
        Event::PullRequestOpened { workspace, pr } => {
            state.pull_requests.insert(workspace.clone(), pr.clone());
        }
        Event::RequestDone { id, events } => {
            if state.requests.len() >= REQUESTS_KEPT {
                state.requests.pop_front();
            }
            state.requests.push_back((*id, seq.saturating_sub(u64::from(*events)), *events));
        }
        Event::WorkspaceCreating { workspace } => {
            state.workspaces.insert(workspace.id.clone(), workspace.clone());
        }
        Event::WorkspaceReady { id, .. } => set_ws(state, id, WorkspaceState::Ready),
        Event::WorkspaceRemoved { id, .. } => {
            state.workspaces.remove(id);
            leave_line(state, id);
        }
        Event::WorkspaceCreateFailed { id, error } | Event::WorkspaceStale { id, why: error } => {
            leave_line(state, id);
            if let Some(ws) = state.workspaces.get_mut(id) {
                ws.state = WorkspaceState::Stale;
                ws.error = Some(error.clone());
            }
        }
        Event::WorkspaceInUse { id, agent } => set_ws(state, id, WorkspaceState::InUse { agent: agent.clone() }),
        Event::WorkspaceReleased { id, dirty } => set_ws(state, id, released(*dirty)),
        Event::WorkspaceRemoving { id, force, keep_branch } => {
            set_ws(state, id, WorkspaceState::Removing { force: *force, keep_branch: keep_branch.clone() })
        }
        Event::WorkspaceRemoveFailed { id, error, dirty } => {
            if let Some(ws) = state.workspaces.get_mut(id) {
                ws.state = released(*dirty);
                ws.error = Some(error.clone());
            }
        }
        Event::PoolCreated { pool } => {
            state.pools.insert(pool.project.clone(), (**pool).clone());
        }
        Event::PoolResized { project, size } => {
            if let Some(p) = state.pools.get_mut(project) {
                p.size = *size;
            }
        }
        Event::PoolRemoved { project } => {
            state.pools.remove(project);
        }
        Event::SlotCreating { project, slot } => {
            if let (Some(p), Some((_, n))) = (state.pools.get_mut(project), slot.id.parts()) {
                p.slots.insert(n, slot.clone());
            }
        }
        Event::SlotCreated { project, n, commit, at } | Event::SlotReset { project, n, commit, at } => {
            if let Some(slot) = slot_mut(state, project, *n) {
                slot.commit = Some(commit.clone());
                slot.error = None;
                set_slot(slot, SlotState::Available, *at);
            }
        }
        Event::SlotCreateFailed { project, n, .. } | Event::SlotRemoved { project, n } => {
            if let Some(p) = state.pools.get_mut(project) {
                p.slots.remove(n);
            }
        }
        Event::TaskWaiting { project, workspace } => {
            if let Some(p) = state.pools.get_mut(project) {
                p.waiting.push_back(workspace.clone());
            }
        }
        Event::SlotBound { project, n, workspace, at } => {
            leave_line(state, workspace);
            let Some(slot) = slot_mut(state, project, *n) else { return };
            set_slot(slot, SlotState::Bound { workspace: workspace.clone() }, *at);
            let slot = slot.clone();
            if let Some(ws) = state.workspaces.get_mut(workspace) {
                crate::pool::bind(ws, &slot);
            }
            for agent in state.agents.values_mut().filter(|a| &a.workspace == workspace) {
                agent.cwd = slot.path.clone();
                agent.env.insert("BOSUN_WORKSPACE".into(), slot.path.display().to_string());
            }
        }
        Event::SlotResetting { project, n, pristine, force, delete_branch, at } => {
            if let Some(slot) = slot_mut(state, project, *n) {
                let new =
                    SlotState::Resetting { pristine: *pristine, force: *force, delete_branch: delete_branch.clone() };
                set_slot(slot, new, *at);
            }
        }
        Event::SlotDirty { project, n, error, at } => {
            if let Some(slot) = slot_mut(state, project, *n) {
                slot.error = error.clone();
                set_slot(slot, SlotState::Dirty, *at);
            }
        }
        Event::SlotMissing { project, n, at } => {
            if let Some(slot) = slot_mut(state, project, *n) {
                set_slot(slot, SlotState::Missing, *at);
            }
        }
        Event::SlotRemoving { project, n, at } => {
            if let Some(slot) = slot_mut(state, project, *n) {
                slot.error = None;
                set_slot(slot, SlotState::Removing { force: true }, *at);
            }
        }
        Event::SlotRemoveFailed { project, n, error, at } => {
            if let Some(slot) = slot_mut(state, project, *n) {
                slot.error = Some(error.clone());
                set_slot(slot, SlotState::Dirty, *at);
            }
        }
        Event::AgentCreated { agent } => {
            state.agents.insert(agent.id.clone(), (**agent).clone());
        }
        Event::AgentRunning { id, pid, at } | Event::AgentAdopted { id, pid, at } => {
            if let Some(agent) = state.agents.get_mut(id) {
                if agent.state == SessionState::Starting {
                    set_agent_state(agent, SessionState::Running, *at, seq);
                }
                if pid.is_some() {
                    agent.pid = *pid;
                }
            }
        }
        Event::AgentObserved { id, state: new, source, at, observation, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.asks = match (new, observation) {
                    (SessionState::Prompt { .. }, Some(crate::Observation::Prompt { asks, .. })) => asks.clone(),
                    _ => None,
                };
                // What it said belongs to the turn before: a new turn says its own.
                if *new == SessionState::Running {
                    agent.said = None;
                }
                set_agent_state(agent, new.clone(), *at, seq);
                agent.source = Some(*source);
            }
        }
        Event::Heartbeat { id, heartbeat, at } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.heartbeats.insert(*heartbeat, *at);
            }
        }
        Event::AgentLogFound { id, path } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.log = Some(path.clone());
            }
        }
        Event::AgentKillRequested { id } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.kill_requested = true;
            }
        }
        Event::AgentKillFailed { id, error } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.error = Some(format!("kill failed: {error}"));
            }
        }
        Event::WorkSaved { agent, saved } => {
            if let Some(a) = state.agents.get_mut(agent) {
                a.saved = Some(saved.clone());
            }
        }
        Event::AgentDied { id, reason, at, error } => {
            if let Some(agent) = state.agents.get_mut(id) {
                set_agent_state(agent, SessionState::Dead { reason: reason.clone() }, *at, seq);
                if error.is_some() {
                    agent.error = error.clone();
                }
            }
        }
        Event::AgentResuming { id, at, session, message } => {
            if let Some(agent) = state.agents.get_mut(id) {
                set_agent_state(agent, SessionState::Starting, *at, seq);
                agent.restarts += 1;
                agent.answering = None;
                agent.resume_message = message.clone();
                agent.pid = None;
                agent.session = session.clone();
                agent.source = None;
                // A new pod saves anew.
                agent.saved = None;
                // A restarted Codex writes a new rollout log.
                if agent.driver.behaviour().new_log_per_session() {
                    agent.log = None;
                }
            }
        }
        Event::AgentFinished { id, outcome, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.outcome = Some(*outcome);
                agent.kill_requested = true;
            }
        }
        Event::RecoveryStep { id, trigger, progress, class, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                match class {
                    Some(c) => agent.class_recovery.insert(*c, *progress),
                    None => agent.recovery.insert(*trigger, *progress),
                };
            }
        }
        // Answered, the agent goes on with its turn until its driver says otherwise.
        Event::DialogAnswered { id, at, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                set_agent_state(agent, SessionState::Running, *at, seq);
                agent.source = Some(crate::Source::Screen);
                agent.asks = None;
                agent.answering = None;
            }
        }
        Event::DialogLeft { id, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.answering = None;
            }
        }
        Event::DialogKeys { id, want, option, menu, picked, at, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                let presses = agent.answering.as_ref().filter(|a| a.want == *want).map_or(0, |a| a.presses);
                agent.answering = Some(crate::Answering {
                    want: *want,
                    presses: presses + 1,
                    pressed_at: Some(*at),
                    picked_at: picked.then_some(*at),
                    menu: menu.clone(),
                    option: option.clone(),
                });
            }
        }
        Event::PermissionAnswered { id, decision } => {
            if let Some(agent) = state.agents.get_mut(id) {
                if agent.permissions.len() >= crate::DECISIONS_KEPT {
                    agent.permissions.remove(0);
                }
                agent.permissions.push(decision.clone());
            }
        }
        Event::CallBlocked { id, call } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.blocked = Some(call.clone());
            }
        }
        Event::PermissionModeReported { id, mode } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.permission_mode = Some(mode.clone());
            }
        }
        Event::AgentSaid { id, text } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.said = Some(text.clone());
            }
        }
        Event::TurnClassifying { id, turn } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.classifying = Some(*turn);
            }
        }
        // A verdict for a turn the agent has already left is history, not its current verdict.
        Event::TurnClassified { id, verdict, turn, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                if agent.classifying == Some(*turn) {
                    agent.classifying = None;
                }
                if agent.state_seq == *turn {
                    agent.verdict = Some(verdict.clone());
                    agent.verdict_turn = Some(*turn);
                }
            }
        }
        Event::RecoveryReset { id, trigger } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.recovery.remove(trigger);
                if *trigger == crate::Trigger::Idle {
                    agent.class_recovery.clear();
                }
            }
        }
        Event::GateFinished { .. } => {}
        Event::EscalationRaised { escalation } => {
            state.escalations.insert(escalation.id, escalation.clone());
        }
        Event::EscalationResolved { id, at, message } => {
            if let Some(e) = state.escalations.get_mut(id) {
                e.resolved = Some(Resolution { at: *at, message: message.clone() });
            }
        }
        Event::JobCreated { job } => {
            state.jobs.insert(job.spec.id.clone(), (**job).clone());
        }
        Event::StepEntered { job, step, at } => {
            if let Some(j) = state.jobs.get_mut(job) {
                *j.visits.entry(step.clone()).or_default() += 1;
                j.step = Some(step.clone());
                j.attempt = 1;
                j.state = JobState::Running;
                j.state_since = *at;
            }
        }
        Event::StepWaiting { job, at } => {
            if let Some(j) = state.jobs.get_mut(job) {
                j.state = JobState::Waiting;
                j.state_since = *at;
            }
        }
        Event::StepRetried { job, attempt, at } => {
            if let Some(j) = state.jobs.get_mut(job) {
                j.attempt = *attempt;
                j.state = JobState::Running;
                j.state_since = *at;
            }
        }
        Event::JobResumed { job, at } => {
            if let Some(j) = state.jobs.get_mut(job) {
                j.state = JobState::Running;
                j.state_since = *at;
                j.cancelled = false;
                j.visits.clear();
                j.resumes += 1;
                j.resumed_with = None;
            }
        }
        Event::StepResumed { job, step, attempt, agent, at } => {
            if let Some(j) = state.jobs.get_mut(job) {
                j.visits.insert(step.clone(), 1);
                j.step = Some(step.clone());
                j.attempt = *attempt;
                j.state = JobState::Running;
                j.state_since = *at;
                j.resumed_with = Some(agent.clone());
            }
            // Taken up again: whatever ended it before no longer speaks for it.
            if let Some(a) = state.agents.get_mut(agent) {
                a.kill_requested = false;
                a.recovery.clear();
                a.class_recovery.clear();
            }
        }
        Event::JobCancelling { job } => {
            if let Some(j) = state.jobs.get_mut(job) {
                j.cancelled = true;
            }
        }
        Event::JobFinished { job, state: s, at } => {
            if let Some(j) = state.jobs.get_mut(job) {
                j.state = s.clone();
                j.state_since = *at;
            }
        }
        Event::ItemPushed { item } => {
            state.last_item = state.last_item.max(item.id.0);
            state.items.insert(item.id, item.clone());
        }
        Event::ItemTaken { item, job, worker } => {
            if let Some(i) = state.items.get_mut(item) {
                i.state = ItemState::Taken;
                i.tries += 1;
                i.job = Some(job.clone());
                i.worker = Some(worker.clone());
            }
        }
        Event::ItemFinished { item, ok, error } => {
            if let Some(i) = state.items.get_mut(item) {
                if *ok {
                    i.state = ItemState::Done;
                } else {
                    i.failures += 1;
                    i.state = if i.failures > i.retry { ItemState::Dead } else { ItemState::Pending };
                }
                i.error = error.clone();
            }
        }
        Event::ItemRequeued { item } => {
            if let Some(i) = state.items.get_mut(item) {
                i.state = ItemState::Pending;
                i.failures = 0;
                i.error = None;
            }
        }
        Event::ItemDropped { item } => {
            state.items.remove(item);
        }
        Event::WorkerStarted { worker } => {
            state.workers.insert(worker.name.clone(), worker.clone());
        }
        Event::WorkerStopped { name } => {
            if let Some(w) = state.workers.get_mut(name) {
                w.running = false;
            }
        }
        Event::WorkerListed { name, error } => {
            if let Some(w) = state.workers.get_mut(name) {
                w.error = error.clone();
            }
        }
        Event::PlanStarted { plan } => {
            state.plans.insert(plan.id.clone(), plan.clone());
        }
        Event::PlanJobDispatched { plan, index, job, source, merged, variant } => {
            if let Some(p) = state.plans.get_mut(plan) {
                p.dispatched(*index, *variant, job, source, merged);
            }
        }
        Event::PlanVariantEnded { plan, index, variant, target, failure } => {
            if let Some(p) = state.plans.get_mut(plan) {
                p.variant_ended(*index, *variant, target.as_deref(), failure.as_deref());
            }
        }
        Event::PlanVariantChosen { plan, index, variant, by } => {
            if let Some(p) = state.plans.get_mut(plan) {
                p.chose(*index, *variant, by);
            }
        }
        Event::PlanJobEnded { plan, index, target, failure } => {
            if let Some(p) = state.plans.get_mut(plan) {
                p.ended(*index, target.as_deref(), failure.as_deref());
            }
        }
        Event::PlanResumed { plan } => {
            if let Some(p) = state.plans.get_mut(plan) {
                p.resumed();
            }
        }
        Event::CronStarted { cron } => {
            state.crons.insert(cron.name.clone(), cron.clone());
        }
        Event::CronStopped { name } => {
            if let Some(c) = state.crons.get_mut(name) {
                c.running = false;
                c.next = None;
            }
        }
        Event::CronFired { name, job, next, at } => {
            if let Some(c) = state.crons.get_mut(name) {
                c.fired += 1;
                c.next = *next;
                if job.is_some() {
                    c.last_job = job.clone();
                    c.last_started = Some(*at);
                    c.error = None;
                }
            }
        }
        Event::CronFailed { name, error } => {
            if let Some(c) = state.crons.get_mut(name) {
                c.error = Some(error.clone());
            }
        }
        Event::TimerSet { timer } => {
            state.last_timer = state.last_timer.max(timer.id.0);
            state.timers.insert(timer.id, timer.clone());
        }
        Event::TimerCleared { id } => {
            state.timers.remove(id);
        }
        Event::MessageQueued { message } => {
            state.messages.insert(message.id, message.clone());
        }
        Event::MessageSending { id } => {
            if let Some(m) = state.messages.get_mut(id) {
                m.state = MessageState::Sending;
                m.sent_seq = seq;
            }
        }
        Event::MessageDelivered { id } => set_msg(state, *id, MessageState::Delivered),
        Event::MessageFailed { id, error } => set_msg(state, *id, MessageState::Failed { error: error.clone() }),
        Event::MessageResubmitted { .. } => {}
    }
}

fn set_agent_state(agent: &mut Agent, new: SessionState, at: Timestamp, seq: u64) {
    if agent.state != new {
        // A dialog being answered ends with the state it held the agent in.
        agent.answering = None;
        agent.state = new;
        agent.state_since = at;
        agent.state_seq = seq;
    }
}

fn released(dirty: bool) -> WorkspaceState {
    if dirty {
        WorkspaceState::Dirty
    } else {
        WorkspaceState::Ready
    }
}

/// The workspace leaves the line of whichever pool it waits for.
fn leave_line(state: &mut State, ws: &WorkspaceId) {
    for p in state.pools.values_mut() {
        p.waiting.retain(|w| w != ws);
    }
}

fn slot_mut<'a>(state: &'a mut State, project: &str, n: u32) -> Option<&'a mut crate::Slot> {
    state.pools.get_mut(project)?.slots.get_mut(&n)
}

fn set_slot(slot: &mut crate::Slot, new: SlotState, at: Timestamp) {
    slot.state = new;
    slot.state_since = at;
}

fn set_ws(state: &mut State, id: &WorkspaceId, new: WorkspaceState) {
    if let Some(ws) = state.workspaces.get_mut(id) {
        ws.state = new;
    }
}

fn set_msg(state: &mut State, id: MessageId, new: MessageState) {
    if let Some(m) = state.messages.get_mut(&id) {
        m.state = new;
    }
}

impl State {
    /// The agent whose id is `query` or starts with it, or whose name is exactly `query`.
    pub fn find_agent(&self, query: &str) -> Result<&Agent, Rejection> {
        if let Some(a) = self.agents.values().find(|a| a.id.as_str() == query) {
            return Ok(a);
        }
        let matches: Vec<&Agent> =
            self.agents.values().filter(|a| a.id.as_str().starts_with(query) || a.name.as_str() == query).collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(Rejection::NoSuchAgent(query.to_owned())),
            many => Err(Rejection::AmbiguousAgent {
                query: query.to_owned(),
                matches: many.iter().map(|a| a.id.to_string()).collect(),
            }),
        }
    }

    /// The workspace whose id (`ws-<name>-<nonce>`) or nonce starts with `query`.
    pub fn find_workspace(&self, query: &str) -> Result<&Workspace, Rejection> {
        if let Some(w) = self.workspaces.values().find(|w| w.id.as_str() == query) {
            return Ok(w);
        }
        let matches: Vec<&Workspace> = self
            .workspaces
            .values()
            .filter(|w| w.id.as_str().starts_with(query) || w.nonce.as_str().starts_with(query))
            .collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(Rejection::NoSuchWorkspace(query.to_owned())),
            many => Err(Rejection::AmbiguousWorkspace {
                query: query.to_owned(),
                matches: many.iter().map(|w| w.id.to_string()).collect(),
            }),
        }
    }

    /// The workspace of the agent `query` names (see `find_agent`), else of the job it names.
    pub fn find_work(&self, query: &str) -> Result<&Workspace, Rejection> {
        let ws = match self.find_agent(query) {
            Ok(a) => Some(a.workspace.clone()),
            Err(Rejection::NoSuchAgent(_)) => match self.find_job(query) {
                Ok(j) => j.workspace.clone(),
                Err(_) => return Err(Rejection::NoSuchWork(query.to_owned())),
            },
            Err(e) => return Err(e),
        };
        let ws = ws.ok_or_else(|| Rejection::NoSuchWork(format!("{query} (its job has no workspace)")))?;
        self.workspaces.get(&ws).ok_or_else(|| Rejection::NoSuchWorkspace(format!("{ws} (removed)")))
    }

    /// What the newest agent of workspace `ws` said last: the body of a commit or a pull request
    /// of its work.
    pub fn last_words(&self, ws: &crate::WorkspaceId) -> Option<String> {
        let newest = self.agents.values().filter(|a| &a.workspace == ws).max_by_key(|a| a.created_at);
        newest.and_then(|a| a.said.clone())
    }

    /// The job whose id is `query` or starts with it.
    pub fn find_job(&self, query: &str) -> Result<&Job, Rejection> {
        if let Some(j) = self.jobs.values().find(|j| j.spec.id.as_str() == query) {
            return Ok(j);
        }
        let matches: Vec<&Job> = self.jobs.values().filter(|j| j.spec.id.as_str().starts_with(query)).collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(Rejection::NoSuchJob(query.to_owned())),
            _ => Err(Rejection::NoSuchJob(format!("{query} (several match: give more of the id)"))),
        }
    }

    pub fn agent_by_session(&self, session: &SessionName) -> Option<&Agent> {
        self.agents.values().find(|a| &a.session == session)
    }

    /// Workspaces `bosun workspace prune` may remove once a look finds them holding no changes
    /// (a dirty one's may have been committed since, where a look reaches): nothing runs in them.
    pub fn prunable(&self) -> Vec<WorkspaceId> {
        self.workspaces
            .values()
            .filter(|w| match w.state {
                WorkspaceState::Ready | WorkspaceState::Stale => true,
                WorkspaceState::Dirty => w.kind.seen_from_here(),
                _ => false,
            })
            // A pool's workspace held by a script goes back when it is released, not pruned.
            .filter(|w| !matches!(w.kind, crate::WorkspaceKind::Pool(_)))
            .filter(|w| !self.jobs.values().any(|j| j.workspace.as_ref() == Some(&w.id) && !j.state.is_over()))
            .map(|w| w.id.clone())
            .collect()
    }

    pub fn next_message_id(&self) -> MessageId {
        MessageId(self.messages.keys().next_back().map_or(1, |m| m.0 + 1))
    }

    pub fn next_escalation_id(&self) -> EscalationId {
        EscalationId(self.escalations.keys().next_back().map_or(1, |e| e.0 + 1))
    }

    /// Escalations not yet resolved.
    pub fn open_escalations(&self) -> impl Iterator<Item = &Escalation> {
        self.escalations.values().filter(|e| e.resolved.is_none())
    }
}
