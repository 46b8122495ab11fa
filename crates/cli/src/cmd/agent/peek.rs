//! `bosun peek ID`: an agent's screen, printed.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::cmd::flags::Colors;

/// Print an agent's screen
#[derive(Debug, Args)]
pub struct PeekArgs {
    /// Agent id (any unique prefix) or name
    id: String,
    /// Keep the screen's colours [default: auto, on when stdout is a terminal]
    #[arg(long, value_enum, default_value_t = Colors::Auto)]
    colors: Colors,
    /// Lines of what scrolled off above the screen to print first (tmux keeps 10000, bosun's
    /// own host 2000)
    #[arg(long, value_name = "LINES", default_value_t = 0)]
    scrollback: u32,
}

pub fn run(client: &Client, args: PeekArgs) -> Result<ExitCode> {
    println!("{}", client.peek(args.id, args.colors.on_stdout(), args.scrollback)?);
    Ok(ExitCode::SUCCESS)
}
