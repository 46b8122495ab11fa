//! Reports from an agent's own program (a Claude hook, a Codex notify call): read by its
//! driver, what it said classified, a permission its policy covers answered, its state observed.

use super::{classify, observe, Decision};
use crate::driver::Report;
use crate::{Agent, Event, Observation, PermissionDecision, State, Timestamp};

pub(super) fn read(state: &State, a: &Agent, report: &Report, now: Timestamp, d: &mut Decision) {
    let Some(reading) = a.driver.behaviour().read_report(Some(a), report) else { return };
    // The turn ended: what it said last is what its classification reads.
    if let Some(said) = &reading.said {
        classify::said(state, &a.id, said, d);
    }
    // A permission its policy covers is answered at once: no dialog shows.
    let answered = reading.permission.as_ref().and_then(|(tool, subject)| {
        let answer = crate::permission_answer(&a.policy.allow, &a.policy.deny, tool, subject.as_deref())?;
        let decision = PermissionDecision { at: now, tool: tool.clone(), subject: subject.clone(), answer };
        d.event(Event::PermissionAnswered { id: a.id.clone(), decision });
        Some(())
    });
    if let Some((source, seen)) = reading.observation {
        let observation = if answered.is_some() { Observation::Working } else { seen };
        let cause = Some(report.cause());
        observe::observed(state, a, source, &observation, reading.log.as_ref(), cause, now, d)
    }
}
