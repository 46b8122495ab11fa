//! `LocalSurvey`: what is on disk for `bosun doctor` — directories, git worktrees and bosun's
//! branches — and the removals it asks for. It reports and carries out; it judges nothing.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use bosun_core::{FoundBranch, FoundDir, FoundWorktree};

use super::git::{command_error, git, output, run, stderr_text, stdout_line, unique_commits};
use super::{exists, folder_has_content, status_paths};
use crate::{AdapterError, Survey};

/// The glob of the branches bosun names itself (`ws-<nonce>`).
const BOSUN_BRANCHES: &str = "ws-*";

#[derive(Debug, Default)]
pub struct LocalSurvey;

impl Survey for LocalSurvey {
    fn subdirs(&self, root: &Path) -> Result<Vec<PathBuf>, AdapterError> {
        let entries = match fs::read_dir(root) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(AdapterError::io(format!("reading {}", root.display()), e)),
        };
        let mut dirs = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| AdapterError::io(format!("reading {}", root.display()), e))?;
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                dirs.push(entry.path());
            }
        }
        dirs.sort();
        Ok(dirs)
    }

    fn workspace_dir(&self, path: &Path) -> FoundDir {
        if !path.join(".git").exists() {
            let dirty = folder_has_content(path, Path::new(""), &[]).ok();
            return FoundDir { path: path.to_path_buf(), repo: None, branch: None, dirty };
        }
        let repo = common_repo(path);
        let branch = {
            let mut cmd = git(path);
            cmd.args(["symbolic-ref", "--quiet", "--short", "HEAD"]);
            output(&mut cmd).ok().filter(|o| o.status.success()).map(|o| stdout_line(&o))
        };
        let dirty = {
            let mut cmd = git(path);
            cmd.args(["status", "--porcelain=v1", "--untracked-files=all", "-z"]);
            run(&mut cmd).ok().map(|out| status_paths(&out).next().is_some())
        };
        // A worktree whose repository cannot be found cannot be told clean.
        let dirty = dirty.filter(|_| repo.is_some());
        FoundDir { path: path.to_path_buf(), repo, branch, dirty }
    }

    fn worktrees(&self, repo: &Path) -> Result<Vec<FoundWorktree>, AdapterError> {
        let mut cmd = git(repo);
        cmd.args(["worktree", "list", "--porcelain", "-z"]);
        let out = run(&mut cmd)?;
        let mut found = Vec::new();
        let mut current: Option<FoundWorktree> = None;
        for field in out.split('\0') {
            if let Some(path) = field.strip_prefix("worktree ") {
                let path = PathBuf::from(path);
                let missing = !path.exists();
                current = Some(FoundWorktree { repo: repo.to_path_buf(), path, branch: None, missing });
            } else if let (Some(wt), Some(head)) = (current.as_mut(), field.strip_prefix("branch ")) {
                wt.branch = Some(head.strip_prefix("refs/heads/").unwrap_or(head).to_owned());
            } else if let (Some(wt), true) = (current.as_mut(), field.starts_with("prunable")) {
                wt.missing = true;
            } else if field.is_empty() {
                found.extend(current.take());
            }
        }
        found.extend(current);
        Ok(found)
    }

    fn branches(&self, repo: &Path) -> Result<Vec<FoundBranch>, AdapterError> {
        let mut cmd = git(repo);
        cmd.args(["for-each-ref", "--format=%(refname:lstrip=2)"]).arg(format!("refs/heads/{BOSUN_BRANCHES}"));
        let out = run(&mut cmd)?;
        let branch = |name: &str| {
            let unique_commits = unique_commits(repo, name).ok();
            FoundBranch { repo: repo.to_path_buf(), name: name.to_owned(), unique_commits }
        };
        Ok(out.lines().filter(|l| !l.is_empty()).map(branch).collect())
    }

    fn remove_dir(&self, path: &Path) -> Result<(), AdapterError> {
        match fs::remove_dir_all(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                Err(AdapterError::io(format!("removing {}", path.display()), e))
            }
            _ => Ok(()),
        }
    }

    fn remove_worktree(&self, repo: &Path, path: &Path) -> Result<(), AdapterError> {
        if !exists(path)? {
            return self.forget(repo, path);
        }
        let mut cmd = git(repo);
        cmd.args(["worktree", "remove"]).arg(path);
        let out = output(&mut cmd)?;
        if !out.status.success() {
            return Err(command_error(&cmd, stderr_text(&out)));
        }
        Ok(())
    }

    fn forget(&self, repo: &Path, path: &Path) -> Result<(), AdapterError> {
        let mut cmd = git(repo);
        cmd.args(["rev-parse", "--path-format=absolute", "--git-common-dir"]);
        let common = PathBuf::from(run(&mut cmd)?.trim());
        let admin = common.join("worktrees");
        let want = path.join(".git");
        for entry in self.subdirs(&admin)? {
            let gitdir = fs::read_to_string(entry.join("gitdir")).unwrap_or_default();
            if Path::new(gitdir.trim()) == want {
                return self.remove_dir(&entry);
            }
        }
        Ok(())
    }

    fn delete_branch(&self, repo: &Path, name: &str) -> Result<(), AdapterError> {
        let mut cmd = git(repo);
        cmd.args(["branch", "-D"]).arg(name);
        run(&mut cmd).map(drop)
    }
}

/// The repository a worktree belongs to: the directory holding its common `.git`.
fn common_repo(path: &Path) -> Option<PathBuf> {
    let mut cmd = git(path);
    cmd.args(["rev-parse", "--path-format=absolute", "--git-common-dir"]);
    let out = output(&mut cmd).ok().filter(|o| o.status.success())?;
    let common = PathBuf::from(stdout_line(&out));
    common.parent().map(Path::to_path_buf)
}
