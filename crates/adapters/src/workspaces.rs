//! `LocalWorkspaces`: workspaces on the local disk, routed by `WorkspaceKind` to one backend
//! each — plain directories (`folder`), git worktrees (`worktree`) and tasks bound to pools'
//! slots (`slot`; the slots themselves are `pool`) — made and removed by running `git` as a
//! subprocess (`git`, which also answers the `Git` questions as `LocalGit`). It carries out
//! what the core asked and reports what git said; it decides nothing.

pub(crate) mod bundle;
mod diff;
mod folder;
mod git;
mod local_git;
mod merge;
mod pod;
mod pool;
pub mod settings_folder;
mod slot;
mod survey;
mod volume;
mod worktree;

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use bosun_core::WorkspaceKind;

use crate::{AdapterError, WorkspaceBackend, Workspaces};
use folder::FolderBackend;
pub use git::{command as git_command, git as git_in, DEFUSED as GIT_DEFUSED};
use git::{git, run};
pub use local_git::LocalGit;
use pod::PodBackend;
use slot::SlotBackend;
pub use survey::LocalSurvey;
use volume::VolumeBackend;
use worktree::WorktreeBackend;

/// Workspaces on the local disk, made with the `git` found on `PATH`: one backend per kind, and
/// the pools' slots (`Pools`).
#[derive(Debug)]
pub struct LocalWorkspaces {
    folder: FolderBackend,
    worktree: WorktreeBackend,
    slot: SlotBackend,
    volume: VolumeBackend,
    pod: PodBackend,
    /// The locks the worktree and slot backends take, taken by the pools' slots too.
    repo_locks: Arc<RepoLocks>,
}

impl Default for LocalWorkspaces {
    fn default() -> Self {
        Self::new()
    }
}

impl LocalWorkspaces {
    pub fn new() -> Self {
        let repo_locks = Arc::<RepoLocks>::default();
        Self {
            folder: FolderBackend,
            worktree: WorktreeBackend::new(repo_locks.clone()),
            slot: SlotBackend::new(repo_locks.clone()),
            volume: VolumeBackend::new(repo_locks.clone()),
            pod: PodBackend::default(),
            repo_locks,
        }
    }

    /// The same, keeping volume workspaces on `engine`, their volumes labelled with `state`.
    pub fn with_containers(mut self, engine: Arc<dyn crate::Containers>, state: String) -> Self {
        self.volume.set_engine(engine, state);
        self
    }

    /// The same, deleting the claims of pod workspaces on `cluster`.
    pub fn with_cluster(mut self, cluster: Arc<dyn bosun_k8s::Cluster>) -> Self {
        self.pod = PodBackend::new(cluster);
        self
    }

    /// The backend of `kind`'s workspaces, given its own kind's record: the one place a
    /// `WorkspaceKind` is routed.
    fn backend<'a>(&'a self, kind: &'a WorkspaceKind) -> Box<dyn Bound + 'a> {
        match kind {
            WorkspaceKind::Folder => Box::new(With(&self.folder, &())),
            WorkspaceKind::Worktree(git) => Box::new(With(&self.worktree, git)),
            WorkspaceKind::Pool(task) => Box::new(With(&self.slot, task)),
            WorkspaceKind::Volume(clone) => Box::new(With(&self.volume, clone)),
            WorkspaceKind::Pod(clone) => Box::new(With(&self.pod, clone)),
        }
    }
}

/// A backend with the record of one workspace of its kind.
struct With<'a, B: WorkspaceBackend>(&'a B, &'a B::Kind);

/// A workspace's backend, bound to its record: what `Workspaces` asks of it.
trait Bound {
    fn create(&self, path: &Path, settings_from: Option<&Path>, resume: bool) -> Result<(), AdapterError>;
    fn is_dirty(&self, path: &Path, owned: &[PathBuf]) -> Result<bool, AdapterError>;
    fn remove(&self, path: &Path, force: bool, delete_branch: bool, owned: &[PathBuf]) -> Result<(), AdapterError>;
    fn snapshot(&self, path: &Path, owned: &[PathBuf], message: &str) -> Result<String, AdapterError>;
}

impl<B: WorkspaceBackend> Bound for With<'_, B> {
    fn create(&self, path: &Path, settings_from: Option<&Path>, resume: bool) -> Result<(), AdapterError> {
        self.0.create(path, self.1, settings_from, resume)
    }
    fn is_dirty(&self, path: &Path, owned: &[PathBuf]) -> Result<bool, AdapterError> {
        self.0.is_dirty(path, self.1, owned)
    }
    fn remove(&self, path: &Path, force: bool, delete_branch: bool, owned: &[PathBuf]) -> Result<(), AdapterError> {
        self.0.remove(path, self.1, force, delete_branch, owned)
    }
    fn snapshot(&self, path: &Path, owned: &[PathBuf], message: &str) -> Result<String, AdapterError> {
        self.0.snapshot(path, self.1, owned, message)
    }
}

/// One lock per repository: concurrent `git worktree add` in one repository race on its
/// administrative files (`failed to read .git/worktrees/<x>/commondir`), so worktree changes in
/// a repository are made one at a time.
#[derive(Debug, Default)]
pub(crate) struct RepoLocks(Mutex<BTreeMap<PathBuf, Arc<Mutex<()>>>>);

impl RepoLocks {
    /// Runs `f` while holding `repo`'s lock.
    fn serialized<T>(&self, repo: &Path, f: impl FnOnce() -> T) -> T {
        let lock = {
            let mut locks = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            locks.entry(repo.to_path_buf()).or_default().clone()
        };
        let _held = lock.lock().unwrap_or_else(PoisonError::into_inner);
        f()
    }
}

impl Workspaces for LocalWorkspaces {
    fn create(
        &self,
        path: &Path,
        kind: &WorkspaceKind,
        settings_from: Option<&Path>,
        resume: bool,
    ) -> Result<(), AdapterError> {
        self.backend(kind).create(path, settings_from, resume)
    }

    fn is_dirty(&self, path: &Path, kind: &WorkspaceKind, owned: &[PathBuf]) -> Result<bool, AdapterError> {
        self.backend(kind).is_dirty(path, owned)
    }

    fn remove(
        &self,
        path: &Path,
        kind: &WorkspaceKind,
        force: bool,
        delete_branch: bool,
        owned: &[PathBuf],
    ) -> Result<(), AdapterError> {
        self.backend(kind).remove(path, force, delete_branch, owned)
    }

    fn snapshot(
        &self,
        path: &Path,
        kind: &WorkspaceKind,
        owned: &[PathBuf],
        message: &str,
    ) -> Result<String, AdapterError> {
        self.backend(kind).snapshot(path, owned, message)
    }
}

/// Copies an agent's repository settings `from` into `dir`, where its client reads them
/// (`driver::settings_copy_to`).
fn copy_settings(dir: &Path, from: Option<&Path>) -> Result<(), AdapterError> {
    let Some(from) = from else { return Ok(()) };
    let rel = &bosun_core::driver::settings_copy_to(from);
    let to = dir.join(rel);
    if let Some(parent) = to.parent() {
        create_dir_all(parent)?;
    }
    let copy = || -> io::Result<()> {
        if !no_link_within(dir, rel) {
            return Err(io::Error::other("a link leads out of the workspace there"));
        }
        match fs::remove_file(&to) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let mut target = fs::OpenOptions::new().write(true).create_new(true).open(&to)?;
        io::copy(&mut fs::File::open(from)?, &mut target).map(drop)
    };
    copy().map_err(|e| AdapterError::io(format!("copying {} to {}", from.display(), to.display()), e))
}

/// Whether no directory between `root` and `root/rel` is a link: a path in a workspace its agent
/// may have made lead elsewhere, which bosun must not write or remove through.
pub(super) fn no_link_within(root: &Path, rel: &Path) -> bool {
    rel.ancestors()
        .skip(1)
        .filter(|d| !d.as_os_str().is_empty())
        .all(|d| fs::symlink_metadata(root.join(d)).map_or(true, |m| !m.file_type().is_symlink()))
}

/// The first steps of a removal: refuses one with changes unless `force` (before touching
/// anything, so a refused workspace is left exactly as it was), then deletes the `owned` files.
fn clear_owned<B: WorkspaceBackend>(
    backend: &B,
    path: &Path,
    kind: &B::Kind,
    force: bool,
    owned: &[PathBuf],
) -> Result<(), AdapterError> {
    if !force && backend.is_dirty(path, kind, owned)? {
        return Err(AdapterError::Dirty(path.to_path_buf()));
    }
    if exists(path)? {
        remove_owned(path, owned)?;
    }
    Ok(())
}

/// Whether `git status` in the worktree at `path` shows modified or untracked files besides
/// `owned`; a missing directory is clean.
fn status_dirty(path: &Path, owned: &[PathBuf]) -> Result<bool, AdapterError> {
    if !exists(path)? {
        return Ok(false);
    }
    let mut cmd = git(path);
    cmd.args(["status", "--porcelain=v1", "--untracked-files=all", "-z"]);
    let out = run(&mut cmd)?;
    let dirty = status_paths(&out).any(|p| !owned.iter().any(|o| o == Path::new(p)));
    Ok(dirty)
}

/// Deletes the `owned` files, and the directories between them and `path` they leave empty; one
/// its agent put behind a link is not bosun's any more, and stays where the link leads.
fn remove_owned(path: &Path, owned: &[PathBuf]) -> Result<(), AdapterError> {
    use io::ErrorKind::{DirectoryNotEmpty, NotFound};
    for file in owned {
        if !no_link_within(path, file) {
            continue;
        }
        let full = path.join(file);
        removed(fs::remove_file(&full), &[NotFound], &full)?;
        let dirs = file.ancestors().skip(1).filter(|d| !d.as_os_str().is_empty());
        for dir in dirs {
            let full = path.join(dir);
            if !removed(fs::remove_dir(&full), &[NotFound, DirectoryNotEmpty], &full)? {
                break;
            }
        }
    }
    Ok(())
}

/// Whether removing `what` did remove it; the error kinds in `fine` count as "it stays".
fn removed(result: io::Result<()>, fine: &[io::ErrorKind], what: &Path) -> Result<bool, AdapterError> {
    match result {
        Ok(()) => Ok(true),
        Err(e) if fine.contains(&e.kind()) => Ok(false),
        Err(e) => Err(AdapterError::io(format!("removing {}", what.display()), e)),
    }
}

/// Whether the directory `root/rel` holds anything besides the `owned` files and the
/// directories that lead to them.
fn folder_has_content(root: &Path, rel: &Path, owned: &[PathBuf]) -> Result<bool, AdapterError> {
    let dir = root.join(rel);
    let entries = fs::read_dir(&dir).map_err(|e| AdapterError::io(format!("reading {}", dir.display()), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| AdapterError::io(format!("reading {}", dir.display()), e))?;
        let name = rel.join(entry.file_name());
        let is_dir =
            entry.file_type().map_err(|e| AdapterError::io(format!("reading {}", entry.path().display()), e))?.is_dir();
        let holds_owned = owned.iter().any(|o| o.starts_with(&name) && o != &name);
        let clean =
            if is_dir { holds_owned && !folder_has_content(root, &name, owned)? } else { owned.contains(&name) };
        if !clean {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The paths in `git status --porcelain=v1 -z` output; a rename's source path is skipped.
fn status_paths(out: &str) -> impl Iterator<Item = &str> {
    let mut fields = out.split('\0').filter(|f| !f.is_empty());
    std::iter::from_fn(move || {
        let entry = fields.next()?;
        let (status, path) = (entry.get(..2).unwrap_or(""), entry.get(3..).unwrap_or(""));
        if status.starts_with(['R', 'C']) {
            fields.next();
        }
        Some(path)
    })
}

fn exists(path: &Path) -> Result<bool, AdapterError> {
    path.try_exists().map_err(|e| AdapterError::io(format!("looking at {}", path.display()), e))
}

fn create_dir_all(dir: &Path) -> Result<(), AdapterError> {
    fs::create_dir_all(dir).map_err(|e| AdapterError::io(format!("creating {}", dir.display()), e))
}

fn canonical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}
