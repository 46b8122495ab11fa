//! Fakes for the adapter traits: git that says yes, in-memory workspaces (and pool slots) and
//! sessions that record what was asked of them, for tests of the daemon that need no git and no
//! tmux.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use bosun_adapters::{AdapterError, Git, Pools, Sessions, SpawnSpec, Workspaces};
use bosun_core::{ExitStatus, PoolBase, SessionName, SessionSeen, SlotProbe, SlotReset, TermKey, WorkspaceKind};

/// Git where every path is a repository whose every ref resolves (`rev` to `commit-of-<rev>`),
/// every branch name is new, and no branch is ahead.
#[derive(Debug, Default, Clone, Copy)]
pub struct FakeGit;

impl Git for FakeGit {
    fn repo_root(&self, dir: &Path) -> Result<PathBuf, AdapterError> {
        Ok(dir.to_owned())
    }
    fn resolve_commit(&self, _repo: &Path, rev: &str) -> Result<String, AdapterError> {
        Ok(format!("commit-of-{rev}"))
    }
    fn check_new_branch(&self, _repo: &Path, _branch: &str) -> Result<(), AdapterError> {
        Ok(())
    }
    fn commits_ahead(&self, _kind: &WorkspaceKind) -> Result<u32, AdapterError> {
        Ok(0)
    }
    fn remote_url(&self, repo: &Path) -> Result<Option<String>, AdapterError> {
        Ok(Some(format!("https://git.example{}", repo.display())))
    }
    fn diff(
        &self,
        ws: &bosun_core::Workspace,
        _tip: Option<&str>,
        _patch: bool,
        _color: bool,
    ) -> Result<bosun_core::WorkDiff, AdapterError> {
        let base = ws.kind.base().unwrap_or_default().to_owned();
        let branch = ws.kind.branch().map(str::to_owned);
        Ok(bosun_core::WorkDiff {
            workspace: ws.id.clone(),
            base,
            branch,
            commits: 0,
            files: vec![],
            patch: None,
            truncated: false,
        })
    }
    fn merge_branch(
        &self,
        _repo: &Path,
        branch: &str,
        into: &str,
        how: bosun_core::MergeHow,
        _message: Option<&str>,
    ) -> Result<bosun_core::Merged, AdapterError> {
        let (into, branch) = (into.to_owned(), branch.to_owned());
        Ok(bosun_core::Merged {
            into,
            branch,
            how,
            commit: "c0ffee".into(),
            already: false,
            fast_forward: true,
            branch_merged: true,
        })
    }
    fn check_merge(&self, _repo: &Path, _branch: &str, _into: &str) -> Result<(), AdapterError> {
        Ok(())
    }
    fn commit_all(&self, _dir: &Path, _owned: &[PathBuf], _message: &str) -> Result<bool, AdapterError> {
        Ok(false)
    }
    fn push(&self, _repo: &Path, _branch: &str) -> Result<(), AdapterError> {
        Ok(())
    }
    fn unmerged(&self, _repo: &Path, _branch: &str, _into: &str) -> Result<u32, AdapterError> {
        Ok(0)
    }
    fn current_branch(&self, _repo: &Path) -> Result<Option<String>, AdapterError> {
        Ok(Some("main".into()))
    }
    fn merge(&self, _repo: &Path, onto: &str, others: &[String]) -> Result<String, AdapterError> {
        Ok(std::iter::once(onto).chain(others.iter().map(String::as_str)).collect::<Vec<_>>().join("+"))
    }
}

/// Workspaces (of every kind) that exist only in memory.
#[derive(Debug, Default)]
pub struct FakeWorkspaces {
    inner: Mutex<FakeWorkspacesState>,
}

#[derive(Debug, Default)]
pub struct FakeWorkspacesState {
    pub created: BTreeSet<PathBuf>,
    pub removed: Vec<PathBuf>,
    pub dirty: BTreeSet<PathBuf>,
    pub deleted_branches: Vec<String>,
    /// When set, `create` fails with this message.
    pub fail_create: Option<String>,
    /// What `Pools::base` answers; the repository's `main`, with no remote, when unset.
    pub pool_base: Option<PoolBase>,
    /// Pool slots that exist, with the commit their HEAD is at (`commit-of-<base_ref>`). A slot
    /// in `dirty` holds work.
    pub slots: BTreeMap<PathBuf, String>,
    /// Slots made, in order, counting repeats; `setups` the setups run in them.
    pub slots_created: Vec<PathBuf>,
    pub setups: Vec<(PathBuf, String)>,
    /// Resets done (not those refused).
    pub resets: Vec<SlotReset>,
    pub slots_removed: Vec<PathBuf>,
    /// When set, `create_slot`, `reset_slot` and `remove_slot` fail with this message.
    pub fail_slot: Option<String>,
}

impl FakeWorkspaces {
    pub fn state(&self) -> MutexGuard<'_, FakeWorkspacesState> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Workspaces for FakeWorkspaces {
    fn create(
        &self,
        path: &Path,
        _kind: &WorkspaceKind,
        _settings: Option<&Path>,
        _resume: bool,
    ) -> Result<(), AdapterError> {
        let mut s = self.state();
        if let Some(msg) = &s.fail_create {
            return Err(AdapterError::Command { command: "fake create".into(), stderr: msg.clone() });
        }
        s.created.insert(path.to_owned());
        Ok(())
    }
    fn is_dirty(&self, path: &Path, _kind: &WorkspaceKind, _owned: &[PathBuf]) -> Result<bool, AdapterError> {
        Ok(self.state().dirty.contains(path))
    }
    fn remove(
        &self,
        path: &Path,
        kind: &WorkspaceKind,
        force: bool,
        delete_branch: bool,
        _owned: &[PathBuf],
    ) -> Result<(), AdapterError> {
        let mut s = self.state();
        if !force && s.dirty.contains(path) {
            return Err(AdapterError::Dirty(path.to_owned()));
        }
        s.created.remove(path);
        s.removed.push(path.to_owned());
        if let (true, Some(b)) = (delete_branch, kind.branch()) {
            s.deleted_branches.push(b.to_owned());
        }
        Ok(())
    }
    fn snapshot(
        &self,
        path: &Path,
        _kind: &WorkspaceKind,
        _owned: &[PathBuf],
        _message: &str,
    ) -> Result<String, AdapterError> {
        Ok(format!("snapshot-of-{}", path.display()))
    }
}

impl FakeWorkspacesState {
    fn slot_failure(&self, what: &str) -> Result<(), AdapterError> {
        match &self.fail_slot {
            Some(msg) => Err(AdapterError::Command { command: format!("fake {what}"), stderr: msg.clone() }),
            None => Ok(()),
        }
    }
}

impl Pools for FakeWorkspaces {
    fn base(&self, _repo: &Path) -> Result<PoolBase, AdapterError> {
        let base = self.state().pool_base.clone();
        Ok(base.unwrap_or_else(|| PoolBase { base_ref: "main".to_owned(), remote: None }))
    }
    fn create_slot(
        &self,
        _repo: &Path,
        path: &Path,
        base_ref: &str,
        setup: Option<&str>,
    ) -> Result<String, AdapterError> {
        let mut s = self.state();
        s.slot_failure("create_slot")?;
        let head = s.slots.entry(path.to_owned()).or_insert_with(|| format!("commit-of-{base_ref}")).clone();
        s.slots_created.push(path.to_owned());
        if let Some(setup) = setup {
            s.setups.push((path.to_owned(), setup.to_owned()));
        }
        Ok(head)
    }
    fn reset_slot(&self, reset: &SlotReset) -> Result<String, AdapterError> {
        let mut s = self.state();
        s.slot_failure("reset_slot")?;
        if !reset.force && s.dirty.contains(&reset.path) {
            return Err(AdapterError::Dirty(reset.path.clone()));
        }
        s.dirty.remove(&reset.path);
        let head = format!("commit-of-{}", reset.base.base_ref);
        s.slots.insert(reset.path.clone(), head.clone());
        if let Some(branch) = &reset.delete_branch {
            s.deleted_branches.push(branch.clone());
        }
        s.resets.push(reset.clone());
        Ok(head)
    }
    fn remove_slot(&self, _repo: &Path, path: &Path) -> Result<(), AdapterError> {
        let mut s = self.state();
        s.slot_failure("remove_slot")?;
        s.slots.remove(path);
        s.dirty.remove(path);
        s.slots_removed.push(path.to_owned());
        Ok(())
    }
    fn probe_slot(&self, path: &Path) -> Result<SlotProbe, AdapterError> {
        let s = self.state();
        let Some(head) = s.slots.get(path) else { return Ok(SlotProbe::default()) };
        Ok(SlotProbe { exists: true, dirty: s.dirty.contains(path), head: Some(head.clone()) })
    }
}

/// Sessions that exist only in memory; a test ends one with `exit`.
#[derive(Debug, Default)]
pub struct FakeSessions {
    inner: Mutex<FakeSessionsState>,
}

#[derive(Debug, Default)]
pub struct FakeSessionsState {
    pub sessions: BTreeMap<SessionName, FakeSession>,
    pub next_pid: u32,
    /// Sessions spawned, in order, counting repeats.
    pub spawns: Vec<SessionName>,
}

#[derive(Debug, Clone, Default)]
pub struct FakeSession {
    pub pid: u32,
    pub command: Vec<String>,
    pub typed: Vec<String>,
    pub exit: Option<ExitStatus>,
    /// Its window's size once resized (80×24 before).
    pub size: Option<(u16, u16)>,
}

impl FakeSessions {
    pub fn state(&self) -> MutexGuard<'_, FakeSessionsState> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The session's process ends with `status` (its pane stays, as with `remain-on-exit`).
    pub fn exit(&self, session: &SessionName, status: ExitStatus) {
        if let Some(s) = self.state().sessions.get_mut(session) {
            s.exit = Some(status);
        }
    }
}

impl Sessions for FakeSessions {
    fn check_available(&self) -> Result<(), AdapterError> {
        Ok(())
    }
    fn spawn(&self, spec: SpawnSpec<'_>) -> Result<Option<u32>, AdapterError> {
        let mut s = self.state();
        s.spawns.push(spec.session.clone());
        if let Some(existing) = s.sessions.get(spec.session) {
            return Ok(Some(existing.pid));
        }
        s.next_pid += 1;
        let pid = 1000 + s.next_pid;
        let session = FakeSession { pid, command: spec.command.to_vec(), ..FakeSession::default() };
        s.sessions.insert(spec.session.clone(), session);
        Ok(Some(pid))
    }
    fn send_text(&self, session: &SessionName, text: &str) -> Result<(), AdapterError> {
        match self.state().sessions.get_mut(session) {
            Some(s) if s.exit.is_none() => {
                s.typed.push(text.to_owned());
                Ok(())
            }
            _ => Err(AdapterError::NoSession(session.to_string())),
        }
    }
    fn press_enter(&self, session: &SessionName) -> Result<(), AdapterError> {
        self.send_text(session, "")
    }
    fn press(&self, session: &SessionName, keys: &[TermKey]) -> Result<(), AdapterError> {
        keys.iter().try_for_each(|k| self.send_text(session, &format!("{k:?}")))
    }
    fn size(&self, session: &SessionName) -> Result<(u16, u16), AdapterError> {
        let s = self.state();
        let sess = s.sessions.get(session).ok_or_else(|| AdapterError::NoSession(session.to_string()))?;
        Ok(sess.size.unwrap_or((80, 24)))
    }
    fn resize(&self, session: &SessionName, cols: u16, rows: u16) -> Result<(), AdapterError> {
        let mut s = self.state();
        let sess = s.sessions.get_mut(session).ok_or_else(|| AdapterError::NoSession(session.to_string()))?;
        sess.size = Some((cols, rows));
        Ok(())
    }
    fn history(&self, session: &SessionName, _colors: bool, _lines: u32) -> Result<String, AdapterError> {
        let s = self.state();
        let sess = s.sessions.get(session).ok_or_else(|| AdapterError::NoSession(session.to_string()))?;
        Ok(sess.typed.join("\n"))
    }
    fn list(&self) -> Result<Vec<SessionSeen>, AdapterError> {
        Ok(self
            .state()
            .sessions
            .iter()
            .map(|(name, s)| SessionSeen { session: name.clone(), pid: Some(s.pid), exit: s.exit })
            .collect())
    }
    fn kill(&self, session: &SessionName) -> Result<(), AdapterError> {
        self.state().sessions.remove(session);
        Ok(())
    }
    fn attach_command(&self, session: &SessionName) -> Vec<String> {
        vec!["fake-attach".into(), session.to_string()]
    }
}

/// Processes that run only in memory: gates, classifiers, job steps, queue commands and file
/// copies, each answered as the test scripted (a gate and a step exit 0, a classifier answers
/// `done`, a queue command prints nothing, unless told otherwise) and recorded.
#[derive(Debug, Default)]
pub struct FakeProcesses {
    inner: Mutex<FakeProcessesState>,
}

#[derive(Debug, Default)]
pub struct FakeProcessesState {
    /// Each gate's exit code, by its command (0 when not named; `None` a signal).
    pub gate_codes: BTreeMap<String, Option<i32>>,
    /// Gates run, in order: command and directory.
    pub gates_run: Vec<(String, PathBuf)>,
    /// What every classifier answers: its output, or its failure (`done` when unset).
    pub classifier_answer: Option<Result<String, String>>,
    /// Classifiers run, in order: command, directory and what it was given.
    pub classified: Vec<(Vec<String>, PathBuf, String)>,
    /// Each step's exit code, by its command (0 when not named).
    pub step_codes: BTreeMap<String, i32>,
    /// Steps run, in order: command and directory.
    pub steps_run: Vec<(String, PathBuf)>,
    /// Process groups told to stop.
    pub stopped: Vec<u32>,
    /// What each queue command prints, by its command (nothing when not named).
    pub queue_outputs: BTreeMap<String, String>,
    /// Queue commands run, in order.
    pub queue_commands_run: Vec<String>,
    /// Files copied, `(from, to)`, in order.
    pub copies: Vec<(PathBuf, PathBuf)>,
}

impl FakeProcesses {
    pub fn state(&self) -> MutexGuard<'_, FakeProcessesState> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl bosun_adapters::gates::Gates for FakeProcesses {
    fn run(&self, command: &str, cwd: &Path) -> Result<Option<i32>, AdapterError> {
        let mut s = self.state();
        s.gates_run.push((command.to_owned(), cwd.to_owned()));
        Ok(s.gate_codes.get(command).copied().unwrap_or(Some(0)))
    }
}

impl bosun_adapters::classifiers::Classifiers for FakeProcesses {
    fn classify(
        &self,
        command: &[String],
        cwd: &Path,
        said: &str,
    ) -> Result<String, bosun_adapters::classifiers::ClassifierError> {
        let mut s = self.state();
        s.classified.push((command.to_vec(), cwd.to_owned(), said.to_owned()));
        match s.classifier_answer.clone().unwrap_or_else(|| Ok("done".into())) {
            Ok(answer) => Ok(answer),
            Err(said) => Err(bosun_adapters::classifiers::ClassifierError::Failed {
                status: std::os::unix::process::ExitStatusExt::from_raw(1 << 8),
                said,
            }),
        }
    }
}

impl bosun_adapters::steps::Steps for FakeProcesses {
    fn run(
        &self,
        step: &bosun_adapters::steps::StepCommand<'_>,
        started: &mut dyn FnMut(u32),
    ) -> bosun_adapters::steps::Ended {
        let code = {
            let mut s = self.state();
            s.steps_run.push((step.command.to_owned(), step.cwd.to_owned()));
            s.step_codes.get(step.command).copied().unwrap_or(0)
        };
        started(4242);
        bosun_adapters::steps::Ended::Exited(code)
    }
    fn stop(&self, group: u32) {
        self.state().stopped.push(group);
    }
}

impl bosun_adapters::queue_commands::QueueCommands for FakeProcesses {
    fn output(
        &self,
        command: &str,
        _env: &BTreeMap<String, String>,
        _cwd: &Path,
    ) -> Result<String, bosun_adapters::queue_commands::QueueCommandError> {
        let mut s = self.state();
        s.queue_commands_run.push(command.to_owned());
        Ok(s.queue_outputs.get(command).cloned().unwrap_or_default())
    }
}

impl bosun_adapters::copies::Copies for FakeProcesses {
    fn copy_new(&self, from: &Path, to: &Path) -> std::io::Result<u64> {
        self.state().copies.push((from.to_owned(), to.to_owned()));
        Ok(0)
    }
}

/// A desktop that only records the notices it is shown: `(title, body)`, in order.
#[derive(Debug, Default)]
pub struct FakeNotifier {
    pub shown: Mutex<Vec<(String, String)>>,
}

impl bosun_adapters::Notifier for FakeNotifier {
    fn notify(&self, title: &str, body: &str) -> Result<(), AdapterError> {
        self.shown.lock().unwrap_or_else(|e| e.into_inner()).push((title.to_owned(), body.to_owned()));
        Ok(())
    }
}

/// A forge that opens every pull request asked for, numbered from 1 at
/// `https://forge.example/pr/N`, and records them: repository, branch, target and title.
#[derive(Debug, Default)]
pub struct FakeForge {
    pub opened: Mutex<Vec<(PathBuf, String, String, String)>>,
}

impl bosun_adapters::forge::Forge for FakeForge {
    fn open_pr(&self, repo: &Path, ask: &bosun_adapters::forge::PrAsk<'_>) -> Result<String, AdapterError> {
        let mut opened = self.opened.lock().unwrap_or_else(|e| e.into_inner());
        opened.push((repo.to_owned(), ask.branch.to_owned(), ask.into.to_owned(), ask.title.to_owned()));
        Ok(format!("https://forge.example/pr/{}", opened.len()))
    }
}
