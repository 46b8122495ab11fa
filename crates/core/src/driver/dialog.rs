//! Answering the dialog an agent waits at, as a person would: from the options its screen
//! shows (`❯ 1. Yes`, `  2. Yes, and don't ask again …`, `  3. No, and tell Claude …`), the key
//! that picks one. Claude Code, claudeless and Codex all pick an option by its number.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How a person answers a dialog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DialogAnswer {
    /// The first option that starts with "Yes".
    Allow,
    /// The first option that starts with "No".
    Deny,
    /// Option number N, as the dialog numbers them.
    Option(u8),
}

impl FromStr for DialogAnswer {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "allow" | "yes" | "y" => Ok(Self::Allow),
            "deny" | "no" | "n" => Ok(Self::Deny),
            n => match n.parse::<u8>() {
                Ok(n @ 1..=9) => Ok(Self::Option(n)),
                _ => Err(format!("{s:?} is not an answer: give allow, deny or an option's number (1-9)")),
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

/// The numbered options of the dialog at the bottom of `screen`: the last run of lines
/// numbered 1, 2, 3, … (a cursor such as `❯` or `›` before the number is allowed; lines
/// between two options, such as descriptions, are passed over).
pub fn options(screen: &str) -> Vec<(u8, String)> {
    let numbered: Vec<(u8, String)> = screen.lines().filter_map(option_line).collect();
    let Some(start) = numbered.iter().rposition(|(n, _)| *n == 1) else { return Vec::new() };
    let mut out: Vec<(u8, String)> = Vec::new();
    for (n, text) in &numbered[start..] {
        if usize::from(*n) == out.len() + 1 {
            out.push((*n, text.clone()));
        }
    }
    out
}

/// `❯ 2. Yes, and don't ask again` → (2, "Yes, and don't ask again").
fn option_line(line: &str) -> Option<(u8, String)> {
    let t = line.trim_start().trim_start_matches(['❯', '›', '>', '▶', '*']).trim_start();
    let (number, rest) = t.split_once(". ")?;
    let n: u8 = number.parse().ok().filter(|n| (1..=9).contains(n))?;
    let text = rest.trim().trim_end_matches('│').trim();
    (!text.is_empty()).then(|| (n, text.to_owned()))
}

/// The key that gives `answer` to the dialog on `screen`, or why there is none.
pub fn key_for(screen: &str, answer: DialogAnswer) -> Result<char, String> {
    let options = options(screen);
    if options.is_empty() {
        return Err("no numbered options on the agent's screen: look with `bosun peek`".into());
    }
    let listed = || options.iter().map(|(n, t)| format!("{n}. {t}")).collect::<Vec<_>>().join("; ");
    let starting = |word: &str| {
        options.iter().find(|(_, t)| {
            let lower = t.to_lowercase();
            lower == word || lower.starts_with(&format!("{word},")) || lower.starts_with(&format!("{word} "))
        })
    };
    let n = match answer {
        DialogAnswer::Option(n) if options.iter().any(|(o, _)| *o == n) => n,
        DialogAnswer::Option(n) => return Err(format!("the dialog has no option {n} ({})", listed())),
        DialogAnswer::Allow => starting("yes").ok_or_else(|| format!("no option says yes ({})", listed()))?.0,
        DialogAnswer::Deny => starting("no").ok_or_else(|| format!("no option says no ({})", listed()))?.0,
    };
    Ok(char::from(b'0' + n))
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

    #[test]
    fn allow_and_deny_pick_the_yes_and_no_options() {
        assert_eq!(key_for(PERMISSION, DialogAnswer::Allow), Ok('1'));
        assert_eq!(key_for(PERMISSION, DialogAnswer::Deny), Ok('3'));
        assert_eq!(key_for(PERMISSION, DialogAnswer::Option(2)), Ok('2'));
        let e = key_for(PERMISSION, DialogAnswer::Option(4)).unwrap_err();
        assert!(e.contains("no option 4") && e.contains("3. No, and tell Claude"), "{e}");
    }

    #[test]
    fn only_the_last_numbered_run_is_the_dialog() {
        let screen = "⏺ My plan:\n  1. Add a test\n  2. Fix it\n\n Would you like to proceed?\n › 1. Yes, proceed (y)\n   2. No, and tell Codex what to do differently (esc)\n";
        assert_eq!(
            options(screen),
            vec![(1, "Yes, proceed (y)".into()), (2, "No, and tell Codex what to do differently (esc)".into())]
        );
        assert_eq!(key_for(screen, DialogAnswer::Deny), Ok('2'));
        let question = "Which database?\n❯ 1. Postgres\n     The usual one\n  2. SQLite\n";
        assert_eq!(options(question).len(), 2, "descriptions are passed over");
        let e = key_for(question, DialogAnswer::Allow).unwrap_err();
        assert!(e.contains("no option says yes"), "{e}");
        assert!(key_for("❯ hello", DialogAnswer::Allow).unwrap_err().contains("no numbered options"));
        assert!(key_for("Notes for 2026. Nothing else", DialogAnswer::Option(1)).is_err());
    }

    #[test]
    fn answers_read_from_the_command_line() {
        assert_eq!("allow".parse(), Ok(DialogAnswer::Allow));
        assert_eq!("No".parse(), Ok(DialogAnswer::Deny));
        assert_eq!("3".parse(), Ok(DialogAnswer::Option(3)));
        assert!("0".parse::<DialogAnswer>().is_err());
        assert!("maybe".parse::<DialogAnswer>().unwrap_err().contains("allow, deny"));
    }
}
