//! `bosun diff ID`: what an agent or job changed, as a patch or file by file.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

use crate::client::Client;
use crate::cmd::flags::Colors;
use crate::out::{print_json, short};

/// What an agent or job changed against the commit its workspace started at: committed,
/// not committed and untracked files alike (coloured on a terminal)
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Agent id (any unique prefix) or name, or job id
    id: String,
    /// Only the files, each with its change (A/M/D/R/T) and lines added and removed
    #[arg(long)]
    stat: bool,
    /// Colour the patch [default: auto, on when stdout is a terminal]
    #[arg(long, value_enum, default_value_t = Colors::Auto)]
    colors: Colors,
    /// Print the files (and the patch, unless --stat) as JSON
    #[arg(long)]
    json: bool,
}

pub fn run(client: &Client, args: DiffArgs) -> Result<ExitCode> {
    let DiffArgs { id, stat, colors, json } = args;
    let colors = !json && colors.on_stdout();
    let diff = client.diff(id, !stat, colors, false)?;
    if json {
        print_json(&diff)?;
        return Ok(ExitCode::SUCCESS);
    }
    if stat || diff.files.is_empty() {
        for f in &diff.files {
            let counts = match (f.added, f.removed) {
                (Some(a), Some(r)) => format!("+{a} -{r}"),
                _ => "binary".to_owned(),
            };
            let from = match &f.change {
                bosun_core::Change::Renamed { from } => format!(" (from {from})"),
                _ => String::new(),
            };
            println!("{} {}{from}  {counts}", f.change.letter(), f.path);
        }
        let (added, removed) = diff.totals();
        let on = diff.branch.as_deref().map(|b| format!(" on {b}")).unwrap_or_default();
        println!(
            "{} commit(s), {} file(s), +{added} -{removed}{on} since {}",
            diff.commits,
            diff.files.len(),
            short(&diff.base)
        );
    } else {
        print!("{}", diff.patch.as_deref().unwrap_or_default());
        if diff.truncated {
            eprintln!("bosun: the patch was cut at {} bytes; see --stat", bosun_core::PATCH_MOST);
        }
    }
    Ok(ExitCode::SUCCESS)
}
