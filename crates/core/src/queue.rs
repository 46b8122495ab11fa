//! Queues and workers: items pushed onto a persisted queue are taken by a running worker, each
//! into a job of its own; a failed item is tried again up to its queue's retries, then
//! dead-lettered.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{ItemId, JobBook, JobId, Timestamp};

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
    /// Its key in an external queue (its `id` field, else its line), so it is taken once.
    #[serde(default)]
    pub key: Option<String>,
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
    /// Its job, lowered from the runbook as it was when the worker started (empty in a record
    /// an older bosun wrote).
    #[serde(default)]
    pub book: JobBook,
    /// Where it was started: the repository its jobs' worktrees come from.
    pub cwd: PathBuf,
    /// When its queue is external: the commands that list and take items.
    #[serde(default)]
    pub external: Option<External>,
    /// Why its queue's `list` failed last, if it did, or why it stopped by itself.
    #[serde(default)]
    pub error: Option<String>,
    /// What the agents of all the jobs it started together may spend: each starts with what is
    /// left of it, and once it is spent the worker stops, taking no new item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<crate::budget::Budget>,
}

/// An external queue: `list` prints its items as JSON lines (run every `poll_ms` while a worker
/// runs); `take` (a template over `${item.*}`) claims one before its job starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct External {
    pub list: String,
    pub take: Option<String>,
    pub poll_ms: u64,
    pub retry: u32,
}

/// An item as an external queue lists it: its key and its fields.
pub type Listed = (String, BTreeMap<String, String>);

/// The items of a `list` command's output: one JSON object per line, its values as text; the key
/// is its `id` field, else the line. A line that is not an object is an error.
pub fn parse_listed(output: &str) -> Result<Vec<Listed>, String> {
    let mut items = Vec::new();
    for (n, line) in output.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("line {} is not JSON: {e}", n + 1))?;
        let serde_json::Value::Object(fields) = value else {
            return Err(format!("line {} is not a JSON object", n + 1));
        };
        let data: BTreeMap<String, String> = fields
            .into_iter()
            .map(|(k, v)| {
                let text = match v {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                (k, text)
            })
            .collect();
        let key = data.get("id").cloned().unwrap_or_else(|| line.trim().to_owned());
        items.push((key, data));
    }
    Ok(items)
}
