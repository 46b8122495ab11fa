//! A sandboxed agent's command: the `Sandbox` the core decided on, spelled as bubblewrap's
//! arguments around the agent's command. The only things found out here are where the
//! workspace's repository keeps its git directory and which home directories exist.

use std::path::{Path, PathBuf};
use std::process::Command;

use bosun_core::Sandbox;

use crate::AdapterError;

/// The program that makes the sandbox.
pub const BWRAP: &str = "bwrap";

/// Whether bubblewrap can run here; says how to install it when it cannot.
pub fn check_available() -> Result<(), AdapterError> {
    match Command::new(BWRAP).arg("--version").output() {
        Ok(out) if out.status.success() => Ok(()),
        _ => Err(AdapterError::Command {
            command: format!("{BWRAP} --version"),
            stderr: "bubblewrap is not installed, which --runtime sandbox runs agents in: install it, e.g. \
                     `sudo apt-get install bubblewrap`"
                .into(),
        }),
    }
}

/// `command`, run in `cwd` inside `sandbox`, its hooks able to reach the daemon at `socket`, or
/// to leave their reports in `spool` (a directory) while none runs.
pub fn wrapped(command: &[String], sandbox: &Sandbox, cwd: &Path, socket: &Path, spool: &Path) -> Vec<String> {
    let mut args: Vec<String> = vec![BWRAP.into(), "--die-with-parent".into()];
    let mut add = |words: &[&str]| args.extend(words.iter().map(|w| (*w).to_owned()));
    add(&["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]);
    for home in other_homes(sandbox.home.as_deref()) {
        add(&["--tmpfs", &home.display().to_string()]);
    }
    if !sandbox.network {
        add(&["--unshare-net"]);
    }
    let git = if sandbox.repository { git_dir(cwd) } else { None };
    for path in sandbox.writable.iter().chain(&git).chain([&spool.to_path_buf()]) {
        let p = path.display().to_string();
        add(&["--bind-try", &p, &p]);
    }
    // The socket's own directory, read-only: a daemon's new socket shows there after a restart.
    let s = socket.parent().unwrap_or(socket).display().to_string();
    add(&["--ro-bind-try", &s, &s, "--chdir", &cwd.display().to_string(), "--"]);
    args.extend(command.iter().cloned());
    args
}

/// The home directories on this machine other than `own` (and not holding it): `/home` whole
/// when `own` is not in it.
fn other_homes(own: Option<&Path>) -> Vec<PathBuf> {
    let under_home = own.is_some_and(|own| own.starts_with("/home"));
    let mut homes: Vec<PathBuf> = match under_home {
        true => std::fs::read_dir("/home").map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default(),
        false => vec![PathBuf::from("/home")],
    };
    homes.push(PathBuf::from("/root"));
    homes.retain(|h| h.is_dir() && own.is_none_or(|own| !own.starts_with(h)));
    homes.sort();
    homes
}

/// The git directory of the repository `dir` belongs to (a worktree's is its repository's).
pub(crate) fn git_dir(dir: &Path) -> Option<PathBuf> {
    let out = crate::git_in(dir).args(["rev-parse", "--path-format=absolute", "--git-common-dir"]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !text.is_empty()).then(|| PathBuf::from(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandbox_is_spelled_in_order_with_the_network_cut_and_the_command_last() {
        let sandbox = Sandbox {
            writable: vec!["/w/ws".into(), "/w/agent".into()],
            repository: false,
            home: Some("/root".into()),
            network: false,
        };
        let command = vec!["claude".to_owned(), "--x; rm -rf /".to_owned()];
        let argv =
            wrapped(&command, &sandbox, Path::new("/w/ws"), Path::new("/w/run/bosun.sock"), Path::new("/w/spool"));
        let text = argv.join(" ");
        assert!(
            text.starts_with("bwrap --die-with-parent --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp"),
            "{text}"
        );
        assert!(text.contains("--unshare-net"), "{text}");
        assert!(text.contains("--bind-try /w/ws /w/ws --bind-try /w/agent /w/agent"), "{text}");
        assert!(text.contains("--bind-try /w/spool /w/spool"), "its hooks' spool is writable: {text}");
        assert!(text.contains("--ro-bind-try /w/run /w/run"), "the socket's directory is not: {text}");
        assert!(!text.contains("--tmpfs /root"), "its own home stays: {text}");
        assert_eq!(&argv[argv.len() - 3..], ["--", "claude", "--x; rm -rf /"], "the command is its own words, last");
    }
}
