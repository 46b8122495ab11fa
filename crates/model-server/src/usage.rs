//! What a model server says an answer used (`Usage`), in each API's words, and its rate limit
//! (`Limit`): a 429 with the headers the real APIs send, saying when the limit resets.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

/// The tokens one answer used, as the server reported them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens read fresh (neither written to nor read from the cache).
    pub input: u64,
    pub output: u64,
    /// Prompt tokens written to the cache (Anthropic's `cache_creation_input_tokens`; none in
    /// the OpenAI and Gemini APIs).
    pub cache_write: u64,
    /// Prompt tokens read from the cache.
    pub cache_read: u64,
}

impl Usage {
    /// An answer of `output` tokens to a prompt of `prompt`, half of which was read from the
    /// cache and, where the API writes one (`writes`), a quarter written to it: every count
    /// differs, so a reader that mixes them up is caught.
    pub(crate) fn of(prompt: u64, output: u64, writes: bool) -> Self {
        let cache_read = prompt / 2;
        let cache_write = if writes { prompt / 4 } else { 0 };
        Self { input: prompt - cache_read - cache_write, output, cache_write, cache_read }
    }

    /// As the Anthropic Messages API says it.
    pub(crate) fn anthropic(&self) -> Value {
        json!({
            "input_tokens": self.input, "cache_creation_input_tokens": self.cache_write,
            "cache_read_input_tokens": self.cache_read, "output_tokens": self.output, "service_tier": "standard",
        })
    }

    /// As the OpenAI Responses API says it: its input counts the cached tokens too.
    pub(crate) fn openai(&self) -> Value {
        let input = self.input + self.cache_read;
        json!({
            "input_tokens": input, "input_tokens_details": {"cached_tokens": self.cache_read},
            "output_tokens": self.output, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input + self.output,
        })
    }

    /// As the Gemini API says it (`usageMetadata`): its prompt counts the cached tokens too.
    pub(crate) fn gemini(&self) -> Value {
        let prompt = self.input + self.cache_read;
        json!({"promptTokenCount": prompt, "cachedContentTokenCount": self.cache_read,
               "candidatesTokenCount": self.output, "totalTokenCount": prompt + self.output})
    }
}

/// A rate limit that resets at `until`: the API's (a request rate), or, with `plan`, a plan's
/// usage limit as the ChatGPT backend tells Codex of it (`usage_limit_reached`, which Codex does
/// not retry, and its window in `x-codex-primary-*` headers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub until: SystemTime,
    pub plan: bool,
}

impl Limit {
    /// Whole seconds from `now` to the reset, rounded up (`retry-after`); 0 once it passed.
    pub fn retry_after(&self, now: SystemTime) -> u64 {
        let left = self.until.duration_since(now).unwrap_or(Duration::ZERO);
        left.as_secs() + u64::from(left.subsec_nanos() > 0)
    }

    /// The headers of its 429, as each API sends them: `retry-after` in seconds, and the reset
    /// as Anthropic (RFC 3339, and its unified limit's Unix time) or OpenAI (a duration:
    /// `30s`, `1m5s`) says it.
    pub(crate) fn headers(&self, now: SystemTime, openai: bool) -> Vec<(String, String)> {
        let after = self.retry_after(now);
        let mut headers = vec![("retry-after".to_owned(), after.to_string())];
        let unix = self.until.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if openai {
            let reset = format!("{}m{}s", after / 60, after % 60);
            headers.extend([
                ("x-ratelimit-limit-requests".to_owned(), "60".to_owned()),
                ("x-ratelimit-remaining-requests".to_owned(), "0".to_owned()),
                ("x-ratelimit-reset-requests".to_owned(), reset),
            ]);
            if self.plan {
                headers.extend([
                    ("x-codex-primary-used-percent".to_owned(), "100.0".to_owned()),
                    ("x-codex-primary-window-minutes".to_owned(), "300".to_owned()),
                    ("x-codex-primary-reset-at".to_owned(), unix.to_string()),
                    ("x-codex-primary-reset-after-seconds".to_owned(), after.to_string()),
                ]);
            }
        } else {
            let reset = rfc3339(unix);
            headers.extend([
                ("anthropic-ratelimit-requests-limit".to_owned(), "60".to_owned()),
                ("anthropic-ratelimit-requests-remaining".to_owned(), "0".to_owned()),
                ("anthropic-ratelimit-requests-reset".to_owned(), reset),
                ("anthropic-ratelimit-unified-status".to_owned(), "rejected".to_owned()),
                ("anthropic-ratelimit-unified-reset".to_owned(), unix.to_string()),
            ]);
        }
        headers
    }
}

impl Limit {
    /// The body of a plan's usage limit, as the ChatGPT backend sends it (none for the API's
    /// rate limit, whose body is the API's error).
    pub(crate) fn plan_body(&self, now: SystemTime) -> Option<Value> {
        let unix = self.until.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        self.plan.then(|| {
            json!({"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached",
                "plan_type": "plus", "resets_at": unix, "resets_in_seconds": self.retry_after(now)}})
        })
    }
}

/// `secs` after the Unix epoch as RFC 3339 in UTC (`2026-11-28T08:30:00Z`).
fn rfc3339(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rest = secs % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rest / 3_600, rest % 3_600 / 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_count_differs_and_each_api_adds_up_as_its_own() {
        let used = Usage::of(100, 7, true);
        assert_eq!(used, Usage { input: 25, output: 7, cache_write: 25, cache_read: 50 });
        assert_eq!(used.anthropic()["cache_read_input_tokens"], 50);
        let used = Usage::of(100, 7, false);
        assert_eq!(used.openai()["input_tokens"], 100);
        assert_eq!(used.openai()["input_tokens_details"]["cached_tokens"], 50);
        assert_eq!(used.gemini()["totalTokenCount"], 107);
    }

    #[test]
    fn a_limit_says_when_it_resets_in_each_apis_headers() {
        let now = UNIX_EPOCH + Duration::from_secs(1_795_854_600);
        let limit = Limit { until: now + Duration::from_millis(65_200), plan: false };
        assert_eq!(limit.retry_after(now), 66);
        assert_eq!(limit.retry_after(now + Duration::from_secs(100)), 0);
        let header = |headers: Vec<(String, String)>, name: &str| {
            headers.into_iter().find(|(n, _)| n == name).map(|(_, v)| v).unwrap()
        };
        assert_eq!(header(limit.headers(now, true), "x-ratelimit-reset-requests"), "1m6s");
        assert_eq!(header(limit.headers(now, false), "anthropic-ratelimit-requests-reset"), "2026-11-28T08:31:05Z");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
