//! The workspace, session and runtime an agent asks for on the command line (`agent start
//! --workspace`, `--session`, `--runtime`): their words, as clap offers them.

use clap::ValueEnum;

/// `--workspace`: the kind of workspace the agent works in.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum WorkspaceKindArg {
    /// A git worktree on a new branch
    Worktree,
    /// An empty directory
    Folder,
    /// A warm worktree of the repository's pool, handed out at once and reset after use
    /// (see `bosun pool`)
    Pool,
    /// A clone on a new branch in a volume of the container engine, not on this disk
    /// (--runtime docker only); its commits come back to the branch here when the agent ends
    Volume,
}

/// `--runtime`: where the agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RuntimeArg {
    Local,
    Sandbox,
    Docker,
    K8s,
}

/// `--session`: what holds the agent's terminal.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SessionArg {
    Tmux,
    Host,
}

impl From<SessionArg> for bosun_core::SessionBackend {
    fn from(s: SessionArg) -> Self {
        match s {
            SessionArg::Tmux => Self::Tmux,
            SessionArg::Host => Self::Host,
        }
    }
}
