//! bosun's side effects, one trait each: `Git` (questions about repositories), `Workspaces`
//! (directories and git worktrees, one `WorkspaceBackend` per kind), `Sessions` (tmux on
//! bosun's own socket) and `Containers` (a Docker engine, `DockerContainers`).
//! The real implementations run `git` and `tmux` or call the engine's API; they
//! carry out what the core decided and report what they saw, and decide nothing themselves.
//! Where a driver's own files live and how they are found is a module named after it
//! (`codex_log`).

pub mod bounded;
mod changes;
pub mod classifiers;
pub mod codex_log;
pub mod copies;
mod dirwatch;
mod docker;
mod error;
pub mod forge;
pub mod gates;
mod host;
pub mod launch;
mod logwatch;
mod notifier;
pub mod own_config;
pub mod private;
pub mod queue_commands;
pub mod readiness;
mod routed;
pub mod sandbox;
pub mod secret;
pub mod steps;
mod tmux;
pub mod transcript;
pub mod webhook;
mod workspaces;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bosun_core::{
    FoundBranch, FoundDir, FoundWorktree, SessionBackend, SessionName, SessionSeen, TermKey, WorkspaceKind,
};

pub use bosun_host::output_log;
pub use changes::Changes;
pub use dirwatch::{DirWatcher, REPORT_EVERY};
pub use docker::{DockerContainers, CALL_TIMEOUT as DOCKER_CALL_TIMEOUT};
pub use error::AdapterError;
pub use host::pod::{PodHosts, Reach, RelayedReport, POD_STATE_LABEL};
pub use host::{FoundHost, HostDir, HostSessions, SESSION_LABEL, STATE_LABEL};
pub use logwatch::{LogLines, LogWatchOptions, LogWatcher, WatchId};
pub use notifier::{DesktopNotifier, Notifier};
pub use routed::RoutedSessions;
pub use tmux::{SettleDelay, Tmux};
pub use workspaces::settings_folder;
pub use workspaces::{git_command, git_in, LocalGit, LocalSurvey, LocalWorkspaces, GIT_DEFUSED};

/// A repository's pool of worktrees (seed 004): what its slots need from git. A slot is a
/// worktree at a detached HEAD; a task's branch is made in it when it is bound (through
/// `Workspaces::create` with `WorkspaceKind::Pool`).
pub trait Pools: Send + Sync {
    /// Where `repo`'s pool starts from: the default branch of its `origin` remote
    /// (`refs/remotes/origin/HEAD`, else `origin/main`, else `origin/master`) with `remote`
    /// `Some("origin")` when there is one; else the branch the repository's main worktree has
    /// checked out (the repository's default branch), with no remote.
    fn base(&self, repo: &Path) -> Result<bosun_core::PoolBase, AdapterError>;
    /// Makes the slot at `path`: `git worktree add --detach <path> <base_ref>` (a worktree of
    /// `repo` already registered there counts as made: a crash may have cut its creation
    /// short), copies the untracked files the repository's `.worktreeinclude` lists (gitignore
    /// syntax) into it, then runs `setup` with `sh -c` in it. Returns the commit its HEAD is at.
    fn create_slot(
        &self,
        repo: &Path,
        path: &Path,
        base_ref: &str,
        setup: Option<&str>,
    ) -> Result<String, AdapterError>;
    /// Returns a slot to its base after a task: `AdapterError::Dirty` unless `force` when it
    /// holds uncommitted or untracked files other than the task file (nothing touched then);
    /// fetches the remote when there is one (a failed fetch is not fatal: the local ref is
    /// used); detaches HEAD, `git reset --hard` to the base, `git clean -fd` (`-fdx` when
    /// `pristine`: ignored build output is kept otherwise), removes the task file, and deletes
    /// `delete_branch` (one already gone is fine). Returns the commit its HEAD is at.
    fn reset_slot(&self, reset: &bosun_core::SlotReset) -> Result<String, AdapterError>;
    /// Removes the slot's worktree and what it holds (ignored files included: the core removes
    /// only slots that hold no work), and prunes `repo`'s worktree list. Gone already is fine.
    fn remove_slot(&self, repo: &Path, path: &Path) -> Result<(), AdapterError>;
    /// What the slot looks like (at a restart): whether it exists, holds work, and its HEAD.
    fn probe_slot(&self, path: &Path) -> Result<bosun_core::SlotProbe, AdapterError>;
}

/// What bosun asks git about repositories and branches, before and after making workspaces.
pub trait Git: Send + Sync {
    /// The top-level directory of the git repository that contains `dir`.
    /// `AdapterError::NotARepo` when there is none.
    fn repo_root(&self, dir: &Path) -> Result<PathBuf, AdapterError>;
    /// The full commit id `rev` names in `repo`. `AdapterError::UnknownRef` when it names none.
    fn resolve_commit(&self, repo: &Path, rev: &str) -> Result<String, AdapterError>;
    /// Whether `branch` is a valid, not yet existing branch name: `AdapterError::InvalidBranch`
    /// or `AdapterError::BranchExists` otherwise.
    fn check_new_branch(&self, repo: &Path, branch: &str) -> Result<(), AdapterError>;
    /// Commits on the worktree's branch not reachable from its base — for a pool's workspace,
    /// the commits on its branch that no other branch, tag or remote-tracking branch holds; 0
    /// for a folder or a branch that no longer exists.
    fn commits_ahead(&self, kind: &WorkspaceKind) -> Result<u32, AdapterError>;
    /// The URL of `repo`'s remote `origin` (where an agent in a pod clones from and pushes to),
    /// if it has one.
    fn remote_url(&self, repo: &Path) -> Result<Option<String>, AdapterError>;
    /// A commit that merges each of `others` into `onto` in turn (a plan job that uses several
    /// jobs starts there), made without a worktree and with no ref moved; `onto`'s commit when
    /// there are none. `AdapterError::MergeConflict`, with the conflicting files, when one
    /// conflicts.
    fn merge(&self, repo: &Path, onto: &str, others: &[String]) -> Result<String, AdapterError>;
    /// The branch `repo`'s HEAD is on; none when it is detached.
    fn current_branch(&self, repo: &Path) -> Result<Option<String>, AdapterError>;
    /// What workspace `ws` changed against the commit it started at: committed, changed and
    /// untracked files (bosun's own left out), with the patch when `patch`, coloured when
    /// `color`. A workspace whose clone is elsewhere is compared at `tip` (its snapshot) when
    /// given, else at its branch here. An error for a workspace with nothing here to compare (a
    /// folder, a pod whose branch went to its remote).
    fn diff(
        &self,
        ws: &bosun_core::Workspace,
        tip: Option<&str>,
        patch: bool,
        color: bool,
    ) -> Result<bosun_core::WorkDiff, AdapterError>;
    /// Merges `branch` into `into` in `repo` as `how` says (see `bosun merge`): nothing changes
    /// on a conflict (`AdapterError::MergeConflict` names its files), nor when `into` is checked
    /// out with changes not committed.
    fn merge_branch(
        &self,
        repo: &Path,
        branch: &str,
        into: &str,
        how: bosun_core::MergeHow,
        message: Option<&str>,
    ) -> Result<bosun_core::Merged, AdapterError>;
    /// Whether `branch` can be merged into `into` with no one's work touched, asked before
    /// anything changes: `AdapterError::NoBranch` when either is not a branch of `repo`,
    /// `AdapterError::TargetHasChanges` when `into` is checked out with changes not committed.
    fn check_merge(&self, repo: &Path, branch: &str, into: &str) -> Result<(), AdapterError>;
    /// Commits everything the worktree at `dir` holds (untracked files too, bosun's own
    /// `owned` files left out) with `message`; whether there was anything to commit.
    fn commit_all(&self, dir: &Path, owned: &[PathBuf], message: &str) -> Result<bool, AdapterError>;
    /// The commits of `branch` that `into` does not hold.
    fn unmerged(&self, repo: &Path, branch: &str, into: &str) -> Result<u32, AdapterError>;
    /// Pushes `branch` to `repo`'s remote `origin` (never forced), its upstream set there.
    fn push(&self, repo: &Path, branch: &str) -> Result<(), AdapterError>;
}

/// Directories and git worktrees that agents work in, of every `WorkspaceKind`: a router
/// (`LocalWorkspaces`) hands each call to the `WorkspaceBackend` of its kind.
pub trait Workspaces: Send + Sync {
    /// Creates the workspace at `path`: an empty directory, or `git worktree add -b <branch>
    /// <path> <base>`; then copies `settings_from` (its agent's repository settings for its
    /// client) where the client reads them (`driver::settings_copy_to`).
    /// With `resume` (after a crash), a worktree already there as asked counts as created and a
    /// branch already there is checked out rather than created.
    fn create(
        &self,
        path: &Path,
        kind: &WorkspaceKind,
        settings_from: Option<&Path>,
        resume: bool,
    ) -> Result<(), AdapterError>;
    /// Whether the workspace holds changes, ignoring the files in `owned` (relative to `path`).
    /// A folder counts as dirty when it holds anything; a worktree when `git status` shows
    /// modified or untracked files. A missing directory is clean. Looking at a volume brings its
    /// commits to its branch here first (what a merge or a push of it wants).
    fn is_dirty(&self, path: &Path, kind: &WorkspaceKind, owned: &[PathBuf]) -> Result<bool, AdapterError>;
    /// Deletes the files in `owned`, then removes the directory or worktree (`--force` only when
    /// `force`; `AdapterError::Dirty` when git refuses because of changes), prunes the worktree
    /// list, and deletes the branch when `delete_branch`. A directory already gone is fine.
    /// A pool's workspace is never removed (`AdapterError::PoolSlot`): its slot is reset.
    fn remove(
        &self,
        path: &Path,
        kind: &WorkspaceKind,
        force: bool,
        delete_branch: bool,
        owned: &[PathBuf],
    ) -> Result<(), AdapterError>;
    /// A commit of its repository holding what the workspace holds now: its branch's commits
    /// and, in one more commit, what it has not committed (untracked files too, `owned` left
    /// out), with `message`; its tip when nothing is uncommitted. Nothing of it is touched.
    /// What a fork starts from, and what a volume's diff compares.
    fn snapshot(
        &self,
        path: &Path,
        kind: &WorkspaceKind,
        owned: &[PathBuf],
        message: &str,
    ) -> Result<String, AdapterError>;
}

/// The workspaces of one `WorkspaceKind`, as `Workspaces` describes them (the router copies a
/// agent's settings in after `create`). Each is given its own kind's record (`Kind`):
/// `LocalWorkspaces` routes a `WorkspaceKind` to its backend with one match.
pub trait WorkspaceBackend: Send + Sync {
    /// What a workspace of this backend keeps: its variant's data in `WorkspaceKind`.
    type Kind;
    /// Its kind's word, for what it says.
    const LABEL: &'static str;
    /// Makes the workspace at `path`, with its agent's settings copied in from
    /// `settings_from` (see `Workspaces::create`).
    fn create(
        &self,
        path: &Path,
        kind: &Self::Kind,
        settings_from: Option<&Path>,
        resume: bool,
    ) -> Result<(), AdapterError>;
    /// Whether it holds changes besides `owned`; a missing directory is clean.
    fn is_dirty(&self, path: &Path, kind: &Self::Kind, owned: &[PathBuf]) -> Result<bool, AdapterError>;
    /// Removes it (see `Workspaces::remove`), refusing one with changes unless `force`.
    fn remove(
        &self,
        path: &Path,
        kind: &Self::Kind,
        force: bool,
        delete_branch: bool,
        owned: &[PathBuf],
    ) -> Result<(), AdapterError>;
    /// See `Workspaces::snapshot`: refused where what it holds is not on this machine.
    fn snapshot(
        &self,
        path: &Path,
        _kind: &Self::Kind,
        _owned: &[PathBuf],
        _message: &str,
    ) -> Result<String, AdapterError> {
        Err(AdapterError::Command {
            command: format!("a snapshot of {}", path.display()),
            stderr: format!("a {} workspace's work is not on this machine", Self::LABEL),
        })
    }
}

/// What lies on disk for `bosun doctor`, and the removals it asks for.
pub trait Survey: Send + Sync {
    /// The directories directly under `root`, sorted; none when `root` does not exist.
    fn subdirs(&self, root: &Path) -> Result<Vec<PathBuf>, AdapterError>;
    /// A workspace directory: whose worktree it is, its branch, and whether it holds changes.
    fn workspace_dir(&self, path: &Path) -> FoundDir;
    /// The worktrees registered in `repo` (its own checkout included).
    fn worktrees(&self, repo: &Path) -> Result<Vec<FoundWorktree>, AdapterError>;
    /// The branches in `repo` named as bosun names them, with the commits only they hold.
    fn branches(&self, repo: &Path) -> Result<Vec<FoundBranch>, AdapterError>;
    /// Removes a directory and everything in it; one already gone is fine.
    fn remove_dir(&self, path: &Path) -> Result<(), AdapterError>;
    /// `git worktree remove` (never forced: git refuses one with changes); for a directory
    /// already gone, `forget`.
    fn remove_worktree(&self, repo: &Path, path: &Path) -> Result<(), AdapterError>;
    /// Drops git's record of the worktree at `path` (whose directory is gone), and no other.
    fn forget(&self, repo: &Path, path: &Path) -> Result<(), AdapterError>;
    fn delete_branch(&self, repo: &Path, name: &str) -> Result<(), AdapterError>;
}

/// What to start in a new session.
#[derive(Clone, Copy, Debug)]
pub struct SpawnSpec<'a> {
    pub session: &'a SessionName,
    pub cwd: &'a Path,
    pub env: &'a BTreeMap<String, String>,
    pub command: &'a [String],
    /// A file the session's output is appended to (`tmux pipe-pane`).
    pub output: Option<&'a Path>,
    /// What the session runs in (a router picks its backend by it; a backend ignores it).
    pub backend: SessionBackend,
    /// Where it starts (the router wraps a sandbox's command; the session host starts a
    /// container or a pod; tmux runs here).
    pub place: &'a bosun_core::Place,
    /// The agent's files (its settings), for a session whose host writes them (in a pod); the
    /// executor writes them here for every other.
    pub files: &'a [(PathBuf, String)],
    /// The directory of the agent's own report channel (the socket the daemon serves for it
    /// alone, and its spool), which a sandbox or a container shows where its hooks look for the
    /// daemon's: none for an agent that reaches the daemon as it is.
    pub channel: Option<&'a Path>,
}

/// Where a session runs by default: here, as it is.
static HERE: bosun_core::Place = bosun_core::Place::Here;

impl<'a> SpawnSpec<'a> {
    /// `command` in a plain session here, in `cwd` with `env`: no output file, no files, no
    /// channel (a test's own client, say).
    pub fn here(
        session: &'a SessionName,
        cwd: &'a Path,
        env: &'a BTreeMap<String, String>,
        command: &'a [String],
    ) -> Self {
        let backend = SessionBackend::default();
        Self { session, cwd, env, command, output: None, backend, place: &HERE, files: &[], channel: None }
    }
}

impl SpawnSpec<'_> {
    /// Refuses a working directory no session may start in. tmux and a PTY given an empty,
    /// relative or missing one start in a directory of their own (the daemon's, which is often
    /// the user's checkout, or the home directory): never fall back, refuse. A session started
    /// in a container or a pod has its directory there, which must be absolute.
    pub fn check_cwd(&self) -> Result<(), AdapterError> {
        let refuse = |why: &'static str| AdapterError::BadCwd {
            session: self.session.to_string(),
            cwd: self.cwd.to_path_buf(),
            why,
        };
        if self.cwd.as_os_str().is_empty() {
            return Err(refuse("it is empty"));
        }
        if !self.cwd.is_absolute() {
            return Err(refuse("it is not an absolute path"));
        }
        let here = matches!(self.place, bosun_core::Place::Here | bosun_core::Place::Sandbox(_));
        if here && !self.cwd.is_dir() {
            return Err(refuse("it is not a directory"));
        }
        Ok(())
    }
}

/// A container to run: its image, what it runs and where, and what it is let at.
#[derive(Clone, Copy, Debug)]
pub struct ContainerSpec<'a> {
    /// The container's name (unique on the engine).
    pub name: &'a str,
    pub image: &'a str,
    /// The program and its arguments (the image's entrypoint is not used).
    pub command: &'a [String],
    /// Its working directory inside.
    pub cwd: &'a Path,
    pub env: &'a BTreeMap<String, String>,
    /// Host paths bound inside (`sandbox::Mount::Bind`), the engine mounting a path below
    /// another after it.
    pub binds: &'a [sandbox::Mount],
    /// Named volumes of the engine's, each mounted (writable) at its path inside.
    pub volumes: &'a [(String, PathBuf)],
    /// The user (uid, gid) it runs as; the image's when none.
    pub user: Option<(u32, u32)>,
    /// The host's network when true; none (loopback only) when false.
    pub network: bool,
    /// CPU limit in thousandths of a CPU.
    pub cpus_milli: Option<u32>,
    pub memory_bytes: Option<u64>,
    pub labels: &'a BTreeMap<String, String>,
}

/// A container the engine has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerSeen {
    pub name: String,
    pub id: String,
    pub running: bool,
    pub labels: BTreeMap<String, String>,
}

/// A container engine (Docker) that agents' session hosts run in.
pub trait Containers: Send + Sync {
    /// Whether the engine answers; says how to reach or install one when it does not.
    fn check_available(&self) -> Result<(), AdapterError>;
    /// Whether `program` (bosun's own binary, bound in read-only at its own path, as a
    /// container's session host is) runs in `image`; when it does not, an error carrying what
    /// the container printed and its exit code. An image that is not there passes (running it
    /// says so).
    fn check_runs(&self, image: &str, program: &Path) -> Result<(), AdapterError>;
    /// Creates and starts the container, removed by the engine once its command exits; its id.
    fn run(&self, spec: ContainerSpec<'_>) -> Result<String, AdapterError>;
    /// The containers that carry label `key` with `value`, running or not.
    fn list(&self, key: &str, value: &str) -> Result<Vec<ContainerSeen>, AdapterError>;
    /// Stops (at once) and removes the container named `name`; one already gone is fine.
    fn remove(&self, name: &str) -> Result<(), AdapterError>;
    /// Creates the named volume with `labels`; one of that name already there is fine.
    fn create_volume(&self, name: &str, labels: &BTreeMap<String, String>) -> Result<(), AdapterError>;
    /// Unpacks the tar archive `tar` at the root of volume `name`, through a container of
    /// `image` that is made for it and never started.
    fn fill_volume(&self, name: &str, image: &str, tar: Vec<u8>) -> Result<(), AdapterError>;
    /// Writes a tar archive of volume `name`'s content (each path under one top directory) to
    /// `to`, read through a container of `image` that is never started; `Ok(false)` when there
    /// is no such volume, an error when it holds more than `max` bytes of archive.
    fn read_volume(&self, name: &str, image: &str, to: &Path, max: u64) -> Result<bool, AdapterError>;
    /// Removes volume `name` and every container that mounts it; one already gone is fine.
    fn remove_volume(&self, name: &str) -> Result<(), AdapterError>;
    /// The names of the volumes that carry label `key` with `value`.
    fn volumes(&self, key: &str, value: &str) -> Result<Vec<String>, AdapterError>;
}

/// Terminal sessions that agents run in: tmux on bosun's own socket.
pub trait Sessions: Send + Sync {
    /// `AdapterError::TmuxMissing` when tmux cannot be run.
    fn check_available(&self) -> Result<(), AdapterError>;
    /// Starts `command` in a new detached session and returns the pane's pid. A session of that
    /// name that already exists counts as started (its pid is returned).
    fn spawn(&self, spec: SpawnSpec<'_>) -> Result<Option<u32>, AdapterError>;
    /// Types `text` literally, waits for it to settle, then presses Enter. Never sends Escape.
    fn send_text(&self, session: &SessionName, text: &str) -> Result<(), AdapterError>;
    /// Presses Enter.
    fn press_enter(&self, session: &SessionName) -> Result<(), AdapterError>;
    /// Types `keys` as they come, at once (a person at the keyboard, not a message: no settling).
    fn press(&self, session: &SessionName, keys: &[TermKey]) -> Result<(), AdapterError>;
    /// The size of the session's window, in columns and rows.
    fn size(&self, session: &SessionName) -> Result<(u16, u16), AdapterError>;
    /// Sizes the session's window to `cols`×`rows` (its program sees a terminal resized).
    fn resize(&self, session: &SessionName, cols: u16, rows: u16) -> Result<(), AdapterError>;
    /// The visible screen, with colour escapes when `colors`.
    fn capture(&self, session: &SessionName, colors: bool) -> Result<String, AdapterError> {
        self.history(session, colors, 0)
    }
    /// The visible screen with up to `lines` lines of what scrolled off above it, as `capture`.
    fn history(&self, session: &SessionName, colors: bool, lines: u32) -> Result<String, AdapterError>;
    /// Every session on the server, with its pane's pid and, once it has exited, its status.
    /// No server running means no sessions.
    fn list(&self) -> Result<Vec<SessionSeen>, AdapterError>;
    /// Ends the session. A session already gone counts as killed.
    fn kill(&self, session: &SessionName) -> Result<(), AdapterError>;
    /// The command a terminal runs to attach to the session.
    fn attach_command(&self, session: &SessionName) -> Vec<String>;
}
