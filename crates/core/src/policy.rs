//! The recovery policy: what bosun does when an agent goes idle, dies, fails or stops at a
//! prompt. Each trigger has a chain of steps (seed 002: nudge ×N → resume ×M → escalate); a step
//! is an action with a number of attempts and a cooldown. The same model serves the CLI
//! (`--on-idle 'nudge*2:Continue'`), policy files and, later, runbooks.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{AgentError, Classify, PermissionRule, TurnClass};

/// What bosun does about an agent, trigger by trigger. The default does nothing but watch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    #[serde(default, skip_serializing_if = "Chain::is_empty")]
    pub on_idle: Chain,
    /// Also accepted as `on_exit` (seed 000).
    #[serde(default, alias = "on_exit", skip_serializing_if = "Chain::is_empty")]
    pub on_dead: Chain,
    #[serde(default, skip_serializing_if = "Chain::is_empty")]
    pub on_error: Chain,
    /// Chains for particular errors, used instead of `on_error` for them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub on_error_kind: BTreeMap<AgentError, Chain>,
    #[serde(default, skip_serializing_if = "Chain::is_empty")]
    pub on_prompt: Chain,
    /// Chains for idle turns of a class, used instead of `on_idle` for them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub on_idle_class: BTreeMap<TurnClass, Chain>,
    /// How idle turns are classified; without it (and without `on_idle_class`) they are not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classify: Option<Classify>,
    /// Without hooks, how long an agent must stay idle before `on_idle` fires (any activity
    /// cancels it). With hooks, idle is certain and fires at once.
    #[serde(rename = "grace", default = "default_grace", with = "duration")]
    pub grace_ms: u64,
    /// Whether bosun answers the agent's folder-trust dialog with "yes" in a workspace it made
    /// (the default); when not, the dialog is a setup prompt for `on_prompt`.
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub accept_trust: bool,
    /// Permission requests these rules cover are allowed at once (`Bash(git *)`, `Write`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<PermissionRule>,
    /// Permission requests these rules cover are denied at once; deny wins over allow.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<PermissionRule>,
    /// Where the agent's escalations are POSTed, besides the desktop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<crate::WebhookUrl>,
    /// What it may spend: at 80 % a person is told, at 100 % it is paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<crate::budget::Budget>,
}

pub const DEFAULT_GRACE_MS: u64 = 60_000;

/// What a rate limit gets when the policy says nothing for it: `wait*forever`.
static WAIT_CHAIN: std::sync::LazyLock<Chain> = std::sync::LazyLock::new(|| {
    Chain(vec![Step { action: Action::Wait { message: None }, attempts: Attempts::Forever, cooldown_ms: 0 }])
});

impl Default for Policy {
    fn default() -> Self {
        Self {
            on_idle: Chain::default(),
            on_dead: Chain::default(),
            on_error: Chain::default(),
            on_error_kind: BTreeMap::new(),
            on_prompt: Chain::default(),
            on_idle_class: BTreeMap::new(),
            classify: None,
            grace_ms: DEFAULT_GRACE_MS,
            accept_trust: true,
            allow: Vec::new(),
            deny: Vec::new(),
            webhook: None,
            budget: None,
        }
    }
}

fn yes() -> bool {
    true
}

fn is_yes(b: &bool) -> bool {
    *b
}

fn default_grace() -> u64 {
    DEFAULT_GRACE_MS
}

/// What starts a chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    Idle,
    Dead,
    Error,
    Prompt,
    /// It reached its budget (escalations only: no chain starts on it).
    Budget,
}

/// The chain of a trigger that has none.
static NO_CHAIN: Chain = Chain(Vec::new());

/// Steps tried in order; each is used up before the next.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "OneOrMany", into = "Vec<Step>")]
pub struct Chain(pub Vec<Step>);

/// A step: an action, how many times to try it, and how long to wait before each try.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "StepForm", into = "StepTable")]
pub struct Step {
    pub action: Action,
    pub attempts: Attempts,
    pub cooldown_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Type `message` into the agent's session (only while it waits for input).
    Nudge { message: String },
    /// Restart the agent in the same workspace with its conversation resumed, then give it
    /// `message`. Also accepted as `recover` (seed 000).
    #[serde(alias = "recover")]
    Resume {
        #[serde(default)]
        message: Option<String>,
    },
    /// Run a shell command in the workspace: exit 0 means done, anything else goes on to the
    /// next action.
    Gate { run: String },
    /// Wait out a rate limit: until its reset (when the client said it), or an exponential,
    /// bounded backoff (when not), each with a jitter; then type `message` (by default, that
    /// the limit has reset). The default chain of `rate_limited`.
    Wait {
        #[serde(default)]
        message: Option<String>,
    },
    /// Move a rate-limited agent to the next account of its client, named in bosun's config,
    /// that no agent waits out a limit on, its conversation resumed there with `message` (by
    /// default, that it is on another account); when none has room, wait as `wait` does.
    Switch {
        #[serde(default)]
        message: Option<String>,
    },
    /// Ask a person: an escalation record and a notification.
    Escalate,
    /// The agent's work is done.
    Done,
    /// The agent's work has failed.
    Fail,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Attempts {
    Times(u32),
    #[serde(with = "forever")]
    Forever,
}

impl Chain {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Policy {
    /// Whether idle turns are classified.
    pub fn classifies(&self) -> bool {
        self.classify.is_some() || !self.on_idle_class.is_empty()
    }

    /// The chain a trigger starts: a particular error's own chain before `on_error`, an idle
    /// turn's class's own chain before `on_idle`.
    pub fn chain_for(&self, trigger: Trigger, error: Option<AgentError>, class: Option<TurnClass>) -> &Chain {
        match (trigger, class.and_then(|c| self.on_idle_class.get(&c))) {
            (Trigger::Idle, Some(chain)) => chain,
            _ => self.chain(trigger, error),
        }
    }

    /// The chain a trigger starts (a particular error's own chain before `on_error`). A rate
    /// limit neither names is waited out (`wait*forever`).
    pub fn chain(&self, trigger: Trigger, error: Option<AgentError>) -> &Chain {
        match trigger {
            Trigger::Idle => &self.on_idle,
            Trigger::Dead => &self.on_dead,
            Trigger::Prompt => &self.on_prompt,
            Trigger::Error => match error.and_then(|e| self.on_error_kind.get(&e)) {
                Some(chain) => chain,
                None if self.on_error.is_empty() && error == Some(AgentError::RateLimited) => &WAIT_CHAIN,
                None => &self.on_error,
            },
            Trigger::Budget => &NO_CHAIN,
        }
    }
}

impl Attempts {
    /// Whether `used` tries leave another.
    pub fn allows(self, used: u32) -> bool {
        match self {
            Self::Times(n) => used < n,
            Self::Forever => true,
        }
    }
}

impl Action {
    pub fn label(&self) -> &'static str {
        match self {
            Self::Nudge { .. } => "nudge",
            Self::Resume { .. } => "resume",
            Self::Gate { .. } => "gate",
            Self::Wait { .. } => "wait",
            Self::Switch { .. } => "switch",
            Self::Escalate => "escalate",
            Self::Done => "done",
            Self::Fail => "fail",
        }
    }
}

/// Why a policy step could not be read; the message shows the syntax.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?}: {reason} (expected ACTION[*ATTEMPTS][+COOLDOWN][:ARGUMENT], e.g. `nudge*2+30s:Continue`, `resume:Try again`, `gate:cargo test`, `wait`, `escalate`)")]
pub struct StepError {
    pub text: String,
    pub reason: String,
}

/// `ACTION[*ATTEMPTS][+COOLDOWN][:ARGUMENT]`: `nudge*2+30s:Continue`, `nudge*forever:Go on`,
/// `resume:Carry on`, `gate:cargo test`, `wait`, `wait:Go on`, `switch`, `escalate`, `done`, `fail`.
impl FromStr for Step {
    type Err = StepError;

    fn from_str(text: &str) -> Result<Self, StepError> {
        let err = |reason: &str| StepError { text: text.to_owned(), reason: reason.to_owned() };
        let (head, arg) = match text.split_once(':') {
            Some((h, a)) => (h.trim(), Some(a.trim())),
            None => (text.trim(), None),
        };
        let (head, cooldown_ms) = match head.split_once('+') {
            Some((h, c)) => (h, parse_duration(c).map_err(|e| err(&e.to_string()))?),
            None => (head, 0),
        };
        let (name, attempts) = match head.split_once('*') {
            Some((n, "forever")) => (n, Attempts::Forever),
            Some((n, a)) => (n, Attempts::Times(a.parse().map_err(|_| err("attempts must be a number or `forever`"))?)),
            None => (head, Attempts::Times(1)),
        };
        let arg = arg.filter(|a| !a.is_empty()).map(str::to_owned);
        let action = match (name, arg) {
            ("nudge", Some(message)) => Action::Nudge { message },
            ("nudge", None) => return Err(err("a nudge needs its message")),
            ("resume" | "recover", message) => Action::Resume { message },
            ("gate", Some(run)) => Action::Gate { run },
            ("gate", None) => return Err(err("a gate needs its command")),
            ("wait", message) => Action::Wait { message },
            ("switch", message) => Action::Switch { message },
            ("escalate", None) => Action::Escalate,
            ("done", None) => Action::Done,
            ("fail", None) => Action::Fail,
            ("escalate" | "done" | "fail", Some(_)) => return Err(err("this action takes no argument")),
            _ => return Err(err("unknown action")),
        };
        Ok(Step { action, attempts, cooldown_ms })
    }
}

/// "250ms", "30s", "5m", "2h", or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<u64, BadDuration> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| BadDuration::NotADuration(text.to_owned()))?;
    let scale = match unit {
        "ms" => 1,
        "" | "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(BadDuration::UnknownUnit(text.to_owned())),
    };
    Ok(n * scale)
}

/// A duration that cannot be read, as given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadDuration {
    #[error("{0:?} is not a duration such as 30s, 5m or 250ms")]
    NotADuration(String),
    #[error("{0:?} has an unknown unit (use ms, s, m or h)")]
    UnknownUnit(String),
}

pub fn format_duration(ms: u64) -> String {
    match ms {
        0 => "0s".into(),
        ms if ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 60_000 == 0 => format!("{}m", ms / 60_000),
        ms if ms % 1_000 == 0 => format!("{}s", ms / 1_000),
        ms => format!("{ms}ms"),
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.action.label())?;
        match self.attempts {
            Attempts::Times(1) => {}
            Attempts::Times(n) => write!(f, "*{n}")?,
            Attempts::Forever => f.write_str("*forever")?,
        }
        if self.cooldown_ms > 0 {
            write!(f, "+{}", format_duration(self.cooldown_ms))?;
        }
        match &self.action {
            Action::Nudge { message }
            | Action::Resume { message: Some(message) }
            | Action::Wait { message: Some(message) }
            | Action::Switch { message: Some(message) } => write!(f, ":{message}"),
            Action::Gate { run } => write!(f, ":{run}"),
            _ => Ok(()),
        }
    }
}

// --- serde forms: a step is a table (`{ action = "nudge", message = "…", attempts = 2 }`) or a
// string, either the bare action (`"escalate"`) or the CLI syntax (`"nudge*2:Continue"`); a
// chain is one step or a list of them.

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    Many(Vec<Step>),
    One(Step),
}

impl From<OneOrMany> for Chain {
    fn from(v: OneOrMany) -> Self {
        match v {
            OneOrMany::Many(v) => Chain(v),
            OneOrMany::One(s) => Chain(vec![s]),
        }
    }
}

impl From<Chain> for Vec<Step> {
    fn from(c: Chain) -> Self {
        c.0
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum StepForm {
    Text(StepText),
    Table(StepTable),
}

#[derive(Deserialize)]
#[serde(try_from = "String")]
struct StepText(Step);

impl TryFrom<String> for StepText {
    type Error = StepError;
    fn try_from(s: String) -> Result<Self, StepError> {
        s.parse().map(StepText)
    }
}

#[derive(Serialize, Deserialize)]
struct StepTable {
    #[serde(flatten)]
    action: Action,
    #[serde(default = "one")]
    attempts: Attempts,
    #[serde(default, with = "duration")]
    cooldown: u64,
}

fn one() -> Attempts {
    Attempts::Times(1)
}

impl From<StepForm> for Step {
    fn from(f: StepForm) -> Self {
        match f {
            StepForm::Text(StepText(s)) => s,
            StepForm::Table(t) => Step { action: t.action, attempts: t.attempts, cooldown_ms: t.cooldown },
        }
    }
}

impl From<Step> for StepTable {
    fn from(s: Step) -> Self {
        StepTable { action: s.action, attempts: s.attempts, cooldown: s.cooldown_ms }
    }
}

/// Durations as "30s" strings (or bare numbers of seconds).
mod duration {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(ms: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format_duration(*ms))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Seconds(u64),
            Text(String),
        }
        match Form::deserialize(d)? {
            Form::Seconds(s) => Ok(s * 1000),
            Form::Text(t) => super::parse_duration(&t).map_err(serde::de::Error::custom),
        }
    }
}

/// `attempts = "forever"`.
mod forever {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("forever")
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<(), D::Error> {
        match String::deserialize(d)?.as_str() {
            "forever" => Ok(()),
            other => Err(serde::de::Error::custom(format!("attempts {other:?}: a number or \"forever\""))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_read_from_the_cli_syntax() {
        let s: Step = "nudge*2+30s:Continue, please".parse().unwrap();
        assert_eq!(s.action, Action::Nudge { message: "Continue, please".into() });
        assert_eq!((s.attempts, s.cooldown_ms), (Attempts::Times(2), 30_000));
        assert_eq!(s.to_string(), "nudge*2+30s:Continue, please");
        let s: Step = "nudge*forever:Go".parse().unwrap();
        assert_eq!(s.attempts, Attempts::Forever);
        assert_eq!("recover".parse::<Step>().unwrap().action, Action::Resume { message: None });
        assert_eq!("gate:cargo test".parse::<Step>().unwrap().action, Action::Gate { run: "cargo test".into() });
        let s: Step = "wait*forever:Go on".parse().unwrap();
        assert_eq!((s.action.clone(), s.attempts), (Action::Wait { message: Some("Go on".into()) }, Attempts::Forever));
        assert_eq!(s.to_string(), "wait*forever:Go on");
        assert!("nudge".parse::<Step>().unwrap_err().to_string().contains("needs its message"));
        assert!("nudge*x:a".parse::<Step>().is_err());
        assert!("jump".parse::<Step>().unwrap_err().to_string().contains("unknown action"));
        assert!("nudge+5y:a".parse::<Step>().unwrap_err().to_string().contains("unknown unit"));
    }

    /// A rate limit neither `on_error_kind` nor `on_error` names is waited out; one they name
    /// gets theirs, and no other error gets the wait.
    #[test]
    fn a_rate_limit_the_policy_says_nothing_for_is_waited_out() {
        let waits =
            |p: &Policy| p.chain(Trigger::Error, Some(AgentError::RateLimited)).0.first().map(|s| s.action.label());
        let mut p = Policy::default();
        assert_eq!(waits(&p), Some("wait"));
        assert_eq!(p.chain(Trigger::Error, Some(AgentError::RateLimited)).0[0].attempts, Attempts::Forever);
        assert!(p.chain(Trigger::Error, Some(AgentError::Unauthorized)).is_empty());
        assert!(p.chain(Trigger::Idle, None).is_empty());
        p.on_error = Chain(vec!["escalate".parse().unwrap()]);
        assert_eq!(waits(&p), Some("escalate"));
        p.on_error_kind.insert(AgentError::RateLimited, Chain(vec!["nudge:Go".parse().unwrap()]));
        assert_eq!(waits(&p), Some("nudge"));
        let table: Step = toml_step(r#"action = "wait""#);
        assert_eq!(table.action, Action::Wait { message: None });
    }

    fn toml_step(text: &str) -> Step {
        #[derive(Deserialize)]
        struct One {
            step: Step,
        }
        toml::from_str::<One>(&format!("step = {{ {text} }}")).unwrap().step
    }

    #[test]
    fn durations_read_and_print() {
        assert_eq!(parse_duration("250ms"), Ok(250));
        assert_eq!(parse_duration("2m"), Ok(120_000));
        assert_eq!(parse_duration("7"), Ok(7_000));
        assert_eq!(format_duration(90_000), "90s");
        assert!(parse_duration("abc").is_err());
    }
}
