//! The fallback watch: every few seconds, while agents live, one listing of bosun's tmux
//! sessions catches a death that no hook reported. tmux before 3.5 can miss a pane's exit, so
//! the pane-died hook alone is not enough. One `tmux` call per interval for all agents, never
//! one per agent.

use std::sync::Arc;
use std::time::Duration;

use bosun_adapters::Sessions;
use bosun_core::{Input, SessionState};

use crate::engine::{now, EngineHandle};

/// How often the sessions are listed while any agent lives.
pub const INTERVAL: Duration = Duration::from_secs(2);

pub async fn sessions(engine: EngineHandle, sessions: Arc<dyn Sessions>, interval: Duration) {
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let live = engine
            .query(|s, _| s.agents.values().any(|a| matches!(a.state, SessionState::Running | SessionState::Idle)))
            .await;
        match live {
            Ok(true) => {}
            Ok(false) => continue,
            Err(_) => return,
        }
        let taken_at = now();
        let s = sessions.clone();
        match tokio::task::spawn_blocking(move || s.list()).await {
            Ok(Ok(sessions)) => engine.submit_nowait(Input::SessionsObserved { sessions, taken_at }),
            Ok(Err(e)) => tracing::warn!("cannot list tmux sessions: {e}"),
            Err(e) => tracing::warn!("session listing task failed: {e}"),
        }
    }
}
