//! The runbook model: commands, jobs and their steps, agents, queues, workers, crons and plans, as
//! both formats mean them. Names are the block labels; `span`s point back into the source.

use std::collections::BTreeMap;

use bosun_core::driver::DriverKind;
use bosun_core::Policy;

use crate::syntax::Span;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Runbook {
    pub commands: BTreeMap<String, Command>,
    pub jobs: BTreeMap<String, Job>,
    pub agents: BTreeMap<String, AgentDef>,
    pub queues: BTreeMap<String, Queue>,
    pub workers: BTreeMap<String, Worker>,
    pub crons: BTreeMap<String, Cron>,
    pub plans: BTreeMap<String, Plan>,
}

impl Runbook {
    /// The jobs the steps of job `job` run, in step order (a job run by two steps, twice).
    pub fn jobs_run_by<'a>(&'a self, job: &str) -> impl Iterator<Item = (&'a Step, &'a str)> {
        let steps = self.jobs.get(job).map_or(&[][..], |j| &j.steps);
        steps.iter().filter_map(|s| if let Run::Job(j) = &s.run { Some((s, j.as_str())) } else { None })
    }
}

/// Seed 003's plan: a graph of jobs, each started once the jobs it uses are done, from their
/// branches (or the plan's base when it uses none).
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub span: Span,
    /// The branch (or ref) the jobs that use none start from; the current branch when not given.
    pub base: Option<String>,
    /// How many of its jobs run at once; 2 when not given.
    pub concurrency: Option<u32>,
    /// In the order written: a job uses only jobs written before it.
    pub jobs: Vec<PlanJob>,
    /// What all its jobs' agents together may spend (`budget = { usd = 5 }`).
    pub budget: Option<bosun_core::budget::Budget>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PlanJob {
    pub span: Span,
    pub name: String,
    /// The runbook job it runs.
    pub job: String,
    pub vars: BTreeMap<String, String>,
    /// Plan jobs it depends on; each is written earlier.
    pub using: Vec<String>,
    /// Its target branch; `feature/<name>` (with a numeric suffix when taken) when not given.
    pub branch: Option<String>,
    /// The program that runs its agents in place of theirs (`claude`, `codex`, a path).
    pub engine: Option<String>,
    /// How many times it runs at once, each on its own branch.
    pub variants: Option<u32>,
    /// How the variant it keeps is picked (`keep_best`).
    pub keep_best: Option<bosun_core::Judge>,
}

/// `bosun run NAME ARGS…`.
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    pub span: Span,
    pub args: ArgsSpec,
    pub defaults: BTreeMap<String, String>,
    pub run: Run,
}

/// An args spec such as `<name> <instructions> [--base <branch>] [--draft]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArgsSpec {
    pub positional: Vec<String>,
    /// `--name <value>` options (`Some(value name)`) and `--flag` switches (`None`).
    pub options: Vec<(String, Option<String>)>,
}

/// What a command, step or cron runs: a shell command, an agent or a job.
pub use bosun_core::StepRun as Run;

#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub span: Span,
    pub vars: Vec<String>,
    pub defaults: BTreeMap<String, String>,
    /// Evaluated once when the job starts; may use `$(…)`.
    pub locals: BTreeMap<String, String>,
    pub source: Source,
    /// In the order written; the first is where the job starts.
    pub steps: Vec<Step>,
    pub on_done: Option<Transition>,
    pub on_fail: Option<Transition>,
    pub notify: Notify,
    /// A step entered more often than this fails the job.
    pub max_step_visits: u32,
    /// What all its agents together may spend (`budget = { usd = 5 }`).
    pub budget: Option<bosun_core::budget::Budget>,
}

pub const DEFAULT_MAX_STEP_VISITS: u32 = 20;

/// How often an external queue's `list` runs by default.
pub const DEFAULT_POLL_MS: u64 = 30_000;

/// Where a job's work happens: no workspace, a folder or a worktree.
pub use bosun_core::JobSource as Source;

#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub name: String,
    pub span: Span,
    pub run: Run,
    pub on_done: Option<Transition>,
    pub on_fail: Option<Transition>,
    pub on_cancel: Option<Transition>,
    pub attempts: u32,
    pub backoff_ms: u64,
}

/// Where a job goes after a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transition {
    Step { name: String, span: Span },
    Done,
    Fail,
}

/// What to tell a person when a job starts, ends done or fails, and where its webhook is.
pub use bosun_core::JobNotify as Notify;

#[derive(Clone, Debug, PartialEq)]
pub struct AgentDef {
    pub span: Span,
    /// The program and its arguments (`claude`, `codex`, anything).
    pub command: Vec<String>,
    pub driver: Option<DriverKind>,
    pub prompt: Option<String>,
    pub prompt_file: Option<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<String>,
    /// Primed at session start.
    pub context: Option<String>,
    pub policy: Policy,
    /// What its session runs in (`session = "host"`; tmux when not given).
    pub backend: bosun_core::SessionBackend,
    /// Where it runs (`runtime = "sandbox"`; local when not given).
    pub runtime: bosun_core::Runtime,
    /// The account, named in bosun's config, it signs in with (`account = "NAME"`).
    pub account: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queue {
    pub span: Span,
    pub kind: QueueKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueueKind {
    /// Kept by bosun: items are retried up to `retry` times, then dead-lettered.
    Persisted { retry: u32 },
    /// Items come from commands: `list` prints them (JSON lines), run every `poll_ms` while a
    /// worker runs; `take` claims one before its job starts.
    External { list: String, take: Option<String>, poll_ms: u64, retry: u32 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Worker {
    pub span: Span,
    pub queue: String,
    pub job: String,
    pub concurrency: u32,
    /// What the agents of all the jobs it starts together may spend.
    pub budget: Option<bosun_core::budget::Budget>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cron {
    pub span: Span,
    pub schedule: Schedule,
    pub run: Run,
}

pub use bosun_core::Schedule;
