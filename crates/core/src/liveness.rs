//! Liveness: every live agent and every running job has something that will move it on — a
//! timer, an effect whose answer is awaited, a person asked, or (for an agent at work) its own
//! reports. `State::stuck` names those that have nothing: never a state to wait in, always a
//! fault of bosun's, and the daemon's start asks a person about each one it finds.

use std::fmt;

use crate::{
    Agent, AgentId, EscalationId, Job, JobId, JobState, MessageId, MessageState, SessionState, State, StepRun, TimerId,
    Trigger, WorkspaceId, WorkspaceKind, WorkspaceState,
};

/// What will move a live agent or a running job on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mover {
    /// A timer of its own.
    Timer(TimerId),
    /// An effect asked for and not answered yet.
    Awaits(Awaited),
    /// An open escalation: a person is asked.
    Person(EscalationId),
    /// Its process runs and reports: a turn's end, a dialog, an error, or its death (which the
    /// periodic listing of sessions catches when nothing reports it).
    Reports,
    /// Its policy leaves it to a person (no chain for where it stands: the default policy only
    /// watches), or it waits for its first message.
    Watched,
    /// It waits in its pool's line for a slot, which the slot's release brings.
    Line(WorkspaceId),
    /// A job's step runs this agent, which is live (and moved on itself).
    Agent(AgentId),
    /// A job's step runs this job, which is running (and moved on itself).
    Job(JobId),
}

/// An effect whose answer is awaited.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Awaited {
    /// Its session being started (`SpawnSession`).
    Spawn(AgentId),
    /// Its session being ended (`KillSession`).
    Kill(AgentId),
    /// The message being typed (`SendText`).
    Delivery(MessageId),
    /// Its idle turn's classifier command (`Classify`).
    Classify(AgentId),
    /// Its chain's gate (`RunGate`).
    Gate(AgentId),
    /// The workspace being made (`CreateWorkspace`).
    Workspace(WorkspaceId),
    /// The job's shell step (`RunStep`).
    Step(JobId),
    /// The job's pull request (`OpenPr`).
    PullRequest(JobId),
    /// What the pod of the job's agent did with its work, which its host says as it ends.
    Save(AgentId),
}

/// Who is stuck.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Subject {
    Agent(AgentId),
    Job(JobId),
}

/// A live agent or a running job that nothing will move on, and what it waits for in vain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stuck {
    pub subject: Subject,
    /// Where it stands and what nothing will bring.
    pub lost: Lost,
}

/// Where a live agent or a running job stands and what nothing will bring it; its display is a
/// sentence for a person.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Lost {
    #[error("agent {0} is dead")]
    Dead(AgentId),
    /// Its chain, where it stands (`at`: "its on_idle chain at step 2 of 3 (`nudge`)"), waits.
    #[error(
        "agent {agent} is {state} with {at}, and nothing will move it on: no timer, no message being typed, no \
         check running, no person asked"
    )]
    Unmoved { agent: AgentId, state: String, at: String },
    #[error("agent {agent} is starting in workspace {workspace}, which is {state}: its session will never be started")]
    NoWorkspace { agent: AgentId, workspace: WorkspaceId, state: &'static str },
    #[error("job {job} waits to try its step {step} again, and no timer will end its wait")]
    NoBackoff { job: JobId, step: String },
    #[error("job {job} waits for its workspace to begin, which is {state}: it will never begin")]
    NeverBegins { job: JobId, state: &'static str },
    #[error("job {job}'s step {step} ran job {child}, which ended {state}, and the step never went on")]
    ChildEnded { job: JobId, step: String, child: JobId, state: String },
    #[error("job {job}'s step {step} runs no job")]
    NoChild { job: JobId, step: String },
    #[error("job {job}'s step {step} ran agent {agent}, which is {state}, and the step never went on")]
    AgentEnded { job: JobId, step: String, agent: AgentId, state: String },
    #[error("job {job}'s step {step} runs no agent")]
    NoAgent { job: JobId, step: String },
}

impl fmt::Display for Stuck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.lost, f)
    }
}

impl State {
    /// Every live agent and running job that nothing will move on.
    pub fn stuck(&self) -> Vec<Stuck> {
        let agents = self.agents.values().filter(|a| !a.state.is_dead()).filter_map(|a| {
            let lost = self.agent_mover(a).err()?;
            Some(Stuck { subject: Subject::Agent(a.id.clone()), lost })
        });
        let jobs = self.jobs.values().filter(|j| !j.state.is_over()).filter_map(|j| {
            let lost = self.job_mover(j).err()?;
            Some(Stuck { subject: Subject::Job(j.spec.id.clone()), lost })
        });
        agents.chain(jobs).collect()
    }

    /// What moves the live agent `a` on; else what it waits for that nothing will bring.
    pub fn agent_mover(&self, a: &Agent) -> Result<Mover, Lost> {
        // Whatever it is, it moves the agent on, or it is checked again once it has.
        if let Some(m) = self.messages.values().find(|m| m.agent == a.id && m.state == MessageState::Sending) {
            return Ok(Mover::Awaits(Awaited::Delivery(m.id)));
        }
        if let Some(t) = self.timers.values().find(|t| t.kind.agent() == Some(&a.id)) {
            return Ok(Mover::Timer(t.id));
        }
        if let Some(e) = self.open_escalations().find(|e| e.agent == a.id) {
            return Ok(Mover::Person(e.id));
        }
        // One starting is ended once its session is up (or its workspace could not be made).
        if (a.kill_requested || a.outcome.is_some()) && a.state != SessionState::Starting {
            return Ok(Mover::Awaits(Awaited::Kill(a.id.clone())));
        }
        let trigger = match &a.state {
            SessionState::Dead { .. } => return Err(Lost::Dead(a.id.clone())),
            SessionState::Starting => return self.starting(a),
            SessionState::Running => return Ok(Mover::Reports),
            SessionState::Idle => Trigger::Idle,
            SessionState::Prompt { .. } => Trigger::Prompt,
            SessionState::Error { .. } => Trigger::Error,
        };
        if trigger == Trigger::Idle && a.classifying == Some(a.state_seq) {
            return Ok(Mover::Awaits(Awaited::Classify(a.id.clone())));
        }
        // The chain the agent follows where it stands: its last turn's class's own, if it has one.
        let class = a.verdict.as_ref().map(|v| v.class);
        let class = class.filter(|c| trigger == Trigger::Idle && a.policy.on_idle_class.contains_key(c));
        let error = match a.state {
            SessionState::Error { error } => Some(error),
            _ => None,
        };
        let chain = &a.policy.chain_for(trigger, error, class).0;
        if chain.is_empty() || waits_for_first_message(self, a) {
            return Ok(Mover::Watched);
        }
        let progress = match class {
            Some(c) => a.class_recovery.get(&c),
            None => a.recovery.get(&trigger),
        };
        let step = progress.and_then(|p| chain.get(p.step).map(|s| (p, s)));
        // A gate's answer either ends the agent's work or moves the chain past it: a chain that
        // stands at one while the agent is still where it fired waits for its answer.
        if step.is_some_and(|(_, s)| matches!(s.action, crate::Action::Gate { .. })) {
            return Ok(Mover::Awaits(Awaited::Gate(a.id.clone())));
        }
        let name = trigger_name(trigger);
        let at = match step {
            Some((p, s)) => format!("its {name} chain at step {} of {} (`{s}`)", p.step + 1, chain.len()),
            None => format!("its {name} chain not started"),
        };
        Err(Lost::Unmoved { agent: a.id.clone(), state: a.state.label(), at })
    }

    /// A starting agent waits for its workspace, then for its session.
    fn starting(&self, a: &Agent) -> Result<Mover, Lost> {
        let ws = self.workspaces.get(&a.workspace);
        match ws.map(|w| &w.state) {
            Some(WorkspaceState::InUse { agent }) if agent == &a.id => Ok(Mover::Awaits(Awaited::Spawn(a.id.clone()))),
            Some(WorkspaceState::Creating) => Ok(Mover::Awaits(Awaited::Workspace(a.workspace.clone()))),
            Some(WorkspaceState::Waiting) => Ok(Mover::Line(a.workspace.clone())),
            state => Err(Lost::NoWorkspace {
                agent: a.id.clone(),
                workspace: a.workspace.clone(),
                state: state.map_or("gone", WorkspaceState::label),
            }),
        }
    }

    /// What moves the running job `j` on; else what it waits for that nothing will bring.
    pub fn job_mover(&self, j: &Job) -> Result<Mover, Lost> {
        let id = &j.spec.id;
        if j.state == JobState::Waiting {
            let backoff = self.timers.values().find(|t| t.kind == crate::TimerKind::Backoff { job: id.clone() });
            return backoff
                .map(|t| Mover::Timer(t.id))
                .ok_or_else(|| Lost::NoBackoff { job: id.clone(), step: step_name(j) });
        }
        let Some(step) = j.step.as_deref().and_then(|s| j.spec.step(s)) else {
            let ws = j.workspace.as_ref().and_then(|w| self.workspaces.get(w));
            return match ws.map(|w| (&w.id, &w.state)) {
                Some((w, WorkspaceState::Creating)) => Ok(Mover::Awaits(Awaited::Workspace(w.clone()))),
                Some((w, WorkspaceState::Waiting)) => Ok(Mover::Line(w.clone())),
                other => Err(Lost::NeverBegins { job: id.clone(), state: other.map_or("gone", |(_, s)| s.label()) }),
            };
        };
        let this_try =
            |(job, name, attempt): &(JobId, String, u32)| job == id && name == &step.name && *attempt == j.attempt;
        match &step.run {
            StepRun::Shell(_) => Ok(Mover::Awaits(Awaited::Step(id.clone()))),
            StepRun::Pr { .. } => Ok(Mover::Awaits(Awaited::PullRequest(id.clone()))),
            StepRun::Job(_) => {
                let child = self.jobs.values().find(|c| c.spec.parent.as_ref().is_some_and(this_try));
                match child {
                    Some(c) if !c.state.is_over() => Ok(Mover::Job(c.spec.id.clone())),
                    Some(c) => Err(Lost::ChildEnded {
                        job: id.clone(),
                        step: step.name.clone(),
                        child: c.spec.id.clone(),
                        state: c.state.label().to_string(),
                    }),
                    None => Err(Lost::NoChild { job: id.clone(), step: step.name.clone() }),
                }
            }
            StepRun::Agent(_) => {
                // The step's live agent, else the newest that ran it (a step entered again runs
                // a new one).
                let ran = || self.agents.values().filter(|a| a.step.as_ref().is_some_and(this_try));
                let agent = ran().find(|a| !a.state.is_dead()).or_else(|| ran().max_by_key(|a| a.created_at));
                match agent {
                    Some(a) if !a.state.is_dead() => Ok(Mover::Agent(a.id.clone())),
                    Some(a) if self.save_awaited(a) => Ok(Mover::Awaits(Awaited::Save(a.id.clone()))),
                    Some(a) => Err(Lost::AgentEnded {
                        job: id.clone(),
                        step: step.name.clone(),
                        agent: a.id.clone(),
                        state: a.state.label(),
                    }),
                    None => Err(Lost::NoAgent { job: id.clone(), step: step.name.clone() }),
                }
            }
        }
    }

    /// An agent in a pod whose host has not said yet what it did with its work.
    fn save_awaited(&self, a: &Agent) -> bool {
        let in_pod = self.workspaces.get(&a.workspace).is_some_and(|w| matches!(w.kind, WorkspaceKind::Pod(_)));
        in_pod && a.saved.is_none()
    }
}

impl State {
    /// Whether the agent has had nothing to do yet: no first prompt, never restarted, never
    /// sent a message, its chains never started. Idle so, it waits for a person's first message.
    pub(crate) fn never_given_work(&self, a: &Agent) -> bool {
        a.restarts == 0
            && a.prompt.is_none()
            && a.recovery.is_empty()
            && a.class_recovery.is_empty()
            && !self.messages.values().any(|m| m.agent == a.id)
    }
}

fn waits_for_first_message(state: &State, a: &Agent) -> bool {
    a.state == SessionState::Idle && state.never_given_work(a)
}

fn trigger_name(t: Trigger) -> &'static str {
    match t {
        Trigger::Idle => "on_idle",
        Trigger::Dead => "on_dead",
        Trigger::Error => "on_error",
        Trigger::Prompt => "on_prompt",
        Trigger::Budget => "budget",
    }
}

fn step_name(j: &Job) -> String {
    j.step.as_deref().map_or_else(|| "(none)".to_owned(), |s| format!("{s:?}"))
}
