//! The fallback watch: every few seconds, while agents live, one listing of bosun's tmux
//! sessions catches a death that no hook reported. tmux before 3.5 can miss a pane's exit, so
//! the pane-died hook alone is not enough. One `tmux` call per interval for all agents, never
//! one per agent.

use std::sync::Arc;
use std::time::Duration;

use bosun_adapters::Sessions;
use bosun_core::Input;

use crate::engine::EngineHandle;

/// How often the sessions are listed while any agent lives.
pub const INTERVAL: Duration = Duration::from_secs(2);

pub async fn sessions(engine: EngineHandle, sessions: Arc<dyn Sessions>, interval: Duration) {
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        // The events applied so far, taken before the listing: agents that start running after
        // it are not judged by it.
        let as_of = engine.query(|s, _| s.agents.values().any(|a| a.state.is_up()).then_some(s.seq)).await;
        let as_of = match as_of {
            Ok(Some(seq)) => seq,
            Ok(None) => continue,
            Err(_) => return,
        };
        let s = sessions.clone();
        match tokio::task::spawn_blocking(move || s.list()).await {
            Ok(Ok(sessions)) => engine.submit_nowait(Input::SessionsObserved { sessions, as_of }),
            Ok(Err(e)) => tracing::warn!("cannot list tmux sessions: {e}"),
            Err(e) => tracing::warn!("session listing task failed: {e}"),
        }
    }
}
