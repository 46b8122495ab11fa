//! Plans (seed 003): a graph of jobs, each in a worktree of its own. A job starts once every job
//! it uses is done, at most `concurrency` at once: from the plan's base when it uses none, else
//! from the branch of the first it uses, with the others' branches merged in. A failed job stops
//! only what depends on it; the plan ends done, or failed where it stopped, once nothing runs and
//! nothing can start, and a resume runs its failed jobs again. A job with `variants` runs that
//! many times at once, each on its own branch (`<branch>-v1`, …); once all ended, its judge
//! (`Judge`) picks the winner, whose branch is the job's for what uses it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{JobBook, JobId};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// `p` and a nonce.
    pub id: String,
    pub name: String,
    /// Where the first job starts from.
    pub base: String,
    pub jobs: Vec<PlanJob>,
    pub state: PlanState,
    /// Its jobs, lowered from the runbook as it was when the plan started (empty in a record an
    /// older bosun wrote), and where it started.
    #[serde(default)]
    pub book: JobBook,
    pub cwd: PathBuf,
    /// How many of its jobs may run at once.
    #[serde(default = "Plan::default_concurrency")]
    pub concurrency: u32,
    /// Whether the variants a judge did not pick have their workspaces and branches removed
    /// (one with work not committed is kept).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drop_losers: bool,
    /// What all its jobs' agents together may spend: each starts with what is left of it, and
    /// once it is spent no job of the plan starts (those that would fail, saying so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<crate::budget::Budget>,
}

/// How a plan job with variants picks the one whose branch it keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Judge {
    /// The variants whose `gate` (a shell command run in each one's worktree) passes; of
    /// several, the one with the smallest diff from where it started, then the first.
    Gate { gate: String },
    /// A shell command run in the repository that reads the variants' diffs (each in a file,
    /// listed in `$BOSUN_VARIANTS` as `N BRANCH DIFF` lines) and prints the winner's number.
    Command { command: String },
    /// A person, told of the variants, picks one (`bosun plan pick`).
    Person,
}

/// A variant a judge weighs: its number, its branch and its worktree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VariantCandidate {
    pub variant: u32,
    pub branch: String,
    pub path: PathBuf,
}

/// One run of a plan job with variants.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Variant {
    pub job_id: Option<JobId>,
    /// The branch its job worked on, once known.
    pub target: Option<String>,
    pub done: bool,
    pub failure: Option<String>,
}

impl Variant {
    fn ended(&self) -> bool {
        self.done || self.failure.is_some()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanJob {
    pub name: String,
    /// The runbook job it runs.
    pub job: String,
    pub vars: BTreeMap<String, String>,
    pub using: Vec<String>,
    /// The branch it asks for; `feature/<name>` when none.
    pub branch: Option<String>,
    /// The program that runs its agents, in place of theirs (`claude`, `codex`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Its job, once made.
    pub job_id: Option<JobId>,
    /// The branch its job worked on, once known.
    pub target: Option<String>,
    /// Where its job started from, once known: the plan's base, or the branch of the first
    /// job it uses.
    pub source: Option<String>,
    /// The branches of the other jobs it uses, merged into its start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<String>,
    pub done: bool,
    /// Why it failed, once it did (what uses it waits until it is resumed and done).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// How many times it runs at once (1: no variants).
    #[serde(default = "PlanJob::one", skip_serializing_if = "PlanJob::is_one")]
    pub variants: u32,
    /// How the winner of its variants is picked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<Judge>,
    /// Its variants' runs, `v1` first, once asked for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<Variant>,
    /// The variant picked (1 for `v1`), and by what.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub winner: Option<(u32, String)>,
}

/// Where a plan's job stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PlanJobState {
    /// Waiting for the jobs it uses.
    Waiting,
    /// Every job it uses is done: it starts when a place is free.
    Ready,
    Running,
    /// Its variants all ended: its judge picks the winner (a person, when it says so).
    Judging,
    Done,
    Failed {
        reason: String,
    },
    /// A job it uses (`job`, maybe through others) failed: it waits for a resume.
    Blocked {
        job: String,
    },
}

impl PlanJobState {
    pub fn label(&self) -> &'static str {
        match self {
            Self::Waiting => "waiting",
            Self::Ready => "ready",
            Self::Running => "running",
            Self::Judging => "judging",
            Self::Done => "done",
            Self::Failed { .. } => "failed",
            Self::Blocked { .. } => "blocked",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PlanState {
    Running,
    Done,
    Failed { job: String, reason: String },
}

/// The branch a plan job's worktree is made on, from `base`; with `suffix`, a numeric suffix is
/// added while the branch is taken.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanBranch {
    pub base: String,
    pub branch: String,
    pub suffix: bool,
    /// Branches merged into `base` first (the other jobs a job uses); a conflict stops it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merge: Vec<String>,
}

/// What a plan waits for a person to do: keep a variant, or fix what stopped it and resume.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanAsk {
    pub plan: String,
    pub job: String,
    pub reason: String,
    /// The command that answers it.
    pub then: String,
}

/// How many jobs of a plan run at once when its runbook does not say.
pub const DEFAULT_PLAN_CONCURRENCY: u32 = 2;

impl Plan {
    pub fn default_concurrency() -> u32 {
        DEFAULT_PLAN_CONCURRENCY
    }

    /// The runbook its job at `index` runs from: its agents on the job's `engine` when it names
    /// one.
    pub fn job_book(&self, index: usize) -> std::borrow::Cow<'_, JobBook> {
        match self.jobs.get(index).and_then(|j| j.engine.as_deref()) {
            Some(engine) => std::borrow::Cow::Owned(self.book.with_engine(engine)),
            None => std::borrow::Cow::Borrowed(&self.book),
        }
    }

    fn index_of(&self, name: &str) -> Option<usize> {
        self.jobs.iter().position(|j| j.name == name)
    }

    /// Where the job at `index` stands.
    pub fn job_state(&self, index: usize) -> PlanJobState {
        let Some(j) = self.jobs.get(index) else { return PlanJobState::Waiting };
        if j.done {
            return PlanJobState::Done;
        }
        if let Some(reason) = &j.failure {
            return PlanJobState::Failed { reason: reason.clone() };
        }
        // A record of an older bosun names its one failed job only in the plan's state.
        if let PlanState::Failed { job, reason } = &self.state {
            if *job == j.name && j.job_id.is_some() {
                return PlanJobState::Failed { reason: reason.clone() };
            }
        }
        if j.job_id.is_some() {
            let judging = j.has_variants() && j.runs.len() == j.variants as usize && j.runs.iter().all(Variant::ended);
            return if judging { PlanJobState::Judging } else { PlanJobState::Running };
        }
        // `using` names only earlier jobs (the runbook is checked so): no loop.
        let mut ready = true;
        for used in &j.using {
            let Some(u) = self.index_of(used).filter(|u| *u < index) else { continue };
            match self.job_state(u) {
                PlanJobState::Done if self.jobs[u].target.is_some() => {}
                PlanJobState::Done => return PlanJobState::Blocked { job: used.clone() },
                PlanJobState::Failed { .. } => return PlanJobState::Blocked { job: used.clone() },
                PlanJobState::Blocked { job } => return PlanJobState::Blocked { job },
                _ => ready = false,
            }
        }
        if ready {
            PlanJobState::Ready
        } else {
            PlanJobState::Waiting
        }
    }

    /// The jobs to start now, in the order written: ready ones, as many as places are free.
    pub fn to_start(&self) -> Vec<usize> {
        let running = (0..self.jobs.len()).filter(|i| self.job_state(*i) == PlanJobState::Running).count();
        let free = (self.concurrency.max(1) as usize).saturating_sub(running);
        (0..self.jobs.len()).filter(|i| self.job_state(*i) == PlanJobState::Ready).take(free).collect()
    }

    /// Where the job at `index` starts: the plan's base when it uses no job, else the branch of
    /// the first it uses; and the branches of the others it uses, merged in.
    pub fn start_of(&self, index: usize) -> (String, Vec<String>) {
        let targets: Vec<String> = self.jobs[index]
            .using
            .iter()
            .filter_map(|u| self.index_of(u))
            .filter_map(|u| self.jobs[u].target.clone())
            .collect();
        match targets.split_first() {
            Some((first, rest)) => (first.clone(), rest.to_vec()),
            None => (self.base.clone(), Vec::new()),
        }
    }

    /// Its job at `index` (its variant `variant`, 1 for `v1`) was asked for.
    pub fn dispatched(&mut self, index: usize, variant: Option<u32>, job: &JobId, source: &str, merged: &[String]) {
        if let Some(j) = self.jobs.get_mut(index) {
            match variant {
                Some(n) => {
                    // The first variant asked for starts the job's runs anew.
                    if n == 1 {
                        j.runs = Vec::new();
                        j.winner = None;
                        j.job_id = Some(job.clone());
                    }
                    let at = n.saturating_sub(1) as usize;
                    if j.runs.len() <= at {
                        j.runs.resize(at + 1, Variant::default());
                    }
                    j.runs[at] = Variant { job_id: Some(job.clone()), ..Variant::default() };
                }
                None => j.job_id = Some(job.clone()),
            }
            j.source = Some(source.to_owned());
            j.merged = merged.to_vec();
            j.failure = None;
            j.done = false;
        }
        self.settle();
    }

    /// Its job at `index`'s variant `n` ended: done on `target`, or failed.
    pub fn variant_ended(&mut self, index: usize, n: u32, target: Option<&str>, failure: Option<&str>) {
        let run = self.jobs.get_mut(index).and_then(|j| j.runs.get_mut(n.saturating_sub(1) as usize));
        if let Some(run) = run {
            if let Some(t) = target {
                run.target = Some(t.to_owned());
            }
            run.done = failure.is_none();
            run.failure = failure.map(str::to_owned);
        }
        self.settle();
    }

    /// Its job at `index` kept variant `n`, as `by` decided.
    pub fn chose(&mut self, index: usize, n: u32, by: &str) {
        if let Some(j) = self.jobs.get_mut(index) {
            j.winner = Some((n, by.to_owned()));
        }
    }

    /// The variant of the job at `index` that `job` runs, if it is one.
    pub fn variant_of(&self, index: usize, job: &JobId) -> Option<u32> {
        let j = self.jobs.get(index).filter(|j| j.has_variants())?;
        j.runs.iter().position(|r| r.job_id.as_ref() == Some(job)).map(|at| at as u32 + 1)
    }

    /// Its job at `index` ended: done on `target`, or failed.
    pub fn ended(&mut self, index: usize, target: Option<&str>, failure: Option<&str>) {
        if let Some(j) = self.jobs.get_mut(index) {
            if let Some(t) = target {
                j.target = Some(t.to_owned());
            }
            j.done = failure.is_none();
            j.failure = failure.map(str::to_owned);
        }
        self.settle();
    }

    /// A resume: its failed jobs run again (their jobs resumed, or asked for anew).
    pub fn resumed(&mut self) {
        for j in &mut self.jobs {
            j.failure = None;
        }
        self.state = PlanState::Running;
    }

    /// What it waits for a person to do: a variant to keep, for a job its person judges; a
    /// failed job to fix, once it stopped.
    pub fn asks(&self) -> Vec<PlanAsk> {
        let mut asks = Vec::new();
        for (i, j) in self.jobs.iter().enumerate() {
            let ask =
                |reason: String, then: String| PlanAsk { plan: self.id.clone(), job: j.name.clone(), reason, then };
            match self.job_state(i) {
                PlanJobState::Judging if j.judge == Some(Judge::Person) => {
                    let done: Vec<String> = j
                        .runs
                        .iter()
                        .enumerate()
                        .filter(|(_, r)| r.done)
                        .map(|(at, r)| format!("v{} on {}", at + 1, r.target.as_deref().unwrap_or("?")))
                        .collect();
                    let reason = format!("pick a variant: {}", done.join(", "));
                    asks.push(ask(reason, format!("bosun plan pick {} {} N", self.id, j.name)));
                }
                PlanJobState::Failed { reason } if matches!(self.state, PlanState::Failed { .. }) => {
                    asks.push(ask(reason, format!("fix it, then bosun plan resume {}", self.id)));
                }
                _ => {}
            }
        }
        asks
    }

    /// The jobs that failed, in the order written.
    pub fn failed(&self) -> Vec<usize> {
        (0..self.jobs.len()).filter(|i| matches!(self.job_state(*i), PlanJobState::Failed { .. })).collect()
    }

    /// Its state from its jobs': running while one runs or may start; done when all are; else
    /// failed at the first job that failed.
    fn settle(&mut self) {
        let states: Vec<PlanJobState> = (0..self.jobs.len()).map(|i| self.job_state(i)).collect();
        self.state = if states.iter().all(|s| *s == PlanJobState::Done) {
            PlanState::Done
        } else if states
            .iter()
            .any(|s| matches!(s, PlanJobState::Running | PlanJobState::Ready | PlanJobState::Judging))
        {
            PlanState::Running
        } else {
            let failed = states.iter().enumerate().find_map(|(i, s)| match s {
                PlanJobState::Failed { reason } => Some((self.jobs[i].name.clone(), reason.clone())),
                _ => None,
            });
            match failed {
                Some((job, reason)) => PlanState::Failed { job, reason },
                None => {
                    let stuck = states.iter().position(|s| *s != PlanJobState::Done).unwrap_or(0);
                    let job = self.jobs.get(stuck).map(|j| j.name.clone()).unwrap_or_default();
                    PlanState::Failed { job, reason: "it could not start".into() }
                }
            }
        };
    }
}

impl PlanJob {
    /// Plan job `name` running runbook job `job`, using none, once, on its own branch.
    pub fn new(name: impl Into<String>, job: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            job: job.into(),
            vars: BTreeMap::new(),
            using: vec![],
            branch: None,
            engine: None,
            variants: 1,
            judge: None,
            runs: vec![],
            winner: None,
            job_id: None,
            target: None,
            source: None,
            merged: vec![],
            done: false,
            failure: None,
        }
    }

    fn one() -> u32 {
        1
    }

    fn is_one(n: &u32) -> bool {
        *n == 1
    }

    /// Whether it runs as variants.
    pub fn has_variants(&self) -> bool {
        self.variants > 1
    }

    /// The branch its variant `n` (1 for `v1`) asks for, and whether a suffix may make it free.
    pub fn variant_branch(&self, n: u32) -> (String, bool) {
        let (branch, suffix) = self.wanted_branch();
        (format!("{branch}-v{n}"), suffix)
    }

    /// The branch it asks for, and whether a suffix may make it free.
    pub fn wanted_branch(&self) -> (String, bool) {
        match &self.branch {
            Some(b) => (b.clone(), false),
            None => (crate::ref_name::feature_branch(&self.name), true),
        }
    }

    /// It, as its branches go.
    pub fn branches(&self) -> crate::PlanJobBranch<'_> {
        crate::PlanJobBranch { name: &self.name, branch: self.branch.as_deref(), variants: self.variants }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_branch_is_feature_slash_the_slug_unless_one_is_given() {
        let mut j = PlanJob::new("User_Schema v2", "build");
        assert_eq!(j.wanted_branch(), ("feature/user-schema-v2".into(), true));
        j.branch = Some("auth/schema".into());
        assert_eq!(j.wanted_branch(), ("auth/schema".into(), false));
    }
}
