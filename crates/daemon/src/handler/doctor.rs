//! `bosun doctor`: gathers what is on disk and on bosun's tmux server, has the core judge what no
//! record owns, and with `--fix` removes what may go, in the core's order.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use bosun_adapters::{AdapterError, Containers, Sessions, Survey};
use bosun_core::{leftovers, Found, Leftover, Orphan, SessionName, State};
use bosun_wire::{Finding, Fixed, Response, StateDir};

use super::{query, Answer, Context};

/// `cwd` is where the caller stands: its repository is looked at too.
pub(super) async fn doctor(ctx: &Arc<Context>, fix: bool, cwd: Option<PathBuf>) -> Answer {
    let mut repos = query(ctx, |s| Ok(known_repos(s))).await?;
    let namespaces = query(ctx, |s| Ok(known_namespaces(s))).await?;
    let git = ctx.git.clone();
    repos.extend(super::blocking(move || Ok(cwd.and_then(|d| git.repo_root(&d).ok()))).await?);
    // Reality is looked at before the records: whatever it shows was recorded before it was
    // made, so the records read next own it, and nothing being made now is taken for a leftover.
    let (survey, sessions, dirs) = (ctx.survey.clone(), ctx.sessions.clone(), ctx.dirs.clone());
    let (containers, cluster) = (ctx.containers.clone(), ctx.cluster.clone());
    let found = super::blocking(move || {
        let mut found = gather(&*survey, &*sessions, &*containers, &dirs, repos)?;
        found.pods = pods(&*cluster, &dirs, &namespaces);
        found.claims = claims(&*cluster, &dirs, &namespaces);
        Ok(found)
    })
    .await?;
    let orphans = query(ctx, move |s| Ok(leftovers(s, &found))).await?;
    let (survey, sessions, containers) = (ctx.survey.clone(), ctx.sessions.clone(), ctx.containers.clone());
    let cluster = ctx.cluster.clone();
    let findings = super::blocking(move || {
        Ok(orphans
            .into_iter()
            .map(|orphan| {
                let fixed = (fix && orphan.keep.is_none())
                    .then(|| remove(&*survey, &*sessions, &*containers, &*cluster, &orphan));
                Finding { orphan, fixed }
            })
            .collect())
    })
    .await?;
    Ok(Response::Doctor { findings })
}

/// The namespaces of the pods bosun's records name.
fn known_namespaces(state: &State) -> BTreeSet<String> {
    state.agents.values().filter_map(|a| a.runtime.pod().map(|p| p.namespace.clone())).collect()
}

/// This daemon's pods in `namespaces`, and whether each one's work is saved. A cluster that
/// cannot be reached has none to show (and says why in the log).
fn pods(cluster: &dyn bosun_k8s::Cluster, dirs: &StateDir, namespaces: &BTreeSet<String>) -> Vec<bosun_core::FoundPod> {
    let selector = format!("{}={}", bosun_adapters::POD_STATE_LABEL, dirs.digest());
    let mut found = Vec::new();
    for namespace in namespaces {
        match cluster.pods(namespace, &selector) {
            Ok(pods) => found.extend(pods.into_iter().map(|p| {
                let ended = crate::pods::ended(&p);
                let saved = p.exit.map(|_| ended.and_then(|e| e.saved).is_some_and(|s| s.is_safe()));
                bosun_core::FoundPod { namespace: namespace.clone(), name: p.name, saved }
            })),
            Err(e) => tracing::warn!("doctor cannot list the pods of namespace {namespace}: {e}"),
        }
    }
    found
}

/// This daemon's claims in `namespaces`; none from a cluster that cannot be reached.
fn claims(
    cluster: &dyn bosun_k8s::Cluster,
    dirs: &StateDir,
    namespaces: &BTreeSet<String>,
) -> Vec<bosun_core::PodClaim> {
    let selector = format!("{}={}", bosun_adapters::POD_STATE_LABEL, dirs.digest());
    let mut found = Vec::new();
    for namespace in namespaces {
        match cluster.claims(namespace, &selector) {
            Ok(names) => {
                found.extend(names.into_iter().map(|name| bosun_core::PodClaim { namespace: namespace.clone(), name }))
            }
            Err(e) => tracing::warn!("doctor cannot list the claims of namespace {namespace}: {e}"),
        }
    }
    found
}

fn remove_pod(cluster: &dyn bosun_k8s::Cluster, namespace: &str, name: &str) -> Fixed {
    match cluster.delete_pod(namespace, name) {
        Ok(()) => Fixed::Removed,
        Err(e) => Fixed::Failed { error: e.to_string() },
    }
}

/// The repositories bosun's records name.
fn known_repos(state: &State) -> BTreeSet<PathBuf> {
    let workspaces = state.workspaces.values().map(|w| &w.kind);
    let jobs = state.jobs.values().filter_map(|j| j.spec.workspace.as_ref()).map(|w| &w.kind);
    let pools = state.pools.values().map(|p| p.repo.clone());
    workspaces.chain(jobs).filter_map(|k| k.repo().map(std::path::Path::to_path_buf)).chain(pools).collect()
}

fn gather(
    survey: &dyn Survey,
    sessions: &dyn Sessions,
    containers: &dyn Containers,
    dirs: &StateDir,
    mut repos: BTreeSet<PathBuf>,
) -> Result<Found, AdapterError> {
    let sessions = sessions.list()?.into_iter().map(|s| s.session).collect();
    let agent_dirs = survey.subdirs(&dirs.agents())?;
    let workspace_dirs: Vec<_> = survey.subdirs(&dirs.workspaces())?.iter().map(|d| survey.workspace_dir(d)).collect();
    repos.extend(workspace_dirs.iter().filter_map(|d| d.repo.clone()));
    let (mut worktrees, mut branches) = (Vec::new(), Vec::new());
    // A repository that is gone or unreadable has nothing of bosun's left to look at.
    for repo in repos.iter().filter(|r| r.is_dir()) {
        match (survey.worktrees(repo), survey.branches(repo)) {
            (Ok(w), Ok(b)) => {
                let root = dirs.workspaces();
                worktrees.extend(w.into_iter().filter(|w| w.path.starts_with(&root) || !w.missing));
                branches.extend(b);
            }
            (Err(e), _) | (_, Err(e)) => tracing::warn!(repo = %repo.display(), "doctor skips a repository: {e}"),
        }
    }
    // No engine (none installed, none running) has no containers or volumes of ours.
    let volumes = containers.volumes(bosun_adapters::STATE_LABEL, &dirs.label()).unwrap_or_default();
    let containers = containers
        .list(bosun_adapters::STATE_LABEL, &dirs.label())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|c| c.labels.get(bosun_adapters::SESSION_LABEL).map(|s| SessionName::from_reported(s)))
        .collect();
    Ok(Found {
        workspace_dirs,
        agent_dirs,
        sessions,
        worktrees,
        branches,
        containers,
        volumes,
        pods: Vec::new(),
        claims: Vec::new(),
    })
}

/// The commits only `name` holds, as the repository stands now.
fn own_commits(survey: &dyn Survey, repo: &std::path::Path, name: &str) -> Option<u32> {
    survey.branches(repo).ok()?.into_iter().find(|b| b.name == name)?.unique_commits
}

fn remove(
    survey: &dyn Survey,
    sessions: &dyn Sessions,
    containers: &dyn Containers,
    cluster: &dyn bosun_k8s::Cluster,
    orphan: &Orphan,
) -> Fixed {
    let result = match &orphan.leftover {
        Leftover::Pod { namespace, name } => return remove_pod(cluster, namespace, name),
        Leftover::Session { name } => sessions.kill(name),
        Leftover::Container { name } => containers.remove(name.as_str()),
        Leftover::Volume { name } => containers.remove_volume(name),
        Leftover::Claim { namespace, name } => {
            return match cluster.delete(bosun_k8s::Object::Claim, namespace, name) {
                Ok(()) => Fixed::Removed,
                Err(e) => Fixed::Failed { error: e.to_string() },
            }
        }
        Leftover::AgentDir { path } => survey.remove_dir(path),
        Leftover::Workspace { path, repo: Some(repo) } => survey.remove_worktree(repo, path),
        Leftover::Workspace { path, repo: None } => survey.remove_dir(path),
        Leftover::Registration { repo, path } => survey.forget(repo, path),
        Leftover::Branch { repo, name } => match own_commits(survey, repo, name) {
            // Counted again now: a branch that shared its commits with one just deleted holds
            // them alone.
            Some(0) => survey.delete_branch(repo, name),
            n => {
                let why = n.map_or("cannot tell whether it holds commits of its own".into(), |n| {
                    format!("kept: it now holds {n} commit(s) on no other branch, tag or remote")
                });
                return Fixed::Failed { error: why };
            }
        },
    };
    match result {
        Ok(()) => Fixed::Removed,
        Err(e) => Fixed::Failed { error: e.to_string() },
    }
}
