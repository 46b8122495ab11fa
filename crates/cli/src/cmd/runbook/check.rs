//! `bosun runbook check`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;

/// Validate every runbook; print every error as file:line:column (exit 1 when any)
#[derive(Debug, Args)]
pub struct CheckArgs {}

pub fn run(_: CheckArgs) -> Result<ExitCode> {
    let (files, lowered) = match crate::runbooks::checked()? {
        Ok(checked) => checked,
        Err(code) => return Ok(code),
    };
    let runbook = lowered.runbook();
    println!(
        "ok: {} file(s), {} command(s), {} job(s), {} agent(s), {} queue(s), {} worker(s), {} cron(s), {} plan(s)",
        files,
        runbook.commands.len(),
        runbook.jobs.len(),
        runbook.agents.len(),
        runbook.queues.len(),
        runbook.workers.len(),
        runbook.crons.len(),
        runbook.plans.len()
    );
    Ok(ExitCode::SUCCESS)
}
