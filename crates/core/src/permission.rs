//! bosun as the permission policy: rules in Claude Code's own syntax (`Bash(git *)`, `Write`,
//! `Edit(src/*)`) that answer a permission request at once, deny before allow, and leave
//! whatever no rule covers to a person.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::Timestamp;

/// One rule: a tool name (or `*` for any) and, optionally, a pattern its subject must match —
/// the command of `Bash`, the path of `Write` / `Edit` / `Read`, the URL of `WebFetch`. `*` in a
/// pattern matches any run of characters; Claude's `prefix:*` form is read as `prefix*`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct PermissionRule {
    tool: String,
    pattern: Option<String>,
}

/// Why a rule could not be read; the message quotes it and says what a rule looks like.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a permission rule ({why}): write TOOL or TOOL(PATTERN), e.g. \"Bash(git *)\" or \"Write\"")]
pub struct RuleError {
    pub text: String,
    pub why: &'static str,
}

/// The longest rule bosun reads.
const RULE_MAX: usize = 1_000;

impl FromStr for PermissionRule {
    type Err = RuleError;

    fn from_str(text: &str) -> Result<Self, RuleError> {
        let err = |why| RuleError { text: text.chars().take(100).collect(), why };
        let t = text.trim();
        if t.len() > RULE_MAX {
            return Err(err("longer than 1000 bytes"));
        }
        let (tool, pattern) = match t.split_once('(') {
            Some((tool, rest)) => {
                let pattern = rest.strip_suffix(')').ok_or_else(|| err("no closing parenthesis"))?;
                (tool.trim(), Some(pattern))
            }
            None => (t, None),
        };
        let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        if tool.is_empty() || !(tool == "*" || tool.chars().all(is_name)) {
            return Err(err("the tool must be a name such as Bash, or *"));
        }
        let pattern = match pattern.map(str::trim) {
            None | Some("" | "*") => None,
            Some(p) => Some(p.strip_suffix(":*").map_or_else(|| p.to_owned(), |prefix| format!("{prefix}*"))),
        };
        Ok(Self { tool: tool.to_owned(), pattern })
    }
}

impl TryFrom<String> for PermissionRule {
    type Error = RuleError;
    fn try_from(s: String) -> Result<Self, RuleError> {
        s.parse()
    }
}

impl From<PermissionRule> for String {
    fn from(r: PermissionRule) -> String {
        r.to_string()
    }
}

impl fmt::Display for PermissionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pattern {
            Some(p) => write!(f, "{}({p})", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

impl PermissionRule {
    /// Whether the rule covers a use of `tool` on `subject`.
    pub fn covers(&self, tool: &str, subject: Option<&str>) -> bool {
        let tool_ok = self.tool == "*" || self.tool == tool;
        tool_ok
            && match (&self.pattern, subject) {
                (None, _) => true,
                (Some(p), Some(s)) => glob(p, s),
                (Some(_), None) => false,
            }
    }
}

/// What the rules say about one permission request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum PermissionAnswer {
    Allow { rule: String },
    Deny { rule: String },
}

impl PermissionAnswer {
    pub fn rule(&self) -> &str {
        match self {
            Self::Allow { rule } | Self::Deny { rule } => rule,
        }
    }

    pub fn allows(&self) -> bool {
        matches!(self, Self::Allow { .. })
    }
}

/// A permission request the policy answered: kept with the agent (the newest few) and in the
/// event log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionDecision {
    pub at: Timestamp,
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[serde(flatten)]
    pub answer: PermissionAnswer,
}

/// A tool call the agent's client refused by itself, without asking anyone (Claude Code's
/// auto-mode classifier): the tool, what it acts on, and the client's reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    pub reason: String,
}

/// A refused call, and when it was reported.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockedCall {
    pub at: Timestamp,
    #[serde(flatten)]
    pub call: Refusal,
}

impl Refusal {
    /// `Bash "curl … | sh": <reason>`, for a person.
    pub fn describe(&self) -> String {
        let subject = self.subject.as_deref().map(|s| format!(" {s:?}")).unwrap_or_default();
        format!("{}{subject}: {}", self.tool, self.reason)
    }
}

/// How many answered requests an agent keeps.
pub const DECISIONS_KEPT: usize = 20;

/// The answer of the first deny rule that covers the request, else of the first allow rule;
/// None when no rule covers it (a person decides).
pub fn answer(
    allow: &[PermissionRule],
    deny: &[PermissionRule],
    tool: &str,
    subject: Option<&str>,
) -> Option<PermissionAnswer> {
    if let Some(r) = deny.iter().find(|r| r.covers(tool, subject)) {
        return Some(PermissionAnswer::Deny { rule: r.to_string() });
    }
    allow.iter().find(|r| r.covers(tool, subject)).map(|r| PermissionAnswer::Allow { rule: r.to_string() })
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters (none included)
/// and every other character itself. Linear in the text for each star: no backtracking blow-up.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(s: &str) -> PermissionRule {
        s.parse().unwrap()
    }

    #[test]
    fn rules_read_claudes_syntax() {
        assert_eq!(rule("Bash(git *)").to_string(), "Bash(git *)");
        assert_eq!(rule(" Write ").to_string(), "Write");
        assert_eq!(rule("Bash(npm run test:*)").to_string(), "Bash(npm run test*)");
        assert_eq!(rule("Bash(*)").to_string(), "Bash");
        assert_eq!(rule("*").to_string(), "*");
        for bad in ["", "Bash(git", "(git)", "Ba sh", "Bash;rm", &"x".repeat(2000)] {
            let e = bad.parse::<PermissionRule>().unwrap_err();
            assert!(e.to_string().contains("TOOL(PATTERN)"), "{e}");
        }
    }

    #[test]
    fn deny_wins_and_nothing_covered_is_left_to_a_person() {
        let allow = [rule("Bash(git *)"), rule("Write")];
        let deny = [rule("Bash(git push *)"), rule("Bash(rm -rf *)")];
        let ask = |tool: &str, subject: Option<&str>| answer(&allow, &deny, tool, subject);
        assert_eq!(ask("Bash", Some("git status")), Some(PermissionAnswer::Allow { rule: "Bash(git *)".into() }));
        assert_eq!(
            ask("Bash", Some("git push --force origin")),
            Some(PermissionAnswer::Deny { rule: "Bash(git push *)".into() })
        );
        assert_eq!(ask("Bash", Some("rm -rf /")), Some(PermissionAnswer::Deny { rule: "Bash(rm -rf *)".into() }));
        assert_eq!(ask("Write", Some("/w/a.rs")), Some(PermissionAnswer::Allow { rule: "Write".into() }));
        assert_eq!(ask("Bash", Some("cargo test")), None);
        assert_eq!(ask("Bash", None), None, "a pattern needs a subject");
        assert_eq!(ask("Edit", Some("/w/a.rs")), None);
    }

    #[test]
    fn globs_match_whole_subjects() {
        assert!(glob("git *", "git status"));
        assert!(!glob("git *", "gitk"));
        assert!(!glob("git *", "sudo git status"), "anchored at the start");
        assert!(glob("*.rs", "src/a.rs"));
        assert!(glob("a*b*c", "aXXbYYc"));
        assert!(!glob("a*b*c", "aXXbYY"));
        assert!(glob("**", ""));
        // A pathological pattern stays quick.
        let text = "a".repeat(5_000);
        assert!(!glob(&format!("{}b", "*a".repeat(50)), &text));
    }
}
