//! The permission mode a Claude agent runs in (`--permission-mode`): the one bosun chose or its
//! command named, the one its client reported, and what `bosun show` says of it. Claude Code
//! 2.1.3xx starts in `auto` unless told otherwise: its classifier, not a person, decides the calls
//! its rules do not allow.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One of Claude Code's permission modes, as its command line and its hooks spell them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum PermissionMode {
    Default,
    AcceptEdits,
    Plan,
    Auto,
    DontAsk,
    BypassPermissions,
    /// A mode this bosun does not know (a newer client's), as it was spelled.
    Other(String),
}

/// The longest mode name read.
const NAME_MAX: usize = 40;

impl PermissionMode {
    /// The mode `text` names: a known one, another plain name (letters, digits, `-`, `_`, at
    /// most 40) as `Other`, else none (a report's field is untrusted).
    pub fn parse(text: &str) -> Option<Self> {
        let known = [Self::Default, Self::AcceptEdits, Self::Plan, Self::Auto, Self::DontAsk, Self::BypassPermissions];
        if let Some(mode) = known.into_iter().find(|m| m.label() == text) {
            return Some(mode);
        }
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        (!text.is_empty() && text.len() <= NAME_MAX && text.chars().all(plain)).then(|| Self::Other(text.to_owned()))
    }

    pub fn label(&self) -> &str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::Plan => "plan",
            Self::Auto => "auto",
            Self::DontAsk => "dontAsk",
            Self::BypassPermissions => "bypassPermissions",
            Self::Other(name) => name,
        }
    }

    /// Whether, in this mode, Claude asks about every call its own rules do not allow: its
    /// permission dialog shows and raises the `PermissionRequest` hook (`default`, `plan`). In
    /// the others it decides some calls or all by itself: `auto` with its classifier,
    /// `acceptEdits` file edits, `dontAsk` and `bypassPermissions` everything; an unknown mode
    /// is taken as one of those.
    pub fn asks_about_calls(&self) -> bool {
        matches!(self, Self::Default | Self::Plan)
    }

    /// The mode a command line names: `--permission-mode X` (or `=X`), or
    /// `--dangerously-skip-permissions` (bypassPermissions). `Some(None)` when it names one this
    /// bosun cannot read.
    pub fn named(command: &[String]) -> Option<Option<Self>> {
        let mut words = command.iter();
        let mut found = None;
        while let Some(w) = words.next() {
            if w == "--permission-mode" {
                found = Some(words.next().and_then(|m| Self::parse(m)));
            } else if let Some(m) = w.strip_prefix("--permission-mode=") {
                found = Some(Self::parse(m));
            } else if w == "--dangerously-skip-permissions" {
                found = Some(Some(Self::BypassPermissions));
            }
        }
        found
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

impl From<PermissionMode> for String {
    fn from(m: PermissionMode) -> String {
        m.label().to_owned()
    }
}

impl TryFrom<String> for PermissionMode {
    type Error = UnknownPermissionMode;
    fn try_from(s: String) -> Result<Self, UnknownPermissionMode> {
        Self::parse(&s).ok_or(UnknownPermissionMode(s))
    }
}

/// A permission mode no client has.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a permission mode")]
pub struct UnknownPermissionMode(pub String);

/// Who set the mode an agent runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModeFrom {
    /// bosun chose it: the agent has a permission policy and its command names no mode.
    Bosun,
    /// The agent's command names it.
    Command,
    /// Its client reported it (in its hooks' payloads), and neither bosun nor the command set it
    /// (or it was changed since, in the client).
    Client,
    /// Nobody set it and the client has not reported it yet: the client's own default.
    ClientDefault,
}

/// The permission mode an agent runs in, as `bosun show` says it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunsIn {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<PermissionMode>,
    pub from: ModeFrom,
}

impl RunsIn {
    /// The mode set at start (`set`: by bosun or the command), the one the client reported
    /// since, if it did: the reported one is what it runs in now, credited to whoever set it
    /// when it is the same.
    pub fn of(set: Option<(PermissionMode, ModeFrom)>, reported: Option<&PermissionMode>) -> Self {
        match (set, reported) {
            (Some((mode, from)), Some(seen)) if &mode == seen => Self { mode: Some(mode), from },
            (_, Some(seen)) => Self { mode: Some(seen.clone()), from: ModeFrom::Client },
            (Some((mode, from)), None) => Self { mode: Some(mode), from },
            (None, None) => Self { mode: None, from: ModeFrom::ClientDefault },
        }
    }

    /// One line for a person: `auto (reported by the client)`.
    pub fn describe(&self) -> String {
        let mode = self.mode.as_ref().map(PermissionMode::label);
        match (mode, self.from) {
            (Some(m), ModeFrom::Bosun) => format!("{m} (bosun's choice: its permission policy is asked first)"),
            (Some(m), ModeFrom::Command) => format!("{m} (its command names it)"),
            (Some(m), ModeFrom::Client | ModeFrom::ClientDefault) => format!("{m} (reported by the client)"),
            (None, _) => "the client's default (not reported yet)".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn modes_read_as_claude_spells_them_and_nothing_else() {
        assert_eq!(PermissionMode::parse("auto"), Some(PermissionMode::Auto));
        assert_eq!(PermissionMode::parse("bypassPermissions"), Some(PermissionMode::BypassPermissions));
        assert_eq!(PermissionMode::parse("yolo-2"), Some(PermissionMode::Other("yolo-2".into())));
        for bad in ["", "a b", "x\u{1b}[2J", &"m".repeat(41)] {
            assert_eq!(PermissionMode::parse(bad), None, "{bad:?}");
        }
        assert!(PermissionMode::Default.asks_about_calls() && PermissionMode::Plan.asks_about_calls());
        for mode in ["auto", "acceptEdits", "dontAsk", "bypassPermissions", "future"] {
            assert!(!PermissionMode::parse(mode).is_some_and(|m| m.asks_about_calls()), "{mode}");
        }
        let json = serde_json::to_string(&PermissionMode::AcceptEdits).unwrap_or_default();
        assert_eq!(json, "\"acceptEdits\"");
        assert!(serde_json::from_str::<PermissionMode>("\"no way\"").is_err());
    }

    #[test]
    fn a_command_names_its_mode_in_any_of_claudes_spellings() {
        let named = |w: &[&str]| PermissionMode::named(&words(w));
        assert_eq!(named(&["claude", "--permission-mode", "plan"]), Some(Some(PermissionMode::Plan)));
        assert_eq!(named(&["claude", "--permission-mode=acceptEdits"]), Some(Some(PermissionMode::AcceptEdits)));
        assert_eq!(named(&["claude", "--dangerously-skip-permissions"]), Some(Some(PermissionMode::BypassPermissions)));
        assert_eq!(named(&["claude", "--permission-mode"]), Some(None), "named, unreadable");
        assert_eq!(named(&["claude", "--model", "opus"]), None);
    }

    #[test]
    fn what_it_runs_in_is_the_newest_word_on_it() {
        let set = Some((PermissionMode::Default, ModeFrom::Bosun));
        let runs = RunsIn::of(set.clone(), None);
        assert_eq!((runs.mode, runs.from), (Some(PermissionMode::Default), ModeFrom::Bosun));
        let runs = RunsIn::of(set.clone(), Some(&PermissionMode::Default));
        assert_eq!(runs.from, ModeFrom::Bosun, "the client confirms bosun's choice");
        let runs = RunsIn::of(set, Some(&PermissionMode::AcceptEdits));
        assert_eq!((runs.mode, runs.from), (Some(PermissionMode::AcceptEdits), ModeFrom::Client), "changed since");
        let runs = RunsIn::of(None, Some(&PermissionMode::Auto));
        assert_eq!(runs.describe(), "auto (reported by the client)");
        assert_eq!(RunsIn::of(None, None).describe(), "the client's default (not reported yet)");
    }
}
