//! Checks across a whole runbook: every name a block uses exists, every step can reach the end
//! of its job, and templates name only what their place provides.

use std::collections::{BTreeMap, BTreeSet};

use crate::decode::Problems;
use crate::model::{Job, Run, Runbook, Source, Transition};
use crate::syntax::Span;
use crate::template;

pub fn check(rb: &Runbook, p: &mut Problems) {
    for (name, c) in &rb.commands {
        run_ref(rb, &c.run, &c.span, &format!("command {name:?}"), p);
        reevaluation(&c.run, &c.span, &format!("command {name:?}"), p);
    }
    for (name, job) in &rb.jobs {
        check_job(rb, name, job, p);
    }
    for (name, w) in &rb.workers {
        if !rb.queues.contains_key(&w.queue) {
            p.at(&w.span, format!("worker {name:?} takes from queue {:?}, which is not defined", w.queue));
        }
        if !rb.jobs.contains_key(&w.job) {
            p.at(&w.span, format!("worker {name:?} runs job {:?}, which is not defined", w.job));
        }
    }
    for (name, c) in &rb.crons {
        run_ref(rb, &c.run, &c.span, &format!("cron {name:?}"), p);
        reevaluation(&c.run, &c.span, &format!("cron {name:?}"), p);
    }
    for (name, plan) in &rb.plans {
        for j in &plan.jobs {
            if !rb.jobs.contains_key(&j.job) {
                p.at(&j.span, format!("job {:?} of plan {name:?} runs job {:?}, which is not defined", j.name, j.job));
            }
        }
    }
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
        Run::Agent(a) if !rb.agents.contains_key(a) => {
            p.at(span, format!("{what} runs agent {a:?}, which is not defined"))
        }
        Run::Job(j) if !rb.jobs.contains_key(j) => p.at(span, format!("{what} runs job {j:?}, which is not defined")),
        _ => {}
    }
}

fn check_job(rb: &Runbook, name: &str, job: &Job, p: &mut Problems) {
    let steps: BTreeMap<&str, usize> = job.steps.iter().enumerate().map(|(i, s)| (s.name.as_str(), i)).collect();
    let mut edges: Vec<Vec<Option<usize>>> = Vec::new();
    for s in &job.steps {
        run_ref(rb, &s.run, &s.span, &format!("step {:?} of job {name:?}", s.name), p);
        if matches!(&s.run, Run::Job(j) if j == name) {
            p.at(&s.span, format!("step {:?} runs its own job {name:?}", s.name));
        }
        let mut out = Vec::new();
        // No on_done: the job is done after this step. No on_fail: the job fails. A cancel comes
        // from outside, so it is no way out of a loop; its target must exist all the same.
        if let Some(Transition::Step { name: to, span }) = &s.on_cancel {
            if !steps.contains_key(to.as_str()) {
                p.at(span, format!("no step {to:?} in job {name:?} (steps: {})", names(&steps)));
            }
        }
        for t in [&s.on_done, &s.on_fail] {
            match t {
                Some(Transition::Step { name: to, span }) => match steps.get(to.as_str()) {
                    Some(i) => out.push(Some(*i)),
                    None => p.at(span, format!("no step {to:?} in job {name:?} (steps: {})", names(&steps))),
                },
                _ => out.push(None),
            }
        }
        edges.push(out);
    }
    for t in [&job.on_done, &job.on_fail].into_iter().flatten() {
        if let Transition::Step { name: to, span } = t {
            if !steps.contains_key(to.as_str()) {
                p.at(span, format!("no step {to:?} in job {name:?} (steps: {})", names(&steps)));
            }
        }
    }
    // A step that can reach no ending of the job loops forever.
    let mut ends: BTreeSet<usize> = BTreeSet::new();
    loop {
        let before = ends.len();
        for (i, out) in edges.iter().enumerate() {
            if out.iter().any(|t| t.is_none_or(|j| ends.contains(&j))) {
                ends.insert(i);
            }
        }
        if ends.len() == before {
            break;
        }
    }
    for (i, s) in job.steps.iter().enumerate() {
        if !ends.contains(&i) {
            p.at(
                &s.span,
                format!("step {:?} of job {name:?} can never finish: every way out leads back into a loop", s.name),
            );
        }
    }
    check_templates(job, name, p);
}

/// Templates may name the job's vars, its locals, its source and workspace, args and item.
fn check_templates(job: &Job, name: &str, p: &mut Problems) {
    let declared: BTreeSet<&str> =
        job.vars.iter().map(String::as_str).chain(job.defaults.keys().map(String::as_str)).collect();
    let mut texts: Vec<(&str, &Span)> = Vec::new();
    for v in job.locals.values() {
        texts.push((v, &job.span));
    }
    if let Source::Worktree { branch, base_ref } = &job.source {
        texts.extend(branch.iter().chain(base_ref).map(|t| (t.as_str(), &job.span)));
    }
    for s in &job.steps {
        if let Run::Shell(cmd) = &s.run {
            texts.push((cmd, &s.span));
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
}

fn names(steps: &BTreeMap<&str, usize>) -> String {
    let mut v: Vec<&&str> = steps.keys().collect();
    v.sort();
    v.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
}
