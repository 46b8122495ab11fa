//! An agent's `output.log`, kept to a size: what tmux's `pipe-pane` (or the session host) hands
//! over is appended, and when the file would grow past its limit it becomes `output.log.1`
//! (replacing the one before) and a new file is started. The log watcher sees the new file
//! (another inode) and reads it from its start.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The limit when none is given: 8 MiB now and 8 MiB before.
pub const OUTPUT_LOG_MAX: u64 = 8 * 1024 * 1024;

/// Copies `input` to the end of `path` until it ends, rotating at `max` bytes.
pub fn append_rotating(mut input: impl Read, path: &Path, max: u64) -> io::Result<()> {
    let mut log = RotatingLog::open(path, max)?;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match input.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => log.write(&buf[..n])?,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

/// A log file appended to and rotated at its limit.
pub struct RotatingLog {
    path: PathBuf,
    max: u64,
    file: File,
    size: u64,
}

impl RotatingLog {
    pub fn open(path: &Path, max: u64) -> io::Result<Self> {
        let (file, size) = open(path)?;
        Ok(Self { path: path.to_owned(), max: max.max(1), file, size })
    }

    /// Appends `chunk`, rotating whenever the file reaches its limit.
    pub fn write(&mut self, mut chunk: &[u8]) -> io::Result<()> {
        while !chunk.is_empty() {
            if self.size >= self.max {
                std::fs::rename(&self.path, previous(&self.path))?;
                (self.file, self.size) = open(&self.path)?;
            }
            let room = usize::try_from(self.max - self.size).unwrap_or(usize::MAX).min(chunk.len());
            self.file.write_all(&chunk[..room])?;
            self.size += room as u64;
            chunk = &chunk[room..];
        }
        Ok(())
    }
}

/// The rotated file beside `path`: `output.log.1`.
pub fn previous(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".1");
    PathBuf::from(name)
}

/// Opens the log to append to, never through a link: it is in its agent's directory, which the
/// agent of a container writes too.
fn open(path: &Path) -> io::Result<(File, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = OpenOptions::new().create(true).append(true).custom_flags(nix::libc::O_NOFOLLOW).open(path)?;
    let size = file.metadata()?.len();
    Ok((file, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_rotates_at_its_limit_keeping_one_before_and_losing_nothing_in_between() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("output.log");
        std::fs::write(&log, "0123").unwrap();
        let input: Vec<u8> = (0..25u8).map(|i| b'a' + i).collect();
        append_rotating(&input[..], &log, 10).unwrap();
        // 4 + 25 bytes: "0123abcdef" (rotated away twice, gone), "ghijklmnop", "qrstuvwxy".
        assert_eq!(std::fs::read_to_string(previous(&log)).unwrap(), "ghijklmnop");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "qrstuvwxy");
    }

    #[test]
    fn under_the_limit_it_only_appends() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("output.log");
        append_rotating(&b"hello "[..], &log, 100).unwrap();
        append_rotating(&b"again"[..], &log, 100).unwrap();
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "hello again");
        assert!(!previous(&log).exists());
    }
}
