//! Plans (seed 003): jobs run one after another, each in a worktree that starts from the branch
//! the one before produced; the first failure stops the plan, which can be resumed from there.

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
    /// Its job, once made.
    pub job_id: Option<JobId>,
    /// The branch its job worked on, once known.
    pub target: Option<String>,
    /// Where its job started from, once known.
    pub source: Option<String>,
    pub done: bool,
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
}

impl PlanJob {
    /// The branch it asks for, and whether a suffix may make it free.
    pub fn wanted_branch(&self) -> (String, bool) {
        match &self.branch {
            Some(b) => (b.clone(), false),
            None => (format!("feature/{}", slug(&self.name)), true),
        }
    }
}

/// Lower-case letters, digits and single dashes.
fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_branch_is_feature_slash_the_slug_unless_one_is_given() {
        let mut j = PlanJob {
            name: "User_Schema v2".into(),
            job: "build".into(),
            vars: BTreeMap::new(),
            using: vec![],
            branch: None,
            job_id: None,
            target: None,
            source: None,
            done: false,
        };
        assert_eq!(j.wanted_branch(), ("feature/user-schema-v2".into(), true));
        j.branch = Some("auth/schema".into());
        assert_eq!(j.wanted_branch(), ("auth/schema".into(), false));
    }
}
