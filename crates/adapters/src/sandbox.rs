//! A confined agent's view of this machine: the `Sandbox` the core decided on, spelled as the
//! mounts a sandbox (bubblewrap's arguments around the agent's command) or a container makes.
//! What is found out here is where the workspace's repository keeps what a commit writes, which
//! home directories exist and what of `/run` name lookups need.
//!
//! Nothing of bosun's is shown but the agent's own: bosun's state directory is hidden (its
//! sockets, tmux's among them, other agents' workspaces, the event log), and its report channel
//! (a socket the daemon serves for this agent alone, and a spool of its own) is shown where its
//! hooks look for the daemon's socket and spool. Its repository is read-only but for what a
//! commit writes: the objects, the refs and their logs, the worktree's own git directory, whose
//! link to the repository (`commondir`, `gitdir`) stays read-only, as does the worktree's `.git`
//! file: its config and hooks are the user's. A sandbox has its own processes (`/proc` shows no
//! other), System V IPC, `/tmp` and `/run` (the user's sockets are there), and, when asked, no
//! network.

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

/// One mount of a confined agent's view, made in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mount {
    /// An empty directory of its own in place of this one (a sandbox's; a container's root is
    /// its image's, which holds nothing of this machine).
    Hide(PathBuf),
    /// `from` of this machine shown at `to`.
    Bind { from: PathBuf, to: PathBuf, writable: bool },
}

impl Mount {
    pub fn read(path: &Path) -> Self {
        Self::Bind { from: path.to_owned(), to: path.to_owned(), writable: false }
    }
    pub fn write(path: &Path) -> Self {
        Self::Bind { from: path.to_owned(), to: path.to_owned(), writable: true }
    }
    /// An empty file that takes no write, in place of one that must not be made.
    fn blank(path: &Path) -> Self {
        Self::Bind { from: PathBuf::from("/dev/null"), to: path.to_owned(), writable: false }
    }
}

/// Where an agent's report channel is, and where its hooks look for the daemon: its socket's
/// directory and its spool.
#[derive(Clone, Copy, Debug)]
pub struct Channel<'a> {
    /// The channel's directory: the socket the daemon serves for this agent (`bosun.sock`) and
    /// its spool (`spool/`).
    pub dir: &'a Path,
    /// Where the hooks look for the daemon's socket's directory (`<state>/run`).
    pub socket_dir: &'a Path,
    /// Where the hooks keep their reports while no daemon answers (`<state>/spool`).
    pub spool: &'a Path,
}

/// What a confined agent working in `cwd` is shown of this machine besides a root: the paths it
/// reads and writes (`sandbox`; what it reads first, for what it writes may be in it: its own
/// config in its directory), what a commit writes in its repository, and its report channel.
/// Paths that do not exist are left out.
pub fn binds(sandbox: &Sandbox, cwd: &Path, channel: Option<Channel<'_>>) -> Vec<Mount> {
    let mut mounts: Vec<Mount> = sandbox.read_only.iter().map(|p| Mount::read(p)).collect();
    mounts.extend(sandbox.writable.iter().map(|p| Mount::write(p)));
    if sandbox.repository {
        mounts.extend(repository(cwd));
    }
    if let Some(c) = channel {
        mounts.push(Mount::Bind { from: c.dir.to_owned(), to: c.socket_dir.to_owned(), writable: false });
        mounts.push(Mount::Bind { from: c.dir.join("spool"), to: c.spool.to_owned(), writable: true });
    }
    mounts.retain(|m| match m {
        Mount::Bind { from, .. } => std::fs::symlink_metadata(from).is_ok(),
        Mount::Hide(_) => true,
    });
    mounts
}

/// `command`, run in `cwd` inside `sandbox`, under bubblewrap: the root read-only, with what
/// `binds` shows, bosun's state directory `state` hidden, and its report `channel`.
pub fn wrapped(
    command: &[String],
    sandbox: &Sandbox,
    cwd: &Path,
    state: &Path,
    channel: Option<Channel<'_>>,
) -> Vec<String> {
    let mut args: Vec<String> = vec![BWRAP.into(), "--die-with-parent".into(), "--unshare-pid".into()];
    let mut add = |words: &[&str]| args.extend(words.iter().map(|w| (*w).to_owned()));
    add(&["--unshare-ipc", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
    if !sandbox.network {
        add(&["--unshare-net"]);
    }
    let mut mounts: Vec<Mount> = hidden(sandbox.home.as_deref(), state).into_iter().map(Mount::Hide).collect();
    // Name lookups may read their configuration from under `/run` (systemd-resolved's).
    mounts.extend(resolver_in_run().iter().map(|p| Mount::read(p)));
    mounts.extend(binds(sandbox, cwd, channel));
    for mount in &mounts {
        match mount {
            Mount::Hide(path) => add(&["--tmpfs", &path.display().to_string()]),
            Mount::Bind { from, to, writable } => {
                let verb = if *writable { "--bind" } else { "--ro-bind" };
                add(&[verb, &from.display().to_string(), &to.display().to_string()]);
            }
        }
    }
    add(&["--chdir", &cwd.display().to_string(), "--"]);
    args.extend(command.iter().cloned());
    args
}

/// What a sandbox hides of this machine: `/tmp`, `/run` (and `/var/run` when it is not a link
/// to it), where the user's sockets are (their session's bus, agents, engines); the home
/// directories other than `own`; and bosun's state directory.
fn hidden(own: Option<&Path>, state: &Path) -> Vec<PathBuf> {
    let mut hidden = vec![PathBuf::from("/tmp"), PathBuf::from("/run")];
    if std::fs::symlink_metadata("/var/run").is_ok_and(|m| m.is_dir()) {
        hidden.push(PathBuf::from("/var/run"));
    }
    hidden.extend(other_homes(own));
    hidden.push(state.to_owned());
    hidden
}

/// The file `/etc/resolv.conf` leads to when it is under `/run`, which a sandbox hides.
fn resolver_in_run() -> Option<PathBuf> {
    let real = std::fs::canonicalize("/etc/resolv.conf").ok()?;
    real.starts_with("/run").then_some(real)
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

/// What a commit in `cwd` writes in its repository, writable, the rest of the repository's git
/// directory read-only. For a linked worktree (bosun's): the objects, refs and logs, and the
/// worktree's own git directory but its links back (`commondir`, `gitdir`), its
/// `config.worktree` and the worktree's `.git` file. For a repository's own checkout: its git
/// directory but its config, hooks, info, packed refs and other worktrees'. Nothing when `cwd`
/// is in no repository.
fn repository(cwd: &Path) -> Vec<Mount> {
    let Some((git_dir, common)) = git_dirs(cwd) else { return Vec::new() };
    if git_dir == common {
        let mut mounts = vec![Mount::write(&common)];
        for own in ["config", "hooks", "info", "packed-refs", "worktrees", "modules"] {
            mounts.push(Mount::read(&common.join(own)));
        }
        if !common.join("config.worktree").exists() {
            mounts.push(Mount::blank(&common.join("config.worktree")));
        }
        return mounts;
    }
    let mut mounts = vec![Mount::read(&common)];
    for shared in ["objects", "refs", "logs"] {
        mounts.push(Mount::write(&common.join(shared)));
    }
    // Where other object stores would be named (`alternates`).
    mounts.push(Mount::read(&common.join("objects/info")));
    mounts.push(Mount::write(&git_dir));
    for link in ["commondir", "gitdir"] {
        mounts.push(Mount::read(&git_dir.join(link)));
    }
    let config = git_dir.join("config.worktree");
    mounts.push(if config.exists() { Mount::read(&config) } else { Mount::blank(&config) });
    let dot_git = cwd.join(".git");
    if std::fs::symlink_metadata(&dot_git).is_ok_and(|m| m.is_file()) {
        mounts.push(Mount::read(&dot_git));
    }
    mounts
}

/// The git directory of `dir`'s worktree and its repository's (the same for a repository's
/// own checkout), absolute.
fn git_dirs(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let out = crate::git_in(dir)
        .args(["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let (git_dir, common) = (lines.next()?, lines.next()?);
    out.status.success().then(|| (PathBuf::from(git_dir), PathBuf::from(common)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandbox_is_spelled_in_order_with_the_network_cut_and_the_command_last() {
        let sandbox = Sandbox {
            writable: vec!["/".into()],
            read_only: vec!["/proc".into()],
            repository: false,
            home: Some("/root".into()),
            network: false,
        };
        let command = vec!["claude".to_owned(), "--x; rm -rf /".to_owned()];
        let channel = Channel { dir: Path::new("/"), socket_dir: Path::new("/w/run"), spool: Path::new("/w/spool") };
        let argv = wrapped(&command, &sandbox, Path::new("/w/ws"), Path::new("/w/state"), Some(channel));
        let text = argv.join(" ");
        assert!(
            text.starts_with(
                "bwrap --die-with-parent --unshare-pid --unshare-ipc --ro-bind / / --dev /dev --proc /proc --unshare-net"
            ),
            "{text}"
        );
        assert!(text.contains("--tmpfs /tmp --tmpfs /run"), "{text}");
        let state = text.find("--tmpfs /w/state").expect("the state directory hidden");
        let shown = text.find("--bind / /").expect("what it writes shown");
        assert!(state < shown, "hidden first, then what it is shown: {text}");
        assert!(text.contains("--ro-bind /proc /proc"), "what it reads, read-only: {text}");
        assert!(text.contains("--ro-bind / /w/run"), "its channel where the daemon's socket would be: {text}");
        assert!(!text.contains("/w/spool"), "a spool that is not there is not shown: {text}");
        assert!(!text.contains("--tmpfs /root"), "its own home stays: {text}");
        assert_eq!(&argv[argv.len() - 3..], ["--", "claude", "--x; rm -rf /"], "the command is its own words, last");
    }

    /// Of a worktree's repository, a sandbox writes what a commit writes and nothing else.
    #[test]
    fn a_worktree_writes_its_objects_refs_logs_and_own_git_directory_and_reads_the_rest() {
        let repo = bosun_testkit::repo::TempRepo::new();
        let place = tempfile::tempdir().unwrap();
        let ws = place.path().canonicalize().unwrap().join("ws-a");
        repo.git(&["worktree", "add", "-q", "-b", "ws-a", ws.to_str().unwrap()]);
        let common = repo.path().join(".git");
        let own = common.join("worktrees/ws-a");
        let sandbox =
            Sandbox { writable: vec![ws.clone()], read_only: vec![], repository: true, home: None, network: true };
        let mounts = binds(&sandbox, &ws, None);
        let (mut writes, mut reads) = (Vec::new(), Vec::new());
        for m in &mounts {
            let Mount::Bind { from, to, writable } = m else { panic!("{m:?}") };
            if *writable {
                writes.push(to.clone());
            } else {
                reads.push((from.clone(), to.clone()));
            }
        }
        let expected: Vec<PathBuf> =
            vec![ws.clone(), common.join("objects"), common.join("refs"), common.join("logs"), own.clone()];
        assert_eq!(writes, expected, "{mounts:#?}");
        let read = |p: PathBuf| (p.clone(), p);
        assert_eq!(
            reads,
            vec![
                read(common.clone()),
                read(common.join("objects/info")),
                read(own.join("commondir")),
                read(own.join("gitdir")),
                (PathBuf::from("/dev/null"), own.join("config.worktree")),
                read(ws.join(".git")),
            ],
            "the config, hooks and info with the rest of the repository, read-only"
        );
        let (first_common, own_at) = (
            mounts.iter().position(|m| matches!(m, Mount::Bind { to, .. } if *to == common)).unwrap(),
            mounts.iter().position(|m| matches!(m, Mount::Bind { to, .. } if *to == own)).unwrap(),
        );
        assert!(first_common < own_at, "what it writes is bound over the read-only repository, after it");
    }
}
