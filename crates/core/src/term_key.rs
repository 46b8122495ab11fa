//! Keys a person types into an agent's terminal through bosun (the dashboard's panel): what may
//! be sent, and the bounds a request of them keeps.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The most keys one request may carry.
pub const KEYS_MAX: usize = 256;
/// The most text one request may carry, in bytes.
pub const KEYS_TEXT_MAX: usize = 16 * 1024;
/// The largest terminal, in columns or rows, a session may be sized to.
pub const TERM_SIDE_MAX: u16 = 1000;

/// One key, or text typed literally.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TermKey {
    Text(String),
    Enter,
    Tab,
    Esc,
    Backspace,
    Up,
    Down,
    Left,
    Right,
    /// Control and a letter, or one of `@[\]^_`.
    Ctrl(char),
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum KeysError {
    #[error("too many keys in one request ({0}; at most {KEYS_MAX})")]
    TooMany(usize),
    #[error("too much text in one request ({0} bytes; at most {KEYS_TEXT_MAX})")]
    TooLong(usize),
    #[error("there is no key Ctrl+{0:?}: only Ctrl with a letter or one of @[\\]^_")]
    NoSuchCtrl(char),
    #[error("a terminal of {0}×{1} is not one bosun sizes a session to (1 to {TERM_SIDE_MAX} each way)")]
    BadSize(u16, u16),
}

impl TermKey {
    /// Whether `keys` may be typed: bounded in number and text, every control key a real one.
    pub fn check(keys: &[TermKey]) -> Result<(), KeysError> {
        if keys.len() > KEYS_MAX {
            return Err(KeysError::TooMany(keys.len()));
        }
        let text: usize = keys.iter().map(|k| if let TermKey::Text(t) = k { t.len() } else { 0 }).sum();
        if text > KEYS_TEXT_MAX {
            return Err(KeysError::TooLong(text));
        }
        match keys.iter().find_map(|k| match k {
            TermKey::Ctrl(c) if !(c.is_ascii_alphabetic() || "@[\\]^_".contains(*c)) => Some(*c),
            _ => None,
        }) {
            Some(c) => Err(KeysError::NoSuchCtrl(c)),
            None => Ok(()),
        }
    }
}

/// Whether a session may be sized to `cols`×`rows`.
pub fn check_size(cols: u16, rows: u16) -> Result<(), KeysError> {
    let ok = |n: u16| (1..=TERM_SIDE_MAX).contains(&n);
    if ok(cols) && ok(rows) {
        Ok(())
    } else {
        Err(KeysError::BadSize(cols, rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_bounded_and_control_keys_real() {
        assert_eq!(TermKey::check(&[TermKey::Text("hi".into()), TermKey::Ctrl('c'), TermKey::Ctrl('\\')]), Ok(()));
        assert_eq!(TermKey::check(&[TermKey::Ctrl(';')]), Err(KeysError::NoSuchCtrl(';')));
        assert_eq!(TermKey::check(&vec![TermKey::Enter; KEYS_MAX + 1]), Err(KeysError::TooMany(KEYS_MAX + 1)));
        let long = TermKey::Text("x".repeat(KEYS_TEXT_MAX + 1));
        assert_eq!(TermKey::check(&[long]), Err(KeysError::TooLong(KEYS_TEXT_MAX + 1)));
    }

    #[test]
    fn sizes_are_bounded() {
        assert_eq!(check_size(80, 24), Ok(()));
        assert_eq!(check_size(0, 24), Err(KeysError::BadSize(0, 24)));
        assert_eq!(check_size(80, TERM_SIDE_MAX + 1), Err(KeysError::BadSize(80, TERM_SIDE_MAX + 1)));
    }
}
