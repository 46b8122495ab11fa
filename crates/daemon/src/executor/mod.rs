//! Carries out the core's effects through the adapters, each off the engine loop (tokio's
//! blocking pool for commands, tasks for timers), and feeds every outcome back to the engine as
//! an `Input`. It decides nothing. `run` routes each effect to its family's function: workspaces
//! and pool slots, sessions and screens, checks (gates, classifiers, judges), jobs (steps, pull
//! requests, queues), notices, logs. Gates, classifiers, steps, queue commands and file copies
//! run through adapters (`Parts`), so a test can fake them.

use std::collections::BTreeMap;
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

mod checks;
mod jobs;
mod logs;
mod sessions;
mod workspaces;

pub use logs::Logs;

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
    /// The shell each running job step runs in (its process group), by job, so a cancel can
    /// end it.
    pub running: Arc<Mutex<BTreeMap<JobId, u32>>>,
    /// Where policies' gates run.
    pub gates: Arc<dyn bosun_adapters::gates::Gates>,
    /// Where agents' classifiers run.
    pub classifiers: Arc<dyn bosun_adapters::classifiers::Classifiers>,
    /// Where jobs' shell steps run.
    pub steps: Arc<dyn bosun_adapters::steps::Steps>,
    /// Where queues' list and take commands run.
    pub queue_commands: Arc<dyn bosun_adapters::queue_commands::QueueCommands>,
    /// What copies files into an agent's own places before it starts.
    pub copies: Arc<dyn bosun_adapters::copies::Copies>,
    /// For making the jobs of queue items.
    pub dirs: bosun_wire::StateDir,
    pub hook_command: String,
    /// The agents whose screen is about to be looked at, and whether settled: a look of one
    /// kind does not stand in for the other.
    pub looking: Arc<Mutex<std::collections::BTreeSet<(AgentId, bool)>>>,
    /// The report channels of agents in a sandbox or a container.
    pub channels: Arc<crate::channels::Channels>,
}

impl EffectSink for Executor {
    fn dispatch(&self, effect: Effect, engine: &EngineHandle) {
        let nth = crate::faults::before(&effect);
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

impl Executor {
    /// The executor of a daemon with `parts`, running its effects on `runtime`.
    pub fn new(
        parts: &crate::Parts,
        runtime: &Handle,
        dirs: &bosun_wire::StateDir,
        hook_command: &str,
        nonces: &Arc<crate::nonces::Nonces>,
        channels: &Arc<crate::channels::Channels>,
    ) -> Executor {
        Executor {
            nonces: nonces.clone(),
            channels: channels.clone(),
            forge: parts.forge.clone(),
            readiness: parts.readiness.clone(),
            workspaces: parts.workspaces.clone(),
            git: parts.git.clone(),
            pools: parts.pools.clone(),
            sessions: parts.sessions.clone(),
            notifier: parts.notifier.clone(),
            webhooks: parts.webhooks.clone(),
            gates: parts.gates.clone(),
            classifiers: parts.classifiers.clone(),
            steps: parts.steps.clone(),
            queue_commands: parts.queue_commands.clone(),
            copies: parts.copies.clone(),
            runtime: runtime.clone(),
            logs: Arc::default(),
            running: Arc::default(),
            dirs: dirs.clone(),
            hook_command: hook_command.to_owned(),
            looking: Arc::default(),
        }
    }
}

impl Executor {
    /// Carries out one effect that may block, by its family, and says how it went.
    pub fn run(&self, effect: Effect) -> Option<Input> {
        match effect {
            e @ (Effect::CreateWorkspace { .. } | Effect::InspectWorkspace { .. } | Effect::RemoveWorkspace { .. }) => {
                self.workspaces(e)
            }
            e @ (Effect::CreateSlot { .. } | Effect::ResetSlot { .. } | Effect::RemoveSlot { .. }) => self.slots(e),
            e @ (Effect::SpawnSession { .. }
            | Effect::KillSession { .. }
            | Effect::SendText { .. }
            | Effect::PressKeys { .. }
            | Effect::PressEnter { .. }) => self.sessions(e),
            e @ (Effect::LookAtScreen { .. } | Effect::CaptureScreen { .. }) => self.screens(e),
            e @ (Effect::RunGate { .. } | Effect::Classify { .. } | Effect::JudgeVariants { .. }) => self.checks(e),
            e @ Effect::Notify { .. } => self.notify(e),
            e @ Effect::FindCodexLog { .. } => self.find_codex_log(e),
            Effect::ReadUsage { agent, path } => logs::read_usage(agent, &path),
            e @ (Effect::RunStep { .. }
            | Effect::CancelStep { .. }
            | Effect::OpenPr { .. }
            | Effect::SummarizePlan { .. }
            | Effect::ListQueue { .. }
            | Effect::Dispatch { .. }) => self.jobs(e),
            // Carried out in process, by `dispatch`.
            Effect::SetTimer { .. }
            | Effect::WatchLog { .. }
            | Effect::WatchWorkspace { .. }
            | Effect::UnwatchLogs { .. } => None,
        }
    }

    /// Tells a person: on the desktop, by webhook.
    fn notify(&self, effect: Effect) -> Option<Input> {
        Some(match effect {
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
            _ => return None,
        })
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
/// screen, then writes it again) shows a blank or half a dialog, which says nothing. With its
/// colour escapes when `colors`.
pub(crate) fn settled_screen(
    sessions: &dyn Sessions,
    session: &bosun_core::SessionName,
    colors: bool,
) -> Result<String, bosun_adapters::AdapterError> {
    let mut last = sessions.capture(session, colors)?;
    for _ in 0..4 {
        std::thread::sleep(SETTLE);
        let next = sessions.capture(session, colors)?;
        if next == last {
            break;
        }
        last = next;
    }
    Ok(last)
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
