//! From the syntax tree to the model: every field read by name, every unknown field, wrong type
//! and bad value reported at its place, all problems at once.

mod blocks;
mod plan;
mod queues;

use std::collections::BTreeMap;

use crate::model::Runbook;
use crate::syntax::{Entry, Node, Span, Value};

/// Something wrong at a place in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub span: Span,
    pub message: String,
}

/// Collects problems while decoding.
#[derive(Debug, Default)]
pub struct Problems(pub Vec<Problem>);

impl Problems {
    pub fn at(&mut self, span: &Span, message: impl Into<String>) {
        self.0.push(Problem { span: span.clone(), message: message.into() });
    }
}

/// The fields of one table, taken by name; whatever is left is unknown.
pub struct Fields<'a> {
    what: String,
    span: Span,
    entries: &'a [Entry],
    used: Vec<bool>,
    allowed: Vec<&'static str>,
}

impl<'a> Fields<'a> {
    /// The fields of `node`, which must be a table; `what` names it in messages ("job \"build\"").
    pub fn of(node: &'a Node, what: impl Into<String>, p: &mut Problems) -> Option<Self> {
        let what = what.into();
        match &node.value {
            Value::Map(entries) => Some(Self {
                what,
                span: node.span.clone(),
                entries,
                used: vec![false; entries.len()],
                allowed: Vec::new(),
            }),
            _ => {
                p.at(&node.span, format!("{what} must be a table, not {}", node.kind()));
                None
            }
        }
    }

    pub fn what(&self) -> &str {
        &self.what
    }

    pub fn span(&self) -> &Span {
        &self.span
    }

    /// The field named `key` or one of its `aliases`.
    pub fn take(&mut self, key: &'static str, aliases: &[&'static str]) -> Option<&'a Node> {
        self.allowed.push(key);
        let found = self.entries.iter().position(|e| e.key == key || aliases.contains(&e.key.as_str()))?;
        self.used[found] = true;
        Some(&self.entries[found].node)
    }

    /// Reports the fields nobody took.
    pub fn finish(self, p: &mut Problems) {
        for (e, used) in self.entries.iter().zip(&self.used) {
            if !used {
                p.at(
                    &e.key_span,
                    format!(
                        "unknown field `{}` in {} (expected one of: {})",
                        e.key,
                        self.what,
                        self.allowed.join(", ")
                    ),
                );
            }
        }
    }
}

pub fn string(node: &Node, what: &str, p: &mut Problems) -> Option<String> {
    match &node.value {
        Value::Str(s) => Some(s.clone()),
        _ => {
            p.at(&node.span, format!("{what} must be a string, not {}", node.kind()));
            None
        }
    }
}

pub fn number(node: &Node, what: &str, p: &mut Problems) -> Option<u32> {
    match &node.value {
        Value::Int(n) if (0..=i64::from(u32::MAX)).contains(n) => Some(*n as u32),
        _ => {
            p.at(&node.span, format!("{what} must be a whole number, not {}", node.kind()));
            None
        }
    }
}

pub fn boolean(node: &Node, what: &str, p: &mut Problems) -> Option<bool> {
    match &node.value {
        Value::Bool(b) => Some(*b),
        _ => {
            p.at(&node.span, format!("{what} must be true or false, not {}", node.kind()));
            None
        }
    }
}

/// A duration: "30s", "5m", "250ms", or a number of seconds.
pub fn duration(node: &Node, what: &str, p: &mut Problems) -> Option<u64> {
    match &node.value {
        Value::Int(n) if *n >= 0 => Some(*n as u64 * 1000),
        Value::Str(s) => bosun_core::parse_duration(s).map_err(|e| p.at(&node.span, format!("{what}: {e}"))).ok(),
        _ => {
            p.at(&node.span, format!("{what} must be a duration such as \"30s\", not {}", node.kind()));
            None
        }
    }
}

/// A table of strings (numbers and booleans are taken as their text).
pub fn strings(node: &Node, what: &str, p: &mut Problems) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Value::Map(entries) = &node.value else {
        p.at(&node.span, format!("{what} must be a table of strings, not {}", node.kind()));
        return out;
    };
    for e in entries {
        let text = match &e.node.value {
            Value::Str(s) => s.clone(),
            Value::Int(n) => n.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => {
                p.at(&e.node.span, format!("{what}.{} must be a string, not {}", e.key, e.node.kind()));
                continue;
            }
        };
        out.insert(e.key.clone(), text);
    }
    out
}

/// A list of strings, or one string split on whitespace.
pub fn words(node: &Node, what: &str, p: &mut Problems) -> Vec<String> {
    match &node.value {
        Value::Str(s) => s.split_whitespace().map(str::to_owned).collect(),
        Value::List(items) => items.iter().filter_map(|i| string(i, what, p)).collect(),
        _ => {
            p.at(&node.span, format!("{what} must be a string or a list of strings, not {}", node.kind()));
            Vec::new()
        }
    }
}

/// A budget (`"5usd"`, `"2Mtok"`, `{ usd = 5 }`, `{ tokens = 2000000 }`) on a job, plan or
/// worker; one that is none of these is refused at its line with the forms accepted.
pub(super) fn budget(node: &Node, p: &mut Problems) -> Option<bosun_core::budget::Budget> {
    serde_json::from_value::<bosun_core::budget::Budget>(json(node))
        .map_err(|e| p.at(&node.span, format!("budget: {e}")))
        .ok()
}

/// The tree as JSON, for the parts the core reads with serde (recovery policies).
pub fn json(node: &Node) -> serde_json::Value {
    match &node.value {
        Value::Str(s) => serde_json::Value::String(s.clone()),
        Value::Int(n) => serde_json::Value::from(*n),
        Value::Float(f) => serde_json::Value::from(*f),
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::List(items) => serde_json::Value::Array(items.iter().map(json).collect()),
        Value::Map(entries) => {
            serde_json::Value::Object(entries.iter().map(|e| (e.key.clone(), json(&e.node))).collect())
        }
    }
}

/// Decodes one file's tree into `into`; names already defined by another file are problems.
pub fn decode(root: &Node, into: &mut Runbook, p: &mut Problems) {
    let Some(mut top) = Fields::of(root, "the runbook", p) else { return };
    if let Some(n) = top.take("command", &[]) {
        named(n, "command", p, |name, node, p| {
            blocks::command(name, node, p).map(|c| add(&mut into.commands, name, c, node, p))
        });
    }
    if let Some(n) = top.take("job", &[]) {
        named(n, "job", p, |name, node, p| {
            blocks::job(name, node, false, p).map(|j| add(&mut into.jobs, name, j, node, p))
        });
    }
    if let Some(n) = top.take("pipeline", &[]) {
        named(n, "pipeline", p, |name, node, p| {
            blocks::job(name, node, true, p).map(|j| add(&mut into.jobs, name, j, node, p))
        });
    }
    if let Some(n) = top.take("agent", &[]) {
        named(n, "agent", p, |name, node, p| {
            blocks::agent(name, node, p).map(|a| add(&mut into.agents, name, a, node, p))
        });
    }
    if let Some(n) = top.take("queue", &[]) {
        named(n, "queue", p, |name, node, p| {
            queues::queue(name, node, p).map(|q| add(&mut into.queues, name, q, node, p))
        });
    }
    if let Some(n) = top.take("worker", &[]) {
        named(n, "worker", p, |name, node, p| {
            queues::worker(name, node, p).map(|w| add(&mut into.workers, name, w, node, p))
        });
    }
    if let Some(n) = top.take("cron", &[]) {
        named(n, "cron", p, |name, node, p| {
            queues::cron(name, node, p).map(|c| add(&mut into.crons, name, c, node, p))
        });
    }
    if let Some(n) = top.take("plan", &[]) {
        named(n, "plan", p, |name, node, p| plan::plan(name, node, p).map(|c| add(&mut into.plans, name, c, node, p)));
    }
    top.finish(p);
}

/// Calls `f` for every named block in a `kind` table.
fn named(node: &Node, kind: &str, p: &mut Problems, mut f: impl FnMut(&str, &Node, &mut Problems) -> Option<()>) {
    let Value::Map(entries) = &node.value else {
        p.at(&node.span, format!("`{kind}` must hold named blocks, such as {kind} \"name\" {{ … }}"));
        return;
    };
    for e in entries {
        if let Err(why) = bosun_core::Name::parse(&e.key) {
            p.at(&e.key_span, format!("{kind} {why}"));
            continue;
        }
        f(&e.key, &e.node, p);
    }
}

fn add<T>(map: &mut BTreeMap<String, T>, name: &str, value: T, node: &Node, p: &mut Problems) {
    if map.contains_key(name) {
        p.at(&node.span, format!("{name:?} is defined twice"));
    } else {
        map.insert(name.to_owned(), value);
    }
}
