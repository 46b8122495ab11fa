//! Requests whose caller waits for the outcome (a message typed, an agent dead, a workspace
//! removed), watched for in the state after every event.

use super::*;
use bosun_core::driver::dialog::DialogAnswer;

/// How long an answer waits for the dialog's options to be drawn (a busy machine draws slowly).
const DIALOG_WAIT: Duration = Duration::from_secs(10);

/// How long a request waits for the outcome of what it asked for.
const OUTCOME_WAIT: Duration = Duration::from_secs(60);

pub(super) async fn send(ctx: &Arc<Context>, agent: String, text: String, raw: bool, now: bool) -> Answer {
    let id = query(ctx, move |s| Ok(s.find_agent(&agent)?.id.clone())).await?;
    let rx = ctx.engine.subscribe();
    let events = submit(ctx, Input::SendText { agent: id.clone(), text, raw, now }).await?;
    let message = events
        .iter()
        .find_map(|e| match e {
            Event::MessageQueued { message } => Some(message.id),
            _ => None,
        })
        .ok_or_else(|| WireError::new(ErrorKind::Failed, "the message was not queued"))?;
    // At a dialog it waits, maybe for a person: say so now rather than after a minute.
    let at_dialog = query(ctx, move |s| {
        let a = s.agents.get(&id);
        Ok(a.filter(|a| {
            matches!(a.state, SessionState::Prompt { .. })
                || a.answering.as_ref().is_some_and(|x| x.picked_at.is_none())
        })
        .map(|a| {
            let asks = a.asks.as_deref().map(|q| format!(": {q}")).unwrap_or_default();
            format!(
                "{} is at a dialog ({}{asks}); it is typed once the dialog is answered (`bosun answer`)",
                a.id,
                a.state.label()
            )
        }))
    })
    .await?;
    if let Some(why) = at_dialog {
        return Ok(Response::SentLater { message, why });
    }
    let outcome = wait_state(ctx, rx, move |s| match s.messages.get(&message).map(|m| &m.state) {
        Some(MessageState::Delivered) => Some(Ok(Response::Sent { message })),
        Some(MessageState::Failed { error }) => {
            Some(Err(WireError::new(ErrorKind::Failed, format!("message not delivered: {error}"))))
        }
        _ => None,
    })
    .await;
    match outcome {
        Ok(answer) => answer,
        // It stays queued and will be typed: say so, so nobody sends it again.
        Err(e) => Err(WireError::new(e.kind, format!("{message} is still queued, not yet typed ({e})"))),
    }
}

pub(super) async fn resolve(ctx: &Arc<Context>, escalation: String, message: Option<String>) -> Answer {
    let id = escalation_id(&escalation)?;
    let events = submit(ctx, Input::Resolve { escalation: id, message }).await?;
    let message = events.iter().find_map(|e| match e {
        Event::MessageQueued { message } => Some(message.id),
        _ => None,
    });
    Ok(Response::Resolved { escalation: id, message })
}

/// Answers the dialog the agent waits at, from the options its screen shows now.
pub(super) async fn answer_dialog(
    ctx: &Arc<Context>,
    agent: String,
    answer: DialogAnswer,
    message: Option<String>,
) -> Answer {
    let (id, session, driver) = query(ctx, move |s| {
        let a = s.find_agent(&agent)?;
        Ok((a.id.clone(), a.session.clone(), a.driver.behaviour()))
    })
    .await?;
    // The dialog may be reported (a hook) before it is drawn: look again, briefly, until the
    // option asked for shows (lines of its text drawn before its options read as a menu too).
    // Keys follow: each look waits for the screen to be drawn whole.
    let want = bosun_core::driver::dialog::Want::Person { answer };
    let deadline = tokio::time::Instant::now() + DIALOG_WAIT;
    let screen = loop {
        let (sessions, session) = (ctx.sessions.clone(), session.clone());
        let colors = driver.screen_colors();
        let screen = blocking(move || crate::executor::settled_screen(&*sessions, &session, colors)).await?;
        if driver.menu(&screen).is_some_and(|m| m.find(want).is_ok()) || tokio::time::Instant::now() >= deadline {
            break screen;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let input = Input::Answer { agent: id.clone(), answer, message, screen };
    let events = submit(ctx, input).await?;
    // Picked at once (its number, or Enter with the cursor on it), or the cursor on its way.
    let pressed = events.iter().find_map(|e| match e {
        Event::DialogKeys { option, picked, .. } => Some((option.clone(), *picked)),
        _ => None,
    });
    let message = events.iter().find_map(|e| match e {
        Event::MessageQueued { message } => Some(message.id),
        _ => None,
    });
    let (option, picked) = pressed.ok_or_else(|| WireError::new(ErrorKind::Failed, "the answer was not recorded"))?;
    Ok(Response::Answered { agent: id, answer, option, picked, message })
}

/// Resolves an escalation by answering its agent's dialog: the answer first (refused, it
/// leaves the escalation open), then the resolution.
pub(super) async fn resolve_answering(
    ctx: &Arc<Context>,
    escalation: String,
    answer: DialogAnswer,
    message: Option<String>,
) -> Answer {
    let id = escalation_id(&escalation)?;
    let agent = query(ctx, move |s| {
        let e = s.escalations.get(&id).ok_or(bosun_core::Rejection::NoSuchEscalation(id))?;
        if e.resolved.is_some() {
            return Err(bosun_core::Rejection::AlreadyResolved(id).into());
        }
        Ok(e.agent.to_string())
    })
    .await?;
    let answered = answer_dialog(ctx, agent, answer, message).await?;
    let events = submit(ctx, Input::Resolve { escalation: id, message: None }).await?;
    drop(events);
    let message = match answered {
        Response::Answered { message, .. } => message,
        _ => None,
    };
    Ok(Response::Resolved { escalation: id, message })
}

fn escalation_id(escalation: &str) -> Result<EscalationId, WireError> {
    let number = escalation
        .trim_start_matches('e')
        .parse::<u64>()
        .map_err(|_| bad(format!("{escalation:?} is not an escalation id (such as e3): see `bosun escalations`")))?;
    Ok(EscalationId(number))
}

/// Raises the agent's budget (or gives it one): a paused agent goes on with its conversation.
pub(super) async fn raise_budget(
    ctx: &Arc<Context>,
    agent: String,
    budget: Option<bosun_core::budget::Budget>,
) -> Answer {
    let id = query(ctx, move |s| Ok(s.find_agent(&agent)?.id.clone())).await?;
    let events = submit(ctx, Input::RaiseBudget { agent: id.clone(), budget }).await?;
    let budget = events.iter().find_map(|e| match e {
        Event::AgentUnpaused { budget, .. } => Some(*budget),
        _ => None,
    });
    let budget = budget.ok_or_else(|| WireError::new(ErrorKind::Failed, "the budget was not raised"))?;
    let resumed = events.iter().any(|e| matches!(e, Event::AgentResuming { .. } | Event::MessageQueued { .. }));
    Ok(Response::Resumed { agent: id, budget, resumed })
}

pub(super) async fn kill(ctx: &Arc<Context>, agent: String) -> Answer {
    let id = query(ctx, move |s| Ok(s.find_agent(&agent)?.id.clone())).await?;
    let rx = ctx.engine.subscribe();
    submit(ctx, Input::KillAgent { agent: id.clone() }).await?;
    let failed = id.clone();
    wait_outcome(
        ctx,
        rx,
        move |s| {
            let a = s.agents.get(&id)?;
            a.state.is_dead().then(|| Ok(Response::Killed { agent: a.id.clone(), state: a.state.clone() }))
        },
        move |e| match e {
            Event::AgentKillFailed { id, error } if id == &failed => {
                Some(Err(WireError::new(ErrorKind::Failed, format!("could not kill {id}: {error}"))))
            }
            _ => None,
        },
    )
    .await?
}

/// The branch the core decided to keep, if any, in a removal's events.
pub(super) fn branch_kept(events: &[Event]) -> Option<bosun_core::BranchKept> {
    events.iter().find_map(|e| match e {
        // A pool's workspace is released at once; any other's removal is under way.
        Event::WorkspaceRemoving { keep_branch, .. } => keep_branch.clone(),
        Event::WorkspaceRemoved { branch_kept, .. } => branch_kept.clone(),
        _ => None,
    })
}

/// Removes the workspace `workspace` names.
pub(super) async fn remove_named(ctx: &Arc<Context>, workspace: String, force: bool) -> Answer {
    let id = query(ctx, move |s| Ok(s.find_workspace(&workspace)?.id.clone())).await?;
    Ok(Response::Removed(remove_workspace(ctx, id, force).await?))
}

pub(super) async fn remove_workspace(ctx: &Arc<Context>, id: WorkspaceId, force: bool) -> Result<Removed, WireError> {
    let wid = id.clone();
    let ws = query(ctx, move |s| Ok(s.find_workspace(wid.as_str()).ok().cloned())).await?;
    let ws = match (ws, done_already()) {
        (Some(ws), _) => ws,
        // Sent again after the daemon died, and removed since: what it decided is the answer.
        (None, Some(events)) => {
            let path = ctx.dirs.workspaces().join(id.as_str());
            return Ok(Removed { path, workspace: id, branch_deleted: None, branch_kept: branch_kept(&events) });
        }
        (None, None) => return Err(bosun_core::Rejection::NoSuchWorkspace(id.to_string()).into()),
    };
    let probe = probe(ctx, ws.clone()).await?;
    submit_removal(ctx, ws, force, probe).await
}

/// What the workspace holds now: changes not committed, and commits only its branch has.
async fn probe(ctx: &Arc<Context>, ws: bosun_core::Workspace) -> Result<WorkspaceProbe, WireError> {
    let (workspaces, git) = (ctx.workspaces.clone(), ctx.git.clone());
    blocking(move || {
        Ok(WorkspaceProbe {
            dirty: workspaces.is_dirty(&ws.path, &ws.kind, &ws.owned_files())?,
            commits_ahead: git.commits_ahead(&ws.kind)?,
        })
    })
    .await
}

async fn submit_removal(
    ctx: &Arc<Context>,
    ws: bosun_core::Workspace,
    force: bool,
    probe: WorkspaceProbe,
) -> Result<Removed, WireError> {
    let id = ws.id.clone();
    let rx = ctx.engine.subscribe();
    let events = submit(ctx, Input::RemoveWorkspace { id: id.clone(), force, probe }).await?;
    // The core decided the branch's fate; report what it decided.
    let branch_kept = branch_kept(&events);
    let removed = Removed {
        workspace: id.clone(),
        path: ws.path.clone(),
        branch_deleted: ws.branch().filter(|_| branch_kept.is_none()).map(str::to_owned),
        branch_kept,
    };
    wait_state(ctx, rx, move |s| match s.workspaces.get(&id) {
        None => Some(Ok(removed.clone())),
        Some(w) if !matches!(w.state, WorkspaceState::Removing { .. }) => Some(Err(WireError::new(
            ErrorKind::Failed,
            format!("could not remove {id}: {}", w.error.clone().unwrap_or_default()),
        ))),
        Some(_) => None,
    })
    .await?
}

pub(super) async fn prune(ctx: &Arc<Context>, dry_run: bool) -> Answer {
    let (candidates, mut skipped) = query(ctx, |s: &State| {
        let prunable = s.prunable();
        let (take, keep): (Vec<_>, Vec<_>) = s.workspaces.values().partition(|w| prunable.contains(&w.id));
        let take: Vec<_> = take.into_iter().cloned().collect();
        let keep: Vec<_> = keep.into_iter().map(|w| (w.id.clone(), w.state.label().to_owned())).collect();
        Ok((take, keep))
    })
    .await?;
    let mut out = Pruned { dry_run, ..Pruned::default() };
    // Each is looked at now: one found holding changes is kept, whatever its record says.
    for ws in candidates {
        let id = ws.id.clone();
        let found = match probe(ctx, ws.clone()).await {
            Ok(found) if found.dirty => Err(WorkspaceState::Dirty.label().to_owned()),
            Ok(found) => Ok(found),
            Err(e) => Err(e.message),
        };
        match found {
            Err(why) => skipped.push((id, why)),
            Ok(_) if dry_run => {
                out.removed.push(Removed { workspace: id, path: ws.path, branch_deleted: None, branch_kept: None })
            }
            Ok(found) => match submit_removal(ctx, ws, false, found).await {
                Ok(r) => out.removed.push(r),
                Err(e) => skipped.push((id, e.message)),
            },
        }
    }
    out.skipped = skipped;
    Ok(Response::Pruned(out))
}

pub(super) async fn wait_state<T: Send + 'static>(
    ctx: &Arc<Context>,
    rx: broadcast::Receiver<Arc<Event>>,
    f: impl Fn(&State) -> Option<T> + Send + Sync + 'static,
) -> Result<T, WireError> {
    wait_outcome(ctx, rx, f, |_| None).await
}

/// Waits until `in_state` finds the outcome in the state (checked now and after every event)
/// or `in_event` finds it in an event. `rx` must be subscribed before the input was submitted.
pub(super) async fn wait_outcome<T: Send + 'static>(
    ctx: &Arc<Context>,
    mut rx: broadcast::Receiver<Arc<Event>>,
    in_state: impl Fn(&State) -> Option<T> + Send + Sync + 'static,
    in_event: impl Fn(&Event) -> Option<T>,
) -> Result<T, WireError> {
    let in_state = Arc::new(in_state);
    let deadline = tokio::time::Instant::now() + OUTCOME_WAIT;
    loop {
        let f = in_state.clone();
        if let Some(t) = ctx.engine.query(move |s, _| f(s)).await.map_err(engine_error)? {
            return Ok(t);
        }
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Err(_) => {
                return Err(WireError::new(
                    ErrorKind::Failed,
                    format!("no outcome after {}s; see `bosun daemon logs`", OUTCOME_WAIT.as_secs()),
                ))
            }
            Ok(Err(broadcast::error::RecvError::Closed)) => return Err(engine_error(EngineError::Stopped)),
            Ok(Err(broadcast::error::RecvError::Lagged(_))) => {}
            Ok(Ok(event)) => {
                if let Some(t) = in_event(&event) {
                    return Ok(t);
                }
            }
        }
    }
}
