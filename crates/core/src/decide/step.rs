//! Starting a try of a job's step: an agent in the job's workspace, with ids drawn from the job,
//! step, visit and try; a shell command or a pull request the daemon carries out, its templates
//! rendered; or a job the step runs.

use super::ground::spawn;
use crate::id::fnv;
use crate::template::{self, Scope, Target};
use crate::{Agent, AgentId, Effect, Event, Job, JobId, JobSpec, Name, Nonce, State, StepRun, StepSpec, Timestamp};

/// What starting a step's try records and asks for.
#[derive(Default)]
pub(super) struct Started {
    pub events: Vec<Event>,
    pub effects: Vec<Effect>,
    /// A job the step runs, to create and begin.
    pub child: Option<Job>,
}

/// Why a step's try cannot start: its job fails, saying so.
#[derive(Debug, thiserror::Error)]
pub(super) enum LaunchError {
    #[error("no agent {0:?}")]
    NoAgent(String),
    #[error("step {step:?} runs agent {agent:?}, and agents need the job to have a workspace (`source`)")]
    NoWorkspace { step: String, agent: String },
    #[error("agent {agent:?}'s {what}: {error}")]
    AgentTemplate { agent: String, what: String, error: template::TemplateError },
    #[error("agent {agent:?}'s cwd {dir:?} must be a path inside its workspace")]
    CwdOutside { agent: String, dir: String },
    #[error("agent {0} already exists")]
    Exists(AgentId),
    #[error("step {step:?}: no job {job:?}")]
    NoJob { step: String, job: String },
    #[error("step {step:?}: {}", template::reevaluation_error(line))]
    Reevaluates { step: String, line: String },
    #[error("step {step:?}: {error}")]
    StepTemplate { step: String, error: template::TemplateError },
    #[error("step {0:?} opens a pull request, so its job needs a worktree (`source = \"worktree\"`)")]
    NoBranch(String),
    #[error("agent {agent:?}: {why}")]
    Account { agent: String, why: String },
    #[error("step {step:?} was not started: {whose} budget of {budget} is spent")]
    BudgetSpent { step: String, whose: String, budget: crate::budget::Budget },
}

/// Starts a step's try: a shell command or job is run by the daemon; an agent is started here,
/// in the job's workspace.
pub(super) fn launch(
    state: &State,
    job: &Job,
    spec: &StepSpec,
    visit: u32,
    attempt: u32,
    now: Timestamp,
) -> Result<Started, LaunchError> {
    let left = budget_left(state, job, spec, now)?;
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
    let plan = job.spec.agents.get(name).ok_or_else(|| LaunchError::NoAgent(name.clone()))?;
    let ws = job
        .workspace
        .as_ref()
        .and_then(|id| state.workspaces.get(id))
        .ok_or_else(|| LaunchError::NoWorkspace { step: spec.name.clone(), agent: name.clone() })?;
    // Ids drawn from the job, step, visit and try: the same decision always gives the same ones.
    let seed = fnv(&[job.spec.id.as_str(), &spec.name, &visit.to_string(), &attempt.to_string(), &resumed(job)]);
    let nonce = Nonce::from_bits(seed);
    let id = AgentId::new(&nonce);
    let scope = scope(state, job);
    let text = |what: &str, t: &Option<String>| {
        t.as_deref()
            .map(|t| template::render(t, &scope, Target::Text))
            .transpose()
            .map_err(|error| LaunchError::AgentTemplate { agent: name.clone(), what: what.to_owned(), error })
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
                return Err(LaunchError::CwdOutside { agent: name.clone(), dir });
            }
            ws.path.join(dir)
        }
    };
    let ids = (fnv(&[&seed.to_string(), "a"]), fnv(&[&seed.to_string(), "b"]));
    let driver = plan.driver.behaviour().record(ids, Default::default());
    let mut env = plan.env.clone();
    if let Some(account) = &plan.account {
        let on = state.config.account_env(account, plan.driver, &env);
        env.extend(on.map_err(|why| LaunchError::Account { agent: name.clone(), why })?);
    }
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
        policy: crate::Policy {
            budget: left.map_or(plan.policy.budget, |l| Some(l.least_of(plan.policy.budget))),
            ..plan.policy.clone()
        },
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
        return Err(LaunchError::Exists(id));
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
) -> Result<Job, LaunchError> {
    let made = parent
        .spec
        .children
        .get(name)
        .ok_or_else(|| LaunchError::NoJob { step: spec.name.clone(), job: name.to_owned() })?;
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

/// What is left of the budgets over the job's agents (its own, its plan's, its worker's), when
/// it has some: a new agent starts with the least of them; a step is not started once one is
/// spent.
fn budget_left(
    state: &State,
    job: &Job,
    spec: &StepSpec,
    now: Timestamp,
) -> Result<Option<crate::budget::Budget>, LaunchError> {
    let mut least = None;
    for over in crate::ledger::budgets_over(state, job, now) {
        let Some(left) = over.left else {
            return Err(LaunchError::BudgetSpent { step: spec.name.clone(), whose: over.whose, budget: over.budget });
        };
        least = Some(left.least_of(least));
    }
    Ok(least)
}

/// How often the job was resumed, as an id part: empty for the first run, so ids stay as they were.
fn resumed(job: &Job) -> String {
    if job.resumes == 0 {
        String::new()
    } else {
        format!("r{}", job.resumes)
    }
}

/// The values a job's templates may name.
pub(super) fn scope(state: &State, job: &Job) -> Scope {
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
pub(super) fn run_effect(
    state: &State,
    job: &Job,
    spec: &StepSpec,
    visit: u32,
    attempt: u32,
) -> Result<Effect, LaunchError> {
    let ws = job.workspace.as_ref().and_then(|id| state.workspaces.get(id));
    let cwd = ws.map_or_else(|| job.spec.cwd.clone(), |w| w.path.clone());
    let scope = scope(state, job);
    let (run, env) = match &spec.run {
        StepRun::Shell(text) => {
            if let Some(line) = template::unsafe_reevaluation(text) {
                return Err(LaunchError::Reevaluates { step: spec.name.clone(), line });
            }
            let command = template::render_shell(text, &scope)
                .map_err(|error| LaunchError::StepTemplate { step: spec.name.clone(), error })?;
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
pub(super) fn pr_effect(
    state: &State,
    job: &Job,
    spec: &StepSpec,
    draft: bool,
    attempt: u32,
) -> Result<Effect, LaunchError> {
    let ws = job.workspace.as_ref().and_then(|id| state.workspaces.get(id));
    let no_branch = || LaunchError::NoBranch(spec.name.clone());
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
