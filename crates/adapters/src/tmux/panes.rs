//! Reading what tmux prints about panes: the session list with exit statuses, and screens.

use bosun_core::{ExitStatus, SessionName, SessionSeen};

/// `list-panes -a -F` format: one line per pane, tab-separated.
pub(super) const LIST_FORMAT: &str =
    "#{session_name}\t#{pane_pid}\t#{pane_dead}\t#{pane_dead_status}\t#{pane_dead_signal}";

/// The sessions in `list-panes -a -F LIST_FORMAT` output, each once (its first pane), in order.
pub(super) fn parse_list(out: &str) -> Vec<SessionSeen> {
    let mut seen: Vec<SessionSeen> = Vec::new();
    for line in out.lines() {
        let mut fields = line.split('\t');
        let Some(name) = fields.next().filter(|n| !n.is_empty()) else {
            continue;
        };
        if seen.iter().any(|s| s.session.as_str() == name) {
            continue;
        }
        let mut number = || fields.next().and_then(|f| f.trim().parse::<i64>().ok());
        let pid = number().and_then(|p| u32::try_from(p).ok());
        let dead = number() == Some(1);
        let code = number().and_then(|c| i32::try_from(c).ok());
        let signal = number().and_then(|s| i32::try_from(s).ok());
        let exit = dead.then_some(ExitStatus { code, signal });
        seen.push(SessionSeen { session: SessionName::from_reported(name), pid, exit });
    }
    seen
}

/// A pane that has exited but whose status tmux has not collected (yet).
pub(super) fn dead_without_status(seen: &SessionSeen) -> bool {
    seen.exit.is_some_and(|e| e.code.is_none() && e.signal.is_none())
}

/// `screen` without the blank lines at its end (nor the whitespace ending its last line).
pub(super) fn trim_trailing_blank_lines(screen: &str) -> &str {
    screen.trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_live_exited_and_signalled_panes() {
        let out = "a\t10\t0\t\t\nb\t11\t1\t3\t\nc\t12\t1\t\t9\na\t13\t0\t\t\n";
        let seen = parse_list(out);
        assert_eq!(seen.len(), 3);
        assert_eq!((seen[0].session.as_str(), seen[0].pid, seen[0].exit), ("a", Some(10), None));
        assert_eq!(seen[1].exit, Some(ExitStatus { code: Some(3), signal: None }));
        assert_eq!(seen[2].exit, Some(ExitStatus { code: None, signal: Some(9) }));
    }

    #[test]
    fn trailing_blank_lines_are_trimmed() {
        assert_eq!(trim_trailing_blank_lines("a\n\nb  \n\n   \n\n"), "a\n\nb");
        assert_eq!(trim_trailing_blank_lines("\n\n"), "");
    }
}
