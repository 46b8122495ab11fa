//! What a model's tokens cost: a price per model for each kind of token (US dollars per million,
//! kept exactly as micro-dollars per million), with a higher price above a prompt size where the
//! vendor charges one; the defaults bosun ships (`prices.toml`, with the date and the sources they
//! were taken from) and a user's file over them. A model in no table has no price: its cost is
//! unknown, never guessed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::usage::Used;

/// The prices bosun ships, and where they were read.
pub const DEFAULTS: &str = include_str!("prices.toml");
/// The most a price may be, in dollars per million tokens: a larger one is a typing error.
const RATE_MOST: f64 = 100_000.0;

/// A price file refused: what is wrong, and on which line.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{file}: line {line}: {what}")]
pub struct PriceError {
    pub file: String,
    pub line: usize,
    pub what: String,
}

/// Dollars per million tokens, as micro-dollars (a price of $0.005 is 5 000).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Rate(pub u64);

impl Rate {
    /// The cost of `tokens` at this rate, in pico-dollars.
    fn of(self, tokens: u64) -> u128 {
        u128::from(tokens) * u128::from(self.0)
    }
}

/// One model's prices.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Price {
    pub input: Rate,
    pub output: Rate,
    /// Prompt tokens written to the cache (Anthropic's five-minute cache).
    pub cache_write: Rate,
    /// Prompt tokens written to the cache for an hour, when the vendor prices them apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_1h: Option<Rate>,
    pub cache_read: Rate,
    /// The prices of a response whose prompt (input, cache written and read) is over so many
    /// tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above: Option<(u64, Box<Price>)>,
}

impl Price {
    /// What `used` cost, in nano-dollars.
    pub fn cost(&self, used: &Used) -> u64 {
        let t = &used.tokens;
        let prompt = t.input.saturating_add(t.cache_write).saturating_add(t.cache_read);
        if let Some((over, price)) = &self.above {
            if prompt > *over {
                return price.cost(used);
            }
        }
        // Of the cache writes, those for an hour, where they are priced apart.
        let long = if self.cache_write_1h.is_some() { used.cache_write_1h.min(t.cache_write) } else { 0 };
        let pico = self.input.of(t.input)
            + self.output.of(t.output)
            + self.cache_write.of(t.cache_write - long)
            + self.cache_write_1h.unwrap_or_default().of(long)
            + self.cache_read.of(t.cache_read);
        u64::try_from(pico.div_ceil(1000)).unwrap_or(u64::MAX)
    }
}

/// Prices by model, and the date they were taken.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prices {
    /// When they were taken (the defaults' date, or the user's file's own `taken`).
    pub taken: String,
    pub models: BTreeMap<String, Price>,
}

impl Prices {
    /// The prices bosun ships.
    pub fn defaults() -> Self {
        // Checked by the tests: the shipped file always parses.
        Self::parse(DEFAULTS, "prices.toml").unwrap_or_default()
    }

    /// bosun's own prices, read once.
    pub fn shipped() -> &'static Self {
        static SHIPPED: std::sync::OnceLock<Prices> = std::sync::OnceLock::new();
        SHIPPED.get_or_init(Self::defaults)
    }

    /// None set.
    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }

    /// The price of `model`: its own, else, for a dated snapshot of a model (`-20251001`,
    /// `-2024-08-06` after its name), that model's.
    pub fn of(&self, model: &str) -> Option<&Price> {
        if let Some(price) = self.models.get(model) {
            return Some(price);
        }
        self.models
            .iter()
            .filter(|(name, _)| model.strip_prefix(name.as_str()).is_some_and(dated))
            .max_by_key(|(name, _)| name.len())
            .map(|(_, price)| price)
    }

    /// What `used` cost, in nano-dollars, when its model has a price.
    pub fn cost(&self, used: &Used) -> Option<u64> {
        self.of(used.model.as_deref()?).map(|price| price.cost(used))
    }

    /// These prices with `user`'s over them, model by model.
    pub fn with(mut self, user: Prices) -> Self {
        if !user.taken.is_empty() {
            self.taken = format!("{} (yours: {})", self.taken, user.taken);
        }
        self.models.extend(user.models);
        self
    }

    /// A price file: `taken = "…"` and a `[models."<id>"]` table per model with `input`,
    /// `output`, `cache_write`, `cache_read` (and `cache_write_1h`, `above = { prompt_tokens,
    /// … }`) in dollars per million tokens. `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Self, PriceError> {
        let fail = |line: usize, what: String| PriceError { file: file.to_owned(), line, what };
        let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let line = e.span().map_or(1, |s| line_of(text, s.start));
            fail(line, e.message().to_owned())
        })?;
        let at = |key: &str| line_of(text, text.find(key).unwrap_or(0));
        let mut prices = Prices::default();
        for (key, value) in &doc {
            match (key.as_str(), value) {
                ("taken", toml::Value::String(s)) => prices.taken = s.clone(),
                ("models", toml::Value::Table(models)) => {
                    for (model, table) in models {
                        let price =
                            read_price(table, false).map_err(|what| fail(at(model), format!("{model}: {what}")))?;
                        prices.models.insert(model.clone(), price);
                    }
                }
                _ => {
                    return Err(fail(at(key), format!("unknown key `{key}`: expected `taken` or `[models.\"<id>\"]`")))
                }
            }
        }
        Ok(prices)
    }
}

/// Whether what follows a model's name is a date: `-` and eight digits, dashes between them
/// allowed.
fn dated(rest: &str) -> bool {
    let Some(date) = rest.strip_prefix('-') else { return false };
    date.chars().all(|c| c.is_ascii_digit() || c == '-') && date.chars().filter(char::is_ascii_digit).count() == 8
}

/// The line (from 1) of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset).map_or(1, |head| head.matches('\n').count() + 1)
}

fn read_price(value: &toml::Value, nested: bool) -> Result<Price, String> {
    let toml::Value::Table(t) = value else { return Err("expected a table of prices".into()) };
    const KEYS: [&str; 6] = ["input", "output", "cache_write", "cache_write_1h", "cache_read", "above"];
    if let Some(k) = t.keys().find(|k| !(KEYS.contains(&k.as_str()) || nested && *k == "prompt_tokens")) {
        return Err(format!("unknown key `{k}`: expected {}", KEYS.join(", ")));
    }
    let rate = |key: &str| -> Result<Option<Rate>, String> {
        let Some(v) = t.get(key) else { return Ok(None) };
        let dollars = match v {
            toml::Value::Integer(n) => *n as f64,
            toml::Value::Float(f) => *f,
            _ => return Err(format!("`{key}` is not a number of dollars per million tokens")),
        };
        if !(0.0..=RATE_MOST).contains(&dollars) {
            return Err(format!("`{key}` = {dollars} is not between 0 and {RATE_MOST} dollars per million tokens"));
        }
        Ok(Some(Rate((dollars * 1e6).round() as u64)))
    };
    let need = |key: &str| rate(key)?.ok_or_else(|| format!("`{key}` is missing"));
    let above = match t.get("above") {
        None => None,
        Some(_) if nested => return Err("`above` within `above`".into()),
        Some(v) => {
            let over = v.get("prompt_tokens").and_then(toml::Value::as_integer);
            let over = over.and_then(|n| u64::try_from(n).ok()).ok_or("`above` needs `prompt_tokens`, a count")?;
            Some((over, Box::new(read_price(v, true).map_err(|e| format!("above: {e}"))?)))
        }
    };
    Ok(Price {
        input: need("input")?,
        output: need("output")?,
        cache_write: rate("cache_write")?.unwrap_or_default(),
        cache_write_1h: rate("cache_write_1h")?,
        cache_read: rate("cache_read")?.unwrap_or_default(),
        above,
    })
}

/// `nanos` nano-dollars as dollars, to the cent from a dollar up and to four places below.
pub fn dollars(nanos: u64) -> String {
    let d = nanos as f64 / 1e9;
    if d >= 1.0 {
        format!("${d:.2}")
    } else {
        format!("${d:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::Tokens;

    fn used(model: &str, input: u64, output: u64, cache_write: u64, cache_read: u64) -> Used {
        Used {
            response: "r".into(),
            at: None,
            model: Some(model.into()),
            tokens: Tokens { input, output, cache_write, cache_read },
            cache_write_1h: 0,
            cost: None,
        }
    }

    #[test]
    fn the_shipped_prices_parse_and_price_the_clients_default_models() {
        let prices = Prices::parse(DEFAULTS, "prices.toml").unwrap();
        assert!(prices.taken.starts_with("2026-11-28"), "{}", prices.taken);
        for model in ["claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-4-5-20251001", "gpt-5.5", "gemini-2.5-pro"]
        {
            assert!(prices.of(model).is_some(), "{model}");
        }
        assert_eq!(prices.of("claude-opus-5-5-20261101"), prices.of("claude-opus-5-5"), "a dated snapshot");
        assert_eq!(prices.of("gpt-5.5-2026-08-06"), prices.of("gpt-5.5"));
        assert!(prices.of("claude-opus-5-55").is_none(), "another model, not a snapshot of claude-opus-5");
        assert!(prices.of("claude-opus-5-5-preview").is_none());
        assert!(prices.of("llama-9").is_none());
    }

    #[test]
    fn a_cost_is_each_kind_of_token_at_its_rate_and_a_long_prompt_at_its_own() {
        let prices = Prices::parse(
            "taken = \"t\"\n[models.m]\ninput = 4\noutput = 20\ncache_write = 5\ncache_write_1h = 8\ncache_read = 0.2\nabove = { prompt_tokens = 1000, input = 8, output = 40 }\n",
            "p",
        )
        .unwrap();
        // In nano-dollars: a token at $1 per million is 1000.
        assert_eq!(prices.cost(&used("m", 100, 10, 50, 0)), Some((400 + 200 + 250) * 1000));
        assert_eq!(prices.cost(&used("m", 100, 10, 0, 500)), Some((400 + 200 + 100) * 1000));
        let mut long = used("m", 100, 10, 50, 0);
        long.cache_write_1h = 20;
        assert_eq!(prices.cost(&long), Some((400 + 200 + 30 * 5 + 20 * 8) * 1000));
        assert_eq!(prices.cost(&used("m", 1001, 1, 0, 0)), Some((1001 * 8 + 40) * 1000), "above the prompt size");
        assert_eq!(prices.cost(&used("m", 0, 0, 0, 3)), Some(600), "a fraction of a micro-dollar is kept");
        assert_eq!(prices.cost(&used("other", 1, 1, 1, 1)), None, "no price: unknown, not zero");
        let mut anonymous = used("m", 1, 1, 1, 1);
        anonymous.model = None;
        assert_eq!(prices.cost(&anonymous), None);
    }

    #[test]
    fn a_bad_price_file_names_its_line() {
        let e = Prices::parse("taken = \"x\"\n[models.m]\ninput = 3\noutput = \"ten\"\n", "mine.toml").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("mine.toml", 2), "{e}");
        assert!(e.what.contains("`output`"), "{e}");
        let e = Prices::parse("taken = \"x\"\n\n[models.m]\ninput = 3\noutput = \n", "mine.toml").unwrap_err();
        assert_eq!(e.line, 5, "{e}");
        let e = Prices::parse("[models.m]\ninput = -1\noutput = 1\n", "f").unwrap_err();
        assert!(e.what.contains("between 0"), "{e}");
        let e = Prices::parse("[models.m]\noutput = 1\n", "f").unwrap_err();
        assert!(e.what.contains("`input` is missing"), "{e}");
        let e = Prices::parse("[models.m]\ninput = 1\noutput = 1\ncahce_read = 1\n", "f").unwrap_err();
        assert!(e.what.contains("unknown key `cahce_read`"), "{e}");
        assert!(Prices::parse("[other]\n", "f").unwrap_err().what.contains("unknown key `other`"));
    }

    #[test]
    fn a_users_prices_go_over_the_defaults_model_by_model() {
        let mine = Prices::parse("taken = \"2026-12-01\"\n[models.\"claude-opus-5-5\"]\ninput = 1\noutput = 2\n", "f");
        let prices = Prices::defaults().with(mine.unwrap());
        assert_eq!(prices.of("claude-opus-5-5").unwrap().input, Rate(1_000_000));
        assert!(prices.of("gpt-5.5").is_some(), "the rest kept");
        assert!(prices.taken.contains("yours: 2026-12-01"));
    }

    #[test]
    fn dollars_read_as_people_write_them() {
        assert_eq!(dollars(1_234_000_000), "$1.23");
        assert_eq!(dollars(1_060_000), "$0.0011");
        assert_eq!(dollars(0), "$0.0000");
    }
}
