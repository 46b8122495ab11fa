//! `TempRepo`: a throwaway git repository in a temp dir, for tests that drive real git. Its git
//! commands read no system config, and its identity lives in the repository's own config, so
//! tests work on a machine with no global git identity and never write the user's config.

use std::fs;
use std::path::Path;
use std::process::Command;

/// A git repository in a temp dir, deleted when dropped: made on branch `main` with one commit
/// (a README), or cloned.
pub struct TempRepo {
    /// Made under the system temp dir with symlinks resolved, so its path is the one git reports.
    dir: tempfile::TempDir,
}

impl TempRepo {
    pub fn new() -> Self {
        Self::made(temp_dir("bosun-repo-"))
    }

    /// The same, in a temp dir under `parent` (outside `/tmp`, where a user's repositories are:
    /// a sandbox's private `/tmp` hides nothing of it by itself).
    pub fn new_in(parent: &Path) -> Self {
        let parent = fs::canonicalize(parent).expect("resolve the parent");
        Self::made(tempfile::Builder::new().prefix("bosun-repo-").tempdir_in(parent).expect("create a temp dir"))
    }

    fn made(dir: tempfile::TempDir) -> Self {
        git_in(dir.path(), &["init", "-q", "-b", "main"]);
        let repo = Self::with_identity(dir);
        repo.commit_file("README.md", "# test repository\n");
        repo
    }

    /// A clone of the repository at `origin` (its remote `origin`), on origin's default branch.
    pub fn clone_of(origin: &Path) -> Self {
        let dir = temp_dir("bosun-clone-");
        let into = dir.path().to_str().expect("a UTF-8 temp dir");
        git_in(dir.path(), &["clone", "-q", "--", origin.to_str().expect("a UTF-8 origin"), into]);
        Self::with_identity(dir)
    }

    /// A bare clone of this repository in a temp dir, deleted when dropped: a remote for
    /// `clone_of` that can be pushed to.
    pub fn bare_clone(&self) -> tempfile::TempDir {
        let dir = temp_dir("bosun-bare-");
        let into = dir.path().to_str().expect("a UTF-8 temp dir");
        self.git(&["clone", "-q", "--bare", "--", self.path().to_str().expect("a UTF-8 repo"), into]);
        dir
    }

    /// The repository in `dir`, with its identity set in its own config.
    fn with_identity(dir: tempfile::TempDir) -> Self {
        for (key, value) in [
            ("user.name", "bosun test"),
            ("user.email", "test@bosun.invalid"),
            ("commit.gpgsign", "false"),
            ("tag.gpgsign", "false"),
        ] {
            git_in(dir.path(), &["config", "--local", key, value]);
        }
        Self { dir }
    }

    /// The repository's top-level directory, symlinks resolved.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `name` (creating its directories), commits it, and returns the new commit's id.
    pub fn commit_file(&self, name: &str, content: &str) -> String {
        commit_file_in(self.path(), name, content)
    }

    /// Runs `git -C <repo> args…`, panicking with its stderr when it fails; returns its
    /// stdout without the trailing newline.
    pub fn git(&self, args: &[&str]) -> String {
        git_in(self.path(), args)
    }

    /// The commit `HEAD` points at.
    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"])
    }
}

impl Default for TempRepo {
    fn default() -> Self {
        Self::new()
    }
}

/// A temp dir under the system temp dir with symlinks resolved, so its path is the one git
/// reports.
fn temp_dir(prefix: &str) -> tempfile::TempDir {
    let temp = fs::canonicalize(std::env::temp_dir()).expect("resolve the system temp dir");
    tempfile::Builder::new().prefix(prefix).tempdir_in(temp).expect("create a temp dir")
}

/// Runs `git -C <dir> args…` (in a repository or one of its worktrees) without system config and
/// with C messages, panicking with its stderr when it fails; returns its stdout without the
/// trailing newline.
pub fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "`git -C {} {}` failed: {}",
        dir.display(),
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end_matches('\n').to_owned()
}

/// Writes `name` under `dir` (a repository or a worktree), commits it there, and returns the
/// new commit's id.
pub fn commit_file_in(dir: &Path, name: &str, content: &str) -> String {
    let file = dir.join(name);
    if let Some(parent) = file.parent() {
        fs::create_dir_all(parent).expect("create the file's directory");
    }
    fs::write(&file, content).expect("write the file");
    git_in(dir, &["add", "--", name]);
    git_in(dir, &["commit", "-q", "--no-verify", "-m", &format!("add {name}")]);
    git_in(dir, &["rev-parse", "HEAD"])
}
