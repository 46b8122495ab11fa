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

/// How long apart the strokes of one request are typed (`strokes`).
pub const STROKES_APART_MS: u64 = 100;
/// The most strokes one request may be: its typing pauses at most 1.9 s in all.
pub const STROKES_MAX: usize = 20;

/// `keys` as a person types them: an Escape with more keys after it ends a stroke, and the next
/// is typed `STROKES_APART_MS` later, since a terminal program reads an Escape and what follows
/// it at once as one key (Escape twice as Alt+Escape, Escape then `b` as Alt+b).
pub fn strokes(keys: &[TermKey]) -> impl Iterator<Item = &[TermKey]> {
    keys.split_inclusive(|k| *k == TermKey::Esc)
}

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
    Home,
    End,
    PageUp,
    PageDown,
    Insert,
    Delete,
    /// Shift+Tab.
    BackTab,
    /// A function key, F1 to F12.
    F(u8),
    /// Control and a letter, or one of `@[\]^_`.
    Ctrl(char),
    /// Alt (Meta) and a printable ASCII character.
    Alt(char),
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum KeysError {
    #[error("too many keys in one request ({0}; at most {KEYS_MAX})")]
    TooMany(usize),
    #[error("too much text in one request ({0} bytes; at most {KEYS_TEXT_MAX})")]
    TooLong(usize),
    #[error("too many Escapes followed by more keys in one request ({0} strokes; at most {STROKES_MAX})")]
    TooManyStrokes(usize),
    #[error("there is no key Ctrl+{0:?}: only Ctrl with a letter or one of @[\\]^_")]
    NoSuchCtrl(char),
    #[error("there is no key Alt+{0:?}: only Alt with a printable ASCII character")]
    NoSuchAlt(char),
    #[error("there is no key F{0}: only F1 to F12")]
    NoSuchF(u8),
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
        let strokes = strokes(keys).count();
        if strokes > STROKES_MAX {
            return Err(KeysError::TooManyStrokes(strokes));
        }
        let bad = keys.iter().find_map(|k| match k {
            TermKey::Ctrl(c) if !(c.is_ascii_alphabetic() || "@[\\]^_".contains(*c)) => Some(KeysError::NoSuchCtrl(*c)),
            TermKey::Alt(c) if !c.is_ascii_graphic() => Some(KeysError::NoSuchAlt(*c)),
            TermKey::F(n) if !(1..=12).contains(n) => Some(KeysError::NoSuchF(*n)),
            _ => None,
        });
        bad.map_or(Ok(()), Err)
    }

    /// The bytes an xterm sends for it, its cursor keys in application mode when the program
    /// asked for that (`application_cursor`). For a checked key.
    pub fn bytes(&self, application_cursor: bool) -> Vec<u8> {
        let csi = |tail: &str| format!("\x1b[{tail}").into_bytes();
        // Cursor keys: `ESC O x` in application mode, `ESC [ x` otherwise.
        let cursor = |x: u8| if application_cursor { vec![0x1b, b'O', x] } else { vec![0x1b, b'[', x] };
        match self {
            Self::Text(t) => t.as_bytes().to_vec(),
            Self::Enter => vec![b'\r'],
            Self::Tab => vec![b'\t'],
            Self::Esc => vec![0x1b],
            Self::Backspace => vec![0x7f],
            Self::Up => cursor(b'A'),
            Self::Down => cursor(b'B'),
            Self::Right => cursor(b'C'),
            Self::Left => cursor(b'D'),
            Self::Home => cursor(b'H'),
            Self::End => cursor(b'F'),
            Self::Insert => csi("2~"),
            Self::Delete => csi("3~"),
            Self::PageUp => csi("5~"),
            Self::PageDown => csi("6~"),
            Self::BackTab => csi("Z"),
            Self::F(n @ 1..=4) => vec![0x1b, b'O', b'P' + (n - 1)],
            Self::F(n) => {
                // F5 is 15, then 17 to 21 and 23, 24: the numbers xterm skips are not keys.
                let code = match n {
                    5 => 15,
                    6..=10 => u16::from(*n) + 11,
                    _ => u16::from(*n) + 12,
                };
                csi(&format!("{code}~"))
            }
            // A letter or one of @[\]^_, whose control code is its own code less 64.
            Self::Ctrl(c) => vec![(c.to_ascii_uppercase() as u8) & 0x1f],
            Self::Alt(c) => vec![0x1b, *c as u8],
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
    fn an_escape_with_keys_after_it_ends_a_stroke() {
        use TermKey::{Enter, Esc, Text};
        let all = |keys: &[TermKey]| strokes(keys).map(<[TermKey]>::to_vec).collect::<Vec<_>>();
        assert_eq!(all(&[Esc, Esc]), vec![vec![Esc], vec![Esc]]);
        assert_eq!(all(&[Esc, Text("b".into())]), vec![vec![Esc], vec![Text("b".into())]]);
        assert_eq!(all(&[Text("hi".into()), Enter, Esc]), vec![vec![Text("hi".into()), Enter, Esc]]);
        assert_eq!(all(&[]), Vec::<Vec<TermKey>>::new());
        // Its pauses are bounded.
        assert_eq!(TermKey::check(&vec![Esc; STROKES_MAX]), Ok(()));
        assert_eq!(TermKey::check(&vec![Esc; STROKES_MAX + 1]), Err(KeysError::TooManyStrokes(STROKES_MAX + 1)));
    }

    #[test]
    fn keys_are_bounded_and_control_keys_real() {
        assert_eq!(TermKey::check(&[TermKey::Text("hi".into()), TermKey::Ctrl('c'), TermKey::Ctrl('\\')]), Ok(()));
        assert_eq!(TermKey::check(&[TermKey::Ctrl(';')]), Err(KeysError::NoSuchCtrl(';')));
        assert_eq!(TermKey::check(&vec![TermKey::Enter; KEYS_MAX + 1]), Err(KeysError::TooMany(KEYS_MAX + 1)));
        let long = TermKey::Text("x".repeat(KEYS_TEXT_MAX + 1));
        assert_eq!(TermKey::check(&[long]), Err(KeysError::TooLong(KEYS_TEXT_MAX + 1)));
    }

    #[test]
    fn alt_and_function_keys_are_real_ones_and_spelled_as_an_xterm_does() {
        assert_eq!(TermKey::check(&[TermKey::Alt('b'), TermKey::F(1), TermKey::F(12)]), Ok(()));
        assert_eq!(TermKey::check(&[TermKey::Alt('\n')]), Err(KeysError::NoSuchAlt('\n')));
        assert_eq!(TermKey::check(&[TermKey::Alt('é')]), Err(KeysError::NoSuchAlt('é')));
        assert_eq!(TermKey::check(&[TermKey::F(0)]), Err(KeysError::NoSuchF(0)));
        assert_eq!(TermKey::check(&[TermKey::F(13)]), Err(KeysError::NoSuchF(13)));
        let spelled: Vec<Vec<u8>> = [
            TermKey::Ctrl('c'),
            TermKey::Alt('b'),
            TermKey::F(1),
            TermKey::F(4),
            TermKey::F(5),
            TermKey::F(10),
            TermKey::F(11),
            TermKey::F(12),
            TermKey::Delete,
            TermKey::PageDown,
            TermKey::BackTab,
        ]
        .iter()
        .map(|k| k.bytes(false))
        .collect();
        let want: [&[u8]; 11] = [
            b"\x03",
            b"\x1bb",
            b"\x1bOP",
            b"\x1bOS",
            b"\x1b[15~",
            b"\x1b[21~",
            b"\x1b[23~",
            b"\x1b[24~",
            b"\x1b[3~",
            b"\x1b[6~",
            b"\x1b[Z",
        ];
        assert_eq!(spelled, want.map(<[u8]>::to_vec));
        assert_eq!((TermKey::Up.bytes(false), TermKey::Up.bytes(true)), (b"\x1b[A".to_vec(), b"\x1bOA".to_vec()));
        assert_eq!(TermKey::Home.bytes(true), b"\x1bOH", "in application mode");
    }

    #[test]
    fn sizes_are_bounded() {
        assert_eq!(check_size(80, 24), Ok(()));
        assert_eq!(check_size(0, 24), Err(KeysError::BadSize(0, 24)));
        assert_eq!(check_size(80, TERM_SIDE_MAX + 1), Err(KeysError::BadSize(80, TERM_SIDE_MAX + 1)));
    }
}
