//! `FolderBackend`: a workspace that is a plain directory, made empty and dirty when it holds
//! anything.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::{clear_owned, copy_settings, create_dir_all, exists, folder_has_content, removed};
use crate::{AdapterError, WorkspaceBackend};

/// Workspaces of `WorkspaceKind::Folder`.
#[derive(Debug, Default, Clone, Copy)]
pub struct FolderBackend;

impl WorkspaceBackend for FolderBackend {
    type Kind = ();
    const LABEL: &'static str = "folder";

    fn create(&self, path: &Path, _kind: &(), settings_from: Option<&Path>, _resume: bool) -> Result<(), AdapterError> {
        create_dir_all(path)?;
        copy_settings(path, settings_from)
    }

    fn is_dirty(&self, path: &Path, _kind: &(), owned: &[PathBuf]) -> Result<bool, AdapterError> {
        if !exists(path)? {
            return Ok(false);
        }
        folder_has_content(path, Path::new(""), owned)
    }

    fn remove(
        &self,
        path: &Path,
        kind: &(),
        force: bool,
        _delete_branch: bool,
        owned: &[PathBuf],
    ) -> Result<(), AdapterError> {
        clear_owned(self, path, kind, force, owned)?;
        remove_folder(path, force)
    }
}

fn remove_folder(path: &Path, force: bool) -> Result<(), AdapterError> {
    if force {
        return removed(fs::remove_dir_all(path), &[io::ErrorKind::NotFound], path).map(drop);
    }
    match fs::remove_dir(path) {
        Err(e) if e.kind() == io::ErrorKind::DirectoryNotEmpty => Err(AdapterError::Dirty(path.to_path_buf())),
        result => removed(result, &[io::ErrorKind::NotFound], path).map(drop),
    }
}
