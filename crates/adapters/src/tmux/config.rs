//! The tmux configuration bosun's server starts with: dead panes kept for their exit status, a
//! fixed screen size for detached sessions, and the hooks that report exits back to bosun.

use std::fmt::Write as _;
use std::io;

use crate::AdapterError;

/// The configuration file's text. With `hook_prefix` (a shell command prefix, already quoted for
/// `sh`), the `pane-died` and `session-closed` hooks run
/// `<prefix> pane-died <session> <status> <signal>` and `<prefix> session-closed <session>` in
/// the background, one argument per value even when a value is empty. Without it, the hooks are
/// unset, so sourcing the file into a running server removes hooks set before.
pub(super) fn render(hook_prefix: Option<&str>) -> Result<String, AdapterError> {
    let mut text = String::from(
        "# Written by bosun; rewritten whenever bosun starts its tmux server.\n\
         set -g remain-on-exit on\n\
         set -g history-limit 10000\n\
         set -g default-size 160x48\n",
    );
    match hook_prefix {
        None => text.push_str("set-hook -gu pane-died\nset-hook -gu session-closed\n"),
        Some(prefix) => {
            if prefix.contains(['\n', '\r']) {
                return Err(AdapterError::io(
                    "writing the tmux configuration",
                    io::Error::new(io::ErrorKind::InvalidInput, "the hook command contains a line break"),
                ));
            }
            let hooks = [
                ("pane-died", "'#{session_name}' '#{pane_dead_status}' '#{pane_dead_signal}'"),
                ("session-closed", "'#{hook_session_name}'"),
            ];
            for (hook, formats) in hooks {
                // The shell command run-shell runs, after tmux expands its formats; `#` in the
                // prefix is doubled so tmux leaves it alone. Each format is single-quoted so an
                // empty value still is an argument.
                let shell = format!("{} {hook} {formats} >/dev/null 2>&1", prefix.replace('#', "##"));
                let command = format!("run-shell -b {}", quote(&shell));
                let _ = writeln!(text, "set-hook -g {hook} {}", quote(&command));
            }
        }
    }
    Ok(text)
}

/// `s` as one double-quoted word for tmux's command parser, which reads the configuration file
/// and, when a hook fires, the hook's command.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if matches!(c, '\\' | '"' | '$') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_escape_for_both_tmux_parses() {
        let text = render(Some("'/b' --dir '/x#y' hook tmux")).unwrap();
        let expected = r#"set-hook -g pane-died "run-shell -b \"'/b' --dir '/x##y' hook tmux pane-died '#{session_name}' '#{pane_dead_status}' '#{pane_dead_signal}' >/dev/null 2>&1\"""#;
        assert!(text.lines().any(|l| l == expected), "{text}");
        assert!(text.contains("set -g remain-on-exit on\n"));
    }

    #[test]
    fn quote_escapes_what_tmux_expands() {
        assert_eq!(quote(r#"a"b\c$d"#), r#""a\"b\\c\$d""#);
    }

    #[test]
    fn no_prefix_unsets_the_hooks() {
        let text = render(None).unwrap();
        assert!(text.contains("set-hook -gu pane-died\n"));
        assert!(!text.contains("run-shell"));
    }

    #[test]
    fn line_breaks_are_refused() {
        assert!(render(Some("a\nb")).is_err());
    }
}
