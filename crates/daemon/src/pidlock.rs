//! `daemon.pid`: held under an exclusive lock for the daemon's whole life, so one state
//! directory has at most one daemon, and a crashed daemon's lock is released by the kernel.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;

pub struct PidLock {
    _file: File,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("a bosun daemon (pid {pid}) already runs for this state directory: use it, or `bosun daemon stop` first")]
    Held { pid: String },
    #[error("cannot lock {path}: {source}")]
    Io { path: String, source: std::io::Error },
}

impl PidLock {
    pub fn acquire(path: &Path) -> Result<Self, LockError> {
        let io = |source| LockError::Io { path: path.display().to_string(), source };
        let mut file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                return Err(LockError::Held { pid: pid.trim().to_owned() });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        writeln!(file, "{}", std::process::id()).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(Self { _file: file })
    }
}
