//! Reading the dialog an agent waits at, as a person would, and answering it by what its options
//! mean, never by where they happen to be listed. A dialog's options are numbered (`❯ 1. Yes`,
//! `  2. No, and tell Claude …`, Gemini CLI's `● 1. Allow once`) or not (Claude Code 2.1.3xx's
//! trust dialog: `❯ No, exit` above `  Yes, I trust this folder`); the cursor (`❯`, `›`, `●`)
//! marks the selected one. An option is
//! picked by typing its number when it has one, else by moving the cursor to it and, once a
//! look at the screen shows it there, pressing Enter.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::TermKey;

/// How a person answers a dialog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DialogAnswer {
    /// The first option that says yes ("Yes", "Yes, and don't ask again", "Trust and continue").
    Allow,
    /// The first option that says no ("No, and tell Claude …", "No, exit").
    Deny,
    /// Option number N, as the dialog numbers them (or the Nth listed, when it numbers none).
    Option(u8),
}

/// What is not an answer to a dialog, as given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an answer: give allow, deny or an option's number (1-9)")]
pub struct BadAnswer(pub String);

/// Why no option of a dialog gives what is wanted for sure; each says the options as listed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CannotPick {
    #[error("the dialog has no option {0} ({1})")]
    NoNumber(u8, String),
    #[error("no option says yes ({0})")]
    NoYes(String),
    #[error("no option says no ({0})")]
    NoNo(String),
    #[error("no option trusts the folder ({0})")]
    NoTrust(String),
    #[error("more than one option says yes ({0})")]
    ManyYes(String),
    #[error("cannot tell which option is selected ({0})")]
    NoCursor(String),
}

impl FromStr for DialogAnswer {
    type Err = BadAnswer;

    fn from_str(s: &str) -> Result<Self, BadAnswer> {
        match s.trim().to_ascii_lowercase().as_str() {
            "allow" | "yes" | "y" => Ok(Self::Allow),
            "deny" | "no" | "n" => Ok(Self::Deny),
            n => match n.parse::<u8>() {
                Ok(n @ 1..=9) => Ok(Self::Option(n)),
                _ => Err(BadAnswer(s.to_owned())),
            },
        }
    }
}

impl fmt::Display for DialogAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Allow => f.write_str("allow"),
            Self::Deny => f.write_str("deny"),
            Self::Option(n) => write!(f, "{n}"),
        }
    }
}

/// What bosun means to answer: a person's answer, or "trust this folder and go on" (the
/// start-up dialog of a workspace bosun made).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "to")]
pub enum Want {
    Person { answer: DialogAnswer },
    Trust,
}

/// One option of a dialog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MenuOption {
    /// Its number, when the dialog numbers its options.
    pub number: Option<u8>,
    pub text: String,
}

/// The options of the dialog at the bottom of a screen, and which one the cursor is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Menu {
    pub options: Vec<MenuOption>,
    /// The option the cursor marks, when one is marked.
    pub selected: Option<usize>,
    /// Its options are in a row (opencode's): the cursor moves left and right, not up and down.
    pub across: bool,
}

/// The keys that take a dialog a step towards an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// These keys pick the option: the answer is given.
    Pick(Vec<TermKey>),
    /// These keys move the cursor towards the option; look again before picking it.
    Move(Vec<TermKey>),
}

/// What an option's words say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meaning {
    Yes,
    No,
    Other,
}

/// What `text` (an option) says: yes ("Yes", "Yes, proceed (y)", "Trust and continue",
/// "Allow once"), no ("No, exit", "No, and tell Claude …", "Back to …", "Exit") or neither.
pub fn meaning(text: &str) -> Meaning {
    let lower = text.to_lowercase();
    let first: String = lower.chars().take_while(|c| c.is_alphanumeric() || *c == '\'').collect();
    // An option that leaves ("exit", "quit") never says yes, whatever else it says.
    let leaves =
        ["exit", "quit", "cancel"].iter().any(|w| lower.split(|c: char| !c.is_alphanumeric()).any(|x| x == *w));
    match first.as_str() {
        "yes" | "allow" | "approve" | "accept" | "trust" | "proceed" | "continue" if !leaves => Meaning::Yes,
        "no" | "deny" | "reject" | "decline" | "exit" | "quit" | "back" | "cancel" | "don't" => Meaning::No,
        _ => Meaning::Other,
    }
}

/// The cursors that mark a dialog's selected option (pi's is `→`).
const CURSORS: [char; 6] = ['❯', '›', '▶', '>', '●', '→'];

/// The dialog's options on `screen`: its last run of lines numbered 1, 2, 3, … (lines between
/// two options, such as descriptions, are passed over), or, when it numbers none, the lines
/// beside its cursor's that start where the cursor's text starts. None when neither is there.
pub fn menu(screen: &str) -> Option<Menu> {
    numbered(screen).or_else(|| unnumbered(screen))
}

fn numbered(screen: &str) -> Option<Menu> {
    let lines: Vec<(bool, u8, String)> = screen.lines().filter_map(option_line).collect();
    let start = lines.iter().rposition(|(_, n, _)| *n == 1)?;
    let mut menu = Menu { options: Vec::new(), selected: None, across: false };
    for (cursor, n, text) in &lines[start..] {
        if usize::from(*n) == menu.options.len() + 1 {
            if *cursor {
                menu.selected = Some(menu.options.len());
            }
            menu.options.push(MenuOption { number: Some(*n), text: text.clone() });
        }
    }
    (menu.options.len() >= 2).then_some(menu)
}

/// `❯ 2. Yes, and don't ask again` → (true, 2, "Yes, and don't ask again").
fn option_line(line: &str) -> Option<(bool, u8, String)> {
    let (cursor, t) = after_cursor(line);
    let (number, rest) = t.split_once(". ")?;
    let n: u8 = number.parse().ok().filter(|n| (1..=9).contains(n))?;
    let text = clean(rest);
    (!text.is_empty()).then_some((cursor, n, text))
}

/// Whether `line` starts with a cursor, and its text after the cursor.
fn after_cursor(line: &str) -> (bool, &str) {
    let t = line.trim_start().trim_start_matches('│').trim_start();
    match t.strip_prefix(CURSORS) {
        Some(rest) if rest.starts_with(' ') => (true, rest.trim_start()),
        _ => (false, t),
    }
}

fn clean(text: &str) -> String {
    text.trim().trim_end_matches('│').trim().to_owned()
}

/// The column (in characters) where a line's text starts, after any box border and cursor.
fn text_column(line: &str) -> usize {
    let (_, text) = after_cursor(line);
    line.chars().count() - text.chars().count()
}

fn unnumbered(screen: &str) -> Option<Menu> {
    let lines: Vec<&str> = screen.lines().collect();
    let at = lines.iter().rposition(|l| after_cursor(l).0)?;
    let column = text_column(lines[at]);
    let is_option = |l: &&&str| {
        let (cursor, text) = after_cursor(l);
        !cursor && !text.trim().is_empty() && text_column(l) == column
    };
    let above = lines[..at].iter().rev().take_while(is_option).count();
    let below = lines[at + 1..].iter().take_while(is_option).count();
    let options: Vec<MenuOption> = lines[at - above..=at + below]
        .iter()
        .map(|l| MenuOption { number: None, text: clean(after_cursor(l).1) })
        .collect();
    (options.len() >= 2).then_some(Menu { options, selected: Some(above), across: false })
}

impl Menu {
    /// The options as the dialog lists them, for messages.
    pub fn listed(&self) -> String {
        let each = self.options.iter().map(|o| match o.number {
            Some(n) => format!("{n}. {}", o.text),
            None => o.text.clone(),
        });
        each.collect::<Vec<_>>().join("; ")
    }

    /// The option that gives `want`, or why none does for sure.
    pub fn find(&self, want: Want) -> Result<usize, CannotPick> {
        let says = |m: Meaning| self.options.iter().position(|o| meaning(&o.text) == m);
        match want {
            Want::Person { answer: DialogAnswer::Option(n) } => {
                let by_number = self.options.iter().position(|o| o.number == Some(n));
                let nth = (self.options.iter().all(|o| o.number.is_none())).then(|| usize::from(n) - 1);
                by_number
                    .or(nth.filter(|i| *i < self.options.len()))
                    .ok_or_else(|| CannotPick::NoNumber(n, self.listed()))
            }
            Want::Person { answer: DialogAnswer::Allow } => {
                says(Meaning::Yes).ok_or_else(|| CannotPick::NoYes(self.listed()))
            }
            Want::Person { answer: DialogAnswer::Deny } => {
                says(Meaning::No).ok_or_else(|| CannotPick::NoNo(self.listed()))
            }
            // Exactly one option trusts and goes on; anything else is for a person to read.
            Want::Trust => {
                let yes: Vec<usize> =
                    (0..self.options.len()).filter(|i| meaning(&self.options[*i].text) == Meaning::Yes).collect();
                match yes.as_slice() {
                    [one] => Ok(*one),
                    [] => Err(CannotPick::NoTrust(self.listed())),
                    _ => Err(CannotPick::ManyYes(self.listed())),
                }
            }
        }
    }

    /// The keys that take the dialog a step towards option `to`: its number when it has one
    /// and `by_number`, Enter when the cursor is on it, else the arrows that move the cursor
    /// there (left and right in a row). None when the cursor cannot be seen (nothing would be
    /// typed for sure).
    pub fn step(&self, to: usize, by_number: bool) -> Option<Step> {
        if let (true, Some(n)) = (by_number, self.options.get(to).and_then(|o| o.number)) {
            return Some(Step::Pick(vec![TermKey::Text(n.to_string())]));
        }
        let at = self.selected?;
        let (back, on) = if self.across { (TermKey::Left, TermKey::Right) } else { (TermKey::Up, TermKey::Down) };
        Some(match to.cmp(&at) {
            std::cmp::Ordering::Equal => Step::Pick(vec![TermKey::Enter]),
            std::cmp::Ordering::Greater => Step::Move(vec![on; to - at]),
            std::cmp::Ordering::Less => Step::Move(vec![back; at - to]),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERMISSION: &str = "
 Bash command
   rm -rf build
   Remove the build directory

 Do you want to proceed?
 ❯ 1. Yes
   2. Yes, and don't ask again for rm commands in /tmp/w
   3. No, and tell Claude what to do differently (esc)
";

    /// Claude Code 2.1.332's trust dialog, as its screen shows it (real).
    const TRUST_2_1_332: &str = "
 Accessing workspace:

 /tmp/trust.F2dJ/wt

 Quick safety check: Is this a project you created or one you trust? (Like your own code, a well-known open source
 project, or work from your team). If not, take a moment to review what's in this folder first.

 Claude Code'll be able to read, edit, and execute files here.

 Security guide

 ❯ No, exit
   Yes, I trust this folder

 Enter to confirm · Esc to cancel
";

    fn person(answer: DialogAnswer) -> Want {
        Want::Person { answer }
    }

    fn pick(screen: &str, want: Want, by_number: bool) -> Result<Step, CannotPick> {
        let menu = menu(screen).expect("a menu");
        let to = menu.find(want)?;
        menu.step(to, by_number).ok_or_else(|| CannotPick::NoCursor(menu.listed()))
    }

    #[test]
    fn allow_and_deny_pick_the_yes_and_no_options_by_number() {
        let key = |n: &str| Ok(Step::Pick(vec![TermKey::Text(n.into())]));
        assert_eq!(pick(PERMISSION, person(DialogAnswer::Allow), true), key("1"));
        assert_eq!(pick(PERMISSION, person(DialogAnswer::Deny), true), key("3"));
        assert_eq!(pick(PERMISSION, person(DialogAnswer::Option(2)), true), key("2"));
        let e = pick(PERMISSION, person(DialogAnswer::Option(4)), true).unwrap_err().to_string();
        assert!(e.contains("no option 4") && e.contains("3. No, and tell Claude"), "{e}");
    }

    #[test]
    fn the_new_trust_dialog_is_answered_by_moving_to_the_option_that_trusts_never_by_enter_on_no() {
        let menu = menu(TRUST_2_1_332).expect("a menu");
        assert_eq!(menu.options.len(), 2, "{menu:?}");
        assert_eq!(menu.selected, Some(0), "No, exit is selected");
        assert_eq!(menu.find(Want::Trust), Ok(1));
        assert_eq!(menu.step(1, false), Some(Step::Move(vec![TermKey::Down])));
        // Once a look shows the cursor on it, Enter picks it.
        let moved = TRUST_2_1_332.replace(" ❯ No, exit", "   No, exit").replace("   Yes, I trust", " ❯ Yes, I trust");
        assert_eq!(pick(&moved, Want::Trust, false), Ok(Step::Pick(vec![TermKey::Enter])));
    }

    #[test]
    fn every_order_of_the_trust_options_reaches_the_one_that_trusts() {
        let older = "Quick safety check: Is this a project you created or one you trust?\n ❯ 1. Yes, I trust this folder\n   2. No, exit\n Enter to confirm";
        assert_eq!(pick(older, Want::Trust, false), Ok(Step::Pick(vec![TermKey::Enter])));
        let reordered = "Quick safety check\n   1. No, exit\n ❯ 2. Yes, I trust this folder\n";
        assert_eq!(pick(reordered, Want::Trust, false), Ok(Step::Pick(vec![TermKey::Enter])));
        let below = "Trust?\n ❯ 1. No, exit\n   2. Yes, I trust this folder\n";
        assert_eq!(pick(below, Want::Trust, false), Ok(Step::Move(vec![TermKey::Down])));
        let three = "Trust?\n   Read the guide\n   No, exit\n ❯ Trust and continue\n";
        assert_eq!(pick(three, Want::Trust, false), Ok(Step::Pick(vec![TermKey::Enter])));
        let codex = "  Trust this folder? Codex can read, edit, and run files here\n› 1. Trust and continue\n  2. Back to Agent Command Center\n  enter continue · esc back";
        assert_eq!(pick(codex, Want::Trust, false), Ok(Step::Pick(vec![TermKey::Enter])));
        let up = "Trust?\n   Yes, I trust this folder\n   Show me the files first\n ❯ No, exit\n";
        assert_eq!(pick(up, Want::Trust, false), Ok(Step::Move(vec![TermKey::Up, TermKey::Up])));
    }

    #[test]
    fn an_unknown_wording_or_layout_is_never_guessed() {
        let unknown = "Trust?\n ❯ Exit now\n   Carry on\n";
        assert!(pick(unknown, Want::Trust, false).unwrap_err().to_string().contains("no option trusts"));
        let two = "Trust?\n ❯ Yes, once\n   Yes, always\n";
        assert!(pick(two, Want::Trust, false).unwrap_err().to_string().contains("more than one"));
        let leaving = "Trust?\n ❯ Yes, exit\n   No\n";
        assert!(pick(leaving, Want::Trust, false).is_err(), "an option that exits never trusts");
        assert_eq!(menu("Quick safety check\n   No, exit\n   Yes, I trust this folder\n"), None, "no cursor, no menu");
        let numbered_no_cursor = "Trust?\n  1. No, exit\n  2. Yes, I trust this folder\n";
        let m = menu(numbered_no_cursor).expect("numbered");
        assert_eq!(m.step(1, false), None, "the cursor cannot be seen: no key");
        assert_eq!(menu("❯ hello"), None);
        assert_eq!(menu("Notes for 2026. Nothing else"), None);
    }

    #[test]
    fn only_the_last_numbered_run_is_the_dialog() {
        let screen = "⏺ My plan:\n  1. Add a test\n  2. Fix it\n\n Would you like to proceed?\n › 1. Yes, proceed (y)\n   2. No, and tell Codex what to do differently (esc)\n";
        let m = menu(screen).expect("menu");
        assert_eq!(m.listed(), "1. Yes, proceed (y); 2. No, and tell Codex what to do differently (esc)");
        assert_eq!(m.selected, Some(0));
        assert_eq!(pick(screen, person(DialogAnswer::Deny), true), Ok(Step::Pick(vec![TermKey::Text("2".into())])));
        let question = "Which database?\n❯ 1. Postgres\n     The usual one\n  2. SQLite\n";
        assert_eq!(menu(question).map(|m| m.options.len()), Some(2), "descriptions are passed over");
        let e = pick(question, person(DialogAnswer::Allow), true).unwrap_err().to_string();
        assert!(e.contains("no option says yes"), "{e}");
    }

    #[test]
    fn a_person_answers_an_unnumbered_dialog_by_moving_then_picking() {
        assert_eq!(pick(TRUST_2_1_332, person(DialogAnswer::Allow), true), Ok(Step::Move(vec![TermKey::Down])));
        assert_eq!(pick(TRUST_2_1_332, person(DialogAnswer::Deny), true), Ok(Step::Pick(vec![TermKey::Enter])));
        assert_eq!(pick(TRUST_2_1_332, person(DialogAnswer::Option(2)), true), Ok(Step::Move(vec![TermKey::Down])));
        assert!(pick(TRUST_2_1_332, person(DialogAnswer::Option(3)), true).is_err());
    }

    #[test]
    fn meanings_read_the_first_word_and_an_exit_is_never_yes() {
        for yes in ["Yes", "Yes, proceed (y)", "Trust and continue", "Allow once", "Yes, I trust this folder"] {
            assert_eq!(meaning(yes), Meaning::Yes, "{yes}");
        }
        for no in ["No, exit", "No", "Back to Agent Command Center", "Exit", "Don't trust"] {
            assert_eq!(meaning(no), Meaning::No, "{no}");
        }
        for other in ["Postgres", "Yes, exit", "Continue and quit"] {
            assert_eq!(meaning(other), Meaning::Other, "{other}");
        }
    }

    #[test]
    fn answers_read_from_the_command_line() {
        assert_eq!("allow".parse(), Ok(DialogAnswer::Allow));
        assert_eq!("No".parse(), Ok(DialogAnswer::Deny));
        assert_eq!("3".parse(), Ok(DialogAnswer::Option(3)));
        assert!("0".parse::<DialogAnswer>().is_err());
        assert!("maybe".parse::<DialogAnswer>().unwrap_err().to_string().contains("allow, deny"));
    }
}
