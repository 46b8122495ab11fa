//! Where a workspace's branch goes, and a pull request for it, shared by `bosun merge`,
//! `bosun pr` and a job's `pr` step: the target is the branch it started from when that is a
//! branch, else the repository's current branch; a pull request is the branch pushed to
//! `origin` and opened with the forge.

use std::path::Path;

use bosun_adapters::forge::{Forge, PrAsk};
use bosun_adapters::{AdapterError, Git};
use bosun_core::PullRequest;

/// Why a branch has no target to go into.
#[derive(Debug)]
pub enum NoTarget {
    Git(AdapterError),
    Detached,
}

impl std::fmt::Display for NoTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Git(e) => write!(f, "{e}"),
            Self::Detached => {
                f.write_str("its workspace started from no branch and HEAD is detached: say which branch with --into")
            }
        }
    }
}

/// The branch work of `repo` goes into: `base_ref` when it names a branch, else the current one.
pub fn target(git: &dyn Git, repo: &Path, base_ref: Option<String>) -> Result<String, NoTarget> {
    match base_ref.filter(|b| git.resolve_commit(repo, &format!("refs/heads/{b}")).is_ok()) {
        Some(b) => Ok(b),
        None => git.current_branch(repo).map_err(NoTarget::Git)?.ok_or(NoTarget::Detached),
    }
}

/// Pushes `branch` of `repo` and opens a pull request for it into `into`.
pub fn open(
    git: &dyn Git,
    forge: &dyn Forge,
    repo: &Path,
    ask: &PrAsk<'_>,
    at: bosun_core::Timestamp,
) -> Result<PullRequest, AdapterError> {
    git.push(repo, ask.branch)?;
    crate::faults::step("pr:pushed");
    let url = forge.open_pr(repo, ask)?;
    Ok(PullRequest { url, branch: ask.branch.to_owned(), into: ask.into.to_owned(), draft: ask.draft, at })
}
