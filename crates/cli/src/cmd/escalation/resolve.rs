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
}

pub fn run(client: &Client, args: ResolveArgs) -> Result<ExitCode> {
    let (escalation, message) = client.resolve(args.id, args.message, args.answer)?;
    match message {
        Some(m) => println!("resolved {escalation}; message {m} goes to the agent when it waits for input"),
        None => println!("resolved {escalation}"),
    }
    Ok(ExitCode::SUCCESS)
}
