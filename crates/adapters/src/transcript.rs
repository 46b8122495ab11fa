//! Waiting for an agent's transcript to hold what it said: Claude Code writes the end of a turn
//! to its transcript a little after reporting the turn's end, and a resume started before then
//! finds the turn missing, or no conversation at all.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{Duration, Instant};

/// How much of the transcript's end is searched.
const TAIL: u64 = 256 * 1024;

/// Waits until the end of the regular file at `path` holds `text`, looking every few tens of
/// milliseconds for at most `wait`; whether it does.
pub fn holds_within(path: &Path, text: &str, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    loop {
        if tail(path, TAIL).is_some_and(|t| t.contains(text)) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// The last `max` bytes of the regular file at `path`, as text. The file is opened without
/// blocking, so a FIFO put there never hangs the reader, and anything but a regular file (a
/// device such as `/dev/zero`, a directory) is not read.
pub fn tail(path: &Path, max: u64) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new().read(true).custom_flags(libc_nonblock()).open(path).ok()?;
    let meta = f.metadata().ok().filter(std::fs::Metadata::is_file)?;
    f.seek(SeekFrom::Start(meta.len().saturating_sub(max))).ok()?;
    let mut bytes = Vec::new();
    f.take(max).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// `O_NONBLOCK` (Linux): opening a FIFO for reading returns at once.
const fn libc_nonblock() -> i32 {
    0o4000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_waits_for_the_text_written_later_and_gives_up_on_text_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, "{\"type\":\"user\"}\n").unwrap();
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(200));
                let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
                std::io::Write::write_all(&mut f, b"{\"type\":\"assistant\",\"text\":\"All fixed now\"}\n").unwrap();
            })
        };
        assert!(holds_within(&path, "All fixed now", Duration::from_secs(20)));
        writer.join().unwrap();
        assert!(!holds_within(&path, "never written", Duration::from_millis(100)));
        assert!(!holds_within(dir.path(), "x", Duration::ZERO), "a directory is no transcript");
        assert_eq!(tail(Path::new("/dev/zero"), 1024), None, "a device is never read");
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert_eq!(tail(&fifo, 1024), None, "a FIFO neither hangs the reader nor is read");
    }
}
