//! What a message typed into an agent may hold: text, not keys. A control character (Ctrl-C,
//! Ctrl-D, Escape and the sequences it starts, a carriage return) would act on the agent instead
//! of being read by it, so a request holding one is refused unless it asks for keys (`--raw`);
//! one limit on length holds for both session kinds, checked before anything is recorded.
//! Messages bosun makes itself (a runbook's nudge, a value rendered into it) are cleaned instead.

use thiserror::Error;

/// The longest message, in bytes: under what one tmux command carries (it fails between 16
/// and 20 KB) and what the session host types in one request (16 KiB).
pub const MESSAGE_MAX: usize = 12 * 1024;

#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum MessageTextError {
    #[error(
        "the message holds a control character ({shown} at byte {at}): bosun types text, not keys; \
         take it out, or give --raw to type it as it is"
    )]
    Control { at: usize, shown: String },
    #[error(
        "the message is {0} bytes; at most {MESSAGE_MAX} are typed: put a longer text in a file and name the file"
    )]
    TooLong(usize),
}

/// Whether `c` is a character a message may not hold: every control character but a newline
/// and a tab.
fn is_key(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// Whether `text` may be typed as a message; `raw` allows control characters.
pub fn check(text: &str, raw: bool) -> Result<(), MessageTextError> {
    if text.len() > MESSAGE_MAX {
        return Err(MessageTextError::TooLong(text.len()));
    }
    match text.char_indices().find(|(_, c)| !raw && is_key(*c)) {
        Some((at, c)) => Err(MessageTextError::Control { at, shown: c.escape_default().to_string() }),
        None => Ok(()),
    }
}

/// `text` without its control characters (newlines and tabs kept), cut to `MESSAGE_MAX` bytes
/// at a character boundary.
pub fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MESSAGE_MAX));
    for c in text.chars().filter(|c| !is_key(*c)) {
        if out.len() + c.len_utf8() > MESSAGE_MAX {
            break;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_refused_unless_raw_and_newlines_and_tabs_are_text() {
        assert_eq!(check("fix it\n\tplease", false), Ok(()));
        for (text, at) in [("\x03", 0), ("ok\x04", 2), ("a\x1b[2J", 1), ("line\r", 4), ("x\u{9b}y", 1), ("\x7f", 0)] {
            match check(text, false) {
                Err(MessageTextError::Control { at: got, .. }) => assert_eq!(got, at, "{text:?}"),
                other => panic!("{text:?}: {other:?}"),
            }
            assert_eq!(check(text, true), Ok(()), "{text:?} with --raw");
        }
        let e = check("\x03", false).unwrap_err().to_string();
        assert!(e.contains("\\u{3}") && e.contains("--raw"), "{e}");
    }

    #[test]
    fn one_limit_on_length_raw_or_not() {
        assert_eq!(check(&"a".repeat(MESSAGE_MAX), false), Ok(()));
        assert_eq!(check(&"a".repeat(MESSAGE_MAX + 1), true), Err(MessageTextError::TooLong(MESSAGE_MAX + 1)));
    }

    #[test]
    fn cleaning_drops_keys_and_cuts_at_a_character_boundary() {
        assert_eq!(clean("go\x03 on\x1b[31m\n\tnow"), "go on[31m\n\tnow");
        let long = "é".repeat(MESSAGE_MAX);
        let cut = clean(&long);
        assert!(cut.len() <= MESSAGE_MAX && cut.len() >= MESSAGE_MAX - 1 && cut.chars().all(|c| c == 'é'));
    }
}
