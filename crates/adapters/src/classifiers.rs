//! Classifiers: an agent's classifier command, run as the user with the last message on its
//! stdin and in `$BOSUN_LAST_MESSAGE`, its stdout the answer. A command that fails, or runs
//! longer than `LIMIT`, is reported as failed; the core then falls back to its heuristic.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use wait_timeout::ChildExt;

/// How long a classifier may take.
pub const LIMIT: Duration = Duration::from_secs(120);

/// Why a classifier gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum ClassifierError {
    #[error("the classifier command is empty")]
    Empty,
    #[error("cannot run {program:?}: {source}")]
    CannotRun { program: String, source: std::io::Error },
    #[error("it ran longer than {}s and was stopped", LIMIT.as_secs())]
    TooLong,
    #[error("cannot wait for it: {0}")]
    CannotWait(std::io::Error),
    /// How it exited, and what it wrote to its stderr.
    #[error("it exited with {status}: {said}")]
    Failed { status: std::process::ExitStatus, said: String },
}

/// Runs classifiers.
pub trait Classifiers: Send + Sync {
    /// What `command`, run in `cwd` and given `said`, answers.
    fn classify(&self, command: &[String], cwd: &Path, said: &str) -> Result<String, ClassifierError>;
}

/// Classifiers run as commands of their own.
#[derive(Debug, Default, Clone, Copy)]
pub struct CommandClassifiers;

impl Classifiers for CommandClassifiers {
    fn classify(&self, command: &[String], cwd: &Path, said: &str) -> Result<String, ClassifierError> {
        run(command, cwd, said)
    }
}

fn run(command: &[String], cwd: &Path, said: &str) -> Result<String, ClassifierError> {
    let (program, args) = command.split_first().ok_or(ClassifierError::Empty)?;
    let mut child = crate::private::as_user(&mut Command::new(program))
        .args(args)
        .current_dir(cwd)
        .env("BOSUN_LAST_MESSAGE", said)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| ClassifierError::CannotRun { program: program.clone(), source })?;
    // Both pipes are drained as the command writes, so neither can fill and stall it.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    if let Some(mut stdin) = child.stdin.take() {
        // A classifier that reads only its environment may close stdin early: that is fine.
        let _ = stdin.write_all(said.as_bytes());
    }
    let status = match child.wait_timeout(LIMIT) {
        Ok(Some(status)) => status,
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ClassifierError::TooLong);
        }
        Err(e) => return Err(ClassifierError::CannotWait(e)),
    };
    // A process it left behind may hold the pipes open: what came within a moment is enough.
    let grace = Duration::from_secs(1);
    let out = stdout.recv_timeout(grace).unwrap_or_default();
    if !status.success() {
        let err = stderr.recv_timeout(grace).unwrap_or_default();
        return Err(ClassifierError::Failed { status, said: err.trim().to_owned() });
    }
    Ok(out)
}

/// Reads `pipe` to its end on a thread of its own; the text arrives on the channel.
fn drain(pipe: Option<impl Read + Send + 'static>) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    if let Some(mut pipe) = pipe {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            let _ = tx.send(text);
        });
    }
    rx
}
