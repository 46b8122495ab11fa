//! Decisions about jobs: entering steps (and failing a job whose step is entered too often),
//! following a step's outcome (a step's agent dying, a child job ending), trying a failed step
//! again after its backoff, and cancelling; a job begins once its workspace is made.

use super::ground::{create, inspect, kill, set_timer, spawn, Cx, Decision};
use super::session::save_pending;

use crate::template::{self, Scope, Target};
use crate::{
    Agent, AgentId, DeathReason, Effect, Event, Job, JobId, JobSpec, JobState, Name, Next, Nonce, Notice, NoticeKind,
    Outcome, Rejection, SessionState, State, StepRun, StepSpec, TimerKind, Timestamp, Workspace, WorkspaceId,
    WorkspaceState,
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
            started.into(state, now, d);
        }
        Err(reason) => finish(state, job, JobState::Failed { reason }, now, d),
    }
}

/// What starting a step's try records and asks for.
#[derive(Default)]
struct Started {
    events: Vec<Event>,
    effects: Vec<Effect>,
    /// A job the step runs, to create and begin.
    child: Option<Job>,
}

impl Started {
    fn into(self, state: &State, now: Timestamp, d: &mut Decision) {
        for e in self.events {
            d.event(e);
        }
        for e in self.effects {
            d.effect(e);
        }
        if let Some(child) = self.child {
            d.event(Event::JobCreated { job: Box::new(child.clone()) });
            begin(state, &child, now, d);
        }
    }
}

/// Starts a step's try: a shell command or job is run by the daemon; an agent is started here,
/// in the job's workspace.
fn launch(
    state: &State,
    job: &Job,
    spec: &StepSpec,
    visit: u32,
    attempt: u32,
    now: Timestamp,
) -> Result<Started, String> {
    let name = match &spec.run {
        StepRun::Agent(name) => name,
        StepRun::Job(child) => {
            return Ok(Started { child: Some(child_job(job, spec, child, visit, attempt, now)?), ..Default::default() })
        }
        StepRun::Shell(_) => {
            return run_effect(state, job, spec, visit, attempt)
                .map(|e| Started { effects: vec![e], ..Default::default() })
        }
        StepRun::Pr { draft } => {
            return pr_effect(state, job, spec, *draft, attempt)
                .map(|e| Started { effects: vec![e], ..Default::default() })
        }
    };
    let plan = job.spec.agents.get(name).ok_or_else(|| format!("no agent {name:?}"))?;
    let ws = job.workspace.as_ref().and_then(|id| state.workspaces.get(id)).ok_or_else(|| {
        format!("step {:?} runs agent {name:?}, and agents need the job to have a workspace (`source`)", spec.name)
    })?;
    // Ids drawn from the job, step, visit and try: the same decision always gives the same ones.
    let seed = fnv(&[job.spec.id.as_str(), &spec.name, &visit.to_string(), &attempt.to_string(), &resumed(job)]);
    let nonce = Nonce::from_bits(seed);
    let id = AgentId::new(&nonce);
    let scope = scope(state, job);
    let text = |what: &str, t: &Option<String>| {
        t.as_deref()
            .map(|t| template::render(t, &scope, Target::Text))
            .transpose()
            .map_err(|e| format!("agent {name:?}'s {what}: {e}"))
    };
    // Its context comes first, then its prompt, then where it stands in its plan.
    let prompt = match (text("context", &plan.context)?, text("prompt", &plan.prompt)?) {
        (Some(c), Some(p)) => Some(format!("{c}\n\n{p}")),
        (c, p) => c.or(p),
    };
    let context = plan_context(state, job, ws);
    let prompt = match (prompt, &context) {
        (Some(p), Some(c)) => Some(format!("{p}\n\n{c}")),
        (p, _) => p,
    };
    let cwd = match text("cwd", &plan.cwd)? {
        None => ws.path.clone(),
        Some(dir) => {
            let inside = std::path::Path::new(&dir)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir));
            if !inside {
                return Err(format!("agent {name:?}'s cwd {dir:?} must be a path inside its workspace"));
            }
            ws.path.join(dir)
        }
    };
    let ids = (fnv(&[&seed.to_string(), "a"]), fnv(&[&seed.to_string(), "b"]));
    let driver = plan.driver.behaviour().record(ids, Default::default());
    let mut env = plan.env.clone();
    env.insert("BOSUN_AGENT_ID".into(), id.to_string());
    env.insert("BOSUN_WORKSPACE".into(), ws.path.display().to_string());
    env.insert("BOSUN_JOB".into(), job.spec.id.to_string());
    let new = crate::NewAgent {
        id: id.clone(),
        name: Name::derive(name),
        workspace: ws.id.clone(),
        cwd,
        command: plan.command.clone(),
        env,
        inherits: Vec::new(),
        driver,
        policy: plan.policy.clone(),
        prompt,
        dir: job.spec.agents_root.join(id.as_str()),
        hook_command: job.spec.hook_command.clone(),
        step: Some((job.spec.id.clone(), spec.name.clone(), attempt)),
        backend: plan.runtime.backend(plan.backend),
        runtime: plan.runtime.clone(),
    };
    let mut agent = Agent::starting(new, now);
    agent.context = context;
    if state.agents.contains_key(&id) {
        return Err(format!("agent {id} already exists"));
    }
    let effects = vec![spawn(&agent, None)];
    let events =
        vec![Event::AgentCreated { agent: Box::new(agent) }, Event::WorkspaceInUse { id: ws.id.clone(), agent: id }];
    Ok(Started { events, effects, child: None })
}

/// Where a plan's job stands, for its agents' messages: the plan, the job, the branch it started
/// from (and merged), the branch it works on, and the jobs it uses.
fn plan_context(state: &State, job: &Job, ws: &crate::Workspace) -> Option<String> {
    let (plan, index) = job.spec.plan.as_ref()?;
    let plan = state.plans.get(plan)?;
    let j = plan.jobs.get(*index)?;
    let mut from = j.source.clone().unwrap_or_else(|| plan.base.clone());
    for m in &j.merged {
        from.push_str(&format!(" with {m} merged in"));
    }
    let on = ws.branch().unwrap_or("its own branch");
    let uses = if j.using.is_empty() { "no other job".to_owned() } else { j.using.join(", ") };
    Some(format!(
        "[bosun plan {} ({}), job {}: it started from {from}, works on {on}, and uses {uses}.]",
        plan.name, plan.id, j.name
    ))
}

/// The job a `{ job = … }` step runs: made with the parent's vars when the parent was made, it
/// runs in the parent's workspace, with an id drawn from the parent, step, visit and try.
fn child_job(
    parent: &Job,
    spec: &StepSpec,
    name: &str,
    visit: u32,
    attempt: u32,
    now: Timestamp,
) -> Result<Job, String> {
    let made = parent.spec.children.get(name).ok_or_else(|| format!("step {:?}: no job {name:?}", spec.name))?;
    let seed =
        fnv(&[parent.spec.id.as_str(), &spec.name, &visit.to_string(), &attempt.to_string(), "job", &resumed(parent)]);
    let id = JobId::new(&Nonce::from_bits(seed));
    let child = JobSpec {
        id: id.clone(),
        workspace: None,
        logs: parent.spec.logs.join(id.as_str()),
        parent: Some((parent.spec.id.clone(), spec.name.clone(), attempt)),
        item: None,
        ..made.clone()
    };
    Ok(Job::new(child, parent.workspace.clone(), now))
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

/// How often the job was resumed, as an id part: empty for the first run, so ids stay as they were.
fn resumed(job: &Job) -> String {
    if job.resumes == 0 {
        String::new()
    } else {
        format!("r{}", job.resumes)
    }
}

pub(super) use crate::id::fnv;

/// The values a job's templates may name.
fn scope(state: &State, job: &Job) -> Scope {
    let ws = job.workspace.as_ref().and_then(|id| state.workspaces.get(id));
    let mut scope = Scope::new();
    for (k, v) in &job.spec.vars {
        scope.set("var", k, v.as_str()).set("args", k, v.as_str());
    }
    for (k, v) in &job.spec.locals {
        scope.set("local", k, v.as_str());
    }
    for (k, v) in job.spec.item.iter().flat_map(|(_, data)| data) {
        scope.set("item", k, v.as_str());
    }
    if let Some(w) = ws {
        let path = w.path.display().to_string();
        scope.set("workspace", "path", path.as_str()).set("workspace", "id", w.id.as_str());
        scope.set("source", "root", path.as_str()).set("source", "id", w.id.as_str());
        scope.set("source", "nonce", w.nonce.as_str());
        if let Some(b) = w.branch() {
            scope.set("source", "branch", b);
        }
    }
    scope
}

/// The effect that runs a step's try: its templates rendered, in the job's workspace.
fn run_effect(state: &State, job: &Job, spec: &StepSpec, visit: u32, attempt: u32) -> Result<Effect, String> {
    let ws = job.workspace.as_ref().and_then(|id| state.workspaces.get(id));
    let cwd = ws.map_or_else(|| job.spec.cwd.clone(), |w| w.path.clone());
    let scope = scope(state, job);
    let (run, env) = match &spec.run {
        StepRun::Shell(text) => {
            if let Some(line) = template::unsafe_reevaluation(text) {
                return Err(format!("step {:?}: {}", spec.name, template::reevaluation_error(&line)));
            }
            let command = template::render_shell(text, &scope).map_err(|e| format!("step {:?}: {e}", spec.name))?;
            (StepRun::Shell(command.text), command.env)
        }
        other => (other.clone(), Default::default()),
    };
    let log = job.spec.logs.join(format!("{}-{attempt}.log", spec.name));
    let run_dir = job.spec.logs.join(".runs").join(format!("{}-v{visit}-a{attempt}-r{}", spec.name, job.resumes));
    Ok(Effect::RunStep { job: job.spec.id.clone(), step: spec.name.clone(), attempt, run, env, cwd, log, run_dir })
}

/// A `pr` step: its job's branch pushed and a pull request opened, its body what the job's agents
/// said last.
fn pr_effect(state: &State, job: &Job, spec: &StepSpec, draft: bool, attempt: u32) -> Result<Effect, String> {
    let ws = job.workspace.as_ref().and_then(|id| state.workspaces.get(id));
    let no_branch =
        || format!("step {:?} opens a pull request, so its job needs a worktree (`source = \"worktree\"`)", spec.name);
    let ws = ws.ok_or_else(no_branch)?;
    // Its branch must be here: a worktree's or a pool slot's (a job's workspace is one or the
    // other, or none).
    let (repo, branch, base_ref) = ws.kind.local_branch().map_err(|_| no_branch())?;
    let said = state.last_words(&ws.id);
    Ok(Effect::OpenPr {
        job: job.spec.id.clone(),
        step: spec.name.clone(),
        attempt,
        workspace: ws.id.clone(),
        repo: repo.to_path_buf(),
        branch: branch.to_owned(),
        base_ref: base_ref.map(str::to_owned),
        draft,
        title: format!("{} ({branch})", job.spec.name),
        body: said.unwrap_or_else(|| format!("Opened by bosun's job {} ({}).", job.spec.name, job.spec.id)),
    })
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
    if let Some(ws) = ws.filter(|w| matches!(w.kind, crate::WorkspaceKind::Pool { .. })) {
        match ws.state {
            WorkspaceState::Waiting => d.event(Event::WorkspaceRemoved { id: ws.id.clone(), branch_kept: None }),
            _ => d.effect(inspect(ws)),
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
            started.into(state, now, d);
        }
        Err(reason) => finish(state, j, JobState::Failed { reason }, now, d),
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
