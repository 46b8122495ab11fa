//! Carries out the core's effects through the adapters, each on tokio's blocking pool so a slow
//! `git` never stalls the engine, and feeds every outcome back to the engine as an `Input`.

use std::sync::Arc;

use bosun_adapters::{AdapterError, Sessions, SpawnSpec, Workspaces};
use bosun_core::{Effect, Input};
use tokio::runtime::Handle;

use crate::engine::{EffectSink, EngineHandle};

#[derive(Clone)]
pub struct Executor {
    pub workspaces: Arc<dyn Workspaces>,
    pub sessions: Arc<dyn Sessions>,
    pub runtime: Handle,
}

impl EffectSink for Executor {
    fn dispatch(&self, effect: Effect, engine: &EngineHandle) {
        let this = self.clone();
        let engine = engine.clone();
        self.runtime.spawn_blocking(move || {
            tracing::debug!(?effect, "effect");
            if let Some(input) = this.run(effect) {
                engine.submit_nowait(input);
            }
        });
    }
}

impl Executor {
    /// Runs one effect and says how it went.
    pub fn run(&self, effect: Effect) -> Option<Input> {
        Some(match effect {
            Effect::CreateWorkspace { id, path, kind, settings_from, resume } => {
                match self.workspaces.create(&path, &kind, settings_from.as_deref(), resume) {
                    Ok(()) => Input::WorkspaceCreated { id },
                    Err(e) => Input::WorkspaceCreateFailed { id, error: e.to_string() },
                }
            }
            Effect::SpawnSession { agent, session, cwd, env, command } => {
                let spec = SpawnSpec { session: &session, cwd: &cwd, env: &env, command: &command };
                match self.sessions.spawn(spec) {
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
            Effect::InspectWorkspace { id, path, kind, owned } => {
                let dirty = match self.workspaces.is_dirty(&path, &kind, &owned) {
                    Ok(dirty) => Some(dirty),
                    Err(e) => {
                        tracing::warn!(%id, "cannot inspect workspace: {e}");
                        None
                    }
                };
                Input::WorkspaceInspected { id, dirty }
            }
            Effect::RemoveWorkspace { id, path, kind, force, delete_branch, owned } => {
                match self.workspaces.remove(&path, &kind, force, delete_branch, &owned) {
                    Ok(()) => Input::WorkspaceRemoved { id },
                    Err(e) => {
                        let dirty = matches!(e, AdapterError::Dirty(_));
                        Input::WorkspaceRemoveFailed { id, error: e.to_string(), dirty }
                    }
                }
            }
        })
    }
}
