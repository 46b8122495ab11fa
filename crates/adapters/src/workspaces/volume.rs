//! `VolumeBackend`: a workspace that is a clone kept in a volume of the container engine. It is
//! made by creating its branch in the repository, cloning that branch next to where the
//! workspace would be, and unpacking the clone into the volume; the clone here is then deleted.
//! Whenever it is looked at (its agent ended) or removed, the volume is read back into a copy
//! here, its branch fetched into the repository (fast-forward only), and the copy's `git status`
//! says whether it holds uncommitted work. The volume is removed only after that, and never
//! while it holds uncommitted work unless forced.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::git::{branch_exists, git, output, run};
use super::{copy_settings, create_dir_all, status_dirty, RepoLocks};
use crate::{AdapterError, Containers, WorkspaceBackend};
use bosun_core::{VolumeClone, WorkBranch};

/// The most archive a volume is read back as: beyond it, its work is not brought back (and the
/// volume is kept).
pub const READ_MAX: u64 = 8 << 30;
/// The label naming the workspace a volume holds.
pub const WORKSPACE_LABEL: &str = "bosun.workspace";

/// Workspaces of `WorkspaceKind::Volume`.
pub struct VolumeBackend {
    repo_locks: Arc<RepoLocks>,
    /// Held from a volume's read-back to its copy's removal: two looks at one volume at once
    /// (a diff while its agent's end is inspected) would clear each other's copy.
    copies: RepoLocks,
    /// The engine and the value of the `bosun.state` label its volumes get.
    engine: Option<(Arc<dyn Containers>, String)>,
}

impl std::fmt::Debug for VolumeBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VolumeBackend").field("engine", &self.engine.as_ref().map(|(_, s)| s)).finish()
    }
}

/// The fields of a volume workspace.
struct Fields<'k> {
    repo: &'k Path,
    branch: &'k str,
    base: &'k str,
    volume: &'k str,
    image: &'k str,
}

impl<'k> Fields<'k> {
    fn of(kind: &'k VolumeClone) -> Self {
        let VolumeClone { git: WorkBranch { repo, branch, base, .. }, volume, image } = kind;
        Self { repo, branch, base, volume, image }
    }
}

impl VolumeBackend {
    pub(crate) fn new(repo_locks: Arc<RepoLocks>) -> Self {
        Self { repo_locks, copies: RepoLocks::default(), engine: None }
    }

    pub(crate) fn set_engine(&mut self, engine: Arc<dyn Containers>, state: String) {
        self.engine = Some((engine, state));
    }

    fn engine(&self) -> Result<&(Arc<dyn Containers>, String), AdapterError> {
        self.engine.as_ref().ok_or_else(|| AdapterError::Command {
            command: "a volume workspace".into(),
            stderr: "this daemon has no container engine".into(),
        })
    }

    /// Reads the volume back into a fresh copy beside `path`, fetches its branch into the
    /// repository, and gives `look` the copy's directory (None when the volume is gone); the
    /// copy is removed after, one look at a time. An error of the look or the read-back is the
    /// one told, not the removal's.
    fn with_copy<T>(
        &self,
        path: &Path,
        f: &Fields<'_>,
        look: impl FnOnce(Option<&Path>) -> Result<T, AdapterError>,
    ) -> Result<T, AdapterError> {
        let staging = staging(path);
        self.copies.serialized(&staging, || {
            let looked = self.read_back(path, f).and_then(|copy| look(copy.as_deref()));
            let cleared = clear(&staging);
            looked.and_then(|found| cleared.map(|()| found))
        })
    }

    /// Reads the volume back into a fresh copy beside `path` and fetches its branch into the
    /// repository; the copy's directory, or None when the volume is gone.
    fn read_back(&self, path: &Path, f: &Fields<'_>) -> Result<Option<PathBuf>, AdapterError> {
        let (engine, _) = self.engine()?;
        let staging = staging(path);
        clear(&staging)?;
        create_dir_all(&staging)?;
        let archive = staging.join("volume.tar");
        if !engine.read_volume(f.volume, f.image, &archive, READ_MAX)? {
            return Ok(None);
        }
        let copy = staging.join("copy");
        unpack(&archive, &copy)?;
        let _ = fs::remove_file(&archive);
        // The archive holds the volume under one top directory (the mount's name).
        let top = fs::read_dir(&copy)
            .map_err(|e| AdapterError::io(format!("reading {}", copy.display()), e))?
            .flatten()
            .find(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .ok_or_else(|| AdapterError::Docker(format!("volume {} read back empty", f.volume)))?;
        defuse(&top)?;
        self.repo_locks.serialized(f.repo, || fetch(f.repo, &top, f.branch)).map_err(|e| AdapterError::Command {
            command: format!("bring the commits of volume {} back to branch {}", f.volume, f.branch),
            stderr: format!("{e}; the volume is kept, and its work with it"),
        })?;
        Ok(Some(top))
    }
}

impl WorkspaceBackend for VolumeBackend {
    type Kind = VolumeClone;
    const LABEL: &'static str = "volume";

    fn create(
        &self,
        path: &Path,
        kind: &VolumeClone,
        settings_from: Option<&Path>,
        _resume: bool,
    ) -> Result<(), AdapterError> {
        let f = Fields::of(kind);
        let (engine, state) = self.engine()?;
        self.repo_locks.serialized(f.repo, || {
            if branch_exists(f.repo, f.branch)? {
                return Ok(());
            }
            let mut cmd = git(f.repo);
            cmd.args(["branch", "--no-track", f.branch, f.base]);
            run(&mut cmd).map(drop)
        })?;
        let staging = staging(path);
        clear(&staging)?;
        let clone = staging.join("clone");
        if let Some(parent) = clone.parent() {
            create_dir_all(parent)?;
        }
        let mut cmd = git(f.repo);
        cmd.args(["clone", "--quiet", "--no-hardlinks", "--branch", f.branch, "--"]).arg(f.repo).arg(&clone);
        run(&mut cmd)?;
        copy_settings(&clone, settings_from)?;
        let tar = pack(&clone)?;
        let labels = BTreeMap::from([
            (crate::host::STATE_LABEL.to_owned(), state.clone()),
            (
                WORKSPACE_LABEL.to_owned(),
                path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            ),
        ]);
        let filled = engine.create_volume(f.volume, &labels).and_then(|()| engine.fill_volume(f.volume, f.image, tar));
        clear(&staging)?;
        filled
    }

    fn is_dirty(&self, path: &Path, kind: &VolumeClone, owned: &[PathBuf]) -> Result<bool, AdapterError> {
        let f = Fields::of(kind);
        self.with_copy(path, &f, |copy| copy.map_or(Ok(false), |copy| status_dirty(copy, owned)))
    }

    /// Its branch brought back, and the files of the copy read back laid on it in the
    /// repository (the copy's own git directory is neither read for a setting nor written).
    fn snapshot(
        &self,
        path: &Path,
        kind: &VolumeClone,
        owned: &[PathBuf],
        message: &str,
    ) -> Result<String, AdapterError> {
        let f = Fields::of(kind);
        let tip = format!("refs/heads/{}", f.branch);
        self.with_copy(path, &f, |copy| match copy {
            Some(copy) => super::diff::snapshot_elsewhere(f.repo, copy, &tip, owned, message),
            None => Err(AdapterError::Docker(format!("volume {} is gone: nothing to take a snapshot of", f.volume))),
        })
    }

    fn remove(
        &self,
        path: &Path,
        kind: &VolumeClone,
        force: bool,
        delete_branch: bool,
        owned: &[PathBuf],
    ) -> Result<(), AdapterError> {
        let f = Fields::of(kind);
        let (engine, _) = self.engine()?;
        // Its last commits come back first, whatever happens next (looking at it brings them).
        // Commits that could not be brought back are never discarded, even forced: the person
        // removes the volume by hand when its work is not wanted.
        if self.is_dirty(path, kind, owned)? && !force {
            return Err(AdapterError::Dirty(path.to_path_buf()));
        }
        engine.remove_volume(f.volume)?;
        if delete_branch {
            super::git::delete_branch(f.repo, f.branch)?;
        }
        Ok(())
    }
}

/// Where a workspace at `path` is cloned before it goes into its volume, and read back after.
fn staging(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".volume");
    path.with_file_name(name)
}

fn clear(dir: &Path) -> Result<(), AdapterError> {
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(AdapterError::io(format!("removing {}", dir.display()), e)),
    }
}

/// A tar archive of the directory `dir`'s content, owners and modes as they are.
fn pack(dir: &Path) -> Result<Vec<u8>, AdapterError> {
    let mut builder = tar::Builder::new(Vec::new());
    builder.follow_symlinks(false);
    builder
        .append_dir_all(".", dir)
        .and_then(|()| builder.into_inner())
        .map_err(|e| AdapterError::io(format!("packing {}", dir.display()), e))
}

/// Unpacks the archive at `archive` into `into`. What the volume holds is the agent's: an entry
/// whose path is absolute or climbs out with `..` is refused, and nothing is written through a
/// link (the tar crate's `unpack_in` checks each entry's place); devices and fifos are skipped.
fn unpack(archive: &Path, into: &Path) -> Result<(), AdapterError> {
    create_dir_all(into)?;
    let bad = |e: std::io::Error| AdapterError::io(format!("unpacking {}", archive.display()), e);
    let file = fs::File::open(archive).map_err(bad)?;
    let mut tar = tar::Archive::new(file);
    tar.set_preserve_permissions(false);
    tar.set_overwrite(true);
    for entry in tar.entries().map_err(bad)? {
        let mut entry = entry.map_err(bad)?;
        let kind = entry.header().entry_type();
        if !(kind.is_file() || kind.is_dir() || kind.is_symlink()) {
            continue;
        }
        let name = entry.path().map_err(bad)?.into_owned();
        if name.components().any(|c| matches!(c, Component::ParentDir | Component::RootDir | Component::Prefix(_))) {
            return Err(AdapterError::Docker(format!("the volume's archive names {} outside it", name.display())));
        }
        if !entry.unpack_in(into).map_err(bad)? {
            return Err(AdapterError::Docker(format!("the volume's archive names {} outside it", name.display())));
        }
    }
    Ok(())
}

/// Makes the copy read back from a volume safe for `git` to run in here: its `.git` must be a
/// directory of its own, and its config, which the agent could have written, is replaced by one
/// that names only the repository's format (an agent's `core.fsmonitor`, `core.worktree`,
/// filters or includes would otherwise run commands or reach files on this machine); pointers
/// to other object stores and git directories are dropped.
fn defuse(copy: &Path) -> Result<(), AdapterError> {
    let dot_git = copy.join(".git");
    let is_dir = fs::symlink_metadata(&dot_git).is_ok_and(|m| m.is_dir());
    if !is_dir {
        return Err(AdapterError::Docker(format!("the volume's {} is not a git directory", dot_git.display())));
    }
    let config = dot_git.join("config");
    let mut read = super::git::command();
    read.args(["config", "--file"]).arg(&config).args(["--get", "extensions.objectformat"]);
    let format = output(&mut read)
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .filter(|f| f == "sha256");
    let text = match format {
        Some(f) => {
            format!("[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tobjectformat = {f}\n")
        }
        None => "[core]\n\trepositoryformatversion = 0\n\tbare = false\n".to_owned(),
    };
    for leftover in ["commondir", "gitdir", "objects/info/alternates", "objects/info/http-alternates"] {
        let p = dot_git.join(leftover);
        if fs::symlink_metadata(&p).is_ok() {
            fs::remove_file(&p).map_err(|e| AdapterError::io(format!("removing {}", p.display()), e))?;
        }
    }
    let _ = fs::remove_file(&config);
    fs::write(&config, text).map_err(|e| AdapterError::io(format!("writing {}", config.display()), e))
}

/// Fetches `branch` from the clone at `copy` into `repo`'s branch of that name, fast-forward only
/// (a branch moved here meanwhile is never overwritten).
fn fetch(repo: &Path, copy: &Path, branch: &str) -> Result<(), AdapterError> {
    let mut cmd = git(repo);
    let refspec = format!("refs/heads/{branch}:refs/heads/{branch}");
    cmd.args(["fetch", "--no-tags", "--"]).arg(copy).arg(refspec);
    run(&mut cmd).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tar archive of `entries` (path, link target or contents), written raw: a hostile
    /// volume's archive need not be one a tar tool would make.
    fn archive(dir: &Path, entries: &[(&str, Result<&str, &str>)]) -> PathBuf {
        let mut b = tar::Builder::new(Vec::new());
        for (path, what) in entries {
            let mut h = tar::Header::new_gnu();
            let name = path.as_bytes();
            h.as_old_mut().name[..name.len()].copy_from_slice(name);
            match what {
                Ok(contents) => {
                    h.set_entry_type(tar::EntryType::Regular);
                    h.set_size(contents.len() as u64);
                    h.set_mode(0o644);
                    h.set_cksum();
                    b.append(&h, contents.as_bytes()).unwrap();
                }
                Err(target) => {
                    h.set_entry_type(tar::EntryType::Symlink);
                    h.set_size(0);
                    h.set_mode(0o777);
                    h.set_link_name(target).unwrap();
                    h.set_cksum();
                    b.append(&h, std::io::empty()).unwrap();
                }
            }
        }
        let path = dir.join("a.tar");
        fs::write(&path, b.into_inner().unwrap()).unwrap();
        path
    }

    #[test]
    fn an_archive_that_climbs_out_or_writes_through_a_link_writes_nothing_outside() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        fs::create_dir(&outside).unwrap();
        let into = dir.path().join("copy");

        let climbing = archive(dir.path(), &[("v/ok", Ok("fine")), ("v/../../outside/x", Ok("escaped"))]);
        assert!(unpack(&climbing, &into).is_err(), "a path with .. is refused");
        let linked =
            archive(dir.path(), &[("v/link", Err(outside.to_str().unwrap())), ("v/link/y", Ok("through the link"))]);
        let _ = fs::remove_dir_all(&into);
        assert!(unpack(&linked, &into).is_err(), "a path through a link is refused");
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0, "nothing was written outside");
        assert!(fs::symlink_metadata(into.join("v/link")).unwrap().file_type().is_symlink(), "a link stays a link");
    }

    #[test]
    fn a_copy_whose_config_would_run_commands_is_given_a_plain_one() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join(".git");
        fs::create_dir_all(git.join("objects/info")).unwrap();
        fs::write(git.join("config"), "[core]\n\tfsmonitor = touch /tmp/x\n\tworktree = /etc\n").unwrap();
        fs::write(git.join("objects/info/alternates"), "/somewhere/else/objects\n").unwrap();
        fs::write(git.join("commondir"), "/etc\n").unwrap();
        defuse(dir.path()).unwrap();
        let config = fs::read_to_string(git.join("config")).unwrap();
        assert!(!config.contains("fsmonitor") && !config.contains("worktree"), "{config}");
        assert!(!git.join("objects/info/alternates").exists() && !git.join("commondir").exists());

        let file = tempfile::tempdir().unwrap();
        fs::write(file.path().join(".git"), "gitdir: /etc\n").unwrap();
        assert!(defuse(file.path()).is_err(), "a .git that is a file pointing elsewhere is refused");
    }
}
