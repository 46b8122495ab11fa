//! `bosun run COMMAND ARGS…`: the command's job, read from the runbook text sent with the
//! request (the job is pinned to it by hash), its arguments checked against the command's args
//! spec, its locals evaluated once, its workspace prepared — all before anything is recorded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bosun_core::driver::DriverKind;
use bosun_core::template::{render, Scope, Target};
use bosun_core::{AgentPlan, JobId, JobSpec, JobWorkspace, Name, Next, Nonce, StepRun, StepSpec, WorkspaceKind};
use bosun_runbook::load::{load, SourceFile};
use bosun_runbook::model::{ArgsSpec, Command, Run, Runbook, Source, Transition};
use bosun_wire::RunCommand;

use super::*;

pub(super) async fn run(ctx: &Arc<Context>, req: RunCommand) -> Answer {
    let sources: Vec<SourceFile> =
        req.sources.iter().map(|(path, text)| SourceFile { path: path.clone(), text: text.clone() }).collect();
    let runbook = load(&sources).map_err(|errors| {
        let all: Vec<String> = errors.iter().map(ToString::to_string).collect();
        bad(format!("the runbooks have errors (see `bosun runbook check`): {}", all.join("; ")))
    })?;
    let command = runbook.commands.get(&req.command).ok_or_else(|| {
        let known: Vec<&str> = runbook.commands.keys().map(String::as_str).collect();
        bad(format!("no command {:?} in the runbooks (commands: {})", req.command, known.join(", ")))
    })?;
    let vars = args(&req.command, command, &req.args).map_err(bad)?;
    let Run::Job(job_name) = &command.run else {
        return Err(bad(format!("command {:?} does not run a job; only job commands run yet", req.command)));
    };
    let nonce = Nonce::from_bits(fastrand::u64(..));
    let id = JobId::new(&nonce);
    let (workspaces, dirs) = (ctx.workspaces.clone(), ctx.dirs.clone());
    let hash = runbook_hash(&sources);
    let (name, cwd, hook) = (job_name.clone(), req.cwd.clone(), ctx.hook_command.clone());
    let spec = tokio::task::spawn_blocking(move || {
        let mut spec = prepare(&*workspaces, &dirs, &runbook, &name, vars, &cwd, id, nonce, hash)?;
        spec.agents = agents(&runbook, &spec, &cwd)?;
        spec.agents_root = dirs.agents();
        spec.hook_command = hook;
        Ok::<_, WireError>(spec)
    })
    .await
    .map_err(|e| WireError::new(ErrorKind::Failed, e.to_string()))??;
    let events = ctx.engine.submit(Input::StartJob(Box::new(spec))).await.map_err(engine_error)?;
    let (mut job, mut workspace, mut branch) = (None, None, None);
    for e in events {
        match e {
            Event::JobCreated { job: j } => job = Some(j.spec.id.clone()),
            Event::WorkspaceCreating { workspace: w } => {
                branch = w.branch().map(str::to_owned);
                workspace = Some(w.path);
            }
            _ => {}
        }
    }
    let job = job.ok_or_else(|| WireError::new(ErrorKind::Failed, "the run recorded no job"))?;
    Ok(Response::JobStarted { job, workspace, branch })
}

/// The command's arguments by name: positionals in order, `--option value`, `--flag`, and the
/// command's defaults for what is not given.
fn args(name: &str, command: &Command, given: &[String]) -> Result<BTreeMap<String, String>, String> {
    let usage = usage(name, &command.args);
    let mut vars = command.defaults.clone();
    let mut positional = command.args.positional.iter();
    let mut i = 0;
    while i < given.len() {
        let a = &given[i];
        if let Some(opt) = a.strip_prefix("--") {
            match command.args.options.iter().find(|(o, _)| o == opt) {
                Some((o, Some(_))) => {
                    let v = given.get(i + 1).ok_or_else(|| format!("--{o} needs a value: {usage}"))?;
                    vars.insert(o.clone(), v.clone());
                    i += 1;
                }
                Some((o, None)) => {
                    vars.insert(o.clone(), "true".into());
                }
                None => return Err(format!("unknown option --{opt}: {usage}")),
            }
        } else {
            let p = positional.next().ok_or_else(|| format!("too many arguments ({a:?}): {usage}"))?;
            vars.insert(p.clone(), a.clone());
        }
        i += 1;
    }
    if let Some(missing) = positional.next() {
        return Err(format!("missing <{missing}>: {usage}"));
    }
    Ok(vars)
}

fn usage(name: &str, spec: &ArgsSpec) -> String {
    let mut u = format!("usage: bosun run {name}");
    for p in &spec.positional {
        u.push_str(&format!(" <{p}>"));
    }
    for (o, v) in &spec.options {
        match v {
            Some(v) => u.push_str(&format!(" [--{o} <{v}>]")),
            None => u.push_str(&format!(" [--{o}]")),
        }
    }
    u
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
    id: JobId,
    nonce: Nonce,
    runbook_hash: String,
) -> Result<JobSpec, WireError> {
    let job = runbook.jobs.get(name).ok_or_else(|| bad(format!("no job {name:?}")))?;
    let mut vars = vars;
    for (k, v) in &job.defaults {
        vars.entry(k.clone()).or_insert_with(|| v.clone());
    }
    if let Some(missing) = job.vars.iter().find(|v| !vars.contains_key(*v)) {
        return Err(bad(format!("job {name:?} needs var {missing:?}, which the command does not give")));
    }
    let mut scope = Scope::new();
    for (k, v) in &vars {
        scope.set("var", k, v.as_str());
    }
    scope.set("source", "nonce", nonce.as_str());
    let mut locals = BTreeMap::new();
    for (k, template) in &job.locals {
        let value = evaluate(template, &scope, cwd).map_err(|e| bad(format!("local {k:?}: {e}")))?;
        scope.set("local", k, value.as_str());
        locals.insert(k.clone(), value);
    }
    let workspace = match &job.source {
        Source::None => None,
        Source::Folder => Some(WorkspaceKind::Folder),
        Source::Worktree { branch, base_ref } => {
            let repo = workspaces.repo_root(cwd).map_err(adapter_error)?;
            let text = |t: &str| render(t, &scope, Target::Text).map_err(|e| bad(e.to_string()));
            let branch = branch.as_deref().map(text).transpose()?.unwrap_or_else(|| nonce.default_branch());
            let base_ref = match base_ref {
                Some(r) if r.contains("$(") => evaluate(r, &scope, &repo).map_err(bad)?,
                Some(r) => text(r)?,
                None => "HEAD".to_owned(),
            };
            let base = workspaces.resolve_commit(&repo, &base_ref).map_err(adapter_error)?;
            workspaces.check_new_branch(&repo, &branch).map_err(adapter_error)?;
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
    })
}

/// The agents the job's steps run, as the runbook defines them (a `prompt_file` read now, from
/// where `bosun run` ran).
fn agents(runbook: &Runbook, spec: &JobSpec, cwd: &Path) -> Result<BTreeMap<String, AgentPlan>, WireError> {
    let mut out = BTreeMap::new();
    for step in &spec.steps {
        let StepRun::Agent(name) = &step.run else { continue };
        let def = runbook.agents.get(name).ok_or_else(|| bad(format!("no agent {name:?}")))?;
        let prompt = match (&def.prompt, &def.prompt_file) {
            (Some(p), _) => Some(p.clone()),
            (None, Some(f)) => Some(
                std::fs::read_to_string(cwd.join(f))
                    .map_err(|e| bad(format!("agent {name:?}: prompt_file {f}: {e}")))?,
            ),
            (None, None) => None,
        };
        let plan = AgentPlan {
            command: def.command.clone(),
            driver: def.driver.unwrap_or_else(|| DriverKind::detect(&def.command)),
            prompt,
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
    let word = render(&format!("\"{template}\""), scope, Target::Shell).map_err(|e| e.to_string())?;
    let out = std::process::Command::new("sh")
        .args(["-c", &format!("printf '%s' {word}")])
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
fn runbook_hash(sources: &[SourceFile]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for s in sources {
        for b in s.path.to_string_lossy().bytes().chain([0]).chain(s.text.bytes()).chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}
