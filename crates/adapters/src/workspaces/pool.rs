//! `Pools` for `LocalWorkspaces`: a pool's slots as git worktrees at a detached HEAD — made
//! (with the files `.worktreeinclude` names, then the pool's setup), reset after a task,
//! removed, looked at — and a task bound to a slot by making its branch there.

use std::ffi::OsString;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use bosun_core::{PoolBase, SlotProbe, SlotReset, TASK_FILE};

use super::git::{command_error, git, names_no_repo, output, run, stderr_text, stdout_line};
use super::worktree::worktree_on;
use super::{canonical, create_dir_all, exists, folder_has_content, status_paths, LocalWorkspaces};
use crate::{AdapterError, Pools};

/// The remote a pool starts from when the repository has it.
const REMOTE: &str = "origin";
/// The file in the repository's top directory naming, in gitignore syntax, the untracked files
/// a new slot gets a copy of (`.env`).
const INCLUDE_FILE: &str = ".worktreeinclude";
/// How much of a failed setup's error output is kept, from its end.
const SETUP_TAIL: usize = 300;

impl Pools for LocalWorkspaces {
    fn base(&self, repo: &Path) -> Result<PoolBase, AdapterError> {
        // The common dir's HEAD is the main worktree's, whichever worktree `repo` is.
        let common = common_dir(repo)?;
        if commit_of(&common, "HEAD")?.is_none() {
            return Err(AdapterError::NoCommit(repo.to_path_buf()));
        }
        if has_remote(repo, REMOTE)? {
            if let Some(base_ref) = remote_default(repo, REMOTE)? {
                return Ok(PoolBase { base_ref, remote: Some(REMOTE.to_owned()) });
            }
        }
        let base_ref = match symbolic_head(&common)? {
            Some(head) => head.strip_prefix("refs/heads/").unwrap_or(&head).to_owned(),
            None => commit_of(&common, "HEAD")?.ok_or_else(|| AdapterError::NoCommit(repo.to_path_buf()))?,
        };
        Ok(PoolBase { base_ref, remote: None })
    }

    fn create_slot(
        &self,
        repo: &Path,
        path: &Path,
        base_ref: &str,
        setup: Option<&str>,
    ) -> Result<String, AdapterError> {
        self.repo_locks.serialized(repo, || add_detached(repo, path, base_ref))?;
        copy_included(repo, path)?;
        if let Some(setup) = setup {
            run_setup(path, setup)?;
        }
        head_commit(path)
    }

    fn reset_slot(&self, reset: &SlotReset) -> Result<String, AdapterError> {
        let SlotReset { repo, path, base, pristine, force, delete_branch, setup } = reset;
        check_worktree(path)?;
        if !force && holds_work(path)? {
            return Err(AdapterError::Dirty(path.clone()));
        }
        if let Some(remote) = &base.remote {
            // Concurrent fetches in one repository race on its ref locks.
            self.repo_locks.serialized(repo, || fetch(repo, remote));
        }
        // Off the task's branch first, without touching a file, so the reset cannot move it. A
        // crash between two of these steps leaves a slot the next run finds clean.
        let from = match commit_of(path, "HEAD")? {
            Some(head) => head,
            None => commit_of(path, &base.base_ref)?.ok_or_else(|| unknown_ref(repo, &base.base_ref))?,
        };
        run(git(path).args(["update-ref", "--no-deref", "-m", "bosun: slot reset", "HEAD"]).arg(&from))?;
        run(git(path).args(["reset", "--hard", "--quiet"]).arg(&base.base_ref).arg("--"))?;
        run(git(path).args(["clean", "--quiet", if *pristine { "-fdx" } else { "-fd" }]))?;
        if *pristine {
            // As new: what `.worktreeinclude` lists and what the setup makes were cleaned too.
            copy_included(repo, path)?;
            if let Some(setup) = setup {
                run_setup(path, setup)?;
            }
        }
        let task = path.join(TASK_FILE);
        if let Err(e) = fs::remove_file(&task) {
            if e.kind() != io::ErrorKind::NotFound {
                return Err(AdapterError::io(format!("removing {}", task.display()), e));
            }
        }
        if let Some(branch) = delete_branch {
            super::git::delete_branch(repo, branch)?;
        }
        head_commit(path)
    }

    fn remove_slot(&self, repo: &Path, path: &Path) -> Result<(), AdapterError> {
        self.repo_locks.serialized(repo, || {
            if exists(path)? {
                let registered = worktree_on(repo, path)?.is_some();
                if registered && exists(&path.join(".git"))? {
                    run(git(repo).args(["worktree", "remove", "--force"]).arg(path))?;
                } else if registered || !folder_has_content(path, Path::new(""), &[])? {
                    // What a removal cut short leaves (its `.git` deleted first), or an empty
                    // directory a creation cut short left.
                    fs::remove_dir_all(path)
                        .map_err(|e| AdapterError::io(format!("removing {}", path.display()), e))?;
                } else {
                    return Err(AdapterError::NotAWorktree(path.to_path_buf()));
                }
            }
            run(git(repo).args(["worktree", "prune"])).map(drop)
        })
    }

    fn probe_slot(&self, path: &Path) -> Result<SlotProbe, AdapterError> {
        if !exists(path)? {
            return Ok(SlotProbe::default());
        }
        if !exists(&path.join(".git"))? {
            // Not a worktree: git would answer for whatever repository lies above it.
            let dirty = folder_has_content(path, Path::new(""), &[])?;
            return Ok(SlotProbe { exists: true, dirty, head: None });
        }
        Ok(SlotProbe { exists: true, dirty: holds_work(path)?, head: commit_of(path, "HEAD")? })
    }
}

/// Binds the slot at `path` to a task: makes `branch` at `base` (the commit the slot's detached
/// HEAD is at) and points HEAD at it — no checkout, so its cost does not grow with the
/// repository — then writes `task` to the task file, which git is told to ignore. With `resume`,
/// a HEAD already on `branch` counts as done.
pub(super) fn bind(
    repo: &Path,
    path: &Path,
    branch: &str,
    base: &str,
    task: Option<&str>,
    resume: bool,
) -> Result<(), AdapterError> {
    check_worktree(path)?;
    let want = format!("refs/heads/{branch}");
    if !(resume && symbolic_head(path)?.as_deref() == Some(want.as_str())) {
        let base = commit_of(path, base)?.ok_or_else(|| unknown_ref(repo, base))?;
        let head = commit_of(path, "HEAD")?.unwrap_or_default();
        if head != base {
            return Err(AdapterError::SlotMoved { path: path.to_path_buf(), head, base });
        }
        make_branch(repo, path, branch, &base)?;
        run(git(path).args(["symbolic-ref", "-m", "bosun: bound to a task", "HEAD"]).arg(&want))?;
    }
    if let Some(task) = task {
        exclude_task_file(path)?;
        let file = path.join(TASK_FILE);
        fs::write(&file, task).map_err(|e| AdapterError::io(format!("writing {}", file.display()), e))?;
    }
    Ok(())
}

/// `refs/heads/<branch>` at `base`, made only when absent (`update-ref` with an empty old
/// value); one already there at `base` is taken as made.
fn make_branch(repo: &Path, path: &Path, branch: &str, base: &str) -> Result<(), AdapterError> {
    let refname = format!("refs/heads/{branch}");
    let mut cmd = git(path);
    cmd.args(["update-ref", "-m", "bosun: task branch"]).arg(&refname).arg(base).arg("");
    let out = output(&mut cmd)?;
    if out.status.success() {
        return Ok(());
    }
    match commit_of(path, &refname)? {
        Some(at) if at == base => Ok(()),
        Some(_) => Err(AdapterError::BranchExists { repo: repo.to_path_buf(), branch: branch.to_owned() }),
        None => Err(command_error(&cmd, stderr_text(&out))),
    }
}

/// Makes sure the repository ignores the task file in every worktree: the line `/TASK.md` in
/// its common `info/exclude` (git reads no `info/exclude` from a linked worktree's own git dir),
/// added once.
fn exclude_task_file(path: &Path) -> Result<(), AdapterError> {
    let line = format!("/{TASK_FILE}");
    let info = common_dir(path)?.join("info");
    let file = info.join("exclude");
    let text = match fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(AdapterError::io(format!("reading {}", file.display()), e)),
    };
    if text.lines().any(|l| l.trim_end() == line) {
        return Ok(());
    }
    create_dir_all(&info)?;
    let sep = if text.is_empty() || text.ends_with('\n') { "" } else { "\n" };
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .and_then(|mut f| f.write_all(format!("{sep}{line}\n").as_bytes()))
        .map_err(|e| AdapterError::io(format!("writing {}", file.display()), e))
}

/// `git worktree add --detach <path> <base_ref>`; a worktree of `repo` already at `path` counts
/// as made, and one registered whose directory is gone is pruned first.
fn add_detached(repo: &Path, path: &Path, base_ref: &str) -> Result<(), AdapterError> {
    if worktree_on(repo, path)?.is_some() {
        if exists(path)? {
            return Ok(());
        }
        run(git(repo).args(["worktree", "prune"]))?;
    }
    if let Some(parent) = path.parent() {
        create_dir_all(parent)?;
    }
    run(git(repo).args(["worktree", "add", "--quiet", "--detach"]).arg(path).arg(base_ref)).map(drop)
}

/// Copies into the slot the untracked files of `repo` (ignored ones included) that its
/// `.worktreeinclude` matches, at the same relative paths. A symbolic link is copied as the
/// file it names only when that lies inside the repository; nothing is written through a link
/// in the slot.
fn copy_included(repo: &Path, slot: &Path) -> Result<(), AdapterError> {
    let list = repo.join(INCLUDE_FILE);
    if !list.is_file() {
        return Ok(());
    }
    let mut cmd = git(repo);
    let mut exclude_from = OsString::from("--exclude-from=");
    exclude_from.push(&list);
    cmd.args(["ls-files", "-z", "--others", "--ignored"]).arg(exclude_from);
    let out = run(&mut cmd)?;
    let (repo_root, slot_root) = (canonical(repo), canonical(slot));
    for rel in out.split('\0').filter(|r| !r.is_empty()) {
        let rel = Path::new(rel);
        let Some(from) = included_source(&repo.join(rel), &repo_root)? else {
            tracing::warn!(file = %rel.display(), "not copied into the pool slot: a link out of the repository, or not a file");
            continue;
        };
        let to = slot.join(rel);
        if let Some(dir) = to.parent() {
            create_dir_all(dir)?;
            if !canonical(dir).starts_with(&slot_root) {
                tracing::warn!(file = %rel.display(), "not copied into the pool slot: its directory there is a link out of it");
                continue;
            }
        }
        if fs::symlink_metadata(&to).is_ok_and(|m| !m.is_file()) {
            tracing::warn!(file = %rel.display(), "not copied into the pool slot: something else is there");
            continue;
        }
        fs::copy(&from, &to)
            .map_err(|e| AdapterError::io(format!("copying {} to {}", from.display(), to.display()), e))?;
    }
    Ok(())
}

/// The file to copy for `file`: itself when it is a regular file, what it links to when that is
/// a regular file inside `repo_root`; None otherwise (or when it is gone).
fn included_source(file: &Path, repo_root: &Path) -> Result<Option<PathBuf>, AdapterError> {
    let meta = match fs::symlink_metadata(file) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(AdapterError::io(format!("looking at {}", file.display()), e)),
    };
    if meta.is_file() {
        return Ok(Some(file.to_path_buf()));
    }
    if !meta.file_type().is_symlink() {
        return Ok(None);
    }
    Ok(fs::canonicalize(file).ok().filter(|target| target.starts_with(repo_root) && target.is_file()))
}

/// Runs the pool's `setup` (the user's own command) with `sh -c` in the slot.
fn run_setup(path: &Path, setup: &str) -> Result<(), AdapterError> {
    let mut cmd = Command::new("sh");
    crate::private::as_user(&mut cmd);
    cmd.arg("-c").arg(setup).current_dir(path).stdin(Stdio::null());
    let out = cmd.output().map_err(|e| AdapterError::io(format!("running the setup in {}", path.display()), e))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = stderr_text(&out);
    let cut = stderr.len().saturating_sub(SETUP_TAIL);
    let start = (cut..=stderr.len()).find(|&i| stderr.is_char_boundary(i)).unwrap_or(stderr.len());
    Err(AdapterError::Setup { path: path.to_path_buf(), code: out.status.code(), stderr: stderr[start..].to_owned() })
}

/// `git fetch <remote>` in `repo`, never asking for credentials; a failure is logged, and the
/// reset uses the remote-tracking ref as it is.
fn fetch(repo: &Path, remote: &str) {
    let mut cmd = git(repo);
    cmd.args(["fetch", "--quiet"]).arg(remote).env("GIT_TERMINAL_PROMPT", "0");
    if let Err(e) = run(&mut cmd) {
        tracing::warn!(repo = %repo.display(), remote, error = %e, "fetch before a pool slot's reset failed; resetting to the ref as it is");
    }
}

/// Whether the slot holds uncommitted or untracked (not ignored) files besides the task file.
fn holds_work(path: &Path) -> Result<bool, AdapterError> {
    let out = run(git(path).args(["status", "--porcelain=v1", "--untracked-files=normal", "-z"]))?;
    let work = status_paths(&out).any(|p| p != TASK_FILE);
    Ok(work)
}

/// An error unless `path` is a worktree of its own: in a plain directory git would answer for
/// whatever repository lies above it.
fn check_worktree(path: &Path) -> Result<(), AdapterError> {
    if exists(&path.join(".git"))? {
        return Ok(());
    }
    Err(AdapterError::NotAWorktree(path.to_path_buf()))
}

/// The commit the slot's HEAD is at.
fn head_commit(path: &Path) -> Result<String, AdapterError> {
    commit_of(path, "HEAD")?.ok_or_else(|| AdapterError::NoCommit(path.to_path_buf()))
}

/// The full commit id `rev` names where `dir` is, or None when it names none.
fn commit_of(dir: &Path, rev: &str) -> Result<Option<String>, AdapterError> {
    let mut cmd = git(dir);
    cmd.args(["rev-parse", "--verify", "--quiet"]).arg(format!("{rev}^{{commit}}"));
    let out = output(&mut cmd)?;
    if out.status.success() {
        return Ok(Some(stdout_line(&out)));
    }
    let stderr = stderr_text(&out);
    if stderr.is_empty() {
        return Ok(None);
    }
    if names_no_repo(&stderr) {
        return Err(AdapterError::NotARepo(dir.to_path_buf()));
    }
    Err(command_error(&cmd, stderr))
}

/// The ref HEAD points at where `dir` is (`refs/heads/main`), or None when it is detached.
fn symbolic_head(dir: &Path) -> Result<Option<String>, AdapterError> {
    let mut cmd = git(dir);
    cmd.args(["symbolic-ref", "--quiet", "HEAD"]);
    let out = output(&mut cmd)?;
    match out.status.code() {
        Some(0) => Ok(Some(stdout_line(&out))),
        Some(1) => Ok(None),
        _ => Err(command_error(&cmd, stderr_text(&out))),
    }
}

/// The repository's common git dir (its `.git`), from any of its worktrees.
fn common_dir(dir: &Path) -> Result<PathBuf, AdapterError> {
    super::git::rev_parse_path(dir, &["--path-format=absolute", "--git-common-dir"])
}

fn has_remote(repo: &Path, remote: &str) -> Result<bool, AdapterError> {
    Ok(run(git(repo).arg("remote"))?.lines().any(|r| r == remote))
}

/// The remote's default branch as a remote-tracking ref (`origin/main`): what its `HEAD` names,
/// else its `main`, else its `master`, whichever is there first.
fn remote_default(repo: &Path, remote: &str) -> Result<Option<String>, AdapterError> {
    let mut cmd = git(repo);
    cmd.args(["symbolic-ref", "--quiet", "--short"]).arg(format!("refs/remotes/{remote}/HEAD"));
    let out = output(&mut cmd)?;
    let named = out.status.success().then(|| stdout_line(&out));
    let candidates = named.into_iter().chain(["main", "master"].map(|b| format!("{remote}/{b}")));
    for candidate in candidates {
        if commit_of(repo, &format!("refs/remotes/{candidate}"))?.is_some() {
            return Ok(Some(candidate));
        }
    }
    Ok(None)
}

fn unknown_ref(repo: &Path, rev: &str) -> AdapterError {
    AdapterError::UnknownRef { repo: repo.to_path_buf(), rev: rev.to_owned() }
}
