//! The reports of the agents' hooks in pods, relayed by their pods' hosts: each is taken as a
//! hook's on the daemon's socket, but only one naming the pod's own agent.

use std::sync::{mpsc, Arc};

use bosun_adapters::RelayedReport;
use bosun_core::SessionName;
use bosun_wire::{HookEvent, Request, Response};

/// Takes the reports the pods' hosts relay, each answered on a task of its own.
pub fn relay(ctx: Arc<crate::handler::Context>, reports: mpsc::Receiver<RelayedReport>) {
    let runtime = tokio::runtime::Handle::current();
    std::thread::spawn(move || {
        for report in reports {
            let ctx = ctx.clone();
            runtime.spawn(async move {
                let stdout = answer(&ctx, report.session, report.hook).await;
                let _ = report.answer.try_send(stdout);
            });
        }
    });
}

/// A relayed report, taken when it names the agent whose session it came from (an agent in a
/// pod is not trusted to speak for another, or for a session's end): what its hook prints.
async fn answer(ctx: &Arc<crate::handler::Context>, session: SessionName, hook: HookEvent) -> Option<String> {
    let Some(named) = hook.agent().map(str::to_owned) else {
        tracing::warn!(%session, "refused a relayed report of a session's end");
        return None;
    };
    let from = session.clone();
    let owner = ctx
        .engine
        .query(move |s, _| s.agents.values().find(|a| a.session == from).map(|a| a.id.to_string()))
        .await
        .ok()
        .flatten();
    if owner.as_deref() != Some(named.as_str()) {
        let named: String = named.chars().take(64).collect();
        tracing::warn!(%session, "refused a relayed report naming agent {named:?}, not the pod's own");
        return None;
    }
    match crate::handler::handle(ctx, Request::Hook(hook), None).await {
        Response::HookReply { stdout } => Some(stdout),
        _ => None,
    }
}
