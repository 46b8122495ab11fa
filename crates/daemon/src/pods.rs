//! The pods' watch: what the cluster says of bosun's pods becomes the core's input. A pod
//! whose agent's container ended is `Input::PodEnded`, with how its agent ended and what its
//! host's save did (read from the container's termination message); a pod gone is a session
//! closed. One watch per namespace, started again after a restart for the agents in pods that
//! are not over. (The reports its agents' hooks relay: `pod_reports.rs`.)

use std::collections::BTreeSet;
use std::sync::{mpsc, Arc};

use bosun_adapters::HostSessions;
use bosun_core::{ExitStatus, Input, SessionName};
use bosun_k8s::PodChange;

use crate::engine::EngineHandle;

pub async fn follow(engine: EngineHandle, host: Arc<HostSessions>, changes: mpsc::Receiver<PodChange>) {
    let namespaces = engine
        .query(|s, _| {
            let open = s.agents.values().filter(|a| !a.state.is_dead() || a.saved.is_none());
            open.filter_map(|a| a.runtime.pod().map(|p| p.namespace.clone())).collect::<BTreeSet<_>>()
        })
        .await
        .unwrap_or_default();
    for namespace in namespaces {
        let host = host.clone();
        let watched =
            tokio::task::spawn_blocking(move || host.watch_pods(&namespace).map_err(|e| (namespace, e))).await;
        if let Ok(Err((namespace, e))) = watched {
            tracing::warn!("cannot watch the pods of namespace {namespace}: {e}");
        }
    }
    close_vanished(&engine, &host).await;
    std::thread::spawn(move || {
        for change in changes {
            if let Some(input) = input_of(change) {
                engine.submit_nowait(input);
            }
        }
    });
}

/// Pods deleted while no daemon watched send no word: the sessions of live agents that no pod
/// holds any more are closed. A cluster that does not answer says nothing: none is closed.
async fn close_vanished(engine: &EngineHandle, host: &Arc<HostSessions>) {
    let open = engine
        .query(|s, _| {
            let live = s.agents.values().filter(|a| !a.state.is_dead());
            live.filter_map(|a| a.runtime.pod().map(|p| (p.namespace.clone(), a.session.clone()))).collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
    let host = host.clone();
    let vanished = tokio::task::spawn_blocking(move || {
        let namespaces: BTreeSet<String> = open.iter().map(|(ns, _)| ns.clone()).collect();
        let mut held = BTreeSet::new();
        for ns in &namespaces {
            match host.pod_names(ns) {
                Ok(names) => held.extend(names.into_iter().map(|n| (ns.clone(), n))),
                Err(e) => {
                    tracing::warn!("cannot list the pods of namespace {ns}: {e}");
                    return Vec::new();
                }
            }
        }
        open.into_iter().filter(|(ns, s)| !held.contains(&(ns.clone(), s.to_string()))).map(|(_, s)| s).collect()
    })
    .await
    .unwrap_or_default();
    for session in vanished {
        tracing::info!(%session, "its pod is gone");
        engine.submit_nowait(Input::SessionClosed { session });
    }
}

/// How a pod's agent ended and what its host's save did, as its termination message says.
pub(crate) fn ended(pod: &bosun_k8s::PodSeen) -> Option<bosun_host::Ended> {
    pod.message.as_deref().and_then(bosun_host::Ended::from_message)
}

/// What a change says to the core, if anything.
fn input_of(change: PodChange) -> Option<Input> {
    match change {
        PodChange::Seen(pod) => {
            let code = pod.exit?;
            let ended = ended(&pod);
            let status = ended.as_ref().map_or(ExitStatus::code(code), |e| e.exit);
            let saved = ended.and_then(|e| e.saved);
            Some(Input::PodEnded { session: SessionName::from_reported(&pod.name), status, saved })
        }
        PodChange::Gone(name) => Some(Input::SessionClosed { session: SessionName::from_reported(&name) }),
    }
}
