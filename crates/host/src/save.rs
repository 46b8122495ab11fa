//! `SaveTo`: where a host whose workspace lives only beside it (in a pod) pushes its agent's
//! branch when asked (`HostRequest::Save`), so the work outlives the pod. The push is plain
//! `git push` of `refs/heads/<branch>` to the remote, never forced (a branch moved there
//! meanwhile is refused, not overwritten), with every value an argument; the answer also says
//! whether the workspace holds work not committed, which no push carries.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::HostResponse;

/// How long a push may take.
pub const SAVE_WAIT: Duration = Duration::from_secs(120);
/// The most of git's output an answer carries.
const SAID_MOST: usize = 16 * 1024;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaveTo {
    /// The remote's URL, as the workspace's clone reaches it.
    pub remote: String,
    pub branch: String,
}

/// Pushes the branch of the clone in `dir` to its remote and tells what came of it.
pub(crate) fn save(to: &SaveTo, dir: &Path) -> HostResponse {
    let dirty = match run(dir, &["status", "--porcelain=v1", "--untracked-files=all", "-z"]) {
        Ok((true, out)) => !out.is_empty(),
        Ok((false, out)) | Err(out) => return HostResponse::Error { message: format!("git status failed: {out}") },
    };
    let refspec = format!("refs/heads/{0}:refs/heads/{0}", to.branch);
    let (pushed, said) = match run(dir, &["push", "--porcelain", "--", &to.remote, &refspec]) {
        Ok(done) => done,
        Err(why) => (false, why),
    };
    HostResponse::Saved { pushed, dirty, said }
}

/// `git ARGS` in `dir`, without prompts, within `SAVE_WAIT`: whether it succeeded and what it
/// said (stdout then stderr, cut to `SAID_MOST`); an error when it could not run or took too long.
fn run(dir: &Path, args: &[&str]) -> Result<(bool, String), String> {
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
        .map_err(|e| format!("cannot run git: {e}"))?;
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
        Ok(Err(e)) => Err(format!("git failed: {e}")),
        Err(_) => {
            if let Ok(pid) = i32::try_from(pid) {
                let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
            }
            Err(format!("git {} took longer than {} s", args.first().copied().unwrap_or(""), SAVE_WAIT.as_secs()))
        }
    }
}
