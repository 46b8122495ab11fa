//! What bosun tells a person: a notice (an escalation, a job's start or end) goes to the desktop
//! and, when the agent or job names one, to a webhook as a JSON POST whose delivery is recorded.

use serde::{Deserialize, Serialize};

use crate::{AgentId, EscalationId, JobId, Timestamp};

/// Where notices are POSTed: an `http://` or `https://` URL, checked when it is given.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct WebhookUrl(String);

/// The longest URL taken.
const URL_MAX: usize = 2048;

/// A webhook URL refused, with the start of what was given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadWebhook {
    #[error("webhook {0:?} is not an http:// or https:// URL")]
    NotHttp(String),
    #[error("webhook {0:?} names no host")]
    NoHost(String),
    #[error("webhook {0:?}… is over {URL_MAX} bytes")]
    TooLong(String),
    #[error("webhook {0:?} holds a space or a control character")]
    Unprintable(String),
}

impl WebhookUrl {
    pub fn parse(text: &str) -> Result<Self, BadWebhook> {
        let shown: String = text.chars().take(60).collect();
        let rest = text.strip_prefix("http://").or_else(|| text.strip_prefix("https://"));
        match rest {
            None => Err(BadWebhook::NotHttp(shown)),
            Some("") => Err(BadWebhook::NoHost(shown)),
            Some(_) if text.len() > URL_MAX => Err(BadWebhook::TooLong(shown)),
            Some(_) if text.chars().any(|c| c.is_whitespace() || c.is_control()) => Err(BadWebhook::Unprintable(shown)),
            Some(_) => Ok(Self(text.to_owned())),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for WebhookUrl {
    type Error = BadWebhook;
    fn try_from(text: String) -> Result<Self, BadWebhook> {
        Self::parse(&text)
    }
}

impl From<WebhookUrl> for String {
    fn from(url: WebhookUrl) -> String {
        url.0
    }
}

impl std::fmt::Display for WebhookUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    Escalation,
    /// An agent has spent most of its budget.
    Budget,
    JobStarted,
    JobDone,
    JobFailed,
}

/// One thing to tell a person; a webhook receives it as JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    pub kind: NoticeKind,
    pub title: String,
    pub body: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<EscalationId>,
    pub at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_http_url_with_a_host_and_no_spaces_is_a_webhook() {
        assert!(WebhookUrl::parse("http://127.0.0.1:8080/hook").is_ok());
        assert!(WebhookUrl::parse("https://hooks.example.com/x?y=1").is_ok());
        for bad in ["", "ftp://x", "http://", "file:///etc/passwd", "http://a b", "http://a\nb", "$(touch x)"] {
            assert!(WebhookUrl::parse(bad).is_err(), "{bad:?}");
        }
        assert!(WebhookUrl::parse(&format!("http://{}", "a".repeat(3000))).is_err());
        assert!(serde_json::from_str::<WebhookUrl>("\"ftp://x\"").is_err());
    }
}
