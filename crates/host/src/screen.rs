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

    /// The visible lines, trailing blank lines left out; with SGR colour escapes when `colors`.
    pub fn text(&self, colors: bool) -> String {
        let screen = self.parser.screen();
        let (_, cols) = screen.size();
        let plain: Vec<String> = screen.rows(0, cols).map(|row| row.trim_end().to_owned()).collect();
        let used = plain.iter().rposition(|l| !l.is_empty()).map_or(0, |last| last + 1);
        if !colors {
            return plain[..used].join("\n");
        }
        let lines: Vec<String> = screen
            .rows_formatted(0, cols)
            .take(used)
            .map(|row| format!("{}\x1b[0m", String::from_utf8_lossy(&row)))
            .collect();
        lines.join("\n")
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
        assert_eq!(s.text(false), "hello\nred line");
        let coloured = s.text(true);
        assert!(coloured.contains("\x1b[31mred"), "{coloured:?}");
        s.feed(b"\x1b[2J\x1b[Hcleared");
        assert_eq!(s.text(false), "cleared");
    }

    #[test]
    fn a_resize_keeps_what_fits() {
        let mut s = Screen::new(20, 5);
        s.feed(b"abcdefghij");
        s.resize(5, 3);
        assert_eq!(s.size(), (5, 3));
        assert!(s.text(false).starts_with("abcde"), "{}", s.text(false));
    }
}
