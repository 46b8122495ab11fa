//! Turn classification: what an agent's last turn means once it is idle. Guardrail rules (the
//! runbook's patterns on the last message) decide first; then, if one is configured, a
//! classifier command (its answer parsed here, its failure tolerated); then a heuristic. Each
//! verdict says which of them decided and by which rule, so it can be audited and replayed.

use std::fmt;

use regex::RegexBuilder;
use serde::{Deserialize, Serialize};

/// What a turn means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnClass {
    /// The work is done.
    Done,
    /// The work is ready for a person to review.
    NeedsReview,
    /// The agent asked a question.
    Question,
    /// The agent stopped mid-work and should go on.
    Working,
    /// The agent cannot go on without help.
    Blocked,
    Unknown,
}

impl TurnClass {
    pub const ALL: [Self; 6] =
        [Self::Done, Self::NeedsReview, Self::Question, Self::Working, Self::Blocked, Self::Unknown];

    pub fn label(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::NeedsReview => "needs_review",
            Self::Question => "question",
            Self::Working => "working",
            Self::Blocked => "blocked",
            Self::Unknown => "unknown",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.label() == s)
    }
}

impl fmt::Display for TurnClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Which part of the classification decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassSource {
    Guardrail,
    Classifier,
    Heuristic,
}

/// A classification: the class, who decided it, by which rule, and what went wrong on the way
/// (a classifier command that failed or answered nothing usable).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub class: TurnClass,
    pub source: ClassSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// How an agent's turns are classified (part of its policy).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Classify {
    /// Checked in order on the last message; the first that matches decides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<Rule>,
    /// A command given the last message on stdin (and in `$BOSUN_LAST_MESSAGE`), run in the
    /// workspace; the first class name in its output decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
}

/// A guardrail: a regular expression (case-insensitive) on the last message, and the class it
/// means.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub name: String,
    pub pattern: String,
    pub class: TurnClass,
}

impl Classify {
    /// The patterns that do not compile, with the reason: a runbook with one is refused.
    pub fn errors(&self) -> Vec<String> {
        self.rules.iter().filter_map(|r| compile(&r.pattern).err().map(|e| format!("rule {:?}: {e}", r.name))).collect()
    }
}

fn compile(pattern: &str) -> Result<regex::Regex, regex::Error> {
    RegexBuilder::new(pattern).case_insensitive(true).size_limit(1 << 20).build()
}

/// The first guardrail that matches `said`.
pub fn guardrail(rules: &[Rule], said: &str) -> Option<Verdict> {
    let rule = rules.iter().find(|r| compile(&r.pattern).is_ok_and(|re| re.is_match(said)))?;
    Some(Verdict { class: rule.class, source: ClassSource::Guardrail, rule: Some(rule.name.clone()), error: None })
}

/// The class a classifier command's output names: the first class name among its words.
pub fn parse_answer(output: &str) -> Option<TurnClass> {
    output
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .map(|w| w.to_ascii_lowercase().replace('-', "_"))
        .find_map(|w| TurnClass::parse(&w))
}

/// The heuristic's rules, checked in order on the message's last paragraph.
const HEURISTIC: [(&str, &str, TurnClass); 5] = [
    (
        "blocked",
        r"\b(blocked|cannot proceed|can't proceed|unable to (continue|proceed)|need (your|human) (help|input))\b",
        TurnClass::Blocked,
    ),
    ("asks", r"\?\s*$", TurnClass::Question),
    ("review", r"\b(ready for (your )?review|please review|review the (changes|diff))\b", TurnClass::NeedsReview),
    ("done", r"\b(done|complete|completed|finished|all tests pass|implemented|fixed)\b", TurnClass::Done),
    ("working", r"\b(working on|in progress|next,? i('ll| will)|continuing|let me)\b", TurnClass::Working),
];

/// The fallback: word patterns on the last paragraph of the message; `unknown` when none fits.
pub fn heuristic(said: &str) -> Verdict {
    let last = said.trim_end().rsplit("\n\n").next().unwrap_or_default();
    let hit = HEURISTIC.iter().find(|(_, p, _)| compile(p).is_ok_and(|re| re.is_match(last)));
    let (rule, class) = hit.map_or((None, TurnClass::Unknown), |(name, _, class)| (Some((*name).to_owned()), *class));
    Verdict { class, source: ClassSource::Heuristic, rule, error: None }
}

/// The verdict once the classifier command answered (or failed): its class if it named one,
/// else the heuristic's, carrying what went wrong.
pub fn after_command(said: &str, answer: &Result<String, String>) -> Verdict {
    match answer {
        Ok(out) => match parse_answer(out) {
            Some(class) => Verdict { class, source: ClassSource::Classifier, rule: None, error: None },
            None => {
                Verdict { error: Some(format!("the classifier named no class: {}", excerpt(out))), ..heuristic(said) }
            }
        },
        Err(e) => Verdict { error: Some(format!("the classifier failed: {e}")), ..heuristic(said) },
    }
}

/// The whole classification when no command is asked: guardrails, then the heuristic.
pub fn without_command(rules: &[Rule], said: &str) -> Verdict {
    guardrail(rules, said).unwrap_or_else(|| heuristic(said))
}

/// At most 200 characters of `s`, for an error message.
fn excerpt(s: &str) -> String {
    let s = s.trim();
    match s.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_heuristic_reads_the_last_paragraph() {
        assert_eq!(heuristic("I changed x.\n\nShould I also change y?").class, TurnClass::Question);
        assert_eq!(heuristic("All tests pass; waiting for the next task.").class, TurnClass::Done);
        assert_eq!(heuristic("I am blocked: the API key is missing.").class, TurnClass::Blocked);
        assert_eq!(heuristic("Let me look at the parser next.").class, TurnClass::Working);
        assert_eq!(heuristic("pong").class, TurnClass::Unknown);
        assert_eq!(heuristic("Done?\n\nThe branch is ready for review.").class, TurnClass::NeedsReview);
    }

    #[test]
    fn answers_name_their_class_anywhere_and_anyhow_cased() {
        assert_eq!(parse_answer("Class: NEEDS_REVIEW\n"), Some(TurnClass::NeedsReview));
        assert_eq!(parse_answer("{\"class\": \"needs-review\"}"), Some(TurnClass::NeedsReview));
        assert_eq!(parse_answer("I think it is done."), Some(TurnClass::Done));
        assert_eq!(parse_answer("no idea"), None);
    }

    #[test]
    fn a_failed_or_empty_answer_falls_back_to_the_heuristic_and_says_why() {
        let v = after_command("Is this right?", &Err("exit 1".into()));
        assert_eq!((v.class, v.source), (TurnClass::Question, ClassSource::Heuristic));
        assert!(v.error.unwrap().contains("exit 1"));
        let v = after_command("Is this right?", &Ok("hmm".into()));
        assert!(v.error.unwrap().contains("named no class"));
    }
}
