//! `bosun job show ID`: a job's steps, visits and outcome; and how a job's state is said.

use std::process::ExitCode;

use anyhow::Result;
use bosun_core::{Job, JobState};
use clap::Args;

use crate::calls::JobNow;
use crate::client::Client;
use crate::out::print_json;
use crate::render;

/// Show a job: its steps, visits and outcome
#[derive(Debug, Args)]
pub struct ShowArgs {
    id: String,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: ShowArgs) -> Result<ExitCode> {
    let JobNow { now, job, .. } = client.job_show(args.id)?;
    if args.json {
        print_json(&job)?;
    } else {
        show(now, &job);
        spent(client, &job)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What the job's agents used and cost, and its budget.
fn spent(client: &Client, j: &Job) -> Result<()> {
    let list = client.list()?;
    let mine = list.agents.iter().filter(|a| a.job.as_ref() == Some(&j.spec.id));
    let mut tokens = bosun_core::usage::Tokens::default();
    let mut costs = Vec::new();
    for a in mine {
        for (model, t) in &a.tokens {
            tokens.add(t);
            costs.push(a.cost.get(model).copied().flatten());
        }
    }
    if !tokens.is_zero() {
        let cost = render::cost(costs.into_iter());
        println!("tokens     {} ({cost})", render::tokens(&tokens));
    }
    if let Some(budget) = j.spec.budget {
        println!("budget     {budget}, shared by its agents");
    }
    Ok(())
}

/// A job's state as a person reads it, with why it failed.
pub fn outcome(state: &JobState) -> String {
    match state {
        JobState::Failed { reason } => format!("failed: {reason}"),
        other => other.label().to_owned(),
    }
}

fn show(now: u64, j: &Job) {
    println!("job        {} ({})", j.spec.id, j.spec.name);
    println!("state      {} for {}", outcome(&j.state), render::age(now, j.state_since.as_millis()));
    println!("started    {} ago", render::age(now, j.created_at.as_millis()));
    if let Some(step) = &j.step {
        println!("step       {step} (try {})", j.attempt);
    }
    if let Some(w) = &j.workspace {
        println!("workspace  {w}");
    }
    for (k, v) in &j.spec.vars {
        println!("var        {k} = {v:?}");
    }
    for s in &j.spec.steps {
        println!("visits     {} ×{}", s.name, j.visits.get(&s.name).copied().unwrap_or(0));
    }
    match (&j.resumed_with, j.resumes) {
        (Some(agent), _) => println!("resumed    mid-step: agent {agent} restarted with its conversation"),
        (None, 0) => {}
        (None, n) => println!("resumed    {n} time(s); the last started its step again"),
    }
    println!("runbook    {}", j.spec.runbook_hash);
    println!("logs       {}", j.spec.logs.display());
}

/// Prints the state a job is in after a change.
pub fn changed(job: &Job) {
    let step = job.step.as_deref().map(|s| format!(" (step {s})")).unwrap_or_default();
    println!("{} {}{step}", job.spec.id, job.state.label());
}
