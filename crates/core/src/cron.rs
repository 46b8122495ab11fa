//! Crons: a job started on a schedule — every interval, or at the minutes a five-field cron
//! expression names, in UTC — by a cron that was started, with the runbook text it started with.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::{ItemId, JobBook, JobId, Timestamp};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cron {
    pub name: String,
    pub schedule: Schedule,
    /// The job it starts.
    pub job: String,
    pub running: bool,
    /// Its job, lowered from the runbook as it was when the cron started (empty in a record
    /// an older bosun wrote, which kept the text: such a cron is started again).
    #[serde(default)]
    pub book: JobBook,
    /// Where it was started: the repository its jobs' worktrees come from.
    pub cwd: PathBuf,
    /// When it fires next, while it runs.
    pub next: Option<Timestamp>,
    /// Times it fired, a job started or not.
    #[serde(default)]
    pub fired: u32,
    /// The job it started last; while that job runs, the cron skips its turn.
    pub last_job: Option<JobId>,
    /// When it asked for that job.
    #[serde(default)]
    pub last_started: Option<Timestamp>,
    /// Why its last job could not be made.
    pub error: Option<String>,
}

/// What a job made by the daemon on the core's behalf is for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A queue item a worker took.
    Item(ItemId),
    /// A cron's turn.
    Cron(String),
    /// A plan's job: the plan's id and the job's place in it.
    Plan(String, usize),
    /// A variant of a plan's job: the plan's id, the job's place, the variant (1 for `v1`).
    PlanVariant(String, usize, u32),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    Every {
        ms: u64,
    },
    /// Five fields: minute hour day-of-month month day-of-week (0 or 7 is Sunday).
    Expr(String),
}

/// What is wrong with a schedule.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("schedule {0:?} is not a five-field cron expression (minute hour day month weekday): {1}")]
    Malformed(String, String),
    #[error("an interval of 0 never ends")]
    ZeroInterval,
}

impl Schedule {
    /// A checked schedule.
    pub fn expr(text: &str) -> Result<Self, ScheduleError> {
        let malformed = |why: String| ScheduleError::Malformed(text.to_owned(), why);
        if text.split_whitespace().count() != 5 {
            return Err(malformed("it needs exactly five fields".into()));
        }
        text.parse::<croner::Cron>().map_err(|e| malformed(e.to_string()))?;
        Ok(Self::Expr(text.to_owned()))
    }

    pub fn every(ms: u64) -> Result<Self, ScheduleError> {
        if ms == 0 {
            return Err(ScheduleError::ZeroInterval);
        }
        Ok(Self::Every { ms })
    }

    /// The first time after `t` it names; `None` when it names none (such as 31 February).
    pub fn next_after(&self, t: Timestamp) -> Option<Timestamp> {
        match self {
            Self::Every { ms } => Some(Timestamp::from_millis(t.as_millis().saturating_add(*ms))),
            Self::Expr(text) => {
                let cron = text.parse::<croner::Cron>().ok()?;
                let at = chrono::DateTime::from_timestamp_millis(i64::try_from(t.as_millis()).ok()?)?;
                let next = cron.find_next_occurrence(&at, false).ok()?;
                u64::try_from(next.timestamp_millis()).ok().map(Timestamp::from_millis)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-18T20:26:40Z, a Wednesday.
    const WED: Timestamp = Timestamp::from_millis(1_795_000_000_000);
    const DAY: u64 = 86_400_000;

    fn midnight(days_after_wed: u64) -> Timestamp {
        Timestamp::from_millis((WED.as_millis() / DAY + days_after_wed) * DAY)
    }

    #[test]
    fn weekdays_count_from_sunday_as_zero_like_cron() {
        assert_eq!(Schedule::expr("0 0 * * 1").unwrap().next_after(WED), Some(midnight(5)), "Monday");
        assert_eq!(Schedule::expr("0 0 * * 0").unwrap().next_after(WED), Some(midnight(4)), "Sunday");
        assert_eq!(Schedule::expr("0 0 * * 7").unwrap().next_after(WED), Some(midnight(4)), "Sunday too");
    }

    #[test]
    fn the_next_time_is_strictly_later() {
        let s = Schedule::expr("* * * * *").unwrap();
        let t = s.next_after(WED).unwrap();
        assert_eq!(s.next_after(t).unwrap().as_millis() - t.as_millis(), 60_000);
        assert_eq!(Schedule::every(5_000).unwrap().next_after(WED).unwrap().millis_since(WED), 5_000);
    }

    #[test]
    fn bad_schedules_say_what_is_wrong() {
        assert!(matches!(Schedule::expr("0 3 * *"), Err(ScheduleError::Malformed(..))));
        assert!(matches!(Schedule::expr("0 0 * * * *"), Err(ScheduleError::Malformed(..))), "six fields");
        assert!(matches!(Schedule::expr("61 * * * *"), Err(ScheduleError::Malformed(..))));
        assert_eq!(Schedule::every(0), Err(ScheduleError::ZeroInterval));
        assert_eq!(Schedule::expr("0 0 31 2 *").unwrap().next_after(WED), None, "there is no 31 February");
    }
}
