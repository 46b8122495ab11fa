//! Queues and workers: items pushed onto a persisted queue are taken by a running worker, each
//! into a job of its own; a failed item is tried again up to its queue's retries, then
//! dead-lettered.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{JobId, Timestamp};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ItemId(pub u64);

impl fmt::Display for ItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "i{}", self.0)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    pub id: ItemId,
    pub queue: String,
    /// What the job sees as `${item.KEY}`.
    pub data: BTreeMap<String, String>,
    pub state: ItemState,
    /// Tries that failed (since it was last put back by hand).
    pub failures: u32,
    /// Times a worker took it, ever.
    #[serde(default)]
    pub tries: u32,
    /// How many failures it may have before it is dead-lettered.
    pub retry: u32,
    pub job: Option<JobId>,
    /// The worker that took it last.
    pub worker: Option<String>,
    pub at: Timestamp,
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemState {
    Pending,
    /// A worker took it; its job runs.
    Taken,
    Done,
    /// Failed more often than its queue retries: kept for `bosun queue retry` or `drop`.
    Dead,
}

/// A worker: feeds its queue's items into its job, `concurrency` at a time, with the runbook
/// text it was started with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Worker {
    pub name: String,
    pub queue: String,
    pub job: String,
    pub concurrency: u32,
    pub running: bool,
    /// The runbook files as they were when the worker started.
    pub sources: Vec<(PathBuf, String)>,
    /// Where it was started: the repository its jobs' worktrees come from.
    pub cwd: PathBuf,
}
