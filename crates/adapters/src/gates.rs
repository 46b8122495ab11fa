//! Gates: a policy's check, run with `sh -c` in the agent's workspace as the user, its output
//! dropped; only how it exits says anything.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::AdapterError;

/// Runs gates.
pub trait Gates: Send + Sync {
    /// Runs `command` in `cwd`: its exit code, none when a signal ended it.
    fn run(&self, command: &str, cwd: &Path) -> Result<Option<i32>, AdapterError>;
}

/// Gates run by `sh`.
#[derive(Debug, Default, Clone, Copy)]
pub struct ShellGates;

impl Gates for ShellGates {
    fn run(&self, command: &str, cwd: &Path) -> Result<Option<i32>, AdapterError> {
        let status = crate::private::as_user(&mut Command::new("sh"))
            .args(["-c", command])
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| AdapterError::io("running sh", e))?;
        Ok(status.code())
    }
}
