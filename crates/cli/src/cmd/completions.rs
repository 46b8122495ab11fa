//! `bosun completions SHELL`: a completion script, generated from the command line's
//! definition so that it never falls behind it.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

/// Print a shell completion script: `bosun completions bash > ~/.local/share/bash-completion/completions/bosun`,
/// `bosun completions zsh > "${fpath[1]}/_bosun"`, `bosun completions fish > ~/.config/fish/completions/bosun.fish`
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    shell: clap_complete::Shell,
}

/// Writes the script for `cli`, the whole command line.
pub fn run(args: CompletionsArgs, mut cli: clap::Command) -> Result<ExitCode> {
    clap_complete::generate(args.shell, &mut cli, "bosun", &mut std::io::stdout().lock());
    Ok(ExitCode::SUCCESS)
}
