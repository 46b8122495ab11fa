//! Files that hold what must not reach the event log: an agent's inherited environment. They
//! are written whole (a temporary file renamed into place), readable by their owner only (0600,
//! in a 0700 directory), and read back bounded.

use std::collections::BTreeMap;
use std::fs::{DirBuilder, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

use crate::AdapterError;

/// The largest environment file read back: far more than any environment a process can have.
const MOST: u64 = 8 * 1024 * 1024;

/// Writes `vars` to `path` as JSON, its directory made 0700 and the file 0600.
pub fn write_env(path: &Path, vars: &BTreeMap<String, String>) -> Result<(), AdapterError> {
    let io = |what: &str, e| AdapterError::io(format!("cannot {what} {}", path.display()), e);
    if let Some(dir) = path.parent() {
        DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|e| io("make the directory of", e))?;
    }
    let text = serde_json::to_vec(vars).map_err(|e| io("encode", std::io::Error::other(e)))?;
    let partial = path.with_extension("partial");
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&partial)
        .map_err(|e| io("write", e))?;
    file.write_all(&text).and_then(|()| file.sync_all()).map_err(|e| io("write", e))?;
    std::fs::rename(&partial, path).map_err(|e| io("write", e))
}

/// The variables `write_env` wrote to `path`.
pub fn read_env(path: &Path) -> Result<BTreeMap<String, String>, AdapterError> {
    let io = |e| AdapterError::io(format!("cannot read the inherited environment {}", path.display()), e);
    let mut text = Vec::new();
    std::fs::File::open(path).and_then(|f| f.take(MOST + 1).read_to_end(&mut text)).map_err(io)?;
    if text.len() as u64 > MOST {
        return Err(io(std::io::Error::other(format!("it is larger than {MOST} bytes"))));
    }
    serde_json::from_slice(&text).map_err(|e| io(std::io::Error::other(e)))
}

/// Removes `path`; one already gone is fine.
pub fn forget(path: &Path) -> Result<(), AdapterError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(AdapterError::io(format!("cannot remove {}", path.display()), e))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn an_environment_reads_back_and_only_its_owner_can_read_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent/inherited-env.json");
        let vars = BTreeMap::from([("API_KEY".to_owned(), "s3cret".to_owned())]);
        write_env(&path, &vars).unwrap();
        assert_eq!(read_env(&path).unwrap(), vars);
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
        forget(&path).unwrap();
        assert!(!path.exists());
        forget(&path).unwrap();
    }

    #[test]
    fn a_damaged_or_huge_file_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{not json").unwrap();
        assert!(read_env(&bad).is_err());
        let huge = dir.path().join("huge.json");
        std::fs::write(&huge, vec![b' '; (MOST + 10) as usize]).unwrap();
        assert!(read_env(&huge).unwrap_err().to_string().contains("larger than"));
    }
}
