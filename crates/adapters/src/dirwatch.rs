//! `DirWatcher`: signs of life from workspaces — any file created, changed or removed under a
//! watched directory (outside `.git`), reported at most once per interval per directory. The
//! kernel's file notifications wake it; nothing polls.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::AdapterError;

/// Reports for a watched directory are at most this frequent.
pub const REPORT_EVERY: Duration = Duration::from_secs(1);

type Sink = Box<dyn Fn(&Path) + Send>;

/// Watches directories (recursively) for file changes.
pub struct DirWatcher {
    watcher: Mutex<RecommendedWatcher>,
    state: Arc<Mutex<Shared>>,
}

#[derive(Default)]
struct Shared {
    /// Watched roots and when each last reported.
    roots: HashMap<PathBuf, Option<Instant>>,
}

impl DirWatcher {
    /// `sink` is called (on the notifier's thread) with the watched root a change fell under.
    pub fn new(sink: impl Fn(&Path) + Send + 'static) -> Result<Self, AdapterError> {
        let state = Arc::new(Mutex::new(Shared::default()));
        let shared = state.clone();
        let sink: Sink = Box::new(sink);
        // A link in a workspace (its agent's to make, to `/` say) is never followed out of it.
        let config = notify::Config::default().with_follow_symlinks(false);
        let watcher = RecommendedWatcher::new(
            move |res: notify::Result<notify::Event>| {
                let Ok(event) = res else { return };
                if matches!(event.kind, EventKind::Access(_) | EventKind::Other) {
                    return;
                }
                let mut report = Vec::new();
                {
                    let mut s = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    for path in &event.paths {
                        let Some((root, last)) = s.roots.iter_mut().find(|(root, _)| path.starts_with(root)) else {
                            continue;
                        };
                        let inside_git = path.strip_prefix(root).is_ok_and(|rel| {
                            rel.components().next().is_some_and(|c| c == Component::Normal(".git".as_ref()))
                        });
                        let due = last.is_none_or(|t| t.elapsed() >= REPORT_EVERY);
                        if !inside_git && due {
                            *last = Some(Instant::now());
                            report.push(root.clone());
                        }
                    }
                }
                for root in report {
                    sink(&root);
                }
            },
            config,
        )
        .map_err(|e| AdapterError::Watch(e.to_string()))?;
        Ok(Self { watcher: Mutex::new(watcher), state })
    }

    /// Watches `dir` and everything under it.
    pub fn watch(&self, dir: &Path) -> Result<(), AdapterError> {
        let root = dir.canonicalize().map_err(|e| AdapterError::io(format!("watching {}", dir.display()), e))?;
        self.state.lock().unwrap_or_else(PoisonError::into_inner).roots.insert(root.clone(), None);
        let mut w = self.watcher.lock().unwrap_or_else(PoisonError::into_inner);
        w.watch(&root, RecursiveMode::Recursive).map_err(|e| AdapterError::Watch(e.to_string()))
    }

    pub fn unwatch(&self, dir: &Path) {
        let Ok(root) = dir.canonicalize() else { return };
        self.state.lock().unwrap_or_else(PoisonError::into_inner).roots.remove(&root);
        let _ = self.watcher.lock().unwrap_or_else(PoisonError::into_inner).unwatch(&root);
    }
}
