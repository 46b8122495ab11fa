//! The commands that act on agents and workspaces.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::os::unix::process::CommandExt;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use bosun_core::driver::generic::Patterns;
use bosun_core::Name;
use bosun_wire::{HookEvent, Request, Response, StartAgent, WorkspaceChoice};
use serde::Serialize;

use crate::args::{
    AgentCommand, Colors, Command, HookCommand, RuntimeArg, StartArgs, TmuxHook, WorkspaceCommand, WorkspaceKindArg,
};
use crate::client::Client;
use crate::error::usage;
use crate::render;

pub fn run(client: &Client, command: Command) -> Result<()> {
    match command {
        Command::Agent(AgentCommand::Start(args)) => start(client, *args),
        Command::Ls(flag) => {
            let list = client.list()?;
            if flag.json {
                return print_json(&list);
            }
            if list.agents.is_empty() && list.workspaces.is_empty() {
                println!("no agents yet: start one with `bosun agent start -- COMMAND`");
                return Ok(());
            }
            println!("{}", render::agents_table(list.now, &list.agents, &list.workspaces));
            println!();
            println!("{}", render::workspaces_table(list.now, &list.workspaces));
            Ok(())
        }
        Command::Show { id, json } => {
            let d = client.show(id)?;
            if json {
                return print_json(&d);
            }
            let a = &d.agent;
            println!("agent      {} ({})", a.id, a.name);
            println!("state      {} for {}", a.state.label(), render::age(d.now, a.state_since.as_millis()));
            if let Some(asks) = &a.asks {
                println!("asks       {asks}");
            }
            println!("started    {} ago", render::age(d.now, a.created_at.as_millis()));
            println!("command    {}", a.command.join(" "));
            let pid = a.pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
            println!("session    {}{pid} in {}", a.session, a.backend.name());
            if !a.runtime.is_local() {
                println!("runtime    {}", a.runtime.label());
            }
            println!("output     {}", a.output_log().display());
            match &d.workspace {
                Some(w) => {
                    println!("workspace  {} ({}, {})", w.id, w.kind.label(), w.state.label());
                    match &w.kind {
                        // Nothing of it is on this machine: it is a clone in the agent's pod.
                        bosun_core::WorkspaceKind::Pod { remote, claim, .. } => {
                            let from = match remote {
                                Some(remote) => format!("cloned from {remote}"),
                                None => "sent as a git bundle, fetched back as one".to_owned(),
                            };
                            println!("path       {}/workspace in its pod, {from}", bosun_core::POD_ROOT);
                            if let Some(c) = claim {
                                println!("claim      {}/{}", c.namespace, c.name);
                            }
                        }
                        _ => println!("path       {}", w.path.display()),
                    }
                    if let Some(b) = w.branch() {
                        println!("branch     {b}");
                    }
                }
                None => println!("workspace  {} (removed)", a.workspace),
            }
            if let Some(pr) = &d.pull_request {
                let draft = if pr.draft { ", draft" } else { "" };
                println!("pr         {} ({} into {}{draft})", pr.url, pr.branch, pr.into);
            }
            if let Some(e) = &a.error {
                println!("error      {e}");
            }
            println!(
                "driver     {:?}{}",
                a.driver.kind(),
                a.source.map(|s| format!(" (known from {s:?})")).unwrap_or_default()
            );
            if let Some(log) = &a.log {
                println!("log        {}", log.display());
            }
            for (kind, at) in &a.heartbeats {
                println!("heartbeat  {:<16} {} ago", format!("{kind:?}"), render::age(d.now, at.as_millis()));
            }
            for (trigger, chain) in [
                ("on_idle", &a.policy.on_idle),
                ("on_dead", &a.policy.on_dead),
                ("on_error", &a.policy.on_error),
                ("on_prompt", &a.policy.on_prompt),
            ] {
                if !chain.is_empty() {
                    let steps: Vec<String> = chain.0.iter().map(ToString::to_string).collect();
                    println!("{trigger:<10} {}", steps.join(" → "));
                }
            }
            for (kind, chain) in &a.policy.on_error_kind {
                let steps: Vec<String> = chain.0.iter().map(ToString::to_string).collect();
                println!("on_error   {}: {}", kind.label(), steps.join(" → "));
            }
            for (class, chain) in &a.policy.on_idle_class {
                let steps: Vec<String> = chain.0.iter().map(ToString::to_string).collect();
                println!("on_idle    {class}: {}", steps.join(" → "));
            }
            for (label, rules) in [("allow", &a.policy.allow), ("deny", &a.policy.deny)] {
                if !rules.is_empty() {
                    let rules: Vec<String> = rules.iter().map(ToString::to_string).collect();
                    println!("{label:<10} {}", rules.join(", "));
                }
            }
            if let Some(mode) = &d.permission_mode {
                println!("mode       {}", mode.describe());
            }
            for p in &a.permissions {
                let verb = if p.answer.allows() { "allowed" } else { "denied" };
                let subject = p.subject.as_deref().map(|s| format!(" {s:?}")).unwrap_or_default();
                println!(
                    "permission {verb} {}{subject} by {} ({} ago)",
                    p.tool,
                    p.answer.rule(),
                    render::age(d.now, p.at.as_millis())
                );
            }
            if let Some(b) = &a.blocked {
                let ago = render::age(d.now, b.at.as_millis());
                println!("blocked    {} ({ago} ago, by its client's classifier)", b.call.describe());
            }
            if let Some(v) = &a.verdict {
                let rule = v.rule.as_ref().map(|r| format!(", rule {r}")).unwrap_or_default();
                let source = format!("{:?}", v.source).to_lowercase();
                println!("last turn  {} ({source}{rule})", v.class);
                if let Some(e) = &v.error {
                    println!("           {e}");
                }
            }
            for (trigger, p) in &a.recovery {
                println!("recovery   {trigger:?}: step {} used {}", p.step + 1, p.used);
            }
            if a.restarts > 0 {
                println!("restarts   {}", a.restarts);
            }
            if let Some(o) = a.outcome {
                println!("outcome    {o:?}");
            }
            for m in &d.messages {
                println!("message    {} {:?} {:?} {:?}", m.id, m.kind, m.text, m.state);
            }
            for e in &d.escalations {
                let state = if e.resolved.is_some() { "resolved" } else { "open" };
                println!("escalation {} ({state}) {}", e.id, e.reason);
            }
            Ok(())
        }
        Command::Merge { id, into, squash, rebase, message, commit, force, resolve_with_agent, wait, json } => {
            let how = match (squash, rebase) {
                (true, _) => bosun_core::MergeHow::Squash,
                (_, true) => bosun_core::MergeHow::Rebase,
                _ => bosun_core::MergeHow::Merge,
            };
            let ask = bosun_wire::MergeAsk { target: id, into, how, message, commit, force, resolve_with_agent };
            let done = match client.merge(Box::new(ask.clone()))? {
                crate::calls::MergeOutcome::Done(done) => done,
                crate::calls::MergeOutcome::AgentAsked { agent, message, files } => {
                    eprintln!(
                        "conflicts in {}: asked agent {agent} to resolve them on its branch; waiting for it (up to {wait} s)",
                        files.join(", ")
                    );
                    wait_until_idle_after(client, &agent.to_string(), message, std::time::Duration::from_secs(wait))?;
                    let again = bosun_wire::MergeAsk { resolve_with_agent: false, ..ask };
                    match client.merge(Box::new(again))? {
                        crate::calls::MergeOutcome::Done(done) => done,
                        crate::calls::MergeOutcome::AgentAsked { .. } => anyhow::bail!("the merge conflicts still"),
                    }
                }
            };
            if json {
                return print_json(&done);
            }
            let m = &done.merged;
            if m.already {
                println!("{} already holds {}", m.into, m.branch);
            } else {
                let what = if m.fast_forward { "fast-forward".to_owned() } else { m.how.label().to_owned() };
                println!("merged {} into {} ({what}): {} is at {}", m.branch, m.into, m.into, short(&m.commit));
            }
            for a in &done.ended {
                println!("ended    {a}");
            }
            match (&done.removed, &done.kept) {
                (Some(r), _) => {
                    println!("removed  {}", r.workspace);
                    if let Some(b) = &r.branch_deleted {
                        println!("deleted  branch {b}");
                    }
                    if let Some(k) = &r.branch_kept {
                        println!("kept     branch {} ({} commit(s) not in {})", k.branch, k.commits, m.into);
                    }
                }
                (None, Some(why)) => println!("kept its workspace: {why}"),
                (None, None) => {}
            }
            Ok(())
        }
        Command::Fork { id, name, prompt, json } => {
            let inherit =
                std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect();
            let s = client.fork(id, name, prompt, inherit)?;
            print_started(&s, json)
        }
        Command::Pr { id, into, title, draft, json } => {
            let (pr, warnings) = client.pr(Box::new(bosun_wire::PrAsk { target: id, into, title, draft }))?;
            for w in warnings {
                eprintln!("warning: {w}");
            }
            if json {
                return print_json(&pr);
            }
            let draft = if pr.draft { " (draft)" } else { "" };
            println!("pull request {}{draft}: {} into {}", pr.url, pr.branch, pr.into);
            Ok(())
        }
        Command::Diff { id, stat, colors, json } => {
            let colors = !json
                && match colors {
                    Colors::Auto => colors_wanted(std::io::stdout().is_terminal()),
                    Colors::Always => true,
                    Colors::Never => false,
                };
            let diff = client.diff(id, !stat, colors, false)?;
            if json {
                return print_json(&diff);
            }
            if stat || diff.files.is_empty() {
                for f in &diff.files {
                    let counts = match (f.added, f.removed) {
                        (Some(a), Some(r)) => format!("+{a} -{r}"),
                        _ => "binary".to_owned(),
                    };
                    let from = match &f.change {
                        bosun_core::Change::Renamed { from } => format!(" (from {from})"),
                        _ => String::new(),
                    };
                    println!("{} {}{from}  {counts}", f.change.letter(), f.path);
                }
                let (added, removed) = diff.totals();
                let on = diff.branch.as_deref().map(|b| format!(" on {b}")).unwrap_or_default();
                println!(
                    "{} commit(s), {} file(s), +{added} -{removed}{on} since {}",
                    diff.commits,
                    diff.files.len(),
                    short(&diff.base)
                );
            } else {
                print!("{}", diff.patch.as_deref().unwrap_or_default());
                if diff.truncated {
                    eprintln!("bosun: the patch was cut at {} bytes; see --stat", bosun_core::PATCH_MOST);
                }
            }
            Ok(())
        }
        Command::Peek { id, colors, scrollback } => {
            let colors = match colors {
                Colors::Auto => colors_wanted(std::io::stdout().is_terminal()),
                Colors::Always => true,
                Colors::Never => false,
            };
            println!("{}", client.peek(id, colors, scrollback)?);
            Ok(())
        }
        Command::Attach { id } => {
            let argv = client.attach(id)?;
            let (program, rest) = argv.split_first().context("the daemon gave no attach command")?;
            let err = bosun_adapters::private::as_user(&mut std::process::Command::new(program))
                .args(rest)
                .env_remove("TMUX")
                .env_remove("TMUX_PANE")
                .exec();
            Err(anyhow!("cannot run {program}: {err}"))
        }
        Command::Send { id, text, raw, now, json } => {
            let sent = client.send(id, text.join(" "), raw, now)?;
            if json {
                return print_json(&sent);
            }
            match &sent.why {
                None => println!("delivered {}", sent.message),
                Some(why) => println!("queued {}: {why}", sent.message),
            }
            Ok(())
        }
        Command::Kill { id, json } => {
            let (agent, state) = client.kill(id)?;
            if json {
                return print_json(&serde_json::json!({ "agent": agent, "state": state }));
            }
            println!("{agent} {}", state.label());
            Ok(())
        }
        Command::Workspace(cmd) => workspace(client, cmd),
        Command::Escalations { all, json } => {
            let (crate::calls::Dated { now, all: escalations }, asks) = client.escalations_and_asks(all)?;
            if json {
                return print_json(&escalations);
            }
            if escalations.is_empty() && asks.is_empty() {
                println!("nothing needs a person");
                return Ok(());
            }
            if !asks.is_empty() {
                let rows: Vec<Vec<String>> = asks
                    .iter()
                    .map(|a| vec![a.plan.clone(), a.job.clone(), a.reason.clone(), a.then.clone()])
                    .collect();
                println!("{}", render::table(&["PLAN", "JOB", "WAITS FOR", "THEN"], &rows));
                if escalations.is_empty() {
                    return Ok(());
                }
                println!();
            }
            let rows: Vec<Vec<String>> = escalations
                .iter()
                .map(|e| {
                    vec![
                        e.id.to_string(),
                        e.agent.to_string(),
                        render::age(now, e.at.as_millis()),
                        if e.resolved.is_some() { "resolved".into() } else { "open".into() },
                        e.reason.clone(),
                    ]
                })
                .collect();
            println!("{}", render::table(&["ESCALATION", "AGENT", "AGE", "STATE", "REASON"], &rows));
            Ok(())
        }
        Command::Answer { id, answer, message, json } => {
            let answered = client.answer(id, answer, message)?;
            if json {
                return print_json(&answered);
            }
            let crate::calls::Answered { agent, option, picked, message, .. } = answered;
            match picked {
                true => println!("answered {agent}'s dialog with {answer}: {option:?}"),
                false => println!("answering {agent}'s dialog with {answer}: moving to {option:?}, then picking it"),
            }
            if let Some(m) = message {
                println!("message {m} goes to the agent when it waits for input");
            }
            Ok(())
        }
        Command::Resolve { id, message, answer } => {
            let (escalation, message) = client.resolve(id, message, answer)?;
            match message {
                Some(m) => println!("resolved {escalation}; message {m} goes to the agent when it waits for input"),
                None => println!("resolved {escalation}"),
            }
            Ok(())
        }
        Command::Daemon(_)
        | Command::Hook(_)
        | Command::Host(_)
        | Command::Runbook(_)
        | Command::Run { .. }
        | Command::Job(_)
        | Command::Queue(_)
        | Command::Pool(_)
        | Command::Events { .. }
        | Command::Dash
        | Command::Worker(_)
        | Command::Cron(_)
        | Command::Plan(_)
        | Command::Doctor { .. }
        | Command::Replay { .. }
        | Command::Completions { .. }
        | Command::Man => unreachable_command(),
    }
}

/// The most of a value `--env` takes.
const ENV_VALUE_MAX: usize = 64 * 1024;

fn start(client: &Client, args: StartArgs) -> Result<()> {
    if let Some(name) = &args.name {
        Name::parse(name).map_err(|e| crate::error::usage(e.to_string()))?;
    }
    let mut env = BTreeMap::new();
    for kv in &args.env {
        let shown: String = kv.chars().take(60).collect();
        let (k, v) = kv.split_once('=').ok_or_else(|| usage(format!("--env {shown:?} is not KEY=VALUE")))?;
        let name_ok = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name_ok {
            return Err(usage(format!(
                "--env {shown:?}: {k:.60?} is not a variable name (letters, digits and _, not starting with a digit)"
            )));
        }
        if v.len() > ENV_VALUE_MAX {
            return Err(usage(format!("--env {k}: its value is {} bytes; the most is {ENV_VALUE_MAX}", v.len())));
        }
        env.insert(k.to_owned(), v.to_owned());
    }
    let repo = match &args.repo {
        Some(r) => {
            Some(std::fs::canonicalize(r).map_err(|_| usage(format!("--repo {}: no such directory", r.display())))?)
        }
        None => None,
    };
    if (args.task_file.is_some() || args.no_wait) && !matches!(args.workspace, WorkspaceKindArg::Pool) {
        return Err(usage("--task-file and --no-wait only apply to --workspace pool"));
    }
    let task = args.task_file.as_deref().map(crate::pool_cmd::read_task).transpose()?;
    let workspace = match args.workspace {
        WorkspaceKindArg::Pool => {
            if args.base_ref.is_some() {
                return Err(usage(
                    "--ref does not apply to --workspace pool: its workspaces start from the pool's base",
                ));
            }
            WorkspaceChoice::Pool
        }
        WorkspaceKindArg::Worktree => WorkspaceChoice::Worktree,
        WorkspaceKindArg::Volume if !matches!(args.runtime, RuntimeArg::Docker) => {
            return Err(usage("--workspace volume needs --runtime docker: only a container can mount a volume"));
        }
        WorkspaceKindArg::Volume => WorkspaceChoice::Volume,
        WorkspaceKindArg::Folder => {
            if args.branch.is_some() || args.base_ref.is_some() {
                return Err(usage("--branch and --ref only apply to --workspace worktree"));
            }
            WorkspaceChoice::Folder
        }
    };
    let runtime = runtime(&args)?;
    let s = client.start_agent(Box::new(StartAgent {
        repo,
        cwd: std::env::current_dir().context("cannot read the current directory")?,
        workspace,
        branch: args.branch,
        base_ref: args.base_ref,
        name: args.name,
        env,
        // A variable that is not UTF-8 cannot cross the socket; it is left out.
        inherit: std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect(),
        driver: args.driver,
        prompt: args.prompt,
        policy: crate::policy_args::policy(&args.policy).map_err(|e| usage(format!("{e:#}")))?,
        patterns: Patterns { prompt: args.prompt_pattern, working: args.working_pattern, error: args.error_pattern },
        command: args.command,
        task,
        no_wait: args.no_wait,
        session: args.session.into(),
        runtime,
    }))?;
    print_started(&s, args.json)
}

/// What `agent start` and `fork` print of the agent started.
fn print_started(s: &bosun_wire::Started, json: bool) -> Result<()> {
    for w in &s.warnings {
        eprintln!("warning: {w}");
    }
    if json {
        return print_json(s);
    }
    println!("agent      {}", s.agent);
    if s.waiting {
        println!("workspace  waiting for a pool workspace (see `bosun pool ls`)");
    } else {
        println!("workspace  {}", s.path.display());
    }
    if let Some(b) = &s.branch {
        println!("branch     {b}");
    }
    Ok(())
}

fn workspace(client: &Client, cmd: WorkspaceCommand) -> Result<()> {
    match cmd {
        WorkspaceCommand::Ls(flag) => {
            let list = client.list()?;
            if flag.json {
                return print_json(&list.workspaces);
            }
            println!("{}", render::workspaces_table(list.now, &list.workspaces));
            Ok(())
        }
        WorkspaceCommand::Rm { id, force, json } => {
            let r = client.workspace_remove(id, force)?;
            if json {
                return print_json(&r);
            }
            print_removed(&r);
            Ok(())
        }
        WorkspaceCommand::Prune { dry_run, json } => {
            let p = client.workspace_prune(dry_run)?;
            if json {
                return print_json(&p);
            }
            for r in &p.removed {
                if dry_run {
                    println!("would remove {}", r.workspace);
                } else {
                    print_removed(r);
                }
            }
            for (id, why) in &p.skipped {
                println!("kept {id}: {why}");
            }
            if p.removed.is_empty() {
                println!("nothing to prune");
            }
            Ok(())
        }
    }
}

fn print_removed(r: &bosun_wire::Removed) {
    println!("removed {} ({})", r.workspace, r.path.display());
    if let Some(b) = &r.branch_deleted {
        println!("deleted branch {b}");
    }
    if let Some(k) = &r.branch_kept {
        println!(
            "kept branch {} : it holds {} commit(s) not on its base (delete it with `git branch -D {}`)",
            k.branch, k.commits, k.branch
        );
    }
}

/// Reports from the hooks bosun installs (tmux, Claude Code, Codex). Silent, and never starts
/// a daemon: while none runs, the report is kept in the spool the next daemon reads at start.
pub fn hook(client: &Client, hook: HookCommand) -> Result<ExitCode> {
    let num = |s: &str| s.trim().parse::<i32>().ok();
    let event = match hook {
        HookCommand::Output { file, max } => {
            bosun_adapters::output_log::append_rotating(std::io::stdin().lock(), &file, max)
                .with_context(|| format!("writing {}", file.display()))?;
            return Ok(ExitCode::SUCCESS);
        }
        HookCommand::Tmux(TmuxHook::PaneDied { session, status, signal }) => {
            HookEvent::PaneDied { session, status: num(&status), signal: num(&signal) }
        }
        HookCommand::Tmux(TmuxHook::SessionClosed { session }) => HookEvent::SessionClosed { session },
        HookCommand::Claude { agent, generation, event } => {
            let payload = bounded_stdin(HOOK_PAYLOAD_MAX)?;
            HookEvent::Claude { agent, generation: Some(generation), event, payload, spooled_at: None }
        }
        HookCommand::Codex { agent, payload } => {
            // Too large to be a notification Codex sends: only its end is of use, and none of it
            // is kept beyond the agent's last words.
            let payload = if payload.len() > HOOK_PAYLOAD_MAX { String::new() } else { payload };
            HookEvent::Codex { agent, payload }
        }
    };
    // Spooled when no daemon answers, also one that died while it was being told, or that
    // could not record it (it was stopping, its disk failed): reports are states, so one told
    // twice changes nothing, while one lost is a state missed. A daemon that refused it has
    // heard it: that report is not kept for later.
    let heard = match client.request_if_running(Request::Hook(event.clone())) {
        Ok(Some(Response::HookReply { stdout })) => {
            println!("{stdout}");
            true
        }
        Ok(answer) => answer.is_some(),
        Err(e) => crate::client::wire_error(&e).is_some_and(|w| w.kind != bosun_wire::ErrorKind::Failed),
    };
    // A state directory that is gone (removed with everything bosun knew) is not made again for
    // a report no daemon will ever read.
    if !heard && client.dirs.root().is_dir() {
        let mut event = event;
        if let HookEvent::Claude { spooled_at, .. } = &mut event {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            *spooled_at = now.ok().map(|d| d.as_millis() as u64);
        }
        let mut line = serde_json::to_vec(&event)?;
        line.push(b'\n');
        let path = client.dirs.hook_spool();
        if let Some(dir) = path.parent() {
            std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700).create(dir)?;
        }
        let mut spool = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        std::io::Write::write_all(&mut spool, &line)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The most of a hook report read: a larger one is cut, and then reads as its event alone.
const HOOK_PAYLOAD_MAX: usize = 1024 * 1024;

/// At most `max` bytes of stdin, as text; the rest is left unread.
fn bounded_stdin(max: usize) -> Result<String> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(std::io::stdin().lock(), max as u64), &mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Whether output going to a terminal (`terminal`) gets colours: never when `NO_COLOR` is set
/// to anything but the empty string (no-color.org).
pub fn colors_wanted(terminal: bool) -> bool {
    terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// JSON for scripts: indented on a terminal, compact (and faster) into a pipe.
pub fn print_json<T: Serialize>(value: &T) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if out.is_terminal() {
        serde_json::to_writer_pretty(&mut out, value)?;
    } else {
        serde_json::to_writer(&mut out, value)?;
    }
    writeln!(out)?;
    Ok(())
}

fn unreachable_command() -> Result<()> {
    bail!("internal error: command dispatched to the wrong handler")
}

/// Where `agent start` runs the agent, from `--runtime` and the options that go with it.
fn runtime(args: &StartArgs) -> Result<bosun_core::Runtime> {
    use bosun_core::{Container, Runtime};
    let docker_only = args.image.is_some() || args.cpus.is_some() || args.memory.is_some();
    let k8s_only = !args.secrets.is_empty()
        || args.namespace != "default"
        || args.bosun_in_image != "bosun"
        || args.storage.is_some();
    if k8s_only && !matches!(args.runtime, RuntimeArg::K8s) {
        return Err(usage("--namespace, --secret, --storage and --bosun-in-image apply to --runtime k8s"));
    }
    match args.runtime {
        RuntimeArg::Local if args.no_network => Err(usage("--no-network applies to --runtime sandbox or docker")),
        RuntimeArg::Local | RuntimeArg::Sandbox if docker_only => {
            Err(usage("--image, --cpus and --memory apply to --runtime docker or k8s"))
        }
        RuntimeArg::Local => Ok(Runtime::Local),
        RuntimeArg::Sandbox => Ok(Runtime::Sandbox { network: !args.no_network }),
        RuntimeArg::Docker => {
            let image = args.image.clone().ok_or_else(|| usage("--runtime docker needs --image IMAGE"))?;
            let cpus_milli = args.cpus.as_deref().map(Container::cpus).transpose().map_err(usage)?;
            let memory_bytes = args.memory.as_deref().map(Container::memory).transpose().map_err(usage)?;
            Ok(Runtime::Docker(Container { image, cpus_milli, memory_bytes, network: !args.no_network, volume: None }))
        }
        RuntimeArg::K8s => {
            if args.no_network {
                return Err(usage("--no-network does not apply to --runtime k8s: a pod's network is its cluster's"));
            }
            let image = args.image.clone().ok_or_else(|| usage("--runtime k8s needs --image IMAGE"))?;
            let cpus_milli = args.cpus.as_deref().map(Container::cpus).transpose().map_err(usage)?;
            let memory_bytes = args.memory.as_deref().map(Container::memory).transpose().map_err(usage)?;
            let storage = args.storage.as_deref().map(Container::memory).transpose();
            let storage_bytes = storage.map_err(|e| usage(format!("--storage: {e}")))?;
            for name in std::iter::once(&args.namespace).chain(&args.secrets) {
                if !bosun_core::Pod::is_dns_label(name) {
                    return Err(usage(format!(
                        "{name:?} is not a Kubernetes name (lowercase letters, digits and '-', at most 63)"
                    )));
                }
            }
            Ok(Runtime::K8s(bosun_core::Pod {
                cpus_milli,
                memory_bytes,
                storage_bytes,
                secrets: args.secrets.clone(),
                bosun: args.bosun_in_image.clone(),
                ..bosun_core::Pod::new(args.namespace.clone(), image)
            }))
        }
    }
}

/// A commit id cut to its first 12 digits.
fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// Waits until agent `id` has worked on message `message` and waits for input again: looked at
/// again each time an event of it is recorded (the daemon's stream says so), until `limit`.
fn wait_until_idle_after(
    client: &Client,
    id: &str,
    message: bosun_core::MessageId,
    limit: std::time::Duration,
) -> Result<()> {
    let deadline = std::time::Instant::now() + limit;
    // The stream goes on from before the agent is looked at: a change in between wakes too.
    let from = client.last_seq()? + 1;
    let (tx, wakes) = std::sync::mpsc::channel();
    let (stream, agent) = (Client::new(client.dirs.clone()), id.to_owned());
    std::thread::spawn(move || {
        let q = bosun_wire::EventsQuery { from, follow: true, agent: Some(agent), job: None };
        let _ = stream.events(q, |_| Ok(tx.send(()).is_ok()));
    });
    loop {
        let detail = client.show(id.to_owned())?;
        let a = &detail.agent;
        if a.state.is_dead() {
            anyhow::bail!("agent {id} ended before it resolved the conflicts: {}", a.state.label());
        }
        let sent = detail.messages.iter().find(|m| m.id == message).map(|m| m.at);
        if sent.is_some_and(|at| a.state_since > at) && matches!(a.state, bosun_core::SessionState::Idle) {
            return Ok(());
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match wakes.recv_timeout(left) {
            Ok(()) => while wakes.try_recv().is_ok() {},
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                anyhow::bail!("agent {id} did not finish within {} s: merge again once it has", limit.as_secs())
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                anyhow::bail!("the daemon stopped while agent {id} worked: start it again and merge once it has")
            }
        }
    }
}
