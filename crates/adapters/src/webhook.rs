//! POSTing a notice to a webhook: JSON over HTTP(S), each try bounded in time, retried with
//! backoff while the failure may pass (no connection, a timeout, 429, 5xx). What came of it is
//! reported back, so the core records the delivery.

use std::time::Duration;

use bosun_core::WebhookUrl;

/// Sends one POST; `Err` says why it failed and whether another try may succeed.
pub trait Webhooks: Send + Sync {
    fn post(&self, url: &WebhookUrl, json: &str) -> Result<(), PostError>;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostError {
    pub message: String,
    pub retry: bool,
}

/// Real HTTP(S), through ureq.
pub struct HttpWebhooks {
    agent: ureq::Agent,
}

/// How long one try may take, connection included.
const TRY_TIMEOUT: Duration = Duration::from_secs(10);

impl Default for HttpWebhooks {
    fn default() -> Self {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(TRY_TIMEOUT))
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(concat!("bosun/", env!("CARGO_PKG_VERSION")))
            .build();
        Self { agent: config.into() }
    }
}

impl Webhooks for HttpWebhooks {
    fn post(&self, url: &WebhookUrl, json: &str) -> Result<(), PostError> {
        let answer = self
            .agent
            .post(url.as_str())
            .header("content-type", "application/json")
            .send(json)
            .map_err(|e| PostError { message: e.to_string(), retry: true })?;
        let status = answer.status().as_u16();
        match status {
            200..=299 => Ok(()),
            429 | 500..=599 => Err(PostError { message: format!("HTTP {status}"), retry: true }),
            _ => Err(PostError { message: format!("HTTP {status}"), retry: false }),
        }
    }
}

/// The waits between tries: 1 s, 2 s, 4 s, 8 s by default (five tries in about 15 s);
/// `BOSUN_WEBHOOK_BACKOFF_MS` sets the first.
pub fn backoff() -> Vec<Duration> {
    let first = std::env::var("BOSUN_WEBHOOK_BACKOFF_MS").ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(1000);
    (0..4).map(|i| Duration::from_millis(first << i)).collect()
}

/// Posts `json` to `url`, again after each wait of `waits` while the failure may pass: how many
/// tries it took, and the last error when none succeeded.
pub fn deliver(hooks: &dyn Webhooks, url: &WebhookUrl, json: &str, waits: &[Duration]) -> (u32, Option<String>) {
    let mut tries = 0;
    loop {
        tries += 1;
        match hooks.post(url, json) {
            Ok(()) => return (tries, None),
            Err(e) if !e.retry || tries as usize > waits.len() => return (tries, Some(e.message)),
            Err(_) => std::thread::sleep(waits[tries as usize - 1]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Fails with the given errors in turn, then succeeds; counts its calls.
    struct Flaky(Mutex<Vec<PostError>>, Mutex<u32>);

    impl Webhooks for Flaky {
        fn post(&self, _: &WebhookUrl, _: &str) -> Result<(), PostError> {
            *self.1.lock().unwrap() += 1;
            let mut errors = self.0.lock().unwrap();
            if errors.is_empty() {
                Ok(())
            } else {
                Err(errors.remove(0))
            }
        }
    }

    fn err(retry: bool) -> PostError {
        PostError { message: "HTTP 503".into(), retry }
    }

    #[test]
    fn a_passing_failure_is_retried_until_it_succeeds_and_a_lasting_one_is_not() {
        let url = WebhookUrl::parse("http://127.0.0.1:9/x").unwrap();
        let waits = [Duration::ZERO; 4];
        let flaky = Flaky(Mutex::new(vec![err(true), err(true)]), Mutex::new(0));
        assert_eq!(deliver(&flaky, &url, "{}", &waits), (3, None));
        let refused = Flaky(Mutex::new(vec![err(false)]), Mutex::new(0));
        assert_eq!(deliver(&refused, &url, "{}", &waits), (1, Some("HTTP 503".into())));
        let down = Flaky(Mutex::new(vec![err(true); 10]), Mutex::new(0));
        assert_eq!(deliver(&down, &url, "{}", &waits), (5, Some("HTTP 503".into())));
        assert_eq!(*down.1.lock().unwrap(), 5, "five tries in all");
    }
}
