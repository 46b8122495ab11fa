//! `bosun man`: the man page, generated from the command line's definition so that it never
//! falls behind it.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

/// Print bosun's man page (roff): `bosun man | man -l -`, or save it as `bosun.1`
#[derive(Debug, Args)]
pub struct ManArgs {}

/// Writes the page of `cli`, the whole command line.
pub fn run(_: ManArgs, cli: clap::Command) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    clap_mangen::Man::new(cli).render(&mut out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
