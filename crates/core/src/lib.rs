//! bosun's functional core: the records bosun keeps (workspaces, agents, messages), the facts it
//! records about them (`Event`), the requests it makes of the world (`Effect`), what reaches it
//! (`Input`), and the two pure functions that tie them together: `decide` and `apply`.
//!
//! Nothing here reads a clock, draws a random number or touches a file: the daemon supplies the
//! time and the nonces, and carries out the effects.

mod account;
mod agent;
mod ask;
pub mod budget;
mod classify;
pub mod client_check;
pub mod client_version;
pub mod config;
mod cron;
pub mod daily;
mod decide;
mod detect;
mod doctor;
pub mod driver;
mod effect;
mod escalation;
mod event;
mod finish;
mod id;
mod input;
mod job;
mod job_book;
pub mod ledger;
mod liveness;
mod memory;
mod merging;
pub mod message_text;
mod notice;
pub mod own_config;
mod permission;
mod permission_mode;
mod placement;
mod plan;
mod plan_summary;
mod policy;
mod pool;
pub mod price;
mod queue;
pub mod rate_limit;
mod ref_name;
mod reject;
pub mod replay;
mod runtime;
mod siting;
mod state;
pub mod template;
mod term_key;
mod time;
mod timer;
pub mod usage;
mod wait_for;
mod workspace;

pub use account::Account;
pub use agent::{
    Agent, Answering, DeathReason, ExitStatus, Fork, Message, MessageKind, MessageState, NewAgent, Outcome, Progress,
    SavedWork, SessionState, INHERITED_ENV_FILE, RECORDED_ENV,
};
pub use ask::{PlaceRefusal, RuntimeAsk, WorkspaceAsk};
pub use classify::{
    after_command, guardrail, heuristic, parse_answer, without_command, ClassSource, Classify, Rule, TurnClass, Verdict,
};
pub use cron::{Cron, Origin, Schedule, ScheduleError};
pub use decide::{decide, Decision, DIALOG_PRESSES_MAX, INTERRUPT_AGAIN_MS};
pub use detect::{AgentError, Cause, Heartbeat, Observation, PromptKind, Source, LINE_MAX};
pub use doctor::{leftovers, Found, FoundBranch, FoundDir, FoundPod, FoundWorktree, Leftover, Orphan};
pub use driver::claude::SETTINGS_LOCAL;
pub use effect::Effect;
pub use escalation::{Escalation, Resolution};
pub use event::Event;
pub use finish::{Change, FileChange, MergeHow, Merged, PullRequest, WorkDiff, PATCH_MOST};
pub use id::{
    fnv, AgentId, EscalationId, ItemId, JobId, MessageId, Name, NameError, Nonce, RequestId, SessionName, SlotId,
    WorkspaceId,
};
pub use input::{AgentSpec, Input, Reality, SessionSeen, WorkspaceProbe};
pub use job::{AgentPlan, Job, JobNotify, JobSpec, JobState, JobWorkspace, Next, StepRun, StepSpec};
pub use job_book::{JobBook, JobDef, JobSource, StepAgent};
pub use liveness::{Awaited, Lost, Mover, Stuck, Subject};
pub use memory::{stopped_agent, Checkpoint, JobScope, ResumePoint, CHECKPOINT_FILE, EVENTS_FILE};
pub use merging::{Merge, MergeOutcome};
pub use notice::{BadWebhook, Notice, NoticeKind, WebhookUrl};
pub use own_config::OwnConfig;
pub use permission::{
    answer as permission_answer, BlockedCall, PermissionAnswer, PermissionDecision, PermissionRule, Refusal, RuleError,
    DECISIONS_KEPT,
};
pub use permission_mode::{ModeFrom, PermissionMode, RunsIn, UnknownPermissionMode};
pub use plan::{
    Judge, Plan, PlanAsk, PlanBranch, PlanJob, PlanJobState, PlanState, Variant, VariantCandidate,
    DEFAULT_PLAN_CONCURRENCY,
};
pub use plan_summary::{PlanFold, PlanJobSummary, PlanSummary, VariantSummary};
pub use policy::{
    format_duration, parse_duration, Action, Attempts, BadDuration, Chain, Policy, Step, StepError, Trigger,
    DEFAULT_GRACE_MS,
};
pub use pool::{
    Pool, PoolAsk, PoolBase, PoolSpec, PoolWorkspace, Slot, SlotProbe, SlotReset, SlotState, DEFAULT_POOL_SIZE,
};
pub use queue::{parse_listed, External, Item, ItemState, Worker};
pub use ref_name::{branch_dirs, branch_problem, branches_clash, plan_branch_problems, PlanJobBranch};
pub use reject::Rejection;
pub use runtime::{
    BadResource, Container, Place, Pod, PodSource, Runtime, Sandbox, SessionBackend, POD_AGENT_DIR, POD_CONFIG,
    POD_ROOT, POD_STATE_DIR, POD_WORKSPACE,
};
pub use siting::{fork_into, Gather, JobAsk, JobSited, RepoFacts, Sited, StartAsk};
pub use state::{apply, State, REQUESTS_KEPT};
pub use term_key::{
    check_size, strokes, KeysError, TermKey, KEYS_MAX, KEYS_TEXT_MAX, STROKES_APART_MS, STROKES_MAX, TERM_SIDE_MAX,
};
pub use time::Timestamp;
pub use timer::{Timer, TimerId, TimerKind};
pub use wait_for::{Reached, WaitFor};
pub use workspace::{
    BranchKept, PodClaim, PodClone, PoolTask, SettingsFolder, VolumeClone, WorkBranch, Workspace, WorkspaceKind,
    WorkspaceState, TASK_FILE,
};
