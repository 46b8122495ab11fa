//! A runbook's queue commands (a worker's `list`, a dispatch's `take`): run with `sh -c` as the
//! user, what they print read no further than `OUTPUT_MOST`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The most a queue's list or take command may print: past it, its output is an error.
pub const OUTPUT_MOST: usize = 4 << 20;
/// The most of its error output an error keeps.
const ERROR_MOST: usize = 2000;

/// Why a queue command printed nothing to be read.
#[derive(Debug, thiserror::Error)]
pub enum QueueCommandError {
    #[error("cannot run sh: {0}")]
    CannotRun(std::io::Error),
    #[error("it printed more than {} MiB", OUTPUT_MOST >> 20)]
    TooMuch,
    /// How it ended (`exit N`, or a signal), and its error output (cut).
    #[error("{ended}: {said}")]
    Failed { ended: String, said: String },
}

/// Runs queue commands.
pub trait QueueCommands: Send + Sync {
    /// What `command`, run in `cwd` with `env` besides the daemon's, printed.
    fn output(&self, command: &str, env: &BTreeMap<String, String>, cwd: &Path) -> Result<String, QueueCommandError>;
}

/// Queue commands run by `sh`.
#[derive(Debug, Default, Clone, Copy)]
pub struct ShellQueueCommands;

impl QueueCommands for ShellQueueCommands {
    fn output(&self, command: &str, env: &BTreeMap<String, String>, cwd: &Path) -> Result<String, QueueCommandError> {
        let mut cmd = Command::new("sh");
        crate::private::as_user(&mut cmd).args(["-c", command]).envs(env).current_dir(cwd);
        let out = crate::bounded::output(&mut cmd, OUTPUT_MOST).map_err(QueueCommandError::CannotRun)?;
        if out.cut {
            return Err(QueueCommandError::TooMuch);
        }
        if out.status.success() {
            return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
        }
        let ended = out.status.code().map_or_else(|| "a signal".to_owned(), |c| format!("exit {c}"));
        let said = String::from_utf8_lossy(&out.stderr).trim().chars().take(ERROR_MOST).collect();
        Err(QueueCommandError::Failed { ended, said })
    }
}
