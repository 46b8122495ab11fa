//! A plan's summary, folded from the event log (`bosun_core::PlanFold`): for `bosun plan show`,
//! and written at the end of the plan's log (`<state>/plans/<id>.log`) when it ends.

use std::io::Write;
use std::path::Path;

use bosun_core::PlanSummary;
use bosun_wire::StateDir;

use crate::store::{LogReader, StoreError};

/// The summary of plan `id` from the log at `db`; none when the log has no such plan.
pub fn summary(db: &Path, id: &str) -> Result<Option<PlanSummary>, StoreError> {
    let reader = LogReader::open(db)?;
    let mut fold = bosun_core::PlanFold::new(id);
    reader.scan_until(u64::MAX, |_, _, event| {
        fold.feed(event);
        Ok(())
    })?;
    Ok(fold.summary())
}

/// Appends the summary of plan `id` to its log.
pub fn write(dirs: &StateDir, id: &str) {
    let summary = match summary(&dirs.db(), id) {
        Ok(Some(summary)) => summary,
        Ok(None) => return tracing::warn!(plan = id, "no such plan in the log to summarize"),
        Err(e) => return tracing::warn!(plan = id, "cannot read the log to summarize the plan: {e}"),
    };
    let path = dirs.plan_log(id);
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::OpenOptions::new().create(true).append(true).open(&path))
        .and_then(|mut f| writeln!(f, "{}", summary.text()));
    if let Err(e) = written {
        tracing::warn!(plan = id, "cannot write {}: {e}", path.display());
    }
}
