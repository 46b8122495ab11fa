//! Replay (seed 003): detection and classification run again, with the rules of this build, over
//! what a job's events recorded — each state change's cause (a hook call, a log line) and each
//! classified turn's message and classifier answer — and every decision that comes out
//! differently is reported, `original` beside `replayed`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::driver::{Driver, DriverKind, Report};
use crate::{after_command, guardrail, heuristic, AgentId, Cause, Event, Heartbeat, Observation, Policy, Verdict};

/// One recorded event with its place in the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recorded {
    pub seq: u64,
    pub at: u64,
    pub event: Event,
}

/// Which kind of decision differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decided {
    /// What a hook call or a log line means.
    Detection,
    /// What an idle turn means.
    Classification,
    /// How the permission policy answered a request.
    Permission,
}

/// A decision that came out differently.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    pub seq: u64,
    pub agent: AgentId,
    pub decided: Decided,
    /// What the decision was made from (the hook, the line, the message), shortened.
    pub from: String,
    pub original: String,
    pub replayed: String,
}

/// What a replay found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replayed {
    /// Decisions replayed.
    pub decisions: usize,
    pub differences: Vec<Difference>,
}

/// Replays every recorded decision in `events` (in order; an agent's decisions need its
/// `AgentCreated` before them, for its driver and policy).
pub fn replay(events: &[Recorded]) -> Replayed {
    let mut agents: BTreeMap<AgentId, (Driver, Policy)> = BTreeMap::new();
    let mut out = Replayed::default();
    for r in events {
        match &r.event {
            Event::AgentCreated { agent } => {
                agents.insert(agent.id.clone(), (agent.driver.clone(), agent.policy.clone()));
            }
            Event::AgentObserved {
                cause: Some(Cause::LogLine { cut: true, .. } | Cause::Output { cut: true, .. }),
                ..
            } => {}
            Event::AgentObserved { id, observation: Some(original), cause: Some(cause), .. } => {
                out.decisions += 1;
                let driver = agents.get(id).map(|(d, _)| d);
                let policy = agents.get(id).map(|(_, p)| p);
                let activity = Observation::Activity { heartbeat: Heartbeat::TerminalOutput };
                let (replayed, from) = match cause {
                    Cause::Hook { .. } | Cause::Notify { .. } | Cause::Report { .. } => {
                        let kind = driver.map_or(DriverKind::Generic, Driver::kind);
                        report_seen(Report::from_cause(cause, kind), policy)
                    }
                    Cause::LogLine { line, .. } => {
                        let kind = driver.map_or(DriverKind::Claude, Driver::kind);
                        (kind.behaviour().log_observation(line), format!("log line {}", short(line)))
                    }
                    Cause::Output { line, .. } => {
                        let matcher = driver.and_then(|d| d.behaviour().output_matcher(d));
                        let seen = matcher.and_then(|m| m.observe(line)).unwrap_or_else(|| activity.clone());
                        (seen, format!("output {}", short(line)))
                    }
                };
                if &replayed != original {
                    out.differences.push(Difference {
                        seq: r.seq,
                        agent: id.clone(),
                        decided: Decided::Detection,
                        from,
                        original: format!("{original:?}"),
                        replayed: format!("{replayed:?}"),
                    });
                }
            }
            Event::PermissionAnswered { id, decision } => {
                out.decisions += 1;
                let policy = agents.get(id).map(|(_, p)| p);
                let replayed = policy.and_then(|p| {
                    crate::permission_answer(&p.allow, &p.deny, &decision.tool, decision.subject.as_deref())
                });
                if replayed.as_ref() != Some(&decision.answer) {
                    out.differences.push(Difference {
                        seq: r.seq,
                        agent: id.clone(),
                        decided: Decided::Permission,
                        from: format!(
                            "permission request {} {}",
                            decision.tool,
                            decision.subject.as_deref().map(short).unwrap_or_default()
                        ),
                        original: format!("{:?}", decision.answer),
                        replayed: replayed.map_or_else(|| "no rule: ask a person".to_owned(), |a| format!("{a:?}")),
                    });
                }
            }
            Event::TurnClassified { id, verdict, said, answer, .. } => {
                out.decisions += 1;
                let rules = agents.get(id).and_then(|(_, p)| p.classify.as_ref()).map(|c| c.rules.as_slice());
                let replayed = guardrail(rules.unwrap_or_default(), said).unwrap_or_else(|| match answer {
                    Some(answer) => after_command(said, answer),
                    None => heuristic(said),
                });
                if !same(verdict, &replayed) {
                    out.differences.push(Difference {
                        seq: r.seq,
                        agent: id.clone(),
                        decided: Decided::Classification,
                        from: format!("message {}", short(said)),
                        original: describe(verdict),
                        replayed: describe(&replayed),
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// What a recorded report reads as now, its policy answering a permission it covers, and
/// where it came from.
fn report_seen(report: Option<Report>, policy: Option<&Policy>) -> (Observation, String) {
    let activity = Observation::Activity { heartbeat: Heartbeat::TerminalOutput };
    let Some(report) = report else { return (activity, String::new()) };
    let reading = report.kind().behaviour().read_report(None, &report).unwrap_or_default();
    let answered = reading.permission.as_ref().is_some_and(|(tool, subject)| {
        policy.is_some_and(|p| crate::permission_answer(&p.allow, &p.deny, tool, subject.as_deref()).is_some())
    });
    let seen = match reading.observation {
        _ if answered => Observation::Working,
        Some((_, seen)) => seen,
        None => activity,
    };
    (seen, report.describe(short))
}

/// Whether two verdicts decide alike: the same class, from the same source, by the same rule.
fn same(a: &Verdict, b: &Verdict) -> bool {
    (a.class, a.source, &a.rule) == (b.class, b.source, &b.rule)
}

fn describe(v: &Verdict) -> String {
    let source = format!("{:?}", v.source).to_lowercase();
    match &v.rule {
        Some(rule) => format!("{} ({source}, rule {rule})", v.class),
        None => format!("{} ({source})", v.class),
    }
}

/// At most 80 characters of `s`, on one line, quoted.
fn short(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match one.char_indices().nth(80) {
        Some((i, _)) => format!("{:?}…", &one[..i]),
        None => format!("{one:?}"),
    }
}
