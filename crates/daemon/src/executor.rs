//! Carries out the core's effects through the adapters, each off the engine loop (tokio's
//! blocking pool for commands, tasks for timers), and feeds every outcome back to the engine as
//! an `Input`. It decides nothing.

use std::collections::BTreeMap;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use bosun_adapters::{
    AdapterError, DirWatcher, Git, LogLines, LogWatcher, Notifier, Sessions, SpawnSpec, WatchId, Workspaces,
};
use bosun_core::{AgentId, Effect, Heartbeat, Input, JobId, Observation, Source, StepRun, TimerId, Timestamp};
use tokio::runtime::Handle;

use bosun_core::Origin;

use crate::engine::{now, EffectSink, EngineHandle};
use crate::jobs::{Asked, Making};

#[derive(Clone)]
pub struct Executor {
    /// Where ids are drawn from.
    pub nonces: Arc<crate::nonces::Nonces>,
    /// Where `pr` steps open their pull requests.
    pub forge: Arc<dyn bosun_adapters::forge::Forge>,
    /// Whether the programs classifiers run are logged in.
    pub readiness: Arc<dyn bosun_adapters::readiness::Readiness>,
    pub workspaces: Arc<dyn Workspaces>,
    pub git: Arc<dyn Git>,
    pub pools: Arc<dyn bosun_adapters::Pools>,
    pub sessions: Arc<dyn Sessions>,
    pub notifier: Arc<dyn Notifier>,
    pub webhooks: Arc<dyn bosun_adapters::webhook::Webhooks>,
    pub runtime: Handle,
    pub logs: Arc<Logs>,
    /// The shell each running job step runs in, by job, so a cancel can end it.
    pub steps: Arc<Mutex<BTreeMap<JobId, u32>>>,
    /// For making the jobs of queue items.
    pub dirs: bosun_wire::StateDir,
    pub hook_command: String,
    /// The agents whose screen is about to be looked at, and whether settled: a look of one
    /// kind does not stand in for the other.
    pub looking: Arc<Mutex<std::collections::BTreeSet<(AgentId, bool)>>>,
    /// The report channels of agents in a sandbox or a container.
    pub channels: Arc<crate::channels::Channels>,
}

/// How long a resume waits for the agent's transcript to hold its last message.
const HOLD_WAIT: Duration = Duration::from_secs(3);

/// How long after its output changes an agent's screen is looked at: output comes in bursts.
const LOOK_AFTER: Duration = Duration::from_millis(200);

/// The daemon's one log watcher and one workspace watcher, started on first use, and which
/// agent each watch is for.
#[derive(Default)]
pub struct Logs {
    watcher: OnceLock<Option<LogWatcher>>,
    watches: Arc<Mutex<BTreeMap<WatchId, Watch>>>,
    dirs: OnceLock<Option<DirWatcher>>,
    workspaces: Arc<Mutex<BTreeMap<PathBuf, AgentId>>>,
}

/// What a log watch is for: whose, which kind, which file.
type Watch = (AgentId, bool, PathBuf);

impl EffectSink for Executor {
    fn dispatch(&self, effect: Effect, engine: &EngineHandle) {
        let nth = crate::faults::before();
        let in_process = matches!(
            effect,
            Effect::SetTimer { .. }
                | Effect::WatchLog { .. }
                | Effect::WatchWorkspace { .. }
                | Effect::UnwatchLogs { .. }
        );
        match effect {
            Effect::SetTimer { id, at } => schedule_timer(&self.runtime, engine.clone(), id, at),
            Effect::WatchLog { agent, path, session_log, from_start } => {
                self.logs.watch(engine, agent, &path, session_log, from_start)
            }
            Effect::WatchWorkspace { agent, path } => self.logs.watch_workspace(engine, agent, &path),
            Effect::UnwatchLogs { agent } => {
                self.logs.unwatch(&agent);
                self.channels.close(&agent);
            }
            effect => {
                // Carried out off the loop: its crash point comes once it has run.
                let (this, engine) = (self.clone(), engine.clone());
                self.runtime.spawn_blocking(move || {
                    tracing::debug!(?effect, "effect");
                    let input = this.run(effect);
                    crate::faults::after(nth);
                    if let Some(input) = input {
                        engine.submit_nowait(input);
                    }
                });
            }
        }
        if in_process {
            crate::faults::after(nth);
        }
    }
}

/// Reports `TimerFired` to the engine at `at` (at once when `at` is past).
pub fn schedule_timer(runtime: &Handle, engine: EngineHandle, id: TimerId, at: Timestamp) {
    let delay = Duration::from_millis(at.millis_since(now()));
    runtime.spawn(async move {
        tokio::time::sleep(delay).await;
        engine.submit_nowait(Input::TimerFired { id });
    });
}

impl Logs {
    /// Follows `path` for `agent`, from its start or from its current end.
    fn watch(&self, engine: &EngineHandle, agent: AgentId, path: &Path, session_log: bool, from_start: bool) {
        let watcher = self.watcher.get_or_init(|| {
            let (engine, watches) = (engine.clone(), self.watches.clone());
            let sink = move |batch: LogLines| {
                let known = watches.lock().unwrap_or_else(PoisonError::into_inner).get(&batch.id).cloned();
                let Some((agent, session_log, _)) = known else { return };
                let mut lines = batch.lines;
                // Terminal output's unfinished last line counts (a prompt ends no line); a
                // session log's is half a JSON object.
                if let (false, Some(partial)) = (session_log, batch.partial) {
                    lines.push(partial);
                }
                if !lines.is_empty() {
                    engine.submit_nowait(Input::LogLines { agent, session_log, lines });
                }
            };
            LogWatcher::new(sink).map_err(|e| tracing::error!("cannot watch logs: {e}")).ok()
        });
        let Some(watcher) = watcher else { return };
        let mut watches = self.watches.lock().unwrap_or_else(PoisonError::into_inner);
        // One watch per agent and kind of log: a new path (a restarted Codex's new rollout log)
        // replaces the old one.
        let same_kind: Vec<(WatchId, PathBuf)> = watches
            .iter()
            .filter(|(_, (a, s, _))| a == &agent && *s == session_log)
            .map(|(id, (_, _, p))| (*id, p.clone()))
            .collect();
        if same_kind.iter().any(|(_, p)| p == path) {
            return;
        }
        for (id, _) in same_kind {
            watcher.unwatch(id);
            watches.remove(&id);
        }
        let offset = if from_start { 0 } else { std::fs::metadata(path).map_or(0, |m| m.len()) };
        let id = watcher.watch(path.to_owned(), offset);
        watches.insert(id, (agent, session_log, path.to_owned()));
    }

    /// Reports file changes under `path` as the agent's signs of life.
    fn watch_workspace(&self, engine: &EngineHandle, agent: AgentId, path: &Path) {
        let watcher = self.dirs.get_or_init(|| {
            let (engine, workspaces) = (engine.clone(), self.workspaces.clone());
            let sink = move |root: &Path| {
                let agent = workspaces.lock().unwrap_or_else(PoisonError::into_inner).get(root).cloned();
                if let Some(agent) = agent {
                    engine.submit_nowait(Input::FileWritten { agent });
                }
            };
            DirWatcher::new(sink).map_err(|e| tracing::error!("cannot watch workspaces: {e}")).ok()
        });
        let Some(watcher) = watcher else { return };
        let root = path.canonicalize().unwrap_or_else(|_| path.to_owned());
        self.workspaces.lock().unwrap_or_else(PoisonError::into_inner).insert(root, agent);
        if let Err(e) = watcher.watch(path) {
            tracing::warn!(path = %path.display(), "cannot watch the workspace: {e}");
        }
    }

    fn unwatch(&self, agent: &AgentId) {
        if let Some(Some(dirs)) = self.dirs.get() {
            let mut workspaces = self.workspaces.lock().unwrap_or_else(PoisonError::into_inner);
            let roots: Vec<PathBuf> = workspaces.iter().filter(|(_, a)| *a == agent).map(|(p, _)| p.clone()).collect();
            for root in roots {
                dirs.unwatch(&root);
                workspaces.remove(&root);
            }
        }
        let Some(Some(watcher)) = self.watcher.get() else { return };
        let mut watches = self.watches.lock().unwrap_or_else(PoisonError::into_inner);
        let ids: Vec<WatchId> = watches.iter().filter(|(_, (a, _, _))| a == agent).map(|(id, _)| *id).collect();
        for id in ids {
            watcher.unwatch(id);
            watches.remove(&id);
        }
    }
}

impl Executor {
    /// Runs one effect that may block and says how it went.
    pub fn run(&self, effect: Effect) -> Option<Input> {
        Some(match effect {
            Effect::CreateWorkspace { id, path, kind, settings_from, resume } => {
                match self.workspaces.create(&path, &kind, settings_from.as_deref(), resume) {
                    Ok(()) => Input::WorkspaceCreated { id },
                    Err(e) => {
                        let nothing_left = !resume && nothing_left(&*self.git, &path, &kind);
                        Input::WorkspaceCreateFailed { id, error: e.to_string(), nothing_left }
                    }
                }
            }
            Effect::SpawnSession {
                agent,
                session,
                copies,
                cwd,
                env,
                config,
                command,
                files,
                output,
                replace,
                hold,
                inherit,
                backend,
                place,
            } => {
                if let Some((transcript, text)) = &hold {
                    if !bosun_adapters::transcript::holds_within(transcript, text, HOLD_WAIT) {
                        tracing::warn!(%agent, "a transcript does not hold its last message yet; starting anyway");
                    }
                }
                if let Some(old) = replace {
                    if let Err(e) = self.sessions.kill(&old) {
                        tracing::warn!(%old, "cannot end the old session: {e}");
                    }
                }
                // Its own config first: a fork's conversation is copied into it.
                if let Some(own) = &config {
                    if let Err(e) = bosun_adapters::own_config::make(own, &cwd) {
                        return Some(Input::SessionSpawnFailed { agent, error: format!("its own config: {e}") });
                    }
                }
                for (from, to) in &copies {
                    let copied = to.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| copy_new(from, to));
                    if let Err(e) = copied {
                        return Some(Input::SessionSpawnFailed {
                            agent,
                            error: format!("cannot copy {} to {}: {e}", from.display(), to.display()),
                        });
                    }
                }
                let env = match inherit.as_deref().map(bosun_adapters::secret::read_env).transpose() {
                    Ok(inherited) => inherited.unwrap_or_default().into_iter().chain(env).collect(),
                    Err(e) => return Some(Input::SessionSpawnFailed { agent, error: e.to_string() }),
                };
                // A sandbox or a container reaches the daemon only through its channel.
                let confined = place.is_confined();
                let channel = match confined.then(|| self.channels.open(&agent)).transpose() {
                    Ok(channel) => channel,
                    Err(e) => {
                        let error = format!("cannot open its report channel: {e}");
                        return Some(Input::SessionSpawnFailed { agent, error });
                    }
                };
                let spec = SpawnSpec {
                    session: &session,
                    cwd: &cwd,
                    env: &env,
                    command: &command,
                    output: Some(&output),
                    backend,
                    place: &place,
                    files: &files,
                    channel: channel.as_deref(),
                };
                // A pod's files are written there, by its session host.
                let here: &[_] = if matches!(place, bosun_core::Place::Pod(_)) { &[] } else { &files };
                match write_files(here, &output).and_then(|()| self.sessions.spawn(spec)) {
                    Ok(pid) => Input::SessionSpawned { agent, pid },
                    Err(e) => Input::SessionSpawnFailed { agent, error: e.to_string() },
                }
            }
            Effect::KillSession { agent, session } => match self.sessions.kill(&session) {
                Ok(()) => Input::SessionKilled { agent },
                Err(e) => Input::SessionKillFailed { agent, error: e.to_string() },
            },
            Effect::SendText { message, session, text } => match self.sessions.send_text(&session, &text) {
                Ok(()) => Input::TextDelivered { message },
                Err(e) => Input::TextFailed { message, error: e.to_string() },
            },
            Effect::PressKeys { session, keys } => {
                if let Err(e) = self.sessions.press(&session, &keys) {
                    tracing::warn!(%session, "cannot press {keys:?}: {e}");
                }
                return None;
            }
            Effect::PressEnter { session } => {
                if let Err(e) = self.sessions.press_enter(&session) {
                    tracing::warn!(%session, "cannot press Enter: {e}");
                }
                return None;
            }
            Effect::LookAtScreen { agent, session, settled } => {
                // One look of its kind for every request made while it waits.
                let key = (agent, settled);
                if !self.looking.lock().unwrap_or_else(PoisonError::into_inner).insert(key.clone()) {
                    return None;
                }
                std::thread::sleep(LOOK_AFTER);
                self.looking.lock().unwrap_or_else(PoisonError::into_inner).remove(&key);
                let (agent, at) = (key.0, Some(crate::engine::now()));
                let text = if settled {
                    settled_screen(self.sessions.as_ref(), &session)
                } else {
                    self.sessions.capture(&session, false)
                };
                match text {
                    Ok(text) => Input::Screen { agent, text, at, settled },
                    Err(_) => return None,
                }
            }
            Effect::CaptureScreen { agent, session } => {
                match (crate::engine::now(), settled_screen(self.sessions.as_ref(), &session)) {
                    (at, Ok(text)) => Input::Screen { agent, text, at: Some(at), settled: true },
                    (_, Err(e)) => {
                        tracing::debug!(%session, "cannot read the screen: {e}");
                        return None;
                    }
                }
            }
            Effect::InspectWorkspace { id, path, kind, owned } => {
                let dirty = match self.workspaces.is_dirty(&path, &kind, &owned) {
                    Ok(dirty) => Some(dirty),
                    Err(e) => {
                        tracing::warn!(%id, "cannot inspect workspace: {e}");
                        None
                    }
                };
                // What the core needs to release it: its branch's own commits (0 for a folder).
                let ahead = match dirty {
                    Some(false) => match self.git.commits_ahead(&kind) {
                        Ok(n) => n,
                        Err(e) => {
                            tracing::warn!(%id, "cannot count the branch's own commits: {e}");
                            return Some(Input::WorkspaceInspected { id, dirty: None, ahead: 0 });
                        }
                    },
                    _ => 0,
                };
                Input::WorkspaceInspected { id, dirty, ahead }
            }
            Effect::CreateSlot { project, n, repo, path, base_ref, setup } => {
                match self.pools.create_slot(&repo, &path, &base_ref, setup.as_deref()) {
                    Ok(commit) => Input::SlotCreated { project, n, commit },
                    Err(e) => Input::SlotCreateFailed { project, n, error: e.to_string() },
                }
            }
            Effect::ResetSlot { project, n, reset } => match self.pools.reset_slot(&reset) {
                Ok(commit) => Input::SlotReset { project, n, commit },
                Err(e) => {
                    let dirty = matches!(e, AdapterError::Dirty(_));
                    Input::SlotResetFailed { project, n, error: e.to_string(), dirty }
                }
            },
            Effect::RemoveSlot { project, n, repo, path } => match self.pools.remove_slot(&repo, &path) {
                Ok(()) => Input::SlotRemoved { project, n },
                Err(e) => Input::SlotRemoveFailed { project, n, error: e.to_string() },
            },
            Effect::RemoveWorkspace { id, path, kind, force, delete_branch, owned, forget } => {
                match self.workspaces.remove(&path, &kind, force, delete_branch, &owned) {
                    Ok(()) => {
                        for file in &forget {
                            if let Err(e) = bosun_adapters::secret::forget(file) {
                                tracing::warn!(%id, "{e}");
                            }
                        }
                        Input::WorkspaceRemoved { id }
                    }
                    Err(e) => {
                        let dirty = matches!(e, AdapterError::Dirty(_));
                        Input::WorkspaceRemoveFailed { id, error: e.to_string(), dirty }
                    }
                }
            }
            Effect::RunGate { agent, run, cwd } => {
                let status = bosun_adapters::private::as_user(&mut std::process::Command::new("sh"))
                    .args(["-c", &run])
                    .current_dir(&cwd)
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status();
                let code = status
                    .map_err(|e| tracing::warn!(%agent, "gate {run:?} could not run: {e}"))
                    .ok()
                    .and_then(|s| s.code());
                Input::GateFinished { agent, run, code }
            }
            Effect::Classify { agent, turn, command, cwd, said } => {
                // A classifier whose program is not logged in is not run: the core falls back.
                let not_ready = command.first().and_then(|p| self.readiness.check(p)).and_then(Result::err);
                let answer = match not_ready {
                    Some(why) => Err(format!("not run, its program is not ready: {why}")),
                    None => crate::classifier::run(&command, &cwd, &said),
                };
                Input::Classified { agent, turn, said, answer }
            }
            Effect::Notify { notice, desktop, webhook } => {
                if desktop {
                    if let Err(e) = self.notifier.notify(&notice.title, &notice.body) {
                        tracing::warn!("cannot notify: {e}");
                    }
                }
                let url = webhook?;
                let json = match serde_json::to_string(&notice) {
                    Ok(json) => json,
                    Err(e) => {
                        tracing::error!("cannot encode a notice: {e}");
                        return None;
                    }
                };
                let waits = bosun_adapters::webhook::backoff();
                let (attempts, error) = bosun_adapters::webhook::deliver(&*self.webhooks, &url, &json, &waits);
                if let Some(e) = &error {
                    tracing::warn!(url = url.as_str(), attempts, "webhook not delivered: {e}");
                }
                Input::WebhookSent { notice: notice.kind, attempts, error }
            }
            Effect::FindCodexLog { agent, sessions, cwd, since } => {
                // Codex writes its rollout log once its first turn starts: look until then.
                let deadline = std::time::Instant::now() + FIND_LOG_FOR;
                let log = loop {
                    match bosun_adapters::codex_log::find(&sessions, &cwd, since) {
                        Some(log) => break log,
                        None if std::time::Instant::now() >= deadline => return None,
                        None => std::thread::sleep(Duration::from_millis(200)),
                    }
                };
                let observation = Observation::Activity { heartbeat: Heartbeat::LogWrite };
                Input::Observed { agent, source: Source::Log, observation, log: Some(log), generation: None }
            }
            Effect::RunStep { job, step, attempt, run, env, cwd, log, run_dir } => {
                let (ok, detail) = match run {
                    StepRun::Shell(command) => self.shell_step(&job, &command, &env, &cwd, &log, &run_dir),
                    // The core starts agent steps and jobs run as steps itself.
                    StepRun::Agent(_) | StepRun::Job(_) | StepRun::Pr { .. } => (false, "not a shell step".to_owned()),
                };
                Input::StepFinished { job, step, attempt, ok, detail: Some(detail) }
            }
            Effect::JudgeVariants { plan, index, judge, repo, source, candidates } => {
                let scratch = self.dirs.root().join("plans").join(&plan).join(format!("job-{index}"));
                let (winner, detail) = crate::judge::judge(&judge, &repo, &source, &candidates, &scratch);
                Input::VariantsJudged { plan, index, winner, detail }
            }
            Effect::OpenPr { job, step, attempt, workspace, repo, branch, base_ref, draft, title, body } => {
                let result = self.open_pr(&repo, &branch, base_ref, draft, &title, &body);
                Input::PrStepDone { job, step, attempt, workspace, result }
            }
            Effect::SummarizePlan { plan } => {
                crate::plan_log::write(&self.dirs, &plan);
                return None;
            }
            Effect::ListQueue { worker, list, cwd } => {
                Input::Listed { worker, output: capture(&list, &BTreeMap::new(), &cwd) }
            }
            Effect::Dispatch { origin, job, data, job_name, book, cwd, take, branch } => {
                if let Some(Err(e)) = take.as_ref().map(|t| capture(&t.text, &t.env, &cwd)) {
                    return Some(Input::DispatchFailed { origin, error: format!("its take command failed: {e}") });
                }
                let making = Making {
                    git: &*self.git,
                    pools: &*self.pools,
                    dirs: &self.dirs,
                    hook_command: &self.hook_command,
                    branch,
                };
                let item = match &origin {
                    Origin::Item(item) => Some((*item, data.clone())),
                    Origin::Cron(_) | Origin::Plan(..) | Origin::PlanVariant(..) => None,
                };
                let asked = Asked { id: job, nonce: self.nonces.nonce(), vars: data, cwd, item };
                let made = making.job(&book, &job_name, asked).map(|mut spec| {
                    if let Origin::Plan(plan, index) | Origin::PlanVariant(plan, index, _) = &origin {
                        spec.plan = Some((plan.clone(), *index));
                    }
                    spec
                });
                match made {
                    Ok(spec) => Input::StartJob(Box::new(spec)),
                    Err(error) => Input::DispatchFailed { origin, error },
                }
            }
            Effect::CancelStep { job, .. } => {
                let pid = self.steps.lock().unwrap_or_else(PoisonError::into_inner).get(&job).copied();
                // The whole process group: the step's shell and all it started.
                if let Some(pid) = pid {
                    let _ = nix::sys::signal::killpg(
                        nix::unistd::Pid::from_raw(pid as i32),
                        nix::sys::signal::Signal::SIGTERM,
                    );
                }
                return None;
            }
            Effect::SetTimer { .. }
            | Effect::WatchLog { .. }
            | Effect::WatchWorkspace { .. }
            | Effect::UnwatchLogs { .. } => return None,
        })
    }
}

/// What `command` (run with `sh -c` in `cwd`) prints, or why it failed.
/// The most a queue's list or take command may print: past it, its output is an error.
const OUTPUT_MOST: usize = 4 << 20;
/// The most of its error output an error keeps.
const ERROR_MOST: usize = 2000;

/// What a runbook's command (a queue's list or take) printed, read no further than
/// `OUTPUT_MOST`; its exit and error output (cut) when it failed.
fn capture(command: &str, env: &BTreeMap<String, String>, cwd: &Path) -> Result<String, String> {
    let mut cmd = std::process::Command::new("sh");
    bosun_adapters::private::as_user(&mut cmd).args(["-c", command]).envs(env).current_dir(cwd);
    let out = bosun_adapters::bounded::output(&mut cmd, OUTPUT_MOST).map_err(|e| format!("cannot run sh: {e}"))?;
    if out.cut {
        return Err(format!("it printed more than {} MiB", OUTPUT_MOST >> 20));
    }
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let code = out.status.code().map_or_else(|| "a signal".to_owned(), |c| format!("exit {c}"));
    let said: String = String::from_utf8_lossy(&out.stderr).trim().chars().take(ERROR_MOST).collect();
    Err(format!("{code}: {said}"))
}

impl Executor {
    /// A `pr` step's pull request, into the branch `base_ref` names (else the current one).
    fn open_pr(
        &self,
        repo: &Path,
        branch: &str,
        base_ref: Option<String>,
        draft: bool,
        title: &str,
        body: &str,
    ) -> Result<bosun_core::PullRequest, String> {
        let into = crate::pull_request::target(&*self.git, repo, base_ref).map_err(|e| e.to_string())?;
        let ask = bosun_adapters::forge::PrAsk { branch, into: &into, title, body, draft };
        crate::pull_request::open(&*self.git, &*self.forge, repo, &ask, crate::engine::now()).map_err(|e| e.to_string())
    }
}

/// How long bosun looks for a Codex agent's rollout log.
const FIND_LOG_FOR: Duration = Duration::from_secs(60);

impl Executor {
    /// Runs a shell step with `sh -c` in `cwd`, its output appended to `log`.
    fn shell_step(
        &self,
        job: &JobId,
        command: &str,
        env: &BTreeMap<String, String>,
        cwd: &Path,
        log: &Path,
        run_dir: &Path,
    ) -> (bool, String) {
        let steps = self.steps.clone();
        let ended = crate::step_run::run(command, env, cwd, log, run_dir, |pid| {
            steps.lock().unwrap_or_else(PoisonError::into_inner).insert(job.clone(), pid);
        });
        self.steps.lock().unwrap_or_else(PoisonError::into_inner).remove(job);
        match ended {
            crate::step_run::Ended::Exited(0) => (true, "exit 0".into()),
            crate::step_run::Ended::Exited(code) => (false, format!("exit {code}")),
            crate::step_run::Ended::Killed => (false, "killed by a signal".into()),
            crate::step_run::Ended::Failed(e) => (false, e),
        }
    }
}

/// Whether a workspace whose making failed left nothing behind: no directory and, for a
/// worktree, no branch (it was asked to be new, so one there now is the attempt's). Other kinds
/// are kept recorded: what they may hold is not looked for here.
fn nothing_left(git: &dyn Git, path: &Path, kind: &bosun_core::WorkspaceKind) -> bool {
    let no_dir = std::fs::symlink_metadata(path).is_err();
    match kind {
        bosun_core::WorkspaceKind::Folder => no_dir,
        bosun_core::WorkspaceKind::Worktree { repo, branch, .. } => {
            no_dir && git.check_new_branch(repo, branch).is_ok()
        }
        _ => false,
    }
}

/// Writes the agent's files (its settings) and makes room for its output file.
fn write_files(files: &[(std::path::PathBuf, String)], output: &Path) -> Result<(), AdapterError> {
    // A new session's output starts a new file.
    for (path, content) in std::iter::once((output, "")).chain(files.iter().map(|(p, c)| (p.as_path(), c.as_str()))) {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| AdapterError::io(format!("creating {}", dir.display()), e))?;
        }
        write_whole(path, content).map_err(|e| AdapterError::io(format!("writing {}", path.display()), e))?;
    }
    Ok(())
}

/// How long apart two looks at a screen must agree before it counts as drawn.
const SETTLE: Duration = Duration::from_millis(60);

/// The agent's screen once its program has finished drawing it: two captures a moment apart
/// that agree (at most a few tries). A capture taken while the program redraws (it clears the
/// screen, then writes it again) shows a blank or half a dialog, which says nothing.
pub(crate) fn settled_screen(
    sessions: &dyn Sessions,
    session: &bosun_core::SessionName,
) -> Result<String, bosun_adapters::AdapterError> {
    let mut last = sessions.capture(session, false)?;
    for _ in 0..4 {
        std::thread::sleep(SETTLE);
        let next = sessions.capture(session, false)?;
        if next == last {
            break;
        }
        last = next;
    }
    Ok(last)
}

/// Copies `from` to `to` unless something is at `to` already (a link too, which is never
/// followed); `from` is read only when it is a regular file.
fn copy_new(from: &Path, to: &Path) -> std::io::Result<u64> {
    if std::fs::symlink_metadata(to).is_ok() {
        return Ok(0);
    }
    let source = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(from)?;
    if !source.metadata()?.is_file() {
        return Err(std::io::Error::other(format!("{} is not a regular file", from.display())));
    }
    let mut target = std::fs::OpenOptions::new().write(true).create_new(true).open(to)?;
    std::io::copy(&mut std::io::BufReader::new(source), &mut target)
}

/// Writes `path` whole, or not at all: beside it first, then renamed over it. A program that
/// reads it meanwhile (an agent started by a spawn that a crash cut short, while the next daemon
/// starts it again) reads the old file or the new one, never a part of one (Claude found its
/// settings empty so, and ran without hooks).
fn write_whole(path: &Path, content: &str) -> std::io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(".{}.new", std::process::id()));
    let beside = path.with_file_name(name);
    // Made new, never through what is there (a link an agent left in its own directory, which
    // a container's agent can write).
    match std::fs::remove_file(&beside) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&beside)?;
    std::io::Write::write_all(&mut file, content.as_bytes())?;
    std::fs::rename(&beside, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&beside);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader of an agent's settings never finds them empty or cut while they are written
    /// again (they were truncated, then written).
    #[test]
    fn files_written_again_are_never_seen_empty_or_in_part() {
        let dir = tempfile::tempdir().unwrap();
        let (path, output) = (dir.path().join("settings.json"), dir.path().join("output.log"));
        let content = format!("{{\"hooks\":\"{}\"}}", "h".repeat(64 * 1024));
        let files = vec![(path.clone(), content.clone())];
        write_files(&files, &output).unwrap();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = {
            let (path, stop, content) = (path.clone(), stop.clone(), content.clone());
            std::thread::spawn(move || {
                let mut reads = 0u32;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let seen = std::fs::read_to_string(&path).unwrap();
                    assert!(seen == content, "read {} bytes of {}", seen.len(), content.len());
                    reads += 1;
                }
                reads
            })
        };
        for _ in 0..2_000 {
            write_files(&files, &output).unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 2, "nothing left beside: {left:?}");
    }
}
