//! `LocalGit`: the `Git` questions, answered by the `git` on `PATH` through the workspaces' git
//! helpers (`git.rs`), their diffs (`diff.rs`) and merges (`merge.rs`).

use std::path::{Path, PathBuf};

use bosun_core::WorkspaceKind;

use super::git::{
    branch_exists, branch_taken, command_error, git, names_no_repo, output, quiet_line, reading, rev_parse_path, run,
    stage_all, stderr_text, stdout_line, unique_commits, Taken,
};
use super::{diff, merge};
use crate::{AdapterError, Git};
use bosun_core::{PodClone, PoolTask, VolumeClone, WorkBranch};

/// The `Git` questions, answered by the `git` found on `PATH`.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalGit;

impl Git for LocalGit {
    fn repo_root(&self, dir: &Path) -> Result<PathBuf, AdapterError> {
        rev_parse_path(dir, &["--show-toplevel"])
    }

    fn remote_url(&self, repo: &Path) -> Result<Option<String>, AdapterError> {
        Ok(quiet_line(repo, &["config", "--get", "remote.origin.url"])?.filter(|url| !url.is_empty()))
    }

    fn merge(&self, repo: &Path, onto: &str, others: &[String]) -> Result<String, AdapterError> {
        let mut head = self.resolve_commit(repo, onto)?;
        for other in others {
            let theirs = self.resolve_commit(repo, other)?;
            head = merge::merge_commit(repo, (onto, &head), (other, &theirs), &format!("Merge {other} into {onto}"))?;
        }
        Ok(head)
    }

    fn diff(
        &self,
        ws: &bosun_core::Workspace,
        tip: Option<&str>,
        patch: bool,
        color: bool,
    ) -> Result<bosun_core::WorkDiff, AdapterError> {
        diff::diff(ws, tip, patch, color)
    }

    fn merge_branch(
        &self,
        repo: &Path,
        branch: &str,
        into: &str,
        how: bosun_core::MergeHow,
        message: Option<&str>,
    ) -> Result<bosun_core::Merged, AdapterError> {
        merge::merge(repo, branch, into, how, message)
    }

    fn check_merge(&self, repo: &Path, branch: &str, into: &str) -> Result<(), AdapterError> {
        merge::check(repo, branch, into)
    }

    fn commit_all(&self, dir: &Path, owned: &[PathBuf], message: &str) -> Result<bool, AdapterError> {
        stage_all(&|| git(dir), dir, owned)?;
        let mut cmd = git(dir);
        cmd.args(["diff", "--cached", "--quiet"]);
        if output(&mut cmd)?.status.success() {
            return Ok(false);
        }
        let mut cmd = git(dir);
        cmd.args(["commit", "--quiet", "--no-verify", "-F", "-"]);
        let mut child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| AdapterError::io("running git commit", e))?;
        if let Some(mut stdin) = child.stdin.take() {
            use std::io::Write;
            let _ = stdin.write_all(message.as_bytes());
        }
        let out = child.wait_with_output().map_err(|e| AdapterError::io("running git commit", e))?;
        if !out.status.success() {
            return Err(AdapterError::Command { command: "git commit".into(), stderr: stderr_text(&out) });
        }
        Ok(true)
    }

    fn push(&self, repo: &Path, branch: &str) -> Result<(), AdapterError> {
        if self.remote_url(repo)?.is_none() {
            return Err(AdapterError::Command {
                command: "git push".into(),
                stderr: format!("{} has no remote `origin` to push to: `git remote add origin URL`", repo.display()),
            });
        }
        let mut cmd = git(repo);
        cmd.env("GIT_TERMINAL_PROMPT", "0");
        cmd.args(["push", "--quiet", "--set-upstream", "origin", &format!("refs/heads/{branch}:refs/heads/{branch}")]);
        run(&mut cmd).map(drop)
    }

    fn unmerged(&self, repo: &Path, branch: &str, into: &str) -> Result<u32, AdapterError> {
        let mut cmd = git(repo);
        cmd.args(["rev-list", "--count", &format!("refs/heads/{into}..refs/heads/{branch}")]);
        let out = run(&mut cmd)?;
        out.trim().parse().map_err(|_| command_error(&cmd, format!("unexpected output {:?}", out.trim())))
    }

    fn current_branch(&self, repo: &Path) -> Result<Option<String>, AdapterError> {
        // Detached: `--quiet` says so by its status alone.
        quiet_line(repo, &["symbolic-ref", "--quiet", "--short", "HEAD"])
    }

    fn resolve_commit(&self, repo: &Path, rev: &str) -> Result<String, AdapterError> {
        let mut cmd = reading(repo);
        cmd.args(["rev-parse", "--verify", "--quiet"]).arg(format!("{rev}^{{commit}}"));
        let out = output(&mut cmd)?;
        if out.status.success() {
            return Ok(stdout_line(&out));
        }
        let stderr = stderr_text(&out);
        if stderr.is_empty() {
            return Err(AdapterError::UnknownRef { repo: repo.to_path_buf(), rev: rev.to_owned() });
        }
        if names_no_repo(&stderr) {
            return Err(AdapterError::NotARepo(repo.to_path_buf()));
        }
        Err(command_error(&cmd, stderr))
    }

    fn check_new_branch(&self, repo: &Path, branch: &str) -> Result<(), AdapterError> {
        if let Some(reason) = bosun_core::branch_problem(branch) {
            return Err(AdapterError::InvalidBranch { branch: branch.to_owned(), reason });
        }
        // Made of ASCII letters, digits and `-_./` (bosun's own names are), a name that passed
        // `branch_problem` is one git takes as it is: the rules it could break are those
        // `branch_problem` checks. Git is asked about any other.
        let plain = branch.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b));
        if !plain {
            let mut cmd = reading(repo);
            cmd.args(["check-ref-format", "--branch", branch]);
            let out = output(&mut cmd)?;
            let invalid = |reason: String| AdapterError::InvalidBranch { branch: branch.to_owned(), reason };
            if !out.status.success() {
                let stderr = stderr_text(&out);
                return Err(invalid(stderr.strip_prefix("fatal: ").unwrap_or(&stderr).to_owned()));
            }
            // `--branch` expands shorthands such as `@{-1}`; only a name that stays itself is new.
            let expanded = stdout_line(&out);
            if expanded != branch {
                return Err(invalid(format!("git reads it as {expanded:?}")));
            }
        }
        match branch_taken(repo, branch)? {
            Taken::Free => Ok(()),
            Taken::Exists => Err(AdapterError::BranchExists { repo: repo.to_path_buf(), branch: branch.to_owned() }),
            Taken::By(by) => {
                Err(AdapterError::BranchBlocked { repo: repo.to_path_buf(), branch: branch.to_owned(), by })
            }
        }
    }

    fn commits_ahead(&self, kind: &WorkspaceKind) -> Result<u32, AdapterError> {
        match kind {
            // Its branch is on the remote, not here.
            WorkspaceKind::Folder | WorkspaceKind::Pod(PodClone { remote: Some(_), .. }) => Ok(0),
            WorkspaceKind::Worktree(WorkBranch { repo, branch, .. })
            | WorkspaceKind::Pool(PoolTask { git: WorkBranch { repo, branch, .. }, .. })
            | WorkspaceKind::Volume(VolumeClone { git: WorkBranch { repo, branch, .. }, .. })
            | WorkspaceKind::Pod(PodClone { git: WorkBranch { repo, branch, .. }, .. })
                if !branch_exists(repo, branch)? =>
            {
                Ok(0)
            }
            WorkspaceKind::Worktree(WorkBranch { repo, branch, base, .. })
            | WorkspaceKind::Volume(VolumeClone { git: WorkBranch { repo, branch, base, .. }, .. })
            | WorkspaceKind::Pod(PodClone { git: WorkBranch { repo, branch, base, .. }, .. }) => {
                let mut cmd = git(repo);
                cmd.args(["rev-list", "--count"]).arg(format!("{base}..refs/heads/{branch}"));
                let out = run(&mut cmd)?;
                let count = out.trim();
                count.parse().map_err(|_| command_error(&cmd, format!("unexpected output {count:?}")))
            }
            WorkspaceKind::Pool(PoolTask { git: WorkBranch { repo, branch, .. }, .. }) => unique_commits(repo, branch),
        }
    }
}
