//! `SaveTo`: where a host whose workspace lives only beside it (in a pod) saves its agent's
//! branch, so the work outlives the pod: pushed to the repository's remote when asked
//! (`HostRequest::Save`) and as it ends; or, for a repository with none, given to the daemon
//! as a git bundle (see `bundle`). The push is plain `git push` of `refs/heads/<branch>`,
//! never forced (a branch moved there meanwhile is refused, not overwritten), with every value
//! an argument; the answer also says whether the workspace holds work not committed, which no
//! push carries.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use bosun_core::{ExitStatus, SavedWork};
use serde::{Deserialize, Serialize};

use crate::HostResponse;

/// How long a push may take.
pub const SAVE_WAIT: Duration = Duration::from_secs(120);
/// The most of git's output an answer carries.
const SAID_MOST: usize = 16 * 1024;

/// What kept git from answering in the host's workspace.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GitError {
    #[error("cannot run git: {0}")]
    CannotRun(std::io::Error),
    #[error("git failed: {0}")]
    Failed(std::io::Error),
    #[error("git {0} took longer than {secs} s", secs = SAVE_WAIT.as_secs())]
    TooLong(String),
    /// `git status` said this, failing.
    #[error("git status failed: {0}")]
    Status(String),
    #[error("git status failed: {0}")]
    StatusRun(Box<GitError>),
    /// `git NAME` said this, failing.
    #[error("git {name} failed: {said}")]
    Said { name: String, said: String },
    #[error("git {name} failed: {source}")]
    Run { name: String, source: Box<GitError> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SaveTo {
    /// Pushed to `remote` (its URL, as the workspace's clone reaches it).
    Remote { remote: String, branch: String },
    /// Taken from the daemon and given back to it as git bundles.
    Bundle { branch: String },
}

impl SaveTo {
    pub fn branch(&self) -> &str {
        match self {
            Self::Remote { branch, .. } | Self::Bundle { branch } => branch,
        }
    }
}

/// How a host that ended with its program left: the program's status and what its save did
/// (none when it had nowhere to save to). Written as a pod's termination message, which its
/// cluster keeps at most `MESSAGE_MOST` bytes of.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ended {
    pub exit: ExitStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved: Option<SavedWork>,
}

/// The most of a termination message a cluster keeps.
pub const MESSAGE_MOST: usize = 4096;

/// What a push's answer says of the work.
pub(crate) fn saved_of(answer: HostResponse) -> SavedWork {
    match answer {
        HostResponse::Saved { pushed, dirty, said } => SavedWork { pushed, dirty, said },
        HostResponse::Error { message } => SavedWork { pushed: false, dirty: true, said: message },
        other => SavedWork { pushed: false, dirty: true, said: format!("unexpected {other:?}") },
    }
}

impl Ended {
    /// As JSON within `MESSAGE_MOST` bytes: what git said is cut to fit.
    pub fn to_message(&self) -> String {
        let mut ended = self.clone();
        loop {
            let text = serde_json::to_string(&ended).unwrap_or_default();
            let Some(saved) = ended.saved.as_mut().filter(|_| text.len() > MESSAGE_MOST) else { return text };
            let over = text.len() - MESSAGE_MOST;
            let mut keep = saved.said.len().saturating_sub(over + 8);
            while !saved.said.is_char_boundary(keep) {
                keep -= 1;
            }
            saved.said.truncate(keep);
        }
    }

    /// An `Ended` read back from a termination message; None when it is not one.
    pub fn from_message(text: &str) -> Option<Self> {
        serde_json::from_str(text.get(..MESSAGE_MOST.min(text.len()))?).ok()
    }
}

/// Pushes `branch` of the clone in `dir` to `remote` and tells what came of it.
pub(crate) fn push(remote: &str, branch: &str, dir: &Path) -> HostResponse {
    let dirty = match is_dirty(dir) {
        Ok(dirty) => dirty,
        Err(e) => return HostResponse::Error { message: e.to_string() },
    };
    let refspec = format!("refs/heads/{branch}:refs/heads/{branch}");
    let (pushed, said) = match run(dir, &["push", "--porcelain", "--", remote, &refspec]) {
        Ok(done) => done,
        Err(why) => (false, why.to_string()),
    };
    HostResponse::Saved { pushed, dirty, said }
}

/// Whether the clone in `dir` holds work not committed (untracked files too).
pub(crate) fn is_dirty(dir: &Path) -> Result<bool, GitError> {
    match run(dir, &["status", "--porcelain=v1", "--untracked-files=all", "-z"]) {
        Ok((true, out)) => Ok(!out.is_empty()),
        Ok((false, out)) => Err(GitError::Status(out)),
        Err(e) => Err(GitError::StatusRun(Box::new(e))),
    }
}

/// `git ARGS` in `dir`, without prompts, within `SAVE_WAIT`: whether it succeeded and what it
/// said (stdout then stderr, cut to `SAID_MOST`); an error when it could not run or took too long.
pub(crate) fn run(dir: &Path, args: &[&str]) -> Result<(bool, String), GitError> {
    let child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("LC_ALL", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(GitError::CannotRun)?;
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(SAVE_WAIT) {
        Ok(Ok(out)) => {
            let mut said = String::from_utf8_lossy(&out.stdout).into_owned();
            said.push_str(&String::from_utf8_lossy(&out.stderr));
            if said.len() > SAID_MOST {
                let mut end = SAID_MOST;
                while !said.is_char_boundary(end) {
                    end -= 1;
                }
                said.truncate(end);
            }
            Ok((out.status.success(), said))
        }
        Ok(Err(e)) => Err(GitError::Failed(e)),
        Err(_) => {
            if let Ok(pid) = i32::try_from(pid) {
                let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
            }
            Err(GitError::TooLong(args.first().copied().unwrap_or("").to_owned()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ended_message_fits_what_a_cluster_keeps_and_reads_back() {
        let long = HostResponse::Saved { pushed: false, dirty: true, said: "é".repeat(10_000) };
        let ended = Ended { exit: ExitStatus::code(3), saved: Some(saved_of(long)) };
        let message = ended.to_message();
        assert!(message.len() <= MESSAGE_MOST, "{}", message.len());
        let back = Ended::from_message(&message).unwrap();
        assert_eq!(back.exit, ExitStatus::code(3));
        assert!(back.saved.is_some_and(|s| !s.pushed && s.dirty && s.said.starts_with('é')));
        assert_eq!(Ended::from_message("not json"), None);
        let none = Ended { exit: ExitStatus::code(0), saved: None }.to_message();
        assert_eq!(Ended::from_message(&none).unwrap().saved, None);
    }
}
