//! What commands print besides tables: JSON for scripts, whether colours are wanted, a commit
//! id cut short.

use std::io::{IsTerminal, Write};

use anyhow::Result;
use serde::Serialize;

/// Whether output going to a terminal (`terminal`) gets colours: never when `NO_COLOR` is set
/// to anything but the empty string (no-color.org).
pub fn colors_wanted(terminal: bool) -> bool {
    terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// JSON for scripts: indented on a terminal, compact (and faster) into a pipe.
pub fn print_json<T: Serialize>(value: &T) -> Result<()> {
    let mut out = std::io::stdout().lock();
    // Made whole first and written at once: stdout is line-buffered, and a listing of hundreds
    // of agents written through it piece by piece is searched for line ends at every piece.
    let mut text = if out.is_terminal() { serde_json::to_vec_pretty(value)? } else { serde_json::to_vec(value)? };
    text.push(b'\n');
    out.write_all(&text)?;
    Ok(())
}

/// A commit id cut to its first 12 digits.
pub fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}
