//! Preflight (seed 003 §2): what would stop a job or a plan from starting, found before anything
//! is made, one line each, each saying what to do: the directory is not a git repository (for a
//! job whose workspace is a worktree or a pool slot, and for any plan); a plan that starts from
//! the current branch while HEAD is detached; a prompt file an agent names that cannot be read;
//! an agent's program that is not on `PATH` (for an agent that runs here). And readiness
//! (seed 003 §3): the agents' and classifiers' programs that fail their own login check, which
//! bosun warns of without refusing; and an agent's container image that cannot run bosun's
//! binary, which it refuses.

use std::path::Path;

use bosun_adapters::Git;
use bosun_core::{JobBook, JobSource, StepRun};

/// The jobs `names` of `book` and those their steps run, by name.
fn with_children<'a>(book: &'a JobBook, names: &[&'a str]) -> Vec<(&'a str, &'a bosun_core::JobDef)> {
    let mut jobs: Vec<&str> = Vec::new();
    let mut next: Vec<&str> = names.to_vec();
    while let Some(name) = next.pop() {
        if jobs.contains(&name) {
            continue;
        }
        jobs.push(name);
        if let Some(def) = book.jobs.get(name) {
            next.extend(def.steps.iter().filter_map(|s| match &s.run {
                StepRun::Job(child) => Some(child.as_str()),
                _ => None,
            }));
        }
    }
    jobs.iter().filter_map(|n| book.jobs.get(*n).map(|d| (*n, d))).collect()
}

/// A warning for each program the classifiers of the agents of the jobs `names` of `book` run
/// whose own login check fails (once each, remembered a while). The agents' own programs are
/// `clients`'.
pub fn not_ready(readiness: &dyn bosun_adapters::readiness::Readiness, book: &JobBook, names: &[&str]) -> Vec<String> {
    let mut programs: Vec<&str> = Vec::new();
    for (_, def) in with_children(book, names) {
        for agent in def.agents.values() {
            let classifier = agent.plan.policy.classify.as_ref().and_then(|c| c.command.as_ref());
            if let Some(p) = classifier.and_then(|c| c.first()).filter(|p| !programs.contains(&p.as_str())) {
                programs.push(p);
            }
        }
    }
    programs
        .into_iter()
        .filter_map(|p| match readiness.check(p)? {
            Ok(()) => None,
            Err(why) => Some(format!(
                "{p} is not ready ({why}): its agents may not get to work, and a classifier that runs it falls back \
                 to the guardrails and the heuristic; log it in (`claude auth login`, `codex login`)"
            )),
        })
        .collect()
}

/// The clients bosun knows (Claude Code, Codex) that the agents of the jobs `names` of `book` run
/// here, unconfined, each run as its agent will run it (its `env` over the daemon's): what stops the job (a
/// client that does not run, or is not logged in), and what to warn of.
pub fn clients(
    readiness: &dyn bosun_adapters::readiness::Readiness,
    book: &JobBook,
    names: &[&str],
) -> (Vec<String>, Vec<String>) {
    let (mut problems, mut warnings) = (Vec::new(), Vec::new());
    for (job, def) in with_children(book, names) {
        for (name, agent) in &def.agents {
            // Not in a sandbox, a container or a pod: see `handler::start::check_client`.
            let here = agent.plan.runtime == bosun_core::Runtime::Local;
            let Some(program) = agent.plan.command.first().filter(|_| here) else { continue };
            let env = &agent.plan.env;
            let Some(probe) = readiness.probe(program, env) else { continue };
            let config = bosun_adapters::readiness::client_config(program, env);
            let set = |k: &str| bosun_adapters::readiness::is_set(env, k);
            let args = &agent.plan.command[1..];
            let auth = bosun_core::client_check::Auth { set: &set, config: config.as_deref(), args };
            let verdict = bosun_core::client_check::assess(program, &probe, &auth);
            problems.extend(verdict.refusal.map(|line| format!("agent {name:?} of job {job:?}: {line}")));
            warnings.extend(verdict.warnings);
        }
    }
    problems.dedup();
    warnings.dedup();
    (problems, warnings)
}

/// The agents of the jobs `names` of `book` that name an account bosun's `config` does not
/// (each refused with the names it does), or one of another client.
pub fn accounts(config: &bosun_core::config::Config, book: &JobBook, names: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    for (job, def) in with_children(book, names) {
        for (name, agent) in &def.agents {
            let Some(account) = &agent.plan.account else { continue };
            if let Err(why) = config.account_env(account, agent.plan.driver, &agent.plan.env) {
                problems.push(format!("agent {name:?} of job {job:?}: {why}"));
            }
        }
    }
    problems
}

/// The agents of the jobs `names` of `book` that run in a container whose image cannot run
/// bosun's binary `exe` (their session host): each refused with what the container said, as
/// `agent start` refuses one (a busybox or alpine image lacks the C library it needs).
pub fn images(containers: &dyn bosun_adapters::Containers, exe: &Path, book: &JobBook, names: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    for (job, def) in with_children(book, names) {
        for (name, agent) in &def.agents {
            let bosun_core::Runtime::Docker(container) = &agent.plan.runtime else { continue };
            if let Err(e) = containers.check_runs(&container.image, exe) {
                problems.push(format!("agent {name:?} of job {job:?}: {e}"));
            }
        }
    }
    problems
}

/// What would keep the branches a plan's jobs ask for from being made: names git cannot make and
/// two that cannot both exist (`bosun_core::plan_branch_problems`), a branch the repository has
/// already when the job names its own (one bosun names is made free with a suffix), and one
/// the repository's branches keep from being made (`feature/x` beside a branch `feature`).
pub fn plan_branches(git: &dyn Git, plan: &bosun_core::Plan) -> Vec<String> {
    let jobs: Vec<bosun_core::PlanJobBranch<'_>> = plan.jobs.iter().map(bosun_core::PlanJob::branches).collect();
    let mut out = bosun_core::plan_branch_problems(&jobs);
    let Ok(repo) = git.repo_root(&plan.cwd) else { return out };
    for j in &jobs {
        for (branch, suffix) in j.asked() {
            match git.check_new_branch(&repo, &branch) {
                Ok(()) | Err(bosun_adapters::AdapterError::InvalidBranch { .. }) => {}
                Err(bosun_adapters::AdapterError::BranchExists { .. }) if suffix => {}
                Err(e) => out.push(format!("plan job {:?}: {e}", j.name)),
            }
        }
    }
    out
}

/// The problems of starting the jobs `names` of `book` (and the jobs their steps run) from
/// `cwd`; for a plan, `plan_base` is the ref its first jobs start from.
pub fn problems(git: &dyn Git, book: &JobBook, names: &[&str], cwd: &Path, plan_base: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    let defs = with_children(book, names);
    let needs_repo = plan_base.is_some()
        || defs.iter().any(|(_, d)| matches!(d.source, JobSource::Worktree { .. } | JobSource::Pool { .. }));
    if needs_repo {
        match git.repo_root(cwd) {
            Err(_) => out.push(format!(
                "{} is not inside a git repository: run bosun from the repository (`cd` into it), or `git init` it",
                cwd.display()
            )),
            Ok(repo) if plan_base == Some("HEAD") => match git.current_branch(&repo) {
                Ok(Some(_)) => {}
                Ok(None) => out.push(format!(
                    "HEAD is detached in {}: switch to the branch the plan starts from (`git switch NAME`), or give \
                     the plan a `base`",
                    repo.display()
                )),
                Err(e) => out.push(e.to_string()),
            },
            Ok(_) => {}
        }
    }
    for (job, def) in &defs {
        for (name, agent) in &def.agents {
            if let Some(file) = &agent.prompt_file {
                if let Err(e) = std::fs::File::open(cwd.join(file)) {
                    out.push(format!(
                        "agent {name:?} of job {job:?}: its prompt_file {file} cannot be read ({e}): create it, or \
                         fix the path (it is read from {})",
                        cwd.display()
                    ));
                }
            }
            let here = matches!(agent.plan.runtime, bosun_core::Runtime::Local | bosun_core::Runtime::Sandbox { .. });
            let program = agent.plan.command.first();
            if let Some(program) = program.filter(|_| here) {
                if which::which_in(program, std::env::var_os("PATH"), cwd).is_err() {
                    out.push(format!(
                        "agent {name:?} of job {job:?} runs `{program}`, which is not on PATH: install it, or give its \
                         full path in the agent's `run`"
                    ));
                }
            }
        }
    }
    out.dedup();
    out
}
