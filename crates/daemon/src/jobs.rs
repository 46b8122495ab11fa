//! Making a job from the runbook: the job's definition with its vars, locals evaluated once,
//! its workspace prepared (repository, ref, branch checked) and its agents — for `bosun run`
//! and for the items a worker takes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bosun_adapters::Workspaces;
use bosun_core::driver::DriverKind;
use bosun_core::template::{render, render_shell, Scope, Target};
use bosun_core::{
    AgentPlan, ItemId, JobId, JobNotify, JobSpec, JobWorkspace, Name, Next, Nonce, PlanBranch, StepRun, StepSpec,
    WorkspaceKind,
};
use bosun_runbook::load::SourceFile;
use bosun_runbook::model::{Run, Runbook, Source, Transition};
use bosun_wire::StateDir;

/// How deep jobs may run each other as steps.
const MAX_DEPTH: usize = 8;

fn err(message: impl Into<String>) -> String {
    message.into()
}

/// What making a job needs from the daemon.
pub struct Making<'a> {
    pub workspaces: &'a dyn Workspaces,
    pub dirs: &'a StateDir,
    pub hook_command: &'a str,
    /// For a plan's job: the branch its worktree is made on, and from where.
    pub branch: Option<PlanBranch>,
}

impl Making<'_> {
    /// The job `name` of `runbook`, with `vars`, run from `cwd`; for a queue item when `item`.
    #[allow(clippy::too_many_arguments)]
    pub fn job(
        &self,
        runbook: &Runbook,
        name: &str,
        vars: BTreeMap<String, String>,
        cwd: &Path,
        id: JobId,
        nonce: Nonce,
        runbook_hash: String,
        item: Option<(ItemId, BTreeMap<String, String>)>,
    ) -> Result<JobSpec, String> {
        let mut spec = self.made(runbook, name, vars, cwd, id, nonce, runbook_hash, item.as_ref(), 0)?;
        spec.item = item;
        Ok(spec)
    }

    /// The job, and the jobs its steps run (made with its vars, in its workspace), `depth` deep.
    #[allow(clippy::too_many_arguments)]
    fn made(
        &self,
        runbook: &Runbook,
        name: &str,
        vars: BTreeMap<String, String>,
        cwd: &Path,
        id: JobId,
        nonce: Nonce,
        runbook_hash: String,
        item: Option<&(ItemId, BTreeMap<String, String>)>,
        depth: usize,
    ) -> Result<JobSpec, String> {
        if depth > MAX_DEPTH {
            return Err(err(format!("jobs run each other more than {MAX_DEPTH} deep (a loop?) at job {name:?}")));
        }
        let own_workspace = depth == 0;
        let mut spec = prepare(
            self.workspaces,
            self.dirs,
            runbook,
            name,
            vars,
            cwd,
            (id, nonce.clone(), runbook_hash.clone()),
            item,
            own_workspace.then_some(self.branch.as_ref()),
        )?;
        spec.agents = agents(runbook, &spec, cwd)?;
        spec.agents_root = self.dirs.agents();
        spec.hook_command = self.hook_command.to_owned();
        for step in &spec.steps {
            let StepRun::Job(child) = &step.run else { continue };
            if spec.children.contains_key(child) {
                continue;
            }
            // Its id is drawn by the core when the step runs.
            let placeholder = JobId::new(&nonce);
            let made = self
                .made(
                    runbook,
                    child,
                    spec.vars.clone(),
                    cwd,
                    placeholder,
                    nonce.clone(),
                    runbook_hash.clone(),
                    item,
                    depth + 1,
                )
                .map_err(|e| err(format!("step {:?}: {e}", step.name)))?;
            spec.children.insert(child.clone(), made);
        }
        Ok(spec)
    }
}

/// Builds the job as the runbook says, with its templates' inputs ready.
#[allow(clippy::too_many_arguments)]
fn prepare(
    workspaces: &dyn bosun_adapters::Workspaces,
    dirs: &StateDir,
    runbook: &Runbook,
    name: &str,
    vars: BTreeMap<String, String>,
    cwd: &Path,
    (id, nonce, runbook_hash): (JobId, Nonce, String),
    item: Option<&(ItemId, BTreeMap<String, String>)>,
    // `None` for a job run as a step (it works in its parent's workspace); else the plan's
    // branch, if it is a plan's job.
    own_workspace: Option<Option<&PlanBranch>>,
) -> Result<JobSpec, String> {
    let job = runbook.jobs.get(name).ok_or_else(|| err(format!("no job {name:?}")))?;
    let mut vars = vars;
    for (k, v) in &job.defaults {
        vars.entry(k.clone()).or_insert_with(|| v.clone());
    }
    if let Some(missing) = job.vars.iter().find(|v| !vars.contains_key(*v)) {
        return Err(err(format!("job {name:?} needs var {missing:?}, which the command does not give")));
    }
    let mut scope = Scope::new();
    for (k, v) in &vars {
        scope.set("var", k, v.as_str()).set("args", k, v.as_str());
    }
    scope.set("source", "nonce", nonce.as_str());
    for (k, v) in item.iter().flat_map(|(_, data)| data) {
        scope.set("item", k, v.as_str());
    }
    let mut locals = BTreeMap::new();
    // In the order they use each other: a local after those it names (`runbook check` refuses
    // locals made of each other; were there such, the first left would fail on its own).
    let mut pending: Vec<(&String, &String)> = job.locals.iter().collect();
    while !pending.is_empty() {
        let ready = pending.iter().position(|(_, template)| {
            let names = bosun_core::template::names(template).unwrap_or_default();
            let mut used = names.iter().filter_map(|n| n.strip_prefix("local."));
            used.all(|l| locals.contains_key(l) || !job.locals.contains_key(l))
        });
        let (k, template) = pending.remove(ready.unwrap_or(0));
        let value = evaluate(template, &scope, cwd).map_err(|e| err(format!("local {k:?}: {e}")))?;
        scope.set("local", k, value.as_str());
        locals.insert(k.clone(), value);
    }
    let workspace = match &job.source {
        // A job run as a step works in its parent's workspace.
        _ if own_workspace.is_none() => None,
        Source::None | Source::Folder if own_workspace.flatten().is_some() => {
            return Err(err(format!("job {name:?} runs in a plan, so it needs `source = \"worktree\"`")));
        }
        Source::None => None,
        Source::Folder => Some(WorkspaceKind::Folder),
        Source::Worktree { branch, base_ref } => {
            let repo = workspaces.repo_root(cwd).map_err(|e| e.to_string())?;
            let text = |t: &str| render(t, &scope, Target::Text).map_err(|e| err(e.to_string()));
            let mut branch = branch.as_deref().map(text).transpose()?.unwrap_or_else(|| nonce.default_branch());
            let mut base_ref = match base_ref {
                Some(r) if r.contains("$(") => evaluate(r, &scope, &repo)?,
                Some(r) => text(r)?,
                None => "HEAD".to_owned(),
            };
            if let Some(plan) = own_workspace.flatten() {
                base_ref = plan.base.clone();
                branch = free_branch(workspaces, &repo, plan)?;
            }
            let base = workspaces.resolve_commit(&repo, &base_ref).map_err(|e| e.to_string())?;
            workspaces.check_new_branch(&repo, &branch).map_err(|e| e.to_string())?;
            Some(WorkspaceKind::Worktree { repo, branch, base_ref, base })
        }
    };
    let workspace = workspace.map(|kind| JobWorkspace {
        name: Name::derive(name),
        nonce: nonce.clone(),
        workspaces_root: dirs.workspaces(),
        kind,
        settings_from: None,
    });
    let next = |t: &Option<Transition>| {
        t.as_ref().map(|t| match t {
            Transition::Step { name, .. } => Next::Step(name.clone()),
            Transition::Done => Next::Done,
            Transition::Fail => Next::Fail,
        })
    };
    let steps = job
        .steps
        .iter()
        .map(|s| StepSpec {
            name: s.name.clone(),
            run: match &s.run {
                Run::Shell(t) => StepRun::Shell(t.clone()),
                Run::Agent(a) => StepRun::Agent(a.clone()),
                Run::Job(j) => StepRun::Job(j.clone()),
            },
            on_done: next(&s.on_done),
            on_fail: next(&s.on_fail),
            on_cancel: next(&s.on_cancel),
            attempts: s.attempts,
            backoff_ms: s.backoff_ms,
        })
        .collect();
    let logs = dirs.root().join("jobs").join(id.as_str());
    Ok(JobSpec {
        id,
        name: name.to_owned(),
        vars,
        steps,
        on_done: next(&job.on_done),
        on_fail: next(&job.on_fail),
        max_step_visits: job.max_step_visits,
        runbook_hash,
        locals,
        cwd: cwd.to_owned(),
        workspace,
        logs,
        agents: BTreeMap::new(),
        agents_root: PathBuf::new(),
        hook_command: String::new(),
        item: None,
        children: BTreeMap::new(),
        plan: None,
        notify: JobNotify {
            on_start: job.notify.on_start.clone(),
            on_done: job.notify.on_done.clone(),
            on_fail: job.notify.on_fail.clone(),
            webhook: job.notify.webhook.clone(),
        },
        parent: None,
    })
}

/// The plan job's branch: as asked for, or with the first numeric suffix that makes it free.
fn free_branch(workspaces: &dyn Workspaces, repo: &Path, plan: &PlanBranch) -> Result<String, String> {
    if !plan.suffix || workspaces.check_new_branch(repo, &plan.branch).is_ok() {
        return Ok(plan.branch.clone());
    }
    (2..100)
        .map(|n| format!("{}-{n}", plan.branch))
        .find(|b| workspaces.check_new_branch(repo, b).is_ok())
        .ok_or_else(|| err(format!("branches {0} to {0}-99 are all taken", plan.branch)))
}

/// The agents the job's steps run, as the runbook defines them (a `prompt_file` read now, from
/// where `bosun run` ran).
fn agents(runbook: &Runbook, spec: &JobSpec, cwd: &Path) -> Result<BTreeMap<String, AgentPlan>, String> {
    let mut out = BTreeMap::new();
    for step in &spec.steps {
        let StepRun::Agent(name) = &step.run else { continue };
        let def = runbook.agents.get(name).ok_or_else(|| err(format!("no agent {name:?}")))?;
        let prompt = match (&def.prompt, &def.prompt_file) {
            (Some(p), _) => Some(p.clone()),
            (None, Some(f)) => Some(
                std::fs::read_to_string(cwd.join(f))
                    .map_err(|e| err(format!("agent {name:?}: prompt_file {f}: {e}")))?,
            ),
            (None, None) => None,
        };
        let plan = AgentPlan {
            command: def.command.clone(),
            driver: def.driver.unwrap_or_else(|| DriverKind::detect(&def.command)),
            prompt,
            context: def.context.clone(),
            cwd: def.cwd.clone(),
            env: def.env.clone(),
            policy: def.policy.clone(),
        };
        out.insert(name.clone(), plan);
    }
    Ok(out)
}

/// A local (or a ref with `$(…)`): rendered as a double-quoted shell word, so its `$(…)` runs
/// and its values stay data, and printed by the shell in `cwd`.
fn evaluate(template: &str, scope: &Scope, cwd: &Path) -> Result<String, String> {
    let word = render_shell(&format!("\"{template}\""), scope).map_err(|e| e.to_string())?;
    let out = bosun_adapters::private::as_user(&mut std::process::Command::new("sh"))
        .args(["-c", &format!("printf '%s' {}", word.text)])
        .envs(&word.env)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run sh: {e}"))?;
    if !out.status.success() {
        return Err(format!("`{template}` failed: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A stable digest of the runbook text (FNV-1a, 64 bits), so a job says which text it runs.
pub fn runbook_hash(sources: &[SourceFile]) -> String {
    let paths: Vec<_> = sources.iter().map(|s| s.path.to_string_lossy()).collect();
    let parts: Vec<&str> = paths.iter().zip(sources).flat_map(|(p, s)| [p.as_ref(), s.text.as_str()]).collect();
    format!("{:016x}", bosun_core::fnv(&parts))
}
