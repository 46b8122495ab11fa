//! Files copied into an agent's own places before it starts (its config, a fork's
//! conversation): never over what is there, never through a link.

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Copies files.
pub trait Copies: Send + Sync {
    /// Copies `from` to `to` (making `to`'s directory) unless something is at `to` already (a
    /// link too, which is never followed); `from` is read only when it is a regular file. The
    /// bytes copied (0 when `to` was there).
    fn copy_new(&self, from: &Path, to: &Path) -> std::io::Result<u64>;
}

/// Copies on the local file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalCopies;

impl Copies for LocalCopies {
    fn copy_new(&self, from: &Path, to: &Path) -> std::io::Result<u64> {
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir)?;
        }
        if std::fs::symlink_metadata(to).is_ok() {
            return Ok(0);
        }
        let source = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
            .open(from)?;
        if !source.metadata()?.is_file() {
            return Err(std::io::Error::other(format!("{} is not a regular file", from.display())));
        }
        let mut target = std::fs::OpenOptions::new().write(true).create_new(true).open(to)?;
        std::io::copy(&mut std::io::BufReader::new(source), &mut target)
    }
}
