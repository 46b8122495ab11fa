//! The daemon's calls, typed: each sends its request and gives the answer it expects, so a
//! command never matches on `Response` itself. Any other answer means the CLI and the daemon
//! are not the same version.

use std::path::PathBuf;

use anyhow::Result;
use bosun_core::driver::dialog::DialogAnswer;
use bosun_core::{
    AgentId, Cron, Escalation, EscalationId, Item, Job, JobId, MessageId, Plan, SessionState, TermKey, Worker,
};
use bosun_wire::{
    AgentDetail, Finding, Listing, Pools, Pruned, Removed, Request, Response, RunCommand, StartAgent, Started,
};

use crate::client::Client;
use crate::error::{CliError, Kind};

/// What a merge came to: done, or its agent asked to resolve its conflicts.
pub enum MergeOutcome {
    Done(MergeDone),
    AgentAsked { agent: AgentId, message: bosun_core::MessageId, files: Vec<String> },
}

/// A message sent: typed, or queued behind the dialog `why` names.
#[derive(serde::Serialize)]
pub struct Sent {
    pub message: bosun_core::MessageId,
    pub typed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl Client {
    pub fn send(&self, agent: String, text: String, raw: bool, now: bool) -> anyhow::Result<Sent> {
        match self.request(Request::Send { agent, text, raw, now })? {
            Response::Sent { message } => Ok(Sent { message, typed: true, why: None }),
            Response::SentLater { message, why } => Ok(Sent { message, typed: false, why: Some(why) }),
            _ => Err(unexpected()),
        }
    }

    pub fn merge(&self, ask: Box<bosun_wire::MergeAsk>) -> anyhow::Result<MergeOutcome> {
        match self.request(Request::Merge(ask))? {
            Response::Merged { merged, ended, removed, kept } => {
                Ok(MergeOutcome::Done(MergeDone { merged, ended, removed, kept }))
            }
            Response::MergeConflictSent { agent, message, files } => {
                Ok(MergeOutcome::AgentAsked { agent, message, files })
            }
            other => anyhow::bail!("unexpected answer from the daemon: {other:?}"),
        }
    }
}

/// What `bosun merge` did.
#[derive(serde::Serialize)]
pub struct MergeDone {
    pub merged: bosun_core::Merged,
    pub ended: Vec<bosun_core::AgentId>,
    pub removed: Option<bosun_wire::Removed>,
    pub kept: Option<String>,
}

/// A job the daemon started.
pub struct JobStarted {
    pub job: JobId,
    pub workspace: Option<PathBuf>,
    pub branch: Option<String>,
    pub warnings: Vec<String>,
}

/// A pool's workspace given back: the slot, and what became of its task's workspace and branch.
#[derive(serde::Serialize)]
pub struct Released {
    pub slot: bosun_core::SlotId,
    pub removed: Option<Removed>,
}

/// A pool's workspace a script took.
#[derive(serde::Serialize)]
pub struct Acquired {
    pub workspace: bosun_core::WorkspaceId,
    pub path: PathBuf,
    pub branch: Option<String>,
}

/// A job as it is now, and whether it is over.
pub struct JobNow {
    pub now: u64,
    pub job: Box<Job>,
    pub over: bool,
}

/// A job's run memory, written.
pub struct Exported {
    pub dir: PathBuf,
    pub events: u64,
    pub seq: u64,
}

/// Records listed with the daemon's clock (`now`), for their ages.
pub struct Dated<T> {
    pub now: u64,
    pub all: Vec<T>,
}

/// An agent's dialog answered: how, with which key, and the message queued after it.
#[derive(serde::Serialize)]
pub struct Answered {
    pub agent: AgentId,
    pub answer: DialogAnswer,
    pub option: String,
    pub picked: bool,
    pub message: Option<MessageId>,
}

fn unexpected() -> anyhow::Error {
    CliError::new(
        Kind::DaemonUnavailable,
        "the daemon gave an unexpected answer: are the CLI and daemon the same version?",
    )
    .hint("`bosun daemon status` shows the daemon's version; `bosun daemon stop` lets the next command start this one")
    .into()
}

/// `fn name(args) -> Out = Request => pattern => value;` becomes a method of `Client`.
macro_rules! calls {
    ($( $(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),*) -> $out:ty = $request:expr => $answer:pat => $value:expr; )*) => {
        impl Client {
            $(
                $(#[$doc])*
                pub fn $name(&self, $($arg: $ty),*) -> Result<$out> {
                    match self.request($request)? {
                        $answer => Ok($value),
                        _ => Err(unexpected()),
                    }
                }
            )*
        }
    };
}

calls! {
    fn list() -> Listing = Request::List => Response::List(l) => l.marked();
    fn show(agent: String) -> Box<AgentDetail> = Request::Show { agent } => Response::Agent(d) => d;
    fn peek(agent: String, colors: bool, scrollback: u32) -> String = Request::Peek { agent, colors, scrollback } => Response::Screen { text } => text;
    /// The command that attaches a terminal to the agent's session.
    fn attach(agent: String) -> Vec<String> = Request::Attach { agent } => Response::Attach { argv } => argv;
    /// Types keys into the agent's terminal, at once.
    fn press(agent: String, keys: Vec<TermKey>) -> () = Request::Press { agent, keys } => Response::Ok => ();
    /// Sizes the agent's terminal; its size before.
    fn resize(agent: String, cols: u16, rows: u16) -> (u16, u16) =
        Request::Resize { agent, cols, rows } => Response::Resized { before } => before;
    fn kill(agent: String) -> (AgentId, SessionState) =
        Request::Kill { agent } => Response::Killed { agent, state } => (agent, state);
    /// Raises the agent's budget; its budget now, and whether it was paused and goes on.
    fn resume(agent: String, budget: Option<bosun_core::budget::Budget>) -> (AgentId, bosun_core::budget::Budget, bool) =
        Request::Resume { agent, budget } => Response::Resumed { agent, budget, resumed } => (agent, budget, resumed);
    fn start_agent(start: Box<StartAgent>) -> Started = Request::StartAgent(start) => Response::Started(s) => s;
    fn fork(agent: String, name: Option<String>, prompt: Option<String>, inherit: std::collections::BTreeMap<String, String>) -> Started =
        Request::Fork { agent, name, prompt, inherit } => Response::Started(s) => s;
    fn workspace_remove(workspace: String, force: bool) -> Removed =
        Request::WorkspaceRemove { workspace, force } => Response::Removed(r) => r;
    fn workspace_prune(dry_run: bool) -> Pruned = Request::WorkspacePrune { dry_run } => Response::Pruned(p) => p;
    fn doctor(fix: bool, cwd: Option<PathBuf>) -> Vec<Finding> =
        Request::Doctor { fix, cwd } => Response::Doctor { findings } => findings;
    fn escalations(all: bool) -> Dated<Escalation> =
        Request::Escalations { all } => Response::Escalations { now, escalations, .. } => Dated { now, all: escalations };
    fn escalations_and_asks(all: bool) -> (Dated<Escalation>, Vec<bosun_core::PlanAsk>) =
        Request::Escalations { all } => Response::Escalations { now, escalations, plans } =>
            (Dated { now, all: escalations }, plans);
    fn answer(agent: String, answer: DialogAnswer, message: Option<String>) -> Answered =
        Request::Answer { agent, answer, message } =>
        Response::Answered { agent, answer, option, picked, message } => Answered { agent, answer, option, picked, message };
    fn resolve(escalation: String, message: Option<String>, answer: Option<DialogAnswer>)
        -> (EscalationId, Option<MessageId>) =
        Request::Resolve { escalation, message, answer } =>
        Response::Resolved { escalation, message } => (escalation, message);
    fn run(command: Box<RunCommand>) -> JobStarted = Request::Run(command) => Response::JobStarted { job, workspace, branch, warnings } =>
        JobStarted { job, workspace, branch, warnings };
    fn job_list() -> Dated<Job> = Request::JobList => Response::Jobs { now, jobs } => Dated { now, all: jobs };
    fn job_show(job: String) -> JobNow = Request::JobShow { job } => Response::Job { now, job, over } =>
        JobNow { now, job, over };
    fn job_cancel(job: String) -> Box<Job> = Request::JobCancel { job } => Response::Job { job, .. } => job;
    fn job_resume(job: String) -> Box<Job> = Request::JobResume { job } => Response::Job { job, .. } => job;
    fn job_export(job: String, dir: PathBuf, force: bool) -> Exported =
        Request::JobExport { job, dir, force } => Response::Exported { dir, events, seq } => Exported { dir, events, seq };
    fn replay(job: String) -> (JobId, bosun_core::replay::Replayed) =
        Request::Replay { job } => Response::Replayed { job, replayed } => (job, replayed);
    fn queue_list(queue: Option<String>) -> Dated<Item> =
        Request::QueueList { queue } => Response::Items { now, items } => Dated { now, all: items };
    fn worker_list() -> Vec<Worker> = Request::WorkerList => Response::Workers { workers } => workers;
    fn cron_start(name: String, sources: Vec<(PathBuf, String)>, cwd: PathBuf) -> Dated<Cron> =
        Request::CronStart { name, sources, cwd } => Response::Crons { now, crons } => Dated { now, all: crons };
    fn cron_once(name: String, sources: Vec<(PathBuf, String)>, cwd: PathBuf) -> JobStarted =
        Request::CronOnce { name, sources, cwd } => Response::JobStarted { job, workspace, branch, warnings } =>
        JobStarted { job, workspace, branch, warnings };
    fn cron_list() -> Dated<Cron> = Request::CronList => Response::Crons { now, crons } => Dated { now, all: crons };
    fn plan_run(name: String, sources: Vec<(PathBuf, String)>, cwd: PathBuf, drop_losers: bool) -> (Vec<Plan>, Vec<String>) =
        Request::PlanRun { name, sources, cwd, drop_losers } => Response::Plans { plans, warnings } => (plans, warnings);
    fn plan_pick(plan: String, job: String, variant: u32) -> Vec<Plan> =
        Request::PlanPick { plan, job, variant } => Response::Plans { plans, .. } => plans;
    fn plan_list() -> Vec<Plan> = Request::PlanList => Response::Plans { plans, .. } => plans;
    fn plan_resume(plan: String) -> Vec<Plan> = Request::PlanResume { plan } => Response::Plans { plans, .. } => plans;
    fn pr(ask: Box<bosun_wire::PrAsk>) -> (bosun_core::PullRequest, Vec<String>) =
        Request::Pr(ask) => Response::PullRequest { pr, warnings } => (pr, warnings);
    fn ahead() -> std::collections::BTreeMap<bosun_core::WorkspaceId, u32> = Request::Ahead => Response::Ahead { ahead } => ahead;
    fn diff(target: String, patch: bool, color: bool, quick: bool) -> Box<bosun_core::WorkDiff> =
        Request::Diff { target, patch, color, quick } => Response::Diff { diff } => diff;
    fn plan_show(plan: String) -> Box<bosun_core::PlanSummary> =
        Request::PlanShow { plan } => Response::PlanSummary { summary } => summary;
    fn cron_stop(name: String) -> () = Request::CronStop { name } => Response::Ok => ();
    fn pool_init(ask: Box<bosun_wire::PoolAsk>) -> Pools = Request::PoolInit(ask) => Response::Pools(p) => p;
    fn pool_list() -> Pools = Request::PoolList => Response::Pools(p) => p;
    fn pool_resize(project: String, size: u32) -> Pools =
        Request::PoolResize { project, size } => Response::Pools(p) => p;
    fn pool_acquire(ask: Box<bosun_wire::PoolAsk>) -> Acquired =
        Request::PoolAcquire(ask) => Response::Acquired { workspace, path, branch } =>
            Acquired { workspace, path, branch };
    fn pool_release(workspace: String, force: bool, pristine: bool) -> Released =
        Request::PoolRelease { workspace, force, pristine } => Response::Released { slot, removed } =>
            Released { slot, removed };
    fn pool_remove(project: String, slot: Option<String>, force: bool) -> Pools =
        Request::PoolRemove { project, slot, force } => Response::Pools(p) => p;
    fn queue_push(queue: String, data: std::collections::BTreeMap<String, String>, retry: u32) -> () =
        Request::QueuePush { queue, data, retry } => Response::Ok => ();
    fn queue_retry(item: String) -> () = Request::QueueRetry { item } => Response::Ok => ();
    fn queue_drop(item: String) -> () = Request::QueueDrop { item } => Response::Ok => ();
    fn worker_start(name: String, sources: Vec<(PathBuf, String)>, cwd: PathBuf) -> () =
        Request::WorkerStart { name, sources, cwd } => Response::Ok => ();
    fn worker_stop(name: String) -> () = Request::WorkerStop { name } => Response::Ok => ();
}
