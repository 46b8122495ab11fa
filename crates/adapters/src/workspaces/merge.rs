//! Merging an agent's branch into another (`bosun merge`) without a worktree of its own: the
//! target's new commit is made first — a fast-forward, a merge commit from `git merge-tree`, a
//! squash commit, or the branch's commits replayed with `git replay` — touching no file and no
//! ref, so a conflict leaves everything as it was and names its files. Then the target moves to
//! it: a ref update when no worktree has it checked out, else a fast-forward merge in the worktree
//! that has, refused when that worktree holds changes.

use std::path::{Path, PathBuf};

use bosun_core::{MergeHow, Merged};

use super::git::{branch_exists, command_error, git, output, run, stderr_text, stdout_line};
use crate::AdapterError;

/// Merges `branch` into `into` in `repo` as `how` says, with `message` for a new commit.
pub(crate) fn merge(
    repo: &Path,
    branch: &str,
    into: &str,
    how: MergeHow,
    message: Option<&str>,
) -> Result<Merged, AdapterError> {
    check(repo, branch, into)?;
    let target = tip(repo, into)?;
    let theirs = tip(repo, branch)?;
    let done = |commit: String, already: bool, fast_forward: bool, branch_merged: bool| Merged {
        into: into.to_owned(),
        branch: branch.to_owned(),
        how,
        commit,
        already,
        fast_forward,
        branch_merged,
    };
    if is_ancestor(repo, &theirs, &target)? {
        return Ok(done(target, true, false, true));
    }
    let ff = is_ancestor(repo, &target, &theirs)?;
    let conflicts =
        |files: Vec<String>| AdapterError::MergeConflict { into: into.to_owned(), from: branch.to_owned(), files };
    let new = match how {
        MergeHow::Merge if ff => theirs.clone(),
        MergeHow::Merge => {
            let message = message.map_or_else(|| format!("Merge branch '{branch}' into {into}"), str::to_owned);
            merge_commit(repo, (into, &target), (branch, &theirs), &message)?
        }
        MergeHow::Squash => {
            let tree = merged_tree(repo, &target, &theirs).map_err(conflicts)??;
            // Squashed already (asked again after a crash cut off its record): nothing to add.
            if tree == tree_of(repo, &target)? {
                return Ok(done(target, true, false, false));
            }
            let message = message.map_or_else(|| format!("Squash branch '{branch}' into {into}"), str::to_owned);
            commit_tree(repo, &tree, &[&target], &message)?
        }
        MergeHow::Rebase if ff => theirs.clone(),
        MergeHow::Rebase => {
            // The conflicts first, named; `git replay` only says that there are some.
            merged_tree(repo, &target, &theirs).map_err(conflicts)??;
            replay(repo, &target, branch, &theirs)?
        }
    };
    // A rebased branch moves too: known to be free to move before anything does.
    let replayed = how == MergeHow::Rebase && new != theirs;
    let branch_use = if replayed { in_use(repo, branch)? } else { None };
    if let Some(InUse::Midway(dir, doing)) = &branch_use {
        return Err(AdapterError::Command {
            command: "bosun merge --rebase".into(),
            stderr: format!("{branch} is being {doing} in {}: finish or abort that first", dir.display()),
        });
    }
    move_to(repo, into, &target, &new)?;
    if replayed {
        // The branch is its replayed commits now, so it is all in the target; where it is
        // checked out (its agent's worktree, clean), its files follow.
        let mut cmd = match branch_use {
            Some(InUse::CheckedOut(dir)) => {
                let mut cmd = git(&dir);
                cmd.args(["reset", "--quiet", "--keep", &new]);
                cmd
            }
            _ => {
                let mut cmd = git(repo);
                cmd.args(["update-ref", &format!("refs/heads/{branch}"), &new, &theirs]);
                cmd
            }
        };
        run(&mut cmd)?;
    }
    let branch_merged = how != MergeHow::Squash;
    Ok(done(new, false, ff && how != MergeHow::Squash, branch_merged))
}

/// Whether `branch` can be merged into `into` with nothing of anyone's work touched: both are
/// branches of `repo`, and where `into` is checked out it holds no changes and is not midway
/// through a rebase or a bisect. What a merge asks first, before it changes anything.
pub(crate) fn check(repo: &Path, branch: &str, into: &str) -> Result<(), AdapterError> {
    for b in [branch, into] {
        if !branch_exists(repo, b)? {
            return Err(AdapterError::NoBranch { repo: repo.to_path_buf(), branch: b.to_owned() });
        }
    }
    match in_use(repo, into)? {
        None => Ok(()),
        Some(InUse::Midway(dir, doing)) => Err(midway(into, &dir, doing)),
        Some(InUse::CheckedOut(dir)) => {
            let mut cmd = git(&dir);
            cmd.args(["status", "--porcelain=v1", "--untracked-files=no"]);
            if run(&mut cmd)?.trim().is_empty() {
                Ok(())
            } else {
                Err(AdapterError::TargetHasChanges { into: into.to_owned(), dir })
            }
        }
    }
}

fn midway(into: &str, dir: &Path, doing: &str) -> AdapterError {
    AdapterError::Command {
        command: "bosun merge".into(),
        stderr: format!(
            "{into} is being {doing} in {}: finish or abort that first, or merge with --into another branch",
            dir.display()
        ),
    }
}

/// A merge commit of `theirs` (named, and its commit) into `ours`, with `message`; a conflict
/// names its files.
pub(crate) fn merge_commit(
    repo: &Path,
    (into, ours): (&str, &str),
    (from, theirs): (&str, &str),
    message: &str,
) -> Result<String, AdapterError> {
    let conflicts = |files| AdapterError::MergeConflict { into: into.to_owned(), from: from.to_owned(), files };
    let tree = merged_tree(repo, ours, theirs).map_err(conflicts)??;
    commit_tree(repo, &tree, &[ours, theirs], message)
}

/// The tree of `ours` and `theirs` merged, or the files that conflict.
fn merged_tree(repo: &Path, ours: &str, theirs: &str) -> Result<Result<String, AdapterError>, Vec<String>> {
    let mut cmd = git(repo);
    cmd.args(["merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs]);
    let out = match output(&mut cmd) {
        Ok(out) => out,
        Err(e) => return Ok(Err(e)),
    };
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    let tree = lines.next().unwrap_or_default().to_owned();
    match out.status.code() {
        Some(0) => Ok(Ok(tree)),
        Some(1) => Err(lines.take_while(|l| !l.is_empty()).map(str::to_owned).collect()),
        _ => Ok(Err(command_error(&cmd, stderr_text(&out)))),
    }
}

fn commit_tree(repo: &Path, tree: &str, parents: &[&str], message: &str) -> Result<String, AdapterError> {
    let mut cmd = git(repo);
    cmd.args(["commit-tree", tree]);
    for p in parents {
        cmd.args(["-p", p]);
    }
    cmd.arg("-m").arg(message);
    Ok(run(&mut cmd)?.trim().to_owned())
}

/// `branch`'s commits since `onto` replayed on it, `branch` being at `theirs` (the commit whose
/// conflicts were looked for): the new tip.
fn replay(repo: &Path, onto: &str, branch: &str, theirs: &str) -> Result<String, AdapterError> {
    let mut cmd = git(repo);
    cmd.args(["replay", "--onto", onto, &format!("{onto}..refs/heads/{branch}")]);
    let out = run(&mut cmd)?;
    // `update refs/heads/BRANCH NEW OLD`; OLD not `theirs`: the branch moved since it was
    // looked at, and what was replayed was never checked.
    let (new, old) = out
        .lines()
        .find_map(|l| {
            let mut words = l.strip_prefix(&format!("update refs/heads/{branch} "))?.split_whitespace();
            Some((words.next()?.to_owned(), words.next()?.to_owned()))
        })
        .ok_or_else(|| command_error(&cmd, format!("unexpected output {:?}", out.trim())))?;
    if old != theirs {
        return Err(command_error(&cmd, format!("{branch} moved while it was merged: merge again")));
    }
    Ok(new)
}

/// Moves `into` from `from` to `to` (a descendant): a ref update, or a fast-forward in the
/// worktree that has it checked out, which must hold no changes.
fn move_to(repo: &Path, into: &str, from: &str, to: &str) -> Result<(), AdapterError> {
    match in_use(repo, into)? {
        None => {
            let mut cmd = git(repo);
            cmd.args(["update-ref", "-m", "bosun merge", &format!("refs/heads/{into}"), to, from]);
            run(&mut cmd).map(drop)
        }
        // A worktree rebasing or bisecting it shows as detached, and would set it when done.
        Some(InUse::Midway(dir, doing)) => Err(midway(into, &dir, doing)),
        Some(InUse::CheckedOut(dir)) => {
            let mut cmd = git(&dir);
            cmd.args(["status", "--porcelain=v1", "--untracked-files=no"]);
            if !run(&mut cmd)?.trim().is_empty() {
                return Err(AdapterError::TargetHasChanges { into: into.to_owned(), dir });
            }
            let mut cmd = git(&dir);
            cmd.args(["merge", "--ff-only", "--quiet", to]);
            run(&mut cmd).map(drop)
        }
    }
}

/// How a worktree of the repository holds a branch.
enum InUse {
    /// Checked out there (the repository's own checkout, or a linked one).
    CheckedOut(PathBuf),
    /// In the middle of a rebase (`rebased`, its own or `--update-refs`) or a bisect
    /// (`bisected`) there, its HEAD detached meanwhile.
    Midway(PathBuf, &'static str),
}

/// Which worktree of `repo`, if any, holds `branch`, and how.
fn in_use(repo: &Path, branch: &str) -> Result<Option<InUse>, AdapterError> {
    let mut cmd = git(repo);
    cmd.args(["worktree", "list", "--porcelain", "-z"]);
    let out = run(&mut cmd)?;
    let full = format!("refs/heads/{branch}");
    let mut path = None;
    for field in out.split('\0') {
        if let Some(p) = field.strip_prefix("worktree ") {
            path = Some(PathBuf::from(p));
            continue;
        }
        let Some(dir) = path.as_ref() else { continue };
        if field.strip_prefix("branch ") == Some(full.as_str()) {
            return Ok(Some(InUse::CheckedOut(dir.clone())));
        }
        if field != "detached" {
            continue;
        }
        let mut cmd = git(dir);
        cmd.args(["rev-parse", "--absolute-git-dir"]);
        let Ok(git_dir) = run(&mut cmd).map(|o| PathBuf::from(o.trim())) else { continue };
        // Small files of git's own, read no further than 64 KiB.
        let names = |file: &str, name: &str| {
            let mut text = String::new();
            let read = std::fs::File::open(git_dir.join(file))
                .and_then(|f| std::io::Read::read_to_string(&mut std::io::Read::take(f, 64 << 10), &mut text));
            read.is_ok() && text.lines().any(|l| l.trim() == name)
        };
        let rebased = ["rebase-merge/head-name", "rebase-apply/head-name", "rebase-merge/update-refs"];
        if rebased.iter().any(|file| names(file, &full)) {
            return Ok(Some(InUse::Midway(dir.clone(), "rebased")));
        }
        if names("BISECT_START", branch) {
            return Ok(Some(InUse::Midway(dir.clone(), "bisected")));
        }
    }
    Ok(None)
}

/// The tree of `commit`.
fn tree_of(repo: &Path, commit: &str) -> Result<String, AdapterError> {
    let mut cmd = git(repo);
    cmd.args(["rev-parse", "--verify", &format!("{commit}^{{tree}}")]);
    Ok(run(&mut cmd)?.trim().to_owned())
}

fn tip(repo: &Path, branch: &str) -> Result<String, AdapterError> {
    let mut cmd = git(repo);
    cmd.args(["rev-parse", "--verify", &format!("refs/heads/{branch}^{{commit}}")]);
    let out = output(&mut cmd)?;
    if !out.status.success() {
        return Err(command_error(&cmd, stderr_text(&out)));
    }
    Ok(stdout_line(&out))
}

fn is_ancestor(repo: &Path, a: &str, b: &str) -> Result<bool, AdapterError> {
    let mut cmd = git(repo);
    cmd.args(["merge-base", "--is-ancestor", a, b]);
    let out = output(&mut cmd)?;
    match out.status.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(command_error(&cmd, stderr_text(&out))),
    }
}
