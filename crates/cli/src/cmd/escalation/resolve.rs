//! `bosun resolve ID`: an escalation closed, with a message for its agent and a dialog's
//! answer if asked.

use std::process::ExitCode;

use anyhow::Result;
use bosun_core::driver::dialog::DialogAnswer;
use clap::Args;

use crate::client::Client;

/// Resolve an escalation; --message types a message into its agent when it waits for input
#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// Escalation id (e3, or 3)
    id: String,
    #[arg(long)]
    message: Option<String>,
    /// Also answer the dialog its agent waits at: allow, deny or an option's number (see
    /// `bosun answer`)
    #[arg(long, value_name = "ANSWER")]
    answer: Option<DialogAnswer>,
    /// For an agent paused at its budget: raise it to this (`10usd`, `4Mtok`), and the agent
    /// goes on (as `bosun resume AGENT --budget`)
    #[arg(long, value_name = "AMOUNT", conflicts_with_all = ["message", "answer"])]
    budget: Option<String>,
}

pub fn run(client: &Client, args: ResolveArgs) -> Result<ExitCode> {
    if let Some(b) = &args.budget {
        let budget = b.parse::<bosun_core::budget::Budget>().map_err(|e| anyhow::anyhow!("--{e}"))?;
        let all = client.escalations(true)?.all;
        let wanted = args.id.trim_start_matches('e');
        let e = all.iter().find(|e| e.id.to_string().trim_start_matches('e') == wanted);
        let e = e.ok_or_else(|| anyhow::anyhow!("no escalation {}: see `bosun escalations --all`", args.id))?;
        if e.trigger != bosun_core::Trigger::Budget {
            anyhow::bail!("escalation {} is not of an agent at its budget: resolve it without --budget", e.id);
        }
        let (agent, budget, resumed) = client.resume(e.agent.to_string(), Some(budget))?;
        let goes_on = if resumed { " and goes on" } else { "" };
        println!("resolved {}; {agent} has a budget of {budget}{goes_on}", e.id);
        return Ok(ExitCode::SUCCESS);
    }
    let (escalation, message) = client.resolve(args.id, args.message, args.answer)?;
    match message {
        Some(m) => println!("resolved {escalation}; message {m} goes to the agent when it waits for input"),
        None => println!("resolved {escalation}"),
    }
    Ok(ExitCode::SUCCESS)
}
