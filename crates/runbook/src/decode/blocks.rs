//! The blocks of a runbook: `command`, `job` (or `pipeline`), `agent`, `queue`, `worker`,
//! `cron`, each a table of named blocks.

use std::collections::BTreeMap;

use bosun_core::{Policy, RuntimeAsk, WorkspaceAsk};

use super::{boolean, duration, json, number, string, strings, words, Fields, Problems};
use crate::model::{
    AgentDef, ArgsSpec, Command, Cron, Job, Notify, Plan, PlanJob, Queue, QueueKind, Run, Runbook, Schedule, Source,
    Step, Transition, Worker, DEFAULT_MAX_STEP_VISITS, DEFAULT_POLL_MS,
};
use crate::syntax::{Node, Value};

pub fn decode_root(root: &Node, into: &mut Runbook, p: &mut Problems) {
    let Some(mut top) = Fields::of(root, "the runbook", p) else { return };
    if let Some(n) = top.take("command", &[]) {
        named(n, "command", p, |name, node, p| {
            command(name, node, p).map(|c| add(&mut into.commands, name, c, node, p))
        });
    }
    if let Some(n) = top.take("job", &[]) {
        named(n, "job", p, |name, node, p| job(name, node, false, p).map(|j| add(&mut into.jobs, name, j, node, p)));
    }
    if let Some(n) = top.take("pipeline", &[]) {
        named(n, "pipeline", p, |name, node, p| {
            job(name, node, true, p).map(|j| add(&mut into.jobs, name, j, node, p))
        });
    }
    if let Some(n) = top.take("agent", &[]) {
        named(n, "agent", p, |name, node, p| agent(name, node, p).map(|a| add(&mut into.agents, name, a, node, p)));
    }
    if let Some(n) = top.take("queue", &[]) {
        named(n, "queue", p, |name, node, p| queue(name, node, p).map(|q| add(&mut into.queues, name, q, node, p)));
    }
    if let Some(n) = top.take("worker", &[]) {
        named(n, "worker", p, |name, node, p| worker(name, node, p).map(|w| add(&mut into.workers, name, w, node, p)));
    }
    if let Some(n) = top.take("cron", &[]) {
        named(n, "cron", p, |name, node, p| cron(name, node, p).map(|c| add(&mut into.crons, name, c, node, p)));
    }
    if let Some(n) = top.take("plan", &[]) {
        named(n, "plan", p, |name, node, p| plan(name, node, p).map(|c| add(&mut into.plans, name, c, node, p)));
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

fn command(name: &str, node: &Node, p: &mut Problems) -> Option<Command> {
    let mut f = Fields::of(node, format!("command {name:?}"), p)?;
    let args = match f.take("args", &[]) {
        Some(n) => {
            string(n, "args", p).and_then(|s| args_spec(&s).map_err(|e| p.at(&n.span, e)).ok()).unwrap_or_default()
        }
        None => ArgsSpec::default(),
    };
    let defaults = f.take("defaults", &[]).map(|n| strings(n, "defaults", p)).unwrap_or_default();
    let run = f.take("run", &[]).and_then(|n| run(n, p));
    if run.is_none() {
        p.at(f.span(), format!("{} needs `run` (a shell command, {{ job = … }} or {{ agent = … }})", f.what()));
    }
    let span = node.span.clone();
    f.finish(p);
    Some(Command { span, args, defaults, run: run? })
}

/// `<name> <instructions> [--base <branch>] [--draft]`.
fn args_spec(text: &str) -> Result<ArgsSpec, String> {
    let mut spec = ArgsSpec::default();
    let mut words = text.split_whitespace().peekable();
    while let Some(w) = words.next() {
        let bare = w.trim_start_matches('[').trim_end_matches(']');
        if let Some(opt) = bare.strip_prefix("--") {
            let value = match words.peek() {
                Some(v) if v.starts_with('<') => words.next().map(|v| v.trim_matches(['<', '>', ']']).to_owned()),
                _ => None,
            };
            spec.options.push((opt.to_owned(), value));
        } else if bare.starts_with('<') && bare.ends_with('>') {
            spec.positional.push(bare.trim_matches(['<', '>']).to_owned());
        } else {
            return Err(format!("args: {w:?} is neither <name>, [--option <value>] nor [--flag]"));
        }
    }
    Ok(spec)
}

fn run(node: &Node, p: &mut Problems) -> Option<Run> {
    match &node.value {
        Value::Str(s) => Some(Run::Shell(s.clone())),
        Value::Map(_) => {
            let mut f = Fields::of(node, "run", p)?;
            let agent = f.take("agent", &[]).and_then(|n| string(n, "run.agent", p));
            let job = f.take("job", &[]).and_then(|n| string(n, "run.job", p));
            let pr = f.take("pr", &[]).map(|n| {
                let mut g = Fields::of(n, "run.pr", p)?;
                let draft = g.take("draft", &[]).and_then(|d| boolean(d, "run.pr.draft", p)).unwrap_or(false);
                g.finish(p);
                Some(draft)
            });
            f.finish(p);
            match (agent, job, pr) {
                (Some(a), None, None) => Some(Run::Agent(a)),
                (None, Some(j), None) => Some(Run::Job(j)),
                (None, None, Some(Some(draft))) => Some(Run::Pr { draft }),
                (None, None, Some(None)) => None,
                _ => {
                    p.at(&node.span, "run must name exactly one of agent, job and pr");
                    None
                }
            }
        }
        _ => {
            p.at(
                &node.span,
                format!(
                    "run must be a shell command or {{ agent = … }} / {{ job = … }} / {{ pr = {{ … }} }}, not {}",
                    node.kind()
                ),
            );
            None
        }
    }
}

fn transition(node: &Node, p: &mut Problems) -> Option<Transition> {
    match &node.value {
        Value::Str(s) if s == "done" => Some(Transition::Done),
        Value::Str(s) if s == "fail" => Some(Transition::Fail),
        Value::Str(s) => Some(Transition::Step { name: s.clone(), span: node.span.clone() }),
        Value::Map(_) => {
            let mut f = Fields::of(node, "the transition", p)?;
            let step = f.take("step", &[]).map(|n| (string(n, "step", p), n.span.clone()));
            f.finish(p);
            match step {
                Some((Some(name), span)) => Some(Transition::Step { name, span }),
                _ => {
                    p.at(&node.span, "a transition is { step = \"name\" }, \"done\" or \"fail\"");
                    None
                }
            }
        }
        _ => {
            p.at(
                &node.span,
                format!("a transition is {{ step = \"name\" }}, \"done\" or \"fail\", not {}", node.kind()),
            );
            None
        }
    }
}

fn job(name: &str, node: &Node, pipeline: bool, p: &mut Problems) -> Option<Job> {
    let kind = if pipeline { "pipeline" } else { "job" };
    let mut f = Fields::of(node, format!("{kind} {name:?}"), p)?;
    let vars = match f.take("vars", &[]) {
        Some(Node { value: Value::Map(_), .. }) | None => Vec::new(),
        Some(n) => words(n, "vars", p),
    };
    let mut defaults = f.take("defaults", &[]).map(|n| strings(n, "defaults", p)).unwrap_or_default();
    let locals = f.take("locals", &[]).map(|n| strings(n, "locals", p)).unwrap_or_default();
    let mut source = f.take("source", &["workspace"]).and_then(|n| source(n, p)).unwrap_or(Source::None);
    // Seed 000: a pipeline's defaults name its worktree's branch, with `{var}` placeholders.
    if pipeline {
        if let Some(branch) = defaults.remove("branch") {
            source = Source::Worktree { branch: Some(legacy_template(&branch)), base_ref: None };
        }
        if defaults.remove("workspace").is_some() && source == Source::None {
            source = Source::Worktree { branch: None, base_ref: None };
        }
    }
    let mut steps = Vec::new();
    if let Some(n) = f.take("step", &["steps"]) {
        if let Value::Map(entries) = &n.value {
            for e in entries {
                if let Some(s) = step(&e.key, &e.node, p) {
                    steps.push(s);
                }
            }
        } else {
            p.at(&n.span, "steps are named blocks: step \"name\" { … }");
        }
    }
    let on_done = f.take("on_done", &[]).and_then(|n| transition(n, p));
    let on_fail = f.take("on_fail", &[]).and_then(|n| transition(n, p));
    let notify = f.take("notify", &[]).map(|n| notify(n, p)).unwrap_or_default();
    let max_step_visits = f.take("max_step_visits", &[]).and_then(|n| number(n, "max_step_visits", p));
    let span = node.span.clone();
    f.finish(p);
    Some(Job {
        span,
        vars,
        defaults,
        locals,
        source,
        steps,
        on_done,
        on_fail,
        notify,
        max_step_visits: max_step_visits.unwrap_or(DEFAULT_MAX_STEP_VISITS),
    })
}

/// `{name}` (seed 000's placeholders) as `${var.name}`.
fn legacy_template(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find('{') {
        let dollar = rest[..i].ends_with('$');
        match rest[i..].find('}') {
            Some(j) if !dollar => {
                out.push_str(&rest[..i]);
                out.push_str(&format!("${{var.{}}}", &rest[i + 1..i + j]));
                rest = &rest[i + j + 1..];
            }
            _ => {
                out.push_str(&rest[..=i]);
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn source(node: &Node, p: &mut Problems) -> Option<Source> {
    match &node.value {
        Value::Str(s) if WorkspaceAsk::named(s).and_then(Source::asked).is_some() => {
            WorkspaceAsk::named(s).and_then(Source::asked)
        }
        Value::Map(_) => {
            let mut f = Fields::of(node, "source", p)?;
            let git = f.take("git", &[]).and_then(|n| boolean(n, "source.git", p)).unwrap_or(false);
            let pool = f.take("pool", &[]).and_then(|n| boolean(n, "source.pool", p)).unwrap_or(false);
            let branch = f.take("branch", &[]).and_then(|n| string(n, "source.branch", p));
            let base_ref = f.take("ref", &[]).and_then(|n| string(n, "source.ref", p));
            f.finish(p);
            if pool {
                if git || base_ref.is_some() {
                    p.at(&node.span, "source.pool takes no git or ref: a pool's workspaces start from its base");
                }
                return Some(Source::Pool { branch });
            }
            if !git && (branch.is_some() || base_ref.is_some()) {
                p.at(&node.span, "source.branch and source.ref need git = true");
            }
            Some(if git { Source::Worktree { branch, base_ref } } else { Source::Folder })
        }
        _ => {
            p.at(
                &node.span,
                "source is \"folder\", \"worktree\", \"pool\", { git = true, branch = …, ref = … } or { pool = true, branch = … }",
            );
            None
        }
    }
}

fn step(name: &str, node: &Node, p: &mut Problems) -> Option<Step> {
    let mut f = Fields::of(node, format!("step {name:?}"), p)?;
    let run = f.take("run", &[]).and_then(|n| run(n, p));
    if run.is_none() {
        p.at(f.span(), format!("{} needs `run`", f.what()));
    }
    let on_done = f.take("on_done", &[]).and_then(|n| transition(n, p));
    let on_fail = f.take("on_fail", &[]).and_then(|n| transition(n, p));
    let on_cancel = f.take("on_cancel", &[]).and_then(|n| transition(n, p));
    let attempts = f.take("attempts", &[]).and_then(|n| number(n, "attempts", p)).unwrap_or(1);
    let backoff_ms = f.take("backoff", &[]).and_then(|n| duration(n, "backoff", p)).unwrap_or(0);
    let span = node.span.clone();
    f.finish(p);
    Some(Step { name: name.to_owned(), span, run: run?, on_done, on_fail, on_cancel, attempts, backoff_ms })
}

fn notify(node: &Node, p: &mut Problems) -> Notify {
    let Some(mut f) = Fields::of(node, "notify", p) else { return Notify::default() };
    let n = Notify {
        on_start: f.take("on_start", &[]).and_then(|n| string(n, "notify.on_start", p)),
        on_done: f.take("on_done", &[]).and_then(|n| string(n, "notify.on_done", p)),
        on_fail: f.take("on_fail", &[]).and_then(|n| string(n, "notify.on_fail", p)),
        webhook: f.take("webhook", &[]).and_then(|n| {
            let text = string(n, "notify.webhook", p)?;
            bosun_core::WebhookUrl::parse(&text).map_err(|e| p.at(&n.span, format!("notify.{e}"))).ok()
        }),
    };
    f.finish(p);
    n
}

/// `runtime = "local" | "sandbox"`, `{ sandbox = { network = false } }`, or
/// `{ docker = { image = "…", cpus = 1.5, memory = "2g", network = false } }`.
/// `runtime = { k8s = { … } }`: the pod an agent runs in (see `bosun_core::Pod`); every name
/// the cluster takes is checked to be one it takes.
fn k8s_runtime(opts: &serde_json::Map<String, serde_json::Value>) -> Result<bosun_core::Pod, String> {
    use serde_json::Value;
    const KEYS: [&str; 9] =
        ["image", "namespace", "cpus", "memory", "storage", "node_selector", "service_account", "secrets", "bosun"];
    if let Some(k) = opts.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!("runtime.k8s has no {k:?}: {}", KEYS.join(", ")));
    }
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let string = |key: &str| match opts.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
        Some(other) => Err(format!("runtime.k8s.{key} must be a non-empty string, not {other}")),
    };
    let name = |what: &str, n: String| {
        if bosun_core::Pod::is_dns_label(&n) {
            Ok(n)
        } else {
            Err(format!(
                "runtime.k8s.{what} {n:?} is not a Kubernetes name (lowercase letters, digits and '-', at most 63)"
            ))
        }
    };
    let image =
        string("image")?.ok_or("runtime.k8s needs an image (image = \"…\"), which holds the agent, git and bosun")?;
    let namespace = name("namespace", string("namespace")?.unwrap_or_else(|| "default".into()))?;
    let service_account = string("service_account")?.map(|n| name("service_account", n)).transpose()?;
    let secrets = match opts.get("secrets") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => name("secrets", s.clone()),
                other => Err(format!("runtime.k8s.secrets holds names, not {other}")),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(format!("runtime.k8s.secrets must be a list of names, not {other}")),
    };
    let node_selector = match opts.get("node_selector") {
        None => Default::default(),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                other => Err(format!("runtime.k8s.node_selector.{k} must be a string, not {other}")),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(format!("runtime.k8s.node_selector must be a table of labels, not {other}")),
    };
    let size = |key: &str| {
        opts.get(key)
            .map(|v| bosun_core::Container::memory(&text(v)).map_err(|e| format!("runtime.k8s.{key}: {e}")))
            .transpose()
    };
    let cpus_milli = opts
        .get("cpus")
        .map(|v| bosun_core::Container::cpus(&text(v)).map_err(|e| format!("runtime.k8s.cpus: {e}")))
        .transpose()?;
    Ok(bosun_core::Pod {
        namespace,
        image,
        cpus_milli,
        memory_bytes: size("memory")?,
        node_selector,
        service_account,
        storage_bytes: size("storage")?,
        secrets,
        bosun: string("bosun")?.unwrap_or_else(bosun_core::Pod::default_bosun),
        source: None,
        claim: None,
    })
}

fn runtime(value: &serde_json::Value) -> Result<bosun_core::Runtime, String> {
    use bosun_core::{Container, Runtime};
    use serde_json::Value;
    let unknown = || {
        format!(
            "runtime {value} is not one bosun has: \"local\", \"sandbox\", {{ sandbox = {{ network = false }} }}, \
             {{ docker = {{ image = \"…\", cpus = 2, memory = \"2g\", network = true }} }} or \
             {{ k8s = {{ image = \"…\", namespace = \"…\", storage = \"10g\", … }} }}"
        )
    };
    if let Some(Value::Object(opts)) = value.get(RuntimeAsk::K8s.name()) {
        return k8s_runtime(opts).map(Runtime::K8s);
    }
    if let Some(Value::Object(opts)) = value.get(RuntimeAsk::Docker.name()) {
        if let Some(k) = opts.keys().find(|k| !["image", "cpus", "memory", "network"].contains(&k.as_str())) {
            return Err(format!("runtime.docker has no {k:?}: image, cpus, memory, network"));
        }
        let image = match opts.get("image") {
            Some(Value::String(i)) if !i.trim().is_empty() => i.clone(),
            _ => return Err("runtime.docker needs an image (image = \"…\")".into()),
        };
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let cpus_milli = opts.get("cpus").map(|v| Container::cpus(&text(v))).transpose()?;
        let memory_bytes = opts.get("memory").map(|v| Container::memory(&text(v))).transpose()?;
        let network = match opts.get("network") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(other) => return Err(format!("runtime.docker.network must be true or false, not {other}")),
        };
        return Ok(Runtime::Docker(Container { image, cpus_milli, memory_bytes, network, volume: None }));
    }
    match value {
        Value::String(s) if RuntimeAsk::named(s) == Some(RuntimeAsk::Local) => Ok(Runtime::Local),
        Value::String(s) if RuntimeAsk::named(s) == Some(RuntimeAsk::Sandbox) => Ok(Runtime::Sandbox { network: true }),
        Value::Object(o) if o.len() == 1 => match o.get(RuntimeAsk::Sandbox.name()) {
            Some(Value::Object(opts)) if opts.keys().all(|k| k == "network") => match opts.get("network") {
                None => Ok(Runtime::Sandbox { network: true }),
                Some(Value::Bool(network)) => Ok(Runtime::Sandbox { network: *network }),
                Some(other) => Err(format!("runtime.sandbox.network must be true or false, not {other}")),
            },
            _ => Err(unknown()),
        },
        _ => Err(unknown()),
    }
}

fn agent(name: &str, node: &Node, p: &mut Problems) -> Option<AgentDef> {
    let mut f = Fields::of(node, format!("agent {name:?}"), p)?;
    let command = f.take("run", &["command"]).map(|n| words(n, "run", p)).unwrap_or_else(|| vec!["claude".into()]);
    let driver = f.take("driver", &[]).and_then(|n| string(n, "driver", p)).and_then(|d| d.parse().ok());
    let prompt = f.take("prompt", &[]).and_then(|n| string(n, "prompt", p));
    let prompt_file = f.take("prompt_file", &[]).and_then(|n| string(n, "prompt_file", p));
    let env = f.take("env", &[]).map(|n| strings(n, "env", p)).unwrap_or_default();
    let cwd = f.take("cwd", &[]).and_then(|n| string(n, "cwd", p));
    let context = f.take("context", &[]).and_then(|n| string(n, "context", p));
    let backend = f.take("session", &[]).and_then(|n| {
        let text = string(n, "session", p)?;
        match text.as_str() {
            "tmux" => Some(bosun_core::SessionBackend::Tmux),
            "host" => Some(bosun_core::SessionBackend::Host),
            other => {
                p.at(&n.span, format!("session {other:?} is not one bosun has: \"tmux\" or \"host\""));
                None
            }
        }
    });
    let runtime = f.take("runtime", &[]).and_then(|n| {
        let parsed = runtime(&json(n));
        parsed.map_err(|e| p.at(&n.span, e)).ok()
    });
    let mut policy = serde_json::Map::new();
    for (key, aliases) in [
        ("on_idle", &[][..]),
        ("on_dead", &["on_exit"][..]),
        ("on_error", &[][..]),
        ("on_error_kind", &[][..]),
        ("on_prompt", &[][..]),
        ("on_idle_class", &[][..]),
        ("classify", &[][..]),
        ("grace", &[][..]),
        ("accept_trust", &[][..]),
        ("allow", &[][..]),
        ("deny", &[][..]),
    ] {
        if let Some(n) = f.take(key, aliases) {
            let value = per_class(key, json(n));
            match serde_json::from_value::<Policy>(value.clone()) {
                Ok(parsed) => {
                    let errors = parsed.classify.map(|c| c.errors()).unwrap_or_default();
                    for e in errors {
                        p.at(&n.span, format!("classify: {e}"));
                    }
                    if let serde_json::Value::Object(fields) = value {
                        policy.extend(fields);
                    }
                }
                Err(e) => p.at(&n.span, format!("{key}: {e}")),
            }
        }
    }
    let policy = serde_json::from_value(serde_json::Value::Object(policy)).unwrap_or_default();
    let span = node.span.clone();
    f.finish(p);
    if prompt.is_some() && prompt_file.is_some() {
        p.at(&span, format!("agent {name:?} has both prompt and prompt_file: keep one"));
    }
    let (backend, runtime) = (backend.unwrap_or_default(), runtime.unwrap_or_default());
    Some(AgentDef { span, command, driver, prompt, prompt_file, env, cwd, context, policy, backend, runtime })
}

/// A policy field as JSON. `on_idle` given as a table of turn classes (`done`, `question`, …,
/// and `other` for the rest) routes each class to its own chain: `on_idle_class`, with `other`
/// as `on_idle`.
fn per_class(key: &str, value: serde_json::Value) -> serde_json::Value {
    let serde_json::Value::Object(fields) = &value else { return serde_json::json!({ key: value }) };
    let classes =
        !fields.is_empty() && fields.keys().all(|k| k == "other" || bosun_core::TurnClass::parse(k).is_some());
    if key != "on_idle" || !classes {
        return serde_json::json!({ key: value });
    }
    let mut out = serde_json::Map::new();
    let routes: serde_json::Map<String, serde_json::Value> =
        fields.iter().filter(|(k, _)| *k != "other").map(|(k, v)| (k.clone(), v.clone())).collect();
    out.insert("on_idle_class".into(), serde_json::Value::Object(routes));
    if let Some(other) = fields.get("other") {
        out.insert("on_idle".into(), other.clone());
    }
    serde_json::Value::Object(out)
}

fn queue(name: &str, node: &Node, p: &mut Problems) -> Option<Queue> {
    let mut f = Fields::of(node, format!("queue {name:?}"), p)?;
    let retry = f.take("retry", &[]).and_then(|n| number(n, "retry", p));
    let list = f.take("list", &[]).and_then(|n| string(n, "list", p));
    let take = f.take("take", &[]).and_then(|n| string(n, "take", p));
    let poll = f.take("poll", &[]).and_then(|n| duration(n, "poll", p));
    let span = node.span.clone();
    f.finish(p);
    let kind = match list {
        Some(list) => QueueKind::External {
            list,
            take,
            poll_ms: poll.filter(|ms| *ms > 0).unwrap_or(DEFAULT_POLL_MS),
            retry: retry.unwrap_or(0),
        },
        None => {
            if take.is_some() || poll.is_some() {
                p.at(&span, format!("queue {name:?} has `take` or `poll` without `list`"));
            }
            QueueKind::Persisted { retry: retry.unwrap_or(3) }
        }
    };
    Some(Queue { span, kind })
}

fn worker(name: &str, node: &Node, p: &mut Problems) -> Option<Worker> {
    let mut f = Fields::of(node, format!("worker {name:?}"), p)?;
    let queue = f.take("queue", &[]).and_then(|n| string(n, "queue", p));
    let job = f.take("job", &[]).and_then(|n| string(n, "job", p));
    let concurrency = f.take("concurrency", &[]).and_then(|n| number(n, "concurrency", p)).unwrap_or(1);
    let span = node.span.clone();
    let what = f.what().to_owned();
    f.finish(p);
    match (queue, job) {
        (Some(queue), Some(job)) => Some(Worker { span, queue, job, concurrency: concurrency.max(1) }),
        _ => {
            p.at(&span, format!("{what} needs `queue` and `job`"));
            None
        }
    }
}

fn cron(name: &str, node: &Node, p: &mut Problems) -> Option<Cron> {
    let mut f = Fields::of(node, format!("cron {name:?}"), p)?;
    let every = f.take("every", &[]).and_then(|n| duration(n, "every", p));
    let expr = f.take("schedule", &[]).map(|n| (string(n, "schedule", p), n.span.clone()));
    let run = f.take("run", &[]).and_then(|n| run(n, p));
    let span = node.span.clone();
    let what = f.what().to_owned();
    f.finish(p);
    let schedule = match (every, expr) {
        (Some(ms), None) if ms > 0 => Schedule::Every { ms },
        (None, Some((Some(e), span))) => match Schedule::expr(&e) {
            Ok(s) => s,
            Err(error) => {
                p.at(&span, error.to_string());
                return None;
            }
        },
        _ => {
            p.at(&span, format!("{what} needs one of `every` (\"1h\") and `schedule` (\"0 3 * * *\")"));
            return None;
        }
    };
    match run {
        Some(run) => Some(Cron { span, schedule, run }),
        None => {
            p.at(&span, format!("{what} needs `run`"));
            None
        }
    }
}

/// A plan: its jobs in order; `using` may name only a job written earlier (a name used twice is
/// a syntax error in both formats).
fn plan(name: &str, node: &Node, p: &mut Problems) -> Option<Plan> {
    let mut f = Fields::of(node, format!("plan {name:?}"), p)?;
    let base = f.take("base", &[]).and_then(|n| string(n, "base", p));
    let concurrency = f.take("concurrency", &[]).and_then(|n| {
        let at = n.span.clone();
        number(n, "concurrency", p).filter(|c| {
            if *c == 0 || *c > 64 {
                p.at(&at, format!("plan {name:?}: concurrency is 1 to 64 jobs at once"));
            }
            (1..=64).contains(c)
        })
    });
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
    Some(Plan { span, base, concurrency, jobs })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_specs_read_positionals_options_and_flags() {
        let s = args_spec("<name> <instructions> [--base <branch>] [--draft]").unwrap();
        assert_eq!(s.positional, vec!["name", "instructions"]);
        assert_eq!(s.options, vec![("base".to_owned(), Some("branch".to_owned())), ("draft".to_owned(), None)]);
        assert!(args_spec("name").is_err());
    }

    #[test]
    fn legacy_placeholders_become_var_templates() {
        assert_eq!(legacy_template("build-{name}"), "build-${var.name}");
        assert_eq!(legacy_template("x-${var.y}"), "x-${var.y}");
    }
}
