//! `LocalWorkspaces`: workspaces on the local disk — plain directories, git worktrees, and
//! pools' slots (`pool`) — made and removed by running `git` as a subprocess. It carries out
//! what the core asked and reports what git said; it decides nothing.

mod git;
mod pool;
mod survey;

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use bosun_core::WorkspaceKind;

use crate::{AdapterError, Workspaces};
use git::{branch_exists, command_error, git, names_no_repo, output, run, stderr_text, stdout_line, unique_commits};
pub use survey::LocalSurvey;

/// What `git worktree remove` says when it refuses because of changes.
const REFUSED_DIRTY: &str = "contains modified or untracked files";

/// Workspaces on the local disk, made with the `git` found on `PATH`.
#[derive(Debug, Default)]
pub struct LocalWorkspaces {
    /// One lock per repository: concurrent `git worktree add` in one repository race on its
    /// administrative files (`failed to read .git/worktrees/<x>/commondir`), so worktree
    /// changes in a repository are made one at a time.
    repo_locks: Mutex<BTreeMap<PathBuf, Arc<Mutex<()>>>>,
}

impl LocalWorkspaces {
    pub const fn new() -> Self {
        Self { repo_locks: Mutex::new(BTreeMap::new()) }
    }

    /// Runs `f` while holding `repo`'s lock.
    fn serialized<T>(&self, repo: &Path, f: impl FnOnce() -> T) -> T {
        let lock = {
            let mut locks = self.repo_locks.lock().unwrap_or_else(PoisonError::into_inner);
            locks.entry(repo.to_path_buf()).or_default().clone()
        };
        let _held = lock.lock().unwrap_or_else(PoisonError::into_inner);
        f()
    }
}

impl Workspaces for LocalWorkspaces {
    fn repo_root(&self, dir: &Path) -> Result<PathBuf, AdapterError> {
        git::rev_parse_path(dir, &["--show-toplevel"])
    }

    fn resolve_commit(&self, repo: &Path, rev: &str) -> Result<String, AdapterError> {
        let mut cmd = git(repo);
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
        let mut cmd = git(repo);
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
        if branch_exists(repo, branch)? {
            return Err(AdapterError::BranchExists { repo: repo.to_path_buf(), branch: branch.to_owned() });
        }
        Ok(())
    }

    fn create(
        &self,
        path: &Path,
        kind: &WorkspaceKind,
        settings_from: Option<&Path>,
        resume: bool,
    ) -> Result<(), AdapterError> {
        match kind {
            WorkspaceKind::Folder => create_dir_all(path)?,
            WorkspaceKind::Worktree { repo, branch, base, .. } => {
                self.serialized(repo, || create_worktree(repo, path, branch, base, resume))?
            }
            WorkspaceKind::Pool { repo, branch, base, task, .. } => {
                // Under the lock: two binds must not both add the task file's exclude line.
                self.serialized(repo, || pool::bind(repo, path, branch, base, task.as_deref(), resume))?
            }
        }
        if let Some(from) = settings_from {
            let to = path.join(bosun_core::driver::claude::SETTINGS_LOCAL);
            if let Some(dir) = to.parent() {
                create_dir_all(dir)?;
            }
            fs::copy(from, &to)
                .map_err(|e| AdapterError::io(format!("copying {} to {}", from.display(), to.display()), e))?;
        }
        Ok(())
    }

    fn is_dirty(&self, path: &Path, kind: &WorkspaceKind, owned: &[PathBuf]) -> Result<bool, AdapterError> {
        if !exists(path)? {
            return Ok(false);
        }
        match kind {
            WorkspaceKind::Folder => folder_has_content(path, Path::new(""), owned),
            WorkspaceKind::Worktree { .. } | WorkspaceKind::Pool { .. } => {
                let mut cmd = git(path);
                cmd.args(["status", "--porcelain=v1", "--untracked-files=all", "-z"]);
                let out = run(&mut cmd)?;
                let dirty = status_paths(&out).any(|p| !owned.iter().any(|o| o == Path::new(p)));
                Ok(dirty)
            }
        }
    }

    fn commits_ahead(&self, kind: &WorkspaceKind) -> Result<u32, AdapterError> {
        match kind {
            WorkspaceKind::Folder => Ok(0),
            WorkspaceKind::Worktree { repo, branch, .. } | WorkspaceKind::Pool { repo, branch, .. }
                if !branch_exists(repo, branch)? =>
            {
                Ok(0)
            }
            WorkspaceKind::Worktree { repo, branch, base, .. } => {
                let mut cmd = git(repo);
                cmd.args(["rev-list", "--count"]).arg(format!("{base}..refs/heads/{branch}"));
                let out = run(&mut cmd)?;
                let count = out.trim();
                count.parse().map_err(|_| command_error(&cmd, format!("unexpected output {count:?}")))
            }
            WorkspaceKind::Pool { repo, branch, .. } => unique_commits(repo, branch),
        }
    }

    fn remove(
        &self,
        path: &Path,
        kind: &WorkspaceKind,
        force: bool,
        delete_branch: bool,
        owned: &[PathBuf],
    ) -> Result<(), AdapterError> {
        // The core releases a pool's workspace with `Pools::reset_slot`: its slot stays.
        if matches!(kind, WorkspaceKind::Pool { .. }) {
            return Err(AdapterError::PoolSlot(path.to_path_buf()));
        }
        // Refuse before touching anything, so a refused workspace is left exactly as it was.
        if !force && self.is_dirty(path, kind, owned)? {
            return Err(AdapterError::Dirty(path.to_path_buf()));
        }
        if exists(path)? {
            remove_owned(path, owned)?;
        }
        match kind {
            WorkspaceKind::Folder => remove_folder(path, force),
            WorkspaceKind::Pool { .. } => Err(AdapterError::PoolSlot(path.to_path_buf())),
            WorkspaceKind::Worktree { repo, branch, .. } => {
                self.serialized(repo, || remove_worktree(repo, path, force))?;
                if delete_branch {
                    let mut cmd = git(repo);
                    cmd.args(["branch", "-D", branch]);
                    let out = output(&mut cmd)?;
                    let stderr = stderr_text(&out);
                    if !out.status.success() && !stderr.contains("not found") {
                        return Err(command_error(&cmd, stderr));
                    }
                }
                Ok(())
            }
        }
    }
}

/// `git worktree add`, tolerating a worktree already there and a branch left by a crash.
fn create_worktree(repo: &Path, path: &Path, branch: &str, base: &str, resume: bool) -> Result<(), AdapterError> {
    if !resume {
        if let Some(parent) = path.parent() {
            create_dir_all(parent)?;
        }
        let mut cmd = git(repo);
        cmd.args(["worktree", "add", "-b", branch]).arg(path).arg(base);
        return run(&mut cmd).map(drop);
    }
    if exists(path)? && worktree_on(repo, path)?.is_some_and(|b| b == format!("refs/heads/{branch}")) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        create_dir_all(parent)?;
    }
    let mut cmd = git(repo);
    cmd.args(["worktree", "add"]);
    if branch_exists(repo, branch)? {
        cmd.arg(path).arg(branch);
    } else {
        cmd.args(["-b", branch]).arg(path).arg(base);
    }
    run(&mut cmd).map(drop)
}

/// The ref checked out in `repo`'s worktree at `path` (empty when detached), or None when
/// `path` is not one of its worktrees.
fn worktree_on(repo: &Path, path: &Path) -> Result<Option<String>, AdapterError> {
    let mut cmd = git(repo);
    cmd.args(["worktree", "list", "--porcelain", "-z"]);
    let out = run(&mut cmd)?;
    let want = canonical(path);
    let mut current: Option<String> = None;
    for field in out.split('\0') {
        if let Some(listed) = field.strip_prefix("worktree ") {
            current = (canonical(Path::new(listed)) == want).then(String::new);
        } else if let (Some(found), Some(head)) = (current.as_mut(), field.strip_prefix("branch ")) {
            *found = head.to_owned();
        } else if field.is_empty() && current.is_some() {
            return Ok(current);
        }
    }
    Ok(current)
}

fn remove_worktree(repo: &Path, path: &Path, force: bool) -> Result<(), AdapterError> {
    if exists(path)? {
        let mut cmd = git(repo);
        cmd.args(["worktree", "remove"]);
        if force {
            cmd.arg("--force");
        }
        cmd.arg(path);
        let out = output(&mut cmd)?;
        if !out.status.success() {
            let stderr = stderr_text(&out);
            if stderr.contains(REFUSED_DIRTY) {
                return Err(AdapterError::Dirty(path.to_path_buf()));
            }
            return Err(command_error(&cmd, stderr));
        }
    }
    let mut cmd = git(repo);
    cmd.args(["worktree", "prune"]);
    run(&mut cmd).map(drop)
}

fn remove_folder(path: &Path, force: bool) -> Result<(), AdapterError> {
    if force {
        return removed(fs::remove_dir_all(path), &[io::ErrorKind::NotFound], path).map(drop);
    }
    match fs::remove_dir(path) {
        Err(e) if e.kind() == io::ErrorKind::DirectoryNotEmpty => Err(AdapterError::Dirty(path.to_path_buf())),
        result => removed(result, &[io::ErrorKind::NotFound], path).map(drop),
    }
}

/// Deletes the `owned` files, and the directories between them and `path` they leave empty.
fn remove_owned(path: &Path, owned: &[PathBuf]) -> Result<(), AdapterError> {
    use io::ErrorKind::{DirectoryNotEmpty, NotFound};
    for file in owned {
        let full = path.join(file);
        removed(fs::remove_file(&full), &[NotFound], &full)?;
        let dirs = file.ancestors().skip(1).filter(|d| !d.as_os_str().is_empty());
        for dir in dirs {
            let full = path.join(dir);
            if !removed(fs::remove_dir(&full), &[NotFound, DirectoryNotEmpty], &full)? {
                break;
            }
        }
    }
    Ok(())
}

/// Whether removing `what` did remove it; the error kinds in `fine` count as "it stays".
fn removed(result: io::Result<()>, fine: &[io::ErrorKind], what: &Path) -> Result<bool, AdapterError> {
    match result {
        Ok(()) => Ok(true),
        Err(e) if fine.contains(&e.kind()) => Ok(false),
        Err(e) => Err(AdapterError::io(format!("removing {}", what.display()), e)),
    }
}

/// Whether the directory `root/rel` holds anything besides the `owned` files and the
/// directories that lead to them.
fn folder_has_content(root: &Path, rel: &Path, owned: &[PathBuf]) -> Result<bool, AdapterError> {
    let dir = root.join(rel);
    let entries = fs::read_dir(&dir).map_err(|e| AdapterError::io(format!("reading {}", dir.display()), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| AdapterError::io(format!("reading {}", dir.display()), e))?;
        let name = rel.join(entry.file_name());
        let is_dir =
            entry.file_type().map_err(|e| AdapterError::io(format!("reading {}", entry.path().display()), e))?.is_dir();
        let holds_owned = owned.iter().any(|o| o.starts_with(&name) && o != &name);
        let clean =
            if is_dir { holds_owned && !folder_has_content(root, &name, owned)? } else { owned.contains(&name) };
        if !clean {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The paths in `git status --porcelain=v1 -z` output; a rename's source path is skipped.
fn status_paths(out: &str) -> impl Iterator<Item = &str> {
    let mut fields = out.split('\0').filter(|f| !f.is_empty());
    std::iter::from_fn(move || {
        let entry = fields.next()?;
        let (status, path) = (entry.get(..2).unwrap_or(""), entry.get(3..).unwrap_or(""));
        if status.starts_with(['R', 'C']) {
            fields.next();
        }
        Some(path)
    })
}

fn exists(path: &Path) -> Result<bool, AdapterError> {
    path.try_exists().map_err(|e| AdapterError::io(format!("looking at {}", path.display()), e))
}

fn create_dir_all(dir: &Path) -> Result<(), AdapterError> {
    fs::create_dir_all(dir).map_err(|e| AdapterError::io(format!("creating {}", dir.display()), e))
}

fn canonical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}
