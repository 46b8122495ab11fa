//! What the dashboard shows, gathered from the daemon: a row per agent and per job, each with
//! its state, age, workspace, branch, commits ahead of its base and open escalations. Built from the daemon's answers by
//! a plain function, so the views can be tested without one.

use std::collections::BTreeMap;

use bosun_core::{Escalation, Job, SessionState, Workspace, WorkspaceId};
use bosun_wire::AgentSummary;

/// Everything the task manager lists, as of `now` (the daemon's clock, ms).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Board {
    pub now: u64,
    pub rows: Vec<Row>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub kind: RowKind,
    pub id: String,
    pub name: String,
    pub state: Shown,
    /// The state's words (`idle`, `prompt(permission)`, `dead(completed)`, `working`…).
    pub label: String,
    pub created_at: u64,
    pub workspace: Option<String>,
    pub branch: Option<String>,
    /// Commits on its branch its base does not hold, as last counted.
    pub ahead: Option<u32>,
    pub escalations: usize,
    /// What its model calls cost (`$1.23`, `unknown`), when any were recorded.
    pub cost: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    Agent,
    Job,
}

/// How a state is drawn: each has its colour and symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shown {
    Working,
    Idle,
    Prompt,
    Error,
    Dead,
    Waiting,
}

impl Shown {
    pub fn symbol(self) -> &'static str {
        match self {
            Self::Working => "●",
            Self::Idle => "○",
            Self::Prompt => "?",
            Self::Error => "!",
            Self::Dead => "✗",
            Self::Waiting => "…",
        }
    }

    /// What an agent in `state` is said to be doing: seed 004's words (`working`, not
    /// `running`), with what is known of why for the others (`prompt(permission)`, a rate
    /// limit's reset when known).
    pub fn words(state: &SessionState, limited_until: Option<bosun_core::Timestamp>) -> String {
        match state {
            SessionState::Running => "working".into(),
            other => other.label_until(limited_until),
        }
    }

    pub fn of_agent(state: &SessionState) -> Self {
        match state {
            SessionState::Running => Self::Working,
            SessionState::Idle => Self::Idle,
            SessionState::Prompt { .. } => Self::Prompt,
            SessionState::Error { .. } => Self::Error,
            SessionState::Dead { .. } => Self::Dead,
            SessionState::Starting => Self::Waiting,
        }
    }
}

/// What costs sum to, as `bosun ls` says it but shorter (`?` for an unknown cost: a model with
/// no price); none when there are none.
fn cost(costs: impl Iterator<Item = Option<u64>>) -> Option<String> {
    let said = crate::render::cost(costs).replace(" + unknown", "+?").replace("unknown", "?");
    Some(said).filter(|c| c != "-")
}

impl Board {
    /// The rows of `agents` (newest first) then `jobs` (newest first); `ahead` the commits
    /// ahead of each workspace, as last counted.
    pub fn of(
        now: u64,
        agents: &[AgentSummary],
        workspaces: &[Workspace],
        jobs: &[Job],
        escalations: &[Escalation],
        ahead: &BTreeMap<WorkspaceId, u32>,
    ) -> Self {
        let open =
            |agent: &str| escalations.iter().filter(|e| e.resolved.is_none() && e.agent.as_str() == agent).count();
        let all = agents;
        let mut agents: Vec<&AgentSummary> = agents.iter().collect();
        agents.sort_by_key(|a| std::cmp::Reverse(a.created_at));
        let mut rows: Vec<Row> = agents
            .iter()
            .map(|a| {
                let ws = workspaces.iter().find(|w| w.id == a.workspace);
                let waiting = ws.is_some_and(|w| w.state == bosun_core::WorkspaceState::Waiting) && !a.state.is_dead();
                Row {
                    kind: RowKind::Agent,
                    id: a.id.to_string(),
                    name: a.name.to_string(),
                    state: if waiting { Shown::Waiting } else { Shown::of_agent(&a.state) },
                    label: match (waiting, a.paused) {
                        (true, _) => "waiting".into(),
                        (_, true) => "paused(budget)".into(),
                        _ => Shown::words(&a.state, a.limited_until),
                    },
                    created_at: a.created_at.as_millis(),
                    workspace: Some(a.workspace.to_string()),
                    branch: ws.and_then(|w| w.branch().map(str::to_owned)),
                    ahead: ahead.get(&a.workspace).copied(),
                    escalations: open(a.id.as_str()),
                    cost: cost(a.cost.values().copied()),
                }
            })
            .collect();
        let mut jobs: Vec<&Job> = jobs.iter().collect();
        jobs.sort_by_key(|j| std::cmp::Reverse(j.created_at));
        rows.extend(jobs.iter().map(|j| {
            let ws = j.workspace.as_ref().and_then(|id| workspaces.iter().find(|w| &w.id == id));
            let state = match &j.state {
                bosun_core::JobState::Running => Shown::Working,
                bosun_core::JobState::Waiting => Shown::Waiting,
                bosun_core::JobState::Done | bosun_core::JobState::Cancelled => Shown::Dead,
                bosun_core::JobState::Failed { .. } => Shown::Error,
            };
            Row {
                kind: RowKind::Job,
                id: j.spec.id.to_string(),
                name: j.spec.name.clone(),
                state,
                label: match &j.step {
                    Some(step) if !j.state.is_over() => format!("{} ({step})", j.state.label()),
                    _ => j.state.label().to_owned(),
                },
                created_at: j.created_at.as_millis(),
                workspace: j.workspace.as_ref().map(ToString::to_string),
                branch: ws.and_then(|w| w.branch().map(str::to_owned)),
                ahead: j.workspace.as_ref().and_then(|id| ahead.get(id)).copied(),
                escalations: 0,
                cost: cost(
                    all.iter().filter(|a| a.job.as_ref() == Some(&j.spec.id)).flat_map(|a| a.cost.values().copied()),
                ),
            }
        }));
        Self { now, rows }
    }
}
