//! The state directory: `$BOSUN_STATE_DIR`, else `$XDG_STATE_HOME/bosun`, else
//! `~/.local/state/bosun`, and the files the daemon keeps in it.

use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateDir {
    root: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum StateDirError {
    #[error("cannot find a state directory: set BOSUN_STATE_DIR (or HOME)")]
    NoHome,
    #[error("state directory {0:?} must be an absolute path")]
    Relative(PathBuf),
    #[error("state directory {} is too long for a Unix socket path ({len} bytes, at most 100): choose a shorter BOSUN_STATE_DIR", .dir.display())]
    TooLong { dir: PathBuf, len: usize },
}

/// `path` with its longest existing ancestor resolved, and the rest (not made yet) as given.
fn resolved(path: &Path) -> PathBuf {
    for ancestor in path.ancestors() {
        if let Ok(real) = std::fs::canonicalize(ancestor) {
            let rest = path.strip_prefix(ancestor).unwrap_or(Path::new(""));
            return real.join(rest);
        }
    }
    path.to_path_buf()
}

impl StateDir {
    /// The state directory from an explicit path or the environment.
    pub fn resolve(explicit: Option<PathBuf>) -> Result<Self, StateDirError> {
        let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let root = match explicit.or_else(|| env("BOSUN_STATE_DIR")) {
            Some(p) => p,
            None => match env("XDG_STATE_HOME") {
                Some(x) => x.join("bosun"),
                None => env("HOME").ok_or(StateDirError::NoHome)?.join(".local/state/bosun"),
            },
        };
        Self::new(root)
    }

    /// The state directory at `root`, spelled as the file system resolves it (symlinks
    /// followed), so every path bosun records and every path it finds on disk compare alike.
    pub fn new(root: PathBuf) -> Result<Self, StateDirError> {
        if !root.is_absolute() {
            return Err(StateDirError::Relative(root));
        }
        let dir = Self { root: resolved(&root) };
        // A session host's socket is the longest: a container's, `h/<session>.d/s` (a session
        // name is `bosun-<id>-rN`); then an agent's report channel's.
        let host = dir.hosts().join("bosun-0123456789ab-r999.d/s").as_os_str().len();
        let channel = dir.channel_socket(&bosun_core::AgentId::new(&bosun_core::Nonce::from_bits(0)));
        let len = [dir.socket(), dir.tmux_socket(), channel].iter().map(|p| p.as_os_str().len()).max().unwrap_or(0);
        let len = len.max(host);
        if len > 100 {
            return Err(StateDirError::TooLong { dir: dir.root, len });
        }
        Ok(dir)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory as one string, without a trailing `/`: how the containers a daemon makes
    /// are labelled as its own.
    pub fn label(&self) -> String {
        self.root.components().collect::<PathBuf>().display().to_string()
    }
    /// `label()` as 16 hex digits (FNV-1a, 64 bits): short enough, and plain enough, for a
    /// Kubernetes label's value.
    pub fn digest(&self) -> String {
        let hash = self
            .label()
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        format!("{hash:016x}")
    }
    pub fn db(&self) -> PathBuf {
        self.root.join("bosun.db")
    }
    /// The daemon's socket, alone in a directory of its own (`run/`): where an agent in a
    /// sandbox or a container is shown its report channel's directory instead (a directory,
    /// which shows a daemon's new socket after a restart, where a socket bound by itself would
    /// stay the old one).
    pub fn socket(&self) -> PathBuf {
        self.root.join("run").join("bosun.sock")
    }
    pub fn pid_file(&self) -> PathBuf {
        self.root.join("daemon.pid")
    }
    pub fn log(&self) -> PathBuf {
        self.root.join("daemon.log")
    }
    /// Where the session hosts' sockets are (`h/<session>`: short, for the socket path limit).
    pub fn hosts(&self) -> PathBuf {
        self.root.join("h")
    }
    pub fn tmux_socket(&self) -> PathBuf {
        self.root.join("tmux.sock")
    }
    pub fn tmux_config(&self) -> PathBuf {
        self.root.join("tmux.conf")
    }
    pub fn workspaces(&self) -> PathBuf {
        self.root.join("workspaces")
    }
    pub fn agents(&self) -> PathBuf {
        self.root.join("agents")
    }
    /// Plan `id`'s log: its summary, each time it ends.
    pub fn plan_log(&self, id: &str) -> PathBuf {
        self.root.join("plans").join(format!("{id}.log"))
    }
    /// Hook reports made while no daemon ran, one JSON `HookEvent` a line, read at start; in a
    /// directory of its own (`spool/`), where an agent in a sandbox or a container is shown the
    /// spool of its own report channel instead.
    pub fn hook_spool(&self) -> PathBuf {
        self.spool().join("hooks.spool")
    }
    /// The directory of the hook spool.
    pub fn spool(&self) -> PathBuf {
        self.root.join("spool")
    }
    /// The report channels of the agents in a sandbox or a container, one directory each.
    pub fn reports(&self) -> PathBuf {
        self.root.join("reports")
    }
    /// `agent`'s report channel: the socket the daemon serves for that agent alone
    /// (`bosun.sock`) and its own hook spool (`spool/`), which its sandbox or container shows
    /// where its hooks look for the daemon's socket and spool (it sees nothing else of this
    /// directory). What arrives there is that agent's, whatever it says.
    pub fn channel(&self, agent: &bosun_core::AgentId) -> PathBuf {
        self.reports().join(agent.as_str())
    }
    /// The socket of `agent`'s report channel.
    pub fn channel_socket(&self, agent: &bosun_core::AgentId) -> PathBuf {
        self.channel(agent).join("bosun.sock")
    }
    /// Where bosun 0.1 kept the hook spool: read at start too, so no report kept there is lost.
    pub fn old_hook_spool(&self) -> PathBuf {
        self.root.join("hooks.spool")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_dir_reached_through_a_symlink_is_spelled_as_its_real_path() {
        let temp = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(temp.path()).unwrap().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = temp.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(StateDir::new(link.clone()).unwrap().root(), real);
        assert_eq!(StateDir::new(link.join("not/yet")).unwrap().root(), real.join("not/yet"), "made later");
    }
}
