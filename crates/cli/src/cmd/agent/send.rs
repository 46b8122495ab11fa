//! `bosun send ID TEXT…`: a message typed into an agent's session once it waits for input.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::out::print_json;

/// Type a message into an agent's session and press Enter
///
/// The message is typed when the agent waits for input: while it works, or while it shows a
/// dialog (a permission, the folder-trust dialog), it waits its turn, never typed into the
/// dialog, whose Enter would pick an option. A message holds text: control characters
/// (Ctrl-C, Escape, a carriage return) are refused unless --raw; at most 12 KiB.
#[derive(Debug, Args)]
pub struct SendArgs {
    /// Agent id (any unique prefix) or name
    id: String,
    /// The text to send (several words are joined by spaces)
    #[arg(required = true, num_args = 1..)]
    text: Vec<String>,
    /// Type control characters as they are, as keys (Ctrl-C as \x03 ends most programs)
    #[arg(long)]
    raw: bool,
    /// Type it now or fail (exit 1): never wait behind a turn or a dialog
    #[arg(long)]
    now: bool,
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: SendArgs) -> Result<ExitCode> {
    let sent = client.send(args.id, args.text.join(" "), args.raw, args.now)?;
    if args.json {
        print_json(&sent)?;
        return Ok(ExitCode::SUCCESS);
    }
    match &sent.why {
        None => println!("delivered {}", sent.message),
        Some(why) => println!("queued {}: {why}", sent.message),
    }
    Ok(ExitCode::SUCCESS)
}
