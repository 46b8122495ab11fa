//! `bosun daemon logs [-n N] [-f]`: the daemon's log, its end, and what it gains.

use std::io::{Read, Seek, SeekFrom, Write};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

use crate::client::Client;

/// Print the daemon's log
#[derive(Debug, Args)]
pub struct LogsArgs {
    /// Number of lines from the end
    #[arg(short = 'n', long, default_value_t = 50)]
    lines: usize,
    /// Keep printing as the log grows
    #[arg(short, long)]
    follow: bool,
}

pub fn run(client: &Client, args: LogsArgs) -> Result<ExitCode> {
    let LogsArgs { lines, follow } = args;
    let path = client.dirs.log();
    let mut file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(_) if !follow => {
            println!("no log yet ({})", path.display());
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => return Err(e).with_context(|| format!("cannot open {}", path.display())),
    };
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    let all: Vec<&str> = text.lines().collect();
    let mut out = std::io::stdout().lock();
    for line in &all[all.len().saturating_sub(lines)..] {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    if !follow {
        return Ok(ExitCode::SUCCESS);
    }
    let mut pos = file.stream_position()?;
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let len = std::fs::metadata(&path)?.len();
        if len < pos {
            pos = 0;
        }
        if len > pos {
            file.seek(SeekFrom::Start(pos))?;
            let mut chunk = String::new();
            file.read_to_string(&mut chunk)?;
            pos += chunk.len() as u64;
            write!(out, "{chunk}")?;
            out.flush()?;
        }
    }
}
