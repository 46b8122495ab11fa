//! A folder of a client's project settings (opencode's `.opencode/`) copied from the repository
//! into an agent's workspace: listed when the agent starts (regular files git does not track,
//! none through a link, none of the packages a client installs there), copied once the
//! workspace is made, each where the workspace has nothing yet.

use std::fs;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

use bosun_core::SettingsFolder;

use super::git::{git, run};
use crate::AdapterError;

/// The most files listed, and the most bytes of one (a larger one is left out).
const FILES_MAX: usize = 500;
const FILE_BYTES_MAX: u64 = 1 << 20;
/// How deep below the folder a file may be.
const DEPTH_MAX: usize = 8;
/// What a client installs in its folder (opencode: its plugins' packages), never copied.
const INSTALLED: [&str; 4] = ["node_modules", "package-lock.json", "bun.lock", "bun.lockb"];

/// The folder `folder` of `root` (a repository's root, or any directory) to be copied into a
/// workspace's folder of that name: none when it is not a directory of its own (a link, say)
/// or holds nothing to copy.
pub fn list(root: &Path, folder: &str) -> Option<SettingsFolder> {
    let from = root.join(folder);
    if !fs::symlink_metadata(&from).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let mut files = Vec::new();
    walk(&from, Path::new(""), 0, &mut files);
    let tracked = tracked(root, folder);
    files.retain(|f| !tracked.contains(&Path::new(folder).join(f)));
    (!files.is_empty()).then(|| SettingsFolder { from, to: PathBuf::from(folder), files })
}

/// The regular files under `dir/rel`, by name, links and installed packages passed over.
fn walk(dir: &Path, rel: &Path, depth: usize, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir.join(rel)) else { return };
    let mut names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        if files.len() >= FILES_MAX || INSTALLED.iter().any(|i| name == *i) {
            continue;
        }
        let rel = rel.join(&name);
        let Ok(meta) = fs::symlink_metadata(dir.join(&rel)) else { continue };
        if meta.is_dir() && depth + 1 < DEPTH_MAX {
            walk(dir, &rel, depth + 1, files);
        } else if meta.is_file() && meta.len() <= FILE_BYTES_MAX {
            files.push(rel);
        }
    }
}

/// The files git tracks under `root/folder` (relative to `root`); none outside a repository.
fn tracked(root: &Path, folder: &str) -> Vec<PathBuf> {
    let mut cmd = git(root);
    cmd.args(["ls-files", "-z", "--full-name", "--", folder]);
    let Ok(out) = run(&mut cmd) else { return Vec::new() };
    let prefix = prefix(root);
    out.split('\0')
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(p.strip_prefix(prefix.as_str()).unwrap_or(p)))
        .collect()
}

/// Where `root` is in its repository (`git rev-parse --show-prefix`: "sub/dir/" or "").
fn prefix(root: &Path) -> String {
    let mut cmd = git(root);
    cmd.args(["rev-parse", "--show-prefix"]);
    run(&mut cmd).map(|s| s.trim().to_owned()).unwrap_or_default()
}

/// Copies the folder's files into the workspace at `dir`, each where nothing is yet and no
/// directory on its way is a link (a workspace's files are its agent's: bosun never writes
/// through one). What could not be copied is said, the others copied all the same.
pub fn copy(dir: &Path, folder: &SettingsFolder) -> Result<(), AdapterError> {
    let mut failed = Vec::new();
    for file in &folder.files {
        if file.components().any(|c| !matches!(c, std::path::Component::Normal(_))) {
            failed.push(format!("{}: not a plain relative path", file.display()));
            continue;
        }
        let (from, rel) = (folder.from.join(file), folder.to.join(file));
        if let Err(e) = copy_one(dir, &from, &rel) {
            failed.push(format!("{}: {e}", rel.display()));
        }
    }
    if failed.is_empty() {
        return Ok(());
    }
    let e = io::Error::other(failed.join("; "));
    Err(AdapterError::io(format!("copying {} into {}", folder.from.display(), dir.display()), e))
}

fn copy_one(dir: &Path, from: &Path, rel: &Path) -> io::Result<()> {
    let to = dir.join(rel);
    if !super::no_link_within(dir, rel) {
        return Err(io::Error::other("a link leads out of the workspace there"));
    }
    if fs::symlink_metadata(&to).is_ok() {
        return Ok(());
    }
    // The source read as a file of its own, never through a link put there since it was listed.
    if !fs::symlink_metadata(from)?.is_file() {
        return Err(io::Error::other("no longer a file"));
    }
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent)?;
        if !super::no_link_within(dir, rel) {
            return Err(io::Error::other("a link leads out of the workspace there"));
        }
    }
    let mut target = fs::OpenOptions::new().write(true).create_new(true).open(&to)?;
    let mut source = fs::File::open(from)?.take(FILE_BYTES_MAX);
    io::copy(&mut source, &mut target).map(drop)
}
