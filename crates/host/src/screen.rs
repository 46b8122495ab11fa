//! `Screen`: the terminal as the program drew it, from every byte it wrote (a vt100 emulator
//! with a scrollback), read as plain text or with its colours.

/// Lines kept above the visible screen.
const SCROLLBACK: usize = 2000;

pub struct Screen {
    parser: vt100::Parser,
}

impl Screen {
    pub fn new(cols: u16, rows: u16) -> Self {
        Self { parser: vt100::Parser::new(rows, cols, SCROLLBACK) }
    }

    /// Takes in what the program wrote.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
    }

    pub fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.parser.screen().size();
        (cols, rows)
    }

    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.parser.screen_mut().set_size(rows, cols);
    }

    /// The visible lines after up to `scrollback` lines of what scrolled off above them,
    /// trailing blank lines left out; with SGR colour escapes when `colors`.
    pub fn text(&mut self, colors: bool, scrollback: u32) -> String {
        // The view is moved up a screen at a time, the lines above the screen taken from each.
        let wanted = usize::try_from(scrollback).unwrap_or(usize::MAX).min(SCROLLBACK);
        self.parser.screen_mut().set_scrollback(wanted);
        let mut above = self.parser.screen().scrollback();
        let mut lines = Vec::new();
        while above > 0 {
            self.parser.screen_mut().set_scrollback(above);
            let (rows, _) = self.parser.screen().size();
            let take = above.min(usize::from(rows));
            lines.extend(self.rows(colors).into_iter().take(take));
            above -= take;
        }
        self.parser.screen_mut().set_scrollback(0);
        lines.extend(self.rows(colors));
        let used = lines.iter().rposition(|(plain, _)| !plain.is_empty()).map_or(0, |last| last + 1);
        let shown: Vec<String> =
            lines.into_iter().take(used).map(|(plain, coloured)| if colors { coloured } else { plain }).collect();
        shown.join("\n")
    }

    /// The rows in view: each plain (trailing blanks cut) and, when `colors`, with its escapes.
    fn rows(&self, colors: bool) -> Vec<(String, String)> {
        let screen = self.parser.screen();
        let (_, cols) = screen.size();
        let plain = screen.rows(0, cols).map(|row| row.trim_end().to_owned());
        if !colors {
            return plain.map(|p| (p, String::new())).collect();
        }
        let formatted = screen.rows_formatted(0, cols).map(|row| format!("{}\x1b[0m", String::from_utf8_lossy(&row)));
        plain.zip(formatted).collect()
    }

    /// Whether the program asked for its cursor keys in application mode (`ESC O A`).
    pub fn application_cursor(&self) -> bool {
        self.parser.screen().application_cursor()
    }

    /// The bytes that draw the screen as it is on a fresh terminal (for a client attaching).
    pub fn redraw(&self) -> Vec<u8> {
        self.parser.screen().contents_formatted()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_what_was_drawn_with_or_without_colours() {
        let mut s = Screen::new(20, 5);
        s.feed(b"hello\r\n\x1b[31mred\x1b[0m line\r\n");
        assert_eq!(s.text(false, 0), "hello\nred line");
        let coloured = s.text(true, 0);
        assert!(coloured.contains("\x1b[31mred"), "{coloured:?}");
        s.feed(b"\x1b[2J\x1b[Hcleared");
        assert_eq!(s.text(false, 0), "cleared");
    }

    #[test]
    fn lines_scrolled_off_are_read_back_before_the_screen() {
        let mut s = Screen::new(10, 3);
        for n in 1..=8 {
            s.feed(format!("line {n}\r\n").as_bytes());
        }
        assert_eq!(s.text(false, 0), "line 7\nline 8", "the screen: its last row is blank");
        assert_eq!(s.text(false, 4), "line 3\nline 4\nline 5\nline 6\nline 7\nline 8");
        assert_eq!(s.text(false, 100).lines().next(), Some("line 1"), "no more than there is");
        assert_eq!(s.text(false, 0), "line 7\nline 8", "the view is back at the screen");
        assert!(s.text(true, 2).starts_with("line 5"), "{:?}", s.text(true, 2));
    }

    #[test]
    fn a_resize_keeps_what_fits() {
        let mut s = Screen::new(20, 5);
        s.feed(b"abcdefghij");
        s.resize(5, 3);
        assert_eq!(s.size(), (5, 3));
        assert!(s.text(false, 0).starts_with("abcde"), "{}", s.text(false, 0));
    }
}
