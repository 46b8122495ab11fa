//! `AdapterError`: what went wrong outside, with messages that say what to do.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    #[error("{} is not inside a git repository: run in a repository, pass --repo DIR, or use --workspace folder", .0.display())]
    NotARepo(PathBuf),
    #[error("unknown ref {rev:?} in {}: give a branch, tag or commit that exists (see `git branch -a`)", .repo.display())]
    UnknownRef { repo: PathBuf, rev: String },
    #[error("{branch:?} is not a valid branch name: {reason}")]
    InvalidBranch { branch: String, reason: String },
    #[error("branch {branch:?} already exists in {}: choose another --branch, or leave it out for ws-<nonce>", .repo.display())]
    BranchExists { repo: PathBuf, branch: String },
    /// A branch cannot also be a directory of others (`feature` beside `feature/x`).
    #[error("no branch {branch:?} can be made in {}: a branch {by:?} exists, and git cannot keep a branch beside another that is a directory of it; choose another name (or remove {by:?})", .repo.display())]
    BranchBlocked { repo: PathBuf, branch: String, by: String },
    #[error("workspace {} has uncommitted or untracked changes", .0.display())]
    Dirty(PathBuf),
    #[error("{} has no commit yet: make a first commit (`git commit`) before using a workspace pool", .0.display())]
    NoCommit(PathBuf),
    #[error("{} is not a git worktree (it has no .git)", .0.display())]
    NotAWorktree(PathBuf),
    #[error("pool slot {} moved: its HEAD is at {head}, not at {base}; reset it before binding a task to it", .path.display())]
    SlotMoved { path: PathBuf, head: String, base: String },
    #[error("{} is a pool slot: it is returned to its pool with a reset, never removed as a task's workspace", .0.display())]
    PoolSlot(PathBuf),
    #[error("setup failed in {} ({}): {}", .path.display(), exit_text(*.code), one_line(.stderr))]
    Setup { path: PathBuf, code: Option<i32>, stderr: String },
    #[error("tmux is not installed or cannot run ({0}): install it, e.g. `sudo apt-get install tmux`")]
    TmuxMissing(String),
    #[error("cannot watch files for changes ({0}): if inotify limits are reached, raise fs.inotify.max_user_instances or max_user_watches with sysctl")]
    Watch(String),
    /// The Docker engine could not be reached or refused a request; the message says why and,
    /// when the engine cannot be reached, how to fix it.
    #[error("docker: {0}")]
    Docker(String),
    #[error("image {0:?} is not on the Docker engine: build or load it there first (`docker build`, `docker load` or `docker import`); bosun never pulls images")]
    NoImage(String),
    #[error("session {session} not started in {cwd:?}: {why}, and a session never starts in another directory")]
    BadCwd { session: String, cwd: PathBuf, why: &'static str },
    #[error("no session {0}")]
    NoSession(String),
    #[error("merging {from} into {into} conflicts in {}", .files.join(", "))]
    MergeConflict { into: String, from: String, files: Vec<String> },
    #[error("{} has no branch {branch}", .repo.display())]
    NoBranch { repo: PathBuf, branch: String },
    #[error("{into} is checked out in {} with changes not committed: commit or stash them, or merge with --into another branch", .dir.display())]
    TargetHasChanges { into: String, dir: PathBuf },
    #[error("`{command}` failed: {}", one_line(stderr))]
    Command { command: String, stderr: String },
    /// A file of an agent's own config that cannot be made of the user's (`from`, else its name).
    #[error("`making its own {name} from {from}` failed: {}", one_line(&.source.to_string()))]
    Seed {
        name: &'static str,
        from: String,
        #[source]
        source: Box<bosun_core::own_config::SeedError>,
    },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl AdapterError {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io { context: context.into(), source }
    }
}

fn exit_text(code: Option<i32>) -> String {
    code.map_or_else(|| "killed by a signal".to_owned(), |c| format!("exit code {c}"))
}

/// A command's error output on one line: its lines joined by " / ", at most 400 bytes, so an
/// error a person reads (or a record keeps) never runs over many lines.
fn one_line(text: &str) -> String {
    const MAX: usize = 400;
    let joined = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" / ");
    if joined.len() <= MAX {
        return joined;
    }
    let cut = (0..=MAX).rev().find(|&i| joined.is_char_boundary(i)).unwrap_or(0);
    format!("{}…", &joined[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commands_error_is_one_bounded_line() {
        let e = AdapterError::Command {
            command: "git worktree remove".into(),
            stderr: "error: failed to delete 'x': Directory not empty\n\nhint: try again\n".into(),
        };
        assert_eq!(
            e.to_string(),
            "`git worktree remove` failed: error: failed to delete 'x': Directory not empty / hint: try again"
        );
        let long = AdapterError::Command { command: "git".into(), stderr: "é\n".repeat(1000) };
        assert!(!long.to_string().contains('\n') && long.to_string().len() < 450);
    }
}
