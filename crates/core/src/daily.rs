//! Daily budgets (bosun's config, `[budget]`): what all agents together, and a repository's
//! agents together, may spend in a UTC day. A day's spend is each agent's ledger's hours of that
//! day; once it reaches a daily budget its agents are paused, and no new agent starts on it
//! until the next day.

use std::path::{Path, PathBuf};

use crate::budget::Budget;
use crate::usage::{Spend, Usage, HOUR_MS};
use crate::{Agent, State, Timestamp};

/// Milliseconds in a day.
pub const DAY_MS: u64 = 24 * HOUR_MS;

/// A daily budget over some agents: whose it is, the budget, and the repository it is of (none:
/// the whole daemon's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Daily {
    pub whose: String,
    pub budget: Budget,
    pub repo: Option<PathBuf>,
}

/// The start of `now`'s UTC day.
pub fn day_start(now: Timestamp) -> Timestamp {
    Timestamp::from_millis(now.as_millis() - now.as_millis() % DAY_MS)
}

/// The repository an agent works on: the one its workspace is a worktree of.
pub fn repo_of<'a>(state: &'a State, agent: &Agent) -> Option<&'a Path> {
    state.workspaces.get(&agent.workspace)?.kind.repo()
}

/// The daily budgets over an agent on `repo` (none: not in a repository).
pub fn over(state: &State, repo: Option<&Path>) -> Vec<Daily> {
    let config = &state.config.budget;
    let all = config.daily.map(|budget| Daily { whose: "the daemon's daily budget".into(), budget, repo: None });
    let mine = repo.and_then(|r| config.repos.get(r).map(|b| (r, b.daily)));
    let mine = mine.map(|(r, budget)| Daily {
        whose: format!("repository {}'s daily budget", r.display()),
        budget,
        repo: Some(r.to_owned()),
    });
    all.into_iter().chain(mine).collect()
}

/// Whether the agent's spend counts against `daily`.
pub fn holds_over(state: &State, daily: &Daily, agent: &Agent) -> bool {
    daily.repo.as_deref().is_none_or(|r| repo_of(state, agent) == Some(r))
}

/// What `daily`'s agents spent today (UTC), in its unit; `changed` stands for the ledger of the
/// agent it names (one newer than the state's).
pub fn spent_today(state: &State, daily: &Daily, changed: Option<(&Agent, &Usage)>, now: Timestamp) -> u64 {
    let since = Some(day_start(now));
    let mut sum = 0u64;
    for a in state.agents.values().filter(|a| holds_over(state, daily, a)) {
        let usage = changed.filter(|(c, _)| c.id == a.id).map_or(&a.usage, |(_, u)| u);
        let spend = usage.since(since).values().fold(Spend::default(), |mut all, s| {
            all.add(s);
            all
        });
        sum = sum.saturating_add(match daily.budget {
            Budget::Usd(_) => spend.cost,
            Budget::Tokens(_) => spend.tokens.total(),
        });
    }
    sum
}

/// What is left of `daily` today: none once spent.
pub fn left(state: &State, daily: &Daily, now: Timestamp) -> Option<Budget> {
    let used = spent_today(state, daily, None, now);
    match daily.budget {
        Budget::Usd(limit) => limit.checked_sub(used).filter(|n| *n > 0).map(Budget::Usd),
        Budget::Tokens(limit) => limit.checked_sub(used).filter(|n| *n > 0).map(Budget::Tokens),
    }
}
