//! `bosun completions SHELL` and `bosun man`: generated from the command line's definition, so
//! they never fall behind it.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::CommandFactory;

use crate::args::Cli;

pub fn completions(shell: clap_complete::Shell) -> Result<ExitCode> {
    clap_complete::generate(shell, &mut Cli::command(), "bosun", &mut std::io::stdout().lock());
    Ok(ExitCode::SUCCESS)
}

pub fn man() -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
