//! Flags several commands share: `--json` (as the listing commands word it) and `--colors`.

use std::io::IsTerminal;

use clap::{Args, ValueEnum};

/// `--json`, worded for the listing commands (`ls`, `job ls`, `pool ls`, …).
#[derive(Debug, Args)]
pub struct JsonFlag {
    /// Print JSON for scripts
    #[arg(long)]
    pub json: bool,
}

/// `--colors`: whether what is printed keeps its colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Colors {
    Auto,
    Always,
    Never,
}

impl Colors {
    /// Whether stdout gets colours: `auto` when it is a terminal and `NO_COLOR` does not say no.
    pub fn on_stdout(self) -> bool {
        match self {
            Colors::Auto => crate::out::colors_wanted(std::io::stdout().is_terminal()),
            Colors::Always => true,
            Colors::Never => false,
        }
    }
}
