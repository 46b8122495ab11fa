//! Small files only this user may read: the token a TCP host checks and the address it bound.
//! Written whole (a temporary file renamed into place, mode 0600); read back only when they are
//! regular files of this user that no one else may read, and only up to a bound.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use crate::HostError;

/// Writes `bytes` to `path` with mode 0600, atomically: a reader sees all of it or nothing.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), HostError> {
    let io = |e| HostError::io(format!("cannot write {}", path.display()), e);
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = std::path::PathBuf::from(partial);
    let _ = std::fs::remove_file(&partial);
    let mut file = OpenOptions::new().write(true).create_new(true).mode(0o600).open(&partial).map_err(io)?;
    file.write_all(bytes).and_then(|()| file.sync_all()).map_err(io)?;
    std::fs::rename(&partial, path).map_err(io)
}

/// The bytes of `path`, at most `most`, refused unless it is a regular file (not a link) owned
/// by this process's user and neither group nor others may read or write it.
pub fn read(path: &Path, most: u64) -> Result<Vec<u8>, HostError> {
    let bad = |why: String| HostError::Unsafe { path: path.to_owned(), why };
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| HostError::io(format!("cannot read {}", path.display()), e))?;
    // The file opened, not whatever the path names a moment later.
    let meta = file.metadata().map_err(|e| HostError::io(format!("cannot read {}", path.display()), e))?;
    if !meta.file_type().is_file() {
        return Err(bad("it is not a regular file".into()));
    }
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(bad(format!("it is owned by uid {}, not this user's uid {me}", meta.uid())));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(bad(format!("its mode is {:o}: others may read it (make it 0600)", meta.mode() & 0o777)));
    }
    let mut bytes = Vec::new();
    file.take(most + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| HostError::io(format!("cannot read {}", path.display()), e))?;
    if bytes.len() as u64 > most {
        return Err(bad(format!("it is larger than {most} bytes")));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_private_file_reads_back_and_is_0600() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        write(&path, b"one").unwrap();
        write(&path, b"two").unwrap();
        assert_eq!(read(&path, 10).unwrap(), b"two");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(!dir.path().join("f.partial").exists());
    }

    #[test]
    fn an_open_a_linked_or_a_huge_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        write(&path, b"secret").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        let err = read(&path, 10).unwrap_err().to_string();
        assert!(err.contains("640") && err.contains("0600"), "{err}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(read(&path, 3).unwrap_err().to_string().contains("larger"));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(read(&link, 10).is_err(), "a link is not followed");
        assert!(read(dir.path(), 10).is_err(), "a directory is no file");
    }
}
