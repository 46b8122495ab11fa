//! Command lines of agents that take their first prompt as a positional argument (`claude "fix
//! it"`, `codex "fix it"`): where that prompt is, so that bosun can hold it apart from the rest
//! of the command and give it at start only, never again on a resume.

/// How a client's command line reads: which options take a value, which may take one, which
/// take every value that follows, and which first words are subcommands (no prompt then).
pub struct Grammar {
    /// Options followed by exactly one value (`--model opus`).
    pub value: &'static [&'static str],
    /// Options that take the next word as their value when it is not an option (`--resume [id]`).
    pub optional: &'static [&'static str],
    /// Options that take every following word that is not an option (`--add-dir a b`): a prompt
    /// after one of them is one of its values, to the client as to bosun.
    pub variadic: &'static [&'static str],
    /// Subcommands: a command line starting with one of them runs no interactive session.
    pub subcommands: &'static [&'static str],
}

impl Grammar {
    /// The index in `command` (the program first) of the positional prompt, if there is one:
    /// the first word that is neither an option nor an option's value. Unknown options are taken
    /// to have no value; `--name=value` carries its own; everything after `--` is positional.
    pub fn prompt_index(&self, command: &[String]) -> Option<usize> {
        let mut i = 1;
        while let Some(word) = command.get(i) {
            let w = word.as_str();
            if w == "--" {
                return command.get(i + 1).map(|_| i + 1);
            }
            if !w.starts_with('-') || w == "-" {
                return (!(i == 1 && self.subcommands.contains(&w))).then_some(i);
            }
            let takes_own = w.contains('=');
            let next_is_value = |j: usize| command.get(j).is_some_and(|n| !n.starts_with('-'));
            if takes_own {
                i += 1;
            } else if self.value.contains(&w) {
                i += 2;
            } else if self.optional.contains(&w) {
                i += if next_is_value(i + 1) { 2 } else { 1 };
            } else if self.variadic.contains(&w) {
                i += 1;
                while next_is_value(i) {
                    i += 1;
                }
            } else {
                i += 1;
            }
        }
        None
    }

    /// `command` without its positional prompt, and the prompt.
    pub fn split_prompt(&self, command: &[String]) -> (Vec<String>, Option<String>) {
        match self.prompt_index(command) {
            Some(i) => {
                let mut rest = command.to_vec();
                let prompt = rest.remove(i);
                // A `--` left with nothing after it means nothing.
                if rest.last().is_some_and(|w| w == "--") && i == rest.len() {
                    rest.pop();
                }
                (rest, Some(prompt))
            }
            None => (command.to_vec(), None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: Grammar =
        Grammar { value: &["--model", "-m"], optional: &["--resume"], variadic: &["--add-dir"], subcommands: &["mcp"] };

    fn split(words: &[&str]) -> (Vec<String>, Option<String>) {
        G.split_prompt(&words.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>())
    }

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn the_prompt_is_the_first_word_that_is_no_option_nor_a_value() {
        assert_eq!(split(&["c", "fix it"]), (words(&["c"]), Some("fix it".into())));
        assert_eq!(
            split(&["c", "--model", "opus", "fix it"]),
            (words(&["c", "--model", "opus"]), Some("fix it".into()))
        );
        assert_eq!(split(&["c", "--model=opus", "fix it", "--verbose"]).1.as_deref(), Some("fix it"));
        assert_eq!(split(&["c", "--verbose", "fix it"]).1.as_deref(), Some("fix it"));
        assert_eq!(split(&["c", "--resume", "abc", "go on"]).1.as_deref(), Some("go on"));
        assert_eq!(split(&["c", "--resume", "--verbose", "go on"]).1.as_deref(), Some("go on"));
        assert_eq!(split(&["c", "--", "-starts with a dash"]), (words(&["c"]), Some("-starts with a dash".into())));
    }

    #[test]
    fn no_prompt_without_a_positional_word() {
        assert_eq!(split(&["c"]), (words(&["c"]), None));
        assert_eq!(split(&["c", "--model", "opus"]).1, None);
        assert_eq!(split(&["c", "--add-dir", "a", "b"]).1, None, "a variadic option takes what follows");
        assert_eq!(split(&["c", "mcp", "list"]).1, None, "a subcommand is no prompt");
        assert_eq!(split(&["c", "--model"]).1, None);
        assert_eq!(split(&["c", "--"]).1, None);
    }
}
