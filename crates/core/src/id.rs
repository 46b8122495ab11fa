//! Identifiers and user-given names, with the validation that keeps them safe to use as path
//! components, branch names and tmux session names.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Eight lowercase base-36 characters, drawn by the daemon; the core only formats them.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Nonce(String);

impl Nonce {
    pub const LEN: usize = 8;

    /// Formats random bits as a nonce. The same bits always give the same nonce.
    pub fn from_bits(mut bits: u64) -> Self {
        const ALPHABET: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
        let mut s = String::with_capacity(Self::LEN);
        for _ in 0..Self::LEN {
            s.push(char::from(ALPHABET[(bits % 36) as usize]));
            bits /= 36;
        }
        Self(s)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The branch a worktree gets when none is asked for: `ws-<nonce>`.
    pub fn default_branch(&self) -> String {
        format!("ws-{}", self.0)
    }
}

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

string_id!(
    /// An agent's id: its nonce.
    AgentId
);
string_id!(
    /// A workspace's id, which is also its directory name: `ws-<name>-<nonce>`.
    WorkspaceId
);
string_id!(
    /// The tmux session an agent runs in: `bosun-<agent id>`.
    SessionName
);

impl AgentId {
    pub fn new(nonce: &Nonce) -> Self {
        Self(nonce.0.clone())
    }

    pub fn session(&self) -> SessionName {
        SessionName(format!("bosun-{}", self.0))
    }

    /// The session of the agent's `n`th restart: a new name, so reports about the old session
    /// can never be taken for the new one.
    pub fn restarted_session(&self, n: u32) -> SessionName {
        SessionName(format!("bosun-{}-r{n}", self.0))
    }

    /// The session the agent had after `restarts` restarts.
    pub fn session_after(&self, restarts: u32) -> SessionName {
        match restarts {
            0 => self.session(),
            n => self.restarted_session(n),
        }
    }
}

impl WorkspaceId {
    pub fn new(name: &Name, nonce: &Nonce) -> Self {
        Self(format!("ws-{}-{}", name.0, nonce.0))
    }

    /// The name of the engine volume that holds it when it is a `WorkspaceKind::Volume`:
    /// `bosun-<id>`, with what a volume's name cannot hold made `_`.
    pub fn volume(&self) -> String {
        let safe = self.0.chars().map(|c| if c.is_ascii_alphanumeric() || "_.-".contains(c) { c } else { '_' });
        format!("bosun-{}", safe.collect::<String>())
    }
}

impl SessionName {
    /// The session name tmux reported, as bosun names its sessions.
    pub fn from_reported(name: &str) -> Self {
        Self(name.to_owned())
    }
}

/// A message sent to an agent, numbered in the order the core accepted it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MessageId(pub u64);

impl fmt::Display for MessageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "m{}", self.0)
    }
}

/// A request's id, drawn by the CLI that sends it and kept when it sends it again (after the
/// daemon died): a request already carried out is answered, not carried out twice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequestId(pub u64);

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{:016x}", self.0)
    }
}

/// A user-given name for an agent or workspace: 1 to 48 of `A-Z a-z 0-9 . _ -`, not starting
/// with `.` or `-`, and never containing `..`. Safe in a path, a branch name and a tmux target.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Name(String);

/// Why a name was refused; the message says what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("name is empty: give a name such as `fix-login`")]
    Empty,
    #[error("name {0:?} is longer than 48 characters")]
    TooLong(String),
    #[error("name {0:?} contains '/': use letters, digits, '.', '_' and '-' only")]
    Slash(String),
    #[error("name {0:?} contains '..': use letters, digits, '.', '_' and '-' only")]
    DotDot(String),
    #[error("name {0:?} contains whitespace: use '-' or '_' instead")]
    Space(String),
    #[error("name {0:?} contains a control character: use letters, digits, '.', '_' and '-' only")]
    Control(String),
    #[error("name {0:?} may not start with '.' or '-'")]
    BadStart(String),
    #[error("name {0:?} contains {1:?}: use letters, digits, '.', '_' and '-' only")]
    BadChar(String, char),
}

impl Name {
    pub const MAX_LEN: usize = 48;

    pub fn parse(s: &str) -> Result<Self, NameError> {
        // What an error shows of it: its start, so a huge name gives a short error.
        let owned = || match s.char_indices().nth(64) {
            Some((i, _)) => format!("{}…", &s[..i]),
            None => s.to_owned(),
        };
        if s.is_empty() {
            return Err(NameError::Empty);
        }
        if let Some(c) = s.chars().find(|c| !c.is_ascii_alphanumeric() && !"._-".contains(*c)) {
            return Err(match c {
                '/' => NameError::Slash(owned()),
                c if c.is_control() => NameError::Control(owned()),
                c if c.is_whitespace() => NameError::Space(owned()),
                c => NameError::BadChar(owned(), c),
            });
        }
        if s.contains("..") {
            return Err(NameError::DotDot(owned()));
        }
        if s.starts_with(['.', '-']) {
            return Err(NameError::BadStart(owned()));
        }
        if s.len() > Self::MAX_LEN {
            return Err(NameError::TooLong(owned()));
        }
        Ok(Self(s.to_owned()))
    }

    /// A valid name derived from arbitrary text (a command's file name, say): invalid characters
    /// become `-`, and an empty result becomes `agent`.
    pub fn derive(text: &str) -> Self {
        let mut s: String = text
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '-' })
            .take(Self::MAX_LEN)
            .collect();
        s = s.trim_matches('-').to_owned();
        Self::parse(&s).unwrap_or_else(|_| Self("agent".to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Name {
    type Error = NameError;
    fn try_from(s: String) -> Result<Self, NameError> {
        Self::parse(&s)
    }
}

impl From<Name> for String {
    fn from(n: Name) -> String {
        n.0
    }
}

/// FNV-1a (64 bits) over the parts, each ended by a zero byte: the one stable digest bosun
/// derives ids and a runbook's hash from.
pub fn fnv(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in parts.iter().flat_map(|p| p.bytes().chain([0])) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A job's id: `j` and its nonce.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JobId(String);

impl JobId {
    pub fn new(nonce: &Nonce) -> Self {
        Self(format!("j{}", nonce.as_str()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A pool slot's id: `<project>--<n>`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SlotId(String);

impl SlotId {
    pub fn new(project: &str, n: u32) -> Self {
        Self(format!("{project}--{n}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Its project and number, read back.
    pub fn parts(&self) -> Option<(&str, u32)> {
        let (project, n) = self.0.rsplit_once("--")?;
        Some((project, n.parse().ok()?))
    }
}

impl fmt::Display for SlotId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An escalation's number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EscalationId(pub u64);

impl fmt::Display for EscalationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "e{}", self.0)
    }
}

/// A queue item's number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ItemId(pub u64);

impl fmt::Display for ItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "i{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_refuse_paths_spaces_and_controls() {
        assert!(matches!(Name::parse("a/b"), Err(NameError::Slash(_))));
        assert!(matches!(Name::parse(".."), Err(NameError::DotDot(_))));
        assert!(matches!(Name::parse("a..b"), Err(NameError::DotDot(_))));
        assert!(matches!(Name::parse("a b"), Err(NameError::Space(_))));
        assert!(matches!(Name::parse("a\u{7}b"), Err(NameError::Control(_))));
        assert!(matches!(Name::parse("a\nb"), Err(NameError::Control(_))));
        assert!(matches!(Name::parse("-x"), Err(NameError::BadStart(_))));
        assert!(matches!(Name::parse(""), Err(NameError::Empty)));
        assert!(matches!(Name::parse(&"x".repeat(49)), Err(NameError::TooLong(_))));
        assert_eq!(Name::parse("fix-login_2.b").map(|n| n.0), Ok("fix-login_2.b".to_owned()));
    }

    #[test]
    fn derived_names_are_valid() {
        assert_eq!(Name::derive("claudeless").as_str(), "claudeless");
        assert_eq!(Name::derive("/usr/bin/my tool").as_str(), "usr-bin-my-tool");
        assert_eq!(Name::derive("..").as_str(), "agent");
    }

    #[test]
    fn nonces_are_eight_base36_characters() {
        let n = Nonce::from_bits(u64::MAX);
        assert_eq!(n.as_str().len(), Nonce::LEN);
        assert!(n.as_str().chars().all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()));
        assert_ne!(Nonce::from_bits(1), Nonce::from_bits(2));
    }
}
