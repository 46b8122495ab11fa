//! opencode's dialogs as its screen shows them, colours and all. Its permission dialog's options
//! are a row ("Allow once   Allow always   Reject"); the selected one is drawn on a background
//! of its own (its theme's warning colour, the others on its menu colour) and marked by nothing
//! else. From opencode 1.18.33's code: the first option is selected when a dialog shows; left
//! (`h`) and right (`l`) move the selection, round from one end to the other; Enter picks the
//! selected option; Escape rejects. So bosun reads which one is selected from the colours
//! before it presses an arrow, and presses Enter only once a look shows its option selected.

use super::dialog::{Menu, MenuOption};

const ESC: char = '\u{1b}';

/// One character of a line and the background its escapes set for it (`None`: the default).
struct Cell {
    c: char,
    bg: Option<String>,
}

/// The options of the dialog at the bottom of `screen` (a capture with its colour escapes): the
/// row above its hints ("⇆ select enter confirm"), below its title ("△ Permission required").
/// Which option is selected is told only when one option's background differs from all the
/// others', which share one (three options or more); else none is.
pub fn menu(screen: &str) -> Option<Menu> {
    let lines: Vec<Vec<Cell>> = screen.lines().map(cells).collect();
    let plain: Vec<String> = lines.iter().map(|l| l.iter().map(|c| c.c).collect()).collect();
    let title = plain.iter().rposition(|l| bare(l).starts_with("△ "))?;
    let hints = title + plain[title..].iter().position(|l| l.contains("⇆ select"))?;
    let mut options = segments(&plain[hints]);
    let mut row = hints;
    if options.len() < 2 {
        // A narrow terminal puts the hints below the options.
        row = (title + 1..hints).rev().find(|i| !bare(&plain[*i]).is_empty())?;
        options = segments(&plain[row]);
    }
    if options.len() < 2 {
        return None;
    }
    let bgs: Vec<Option<&String>> =
        options.iter().map(|(at, _)| lines[row].get(*at).and_then(|c| c.bg.as_ref())).collect();
    let selected = (0..bgs.len()).find(|i| {
        let others: Vec<_> = (0..bgs.len()).filter(|j| j != i).map(|j| bgs[j]).collect();
        others.len() >= 2 && others.iter().all(|b| *b == others[0] && *b != bgs[*i])
    });
    let options = options.into_iter().map(|(_, text)| MenuOption { number: None, text }).collect();
    Some(Menu { options, selected, across: true })
}

/// `line` without its left border and its blanks at either end.
fn bare(line: &str) -> &str {
    line.trim().trim_start_matches(['┃', '│']).trim()
}

/// The options of a row (before its hints: "ctrl+f", "⇆"), as runs of words two blanks or more
/// apart, each with the column (in characters) it starts at.
fn segments(line: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = line.chars().collect();
    let text: String = chars.iter().collect();
    let end = ["ctrl+f", "⇆"].iter().filter_map(|h| text.find(h)).min().unwrap_or(text.len());
    let end = text[..end].chars().count();
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut blanks = 2;
    for (i, c) in chars[..end].iter().enumerate() {
        let blank = c.is_whitespace() || matches!(c, '┃' | '│');
        match (blank, out.last_mut()) {
            (true, _) => blanks += 1,
            (false, Some(last)) if blanks < 2 => {
                last.1.extend(std::iter::repeat_n(' ', blanks));
                last.1.push(*c);
                blanks = 0;
            }
            (false, _) => {
                out.push((i, c.to_string()));
                blanks = 0;
            }
        }
    }
    out
}

/// The characters of `line` with their backgrounds, its escapes read (SGR) or dropped (others).
fn cells(line: &str) -> Vec<Cell> {
    let mut out = Vec::new();
    let mut bg: Option<String> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != ESC {
            out.push(Cell { c, bg: bg.clone() });
            continue;
        }
        match chars.next() {
            Some('[') => {
                let mut params = String::new();
                for p in chars.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&p) {
                        if p == 'm' {
                            sgr(&params, &mut bg);
                        }
                        break;
                    }
                    params.push(p);
                }
            }
            // A string (a link's OSC 8): up to BEL or ESC \.
            Some(']') => {
                while let Some(p) = chars.next() {
                    if p == '\u{7}' || (p == ESC && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The background after the SGR sequence `params` (`48;5;215`, `48;2;r;g;b`, `41`, `49`, `0`).
fn sgr(params: &str, bg: &mut Option<String>) {
    let ps: Vec<&str> = params.split([';', ':']).collect();
    let mut i = 0;
    while i < ps.len() {
        match ps[i] {
            "" | "0" | "49" => *bg = None,
            "38" | "48" | "58" => {
                let n = match ps.get(i + 1) {
                    Some(&"5") => 2,
                    Some(&"2") => 4,
                    _ => 0,
                };
                if ps[i] == "48" {
                    *bg = Some(ps[i + 1..(i + 1 + n).min(ps.len())].join(";"));
                }
                i += n;
            }
            p if matches!(p.parse::<u8>(), Ok(40..=47 | 100..=107)) => *bg = Some(p.to_owned()),
            _ => {}
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::dialog::{DialogAnswer, Step, Want};
    use crate::TermKey;

    /// opencode 1.18.33's permission dialog, as tmux captures it with its colours (the
    /// options' row and hints shortened to what matters), "Allow once" selected.
    fn dialog(selected: usize) -> String {
        let bg = |i: usize| if i == selected { "\u{1b}[48;5;215m" } else { "\u{1b}[48;5;236m" };
        let fg = |i: usize| if i == selected { "\u{1b}[38;5;232m" } else { "\u{1b}[38;5;245m" };
        let row: String = ["Allow once", "Allow always", "Reject"]
            .iter()
            .enumerate()
            .map(|(i, o)| format!("{} {}{o} \u{1b}[48;5;235m ", bg(i), fg(i)))
            .collect();
        format!(
            "  ┃  \u{1b}[38;5;214m△\u{1b}[39m Permission required\n  ┃    # Shell command\n  ┃\n  ┃  $ touch made-file\n  ┃\n  \u{1b}[48;5;235m┃  {row}\u{1b}[38;5;255m   ctrl+f fullscreen   ⇆ select   enter confirm\u{1b}[0m\n\n  ┃ Build · claude-sonnet-4-5"
        )
    }

    fn keys(screen: &str, answer: DialogAnswer) -> Option<Step> {
        let m = menu(screen).expect("a menu");
        m.step(m.find(Want::Person { answer }).ok()?, true)
    }

    #[test]
    fn its_options_read_in_a_row_and_the_selected_one_by_its_background() {
        let m = menu(&dialog(0)).expect("a menu");
        assert_eq!(m.listed(), "Allow once; Allow always; Reject");
        assert_eq!((m.selected, m.across), (Some(0), true));
        assert_eq!(menu(&dialog(2)).and_then(|m| m.selected), Some(2));
        assert_eq!(menu(&dialog(1)).and_then(|m| m.selected), Some(1));
    }

    #[test]
    fn allow_and_deny_move_across_to_their_option_then_press_enter_on_it() {
        assert_eq!(keys(&dialog(0), DialogAnswer::Allow), Some(Step::Pick(vec![TermKey::Enter])));
        assert_eq!(keys(&dialog(2), DialogAnswer::Allow), Some(Step::Move(vec![TermKey::Left, TermKey::Left])));
        assert_eq!(keys(&dialog(0), DialogAnswer::Deny), Some(Step::Move(vec![TermKey::Right, TermKey::Right])));
        assert_eq!(keys(&dialog(1), DialogAnswer::Deny), Some(Step::Move(vec![TermKey::Right])));
        assert_eq!(keys(&dialog(2), DialogAnswer::Deny), Some(Step::Pick(vec![TermKey::Enter])));
    }

    #[test]
    fn without_its_colours_or_with_two_options_nothing_says_which_is_selected() {
        let plain = super::super::generic::strip_ansi(&dialog(1));
        let m = menu(&plain).expect("its options still read");
        assert_eq!((m.options.len(), m.selected), (3, None));
        assert_eq!(keys(&plain, DialogAnswer::Allow), None, "no key without the selection seen");
        let always =
            "┃ △ Always allow\n┃ \u{1b}[48;5;215m Confirm \u{1b}[48;5;236m Cancel \u{1b}[0m  ⇆ select   enter confirm";
        assert_eq!(menu(always).map(|m| (m.listed(), m.selected)), Some(("Confirm; Cancel".into(), None)));
        assert_eq!(menu("△ Permission required\nAllow once and nothing else"), None, "no hints, no menu");
        assert_eq!(menu("Allow once   Allow always   Reject   ⇆ select"), None, "no title, no menu");
    }

    #[test]
    fn a_narrow_terminal_puts_the_hints_below_the_options() {
        let narrow = dialog(0)
            .replace("\u{1b}[38;5;255m   ctrl+f fullscreen   ⇆ select", "\n  ┃\n  ┃  ctrl+f fullscreen ⇆ select");
        let m = menu(&narrow).expect("a menu");
        assert_eq!((m.listed().as_str(), m.selected), ("Allow once; Allow always; Reject", Some(0)));
    }

    proptest::proptest! {
        /// Any screen: no panic, and the only keys are the row's arrows and Enter.
        #[test]
        fn any_screen_reads_without_panic(text in r"(\PC|\x1b|\[|;|m|[0-9]|△ |⇆ select|┃|  |\n)*") {
            if let Some(m) = menu(&text) {
                for to in 0..m.options.len() {
                    if let Some(Step::Pick(k) | Step::Move(k)) = m.step(to, true) {
                        proptest::prop_assert!(k.iter().all(|k| matches!(k, TermKey::Left | TermKey::Right | TermKey::Enter)));
                    }
                }
            }
        }
    }
}
