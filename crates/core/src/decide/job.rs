//! Decisions about jobs: entering steps (and failing a job whose step is entered too often),
//! following a step's outcome (a step's agent dying, a child job ending), trying a failed step
//! again after its backoff, and cancelling; a job begins once its workspace is made.

use super::ground::{create, inspect, kill, set_timer, Cx, Decision};
use super::session::save_pending;
use super::step::{launch, pr_effect, run_effect, scope, Started};

use crate::template::{self, Target};
use crate::{
    Agent, DeathReason, Effect, Event, Job, JobId, JobSpec, JobState, Next, Notice, NoticeKind, Outcome, Rejection,
    SessionState, State, StepRun, TimerKind, Timestamp, Workspace, WorkspaceId, WorkspaceState,
};

pub(super) fn start(state: &State, spec: &JobSpec, now: Timestamp, d: &mut Decision) -> Result<(), Rejection> {
    if state.jobs.contains_key(&spec.id) {
        return Err(Rejection::AlreadyExists(format!("job {}", spec.id)));
    }
    let workspace = spec.workspace.as_ref().map(|w| WorkspaceId::new(&w.name, &w.nonce));
    if let Some(id) = workspace.as_ref().filter(|id| state.workspaces.contains_key(*id)) {
        return Err(Rejection::AlreadyExists(format!("workspace {id}")));
    }
    let job = Job::new(spec.clone(), workspace.clone(), now);
    d.event(Event::JobCreated { job: Box::new(job.clone()) });
    notify(state, &job, NoticeKind::JobStarted, spec.notify.on_start.as_deref(), now, d);
    match (&spec.workspace, workspace) {
        // Its first step waits for its workspace.
        (Some(w), Some(id)) => {
            let ws = Workspace {
                id: id.clone(),
                name: w.name.clone(),
                nonce: w.nonce.clone(),
                path: w.workspaces_root.join(id.as_str()),
                kind: w.kind.clone(),
                state: WorkspaceState::Creating,
                created_at: now,
                settings_from: w.settings_from.clone(),
                settings_folder: None,
                error: None,
            };
            match &w.pool {
                Some(ask) => super::pool::place(state, Workspace { path: Default::default(), ..ws }, ask, now, d)?,
                None => {
                    d.effect(create(&ws, false));
                    d.event(Event::WorkspaceCreating { workspace: ws });
                }
            }
        }
        _ => begin(state, &job, now, d),
    }
    Ok(())
}

/// The job's workspace is ready (or it needs none): its first step.
fn begin(state: &State, job: &Job, now: Timestamp, d: &mut Decision) {
    match job.spec.steps.first() {
        Some(first) => enter(state, job, &first.name, now, d),
        None => finish(state, job, JobState::Done, now, d),
    }
}

/// A workspace was made (`WorkspaceReady`): the job waiting for it starts.
pub(super) fn workspace_ready(cx: Cx, e: &Event, d: &mut Decision) {
    let Event::WorkspaceReady { id: ws, .. } = e else { return };
    let (state, now) = (cx.state, cx.now);
    let waiting =
        state.jobs.values().find(|j| j.workspace.as_ref() == Some(ws) && j.step.is_none() && !j.state.is_over());
    if let Some(j) = waiting {
        begin(state, j, now, d);
    }
}

/// A workspace could not be made (`WorkspaceCreateFailed`): the job waiting for it fails.
pub(super) fn workspace_failed(cx: Cx, e: &Event, d: &mut Decision) {
    let Event::WorkspaceCreateFailed { id: ws, error } = e else { return };
    let (state, now) = (cx.state, cx.now);
    if let Some(j) = state.jobs.values().find(|j| j.workspace.as_ref() == Some(ws) && !j.state.is_over()) {
        finish(state, j, JobState::Failed { reason: format!("its workspace could not be made: {error}") }, now, d);
    }
}

/// Enters `step` — unless it has been entered as often as the job allows, which fails the job.
fn enter(state: &State, job: &Job, step: &str, now: Timestamp, d: &mut Decision) {
    let Some(spec) = job.spec.step(step) else {
        return finish(state, job, JobState::Failed { reason: format!("no step {step:?}") }, now, d);
    };
    let visits = job.visits.get(step).copied().unwrap_or(0);
    if visits >= job.spec.max_step_visits {
        let reason = format!("step {step:?} was entered {visits} times, the most this job allows (max_step_visits)");
        return finish(state, job, JobState::Failed { reason }, now, d);
    }
    let visit = visits + 1;
    match launch(state, job, spec, visit, 1, now) {
        Ok(started) => {
            d.event(Event::StepEntered { job: job.spec.id.clone(), step: step.to_owned(), at: now });
            record(started, state, now, d);
        }
        Err(e) => finish(state, job, JobState::Failed { reason: e.to_string() }, now, d),
    }
}

/// An agent died (`AgentDied`): the step it ran ends — once the save of its pod, if it works in
/// one that is still saving, is known (`work_saved`), so that the next step's pod clones what it
/// pushed. One gone without a word has no save coming.
pub(super) fn agent_died(cx: Cx, e: &Event, d: &mut Decision) {
    let Event::AgentDied { id, reason, .. } = e else { return };
    let Some(agent) = cx.state.agents.get(id) else { return };
    let saving = matches!(reason, DeathReason::Completed | DeathReason::Killed | DeathReason::Crashed { .. });
    if !(saving && save_pending(cx.state, agent, d)) {
        agent_ended(cx.state, agent, reason, cx.now, d);
    }
}

/// The save of the pod of an agent that was dead already is known (`WorkSaved`): the step it ran
/// ends.
pub(super) fn work_saved(cx: Cx, e: &Event, d: &mut Decision) {
    let Event::WorkSaved { agent, .. } = e else { return };
    let Some(a) = cx.state.agents.get(agent) else { return };
    if let SessionState::Dead { reason } = &a.state {
        agent_ended(cx.state, a, reason, cx.now, d);
    }
}

/// An agent that ran a step ended: the step succeeded if its work was done (its policy said
/// `done`, or it exited with 0), else it failed — unless its policy is restarting it.
fn agent_ended(state: &State, agent: &Agent, reason: &DeathReason, now: Timestamp, d: &mut Decision) {
    let Some((job, step, attempt)) = &agent.step else { return };
    // Its chain resumed it: the step goes on.
    if d.agent(state, &agent.id).is_some_and(|a| !a.state.is_dead()) {
        return;
    }
    let ok = match agent.outcome {
        Some(Outcome::Done) => true,
        Some(Outcome::Failed) => false,
        None => *reason == DeathReason::Completed,
    };
    let detail = format!("agent {} ended {}", agent.id, SessionState::Dead { reason: reason.clone() }.label());
    let outcome = StepOutcome { step, attempt: *attempt, ok, detail: Some(&detail) };
    step_finished(state, job, outcome, now, d);
}

/// Records a step's try as it started: its events and effects, and a job it runs, begun.
fn record(started: Started, state: &State, now: Timestamp, d: &mut Decision) {
    for e in started.events {
        d.event(e);
    }
    for e in started.effects {
        d.effect(e);
    }
    if let Some(child) = started.child {
        d.event(Event::JobCreated { job: Box::new(child.clone()) });
        begin(state, &child, now, d);
    }
}

fn finish(state: &State, job: &Job, end: JobState, now: Timestamp, d: &mut Decision) {
    let end = if job.cancelled && !matches!(end, JobState::Failed { .. }) { JobState::Cancelled } else { end };
    // The queue item it worked on is done, or counts a failure.
    let current = |item: &crate::ItemId| {
        state
            .items
            .get(item)
            .is_some_and(|i| i.state == crate::ItemState::Taken && i.job.as_ref() == Some(&job.spec.id))
    };
    if let Some((item, _)) = job.spec.item.as_ref().filter(|(item, _)| current(item)) {
        let error = match &end {
            JobState::Failed { reason } => Some(reason.clone()),
            JobState::Cancelled => Some("its job was cancelled".into()),
            _ => None,
        };
        d.event(Event::ItemFinished { item: *item, ok: end == JobState::Done, error });
    }
    d.event(Event::JobFinished { job: job.spec.id.clone(), state: end.clone(), at: now });
    // Its pool workspace leaves the line, or goes back to its pool once found clean.
    let ws = job.workspace.as_ref().and_then(|w| state.workspaces.get(w)).filter(|_| job.spec.parent.is_none());
    if let Some(ws) = ws.filter(|w| matches!(w.kind, crate::WorkspaceKind::Pool(_))) {
        match ws.state {
            WorkspaceState::Waiting => d.event(Event::WorkspaceRemoved { id: ws.id.clone(), branch_kept: None }),
            _ => d.effect(inspect(state, ws)),
        }
    }
    match &end {
        JobState::Done => notify(state, job, NoticeKind::JobDone, job.spec.notify.on_done.as_deref(), now, d),
        JobState::Failed { reason } => {
            let message = job.spec.notify.on_fail.as_deref().map(|m| format!("{m} ({reason})"));
            let message = message.unwrap_or_else(|| reason.clone());
            notify(state, job, NoticeKind::JobFailed, Some(&message), now, d);
        }
        _ => {}
    }
    // A job run as a step ends that step — unless the parent is being cancelled with it.
    if let Some((parent, step, attempt)) = &job.spec.parent {
        // The parent as this decision leaves it: the child may end in the decision that began it.
        let Some(p) = d.job(state, parent).cloned() else { return };
        let cancelling = p.cancelled && state.jobs.get(parent).is_none_or(|before| !before.cancelled);
        if !cancelling {
            let detail = match &end {
                JobState::Failed { reason } => format!("job {} failed: {reason}", job.spec.id),
                other => format!("job {} ended {}", job.spec.id, other.label()),
            };
            let outcome = StepOutcome { step, attempt: *attempt, ok: end == JobState::Done, detail: Some(&detail) };
            step_ended(state, &p, outcome, now, d);
        }
    }
}

/// Tells a person the job's `message` (a template; shown as written when it names what is not
/// known yet, such as the workspace of a job that is only starting) on the desktop, and the
/// job's webhook, if any, of its end (and of its start when there is a message for it).
fn notify(state: &State, job: &Job, kind: NoticeKind, message: Option<&str>, now: Timestamp, d: &mut Decision) {
    let desktop = match (kind, message) {
        (NoticeKind::JobDone, Some(_)) | (NoticeKind::JobStarted, Some(_)) => true,
        (NoticeKind::JobFailed, _) => job.spec.notify.on_fail.is_some(),
        _ => false,
    };
    let webhook = job.spec.notify.webhook.clone().filter(|_| kind != NoticeKind::JobStarted || message.is_some());
    if !desktop && webhook.is_none() {
        return;
    }
    let what = match kind {
        NoticeKind::JobStarted => "started",
        NoticeKind::JobDone => "done",
        _ => "failed",
    };
    let body = match message {
        Some(m) => template::render(m, &scope(state, job), Target::Text).unwrap_or_else(|_| m.to_owned()),
        None => format!("job {} ({}) {what}", job.spec.name, job.spec.id),
    };
    let notice = Notice {
        kind,
        title: format!("bosun: job {} ({}) {what}", job.spec.name, job.spec.id),
        body,
        agent: None,
        job: Some(job.spec.id.clone()),
        escalation: None,
        at: now,
    };
    d.effect(Effect::Notify { notice, desktop, webhook });
}

/// How a step's run ended.
pub(super) struct StepOutcome<'a> {
    pub step: &'a str,
    pub attempt: u32,
    pub ok: bool,
    pub detail: Option<&'a str>,
}

/// A step's run ended. A report about another step or try than the current one is stale.
pub(super) fn step_finished(state: &State, job: &JobId, outcome: StepOutcome<'_>, now: Timestamp, d: &mut Decision) {
    if let Some(j) = state.jobs.get(job) {
        step_ended(state, j, outcome, now, d);
    }
}

/// The run of a step of `j` ended.
fn step_ended(state: &State, j: &Job, outcome: StepOutcome<'_>, now: Timestamp, d: &mut Decision) {
    let StepOutcome { step, attempt, ok, detail } = outcome;
    let job = &j.spec.id;
    if j.state != JobState::Running || j.step.as_deref() != Some(step) || j.attempt != attempt {
        return;
    }
    let Some(spec) = j.spec.step(step) else { return };
    if ok {
        return follow(state, j, spec.on_done.as_ref(), None, now, d);
    }
    if attempt < spec.attempts.max(1) && !j.cancelled {
        if spec.backoff_ms > 0 {
            d.event(Event::StepWaiting { job: job.clone(), at: now });
            let at = Timestamp::from_millis(now.as_millis() + spec.backoff_ms);
            set_timer(state, d, TimerKind::Backoff { job: job.clone() }, at);
        } else {
            retry(state, j, now, d);
        }
        return;
    }
    let reason = detail.map_or_else(|| format!("step {step:?} failed"), |why| format!("step {step:?} failed: {why}"));
    follow(state, j, spec.on_fail.as_ref(), Some(reason), now, d);
}

/// Where the job goes after a step: the named step, or its end. A step with no `on_done` ends
/// the job done (or its job-level `on_done` step); with no `on_fail`, failed.
fn follow(state: &State, j: &Job, next: Option<&Next>, failure: Option<String>, now: Timestamp, d: &mut Decision) {
    let next = match (next, &failure) {
        (Some(n), _) => n.clone(),
        (None, None) => j.spec.on_done.clone().unwrap_or(Next::Done),
        (None, Some(_)) => j.spec.on_fail.clone().unwrap_or(Next::Fail),
    };
    match next {
        Next::Step(s) => enter(state, j, &s, now, d),
        Next::Done => finish(state, j, JobState::Done, now, d),
        Next::Fail => finish(state, j, JobState::Failed { reason: failure.unwrap_or_else(|| "failed".into()) }, now, d),
    }
}

fn retry(state: &State, j: &Job, now: Timestamp, d: &mut Decision) {
    let (Some(step), attempt) = (j.step.clone(), j.attempt + 1) else { return };
    let Some(spec) = j.spec.step(&step) else { return };
    let visit = j.visits.get(&step).copied().unwrap_or(1);
    match launch(state, j, spec, visit, attempt, now) {
        Ok(started) => {
            d.event(Event::StepRetried { job: j.spec.id.clone(), attempt, at: now });
            record(started, state, now, d);
        }
        Err(e) => finish(state, j, JobState::Failed { reason: e.to_string() }, now, d),
    }
}

/// After a restart: a shell step that was running when bosun died is asked for again, the same
/// run: the daemon finds it still running or finished (it outlives bosun), or runs it if it never
/// started; agent steps go on with their agents, waits with their timers.
pub(super) fn resume_after_restart(state: &State, d: &mut Decision) {
    for j in state.jobs.values().filter(|j| j.state == JobState::Running) {
        let Some(spec) = j.step.as_deref().and_then(|s| j.spec.step(s)) else { continue };
        // A job run as a step resumes as the job it is.
        if matches!(spec.run, StepRun::Shell(_)) {
            let visit = j.visits.get(&spec.name).copied().unwrap_or(1);
            if let Ok(effect) = run_effect(state, j, spec, visit, j.attempt) {
                d.effect(effect);
            }
        }
        // A pull request not known to be opened is asked for again (one opened is found by gh).
        if let StepRun::Pr { draft } = spec.run {
            if let Ok(effect) = pr_effect(state, j, spec, draft, j.attempt) {
                d.effect(effect);
            }
        }
    }
}

/// A running job that nothing will move on (see `State::stuck`) fails, saying why: it can be
/// resumed.
pub(super) fn lost(state: &State, job: &JobId, why: String, now: Timestamp, d: &mut Decision) {
    if let Some(j) = state.jobs.get(job).filter(|j| !j.state.is_over()) {
        finish(
            state,
            j,
            JobState::Failed { reason: format!("{why}; resume it with `bosun job resume {job}`") },
            now,
            d,
        );
    }
}

/// The backoff is over: the step's next try.
pub(super) fn backoff_over(state: &State, job: &JobId, now: Timestamp, d: &mut Decision) {
    if let Some(j) = state.jobs.get(job).filter(|j| j.state == JobState::Waiting) {
        retry(state, j, now, d);
    }
}

/// Runs a failed or cancelled job again from where it stopped, in its workspace as it is now:
/// mid-step when the step's agent died without finishing its work (it is restarted with its
/// conversation), else from the start of the step (or of the job when it stopped before one);
/// every step's visits count from zero.
pub(crate) fn resume(state: &State, job: &JobId, now: Timestamp, d: &mut Decision) -> Result<(), Rejection> {
    let j = state.jobs.get(job).ok_or_else(|| Rejection::NoSuchJob(job.to_string()))?;
    if !matches!(j.state, JobState::Failed { .. } | JobState::Cancelled) {
        return Err(Rejection::JobNotResumable { id: job.clone(), state: j.state.label() });
    }
    if let Some(ws) = &j.workspace {
        let usable = state.workspaces.get(ws).map(|w| &w.state);
        if !matches!(usable, Some(WorkspaceState::Ready | WorkspaceState::InUse { .. } | WorkspaceState::Dirty)) {
            let state = usable.map_or("gone", WorkspaceState::label).to_owned();
            return Err(Rejection::JobWorkspaceGone { id: job.clone(), workspace: ws.clone(), state });
        }
    }
    d.event(Event::JobResumed { job: job.clone(), at: now });
    // A plan stopped by this job goes on with it.
    if let Some((plan, _)) = &j.spec.plan {
        if state.plans.get(plan).is_some_and(|p| matches!(p.state, crate::PlanState::Failed { .. })) {
            d.event(Event::PlanResumed { plan: plan.clone() });
        }
    }
    let resumed = Job {
        state: JobState::Running,
        cancelled: false,
        visits: Default::default(),
        resumes: j.resumes + 1,
        ..j.clone()
    };
    match (&j.step, crate::stopped_agent(state, j)) {
        (Some(step), Some(a)) => resume_mid_step(state, j, step, a, now, d),
        (Some(step), None) => enter(state, &resumed, step, now, d),
        (None, _) => begin(state, &resumed, now, d),
    }
    Ok(())
}

/// Takes the step up where its agent stopped: the same agent, in the job's workspace, restarted
/// with its conversation resumed; what a person was asked about it is settled by the resume.
fn resume_mid_step(state: &State, j: &Job, step: &str, a: &Agent, now: Timestamp, d: &mut Decision) {
    d.event(Event::StepResumed {
        job: j.spec.id.clone(),
        step: step.to_owned(),
        attempt: j.attempt,
        agent: a.id.clone(),
        at: now,
    });
    for e in state.open_escalations().filter(|e| e.agent == a.id) {
        d.event(Event::EscalationResolved { id: e.id, at: now, message: None });
    }
    let taken_up =
        Agent { kill_requested: false, recovery: Default::default(), class_recovery: Default::default(), ..a.clone() };
    super::recovery::resume(state, &taken_up, None, false, now, d);
}

/// Cancels the job: its current step is stopped; its `on_cancel` step, if any, runs, after which
/// the job ends as cancelled.
pub(super) fn cancel(state: &State, job: &JobId, now: Timestamp, d: &mut Decision) -> Result<(), Rejection> {
    let j = state.jobs.get(job).ok_or_else(|| Rejection::NoSuchJob(job.to_string()))?;
    if j.state.is_over() {
        return Err(Rejection::JobOver { id: job.clone(), state: j.state.label() });
    }
    if j.cancelled {
        return Ok(());
    }
    d.event(Event::JobCancelling { job: job.clone() });
    let cancelling = Job { cancelled: true, ..j.clone() };
    let step = j.step.as_deref().and_then(|s| j.spec.step(s));
    // An agent running the step is killed; anything else the daemon stops.
    let agent =
        state.agents.values().find(|a| a.step.as_ref().is_some_and(|(jb, _, _)| jb == job) && !a.state.is_dead());
    // A job the step runs is cancelled with it (its `on_cancel` runs; its end no longer counts).
    let children = state
        .jobs
        .values()
        .filter(|c| c.spec.parent.as_ref().is_some_and(|(p, _, _)| p == job) && !c.state.is_over() && !c.cancelled);
    for c in children {
        cancel(state, &c.spec.id, now, d)?;
    }
    match (step, agent) {
        (_, Some(a)) => {
            d.event(Event::AgentKillRequested { id: a.id.clone() });
            d.effect(kill(a));
        }
        (Some(s), None) => d.effect(Effect::CancelStep { job: job.clone(), step: s.name.clone() }),
        (None, None) => {}
    }
    match step.and_then(|s| s.on_cancel.clone()) {
        Some(Next::Step(cleanup)) => enter(state, &cancelling, &cleanup, now, d),
        _ => finish(state, &cancelling, JobState::Cancelled, now, d),
    }
    Ok(())
}
