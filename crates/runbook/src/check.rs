//! Checks across a whole runbook: every name a block uses exists, every step can reach the end
//! of its job, no job runs itself (directly or through other jobs), no local is made of itself,
//! and templates name only what their place provides. Every check is linear in the runbook's
//! size, and every list an error message quotes is capped.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Display;

use crate::decode::{Problem, Problems};
use crate::model::{Job, Run, Runbook, Source, Step, Transition};
use crate::syntax::Span;
use crate::template;

/// How many items of a list an error message quotes before saying how many more there are.
pub const LISTED: usize = 10;

/// Checks the blocks of `own` (one file's) against `all` (the whole runbook's).
pub fn check(all: &Runbook, own: &Runbook, p: &mut Problems) {
    for (name, c) in &own.commands {
        run_ref(all, &c.run, &c.span, &format!("command {name:?}"), p);
        reevaluation(&c.run, &c.span, &format!("command {name:?}"), p);
    }
    for (name, job) in &own.jobs {
        check_job(all, name, job, p);
    }
    for (name, w) in &own.workers {
        if !all.queues.contains_key(&w.queue) {
            p.at(&w.span, format!("worker {name:?} takes from queue {:?}, which is not defined", w.queue));
        }
        if !all.jobs.contains_key(&w.job) {
            p.at(&w.span, format!("worker {name:?} runs job {:?}, which is not defined", w.job));
        }
    }
    for (name, c) in &own.crons {
        run_ref(all, &c.run, &c.span, &format!("cron {name:?}"), p);
        reevaluation(&c.run, &c.span, &format!("cron {name:?}"), p);
    }
    for (name, plan) in &own.plans {
        for j in &plan.jobs {
            if !all.jobs.contains_key(&j.job) {
                p.at(&j.span, format!("job {:?} of plan {name:?} runs job {:?}, which is not defined", j.name, j.job));
            }
            if let Some(t) = j.keep_best.as_ref().and_then(judge_template) {
                p.at(
                    &j.span,
                    format!(
                        "job {:?} of plan {name:?}: keep_best runs its command as it is written, with no values to \
                         fill in, so `${{{t}}}` would reach the shell as it is; write the value itself (the variants \
                         are listed in $BOSUN_VARIANTS)",
                        j.name
                    ),
                );
            }
        }
        let branches: Vec<bosun_core::PlanJobBranch<'_>> = plan
            .jobs
            .iter()
            .map(|j| bosun_core::PlanJobBranch {
                name: &j.name,
                branch: j.branch.as_deref(),
                variants: j.variants.unwrap_or(1),
            })
            .collect();
        for problem in bosun_core::plan_branch_problems(&branches) {
            p.at(&plan.span, format!("in plan {name:?}: {problem}"));
        }
    }
}

/// `text` with each `${…}` as the word `x`.
fn placeholders(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        out.push('x');
        let after = &rest[i + 2..];
        rest = after.find('}').map_or("", |end| &after[end + 1..]);
    }
    out.push_str(rest);
    out
}

/// A bosun template (`${ns.key}`) in a judge's command, which is run as written: a shell's own
/// `${NAME}` holds no dot.
fn judge_template(judge: &bosun_core::Judge) -> Option<String> {
    let text = match judge {
        bosun_core::Judge::Command { command } => command,
        bosun_core::Judge::Gate { gate } => gate,
        bosun_core::Judge::Person => return None,
    };
    let mut rest = text.as_str();
    while let Some(i) = rest.find("${") {
        let after = &rest[i + 2..];
        let inner = &after[..after.find('}').unwrap_or(after.len())];
        if inner.contains('.') {
            return Some(inner.chars().take(60).collect());
        }
        rest = after;
    }
    None
}

/// Jobs that run themselves through steps that run jobs (`job "a" → job "b" → job "a"`): each
/// cycle once, as the job whose step closes it and a problem at that step.
pub fn job_cycles(rb: &Runbook) -> Vec<(&str, Problem)> {
    let runs = |job: &str| -> Vec<(&str, &Step)> { rb.jobs_run_by(job).map(|(s, j)| (j, s)).collect() };
    cycles(rb.jobs.keys().map(String::as_str), runs, "job")
        .into_iter()
        .map(|(job, step, ring)| {
            let message = format!(
                "step {:?} of job {job:?} runs a job that leads back to it: {ring}; a job may not run itself, \
                 directly or through other jobs",
                step.name
            );
            (job, Problem { span: step.span.clone(), message })
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mark {
    New,
    /// On the walk's path, at this depth.
    OnPath(usize),
    Done,
}

/// The cycles of a graph of names, by a depth-first walk (iterative, so a long chain cannot
/// overflow the stack): for each edge that closes one, the name it leaves, the edge, and the
/// cycle written as `kind "a" → kind "b" → kind "a"`. Edges to names not in `nodes` are ignored.
fn cycles<'a, E: Copy>(
    nodes: impl Iterator<Item = &'a str>,
    edges: impl Fn(&'a str) -> Vec<(&'a str, E)>,
    kind: &str,
) -> Vec<(&'a str, E, String)> {
    let order: Vec<&str> = nodes.collect();
    let mut mark: HashMap<&str, Mark> = order.iter().map(|n| (*n, Mark::New)).collect();
    let mut found = Vec::new();
    for start in order {
        if mark.get(start) != Some(&Mark::New) {
            continue;
        }
        mark.insert(start, Mark::OnPath(0));
        let mut path = vec![(start, edges(start), 0)];
        while let Some((node, out, next)) = path.last_mut() {
            let (node, edge) = (*node, out.get(*next).copied());
            *next += 1;
            let Some((to, e)) = edge else {
                mark.insert(node, Mark::Done);
                path.pop();
                continue;
            };
            match mark.get(to) {
                Some(Mark::New) => {
                    mark.insert(to, Mark::OnPath(path.len()));
                    path.push((to, edges(to), 0));
                }
                Some(Mark::OnPath(at)) => {
                    let around = path[*at..].iter().map(|(n, _, _)| n).chain([&to]);
                    let ring = capped(around.map(|n| format!("{kind} {n:?}")), path.len() - at + 1, " → ");
                    found.push((node, e, ring));
                }
                _ => {}
            }
        }
    }
    found
}

/// `items` joined by `sep`, the first [`LISTED`] of them and then how many more there are.
pub fn capped(items: impl Iterator<Item = impl Display>, len: usize, sep: &str) -> String {
    let mut out: Vec<String> = items.take(LISTED).map(|i| i.to_string()).collect();
    if len > LISTED {
        out.push(format!("… and {} more", len - LISTED));
    }
    out.join(sep)
}

/// A shell command run directly may not hand a template to another shell.
fn reevaluation(run: &Run, span: &Span, what: &str, p: &mut Problems) {
    if let Some(line) = match run {
        Run::Shell(text) => template::unsafe_reevaluation(text),
        _ => None,
    } {
        p.at(span, format!("in {what}: {}", template::reevaluation_error(&line)));
    }
}

fn run_ref(rb: &Runbook, run: &Run, span: &Span, what: &str, p: &mut Problems) {
    match run {
        Run::Pr { .. } if !what.starts_with("step") => {
            p.at(span, format!("{what} opens a pull request, which is a job's step (its branch is the job's)"))
        }
        Run::Agent(a) if !rb.agents.contains_key(a) => {
            p.at(span, format!("{what} runs agent {a:?}, which is not defined"))
        }
        Run::Job(j) if !rb.jobs.contains_key(j) => p.at(span, format!("{what} runs job {j:?}, which is not defined")),
        _ => {}
    }
}

fn check_job(rb: &Runbook, name: &str, job: &Job, p: &mut Problems) {
    let steps: HashMap<&str, usize> = job.steps.iter().enumerate().map(|(i, s)| (s.name.as_str(), i)).collect();
    let unknown = |to: &str| {
        let names = capped(job.steps.iter().map(|s| &s.name), job.steps.len(), ", ");
        format!("no step {to:?} in job {name:?} (steps: {names})")
    };
    // Which steps each step can go to next; a step that ends the job can finish.
    let mut before: Vec<Vec<usize>> = vec![Vec::new(); job.steps.len()];
    let mut finishes = vec![false; job.steps.len()];
    for (i, s) in job.steps.iter().enumerate() {
        run_ref(rb, &s.run, &s.span, &format!("step {:?} of job {name:?}", s.name), p);
        // No on_done: the job is done after this step. No on_fail: the job fails. A cancel comes
        // from outside, so it is no way out of a loop; its target must exist all the same.
        if let Some(Transition::Step { name: to, span }) = &s.on_cancel {
            if !steps.contains_key(to.as_str()) {
                p.at(span, unknown(to));
            }
        }
        for t in [&s.on_done, &s.on_fail] {
            match t {
                Some(Transition::Step { name: to, span }) => match steps.get(to.as_str()) {
                    Some(j) => before[*j].push(i),
                    None => p.at(span, unknown(to)),
                },
                _ => finishes[i] = true,
            }
        }
    }
    for t in [&job.on_done, &job.on_fail].into_iter().flatten() {
        if let Transition::Step { name: to, span } = t {
            if !steps.contains_key(to.as_str()) {
                p.at(span, unknown(to));
            }
        }
    }
    // A step that can reach no ending of the job loops forever: walk back from the endings.
    let mut todo: Vec<usize> = (0..job.steps.len()).filter(|i| finishes[*i]).collect();
    while let Some(j) = todo.pop() {
        for &i in &before[j] {
            if !finishes[i] {
                finishes[i] = true;
                todo.push(i);
            }
        }
    }
    for (s, _) in job.steps.iter().zip(&finishes).filter(|(_, f)| !**f) {
        p.at(
            &s.span,
            format!("step {:?} of job {name:?} can never finish: every way out leads back into a loop", s.name),
        );
    }
    check_templates(job, name, p);
    // Agents in pods take the job's workspace there (see `bosun_core::JobAsk::check`).
    let agents = job.steps.iter().filter_map(|s| match &s.run {
        Run::Agent(a) => rb.agents.get(a).map(|def| (a.as_str(), &def.runtime)),
        _ => None,
    });
    let steps = job.steps.iter().map(|s| (s.name.as_str(), &s.run));
    let ask = bosun_core::JobAsk {
        job: name,
        source: &job.source,
        as_step: false,
        in_plan: false,
        steps: steps.collect(),
        agents: agents.collect(),
    };
    if let Err(refused) = ask.check() {
        p.at(&job.span, refused.to_string());
    }
}

/// Templates may name the job's vars, its locals, its source and workspace, args and item; a
/// local may not be made of itself, directly or through other locals.
fn check_templates(job: &Job, name: &str, p: &mut Problems) {
    let declared: BTreeSet<&str> =
        job.vars.iter().map(String::as_str).chain(job.defaults.keys().map(String::as_str)).collect();
    let mut texts: Vec<(&str, &Span)> = Vec::new();
    for v in job.locals.values() {
        texts.push((v, &job.span));
    }
    match &job.source {
        Source::Worktree { branch, base_ref } => {
            texts.extend(branch.iter().chain(base_ref).map(|t| (t.as_str(), &job.span)))
        }
        Source::Pool { branch } => texts.extend(branch.iter().map(|t| (t.as_str(), &job.span))),
        Source::None | Source::Folder => {}
    }
    for s in &job.steps {
        if let Run::Shell(cmd) = &s.run {
            texts.push((cmd, &s.span));
        }
    }
    // A branch no value could make a name git takes (its templates stand for a plain word).
    if let Source::Worktree { branch: Some(b), .. } | Source::Pool { branch: Some(b) } = &job.source {
        let plain = placeholders(b);
        if let Some(why) = bosun_core::branch_problem(&plain) {
            p.at(&job.span, format!("in job {name:?}: no branch {b:?} can be made: {why}"));
        }
    }
    for (text, span) in texts {
        // A template another shell parses again would run its value as a command.
        if let Some(line) = template::unsafe_reevaluation(text) {
            p.at(span, format!("in job {name:?}: {}", template::reevaluation_error(&line)));
        }
        match template::names(text) {
            Err(e) => p.at(span, format!("in job {name:?}: {e}")),
            Ok(used) => {
                for n in used {
                    let (ns, key) = n.split_once('.').unwrap_or_default();
                    let known = match ns {
                        "var" => declared.contains(key) || declared.is_empty(),
                        "local" => job.locals.contains_key(key),
                        "args" | "source" | "workspace" | "item" => true,
                        _ => false,
                    };
                    if !known {
                        p.at(span, format!("in job {name:?}: `${{{n}}}` names nothing this job defines"));
                    }
                }
            }
        }
    }
    let uses = |local: &str| -> Vec<(&str, ())> {
        let text = job.locals.get(local).map_or("", String::as_str);
        let names = template::names(text).unwrap_or_default();
        let locals = names.iter().filter_map(|n| n.strip_prefix("local."));
        locals.filter_map(|l| job.locals.get_key_value(l)).map(|(l, _)| (l.as_str(), ())).collect()
    };
    for (_, (), ring) in cycles(job.locals.keys().map(String::as_str), uses, "local") {
        p.at(&job.span, format!("in job {name:?}: locals are made of each other: {ring}; a local may not use itself"));
    }
}
