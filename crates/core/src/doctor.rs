//! `bosun doctor`: what the daemon found on disk and on its tmux server (`Found`), and the pure
//! judgement of which of it no record owns (`leftovers`) and which of that may go without
//! losing anyone's work.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{SessionName, State};

/// What exists, as the daemon gathered it before it looked at its records.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Found {
    /// The directories under `<state>/workspaces/`.
    pub workspace_dirs: Vec<FoundDir>,
    /// The directories under `<state>/agents/`.
    pub agent_dirs: Vec<PathBuf>,
    /// The sessions on bosun's tmux server.
    pub sessions: Vec<SessionName>,
    /// The worktrees registered in the repositories bosun knows of.
    pub worktrees: Vec<FoundWorktree>,
    /// The branches named as bosun names them (`ws-<nonce>`) in those repositories.
    pub branches: Vec<FoundBranch>,
    /// The containers this state directory's daemon made (by their labels), by session name.
    #[serde(default)]
    pub containers: Vec<SessionName>,
    /// The volumes this state directory's daemon made (by their labels), by name.
    #[serde(default)]
    pub volumes: Vec<String>,
    /// The pods this state directory's daemon made (by their labels), in the namespaces its
    /// records name.
    #[serde(default)]
    pub pods: Vec<FoundPod>,
    /// The claims this state directory's daemon made, in the same namespaces.
    #[serde(default)]
    pub claims: Vec<crate::PodClaim>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundPod {
    pub namespace: String,
    pub name: String,
    /// Whether its agent's work is all saved, as its host said when it ended; None while it runs.
    pub saved: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundDir {
    pub path: PathBuf,
    /// The repository whose worktree it is; None for a plain folder.
    pub repo: Option<PathBuf>,
    /// The branch it has checked out, when it is a worktree.
    pub branch: Option<String>,
    /// Whether it holds changes (a folder: anything at all); None when that could not be told.
    pub dirty: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundWorktree {
    pub repo: PathBuf,
    pub path: PathBuf,
    pub branch: Option<String>,
    /// Its directory is gone; only git's registration of it is left.
    pub missing: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundBranch {
    pub repo: PathBuf,
    pub name: String,
    /// Commits on it that no other branch, tag or remote holds; None when that could not be told.
    pub unique_commits: Option<u32>,
}

/// Something no record owns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Leftover {
    /// A workspace directory: a worktree of `repo`, or a plain folder.
    Workspace {
        path: PathBuf,
        repo: Option<PathBuf>,
    },
    /// Git's record of a worktree whose directory is gone (`git worktree prune` drops it).
    Registration {
        repo: PathBuf,
        path: PathBuf,
    },
    Branch {
        repo: PathBuf,
        name: String,
    },
    Session {
        name: SessionName,
    },
    /// A container made for a session no agent has.
    Container {
        name: SessionName,
    },
    /// An engine volume made for a workspace no record has.
    Volume {
        name: String,
    },
    /// A pod made for a session no agent has.
    Pod {
        namespace: String,
        name: String,
    },
    /// A claim made for a pod workspace no record has.
    Claim {
        namespace: String,
        name: String,
    },
    AgentDir {
        path: PathBuf,
    },
}

/// A leftover, and why it must stay if it must.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Orphan {
    #[serde(flatten)]
    pub leftover: Leftover,
    /// Why `--fix` leaves it alone (someone's work may be in it); None when it may go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep: Option<String>,
}

/// What no record in `state` owns, in the order `--fix` removes it: sessions, containers, agent
/// directories, workspaces, registrations, then branches (a branch goes only once no worktree
/// holds it).
pub fn leftovers(state: &State, found: &Found) -> Vec<Orphan> {
    let mut out = Vec::new();
    let sessions: BTreeSet<&SessionName> = state.agents.values().map(|a| &a.session).collect();
    for name in found.sessions.iter().filter(|s| !sessions.contains(s)) {
        out.push(Orphan { leftover: Leftover::Session { name: name.clone() }, keep: None });
    }
    // A container whose host still serves is one of the sessions above; its container goes
    // with it. One whose host is gone is a leftover of its own.
    for name in found.containers.iter().filter(|s| !sessions.contains(s) && !found.sessions.contains(s)) {
        out.push(Orphan { leftover: Leftover::Container { name: name.clone() }, keep: None });
    }
    let volumes: BTreeSet<&str> = state
        .workspaces
        .values()
        .filter_map(|w| match &w.kind {
            crate::WorkspaceKind::Volume(crate::VolumeClone { volume, .. }) => Some(volume.as_str()),
            _ => None,
        })
        .collect();
    let every_session: BTreeSet<&str> = state.agents.values().map(|a| a.session.as_str()).collect();
    for pod in found.pods.iter().filter(|p| !every_session.contains(p.name.as_str())) {
        let keep = match pod.saved {
            Some(true) => None,
            Some(false) => Some("its agent's work may be only in it: it said so as it ended".to_owned()),
            None => Some("it still runs".to_owned()),
        };
        out.push(Orphan { leftover: Leftover::Pod { namespace: pod.namespace.clone(), name: pod.name.clone() }, keep });
    }
    let claims: BTreeSet<&crate::PodClaim> = state
        .workspaces
        .values()
        .filter_map(|w| match &w.kind {
            crate::WorkspaceKind::Pod(crate::PodClone { claim, .. }) => claim.as_ref(),
            _ => None,
        })
        .collect();
    for claim in found.claims.iter().filter(|c| !claims.contains(c)) {
        let keep = Some("it may hold work that never came back: look at it before `kubectl delete pvc`".to_owned());
        let leftover = Leftover::Claim { namespace: claim.namespace.clone(), name: claim.name.clone() };
        out.push(Orphan { leftover, keep });
    }
    for name in found.volumes.iter().filter(|v| !volumes.contains(v.as_str())) {
        // Its work was never brought back: only a person may judge it.
        let keep = Some("it may hold work that never came back: look at it before `docker volume rm`".to_owned());
        out.push(Orphan { leftover: Leftover::Volume { name: name.clone() }, keep });
    }
    let agent_dirs: BTreeSet<&Path> = state.agents.values().map(|a| a.dir.as_path()).collect();
    for path in found.agent_dirs.iter().filter(|p| !agent_dirs.contains(p.as_path())) {
        out.push(Orphan { leftover: Leftover::AgentDir { path: path.clone() }, keep: None });
    }
    let slots = state.pools.values().flat_map(|p| p.slots.values()).map(|s| s.path.as_path());
    let owned_dirs: BTreeSet<&Path> = state.workspaces.values().map(|w| w.path.as_path()).chain(slots).collect();
    let mut kept_branches = BTreeSet::new();
    for dir in found.workspace_dirs.iter().filter(|d| !owned_dirs.contains(d.path.as_path())) {
        let keep = match dir.dirty {
            Some(false) => None,
            Some(true) => Some("it holds changes".to_owned()),
            None => Some("cannot tell whether it holds changes".to_owned()),
        };
        if let (Some(_), Some(repo), Some(branch)) = (&keep, &dir.repo, &dir.branch) {
            kept_branches.insert((repo.clone(), branch.clone()));
        }
        out.push(Orphan { leftover: Leftover::Workspace { path: dir.path.clone(), repo: dir.repo.clone() }, keep });
    }
    for wt in found.worktrees.iter().filter(|w| w.missing && !owned_dirs.contains(w.path.as_path())) {
        out.push(Orphan {
            leftover: Leftover::Registration { repo: wt.repo.clone(), path: wt.path.clone() },
            keep: None,
        });
    }
    let owned_branches: BTreeSet<(&Path, &str)> =
        state.workspaces.values().filter_map(|w| Some((w.kind.repo()?, w.kind.branch()?))).collect();
    // A branch checked out in a worktree that stays (the user's own, or one of bosun's).
    let orphan_dirs: BTreeSet<&Path> =
        found.workspace_dirs.iter().map(|d| d.path.as_path()).filter(|p| !owned_dirs.contains(p)).collect();
    let checked_out = |b: &FoundBranch| {
        found.worktrees.iter().any(|w| {
            w.repo == b.repo
                && w.branch.as_deref() == Some(&b.name)
                && !w.missing
                && !orphan_dirs.contains(w.path.as_path())
        })
    };
    for b in &found.branches {
        if owned_branches.contains(&(b.repo.as_path(), b.name.as_str())) || checked_out(b) {
            continue;
        }
        let keep = if kept_branches.contains(&(b.repo.clone(), b.name.clone())) {
            Some("its worktree is kept".to_owned())
        } else {
            match b.unique_commits {
                Some(0) => None,
                Some(n) => Some(format!("it holds {n} commit(s) on no other branch, tag or remote")),
                None => Some("cannot tell whether it holds commits of its own".to_owned()),
            }
        };
        out.push(Orphan { leftover: Leftover::Branch { repo: b.repo.clone(), name: b.name.clone() }, keep });
    }
    out
}
