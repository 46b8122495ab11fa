//! Finding in a repository what the core's siting rule asks to know (`bosun_core::Gather`)
//! before it decides where an agent's or a job's work goes: the repository's root, the commit a
//! ref resolves to, that a branch is free, its remote. Only git questions; no rule.

use std::path::PathBuf;

use bosun_adapters::{AdapterError, Git};
use bosun_core::{Gather, RepoFacts, WorkBranch};

/// What `gather` asks of the repository `source` is in; a pool's repository is `pool_repo`
/// when its pool is known.
pub fn find(
    git: &dyn Git,
    source: PathBuf,
    gather: Gather,
    pool_repo: Option<PathBuf>,
) -> Result<RepoFacts, AdapterError> {
    Ok(match gather {
        Gather::Nothing => RepoFacts::Nothing { source },
        Gather::PoolBranch { branch } => {
            let repo = match pool_repo {
                Some(repo) => repo,
                None => git.repo_root(&source)?,
            };
            git.check_new_branch(&repo, &branch)?;
            RepoFacts::PoolBranch { repo, branch }
        }
        Gather::NewBranch { branch, base_ref, remote } => {
            let repo = git.repo_root(&source)?;
            let base = git.resolve_commit(&repo, &base_ref)?;
            new_branch(git, WorkBranch { repo, branch, base_ref, base }, remote)?
        }
    })
}

/// `branch`, checked to be free, with its repository's remote when `remote`.
pub fn new_branch(git: &dyn Git, branch: WorkBranch, remote: bool) -> Result<RepoFacts, AdapterError> {
    git.check_new_branch(&branch.repo, &branch.branch)?;
    let remote = if remote { git.remote_url(&branch.repo)? } else { None };
    Ok(RepoFacts::NewBranch { branch, remote })
}
