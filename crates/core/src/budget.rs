//! What an agent may spend (`Budget`: dollars, or tokens of every kind), how much of it its
//! ledger says is spent (`Spent`), and why an agent is paused (`Pause`): at its budget, bosun
//! stops its turn and delivers nothing more to it until a person raises the budget.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::usage::Usage;
use crate::Timestamp;

/// The share of a budget spent at which a person is told.
pub const NOTICE_PERCENT: u64 = 80;
/// The forms a budget is written in, for errors.
pub const FORMS: &str = "a number and a unit: `5usd`, `0.50usd`, `2Mtok`, `500ktok`, `10000tok`";

/// A budget refused: what was given and the forms accepted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("budget {0:?} is not {FORMS}")]
pub struct BudgetError(pub String);

/// How much an agent may spend. Written `"5usd"` / `"2Mtok"`, or `{ usd = 5 }` /
/// `{ tokens = 2000000 }` in a runbook or a policy file; kept as the latter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "BudgetForm", into = "BudgetTable")]
pub enum Budget {
    /// US dollars, as nano-dollars: its priced responses' cost (a response of a model with no
    /// price counts nothing, and its agent's cost shows as unknown).
    Usd(u64),
    /// Tokens of every kind: input, output, cache written and cache read.
    Tokens(u64),
}

impl Budget {
    /// How much of it `usage` spends.
    pub fn spent(&self, usage: &Usage) -> Spent {
        let (used, limit) = match self {
            Self::Usd(limit) => (usage.cost().0, *limit),
            Self::Tokens(limit) => (usage.total().total(), *limit),
        };
        Spent { used, limit }
    }

    /// What is left of it once these ledgers are spent: none when nothing is.
    pub fn left<'a>(&self, ledgers: impl Iterator<Item = &'a Usage>) -> Option<Budget> {
        let used = ledgers.fold(0u64, |sum, u| sum.saturating_add(self.spent(u).used));
        match *self {
            Self::Usd(limit) => limit.checked_sub(used).filter(|n| *n > 0).map(Self::Usd),
            Self::Tokens(limit) => limit.checked_sub(used).filter(|n| *n > 0).map(Self::Tokens),
        }
    }

    /// This budget, or `own` where it is of the same kind and smaller.
    pub fn least_of(self, own: Option<Budget>) -> Budget {
        match (self, own) {
            (Self::Usd(a), Some(Self::Usd(b))) => Self::Usd(a.min(b)),
            (Self::Tokens(a), Some(Self::Tokens(b))) => Self::Tokens(a.min(b)),
            _ => self,
        }
    }

    /// The same kind of budget, `amount` of its unit (as `Spent::used` counts it).
    pub fn of_amount(&self, amount: u64) -> String {
        match self {
            Self::Usd(_) => crate::price::dollars(amount),
            Self::Tokens(_) => format!("{amount} tokens"),
        }
    }
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Usd(nanos) => write!(f, "{}", crate::price::dollars(*nanos)),
            Self::Tokens(n) if *n >= 1_000_000 && n % 10_000 == 0 => write!(f, "{}Mtok", *n as f64 / 1e6),
            Self::Tokens(n) if *n >= 1_000 && n % 1_000 == 0 => write!(f, "{}ktok", n / 1_000),
            Self::Tokens(n) => write!(f, "{n}tok"),
        }
    }
}

impl FromStr for Budget {
    type Err = BudgetError;

    /// `5usd`, `0.5usd`, `2Mtok`, `500ktok`, `10000tok` (a positive amount; case of the unit
    /// ignored but for `M` and `k`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BudgetError(s.chars().take(40).collect());
        let t = s.trim();
        let (number, unit) = t.split_at(t.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?);
        if number.is_empty() || number.starts_with('.') || number.ends_with('.') {
            return Err(bad());
        }
        let amount: f64 = number.parse().map_err(|_| bad())?;
        let scale = match unit {
            u if u.eq_ignore_ascii_case("usd") => {
                let nanos = (amount * 1e9).round();
                return if (1.0..1e18).contains(&nanos) { Ok(Self::Usd(nanos as u64)) } else { Err(bad()) };
            }
            "tok" => 1.0,
            "ktok" => 1e3,
            "Mtok" => 1e6,
            "Gtok" => 1e9,
            _ => return Err(bad()),
        };
        let tokens = (amount * scale).round();
        if (1.0..1e18).contains(&tokens) {
            Ok(Self::Tokens(tokens as u64))
        } else {
            Err(bad())
        }
    }
}

/// A budget as written: a string with its unit, or a table.
#[derive(Deserialize)]
#[serde(untagged)]
enum BudgetForm {
    Text(String),
    Table(BudgetTable),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BudgetTable {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tokens: Option<u64>,
}

impl TryFrom<BudgetForm> for Budget {
    type Error = BudgetError;

    fn try_from(form: BudgetForm) -> Result<Self, Self::Error> {
        match form {
            BudgetForm::Text(s) => s.parse(),
            BudgetForm::Table(BudgetTable { usd: Some(usd), tokens: None }) => format!("{usd}usd").parse(),
            BudgetForm::Table(BudgetTable { usd: None, tokens: Some(n) }) => format!("{n}tok").parse(),
            BudgetForm::Table(_) => Err(BudgetError("a table with one of `usd` and `tokens`".into())),
        }
    }
}

impl From<Budget> for BudgetTable {
    fn from(b: Budget) -> Self {
        match b {
            Budget::Usd(nanos) => Self { usd: Some(nanos as f64 / 1e9), tokens: None },
            Budget::Tokens(n) => Self { usd: None, tokens: Some(n) },
        }
    }
}

/// How much of a budget is spent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spent {
    pub used: u64,
    pub limit: u64,
}

impl Spent {
    /// Whole percent of the budget spent.
    pub fn percent(&self) -> u64 {
        u64::try_from(u128::from(self.used) * 100 / u128::from(self.limit.max(1))).unwrap_or(u64::MAX)
    }

    pub fn is_over(&self) -> bool {
        self.used >= self.limit
    }

    pub fn is_near(&self) -> bool {
        self.percent() >= NOTICE_PERCENT
    }
}

/// Why an agent is paused, and since when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pause {
    /// The budget it reached.
    pub budget: Budget,
    /// Whose budget it is when not the agent's own: a daily budget's (`the daemon's daily
    /// budget`, `repository /src/app's daily budget`), spent by all its agents together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<String>,
    /// How much of it was spent as it was reached (the budget's unit: nano-dollars or tokens).
    pub spent: u64,
    pub at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_read_as_a_number_and_a_unit() {
        assert_eq!("5usd".parse(), Ok(Budget::Usd(5_000_000_000)));
        assert_eq!("0.25USD".parse(), Ok(Budget::Usd(250_000_000)));
        assert_eq!("2Mtok".parse(), Ok(Budget::Tokens(2_000_000)));
        assert_eq!("1.5Mtok".parse(), Ok(Budget::Tokens(1_500_000)));
        assert_eq!("500ktok".parse(), Ok(Budget::Tokens(500_000)));
        assert_eq!("10000tok".parse(), Ok(Budget::Tokens(10_000)));
        for bad in ["", "5", "usd", "5 dollars", "-5usd", "0usd", "5eur", ".5usd", "5.usd", "2mtok", "1e9usd", "5usd5"]
        {
            let e = bad.parse::<Budget>().unwrap_err();
            assert!(e.to_string().contains("`5usd`"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_budget_is_a_string_or_a_table_in_toml_and_json() {
        #[derive(Deserialize, Serialize)]
        struct Holder {
            budget: Budget,
        }
        let read = |t: &str| toml::from_str::<Holder>(t).map(|h| h.budget);
        assert_eq!(read("budget = \"5usd\"").unwrap(), Budget::Usd(5_000_000_000));
        assert_eq!(read("budget = { usd = 5 }").unwrap(), Budget::Usd(5_000_000_000));
        assert_eq!(read("budget = { usd = 0.3 }").unwrap(), Budget::Usd(300_000_000));
        assert_eq!(read("budget = { tokens = 2000000 }").unwrap(), Budget::Tokens(2_000_000));
        for bad in
            ["budget = { usd = 5, tokens = 3 }", "budget = { eur = 5 }", "budget = { usd = -1 }", "budget = \"5\""]
        {
            assert!(read(bad).is_err(), "{bad}");
        }
        for b in [Budget::Usd(1_234_567_891), Budget::Tokens(42)] {
            let json = serde_json::to_string(&Holder { budget: b }).unwrap();
            assert_eq!(serde_json::from_str::<Holder>(&json).unwrap().budget, b, "{json}");
        }
    }

    #[test]
    fn a_budget_says_itself_as_written() {
        assert_eq!(Budget::Usd(5_000_000_000).to_string(), "$5.00");
        assert_eq!(Budget::Tokens(2_000_000).to_string(), "2Mtok");
        assert_eq!(Budget::Tokens(1_500_000).to_string(), "1.5Mtok");
        assert_eq!(Budget::Tokens(500_000).to_string(), "500ktok");
        assert_eq!(Budget::Tokens(1234).to_string(), "1234tok");
        for b in ["2Mtok", "1.5Mtok", "500ktok", "1234tok"] {
            assert_eq!(b.parse::<Budget>().unwrap().to_string(), b);
        }
    }

    #[test]
    fn spent_is_near_at_80_percent_and_over_at_100() {
        let s = |used| Spent { used, limit: 1000 };
        assert!(!s(799).is_near() && s(800).is_near() && !s(800).is_over());
        assert!(s(1000).is_over() && s(5000).is_over());
        assert_eq!(Spent { used: u64::MAX, limit: 1 }.percent(), u64::MAX, "no overflow");
    }
}
