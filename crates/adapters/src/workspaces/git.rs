//! Running `git` for the workspaces: `git -C <dir>` with C messages, its output as text, and
//! its failures as `AdapterError::Command` carrying the command line and git's stderr.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::AdapterError;

/// Variables that would point git at another repository than the one `-C` names.
const FOREIGN_REPO_ENV: [&str; 4] = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"];

/// `git -C <dir>` with C messages, and without any repository the caller's environment names.
/// It takes no optional locks: a `git status` of bosun's must never make an agent's own
/// `git commit` in the same worktree fail on `index.lock`.
pub(super) fn git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    crate::private::as_user(&mut cmd);
    cmd.arg("--no-optional-locks").arg("-C").arg(dir).env("LC_ALL", "C").stdin(Stdio::null());
    for var in FOREIGN_REPO_ENV {
        cmd.env_remove(var);
    }
    cmd
}

/// Whether `refs/heads/<branch>` exists in `repo`.
pub(super) fn branch_exists(repo: &Path, branch: &str) -> Result<bool, AdapterError> {
    let mut cmd = git(repo);
    cmd.args(["show-ref", "--verify", "--quiet"]).arg(format!("refs/heads/{branch}"));
    let out = output(&mut cmd)?;
    match out.status.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(command_error(&cmd, stderr_text(&out))),
    }
}

/// The commits `refs/heads/<branch>` holds that no other branch, tag or remote-tracking branch
/// reaches: what deleting the branch would lose.
pub(super) fn unique_commits(repo: &Path, branch: &str) -> Result<u32, AdapterError> {
    let mut cmd = git(repo);
    cmd.args(["rev-list", "--count"]).arg(format!("refs/heads/{branch}"));
    // An `--exclude` before `--branches` names a branch without `refs/heads/`: with the prefix it
    // would exclude nothing, and the branch would hide its own commits.
    cmd.arg("--not").arg(format!("--exclude={branch}")).args(["--branches", "--tags", "--remotes"]);
    let out = run(&mut cmd)?;
    let count = out.trim();
    count.parse().map_err(|_| command_error(&cmd, format!("unexpected output {count:?}")))
}

/// The path `git rev-parse <args>` prints in `dir`; `AdapterError::NotARepo` when `dir` is in
/// no repository.
pub(super) fn rev_parse_path(dir: &Path, args: &[&str]) -> Result<std::path::PathBuf, AdapterError> {
    let mut cmd = git(dir);
    cmd.arg("rev-parse").args(args);
    let out = output(&mut cmd)?;
    if out.status.success() {
        return Ok(std::path::PathBuf::from(stdout_line(&out)));
    }
    let stderr = stderr_text(&out);
    if names_no_repo(&stderr) {
        return Err(AdapterError::NotARepo(dir.to_path_buf()));
    }
    Err(command_error(&cmd, stderr))
}

/// Whether git's `stderr` says there is no repository (or no directory) where it was run.
pub(super) fn names_no_repo(stderr: &str) -> bool {
    stderr.contains("not a git repository") || stderr.contains("cannot change to")
}

/// Runs `cmd` to the end, whatever its exit status; only failing to start it is an error.
pub(super) fn output(cmd: &mut Command) -> Result<Output, AdapterError> {
    cmd.output().map_err(|e| AdapterError::io(format!("running `{}`", describe(cmd)), e))
}

/// Runs `cmd` and returns its stdout; a non-zero exit is `AdapterError::Command`.
pub(super) fn run(cmd: &mut Command) -> Result<String, AdapterError> {
    let out = output(cmd)?;
    if !out.status.success() {
        return Err(command_error(cmd, stderr_text(&out)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

pub(super) fn command_error(cmd: &Command, stderr: String) -> AdapterError {
    AdapterError::Command { command: describe(cmd), stderr }
}

fn describe(cmd: &Command) -> String {
    let words = std::iter::once(cmd.get_program()).chain(cmd.get_args());
    words.map(OsStr::to_string_lossy).collect::<Vec<_>>().join(" ")
}

/// The first line of stdout: a path or a commit id git printed.
pub(super) fn stdout_line(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim_end_matches(['\n', '\r']).to_owned()
}

pub(super) fn stderr_text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim().to_owned()
}
