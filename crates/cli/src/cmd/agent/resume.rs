//! `bosun resume AGENT [--budget MORE]`: an agent paused at its budget goes on with its
//! conversation under a raised one.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::out::print_json;

/// Raise an agent's budget and let a paused agent go on. An agent that reached its budget is
/// paused: its turn stopped, nothing delivered to it, its work and conversation kept. With a
/// budget above what it has spent, it is told to go on where it left off (resumed with its
/// conversation if it died meanwhile). Without --budget, a budget given since (in a runbook or
/// policy) decides
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// Agent id (any unique prefix) or name
    id: String,
    /// Its new budget, all it may spend from its start: `10usd`, `4Mtok`, `800ktok`
    #[arg(long, value_name = "AMOUNT")]
    budget: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: ResumeArgs) -> Result<ExitCode> {
    let budget = match &args.budget {
        Some(b) => Some(b.parse::<bosun_core::budget::Budget>().map_err(|e| anyhow::anyhow!("--{e}"))?),
        None => None,
    };
    let (agent, budget, resumed) = client.resume(args.id, budget)?;
    if args.json {
        print_json(&serde_json::json!({ "agent": agent, "budget": budget, "resumed": resumed }))?;
        return Ok(ExitCode::SUCCESS);
    }
    match resumed {
        true => println!("{agent} goes on, with a budget of {budget}"),
        false => println!("{agent} has a budget of {budget}"),
    }
    Ok(ExitCode::SUCCESS)
}
