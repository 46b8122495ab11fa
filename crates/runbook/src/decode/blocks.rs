//! The blocks of a runbook that say what runs: `command`, `job` (or `pipeline`) with its steps,
//! and `agent` with its runtime.

use bosun_core::{Policy, RuntimeAsk, WorkspaceAsk};

use super::{boolean, duration, json, number, string, strings, words, Fields, Problems};
use crate::model::{AgentDef, ArgsSpec, Command, Job, Notify, Run, Source, Step, Transition, DEFAULT_MAX_STEP_VISITS};
use crate::syntax::{Node, Value};

pub(super) fn command(name: &str, node: &Node, p: &mut Problems) -> Option<Command> {
    let mut f = Fields::of(node, format!("command {name:?}"), p)?;
    let args = match f.take("args", &[]) {
        Some(n) => string(n, "args", p)
            .and_then(|s| args_spec(&s).map_err(|e| p.at(&n.span, e.to_string())).ok())
            .unwrap_or_default(),
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

/// A word of a command's `args` that is none of its forms.
#[derive(Debug, thiserror::Error)]
#[error("args: {0:?} is neither <name>, [--option <value>] nor [--flag]")]
struct BadArg(String);

/// `<name> <instructions> [--base <branch>] [--draft]`.
fn args_spec(text: &str) -> Result<ArgsSpec, BadArg> {
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
            return Err(BadArg(w.to_owned()));
        }
    }
    Ok(spec)
}

pub(super) fn run(node: &Node, p: &mut Problems) -> Option<Run> {
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

pub(super) fn job(name: &str, node: &Node, pipeline: bool, p: &mut Problems) -> Option<Job> {
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
    let budget = f.take("budget", &[]).and_then(|n| super::budget(n, p));
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
        budget,
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
/// An agent's `runtime` that is none bosun has, or one whose options are wrong; each says
/// where and what it takes.
#[derive(Debug, thiserror::Error)]
enum BadRuntime {
    #[error(
        "runtime {0} is not one bosun has: \"local\", \"sandbox\", {{ sandbox = {{ network = false }} }}, \
         {{ docker = {{ image = \"…\", cpus = 2, memory = \"2g\", network = true }} }} or \
         {{ k8s = {{ image = \"…\", namespace = \"…\", storage = \"10g\", … }} }}"
    )]
    Unknown(serde_json::Value),
    /// A runtime's option it does not have: the runtime, the option, the ones it has.
    #[error("runtime.{0} has no {1:?}: {2}")]
    NoOption(&'static str, String, String),
    #[error("runtime.{0} needs an image (image = \"…\"){1}")]
    NoImage(&'static str, &'static str),
    /// An option of the wrong kind: where, what it must be, what it is.
    #[error("runtime.{0} must be {1}, not {2}")]
    Wrong(String, &'static str, serde_json::Value),
    #[error("runtime.k8s.{0} {1:?} is not a Kubernetes name (lowercase letters, digits and '-', at most 63)")]
    NotAName(String, String),
    #[error("runtime.k8s.{0}: {1}")]
    Resource(String, bosun_core::BadResource),
    #[error("{0}")]
    Resources(bosun_core::BadResource),
}

fn k8s_runtime(opts: &serde_json::Map<String, serde_json::Value>) -> Result<bosun_core::Pod, BadRuntime> {
    use serde_json::Value;
    const KEYS: [&str; 9] =
        ["image", "namespace", "cpus", "memory", "storage", "node_selector", "service_account", "secrets", "bosun"];
    if let Some(k) = opts.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(BadRuntime::NoOption("k8s", k.clone(), KEYS.join(", ")));
    }
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let string = |key: &str| match opts.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
        Some(other) => Err(BadRuntime::Wrong(format!("k8s.{key}"), "a non-empty string", other.clone())),
    };
    let name = |what: &str, n: String| {
        if bosun_core::Pod::is_dns_label(&n) {
            Ok(n)
        } else {
            Err(BadRuntime::NotAName(what.to_owned(), n))
        }
    };
    let image = string("image")?.ok_or(BadRuntime::NoImage("k8s", ", which holds the agent, git and bosun"))?;
    let namespace = name("namespace", string("namespace")?.unwrap_or_else(|| "default".into()))?;
    let service_account = string("service_account")?.map(|n| name("service_account", n)).transpose()?;
    let secrets = match opts.get("secrets") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => name("secrets", s.clone()),
                other => Err(BadRuntime::Wrong("k8s.secrets".into(), "names", other.clone())),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(BadRuntime::Wrong("k8s.secrets".into(), "a list of names", other.clone())),
    };
    let node_selector = match opts.get("node_selector") {
        None => Default::default(),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                other => Err(BadRuntime::Wrong(format!("k8s.node_selector.{k}"), "a string", other.clone())),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(BadRuntime::Wrong("k8s.node_selector".into(), "a table of labels", other.clone())),
    };
    let size = |key: &str| {
        opts.get(key)
            .map(|v| bosun_core::Container::memory(&text(v)).map_err(|e| BadRuntime::Resource(key.to_owned(), e)))
            .transpose()
    };
    let cpus_milli = opts
        .get("cpus")
        .map(|v| bosun_core::Container::cpus(&text(v)).map_err(|e| BadRuntime::Resource("cpus".into(), e)))
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

fn runtime(value: &serde_json::Value) -> Result<bosun_core::Runtime, BadRuntime> {
    use bosun_core::{Container, Runtime};
    use serde_json::Value;
    let unknown = || BadRuntime::Unknown(value.clone());
    if let Some(Value::Object(opts)) = value.get(RuntimeAsk::K8s.name()) {
        return k8s_runtime(opts).map(Runtime::K8s);
    }
    if let Some(Value::Object(opts)) = value.get(RuntimeAsk::Docker.name()) {
        if let Some(k) = opts.keys().find(|k| !["image", "cpus", "memory", "network"].contains(&k.as_str())) {
            return Err(BadRuntime::NoOption("docker", k.clone(), "image, cpus, memory, network".into()));
        }
        let image = match opts.get("image") {
            Some(Value::String(i)) if !i.trim().is_empty() => i.clone(),
            _ => return Err(BadRuntime::NoImage("docker", "")),
        };
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let cpus_milli =
            opts.get("cpus").map(|v| Container::cpus(&text(v))).transpose().map_err(BadRuntime::Resources)?;
        let memory_bytes =
            opts.get("memory").map(|v| Container::memory(&text(v))).transpose().map_err(BadRuntime::Resources)?;
        let network = match opts.get("network") {
            None => true,
            Some(Value::Bool(b)) => *b,
            Some(other) => return Err(BadRuntime::Wrong("docker.network".into(), "true or false", other.clone())),
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
                Some(other) => Err(BadRuntime::Wrong("sandbox.network".into(), "true or false", other.clone())),
            },
            _ => Err(unknown()),
        },
        _ => Err(unknown()),
    }
}

pub(super) fn agent(name: &str, node: &Node, p: &mut Problems) -> Option<AgentDef> {
    let mut f = Fields::of(node, format!("agent {name:?}"), p)?;
    let command = f.take("run", &["command"]).map(|n| words(n, "run", p)).unwrap_or_else(|| vec!["claude".into()]);
    let driver = f.take("driver", &[]).and_then(|n| string(n, "driver", p)).and_then(|d| d.parse().ok());
    let prompt = f.take("prompt", &[]).and_then(|n| string(n, "prompt", p));
    let prompt_file = f.take("prompt_file", &[]).and_then(|n| string(n, "prompt_file", p));
    let env = f.take("env", &[]).map(|n| strings(n, "env", p)).unwrap_or_default();
    let cwd = f.take("cwd", &[]).and_then(|n| string(n, "cwd", p));
    let context = f.take("context", &[]).and_then(|n| string(n, "context", p));
    let account = f.take("account", &[]).and_then(|n| string(n, "account", p));
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
        parsed.map_err(|e| p.at(&n.span, e.to_string())).ok()
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
        ("budget", &[][..]),
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
    Some(AgentDef { span, command, driver, prompt, prompt_file, env, cwd, context, policy, backend, runtime, account })
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
