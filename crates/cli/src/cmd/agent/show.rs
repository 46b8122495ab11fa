//! `bosun show ID`: everything bosun knows about an agent.

use std::process::ExitCode;

use anyhow::Result;
use bosun_wire::AgentDetail;
use clap::Args;

use crate::client::Client;
use crate::out::print_json;
use crate::render;

/// Show everything bosun knows about an agent
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Agent id (any unique prefix) or name
    id: String,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: ShowArgs) -> Result<ExitCode> {
    let d = client.show(args.id)?;
    if args.json {
        print_json(&d)?;
        return Ok(ExitCode::SUCCESS);
    }
    what(&d);
    policy(&d);
    happened(&d);
    Ok(ExitCode::SUCCESS)
}

/// What the agent is: its state, command, session, workspace and driver.
fn what(d: &AgentDetail) {
    let a = &d.agent;
    println!("agent      {} ({})", a.id, a.name);
    let state = a.state_label();
    println!("state      {state} for {}", render::age(d.now, a.state_since.as_millis()));
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
                bosun_core::WorkspaceKind::Pod(bosun_core::PodClone { remote, claim, .. }) => {
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
    for (model, tokens) in &a.usage.by_model {
        let cost = match a.usage.cost_of(model) {
            Some(c) => bosun_core::price::dollars(c),
            None => "cost unknown".to_owned(),
        };
        let model = if model.is_empty() { "its client did not say" } else { model };
        println!("tokens     {} ({model}, {cost})", render::tokens(tokens));
    }
    if let Some(budget) = a.policy.budget {
        let spent = budget.spent(&a.usage);
        let unknown = matches!(budget, bosun_core::budget::Budget::Usd(_)) && a.usage.cost().1;
        let unknown = if unknown { ", not counting what is of unknown cost" } else { "" };
        println!("budget     {budget}: {} spent ({}%{unknown})", budget.of_amount(spent.used), spent.percent());
    }
    if let Some(p) = &a.paused {
        let whose = p.of.clone().unwrap_or_else(|| "its budget".to_owned());
        println!(
            "paused     at {whose} of {}, {} ago: `bosun resume {} --budget MORE`",
            p.budget,
            render::age(d.now, p.at.as_millis()),
            a.id
        );
    }
    for (kind, at) in &a.heartbeats {
        println!("heartbeat  {:<16} {} ago", format!("{kind:?}"), render::age(d.now, at.as_millis()));
    }
}

/// Its recovery policy and permission rules.
fn policy(d: &AgentDetail) {
    let a = &d.agent;
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
}

/// What happened to it: permissions answered, its last turn, recoveries, messages, escalations.
fn happened(d: &AgentDetail) {
    let a = &d.agent;
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
}
