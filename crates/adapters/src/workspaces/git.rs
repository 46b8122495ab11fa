//! Running `git` for the workspaces: `git -C <dir>` with C messages, its output as text, and
//! its failures as `AdapterError::Command` carrying the command line and git's stderr.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::AdapterError;

/// Variables that would point git at another repository than the one `-C` names.
const FOREIGN_REPO_ENV: [&str; 4] = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"];

/// Settings on the command line of every git bosun runs, which outweigh what a repository's
/// files say (and reach the git processes it starts): what an agent may have written in its
/// worktree runs nothing on this machine. No watcher program (`core.fsmonitor`), no hooks
/// (bosun's commits, merges and checkouts are its own: a hook is the user's to run), no git run
/// in a repository nested in the worktree (status, diff and commit look only at the commit it
/// is at, checkouts and resets leave it be: its own config, which its agent wrote, would name
/// filters that run), no `ext::`
/// remote (a command), no pager. What selects filters and diff drivers (the repository's
/// config, the user's) is the user's, which a confined agent cannot write; patches bosun reads
/// take `--no-ext-diff --no-textconv`.
pub const DEFUSED: [&str; 12] = [
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "diff.ignoreSubmodules=dirty",
    "-c",
    "submodule.recurse=false",
    "-c",
    "protocol.ext.allow=never",
    "-c",
    "core.pager=cat",
];

/// `git` as bosun runs it: `DEFUSED`, C messages, no optional locks (a `git status` of bosun's
/// must never make an agent's own `git commit` in the same worktree fail on `index.lock`), no
/// stdin, and no repository the caller's environment names. Every git command of bosun's own
/// starts here.
pub fn command() -> Command {
    let mut cmd = defused();
    crate::private::as_user(&mut cmd);
    cmd
}

/// `command()` in `dir` (`git -C <dir>`).
pub fn git(dir: &Path) -> Command {
    let mut cmd = command();
    cmd.arg("-C").arg(dir);
    cmd
}

/// `git(dir)` for a command that only reads (`rev-parse`, `show-ref`, `for-each-ref`,
/// `check-ref-format`, `config --get`): it makes no file, so it is not given the user's mask,
/// and without that hook to run between fork and exec the standard library starts it with
/// `posix_spawn` (a vfork) instead of a fork of the whole daemon. A start runs several.
pub fn reading(dir: &Path) -> Command {
    let mut cmd = defused();
    cmd.arg("-C").arg(dir);
    cmd
}

/// `git` with `DEFUSED`, C messages, no optional locks, no stdin and no repository the caller's
/// environment names.
fn defused() -> Command {
    let mut cmd = Command::new("git");
    cmd.args(DEFUSED).arg("--no-optional-locks").env("LC_ALL", "C").stdin(Stdio::null());
    for var in FOREIGN_REPO_ENV {
        cmd.env_remove(var);
    }
    cmd
}

/// Stages all the work tree `work` holds (`git add -A`), `owned` left out, with the git commands
/// `make` gives, without git running in a repository nested in it: `add` asks each one the index
/// holds (a gitlink) how it stands by running `git status` there, under the config its agent
/// wrote, whose filters would run. Those are left out of the `add` and brought to the commit
/// they are at by `update-index`, which only reads it.
pub(super) fn stage_all(make: &dyn Fn() -> Command, work: &Path, owned: &[PathBuf]) -> Result<(), AdapterError> {
    let mut cmd = make();
    cmd.args(["ls-files", "--stage", "-z"]);
    let listed = output(&mut cmd)?;
    if !listed.status.success() {
        return Err(command_error(&cmd, stderr_text(&listed)));
    }
    let nested: Vec<String> = listed
        .stdout
        .split(|b| *b == 0)
        .filter_map(|entry| {
            let (meta, path) = std::str::from_utf8(entry).ok()?.split_once('\t')?;
            let repository = std::fs::symlink_metadata(work.join(path).join(".git")).is_ok();
            (meta.starts_with("160000 ") && repository).then(|| path.to_owned())
        })
        .collect();
    let mut cmd = make();
    cmd.args(["add", "-A", "--", "."]);
    // One beyond a link its agent made (its `.claude` a link) is not there: git stages the link,
    // and refuses a pathspec beyond it.
    for file in owned.iter().filter(|f| !beyond_a_link(work, f)) {
        cmd.arg(format!(":(exclude){}", file.display()));
    }
    for path in &nested {
        cmd.arg(format!(":(exclude,literal){path}"));
    }
    run(&mut cmd)?;
    if !nested.is_empty() {
        let mut cmd = make();
        cmd.args(["update-index", "--"]).args(&nested);
        run(&mut cmd)?;
    }
    Ok(())
}

/// Whether a folder on the way from `work` to `file` (relative to it) is a link.
fn beyond_a_link(work: &Path, file: &Path) -> bool {
    file.ancestors()
        .skip(1)
        .filter(|dir| !dir.as_os_str().is_empty())
        .any(|dir| std::fs::symlink_metadata(work.join(dir)).is_ok_and(|m| m.file_type().is_symlink()))
}

/// The line `git ARGS` prints in `repo`; none when it says there is none by its status alone
/// (exit 1, nothing on stderr), as `config --get` and `symbolic-ref --quiet` do.
pub(super) fn quiet_line(repo: &Path, args: &[&str]) -> Result<Option<String>, AdapterError> {
    let mut cmd = reading(repo);
    cmd.args(args);
    let out = output(&mut cmd)?;
    match out.status.code() {
        Some(0) => Ok(Some(stdout_line(&out))),
        Some(1) if out.stderr.is_empty() => Ok(None),
        _ => {
            let stderr = stderr_text(&out);
            if names_no_repo(&stderr) {
                return Err(AdapterError::NotARepo(repo.to_path_buf()));
            }
            Err(command_error(&cmd, stderr))
        }
    }
}

/// Deletes `branch` in `repo`; one already gone is fine.
pub(super) fn delete_branch(repo: &Path, branch: &str) -> Result<(), AdapterError> {
    let mut cmd = git(repo);
    cmd.args(["branch", "-D"]).arg(branch);
    let out = output(&mut cmd)?;
    let stderr = stderr_text(&out);
    if !out.status.success() && !stderr.contains("not found") {
        return Err(command_error(&cmd, stderr));
    }
    Ok(())
}

/// Whether `refs/heads/<branch>` exists in `repo`.
pub(super) fn branch_exists(repo: &Path, branch: &str) -> Result<bool, AdapterError> {
    let mut cmd = reading(repo);
    cmd.args(["show-ref", "--verify", "--quiet"]).arg(format!("refs/heads/{branch}"));
    let out = output(&mut cmd)?;
    match out.status.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(command_error(&cmd, stderr_text(&out))),
    }
}

/// Whether `branch` can be made in `repo`, asked of git once: it exists, or a branch keeps it
/// from being made — one it would be a directory of (`feature/x` for `feature`), or one that is
/// a directory of it (`feature` for `feature/x`). `for-each-ref` takes a pattern as a whole ref
/// or a prefix up to a `/`, so `refs/heads/<branch>` lists the branch and those under it, and
/// each of its directories lists that directory's branch. A branch that passed
/// `bosun_core::branch_problem` holds no glob character.
pub(super) fn branch_taken(repo: &Path, branch: &str) -> Result<Taken, AdapterError> {
    let mut cmd = reading(repo);
    cmd.args(["for-each-ref", "--format=%(refname)", "--"]).arg(format!("refs/heads/{branch}"));
    let dirs: Vec<&str> = bosun_core::branch_dirs(branch).collect();
    cmd.args(dirs.iter().map(|d| format!("refs/heads/{d}")));
    let listed = run(&mut cmd)?;
    let names: Vec<&str> = listed.lines().filter_map(|l| l.strip_prefix("refs/heads/")).collect();
    if names.contains(&branch) {
        return Ok(Taken::Exists);
    }
    if let Some(dir) = dirs.iter().find(|d| names.contains(d)) {
        return Ok(Taken::By((*dir).to_owned()));
    }
    let under = names.iter().find(|n| n.strip_prefix(branch).is_some_and(|rest| rest.starts_with('/')));
    Ok(under.map_or(Taken::Free, |n| Taken::By((*n).to_owned())))
}

/// What `branch_taken` found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Taken {
    Free,
    Exists,
    /// Another branch keeps it from being made.
    By(String),
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
pub(super) fn rev_parse_path(dir: &Path, args: &[&str]) -> Result<PathBuf, AdapterError> {
    let mut cmd = reading(dir);
    cmd.arg("rev-parse").args(args);
    let out = output(&mut cmd)?;
    if out.status.success() {
        return Ok(PathBuf::from(stdout_line(&out)));
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

/// The command line as a person would type it: `DEFUSED` is left out.
fn describe(cmd: &Command) -> String {
    let args: Vec<&OsStr> = cmd.get_args().collect();
    let defused = args.len() >= DEFUSED.len() && args.iter().zip(DEFUSED).all(|(a, d)| *a == d);
    let words =
        std::iter::once(cmd.get_program()).chain(args[if defused { DEFUSED.len() } else { 0 }..].iter().copied());
    words.map(OsStr::to_string_lossy).collect::<Vec<_>>().join(" ")
}

/// The first line of stdout: a path or a commit id git printed.
pub(super) fn stdout_line(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim_end_matches(['\n', '\r']).to_owned()
}

pub(super) fn stderr_text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim().to_owned()
}
