//! A workspace's diff against the commit it started at (`bosun_core::WorkDiff`). In a worktree
//! it is what the working tree holds — committed, changed and untracked files alike, ignored
//! ones not — read through an index of bosun's own (`GIT_INDEX_FILE`), so the agent's index is
//! never touched. A workspace whose clone is elsewhere (a volume, a pod whose branch came back
//! here) is its branch's commits, or those of a snapshot of it (a volume's, uncommitted work
//! included). Names are read NUL-separated, so any file name stays whole.

use std::path::{Path, PathBuf};

use bosun_core::{Change, FileChange, WorkDiff, Workspace, WorkspaceKind, PATCH_MOST};

use super::git::{command_error, git, output, stderr_text};
use crate::AdapterError;
use bosun_core::{PodClone, PoolTask, VolumeClone, WorkBranch};

/// The diff of workspace `ws` (bosun's own files in it left out), with its patch when `patch`
/// (coloured when `color`).
pub(crate) fn diff(ws: &Workspace, tip: Option<&str>, patch: bool, color: bool) -> Result<WorkDiff, AdapterError> {
    let (path, kind, owned) = (&ws.path, &ws.kind, ws.owned_files());
    let no_base = |why: &str| AdapterError::Command { command: "bosun diff".into(), stderr: why.to_owned() };
    let (dir, base, branch, range, index) = match kind {
        WorkspaceKind::Folder => return Err(no_base("a folder workspace has no commit it started at to compare with")),
        WorkspaceKind::Pod(PodClone { remote: Some(remote), .. }) => {
            return Err(no_base(&format!(
                "its clone is in its pod, and its branch goes back to {remote}: fetch it from there"
            )))
        }
        WorkspaceKind::Pool(PoolTask { git: WorkBranch { base, branch, .. }, .. }) if base.is_empty() => {
            return Err(no_base(&format!("its task waits for a pool slot: nothing on {branch} yet")))
        }
        WorkspaceKind::Worktree(WorkBranch { base, branch, .. })
        | WorkspaceKind::Pool(PoolTask { git: WorkBranch { base, branch, .. }, .. }) => {
            (path.to_path_buf(), base.clone(), branch.clone(), base.clone(), Some(ScratchIndex::new()?))
        }
        WorkspaceKind::Volume(VolumeClone { git: WorkBranch { repo, base, branch, .. }, .. })
        | WorkspaceKind::Pod(PodClone { git: WorkBranch { repo, base, branch, .. }, .. }) => {
            let tip = tip.map_or_else(|| format!("refs/heads/{branch}"), str::to_owned);
            (repo.clone(), base.clone(), branch.clone(), format!("{base}...{tip}"), None)
        }
    };
    if let Some(index) = &index {
        index.fill(&dir, "HEAD", &owned)?;
    }
    let cached: &[&str] = if index.is_some() { &["--cached"] } else { &[] };
    let run = |args: &[&str]| -> Result<Vec<u8>, AdapterError> {
        let mut cmd = git(&dir);
        cmd.args(["-c", "core.quotepath=false", "diff", "--no-ext-diff", "--no-textconv"])
            .args(cached)
            .args(args)
            .arg(&range)
            .arg("--");
        if let Some(index) = &index {
            cmd.env("GIT_INDEX_FILE", &index.path);
        }
        let out = output(&mut cmd)?;
        if !out.status.success() {
            return Err(command_error(&cmd, stderr_text(&out)));
        }
        Ok(out.stdout)
    };
    let files = changes(&run(&["-M", "-z", "--name-status"])?, &run(&["-M", "-z", "--numstat"])?);
    let commits = {
        let tip = if index.is_some() { "HEAD".to_owned() } else { format!("refs/heads/{branch}") };
        let mut cmd = git(&dir);
        cmd.args(["rev-list", "--count", &format!("{base}..{tip}")]);
        let out = output(&mut cmd)?;
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(0)
    };
    let (text, truncated) = if patch {
        let color = if color { "--color=always" } else { "--no-color" };
        let mut bytes = run(&["-M", color])?;
        let truncated = bytes.len() > PATCH_MOST;
        bytes.truncate(PATCH_MOST);
        (Some(String::from_utf8_lossy(&bytes).into_owned()), truncated)
    } else {
        (None, false)
    };
    Ok(WorkDiff { workspace: ws.id.clone(), base, branch: Some(branch), commits, files, patch: text, truncated })
}

/// A commit holding what worktree `dir` holds now (at HEAD, uncommitted and untracked files
/// too, `owned` left out), made without touching its index or files: HEAD itself when there is
/// nothing uncommitted. What a fork starts from.
pub(crate) fn snapshot(dir: &Path, owned: &[PathBuf], message: &str) -> Result<String, AdapterError> {
    snapshot_of(dir, None, "HEAD", owned, message)
}

/// As `snapshot`, of the files in `work` (a volume's copy read back, whose own git directory is
/// never written) on top of `repo`'s commit `head`: every object is written in `repo`.
pub(crate) fn snapshot_elsewhere(
    repo: &Path,
    work: &Path,
    head: &str,
    owned: &[PathBuf],
    message: &str,
) -> Result<String, AdapterError> {
    snapshot_of(repo, Some(work), head, owned, message)
}

fn snapshot_of(
    dir: &Path,
    work: Option<&Path>,
    head: &str,
    owned: &[PathBuf],
    message: &str,
) -> Result<String, AdapterError> {
    let work = match work {
        Some(work) => {
            let mut cmd = git(dir);
            cmd.args(["rev-parse", "--absolute-git-dir"]);
            let found = output(&mut cmd)?;
            if !found.status.success() {
                return Err(command_error(&cmd, stderr_text(&found)));
            }
            Some((work.to_path_buf(), PathBuf::from(String::from_utf8_lossy(&found.stdout).trim())))
        }
        None => None,
    };
    let mut index = ScratchIndex::new()?;
    index.work = work;
    let out = |args: &[&str]| -> Result<std::process::Output, AdapterError> {
        let mut cmd = index.command(dir);
        cmd.args(args);
        output(&mut cmd)
    };
    let head = out(&["rev-parse", "--verify", &format!("{head}^{{commit}}")])?;
    if !head.status.success() {
        return Err(AdapterError::Command { command: "git rev-parse".into(), stderr: stderr_text(&head) });
    }
    let head = String::from_utf8_lossy(&head.stdout).trim().to_owned();
    index.fill(dir, &head, owned)?;
    if out(&["diff", "--cached", "--quiet", &head])?.status.success() {
        return Ok(head);
    }
    let tree = out(&["write-tree"])?;
    let tree = String::from_utf8_lossy(&tree.stdout).trim().to_owned();
    let mut cmd = git(dir);
    cmd.args(["commit-tree", &tree, "-p", &head, "-m", message]);
    let made = output(&mut cmd)?;
    if !made.status.success() {
        return Err(command_error(&cmd, stderr_text(&made)));
    }
    Ok(String::from_utf8_lossy(&made.stdout).trim().to_owned())
}

/// The files of `--name-status -z` with the counts of `--numstat -z`.
fn changes(status: &[u8], numstat: &[u8]) -> Vec<FileChange> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut files = Vec::new();
    let mut fields = status.split(|b| *b == 0).filter(|f| !f.is_empty());
    while let Some(code) = fields.next() {
        let change = match code.first() {
            Some(b'A') => Change::Added,
            Some(b'D') => Change::Deleted,
            Some(b'T') => Change::TypeChanged,
            Some(b'R' | b'C') => match fields.next() {
                Some(from) => Change::Renamed { from: text(from) },
                None => break,
            },
            _ => Change::Modified,
        };
        let Some(path) = fields.next() else { break };
        files.push(FileChange { path: text(path), change, added: None, removed: None });
    }
    // `A\tR\tpath\0`, or for a rename `A\tR\t\0from\0to\0`.
    let mut fields = numstat.split(|b| *b == 0);
    while let Some(head) = fields.next() {
        let head = text(head);
        let mut parts = head.splitn(3, '\t');
        let (Some(added), Some(removed), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        let path = if path.is_empty() {
            let _from = fields.next();
            fields.next().map(text).unwrap_or_default()
        } else {
            path.to_owned()
        };
        if let Some(f) = files.iter_mut().find(|f| f.path == path) {
            f.added = added.parse().ok();
            f.removed = removed.parse().ok();
        }
    }
    files
}

/// An index file of bosun's own, removed when dropped; with the work tree it reads and the git
/// directory it writes when the files are not the repository's own worktree's.
struct ScratchIndex {
    path: PathBuf,
    work: Option<(PathBuf, PathBuf)>,
}

impl ScratchIndex {
    fn new() -> Result<Self, AdapterError> {
        let name = format!("bosun-diff-index-{}-{}", std::process::id(), fastrand::u64(..));
        Ok(Self { path: std::env::temp_dir().join(name), work: None })
    }

    fn command(&self, dir: &Path) -> std::process::Command {
        let mut cmd = match &self.work {
            // Run in the work tree, with the repository's git directory: the work tree's own
            // `.git` is never read for a setting nor written.
            Some((work, git_dir)) => {
                let mut cmd = git(work);
                cmd.env("GIT_DIR", git_dir).env("GIT_WORK_TREE", work);
                cmd
            }
            None => git(dir),
        };
        cmd.env("GIT_INDEX_FILE", &self.path);
        cmd
    }

    /// The working tree as it is, untracked files too, on top of `tree`, bosun's own files
    /// (`owned`, taken literally) left out.
    fn fill(&self, dir: &Path, tree: &str, owned: &[PathBuf]) -> Result<(), AdapterError> {
        self.git(dir, &["read-tree", tree])?;
        let work = self.work.as_ref().map_or(dir, |(work, _)| work.as_path());
        super::git::stage_all(&|| self.command(dir), work, &[])?;
        for file in owned {
            let file = file.display().to_string();
            self.git(dir, &["--literal-pathspecs", "rm", "--cached", "--quiet", "--ignore-unmatch", "--", &file])?;
        }
        Ok(())
    }

    fn git(&self, dir: &Path, args: &[&str]) -> Result<(), AdapterError> {
        let mut cmd = self.command(dir);
        cmd.args(args);
        let out = output(&mut cmd)?;
        if !out.status.success() {
            return Err(command_error(&cmd, stderr_text(&out)));
        }
        Ok(())
    }
}

impl Drop for ScratchIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_file(self.path.with_extension("lock"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git_ok(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// A volume's copy is another's to write: its files are taken, its own git directory (here
    /// one whose config would run a command and whose objects lead elsewhere) is never used.
    #[test]
    fn a_snapshot_of_files_elsewhere_writes_only_in_the_repository() {
        let root = tempfile::tempdir().unwrap();
        let (repo, copy, elsewhere) = (root.path().join("repo"), root.path().join("copy"), root.path().join("else"));
        for d in [&repo, &copy, &elsewhere] {
            std::fs::create_dir_all(d).unwrap();
        }
        git_ok(&repo, &["init", "-q", "-b", "main"]);
        std::fs::write(repo.join("kept.txt"), "base\n").unwrap();
        git_ok(&repo, &["add", "-A"]);
        git_ok(&repo, &["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "base"]);
        let mark = root.path().join("ran");
        std::fs::create_dir_all(copy.join(".git")).unwrap();
        let config = format!("[core]\n\tfsmonitor = touch {}\n", mark.display());
        std::fs::write(copy.join(".git/config"), config).unwrap();
        std::os::unix::fs::symlink(&elsewhere, copy.join(".git/objects")).unwrap();
        std::fs::write(copy.join("kept.txt"), "changed in the volume\n").unwrap();
        std::fs::write(copy.join("new.txt"), "new\n").unwrap();
        std::fs::write(copy.join("TASK.md"), "bosun's own\n").unwrap();

        let owned = [PathBuf::from("TASK.md")];
        let commit = snapshot_elsewhere(&repo, &copy, "refs/heads/main", &owned, "work not committed").unwrap();
        assert_eq!(git_ok(&repo, &["show", &format!("{commit}:kept.txt")]), "changed in the volume");
        assert_eq!(git_ok(&repo, &["show", &format!("{commit}:new.txt")]), "new");
        let files = git_ok(&repo, &["ls-tree", "--name-only", &commit]);
        assert_eq!(files, "kept.txt\nnew.txt", "bosun's own files and .git left out");
        assert_eq!(git_ok(&repo, &["log", "-1", "--format=%s", &format!("{commit}^")]), "base", "on the branch");
        assert!(!mark.exists(), "the copy's config ran nothing");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "nothing written through its links");
        let in_git: Vec<_> = std::fs::read_dir(copy.join(".git")).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(in_git.len(), 2, "its git directory as it was: {in_git:?}");
        assert_eq!(git_ok(&repo, &["rev-parse", "main"]), git_ok(&repo, &["rev-parse", &format!("{commit}^")]));
    }
}
