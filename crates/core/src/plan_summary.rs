//! `PlanSummary`: what a plan did (seed 003 §8), folded from the event log alone: per job its
//! dependencies, where it started and what it merged, its branch, its agents' turns and how
//! they were classified, what they spent (tokens and cost), and how it ended; for the plan, what
//! all its agents spent, whether it is done or where it
//! stopped, and the branch its work ends on. `bosun plan show` prints it, and so does the end
//! of the plan's log.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::usage::{Spend, Usage};
use crate::{AgentId, Event, JobId, Plan, PlanJobState, PlanState, SessionState};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanSummary {
    pub id: String,
    pub name: String,
    pub state: PlanState,
    pub base: String,
    /// Where its work ends, once it is done: the branch of its last job that no other uses.
    pub final_branch: Option<String>,
    pub jobs: Vec<PlanJobSummary>,
    /// What all its agents spent.
    #[serde(default)]
    pub spent: Spend,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanJobSummary {
    pub name: String,
    /// The runbook job it runs.
    pub job: String,
    pub using: Vec<String>,
    pub state: PlanJobState,
    pub source: Option<String>,
    pub merged: Vec<String>,
    pub target: Option<String>,
    pub job_id: Option<JobId>,
    pub agents: Vec<AgentId>,
    /// Its agents' turns: each time one went idle.
    pub turns: u32,
    /// How those turns were classified, by class.
    pub classes: BTreeMap<String, u32>,
    /// What its agents spent (its variants' all together).
    #[serde(default)]
    pub spent: Spend,
    /// Its variants, for a job that runs as variants: each one's branch and how it ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<VariantSummary>,
    /// The variant kept, and what its judge said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner: Option<(u32, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VariantSummary {
    pub variant: u32,
    pub job_id: Option<JobId>,
    pub branch: Option<String>,
    /// `running`, `done` or `failed: …`.
    pub ended: String,
}

/// A plan's summary, folded from events one at a time (`feed`), in the order recorded.
#[derive(Clone, Debug)]
pub struct PlanFold {
    id: String,
    plan: Option<Plan>,
    /// The plan's jobs' agents, and the job each works for.
    agents: BTreeMap<AgentId, JobId>,
    turns: BTreeMap<JobId, u32>,
    classes: BTreeMap<JobId, BTreeMap<String, u32>>,
    /// The plan's jobs' agents' ledgers, as their usage was recorded.
    usage: BTreeMap<AgentId, Usage>,
}

impl PlanFold {
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            plan: None,
            agents: BTreeMap::new(),
            turns: BTreeMap::new(),
            classes: BTreeMap::new(),
            usage: BTreeMap::new(),
        }
    }

    pub fn feed(&mut self, event: &Event) {
        match event {
            Event::PlanStarted { plan } if plan.id == self.id => self.plan = Some(plan.clone()),
            Event::PlanJobDispatched { plan, index, job, source, merged, variant } if *plan == self.id => {
                if let Some(p) = &mut self.plan {
                    p.dispatched(*index, *variant, job, source, merged);
                }
            }
            Event::PlanVariantEnded { plan, index, variant, target, failure } if *plan == self.id => {
                if let Some(p) = &mut self.plan {
                    p.variant_ended(*index, *variant, target.as_deref(), failure.as_deref());
                }
            }
            Event::PlanVariantChosen { plan, index, variant, by } if *plan == self.id => {
                if let Some(p) = &mut self.plan {
                    p.chose(*index, *variant, by);
                }
            }
            Event::PlanJobEnded { plan, index, target, failure } if *plan == self.id => {
                if let Some(p) = &mut self.plan {
                    p.ended(*index, target.as_deref(), failure.as_deref());
                }
            }
            Event::PlanResumed { plan } if *plan == self.id => {
                if let Some(p) = &mut self.plan {
                    p.resumed();
                }
            }
            Event::AgentCreated { agent } => {
                let Some((job, ..)) = &agent.step else { return };
                let ours = self.plan.as_ref().is_some_and(|p| {
                    p.jobs.iter().any(|j| {
                        j.job_id.as_ref() == Some(job) || j.runs.iter().any(|r| r.job_id.as_ref() == Some(job))
                    })
                });
                if ours {
                    self.agents.insert(agent.id.clone(), job.clone());
                }
            }
            Event::AgentObserved { id, state: SessionState::Idle, .. } => {
                if let Some(job) = self.agents.get(id) {
                    *self.turns.entry(job.clone()).or_default() += 1;
                }
            }
            Event::UsageRecorded { id, used, at } if self.agents.contains_key(id) => {
                self.usage.entry(id.clone()).or_default().record(used, *at);
            }
            Event::TurnClassified { id, verdict, .. } => {
                if let Some(job) = self.agents.get(id) {
                    let counts = self.classes.entry(job.clone()).or_default();
                    *counts.entry(verdict.class.label().to_owned()).or_default() += 1;
                }
            }
            _ => {}
        }
    }

    /// The summary, once the plan's start was fed.
    pub fn summary(&self) -> Option<PlanSummary> {
        let plan = self.plan.as_ref()?;
        let jobs: Vec<PlanJobSummary> = plan
            .jobs
            .iter()
            .enumerate()
            .map(|(i, j)| {
                // Its job, or each of its variants'.
                let mut ids: Vec<&JobId> =
                    j.job_id.iter().chain(j.runs.iter().filter_map(|r| r.job_id.as_ref())).collect();
                ids.dedup();
                let of_job = |job: &JobId| ids.contains(&job);
                let mut classes: BTreeMap<String, u32> = BTreeMap::new();
                for counts in ids.iter().filter_map(|id| self.classes.get(*id)) {
                    for (class, n) in counts {
                        *classes.entry(class.clone()).or_default() += n;
                    }
                }
                let mut spent = Spend::default();
                for (_, usage) in self.usage.iter().filter(|(a, _)| self.agents.get(*a).is_some_and(of_job)) {
                    spent.add(&usage.spend());
                }
                PlanJobSummary {
                    spent,
                    name: j.name.clone(),
                    job: j.job.clone(),
                    using: j.using.clone(),
                    state: plan.job_state(i),
                    source: j.source.clone(),
                    merged: j.merged.clone(),
                    target: j.target.clone(),
                    job_id: j.job_id.clone(),
                    agents: self.agents.iter().filter(|(_, job)| of_job(job)).map(|(a, _)| a.clone()).collect(),
                    turns: ids.iter().filter_map(|id| self.turns.get(*id)).sum(),
                    classes,
                    variants: j
                        .runs
                        .iter()
                        .enumerate()
                        .map(|(at, r)| VariantSummary {
                            variant: at as u32 + 1,
                            job_id: r.job_id.clone(),
                            branch: r.target.clone(),
                            ended: match (&r.failure, r.done) {
                                (Some(f), _) => format!("failed: {}", one_line(f)),
                                (None, true) => "done".into(),
                                (None, false) => "running".into(),
                            },
                        })
                        .collect(),
                    winner: j.winner.clone(),
                }
            })
            .collect();
        let used = |name: &str| plan.jobs.iter().any(|j| j.using.iter().any(|u| u == name));
        let last = plan.jobs.iter().rev().find(|j| !used(&j.name));
        let final_branch = (plan.state == PlanState::Done).then(|| last.and_then(|j| j.target.clone())).flatten();
        let mut spent = Spend::default();
        for j in &jobs {
            spent.add(&j.spent);
        }
        Some(PlanSummary {
            spent,
            id: plan.id.clone(),
            name: plan.name.clone(),
            state: plan.state.clone(),
            base: plan.base.clone(),
            final_branch,
            jobs,
        })
    }
}

impl PlanSummary {
    /// As text: the plan, then a block per job.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let state = match &self.state {
            PlanState::Running => "running".to_owned(),
            PlanState::Done => "done".to_owned(),
            PlanState::Failed { job, reason } => format!("stopped at {job}: {}", one_line(reason)),
        };
        let _ = writeln!(out, "plan {} ({}): {state}", self.id, self.name);
        if let Some(b) = &self.final_branch {
            let _ = writeln!(out, "final branch: {b}");
        }
        if !self.spent.tokens.is_zero() {
            let _ = writeln!(out, "spent: {}", spent_text(&self.spent));
        }
        for j in &self.jobs {
            let ended = match &j.state {
                PlanJobState::Failed { reason } => format!("failed: {}", one_line(reason)),
                PlanJobState::Blocked { job } => format!("blocked: {job} failed"),
                other => other.label().to_owned(),
            };
            let _ = writeln!(out, "\njob {} (runbook job {}): {ended}", j.name, j.job);
            let uses = if j.using.is_empty() { "nothing".to_owned() } else { j.using.join(", ") };
            let _ = writeln!(out, "  uses     {uses}");
            let from = j.source.clone().unwrap_or_else(|| "-".into());
            let merged = if j.merged.is_empty() { String::new() } else { format!(" + {}", j.merged.join(" + ")) };
            let _ = writeln!(out, "  from     {from}{merged}");
            let _ = writeln!(out, "  branch   {}", j.target.as_deref().unwrap_or("-"));
            let classes: Vec<String> = j.classes.iter().map(|(c, n)| format!("{c} ×{n}")).collect();
            let classes = if classes.is_empty() { String::new() } else { format!(" ({})", classes.join(", ")) };
            let _ = writeln!(out, "  turns    {}{classes}", j.turns);
            if !j.spent.tokens.is_zero() {
                let _ = writeln!(out, "  tokens   {}", spent_text(&j.spent));
            }
            for v in &j.variants {
                let kept = if j.winner.as_ref().is_some_and(|(w, _)| *w == v.variant) { ", kept" } else { "" };
                let branch = v.branch.as_deref().unwrap_or("-");
                let _ = writeln!(out, "  v{}       {branch}: {}{kept}", v.variant, v.ended);
            }
            if let Some((_, by)) = &j.winner {
                let _ = writeln!(out, "  judged   {}", one_line(by));
            }
            if let Some(id) = &j.job_id {
                let _ = writeln!(out, "  job id   {id}");
            }
        }
        out
    }
}

/// What was spent, as the summary says it: `1,234 in · 56 out · 7 cache write · 8 cache read
/// ($0.01)`, the cost `$0.01 + unknown` when some of it had no price, `cost unknown` when none had.
fn spent_text(spent: &Spend) -> String {
    let t = &spent.tokens;
    let cost = match (spent.cost > 0 || !spent.unpriced, spent.unpriced) {
        (true, false) => crate::price::dollars(spent.cost),
        (true, true) => format!("{} + unknown", crate::price::dollars(spent.cost)),
        (false, _) => "cost unknown".to_owned(),
    };
    let [input, output, write, read] = [t.input, t.output, t.cache_write, t.cache_read].map(crate::usage::thousands);
    format!("{input} in · {output} out · {write} cache write · {read} cache read ({cost})")
}

/// The first line of `text`.
fn one_line(text: &str) -> &str {
    text.lines().next().unwrap_or("").trim()
}
