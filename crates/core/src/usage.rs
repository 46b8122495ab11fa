//! What an agent's model calls used (`Tokens`), as its client records each answer's usage in its
//! session (`Used`: Claude's transcript, Codex's rollout, …), and the ledger bosun keeps of it per
//! agent (`Usage`): each response counted once, by its id, whatever number of lines repeat it,
//! and its largest count standing (a client may write a response's usage before its end). A
//! record older than the agent (the history a fork's or a resumed session's file copies) or older
//! than the newest one counted (its log read again) is not new.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The most tokens one response is believed to use: a count above is not summed.
pub const TOKENS_MOST: u64 = 1_000_000_000;
/// How many of its newest responses an agent's ledger keeps by id (a newer count of one of them
/// replaces the older); older ones are only summed.
const RECENT: usize = 64;
/// Milliseconds in an hour, the ledger's finest division of time.
pub const HOUR_MS: u64 = 3_600_000;

/// Tokens of one or more model calls, in the four kinds prices tell apart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// Prompt tokens read fresh (neither written to nor read from a cache).
    pub input: u64,
    pub output: u64,
    /// Prompt tokens written to the cache.
    pub cache_write: u64,
    /// Prompt tokens read from the cache.
    pub cache_read: u64,
}

impl Tokens {
    /// All four kinds together.
    pub fn total(&self) -> u64 {
        self.input.saturating_add(self.output).saturating_add(self.cache_write).saturating_add(self.cache_read)
    }

    pub fn is_zero(&self) -> bool {
        self.total() == 0
    }

    /// Adds `other` to these.
    pub fn add(&mut self, other: &Tokens) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
    }

    fn sub(&mut self, other: &Tokens) {
        self.input = self.input.saturating_sub(other.input);
        self.output = self.output.saturating_sub(other.output);
        self.cache_write = self.cache_write.saturating_sub(other.cache_write);
        self.cache_read = self.cache_read.saturating_sub(other.cache_read);
    }
}

/// One response's usage, as a client recorded it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Used {
    /// The response's id (Claude's message id, Codex's response id).
    pub response: String,
    /// When the client recorded it, when its record says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<crate::Timestamp>,
    /// The model the client asked, when its record says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub tokens: Tokens,
    /// Of `cache_write`, those written to the cache for an hour (Anthropic prices them apart).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_1h: u64,
    /// What it cost, in nano-dollars, when its model had a price as it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Used {
    /// A record read from a client's session: none when a count is missing, negative or absurd
    /// (over `TOKENS_MOST`), or its id is empty or long — such a record is not summed.
    pub fn read(response: &str, model: Option<&str>, counts: [Option<i128>; 4]) -> Option<Self> {
        let count = |n: Option<i128>| n.and_then(|n| u64::try_from(n).ok()).filter(|n| *n <= TOKENS_MOST);
        let [input, output, cache_write, cache_read] = counts.map(count);
        let tokens = Tokens { input: input?, output: output?, cache_write: cache_write?, cache_read: cache_read? };
        let short = |s: &str| !s.is_empty() && s.len() <= 200;
        let model = model.filter(|m| short(m)).map(str::to_owned);
        short(response).then(|| Self {
            response: response.to_owned(),
            at: None,
            model,
            tokens,
            cache_write_1h: 0,
            cost: None,
        })
    }

    /// The same, recorded at `at` (an RFC 3339 time, as the clients write them; none when it is
    /// not one).
    pub fn at(mut self, at: Option<&str>) -> Self {
        let parsed = at.and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
        self.at = parsed.and_then(|t| u64::try_from(t.timestamp_millis()).ok()).map(crate::Timestamp::from_millis);
        self
    }
}

/// An agent's ledger: its tokens by model (`""` for a model its client did not name), and their
/// cost where the model had a price.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub by_model: BTreeMap<String, Tokens>,
    /// The cost of each model's priced responses, in nano-dollars.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cost_by_model: BTreeMap<String, u64>,
    /// The model its client last said it asks (for records that do not name theirs: Codex's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The models some of whose responses had no price: their cost is unknown.
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub unpriced: std::collections::BTreeSet<String>,
    /// When the newest response counted was recorded, when its record said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    newest: Option<crate::Timestamp>,
    /// Its newest responses, oldest first, as last counted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    recent: Vec<Counted>,
    /// What it spent in each hour (UTC, counted from the epoch: `Timestamp / HOUR_MS`), by
    /// model: a response in the hour its client recorded it, else in the hour bosun read it.
    #[serde(default, skip_serializing_if = "Hours::is_empty")]
    pub by_hour: Hours,
}

/// Spend by hour (UTC, counted from the epoch: `Timestamp / HOUR_MS`), then by model; written as
/// a list of pairs (a map's number keys do not read back inside a tagged or flattened record).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Vec<(u64, BTreeMap<String, Spend>)>", into = "Vec<(u64, BTreeMap<String, Spend>)>")]
pub struct Hours(pub BTreeMap<u64, BTreeMap<String, Spend>>);

impl Hours {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Vec<(u64, BTreeMap<String, Spend>)>> for Hours {
    fn from(pairs: Vec<(u64, BTreeMap<String, Spend>)>) -> Self {
        Self(pairs.into_iter().collect())
    }
}

impl From<Hours> for Vec<(u64, BTreeMap<String, Spend>)> {
    fn from(hours: Hours) -> Self {
        hours.0.into_iter().collect()
    }
}

/// A response as the ledger counted it, in its hour.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Counted {
    #[serde(flatten)]
    used: Used,
    #[serde(default)]
    hour: u64,
}

/// What one model's responses spent in a span: their tokens, the cost of those that had a
/// price (nano-dollars), and whether some had none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spend {
    pub tokens: Tokens,
    pub cost: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unpriced: bool,
}

impl Spend {
    /// Adds `other` to this.
    pub fn add(&mut self, other: &Spend) {
        self.tokens.add(&other.tokens);
        self.cost = self.cost.saturating_add(other.cost);
        self.unpriced |= other.unpriced;
    }

    /// Its cost, none when some of it had no price.
    pub fn known_cost(&self) -> Option<u64> {
        (!self.unpriced).then_some(self.cost)
    }
}

impl Usage {
    pub fn is_empty(&self) -> bool {
        self.by_model.is_empty()
    }

    /// Every model's tokens together.
    pub fn total(&self) -> Tokens {
        let mut total = Tokens::default();
        for tokens in self.by_model.values() {
            total.add(tokens);
        }
        total
    }

    /// What `model`'s responses cost, in nano-dollars; none when some had no price.
    pub fn cost_of(&self, model: &str) -> Option<u64> {
        if self.unpriced.contains(model) {
            return None;
        }
        self.cost_by_model.get(model).copied()
    }

    /// What each model's responses spent, all of them.
    pub fn spends(&self) -> BTreeMap<String, Spend> {
        let spend = |(model, tokens): (&String, &Tokens)| {
            let cost = self.cost_by_model.get(model).copied().unwrap_or(0);
            (model.clone(), Spend { tokens: *tokens, cost, unpriced: self.unpriced.contains(model) })
        };
        self.by_model.iter().map(spend).collect()
    }

    /// All of it, every model together.
    pub fn spend(&self) -> Spend {
        self.spends().values().fold(Spend::default(), |mut sum, s| {
            sum.add(s);
            sum
        })
    }

    /// What its priced responses cost, in nano-dollars, and whether some had no price.
    pub fn cost(&self) -> (u64, bool) {
        (self.cost_by_model.values().fold(0u64, |a, c| a.saturating_add(*c)), !self.unpriced.is_empty())
    }

    /// Whether `used`, read in the session of an agent made at `born`, would change the ledger:
    /// a larger count of one of its recent responses (a response's count only grows as its
    /// client writes it), or a response not counted yet that is no older than the agent and than
    /// the newest response counted.
    pub fn changes(&self, used: &Used, born: crate::Timestamp) -> bool {
        if let Some(known) = self.recent.iter().find(|r| r.used.response == used.response) {
            return known.used.tokens.total() < used.tokens.total();
        }
        used.at.is_none_or(|at| at >= born && self.newest.is_none_or(|newest| at >= newest))
    }

    /// Counts `used`, read at `read`, in place of an earlier count of the same response when it
    /// is recent.
    pub fn record(&mut self, used: &Used, read: crate::Timestamp) {
        let mut hour = used.at.unwrap_or(read).as_millis() / HOUR_MS;
        if let Some(i) = self.recent.iter().position(|r| r.used.response == used.response) {
            let old = self.recent.remove(i);
            // A response's later count stays in the hour of its first.
            hour = old.hour;
            let old = old.used;
            let model = old.model.as_deref().unwrap_or_default();
            if let Some(tokens) = self.by_model.get_mut(model) {
                tokens.sub(&old.tokens);
            }
            if let (Some(cost), Some(sum)) = (old.cost, self.cost_by_model.get_mut(model)) {
                *sum = sum.saturating_sub(cost);
            }
            if let Some(spend) = self.by_hour.0.get_mut(&hour).and_then(|h| h.get_mut(model)) {
                spend.tokens.sub(&old.tokens);
                spend.cost = spend.cost.saturating_sub(old.cost.unwrap_or(0));
            }
        }
        let model = used.model.clone().unwrap_or_default();
        self.by_model.entry(model.clone()).or_default().add(&used.tokens);
        match used.cost {
            Some(cost) => {
                let sum = self.cost_by_model.entry(model.clone()).or_default();
                *sum = sum.saturating_add(cost);
            }
            None => {
                self.unpriced.insert(model.clone());
            }
        }
        let spend = Spend { tokens: used.tokens, cost: used.cost.unwrap_or(0), unpriced: used.cost.is_none() };
        self.by_hour.0.entry(hour).or_default().entry(model).or_default().add(&spend);
        self.newest = self.newest.max(used.at);
        self.recent.push(Counted { used: used.clone(), hour });
        if self.recent.len() > RECENT {
            self.recent.remove(0);
        }
    }

    /// What it spent from the hour of `since` on (all of it without one), by model.
    pub fn since(&self, since: Option<crate::Timestamp>) -> BTreeMap<String, Spend> {
        let from = since.map_or(0, |t| t.as_millis() / HOUR_MS);
        let mut sums: BTreeMap<String, Spend> = BTreeMap::new();
        for models in self.by_hour.0.range(from..).map(|(_, m)| m) {
            for (model, spend) in models {
                sums.entry(model.clone()).or_default().add(spend);
            }
        }
        sums
    }
}

/// The forms `--since` takes, for errors.
pub const SINCE_FORMS: &str =
    "a date (`2026-11-28`, from its start in UTC), an RFC 3339 time (`2026-11-28T09:00:00Z`) or a span back from now (`90m`, `24h`, `7d`)";

/// A time to count spend from that cannot be read, as given (its first 40 characters).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0:?} is not {SINCE_FORMS}")]
pub struct SinceError(pub String);

/// The time `text` names, `now` being now: a date (its start, UTC), an RFC 3339 time, or a span
/// back from now in minutes, hours or days.
pub fn since(text: &str, now: crate::Timestamp) -> Result<crate::Timestamp, SinceError> {
    let bad = || SinceError(text.chars().take(40).collect());
    let t = text.trim();
    let millis = if let Ok(date) = chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        date.and_hms_opt(0, 0, 0).ok_or_else(bad)?.and_utc().timestamp_millis()
    } else if let Ok(time) = chrono::DateTime::parse_from_rfc3339(t) {
        time.timestamp_millis()
    } else {
        let split = t.find(|c: char| !c.is_ascii_digit()).filter(|i| *i > 0).ok_or_else(bad)?;
        let n: u64 = t[..split].parse().map_err(|_| bad())?;
        let unit = match &t[split..] {
            "m" => 60_000,
            "h" => HOUR_MS,
            "d" => 24 * HOUR_MS,
            _ => return Err(bad()),
        };
        let back = n.checked_mul(unit).ok_or_else(bad)?;
        return Ok(crate::Timestamp::from_millis(now.as_millis().saturating_sub(back)));
    };
    u64::try_from(millis).map(crate::Timestamp::from_millis).map_err(|_| bad())
}

/// The UTC day (`2026-11-28`) an hour of the ledger (`by_hour`'s key) is in.
pub fn day_of(hour: u64) -> String {
    let secs = i64::try_from(hour.saturating_mul(HOUR_MS / 1000)).unwrap_or(i64::MAX);
    chrono::DateTime::from_timestamp(secs, 0).map_or_else(|| "?".to_owned(), |t| t.date_naive().to_string())
}

/// A count with thousands apart, as people read it: `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn used(response: &str, model: &str, input: i128, output: i128) -> Used {
        Used::read(response, Some(model), [Some(input), Some(output), Some(3), Some(4)]).unwrap()
    }

    const BORN: crate::Timestamp = crate::Timestamp::from_millis(0);

    #[test]
    fn a_response_counts_once_at_its_newest_count_and_models_apart() {
        let mut usage = Usage::default();
        usage.record(&used("msg_1", "opus", 10, 1), BORN);
        assert!(!usage.changes(&used("msg_1", "opus", 10, 1), BORN), "the same line again");
        assert!(usage.changes(&used("msg_1", "opus", 10, 20), BORN), "its final count");
        usage.record(&used("msg_1", "opus", 10, 20), BORN);
        assert!(!usage.changes(&used("msg_1", "opus", 10, 1), BORN), "an older line read again");
        usage.record(&used("msg_2", "haiku", 5, 5), BORN);
        assert_eq!(usage.by_model["opus"], Tokens { input: 10, output: 20, cache_write: 3, cache_read: 4 });
        assert_eq!(usage.total().total(), 10 + 20 + 3 + 4 + 5 + 5 + 3 + 4);
        for i in 0..100 {
            usage.record(&used(&format!("msg_{}", i + 3), "opus", 1, 1), BORN);
        }
        assert_eq!(usage.recent.len(), RECENT, "bounded");
        assert_eq!(usage.by_model["opus"].input, 10 + 100);
    }

    #[test]
    fn missing_negative_or_absurd_counts_and_odd_ids_are_not_summed() {
        assert!(Used::read("m", None, [Some(1), None, Some(0), Some(0)]).is_none());
        assert!(Used::read("m", None, [Some(1), Some(-2), Some(0), Some(0)]).is_none());
        assert!(Used::read("m", None, [Some(1), Some(2_000_000_000), Some(0), Some(0)]).is_none());
        assert!(Used::read("", None, [Some(1), Some(1), Some(0), Some(0)]).is_none());
        assert!(Used::read(&"m".repeat(300), None, [Some(1), Some(1), Some(0), Some(0)]).is_none());
        let odd = Used::read("m", Some(&"x".repeat(300)), [Some(1), Some(1), Some(0), Some(0)]).unwrap();
        assert_eq!(odd.model, None, "a model name that long is not kept");
    }

    #[test]
    fn a_record_older_than_the_agent_or_than_the_newest_counted_is_not_new() {
        fn at(t: &str) -> Option<&str> {
            Some(t)
        }
        let born = crate::Timestamp::from_millis(1_795_850_000_000); // 2026-11-28T07:13:20Z
        let mut usage = Usage::default();
        let copied = used("msg_0", "opus", 9, 9).at(at("2026-11-28T07:00:00Z"));
        assert!(copied.at.is_some());
        assert!(!usage.changes(&copied, born), "a fork's copy of its parent's history");
        let first = used("msg_1", "opus", 1, 1).at(at("2026-11-28T07:20:00.500Z"));
        assert!(usage.changes(&first, born));
        usage.record(&first, BORN);
        let second = used("msg_2", "opus", 1, 1).at(at("2026-11-28T07:21:00Z"));
        usage.record(&second, BORN);
        for i in 3..100 {
            usage.record(&used(&format!("msg_{i}"), "opus", 1, 1).at(at("2026-11-28T07:22:00Z")), BORN);
        }
        assert!(!usage.changes(&first, born), "out of the recent window, yet older than the newest: read again");
        let later = used("msg_100", "opus", 1, 1).at(at("2026-11-28T07:23:00+00:00"));
        assert!(usage.changes(&later, born));
        assert!(usage.changes(&used("msg_101", "opus", 1, 1), born), "no time: its id decides");
        assert_eq!(used("m", "o", 1, 1).at(at("yesterday")).at, None);
    }

    #[test]
    fn spend_is_kept_by_hour_a_recount_in_its_own_hour() {
        let hour = |h: u64| crate::Timestamp::from_millis(1_795_824_000_000 + h * HOUR_MS); // 2026-11-28T00:00Z
        let mut usage = Usage::default();
        let priced = |mut u: Used| {
            u.cost = Some(100);
            u
        };
        usage.record(&priced(used("msg_1", "opus", 10, 1)), hour(1));
        usage.record(&used("msg_2", "mystery", 5, 5), hour(2));
        // msg_1's final count is read an hour later: it stays in its first hour.
        usage.record(&priced(used("msg_1", "opus", 10, 20)), hour(3));
        assert_eq!(usage.by_hour.0.len(), 2, "{:?}", usage.by_hour);
        let first = usage.by_hour.0[&(hour(1).as_millis() / HOUR_MS)]["opus"];
        assert_eq!((first.tokens.output, first.cost), (20, 100));
        let since = usage.since(Some(hour(2)));
        assert_eq!(since.keys().collect::<Vec<_>>(), ["mystery"], "hour 1 is before");
        assert_eq!(since["mystery"].known_cost(), None, "no price: unknown, not 0");
        assert_eq!(usage.since(None)["opus"].tokens, usage.by_model["opus"]);
        // A record with its own time goes in its hour, whenever it is read.
        let late = used("msg_3", "opus", 1, 1).at(Some("2026-11-27T23:59:59Z"));
        usage.record(&late, hour(5));
        assert_eq!(day_of(*usage.by_hour.0.keys().next().unwrap()), "2026-11-27");
        assert_eq!(day_of(hour(1).as_millis() / HOUR_MS), "2026-11-28");
    }

    #[test]
    fn since_reads_a_date_a_time_or_a_span_and_refuses_the_rest() {
        let now = crate::Timestamp::from_millis(1_795_860_000_000); // 2026-11-28T10:00:00Z
        let ms = |t: &str| since(t, now).map(crate::Timestamp::as_millis);
        assert_eq!(ms("2026-11-28"), Ok(1_795_824_000_000));
        assert_eq!(ms("2026-11-28T09:00:00Z"), Ok(1_795_856_400_000));
        assert_eq!(ms("2026-11-28T10:00:00+01:00"), Ok(1_795_856_400_000));
        assert_eq!(ms("24h"), Ok(1_795_860_000_000 - 24 * HOUR_MS));
        assert_eq!(ms("7d"), Ok(1_795_860_000_000 - 7 * 24 * HOUR_MS));
        assert_eq!(ms("90m"), Ok(1_795_860_000_000 - 90 * 60_000));
        for bad in ["", "yesterday", "24", "h", "-1d", "5w", "2026-13-01", "1969-12-31", "99999999999999999999d"] {
            let e = since(bad, now).unwrap_err();
            assert!(e.to_string().contains("RFC 3339") && e.to_string().contains("`24h`"), "{bad}: {e}");
        }
    }
}
