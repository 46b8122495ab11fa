//! `bosun pr ID`: an agent's or job's branch pushed and a pull request opened for it.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::out::print_json;

/// Push an agent's or job's branch to `origin` and open a pull request for it with GitHub's
/// `gh` (installed and logged in), into the branch its workspace started from (or --into);
/// its URL is recorded and shown by `bosun show`
#[derive(Debug, Args)]
pub struct PrArgs {
    /// Agent id (any unique prefix) or name, or job id
    id: String,
    #[arg(long, value_name = "BRANCH")]
    into: Option<String>,
    /// Its title [default: "Work of BRANCH"]; its body is the agent's last words
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
    /// Open it as a draft
    #[arg(long)]
    draft: bool,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: PrArgs) -> Result<ExitCode> {
    let PrArgs { id, into, title, draft, json } = args;
    let (pr, warnings) = client.pr(Box::new(bosun_wire::PrAsk { target: id, into, title, draft }))?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    if json {
        print_json(&pr)?;
        return Ok(ExitCode::SUCCESS);
    }
    let draft = if pr.draft { " (draft)" } else { "" };
    println!("pull request {}{draft}: {} into {}", pr.url, pr.branch, pr.into);
    Ok(ExitCode::SUCCESS)
}
