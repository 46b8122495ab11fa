//! Run memory (seed 003): which recorded events concern a job (`JobScope`), the checkpoint of
//! where it stands (`Checkpoint`), and where a resume takes it up again (`ResumePoint`).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::{
    Agent, AgentId, DeathReason, Escalation, EscalationId, Event, Job, JobId, Message, MessageId, SessionState, State,
    StepRun, TimerId, TimerKind, Timestamp, Workspace, WorkspaceId,
};

/// The files `bosun job export` writes: the checkpoint and the events.
pub const CHECKPOINT_FILE: &str = "state.json";
pub const EVENTS_FILE: &str = "events.jsonl";

/// The records a job's history is about: the job, the jobs it ran as steps, its workspace, the
/// agents its steps ran, and their messages, escalations and timers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobScope {
    pub jobs: BTreeSet<JobId>,
    pub agents: BTreeSet<AgentId>,
    pub workspaces: BTreeSet<WorkspaceId>,
    pub messages: BTreeSet<MessageId>,
    pub escalations: BTreeSet<EscalationId>,
    /// Timers leave the state once cleared: those seen set while reading the log are added.
    pub timers: BTreeSet<TimerId>,
}

impl JobScope {
    /// Takes in the records `e` makes that belong to the scope.
    fn learn(&mut self, e: &Event) {
        match e {
            Event::JobCreated { job } if job.spec.parent.as_ref().is_some_and(|(p, _, _)| self.jobs.contains(p)) => {
                self.jobs.insert(job.spec.id.clone());
            }
            Event::AgentCreated { agent } if agent.step.as_ref().is_some_and(|(j, _, _)| self.jobs.contains(j)) => {
                self.agents.insert(agent.id.clone());
                self.workspaces.insert(agent.workspace.clone());
            }
            Event::MessageQueued { message } if self.agents.contains(&message.agent) => {
                self.messages.insert(message.id);
            }
            Event::EscalationRaised { escalation } if self.agents.contains(&escalation.agent) => {
                self.escalations.insert(escalation.id);
            }
            _ => {}
        }
    }

    /// The scope of `job` as `state` knows it, or none when there is no such job.
    pub fn of(state: &State, job: &JobId) -> Option<Self> {
        let root = state.jobs.get(job)?;
        let mut scope = Self::default();
        scope.jobs.insert(root.spec.id.clone());
        // Jobs run as steps, and the jobs those ran, until no more are found.
        loop {
            let children: Vec<JobId> = state
                .jobs
                .values()
                .filter(|j| j.spec.parent.as_ref().is_some_and(|(p, _, _)| scope.jobs.contains(p)))
                .map(|j| j.spec.id.clone())
                .filter(|id| !scope.jobs.contains(id))
                .collect();
            if children.is_empty() {
                break;
            }
            scope.jobs.extend(children);
        }
        let jobs = scope.jobs.iter().filter_map(|id| state.jobs.get(id));
        scope.workspaces.extend(jobs.filter_map(|j| j.workspace.clone()));
        scope.agents.extend(
            state
                .agents
                .values()
                .filter(|a| a.step.as_ref().is_some_and(|(j, _, _)| scope.jobs.contains(j)))
                .map(|a| a.id.clone()),
        );
        scope.messages.extend(state.messages.values().filter(|m| scope.agents.contains(&m.agent)).map(|m| m.id));
        scope.escalations.extend(state.escalations.values().filter(|e| scope.agents.contains(&e.agent)).map(|e| e.id));
        let timers: Vec<TimerId> = state.timers.values().filter(|t| scope.owns_timer(&t.kind)).map(|t| t.id).collect();
        scope.timers.extend(timers);
        Some(scope)
    }

    /// The records an agent's history is about: the agent, its workspace, its messages and
    /// escalations and timers; none when there is no such agent.
    pub fn of_agent(state: &State, agent: &AgentId) -> Option<Self> {
        let a = state.agents.get(agent)?;
        let mut scope = Self::default();
        scope.agents.insert(a.id.clone());
        scope.workspaces.insert(a.workspace.clone());
        scope.messages.extend(state.messages.values().filter(|m| &m.agent == agent).map(|m| m.id));
        scope.escalations.extend(state.escalations.values().filter(|e| &e.agent == agent).map(|e| e.id));
        let timers: Vec<TimerId> = state.timers.values().filter(|t| scope.owns_timer(&t.kind)).map(|t| t.id).collect();
        scope.timers.extend(timers);
        Some(scope)
    }

    /// Whether `e` is about a record of the scope. Read the log in order: a timer's setting
    /// teaches the scope its id, so its clearing is known to concern it too; so does a job or
    /// agent made for a step of one of its jobs, and a message or escalation of its agents.
    pub fn concerns(&mut self, e: &Event) -> bool {
        self.learn(e);
        self.about(e)
    }

    /// Whether `e` is about a record the scope knows.
    fn about(&mut self, e: &Event) -> bool {
        let job = |id: &JobId| self.jobs.contains(id);
        let agent = |id: &AgentId| self.agents.contains(id);
        let ws = |id: &WorkspaceId| self.workspaces.contains(id);
        match e {
            Event::RequestDone { .. } | Event::WebhookSent { .. } => false,
            Event::PricesSet { .. } | Event::ConfigSet { .. } => false,
            Event::WorkspaceCreating { workspace } => ws(&workspace.id),
            Event::WorkspaceInUse { id, agent: a } => ws(id) || agent(a),
            Event::WorkSaved { agent: a, .. } => agent(a),
            Event::WorkspaceReady { id, .. }
            | Event::WorkspaceCreateFailed { id, .. }
            | Event::WorkspaceReleased { id, .. }
            | Event::WorkspaceStale { id, .. }
            | Event::WorkspaceRemoving { id, .. }
            | Event::WorkspaceRemoved { id, .. }
            | Event::WorkspaceRemoveFailed { id, .. } => ws(id),
            Event::TaskWaiting { workspace, .. } | Event::SlotBound { workspace, .. } => ws(workspace),
            Event::PoolCreated { .. } | Event::PoolResized { .. } | Event::PoolRemoved { .. } => false,
            Event::SlotCreating { .. }
            | Event::SlotCreated { .. }
            | Event::SlotCreateFailed { .. }
            | Event::SlotResetting { .. }
            | Event::SlotReset { .. }
            | Event::SlotDirty { .. }
            | Event::SlotMissing { .. }
            | Event::SlotRemoving { .. }
            | Event::SlotRemoved { .. }
            | Event::SlotRemoveFailed { .. } => false,
            Event::AgentCreated { agent: a } => agent(&a.id),
            Event::AgentRunning { id, .. }
            | Event::AgentAdopted { id, .. }
            | Event::AgentObserved { id, .. }
            | Event::Heartbeat { id, .. }
            | Event::RateLimitReset { id, .. }
            | Event::AgentLogFound { id, .. }
            | Event::AgentConversationFound { id, .. }
            | Event::AgentKillRequested { id }
            | Event::AgentKillFailed { id, .. }
            | Event::AgentDied { id, .. }
            | Event::AgentResuming { id, .. }
            | Event::AgentSwitched { id, .. }
            | Event::AgentFinished { id, .. }
            | Event::RecoveryStep { id, .. }
            | Event::RecoveryReset { id, .. }
            | Event::GateFinished { id, .. }
            | Event::AgentSaid { id, .. }
            | Event::UsageRecorded { id, .. }
            | Event::UsageModel { id, .. }
            | Event::AgentUnpaused { id, .. }
            | Event::PermissionAnswered { id, .. }
            | Event::CallBlocked { id, .. }
            | Event::PermissionModeReported { id, .. }
            | Event::DialogAnswered { id, .. }
            | Event::DialogKeys { id, .. }
            | Event::DialogLeft { id, .. }
            | Event::TurnClassifying { id, .. }
            | Event::TurnClassified { id, .. } => agent(id),
            Event::BudgetNear { id, .. } | Event::BudgetUnseen { id, .. } | Event::AgentPaused { id, .. } => agent(id),
            Event::EscalationRaised { escalation: x } => self.escalations.contains(&x.id) || agent(&x.agent),
            Event::EscalationResolved { id, .. } => self.escalations.contains(id),
            Event::JobCreated { job: j } => job(&j.spec.id),
            Event::StepEntered { job: j, .. }
            | Event::StepWaiting { job: j, .. }
            | Event::StepRetried { job: j, .. }
            | Event::JobResumed { job: j, .. }
            | Event::StepResumed { job: j, .. }
            | Event::JobCancelling { job: j }
            | Event::JobFinished { job: j, .. }
            | Event::ItemTaken { job: j, .. }
            | Event::PlanJobDispatched { job: j, .. } => job(j),
            Event::CronFired { job: j, .. } => j.as_ref().is_some_and(job),
            Event::TimerSet { timer } => self.timer_set(timer),
            Event::TimerCleared { id } => self.timers.contains(id),
            Event::MessageQueued { message } => self.messages.contains(&message.id) || agent(&message.agent),
            Event::MessageSending { id }
            | Event::MessageDelivered { id }
            | Event::MessageFailed { id, .. }
            | Event::MessageResubmitted { id } => self.messages.contains(id),
            Event::ItemPushed { .. }
            | Event::ItemFinished { .. }
            | Event::ItemRequeued { .. }
            | Event::ItemDropped { .. }
            | Event::WorkerStarted { .. }
            | Event::WorkerStopped { .. }
            | Event::WorkerListed { .. }
            | Event::PlanStarted { .. }
            | Event::PlanJobEnded { .. }
            | Event::PlanVariantEnded { .. }
            | Event::PlanVariantChosen { .. }
            | Event::WorkMerged { .. }
            | Event::MergedWorkKept { .. }
            | Event::PullRequestOpened { .. }
            | Event::PlanResumed { .. }
            | Event::CronStarted { .. }
            | Event::CronStopped { .. }
            | Event::CronFailed { .. } => false,
        }
    }

    /// Whether the timer is the scope's, which teaches the scope its id.
    fn timer_set(&mut self, timer: &crate::Timer) -> bool {
        let mine = self.owns_timer(&timer.kind);
        if mine {
            self.timers.insert(timer.id);
        }
        mine
    }

    fn owns_timer(&self, kind: &TimerKind) -> bool {
        match kind {
            TimerKind::Backoff { job } => self.jobs.contains(job),
            other => other.agent().is_some_and(|a| self.agents.contains(a)),
        }
    }
}

/// Where a job stands, as `bosun job export` writes it to `state.json`: enough for a person or
/// a tool to see what it was doing and how `bosun job resume` takes it up again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub version: u32,
    pub exported_at: Timestamp,
    /// The seq of the last recorded event the checkpoint reflects.
    pub seq: u64,
    pub job: Job,
    /// Where a resume takes the job up again (none while it runs or once done).
    pub resume: Option<ResumePoint>,
    /// The jobs it ran as steps.
    pub children: Vec<Job>,
    pub workspace: Option<Workspace>,
    /// The agents its steps ran, in the order they were made.
    pub agents: Vec<Agent>,
    pub messages: Vec<Message>,
    pub escalations: Vec<Escalation>,
    /// What its agents spent together, by model: tokens, the cost of the priced ones, and
    /// `unpriced` for a model with no price.
    #[serde(default)]
    pub spent_by_model: std::collections::BTreeMap<String, crate::usage::Spend>,
    /// Their tokens together.
    #[serde(default)]
    pub tokens: crate::usage::Tokens,
    /// What they cost together, in nano-dollars: none (cost unknown) when some model had no
    /// price (`spent_by_model` has the cost of the rest).
    #[serde(default)]
    pub cost: Option<u64>,
}

impl Checkpoint {
    pub const VERSION: u32 = 1;

    /// The checkpoint of `job` in `state`, made at `now`.
    pub fn of(state: &State, job: &JobId, now: Timestamp) -> Option<Self> {
        let scope = JobScope::of(state, job)?;
        let j = state.jobs.get(job)?;
        let mut agents: Vec<Agent> =
            scope.agents.iter().filter_map(|id| state.agents.get(id)).cloned().collect::<Vec<_>>();
        agents.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        let mut spent_by_model: std::collections::BTreeMap<String, crate::usage::Spend> = Default::default();
        for (model, spend) in agents.iter().flat_map(|a| a.usage.spends()) {
            spent_by_model.entry(model).or_default().add(&spend);
        }
        let mut all = crate::usage::Spend::default();
        spent_by_model.values().for_each(|s| all.add(s));
        Some(Self {
            spent_by_model,
            tokens: all.tokens,
            cost: all.known_cost(),
            version: Self::VERSION,
            exported_at: now,
            seq: state.seq,
            resume: ResumePoint::of(state, j),
            children: scope.jobs.iter().filter(|id| *id != job).filter_map(|id| state.jobs.get(id)).cloned().collect(),
            workspace: j.workspace.as_ref().and_then(|w| state.workspaces.get(w)).cloned(),
            agents,
            messages: scope.messages.iter().filter_map(|id| state.messages.get(id)).cloned().collect(),
            escalations: scope.escalations.iter().filter_map(|id| state.escalations.get(id)).cloned().collect(),
            job: j.clone(),
        })
    }
}

/// How `bosun job resume` takes a stopped job up again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum ResumePoint {
    /// Mid-step: the agent the step's try ran is restarted with its conversation resumed.
    MidStep {
        step: String,
        attempt: u32,
        agent: AgentId,
        /// The conversation it continues (Claude's `--resume`, Codex's rollout), when known.
        session: Option<String>,
    },
    /// The step where it stopped starts again.
    Step { step: String },
    /// It stopped before its first step: it starts from there.
    Start,
}

impl ResumePoint {
    /// Where a resume of `job` would take it up, or none when it is not stopped.
    pub fn of(state: &State, job: &Job) -> Option<Self> {
        if !matches!(job.state, crate::JobState::Failed { .. } | crate::JobState::Cancelled) {
            return None;
        }
        let Some(step) = job.step.clone() else { return Some(Self::Start) };
        Some(match stopped_agent(state, job) {
            Some(a) => Self::MidStep { step, attempt: job.attempt, agent: a.id.clone(), session: conversation(a) },
            None => Self::Step { step },
        })
    }
}

/// The agent a resume of `job` restarts with its conversation: the one the current step's try
/// ran last, when it died without finishing its work (crashed, lost or killed, its policy having
/// said neither `done` nor `fail`) and its driver can take its conversation up again.
pub fn stopped_agent<'a>(state: &'a State, job: &Job) -> Option<&'a Agent> {
    let step = job.step.as_deref()?;
    if !matches!(job.spec.step(step)?.run, StepRun::Agent(_)) {
        return None;
    }
    let ran = |a: &&Agent| a.step.as_ref().is_some_and(|(j, s, t)| j == &job.spec.id && s == step && *t == job.attempt);
    let a = state.agents.values().filter(ran).max_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)))?;
    let unfinished = matches!(
        &a.state,
        SessionState::Dead { reason: DeathReason::Crashed { .. } | DeathReason::Lost | DeathReason::Killed }
    );
    (unfinished && a.outcome.is_none() && conversation(a).is_some()).then_some(a)
}

/// The conversation the agent's driver resumes, if it can resume one.
fn conversation(a: &Agent) -> Option<String> {
    a.driver.behaviour().conversation(a)
}
