//! What a failed command says and the exit code it ends with: one error type with a kind, its
//! message and hints, whether it arose here or in the daemon (`WireError`).

use std::fmt;
use std::process::ExitCode;

use bosun_wire::{ErrorKind, WireError};

/// What kind of failure ended a command; each has its exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The operation failed (exit 1).
    Failed,
    /// Bad usage or input: fix the arguments, the runbook or the file named (exit 2).
    Usage,
    /// What was named does not exist (exit 3).
    NotFound,
    /// The daemon could not be reached, started, or is another version (exit 4).
    DaemonUnavailable,
    /// Refused because it would lose work: a dirty workspace, unpushed commits (exit 5).
    ProtectsWork,
}

/// The exit codes, for `--help` and the README.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  the operation failed
  2  bad usage or input (arguments, runbooks, files)
  3  what was named does not exist
  4  the daemon is unavailable (cannot be started or reached, or another version)
  5  refused to protect work (uncommitted changes, unpushed commits): see --force";

impl Kind {
    pub fn code(self) -> u8 {
        match self {
            Kind::Failed => 1,
            Kind::Usage => 2,
            Kind::NotFound => 3,
            Kind::DaemonUnavailable => 4,
            Kind::ProtectsWork => 5,
        }
    }

    fn of_wire(kind: ErrorKind) -> Self {
        match kind {
            ErrorKind::BadRequest => Kind::Usage,
            ErrorKind::NotFound => Kind::NotFound,
            ErrorKind::VersionMismatch => Kind::DaemonUnavailable,
            ErrorKind::WouldLoseWork => Kind::ProtectsWork,
            ErrorKind::Conflict | ErrorKind::Failed => Kind::Failed,
        }
    }
}

/// A failure of the command line itself (the daemon's come as `WireError`).
#[derive(Debug)]
pub struct CliError {
    pub kind: Kind,
    pub message: String,
    pub hints: Vec<String>,
}

impl CliError {
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), hints: Vec::new() }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

/// Bad usage or input, as an `anyhow::Error` to return at once.
pub fn usage(message: impl std::fmt::Display) -> anyhow::Error {
    CliError::new(Kind::Usage, message.to_string()).into()
}

/// The kind of `err`: its own (given as the error or as context), the daemon's, or `Failed`.
pub fn kind_of(err: &anyhow::Error) -> Kind {
    err.downcast_ref::<CliError>()
        .map(|c| c.kind)
        .or_else(|| err.downcast_ref::<WireError>().map(|w| Kind::of_wire(w.kind)))
        .unwrap_or(Kind::Failed)
}

/// Prints `err` to stderr for a person (`bosun: …`, then its hints) and gives its exit code.
pub fn report(err: &anyhow::Error) -> ExitCode {
    let kind = kind_of(err);
    match err.downcast_ref::<WireError>() {
        Some(w) => eprintln!("bosun: {w}"),
        None => eprintln!("bosun: {err:#}"),
    }
    for hint in err.downcast_ref::<CliError>().map(|c| c.hints.as_slice()).unwrap_or_default() {
        eprintln!("hint: {hint}");
    }
    ExitCode::from(kind.code())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_is_found_through_context_and_the_daemons_kind_decides_its_code() {
        let err = anyhow::Error::from(CliError::new(Kind::NotFound, "gone")).context("while looking");
        assert_eq!(kind_of(&err), Kind::NotFound);
        let err = anyhow::anyhow!("reset").context(CliError::new(Kind::DaemonUnavailable, "no answer")).context("x");
        assert_eq!(kind_of(&err).code(), 4);
        let err = anyhow::Error::from(WireError::new(ErrorKind::WouldLoseWork, "dirty"));
        assert_eq!(kind_of(&err).code(), 5);
        assert_eq!(kind_of(&anyhow::anyhow!("plain")).code(), 1);
        assert_eq!(kind_of(&usage("bad")).code(), 2);
    }
}
