//! `State`: everything bosun knows, as folded from the event log, and `apply`, the fold.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

mod agents;
mod jobs;
mod messages;
mod plans;
mod pools;
mod queues;
mod workspaces;

use crate::{
    Agent, AgentId, Escalation, EscalationId, Event, Message, MessageId, Rejection, SessionName, Timer, TimerId,
    Workspace, WorkspaceId, WorkspaceState,
};
use crate::{Cron, Item, ItemId, Job, JobId, Plan, RequestId, Worker};

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
    /// The prices new responses are costed at (none set: bosun's own, `Prices::defaults`).
    #[serde(default, skip_serializing_if = "crate::price::Prices::is_empty")]
    pub prices: crate::price::Prices,
    /// bosun's config file, as last recorded.
    #[serde(default, skip_serializing_if = "crate::config::Config::is_default")]
    pub config: crate::config::Config,
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
/// nothing. Each event is folded by its domain's file; this match only says which.
pub fn apply(state: &mut State, event: &Event) {
    state.seq += 1;
    crate::merging::follow(&mut state.merges, &state.workspaces, event);
    fold(state, event, state.seq);
}

/// Hands `event`, the `seq`th, to the file of its domain.
fn fold(state: &mut State, event: &Event, seq: u64) {
    match event {
        // Recorded for people and scripts: nothing bosun decides (a merge is followed above).
        Event::WebhookSent { .. }
        | Event::WorkMerged { .. }
        | Event::MergedWorkKept { .. }
        | Event::GateFinished { .. }
        | Event::MessageResubmitted { .. } => {}
        Event::PricesSet { .. } | Event::ConfigSet { .. } | Event::AgentSwitched { .. } => settings(state, event),
        Event::UsageRecorded { .. } | Event::UsageModel { .. } => agents::spend(state, event),
        Event::BudgetNear { .. } | Event::BudgetUnseen { .. } => agents::spend(state, event),
        Event::AgentPaused { .. } | Event::AgentUnpaused { .. } => agents::spend(state, event),
        Event::PullRequestOpened { .. }
        | Event::WorkspaceCreating { .. }
        | Event::WorkspaceReady { .. }
        | Event::WorkspaceRemoved { .. }
        | Event::WorkspaceCreateFailed { .. }
        | Event::WorkspaceStale { .. }
        | Event::WorkspaceInUse { .. }
        | Event::WorkspaceReleased { .. }
        | Event::WorkspaceRemoving { .. }
        | Event::WorkspaceRemoveFailed { .. } => workspaces::apply(state, event),
        Event::PoolCreated { .. }
        | Event::PoolResized { .. }
        | Event::PoolRemoved { .. }
        | Event::SlotCreating { .. }
        | Event::SlotCreated { .. }
        | Event::SlotReset { .. }
        | Event::SlotCreateFailed { .. }
        | Event::SlotRemoved { .. }
        | Event::TaskWaiting { .. }
        | Event::SlotBound { .. }
        | Event::SlotResetting { .. }
        | Event::SlotDirty { .. }
        | Event::SlotMissing { .. }
        | Event::SlotRemoving { .. }
        | Event::SlotRemoveFailed { .. } => pools::apply(state, event),
        Event::AgentCreated { .. }
        | Event::AgentRunning { .. }
        | Event::AgentAdopted { .. }
        | Event::AgentObserved { .. }
        | Event::Heartbeat { .. }
        | Event::RateLimitReset { .. }
        | Event::AgentLogFound { .. }
        | Event::AgentConversationFound { .. }
        | Event::AgentKillRequested { .. }
        | Event::AgentKillFailed { .. }
        | Event::WorkSaved { .. }
        | Event::AgentDied { .. }
        | Event::AgentResuming { .. }
        | Event::AgentFinished { .. } => agents::apply(state, event, seq),
        Event::RecoveryStep { .. }
        | Event::DialogAnswered { .. }
        | Event::DialogLeft { .. }
        | Event::DialogKeys { .. }
        | Event::PermissionAnswered { .. }
        | Event::CallBlocked { .. }
        | Event::PermissionModeReported { .. }
        | Event::AgentSaid { .. }
        | Event::TurnClassifying { .. }
        | Event::TurnClassified { .. }
        | Event::RecoveryReset { .. } => agents::turn(state, event, seq),
        Event::JobCreated { .. }
        | Event::StepEntered { .. }
        | Event::StepWaiting { .. }
        | Event::StepRetried { .. }
        | Event::JobResumed { .. }
        | Event::StepResumed { .. }
        | Event::JobCancelling { .. }
        | Event::JobFinished { .. } => jobs::apply(state, event),
        Event::PlanStarted { .. }
        | Event::PlanJobDispatched { .. }
        | Event::PlanVariantEnded { .. }
        | Event::PlanVariantChosen { .. }
        | Event::PlanJobEnded { .. }
        | Event::PlanResumed { .. } => plans::apply(state, event),
        Event::ItemPushed { .. }
        | Event::ItemTaken { .. }
        | Event::ItemFinished { .. }
        | Event::ItemRequeued { .. }
        | Event::ItemDropped { .. }
        | Event::WorkerStarted { .. }
        | Event::WorkerStopped { .. }
        | Event::WorkerListed { .. }
        | Event::CronStarted { .. }
        | Event::CronStopped { .. }
        | Event::CronFired { .. }
        | Event::CronFailed { .. } => queues::apply(state, event),
        Event::RequestDone { .. }
        | Event::EscalationRaised { .. }
        | Event::EscalationResolved { .. }
        | Event::TimerSet { .. }
        | Event::TimerCleared { .. }
        | Event::MessageQueued { .. }
        | Event::MessageSending { .. }
        | Event::MessageDelivered { .. }
        | Event::MessageFailed { .. } => messages::apply(state, event, seq),
    }
}

/// What is set for bosun and its agents' accounts: the prices and bosun's config the daemon read
/// as it started, and an agent moved to another account (its transcript is found anew there).
fn settings(state: &mut State, event: &Event) {
    match event {
        Event::PricesSet { prices } => state.prices = prices.clone(),
        Event::ConfigSet { config } => state.config = config.clone(),
        Event::AgentSwitched { id, env, log, .. } => {
            if let Some(agent) = state.agents.get_mut(id) {
                agent.env.extend(env.clone());
                agent.log = log.clone();
                agent.limited_until = None;
            }
        }
        _ => {}
    }
}

impl State {
    /// The agents of workspace `ws` that have not died.
    pub fn living_in<'a>(&'a self, ws: &'a WorkspaceId) -> impl Iterator<Item = &'a Agent> + 'a {
        self.agents.values().filter(move |a| &a.workspace == ws && !a.state.is_dead())
    }

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
