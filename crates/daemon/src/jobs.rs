//! Making a job of its lowered definition: its vars, locals evaluated once, its workspace
//! prepared (repository, ref, branch checked) and its agents — for `bosun run`, a cron's turn, a
//! plan's job and the items a worker takes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bosun_adapters::{AdapterError, Git};
use bosun_core::template::{render, render_shell, Scope, Target};
use bosun_core::{
    AgentPlan, Gather, ItemId, JobAsk, JobBook, JobDef, JobId, JobSpec, JobWorkspace, Name, Nonce, PlanBranch, Runtime,
    StepRun, WorkBranch, WorkspaceKind,
};
use bosun_wire::StateDir;

use bosun_core::PoolTask;
/// How deep jobs may run each other as steps (lowering refuses deeper ones already).
use bosun_runbook::lower::MAX_DEPTH;

fn err(message: impl Into<String>) -> String {
    message.into()
}

/// What making a job needs from the daemon.
pub struct Making<'a> {
    pub git: &'a dyn Git,
    pub pools: &'a dyn bosun_adapters::Pools,
    pub dirs: &'a StateDir,
    pub hook_command: &'a str,
    /// For a plan's job: the branch its worktree is made on, and from where.
    pub branch: Option<PlanBranch>,
}

/// A job asked for: its id, the nonce its workspace is named with, its vars, where it was asked
/// from, and the queue item it works on.
pub struct Asked {
    pub id: JobId,
    pub nonce: Nonce,
    pub vars: BTreeMap<String, String>,
    pub cwd: PathBuf,
    pub item: Option<(ItemId, BTreeMap<String, String>)>,
}

impl Making<'_> {
    /// The job `name` of `book`, as `asked`.
    pub fn job(&self, book: &JobBook, name: &str, asked: Asked) -> Result<JobSpec, String> {
        let mut spec = self.made(book, name, &asked, asked.vars.clone(), asked.id.clone(), 0)?;
        spec.item = asked.item;
        Ok(spec)
    }

    /// The job, and the jobs its steps run (made with its vars, in its workspace), `depth` deep.
    fn made(
        &self,
        book: &JobBook,
        name: &str,
        asked: &Asked,
        vars: BTreeMap<String, String>,
        id: JobId,
        depth: usize,
    ) -> Result<JobSpec, String> {
        if depth > MAX_DEPTH {
            return Err(err(format!("jobs run each other more than {MAX_DEPTH} deep (a loop?) at job {name:?}")));
        }
        let own_workspace = (depth == 0).then_some(self.branch.as_ref());
        let mut spec = self.prepare(book, name, vars, asked, id, own_workspace)?;
        for step in &spec.steps {
            let StepRun::Job(child) = &step.run else { continue };
            if spec.children.contains_key(child) {
                continue;
            }
            // Its id is drawn by the core when the step runs.
            let placeholder = JobId::new(&asked.nonce);
            let made = self
                .made(book, child, asked, spec.vars.clone(), placeholder, depth + 1)
                .map_err(|e| err(format!("step {:?}: {e}", step.name)))?;
            spec.children.insert(child.clone(), made);
        }
        Ok(spec)
    }
}

impl Making<'_> {
    /// Builds the job as its definition says, with its templates' inputs ready.
    fn prepare(
        &self,
        book: &JobBook,
        name: &str,
        vars: BTreeMap<String, String>,
        asked: &Asked,
        id: JobId,
        // `None` for a job run as a step (it works in its parent's workspace); else the plan's
        // branch, if it is a plan's job.
        own_workspace: Option<Option<&PlanBranch>>,
    ) -> Result<JobSpec, String> {
        let job = book.jobs.get(name).ok_or_else(|| {
            err(format!(
                "job {name:?} is not among the jobs it was started with (an older bosun kept runbook text \
                 instead): start it again"
            ))
        })?;
        let (dirs, cwd, nonce) = (self.dirs, asked.cwd.as_path(), &asked.nonce);
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
        for (k, v) in asked.item.iter().flat_map(|(_, data)| data) {
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
        let (workspace, runtimes) = self.workspace(name, job, &scope, nonce, cwd, own_workspace)?;
        let mut agents = agents(job, cwd)?;
        for (agent, runtime) in runtimes {
            if let Some(plan) = agents.get_mut(&agent) {
                plan.runtime = runtime;
            }
        }
        let logs = dirs.root().join("jobs").join(id.as_str());
        Ok(JobSpec {
            id,
            name: name.to_owned(),
            vars,
            steps: job.steps.clone(),
            on_done: job.on_done.clone(),
            on_fail: job.on_fail.clone(),
            max_step_visits: job.max_step_visits,
            budget: job.budget,
            runbook_hash: book.hash.clone(),
            locals,
            cwd: cwd.to_owned(),
            workspace,
            logs,
            agents,
            agents_root: dirs.agents(),
            hook_command: self.hook_command.to_owned(),
            item: None,
            children: BTreeMap::new(),
            plan: None,
            notify: job.notify.clone(),
            parent: None,
        })
    }
}

impl Making<'_> {
    /// The job's own workspace and the runtimes of its agents that it changes, as the core's
    /// siting rule decides them from what the job asks and what the repository holds:
    /// its branch and ref rendered (a ref with `$(…)` run in the repository), or, for a plan's
    /// job, the plan's branch (made free) from where the jobs it uses are merged.
    fn workspace(
        &self,
        name: &str,
        job: &JobDef,
        scope: &Scope,
        nonce: &Nonce,
        cwd: &Path,
        own_workspace: Option<Option<&PlanBranch>>,
    ) -> Result<(Option<JobWorkspace>, BTreeMap<String, Runtime>), String> {
        let git = self.git;
        let plan = own_workspace.flatten();
        let ask = JobAsk {
            job: name,
            source: &job.source,
            as_step: own_workspace.is_none(),
            in_plan: plan.is_some(),
            steps: job.steps.iter().map(|s| (s.name.as_str(), &s.run)).collect(),
            agents: job.agents.iter().map(|(n, a)| (n.as_str(), &a.plan.runtime)).collect(),
        };
        ask.check().map_err(|refused| refused.to_string())?;
        let (branch, base_ref) = job.source.templates();
        let text = |t: &str| render(t, scope, Target::Text).map_err(|e| err(e.to_string()));
        let facts = match ask.gather(branch.map(text).transpose()?, None, nonce) {
            Some(Gather::NewBranch { branch, remote, .. }) => {
                let repo = git.repo_root(cwd).map_err(|e| e.to_string())?;
                let found = match plan {
                    Some(plan) => plan_branch(git, repo, plan)?,
                    None => {
                        let base_ref = match base_ref {
                            Some(r) if r.contains("$(") => evaluate(r, scope, &repo)?,
                            Some(r) => text(r)?,
                            None => "HEAD".to_owned(),
                        };
                        let base = git.resolve_commit(&repo, &base_ref).map_err(|e| e.to_string())?;
                        WorkBranch { repo, branch, base_ref, base }
                    }
                };
                Some(crate::repo_facts::new_branch(git, found, remote).map_err(|e| e.to_string())?)
            }
            Some(gather) => {
                Some(crate::repo_facts::find(git, cwd.to_owned(), gather, None).map_err(|e| e.to_string())?)
            }
            None => None,
        };
        let sited = ask.site(facts, nonce).map_err(|refused| refused.to_string())?;
        let Some(kind) = sited.kind else { return Ok((None, sited.runtimes)) };
        let pool = match &kind {
            WorkspaceKind::Pool(PoolTask { git: WorkBranch { repo, .. }, .. }) => {
                let spec = new_pool(self.pools, repo.clone(), self.dirs.workspaces(), None, None);
                Some(bosun_core::PoolAsk { spec: spec.map_err(|e| e.to_string())?, wait: true })
            }
            _ => None,
        };
        let workspace = JobWorkspace {
            name: Name::derive(name),
            nonce: nonce.clone(),
            workspaces_root: self.dirs.workspaces(),
            kind,
            settings_from: None,
            pool,
        };
        Ok((Some(workspace), sited.runtimes))
    }
}

/// A plan job's branch in `repo`: the plan's (made free), from the plan's base or, when it uses
/// several jobs, from where their branches are merged.
fn plan_branch(git: &dyn Git, repo: PathBuf, plan: &PlanBranch) -> Result<WorkBranch, String> {
    let branch = free_branch(git, &repo, plan)?;
    let base = if plan.merge.is_empty() {
        git.resolve_commit(&repo, &plan.base).map_err(|e| e.to_string())?
    } else {
        git.merge(&repo, &plan.base, &plan.merge).map_err(|e| match e {
            AdapterError::MergeConflict { .. } => {
                format!("{e}: merge them by hand (or change the plan's `using`) and resume")
            }
            e => e.to_string(),
        })?
    };
    Ok(WorkBranch { repo, branch, base_ref: plan.base.clone(), base })
}

/// The pool `repo` gets when it has none: named after its directory, its base found by git.
/// (When it has one, the core keeps that one and this is not used.)
pub fn new_pool(
    pools: &dyn bosun_adapters::Pools,
    repo: PathBuf,
    root: PathBuf,
    size: Option<u32>,
    setup: Option<String>,
) -> Result<bosun_core::PoolSpec, bosun_adapters::AdapterError> {
    let base = pools.base(&repo)?;
    let dir_name = repo.file_name().map_or("repo".into(), |n| n.to_string_lossy());
    Ok(bosun_core::PoolSpec {
        project: Name::derive(&dir_name).to_string(),
        repo,
        size: size.unwrap_or(bosun_core::DEFAULT_POOL_SIZE),
        base,
        root,
        setup,
    })
}

/// The plan job's branch: as asked for, or with the first numeric suffix that makes it free.
fn free_branch(git: &dyn Git, repo: &Path, plan: &PlanBranch) -> Result<String, String> {
    if !plan.suffix || git.check_new_branch(repo, &plan.branch).is_ok() {
        return Ok(plan.branch.clone());
    }
    (2..100)
        .map(|n| format!("{}-{n}", plan.branch))
        .find(|b| git.check_new_branch(repo, b).is_ok())
        .ok_or_else(|| err(format!("branches {0} to {0}-99 are all taken", plan.branch)))
}

/// The agents the job's steps run, a `prompt_file` read now, from where the job was asked for.
fn agents(def: &JobDef, cwd: &Path) -> Result<BTreeMap<String, AgentPlan>, String> {
    let mut out = BTreeMap::new();
    for (name, agent) in &def.agents {
        let mut plan = agent.plan.clone();
        if let Some(f) = &agent.prompt_file {
            let text = std::fs::read_to_string(cwd.join(f))
                .map_err(|e| err(format!("agent {name:?}: prompt_file {f}: {e}")))?;
            plan.prompt = Some(text);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use bosun_runbook::load::SourceFile;
    use bosun_testkit::fakes::{FakeGit, FakeWorkspaces};

    const RUNBOOK: &str = r#"
job "build" {
  vars     = ["name"]
  defaults = { kind = "debug" }
  locals   = { tag = "${var.name}-${var.kind}" }
  source   = { git = true, branch = "ci/${local.tag}" }
  step "review" {
    run     = { agent = "reviewer" }
    on_done = { step = "lint" }
  }
  step "lint" {
    run = { job = "lint" }
  }
}
job "lint" {
  step "fmt" {
    run = "cargo fmt --check"
  }
}
agent "reviewer" {
  command     = ["claude"]
  prompt_file = "prompt.md"
}
cron "c" {
  every = "1h"
  run   = { job = "build" }
}
"#;

    fn make(book: &JobBook, dir: &Path) -> Result<JobSpec, String> {
        let dirs = StateDir::new(dir.join("state")).unwrap();
        let fake = FakeWorkspaces::default();
        let making = Making { git: &FakeGit, pools: &fake, dirs: &dirs, hook_command: "hook", branch: None };
        let nonce = Nonce::from_bits(7);
        let vars = BTreeMap::from([("name".to_owned(), "web".to_owned())]);
        making.job(book, "build", Asked { id: JobId::new(&nonce), nonce, vars, cwd: dir.to_owned(), item: None })
    }

    fn book() -> JobBook {
        let src = SourceFile { path: "a.hcl".into(), text: RUNBOOK.into() };
        bosun_runbook::lower::lower(&[src]).unwrap().cron("c", PathBuf::new()).unwrap().book
    }

    #[test]
    fn a_job_is_made_of_its_lowered_definition_with_its_values_and_its_prompt_file_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("prompt.md"), "review ${var.name}").unwrap();
        let book = book();
        let spec = make(&book, dir.path()).unwrap();
        assert_eq!(spec.runbook_hash, book.hash);
        assert_eq!(spec.vars.get("kind").map(String::as_str), Some("debug"), "the job's default");
        assert_eq!(spec.locals.get("tag").map(String::as_str), Some("web-debug"));
        let branch = spec.workspace.as_ref().and_then(|w| w.kind.branch());
        assert_eq!(branch, Some("ci/web-debug"));
        assert_eq!(spec.agents["reviewer"].prompt.as_deref(), Some("review ${var.name}"));
        assert_eq!(spec.hook_command, "hook");
        let lint = &spec.children["lint"];
        assert_eq!((lint.workspace.as_ref(), lint.vars.get("name").map(String::as_str)), (None, Some("web")));
    }

    #[test]
    fn a_missing_prompt_file_or_a_job_not_in_the_book_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let e = make(&book(), dir.path()).unwrap_err();
        assert!(e.contains("agent \"reviewer\": prompt_file prompt.md"), "{e}");
        let e = make(&JobBook::default(), dir.path()).unwrap_err();
        assert!(
            e.contains("job \"build\" is not among the jobs it was started with") && e.contains("start it again"),
            "{e}"
        );
    }
}
