//! Any terminal program: the user's regular expressions for prompt, working and error, compiled
//! into a `Matcher` that classifies chunks of the agent's terminal output.
//!
//! Patterns are what a generic agent adds to the signals every agent has: any output at all is
//! already an output-activity heartbeat (`Heartbeat::TerminalOutput`), which the daemon records
//! separately, so `Matcher::observe` says only what the text itself means.

use std::fmt;

use regex::{Regex, RegexBuilder};

pub use super::kind::Patterns;
use crate::{AgentError, Observation, PromptKind};

/// Which of the three patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PatternName {
    Prompt,
    Working,
    Error,
}

impl PatternName {
    pub fn label(self) -> &'static str {
        match self {
            Self::Prompt => "prompt",
            Self::Working => "working",
            Self::Error => "error",
        }
    }
}

impl fmt::Display for PatternName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Why a pattern could not be compiled; the message names the pattern and quotes it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the {which} pattern {text:?} is not a valid regular expression: {reason}")]
pub struct PatternError {
    pub which: PatternName,
    pub text: String,
    pub reason: String,
}

/// The compiled patterns. Each is matched anywhere in a chunk, with `^` and `$` matching at the
/// start and end of every line (`\r\n` line ends included); `(?-m)` in a pattern turns that off.
#[derive(Clone, Debug)]
pub struct Matcher {
    prompt: Option<Regex>,
    working: Option<Regex>,
    error: Option<Regex>,
}

impl Patterns {
    /// Compile the patterns that are set; the first invalid one (prompt, then working, then
    /// error) is the error.
    pub fn compile(&self) -> Result<Matcher, PatternError> {
        Ok(Matcher {
            prompt: compile(PatternName::Prompt, self.prompt.as_deref())?,
            working: compile(PatternName::Working, self.working.as_deref())?,
            error: compile(PatternName::Error, self.error.as_deref())?,
        })
    }
}

fn compile(which: PatternName, text: Option<&str>) -> Result<Option<Regex>, PatternError> {
    let Some(text) = text else { return Ok(None) };
    RegexBuilder::new(text).multi_line(true).crlf(true).build().map(Some).map_err(|e| PatternError {
        which,
        text: text.to_owned(),
        // regex's message spans lines (pattern, caret, error): keep its last, the error itself.
        reason: e.to_string().lines().rfind(|l| !l.trim().is_empty()).unwrap_or_default().trim().to_owned(),
    })
}

impl Matcher {
    /// What a chunk of terminal output means, its escape sequences stripped first: the error
    /// pattern means an error (of no known category), else the prompt pattern a question put to
    /// the user, else the working pattern that the agent works. None when no pattern matches
    /// (the chunk is still a heartbeat; see the module doc).
    pub fn observe(&self, text: &str) -> Option<Observation> {
        let text = strip_ansi(text);
        let matches = |r: &Option<Regex>| r.as_ref().is_some_and(|r| r.is_match(&text));
        if matches(&self.error) {
            Some(Observation::Error { error: AgentError::Other })
        } else if matches(&self.prompt) {
            Some(Observation::Prompt { kind: PromptKind::Question, asks: None })
        } else if matches(&self.working) {
            Some(Observation::Working)
        } else {
            None
        }
    }
}

const ESC: char = '\u{1b}';

/// `text` without its terminal escape sequences: CSI (`ESC [` parameters, then a final byte
/// such as `m` or `H`), strings ended by BEL or `ESC \` (OSC `ESC ]`, and DCS, SOS, PM, APC),
/// the single-byte C1 forms of CSI and OSC, and other escapes (`ESC` plus intermediate bytes
/// plus one final character, such as `ESC 7` or `ESC ( B`). Other control characters, line
/// ends included, are kept. A sequence cut off at the end of `text` is dropped as far as it goes.
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ESC => match chars.next() {
                Some('[') => skip_csi(&mut chars),
                Some(']' | 'P' | 'X' | '^' | '_') => skip_string(&mut chars),
                Some(' '..='/') => {
                    while chars.next_if(|c| matches!(c, ' '..='/')).is_some() {}
                    chars.next();
                }
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' => skip_string(&mut chars),
            c => out.push(c),
        }
    }
    out
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

/// Parameter and intermediate bytes, then the final byte if there is one.
fn skip_csi(chars: &mut Chars<'_>) {
    while chars.next_if(|c| matches!(c, ' '..='?')).is_some() {}
    chars.next_if(|c| matches!(c, '@'..='~'));
}

/// Up to BEL or the C1 string terminator, which are dropped, or up to the next escape, which is
/// left for `strip_ansi` to read: `ESC \` (the usual terminator) as a two-character escape,
/// anything else as the next sequence.
fn skip_string(chars: &mut Chars<'_>) {
    while let Some(c) = chars.next_if(|&c| c != ESC) {
        if matches!(c, '\u{7}' | '\u{9c}') {
            return;
        }
    }
}

/// Any terminal program: process liveness, output activity and the user's patterns.
pub struct Generic;

impl super::AgentDriver for Generic {
    fn kind(&self) -> super::DriverKind {
        super::DriverKind::Generic
    }

    fn record(&self, _ids: (u64, u64), patterns: Patterns) -> super::Driver {
        super::Driver::Generic { patterns }
    }

    /// What its prompt pattern matches (`[y/n]`) is a question its program reads a line for.
    fn prompts_take_text(&self) -> bool {
        true
    }

    /// The user's command as it is: its first prompt is typed.
    fn command_line(
        &self,
        a: &crate::Agent,
        _settings: &std::path::Path,
        _resume: Option<Option<&str>>,
    ) -> Vec<String> {
        a.command.clone()
    }

    /// It gets its first prompt typed, and is idle once its output stops.
    fn start_up(&self, _a: &crate::Agent) -> super::StartUp {
        super::StartUp { types_prompt: true, idle_when_quiet: true, ..super::StartUp::default() }
    }

    fn output_matcher(&self, driver: &super::Driver) -> Option<Matcher> {
        match driver {
            super::Driver::Generic { patterns } => patterns.compile().ok(),
            _ => None,
        }
    }

    /// Without a prompt pattern nothing tells when it waits for input.
    fn tells_waiting(&self, driver: &super::Driver) -> bool {
        !matches!(driver, super::Driver::Generic { patterns } if patterns.prompt.is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(prompt: Option<&str>, working: Option<&str>, error: Option<&str>) -> Patterns {
        Patterns { prompt: prompt.map(Into::into), working: working.map(Into::into), error: error.map(Into::into) }
    }

    fn matcher(prompt: Option<&str>, working: Option<&str>, error: Option<&str>) -> Matcher {
        patterns(prompt, working, error).compile().unwrap()
    }

    const QUESTION: Option<Observation> = Some(Observation::Prompt { kind: PromptKind::Question, asks: None });
    const ERROR: Option<Observation> = Some(Observation::Error { error: AgentError::Other });

    #[test]
    fn error_wins_over_prompt_and_prompt_over_working() {
        let m = matcher(Some(r"\[y/n\]"), Some("Thinking"), Some("(?i)fatal"));
        assert_eq!(m.observe("Thinking... FATAL: out of memory [y/n]"), ERROR);
        assert_eq!(m.observe("Thinking... Proceed? [y/n]"), QUESTION);
        assert_eq!(m.observe("Thinking..."), Some(Observation::Working));
        assert_eq!(m.observe("hello"), None);
        assert_eq!(m.observe(""), None);
    }

    #[test]
    fn unset_patterns_match_nothing() {
        let m = Patterns::default().compile().unwrap();
        assert_eq!(m.observe("anything at all\n> "), None);
        let m = matcher(None, Some("working"), None);
        assert_eq!(m.observe("error: working on it"), Some(Observation::Working));
    }

    #[test]
    fn escape_sequences_are_stripped_before_matching() {
        let m = matcher(Some(r"Continue\?"), Some("Running tests"), None);
        assert_eq!(m.observe("\x1b[1mContinue\x1b[0m?"), QUESTION);
        assert_eq!(m.observe("\x1b]0;title\x07\x1b[32mRunning\x1b[0m tests"), Some(Observation::Working));
        let raw = matcher(Some(r"\x1b\[1m"), None, None);
        assert_eq!(raw.observe("\x1b[1mbold"), None);
    }

    #[test]
    fn anchors_match_at_every_line_even_with_crlf() {
        let m = matcher(Some(r"^> $"), None, None);
        assert_eq!(m.observe("output\r\n> \r\n"), QUESTION);
        assert_eq!(m.observe("output\n> \n"), QUESTION);
        assert_eq!(m.observe("output > more"), None);
        let whole = matcher(Some(r"(?-m)^> $"), None, None);
        assert_eq!(whole.observe("output\n> "), None);
        assert_eq!(whole.observe("> "), QUESTION);
    }

    #[test]
    fn an_invalid_pattern_is_named_with_the_reason() {
        let e = patterns(Some("ok"), Some("(unclosed"), Some("[also bad")).compile().unwrap_err();
        assert_eq!(e.which, PatternName::Working);
        assert_eq!(e.text, "(unclosed");
        let message = e.to_string();
        assert!(
            message.starts_with(r#"the working pattern "(unclosed" is not a valid regular expression: "#),
            "{message}"
        );
        assert!(message.contains("unclosed group"), "{message}");
        let e = patterns(None, None, Some("a{2,1}")).compile().unwrap_err();
        assert_eq!(e.which, PatternName::Error);
        assert!(e.to_string().starts_with("the error pattern"));
        assert_eq!(patterns(Some("*"), None, None).compile().unwrap_err().which, PatternName::Prompt);
    }

    #[test]
    fn strip_ansi_removes_csi_osc_and_short_escapes() {
        assert_eq!(strip_ansi("plain text\n"), "plain text\n");
        assert_eq!(strip_ansi("\x1b[31;1mred\x1b[0m \x1b[2K\x1b[10;20Hok"), "red ok");
        assert_eq!(strip_ansi("\x1b[?25lhidden\x1b[?25h"), "hidden");
        assert_eq!(strip_ansi("\x1b]0;window title\x07after"), "after");
        assert_eq!(strip_ansi("\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\"), "link");
        assert_eq!(strip_ansi("\x1bPq#0;2;0;0;0\x1b\\dcs"), "dcs");
        assert_eq!(strip_ansi("\x1b7saved\x1b8 \x1b(Bcharset\x1b="), "saved charset");
        assert_eq!(strip_ansi("\u{9b}1mc1\u{9d}0;t\u{9c}!"), "c1!");
        assert_eq!(strip_ansi("ünïcødé ✓ \x1b[1m粗体\x1b[0m"), "ünïcødé ✓ 粗体");
    }

    #[test]
    fn strip_ansi_survives_cut_and_malformed_sequences() {
        assert_eq!(strip_ansi("text\x1b"), "text");
        assert_eq!(strip_ansi("text\x1b[1;3"), "text");
        assert_eq!(strip_ansi("text\x1b]0;unterminated title"), "text");
        // An escape ends an unterminated string and is read as the next sequence.
        assert_eq!(strip_ansi("\x1b]0;title\x1b[1mbold"), "bold");
        // A CSI broken by a character that cannot be in one ends there, keeping the text.
        assert_eq!(strip_ansi("\x1b[1\nline"), "\nline");
    }

    const INTRODUCERS: [char; 3] = [ESC, '\u{9b}', '\u{9d}'];

    proptest::proptest! {
        #[test]
        fn strip_ansi_leaves_no_escape_and_keeps_plain_text(text in r"(\PC|\x1b|\x07|\[|\]|;|[0-9]|\x{9b}|\x{9d})*") {
            let stripped = strip_ansi(&text);
            proptest::prop_assert!(!stripped.contains(INTRODUCERS));
            proptest::prop_assert_eq!(strip_ansi(&stripped), stripped.clone());
            if !text.contains(INTRODUCERS) {
                proptest::prop_assert_eq!(stripped, text);
            }
        }
    }
}
