//! The log and workspace watchers, and the search for a Codex agent's rollout log.

use super::*;

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

impl Logs {
    /// Follows `path` for `agent`, from its start or from its current end.
    pub(super) fn watch(
        &self,
        engine: &EngineHandle,
        agent: AgentId,
        path: &Path,
        session_log: bool,
        from_start: bool,
    ) {
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
    pub(super) fn watch_workspace(&self, engine: &EngineHandle, agent: AgentId, path: &Path) {
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

    pub(super) fn unwatch(&self, agent: &AgentId) {
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

/// How long bosun looks for a Codex agent's rollout log.
const FIND_LOG_FOR: Duration = Duration::from_secs(60);

impl Executor {
    /// Looks for a Codex agent's rollout log.
    pub(super) fn find_codex_log(&self, effect: Effect) -> Option<Input> {
        Some(match effect {
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
            _ => return None,
        })
    }
}

/// The most of a session log read for its usage, and of one line of it: an assistant line with
/// usage is small, a longer one (a tool's whole output) is passed over.
const USAGE_READ_MOST: u64 = 256 * 1024 * 1024;
const USAGE_LINE_MOST: usize = 1024 * 1024;

/// The lines of `agent`'s session log at `path`, from its start, for the usage they record:
/// bounded in all and per line; none when it cannot be read.
pub(super) fn read_usage(agent: AgentId, path: &Path) -> Option<Input> {
    use std::io::{BufRead as _, Read as _};
    let file = std::fs::File::open(path).map_err(|e| tracing::warn!("cannot read {}: {e}", path.display())).ok()?;
    let mut whole = file.metadata().is_ok_and(|m| m.len() <= USAGE_READ_MOST);
    let mut reader = std::io::BufReader::new(file.take(USAGE_READ_MOST));
    let (mut lines, mut line) = (Vec::new(), Vec::new());
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            // Its end is not known: no error is taken from it.
            Err(_) => {
                whole = false;
                break;
            }
            Ok(_) if line.len() > USAGE_LINE_MOST || !line.ends_with(b"\n") => {}
            Ok(_) => lines.push(String::from_utf8_lossy(&line).trim_end().to_owned()),
        }
    }
    Some(Input::UsageLines { agent, lines, whole })
}
