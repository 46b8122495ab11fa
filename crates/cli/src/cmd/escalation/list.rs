//! `bosun escalations`: what needs a person, and the plans waiting for one.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::calls::Dated;
use crate::client::Client;
use crate::out::print_json;
use crate::render;

/// List what needs a person (open escalations; --all for resolved ones too)
#[derive(Debug, Args)]
pub struct EscalationsArgs {
    #[arg(long)]
    all: bool,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: EscalationsArgs) -> Result<ExitCode> {
    let (Dated { now, all: escalations }, asks) = client.escalations_and_asks(args.all)?;
    if args.json {
        print_json(&escalations)?;
        return Ok(ExitCode::SUCCESS);
    }
    if escalations.is_empty() && asks.is_empty() {
        println!("nothing needs a person");
        return Ok(ExitCode::SUCCESS);
    }
    if !asks.is_empty() {
        let rows: Vec<Vec<String>> =
            asks.iter().map(|a| vec![a.plan.clone(), a.job.clone(), a.reason.clone(), a.then.clone()]).collect();
        println!("{}", render::table(&["PLAN", "JOB", "WAITS FOR", "THEN"], &rows));
        if escalations.is_empty() {
            return Ok(ExitCode::SUCCESS);
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
    Ok(ExitCode::SUCCESS)
}
