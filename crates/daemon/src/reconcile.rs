//! Reconciliation at start: looks at reality — the sessions on bosun's tmux server and the
//! workspace directories on disk — and hands it to the core, which adopts, buries and resumes.

use bosun_adapters::{Pools, Sessions};
use bosun_core::{Input, Reality, SlotState, WorkspaceState};

use crate::engine::EngineHandle;

pub async fn at_start(
    engine: &EngineHandle,
    sessions: &dyn Sessions,
    pools: &dyn Pools,
    runtime: &tokio::runtime::Handle,
) {
    // Timers are state: arm again every one recorded.
    if let Ok(timers) = engine.query(|s, _| s.timers.values().map(|t| (t.id, t.at)).collect::<Vec<_>>()).await {
        for (id, at) in timers {
            crate::executor::schedule_timer(runtime, engine.clone(), id, at);
        }
    }
    let Ok(dirs) = engine
        .query(|s, _| {
            s.workspaces
                .values()
                .filter(|w| {
                    !matches!(
                        w.state,
                        WorkspaceState::Creating | WorkspaceState::Waiting | WorkspaceState::Removing { .. }
                    )
                })
                .map(|w| (w.id.clone(), w.path.clone()))
                .collect::<Vec<_>>()
        })
        .await
    else {
        return;
    };
    // Only an available slot is looked at: the others' records say what to do with them.
    let available = engine
        .query(|s, _| {
            let slots = s.pools.values().flat_map(|p| p.slots.values());
            slots.filter(|slot| slot.state == SlotState::Available).map(|x| (x.id.clone(), x.path.clone())).collect()
        })
        .await
        .unwrap_or_else(|_| Vec::new());
    let mut slots = Vec::new();
    for (id, path) in available {
        match pools.probe_slot(&path) {
            Ok(probe) => slots.push((id, probe)),
            Err(e) => tracing::warn!(slot = %id, "cannot look at a pool workspace: {e}"),
        }
    }
    let sessions = match sessions.list() {
        Ok(s) => s,
        Err(e) => {
            // Without a view of the sessions, burying agents would be a guess: leave them be.
            tracing::error!("cannot list tmux sessions, skipping reconciliation: {e}");
            return;
        }
    };
    let missing_dirs = dirs.into_iter().filter(|(_, p)| !p.is_dir()).map(|(id, _)| id).collect();
    let reality = Reality { sessions, missing_dirs, slots };
    tracing::info!(sessions = reality.sessions.len(), missing = reality.missing_dirs.len(), "reconciling");
    if let Err(e) = engine.submit(Input::Reconcile(reality)).await {
        tracing::error!("reconciliation failed: {e}");
    }
}
