//! The blocks that start jobs on their own: `queue`, `worker` and `cron`.

use super::blocks::run;
use super::{duration, number, string, Fields, Problems};
use crate::model::{Cron, Queue, QueueKind, Schedule, Worker, DEFAULT_POLL_MS};
use crate::syntax::Node;

pub(super) fn queue(name: &str, node: &Node, p: &mut Problems) -> Option<Queue> {
    let mut f = Fields::of(node, format!("queue {name:?}"), p)?;
    let retry = f.take("retry", &[]).and_then(|n| number(n, "retry", p));
    let list = f.take("list", &[]).and_then(|n| string(n, "list", p));
    let take = f.take("take", &[]).and_then(|n| string(n, "take", p));
    let poll = f.take("poll", &[]).and_then(|n| duration(n, "poll", p));
    let span = node.span.clone();
    f.finish(p);
    let kind = match list {
        Some(list) => QueueKind::External {
            list,
            take,
            poll_ms: poll.filter(|ms| *ms > 0).unwrap_or(DEFAULT_POLL_MS),
            retry: retry.unwrap_or(0),
        },
        None => {
            if take.is_some() || poll.is_some() {
                p.at(&span, format!("queue {name:?} has `take` or `poll` without `list`"));
            }
            QueueKind::Persisted { retry: retry.unwrap_or(3) }
        }
    };
    Some(Queue { span, kind })
}

pub(super) fn worker(name: &str, node: &Node, p: &mut Problems) -> Option<Worker> {
    let mut f = Fields::of(node, format!("worker {name:?}"), p)?;
    let queue = f.take("queue", &[]).and_then(|n| string(n, "queue", p));
    let job = f.take("job", &[]).and_then(|n| string(n, "job", p));
    let concurrency = f.take("concurrency", &[]).and_then(|n| number(n, "concurrency", p)).unwrap_or(1);
    let budget = f.take("budget", &[]).and_then(|n| super::budget(n, p));
    let span = node.span.clone();
    let what = f.what().to_owned();
    f.finish(p);
    match (queue, job) {
        (Some(queue), Some(job)) => Some(Worker { span, queue, job, concurrency: concurrency.max(1), budget }),
        _ => {
            p.at(&span, format!("{what} needs `queue` and `job`"));
            None
        }
    }
}

pub(super) fn cron(name: &str, node: &Node, p: &mut Problems) -> Option<Cron> {
    let mut f = Fields::of(node, format!("cron {name:?}"), p)?;
    let every = f.take("every", &[]).and_then(|n| duration(n, "every", p));
    let expr = f.take("schedule", &[]).map(|n| (string(n, "schedule", p), n.span.clone()));
    let run = f.take("run", &[]).and_then(|n| run(n, p));
    let span = node.span.clone();
    let what = f.what().to_owned();
    f.finish(p);
    let schedule = match (every, expr) {
        (Some(ms), None) if ms > 0 => Schedule::Every { ms },
        (None, Some((Some(e), span))) => match Schedule::expr(&e) {
            Ok(s) => s,
            Err(error) => {
                p.at(&span, error.to_string());
                return None;
            }
        },
        _ => {
            p.at(&span, format!("{what} needs one of `every` (\"1h\") and `schedule` (\"0 3 * * *\")"));
            return None;
        }
    };
    match run {
        Some(run) => Some(Cron { span, schedule, run }),
        None => {
            p.at(&span, format!("{what} needs `run`"));
            None
        }
    }
}
