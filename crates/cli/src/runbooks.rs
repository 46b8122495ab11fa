//! The runbooks of the nearest `.bosun/runbooks/`, read here: as the daemon takes them (`bosun
//! run`, workers, crons, plans) and checked whole (`bosun runbook ls | check`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use bosun_runbook::load::{find_dir, read_dir, SourceFile};
use bosun_runbook::lower::{lower, LowerError, Lowered};

/// The runbook files of the nearest `.bosun/runbooks/` (as path and text), its directory, and
/// the current directory.
pub fn sources() -> Result<(Vec<SourceFile>, PathBuf, PathBuf)> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let Some(dir) = find_dir(&here) else {
        return Err(crate::error::usage(format!(
            "no .bosun/runbooks/ here or in any parent of {}: create one with *.hcl or *.toml runbooks",
            here.display()
        )));
    };
    let sources = read_dir(&dir)?;
    Ok((sources, dir, here))
}

/// The runbook files as the daemon takes them, and the current directory.
pub fn pairs() -> Result<(Vec<(PathBuf, String)>, PathBuf)> {
    let (sources, _, here) = sources()?;
    Ok((sources.into_iter().map(|s| (s.path, s.text)).collect(), here))
}

/// The runbooks read and checked: how many files, and what they define; or, when any is
/// wrong, every error printed (each as file:line:column, paths from here) and the exit code.
pub fn checked() -> Result<std::result::Result<(usize, Lowered), ExitCode>> {
    let (sources, dir, here) = sources()?;
    let shown = |p: &PathBuf| p.strip_prefix(&here).map(PathBuf::from).unwrap_or_else(|_| p.clone());
    let sources: Vec<_> = sources.into_iter().map(|s| SourceFile { path: shown(&s.path), text: s.text }).collect();
    let failed = |errors: Vec<String>| {
        for e in &errors {
            eprintln!("{e}");
        }
        eprintln!("bosun: {} error(s) in {}", errors.len(), dir.display());
        Ok(Err(ExitCode::from(crate::error::Kind::Usage.code())))
    };
    let lowered = match lower(&sources) {
        Ok(lowered) => lowered,
        Err(LowerError::Invalid(errors)) => return failed(errors.iter().map(ToString::to_string).collect()),
        Err(other) => return failed(vec![other.to_string()]),
    };
    // A runbook that reads well but holds a job that could not start (too deep, too many) is wrong too.
    let problems = lowered.problems();
    if !problems.is_empty() {
        return failed(problems.iter().map(ToString::to_string).collect());
    }
    Ok(Ok((sources.len(), lowered)))
}
