//! The `plan` block: jobs in order, each maybe run as variants of which one is kept.

use super::blocks::run;
use super::{number, string, strings, words, Fields, Problems};
use crate::model::{Plan, PlanJob, Run};
use crate::syntax::{Node, Value};

/// A plan: its jobs in order; `using` may name only a job written earlier (a name used twice is
/// a syntax error in both formats).
pub(super) fn plan(name: &str, node: &Node, p: &mut Problems) -> Option<Plan> {
    let mut f = Fields::of(node, format!("plan {name:?}"), p)?;
    let base = f.take("base", &[]).and_then(|n| string(n, "base", p));
    let concurrency = f.take("concurrency", &[]).and_then(|n| concurrency(name, n, p));
    let budget = f.take("budget", &[]).and_then(|n| super::budget(n, p));
    let entries = f.take("job", &["jobs"]);
    let span = node.span.clone();
    f.finish(p);
    let mut jobs: Vec<PlanJob> = Vec::new();
    let mut written = std::collections::HashSet::new();
    let Some(Node { value: Value::Map(entries), .. }) = entries else {
        p.at(&span, format!("plan {name:?} needs its jobs, in order: job \"name\" {{ run = {{ job = \"…\" }} }}"));
        return None;
    };
    for e in entries {
        if let Err(why) = bosun_core::Name::parse(&e.key) {
            p.at(&e.key_span, format!("plan job {why}"));
            continue;
        }
        let Some(mut g) = Fields::of(&e.node, format!("job {:?} of plan {name:?}", e.key), p) else { continue };
        let run = g.take("run", &[]).and_then(|n| run(n, p).map(|r| (r, n.span.clone())));
        let vars = g.take("vars", &[]).map(|n| strings(n, "vars", p)).unwrap_or_default();
        let using = g.take("using", &[]).map(|n| (words(n, "using", p), n.span.clone()));
        let branch = g.take("branch", &[]).and_then(|n| string(n, "branch", p));
        let engine = g.take("engine", &[]).and_then(|n| {
            let at = n.span.clone();
            let engine = string(n, "engine", p)?;
            if engine.is_empty() || engine.chars().any(|c| c.is_whitespace() || c.is_control()) {
                p.at(
                    &at,
                    format!("engine {engine:?} must be one program (`claude`, `codex` or a path), with no spaces"),
                );
                return None;
            }
            Some(engine)
        });
        let variants = g.take("variants", &[]).and_then(|n| {
            let at = n.span.clone();
            number(n, "variants", p).filter(|v| {
                let ok = (2..=9).contains(v);
                if !ok {
                    p.at(&at, "variants is 2 to 9 runs at once (leave it out for one)".to_owned());
                }
                ok
            })
        });
        let keep_best = g.take("keep_best", &[]).map(|n| (keep_best(n, p), n.span.clone()));
        let what = g.what().to_owned();
        g.finish(p);
        let keep_best = match (variants, keep_best) {
            (Some(_), Some((judge, _))) => judge,
            (Some(_), None) => {
                p.at(&e.node.span, format!("{what} runs variants: say which it keeps with keep_best = {{ gate = \"…\" }}, {{ command = \"…\" }} or \"person\""));
                None
            }
            (None, Some((_, at))) => {
                p.at(&at, format!("{what} has keep_best but no variants to keep one of"));
                None
            }
            (None, None) => None,
        };
        let job = match run {
            Some((Run::Job(job), _)) => job,
            Some((_, span)) => {
                p.at(&span, format!("{what} runs a job: run = {{ job = \"…\" }}"));
                continue;
            }
            None => {
                p.at(&e.node.span, format!("{what} needs `run = {{ job = \"…\" }}`"));
                continue;
            }
        };
        let (using, using_span) = using.unwrap_or_default();
        for u in &using {
            if !written.contains(u.as_str()) {
                p.at(&using_span, format!("{what} uses {u:?}, which is not a job written before it in the plan"));
            }
        }
        written.insert(e.key.as_str());
        jobs.push(PlanJob {
            span: e.node.span.clone(),
            name: e.key.clone(),
            job,
            vars,
            using,
            branch,
            engine,
            variants,
            keep_best,
        });
    }
    Some(Plan { span, base, concurrency, jobs, budget })
}

/// A plan's `concurrency`: 1 to 64 jobs at once.
fn concurrency(name: &str, n: &Node, p: &mut Problems) -> Option<u32> {
    let at = n.span.clone();
    number(n, "concurrency", p).filter(|c| {
        if *c == 0 || *c > 64 {
            p.at(&at, format!("plan {name:?}: concurrency is 1 to 64 jobs at once"));
        }
        (1..=64).contains(c)
    })
}

/// `keep_best`: `{ gate = "…" }`, `{ command = "…" }` or `"person"`.
fn keep_best(node: &Node, p: &mut Problems) -> Option<bosun_core::Judge> {
    let said = "keep_best is { gate = \"a command\" }, { command = \"a command\" } or \"person\"";
    match &node.value {
        Value::Str(s) if s == "person" => Some(bosun_core::Judge::Person),
        Value::Map(_) => {
            let mut f = Fields::of(node, "keep_best", p)?;
            let gate = f.take("gate", &[]).and_then(|n| string(n, "gate", p));
            let command = f.take("command", &[]).and_then(|n| string(n, "command", p));
            f.finish(p);
            match (gate, command) {
                (Some(gate), None) if !gate.trim().is_empty() => Some(bosun_core::Judge::Gate { gate }),
                (None, Some(command)) if !command.trim().is_empty() => Some(bosun_core::Judge::Command { command }),
                _ => {
                    p.at(&node.span, said.to_owned());
                    None
                }
            }
        }
        _ => {
            p.at(&node.span, said.to_owned());
            None
        }
    }
}
