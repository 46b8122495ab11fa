//! Files and directories named on the command line, read with bounds: `--task-file`, `--repo`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::error::usage;

/// The longest task file taken.
const TASK_MAX: u64 = 1 << 20;

/// A task file's text (at most 1 MiB of UTF-8).
pub fn read_task(path: &Path) -> Result<String> {
    use std::io::Read;
    let mut text = String::new();
    let file = std::fs::File::open(path).with_context(|| format!("cannot read --task-file {}", path.display()))?;
    file.take(TASK_MAX + 1)
        .read_to_string(&mut text)
        .with_context(|| format!("--task-file {} is not UTF-8 text", path.display()))?;
    if text.len() as u64 > TASK_MAX {
        return Err(usage(format!("--task-file {} is over {TASK_MAX} bytes", path.display())));
    }
    Ok(text)
}

/// `--repo DIR` as its real path, else the current directory.
pub fn repo_or_here(dir: Option<PathBuf>) -> Result<PathBuf> {
    match dir {
        Some(d) => std::fs::canonicalize(&d).map_err(|_| usage(format!("--repo {}: no such directory", d.display()))),
        None => std::env::current_dir().context("cannot read the current directory"),
    }
}
