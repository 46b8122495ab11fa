//! Lowering: a runbook's command, cron, worker, plan or queue into the records the core keeps —
//! each job as a `JobDef` in a `JobBook` pinned to the text by hash — in this one place. Nothing
//! after it reads runbook text again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use bosun_core::driver::DriverKind;
use bosun_core::{
    AgentPlan, Cron, External, JobBook, JobDef, Next, Plan, PlanJob, PlanState, StepAgent, StepSpec, Worker,
};

use crate::check::capped;
use crate::load::{load, RunbookError, SourceFile};
use crate::model::{ArgsSpec, QueueKind, Run, Runbook, Transition};

/// How deep jobs may run each other as steps.
pub const MAX_DEPTH: usize = 8;

/// How many jobs one job may make through its steps, counting each time a job runs as a step
/// of another (a job run by two steps is made twice).
pub const MAX_MADE: u64 = 100;

/// Why a runbook could not be lowered; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum LowerError {
    #[error("the runbooks have {} error(s), see `bosun runbook check`: {}", .0.len(), capped(.0.iter(), .0.len(), "; "))]
    Invalid(Vec<RunbookError>),
    #[error("no {kind} {name:?} in the runbooks ({kind}s: {known})")]
    Missing { kind: &'static str, name: String, known: String },
    #[error("{message}: {usage}")]
    Args { message: String, usage: String },
    #[error("queue {0:?} is external: its items come from its `list` command")]
    External(String),
    #[error("jobs run each other more than {MAX_DEPTH} deep, from job {0:?}")]
    TooDeep(String),
    #[error(
        "job {job:?} makes {made} jobs through its steps, more than the {MAX_MADE} allowed: run fewer jobs as steps"
    )]
    TooMany { job: String, made: u64 },
}

/// A loaded runbook, and the hash of the text it was read from.
#[derive(Clone, Debug)]
pub struct Lowered {
    runbook: Runbook,
    hash: String,
    /// For each job: how deep the jobs its steps run go, and how many jobs making it makes.
    reach: BTreeMap<String, Reach>,
}

/// Loads `sources` as one runbook, ready to lower what it names.
pub fn lower(sources: &[SourceFile]) -> Result<Lowered, LowerError> {
    let runbook = load(sources).map_err(LowerError::Invalid)?;
    let reach = reach(&runbook);
    Ok(Lowered { runbook, hash: hash(sources), reach })
}

/// A stable digest of the runbook files, paths and text (FNV-1a, 64 bits).
fn hash(sources: &[SourceFile]) -> String {
    let paths: Vec<_> = sources.iter().map(|s| s.path.to_string_lossy()).collect();
    let parts: Vec<&str> = paths.iter().zip(sources).flat_map(|(p, s)| [p.as_ref(), s.text.as_str()]).collect();
    format!("{:016x}", bosun_core::fnv(&parts))
}

impl Lowered {
    pub fn runbook(&self) -> &Runbook {
        &self.runbook
    }

    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// `bosun run NAME ARGS…`: the job the command runs, its book, and the vars `args` give.
    pub fn command(
        &self,
        name: &str,
        args: &[String],
    ) -> Result<(JobBook, String, BTreeMap<String, String>), LowerError> {
        let command = self.runbook.commands.get(name).ok_or_else(|| self.missing("command", name))?;
        let vars = parse_args(name, &command.args, &command.defaults, args)?;
        let job = ran_job(&command.run);
        Ok((self.book([job])?, job.to_owned(), vars))
    }

    /// The cron `name`, not yet started, run from `cwd`.
    pub fn cron(&self, name: &str, cwd: PathBuf) -> Result<Cron, LowerError> {
        let def = self.runbook.crons.get(name).ok_or_else(|| self.missing("cron", name))?;
        let job = ran_job(&def.run);
        Ok(Cron {
            name: name.to_owned(),
            schedule: def.schedule.clone(),
            job: job.to_owned(),
            running: true,
            book: self.book([job])?,
            cwd,
            next: None,
            fired: 0,
            last_job: None,
            last_started: None,
            error: None,
        })
    }

    /// The worker `name`, running, run from `cwd`.
    pub fn worker(&self, name: &str, cwd: PathBuf) -> Result<Worker, LowerError> {
        let def = self.runbook.workers.get(name).ok_or_else(|| self.missing("worker", name))?;
        let external = match self.runbook.queues.get(&def.queue).map(|q| &q.kind) {
            Some(QueueKind::External { list, take, poll_ms, retry }) => {
                Some(External { list: list.clone(), take: take.clone(), poll_ms: *poll_ms, retry: *retry })
            }
            _ => None,
        };
        Ok(Worker {
            name: name.to_owned(),
            queue: def.queue.clone(),
            job: def.job.clone(),
            concurrency: def.concurrency,
            running: true,
            book: self.book([def.job.as_str()])?,
            cwd,
            external,
            error: None,
            budget: def.budget,
        })
    }

    /// The plan `name` as it starts, with the id `id`, run from `cwd`; its base is `HEAD` when
    /// the runbook names none.
    pub fn plan(&self, name: &str, id: String, cwd: PathBuf) -> Result<Plan, LowerError> {
        let def = self.runbook.plans.get(name).ok_or_else(|| self.missing("plan", name))?;
        let jobs = def
            .jobs
            .iter()
            .map(|j| PlanJob {
                name: j.name.clone(),
                job: j.job.clone(),
                vars: j.vars.clone(),
                using: j.using.clone(),
                branch: j.branch.clone(),
                engine: j.engine.clone(),
                variants: j.variants.unwrap_or(1),
                judge: j.keep_best.clone(),
                runs: Vec::new(),
                winner: None,
                job_id: None,
                target: None,
                source: None,
                merged: Vec::new(),
                done: false,
                failure: None,
            })
            .collect();
        Ok(Plan {
            id,
            name: name.to_owned(),
            base: def.base.clone().unwrap_or_else(|| "HEAD".to_owned()),
            jobs,
            state: PlanState::Running,
            book: self.book(def.jobs.iter().map(|j| j.job.as_str()))?,
            cwd,
            concurrency: def.concurrency.unwrap_or(bosun_core::DEFAULT_PLAN_CONCURRENCY),
            drop_losers: false,
            budget: def.budget,
        })
    }

    /// How often an item pushed onto the persisted queue `name` is tried.
    pub fn queue_retry(&self, name: &str) -> Result<u32, LowerError> {
        match self.runbook.queues.get(name).map(|q| &q.kind) {
            Some(QueueKind::Persisted { retry }) => Ok(*retry),
            Some(QueueKind::External { .. }) => Err(LowerError::External(name.to_owned())),
            None => Err(self.missing("queue", name)),
        }
    }

    /// What would stop a job from starting, for every job.
    pub fn problems(&self) -> Vec<LowerError> {
        self.reach.iter().filter_map(|(job, reach)| reach.check(job).err()).collect()
    }

    /// The jobs `roots` and every job their steps run, lowered.
    fn book<'a>(&'a self, roots: impl IntoIterator<Item = &'a str>) -> Result<JobBook, LowerError> {
        let mut todo: Vec<&str> = roots.into_iter().collect();
        for root in &todo {
            self.reach.get(*root).map_or(Ok(()), |r| r.check(root))?;
        }
        let mut jobs = BTreeMap::new();
        while let Some(name) = todo.pop() {
            if jobs.contains_key(name) {
                continue;
            }
            jobs.insert(name.to_owned(), self.job(name)?);
            todo.extend(self.runbook.jobs_run_by(name).map(|(_, j)| j));
        }
        Ok(JobBook { hash: self.hash.clone(), jobs })
    }

    fn job(&self, name: &str) -> Result<JobDef, LowerError> {
        let job = self.runbook.jobs.get(name).ok_or_else(|| self.missing("job", name))?;
        let next = |t: &Option<Transition>| t.as_ref().map(Transition::next);
        let steps: Vec<StepSpec> = job
            .steps
            .iter()
            .map(|s| StepSpec {
                name: s.name.clone(),
                run: s.run.clone(),
                on_done: next(&s.on_done),
                on_fail: next(&s.on_fail),
                on_cancel: next(&s.on_cancel),
                attempts: s.attempts,
                backoff_ms: s.backoff_ms,
            })
            .collect();
        let mut agents = BTreeMap::new();
        for step in &steps {
            let Run::Agent(agent) = &step.run else { continue };
            let def = self.runbook.agents.get(agent).ok_or_else(|| self.missing("agent", agent))?;
            let plan = AgentPlan {
                command: def.command.clone(),
                driver: DriverKind::chosen(def.driver, &def.command),
                prompt: def.prompt.clone(),
                context: def.context.clone(),
                cwd: def.cwd.clone(),
                env: def.env.clone(),
                policy: def.policy.clone(),
                backend: def.backend,
                runtime: def.runtime.clone(),
                account: def.account.clone(),
            };
            agents.insert(agent.clone(), StepAgent { plan, prompt_file: def.prompt_file.clone() });
        }
        Ok(JobDef {
            vars: job.vars.clone(),
            defaults: job.defaults.clone(),
            locals: job.locals.clone(),
            source: job.source.clone(),
            steps,
            on_done: next(&job.on_done),
            on_fail: next(&job.on_fail),
            max_step_visits: job.max_step_visits,
            budget: job.budget,
            notify: job.notify.clone(),
            agents,
        })
    }

    fn missing(&self, kind: &'static str, name: &str) -> LowerError {
        let names: Vec<&String> = match kind {
            "command" => self.runbook.commands.keys().collect(),
            "cron" => self.runbook.crons.keys().collect(),
            "worker" => self.runbook.workers.keys().collect(),
            "plan" => self.runbook.plans.keys().collect(),
            "queue" => self.runbook.queues.keys().collect(),
            "agent" => self.runbook.agents.keys().collect(),
            _ => self.runbook.jobs.keys().filter(|j| !j.contains(':')).collect(),
        };
        let known = if names.is_empty() { "none".to_owned() } else { capped(names.iter(), names.len(), ", ") };
        LowerError::Missing { kind, name: name.to_owned(), known }
    }
}

impl Transition {
    /// Where the job goes, in the core's terms.
    pub fn next(&self) -> Next {
        match self {
            Transition::Step { name, .. } => Next::Step(name.clone()),
            Transition::Done => Next::Done,
            Transition::Fail => Next::Fail,
        }
    }
}

/// The job a command or cron runs. The loader gives one that runs a shell command or an agent
/// a job of one step, so the text of another kind is never a job's name and is not found.
fn ran_job(run: &Run) -> &str {
    match run {
        Run::Job(job) | Run::Shell(job) | Run::Agent(job) => job,
        // `check` refuses a command or cron that opens a pull request: it is a job's step.
        Run::Pr { .. } => "",
    }
}

/// How deep the jobs a job's steps run go (0 for none), and how many jobs making it makes,
/// itself included.
#[derive(Clone, Copy, Debug, Default)]
struct Reach {
    depth: usize,
    made: u64,
}

impl Reach {
    fn check(&self, job: &str) -> Result<(), LowerError> {
        if self.depth > MAX_DEPTH {
            return Err(LowerError::TooDeep(job.to_owned()));
        }
        if self.made > MAX_MADE {
            return Err(LowerError::TooMany { job: job.to_owned(), made: self.made });
        }
        Ok(())
    }
}

/// Each job's reach, found once per job by a walk with its own stack (a long chain of jobs
/// cannot overflow the thread's), so it stays linear in the runbook's size.
fn reach(rb: &Runbook) -> BTreeMap<String, Reach> {
    let children = |job: &str| -> BTreeSet<&str> { rb.jobs_run_by(job).map(|(_, j)| j).collect() };
    let mut out: BTreeMap<String, Reach> = BTreeMap::new();
    let mut open: BTreeSet<&str> = BTreeSet::new();
    for root in rb.jobs.keys() {
        let mut stack = vec![(root.as_str(), false)];
        while let Some((job, expanded)) = stack.pop() {
            if out.contains_key(job) {
                continue;
            }
            if expanded {
                let mut r = Reach { depth: 0, made: 1 };
                for c in children(job) {
                    // A job in a cycle (which the loader refuses) counts for nothing.
                    let Some(cr) = out.get(c) else { continue };
                    r.depth = r.depth.max(cr.depth + 1);
                    r.made = r.made.saturating_add(cr.made);
                }
                open.remove(job);
                out.insert(job.to_owned(), r);
            } else if open.insert(job) {
                stack.push((job, true));
                stack.extend(children(job).into_iter().filter(|c| !open.contains(c)).map(|c| (c, false)));
            }
        }
    }
    out
}

/// The command's arguments by name: positionals in order, `--option value`, `--flag`, and the
/// command's defaults for what is not given.
fn parse_args(
    name: &str,
    spec: &ArgsSpec,
    defaults: &BTreeMap<String, String>,
    given: &[String],
) -> Result<BTreeMap<String, String>, LowerError> {
    let fail = |message: String| LowerError::Args { message, usage: usage(name, spec) };
    let mut vars = defaults.clone();
    let mut positional = spec.positional.iter();
    let mut given = given.iter();
    while let Some(a) = given.next() {
        if let Some(opt) = a.strip_prefix("--") {
            match spec.options.iter().find(|(o, _)| o == opt) {
                Some((o, Some(_))) => {
                    let v = given.next().ok_or_else(|| fail(format!("--{o} needs a value")))?;
                    vars.insert(o.clone(), v.clone());
                }
                Some((o, None)) => {
                    vars.insert(o.clone(), "true".into());
                }
                None => return Err(fail(format!("unknown option --{opt}"))),
            }
        } else {
            let p = positional.next().ok_or_else(|| fail(format!("too many arguments ({a:?})")))?;
            vars.insert(p.clone(), a.clone());
        }
    }
    if let Some(missing) = positional.next() {
        return Err(fail(format!("missing <{missing}>")));
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
