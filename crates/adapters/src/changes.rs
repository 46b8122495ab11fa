//! `Changes`: wakes a reader that follows files as they grow (the dashboard's view of an agent's
//! output, `job logs -f`) when a file in one directory is written, from the kernel's file
//! notifications: nothing polls.

use std::ffi::OsStr;
use std::path::Path;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::AdapterError;

/// Watches one directory while it lives.
pub struct Changes {
    _watcher: RecommendedWatcher,
}

impl Changes {
    /// Calls `wake` (on the notifier's thread) whenever a file directly in `dir` whose name
    /// `named` accepts is made, written, renamed or removed.
    pub fn in_dir(
        dir: &Path,
        named: impl Fn(&OsStr) -> bool + Send + 'static,
        wake: impl Fn() + Send + 'static,
    ) -> Result<Self, AdapterError> {
        let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            let Ok(event) = res else { return };
            if matches!(event.kind, EventKind::Access(_) | EventKind::Other) {
                return;
            }
            if event.paths.iter().any(|p| p.file_name().is_some_and(&named)) {
                wake();
            }
        })
        .map_err(|e| AdapterError::Watch(e.to_string()))?;
        watcher.watch(dir, RecursiveMode::NonRecursive).map_err(|e| AdapterError::Watch(e.to_string()))?;
        Ok(Self { _watcher: watcher })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_write_to_a_named_file_wakes_and_others_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let (tx, rx) = mpsc::channel();
        let _changes = Changes::in_dir(dir.path(), |n| n == "output.log", move || _ = tx.send(())).unwrap();
        std::fs::write(dir.path().join("other.txt"), "x").unwrap();
        std::fs::write(dir.path().join("output.log"), "y").unwrap();
        rx.recv_timeout(Duration::from_secs(10)).expect("woken by the named file");
        // Only the named file's events came: every wake so far is about it, and a later write
        // to another file brings none (each write to output.log can bring several).
        while rx.recv_timeout(Duration::from_millis(200)).is_ok() {}
        std::fs::write(dir.path().join("other.txt"), "z").unwrap();
        assert!(rx.recv_timeout(Duration::from_millis(500)).is_err(), "another file wakes nothing");
    }
}
