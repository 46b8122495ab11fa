//! The watcher thread: owns every `Tail`, the directory watches that wake it, and the sweep
//! timer. It waits on one channel for requests and file events, coalesces whatever arrived
//! together, then gives each file with news one turn of reading.

use std::collections::{BTreeSet, HashMap};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use super::tail::Tail;
use super::{LogLines, Msg, WatchId};

pub(super) type Sink = Box<dyn Fn(LogLines) + Send>;

/// How far up a missing parent directory's ancestors one is watched for its making.
const ANCESTORS_UP: usize = 3;

/// A parent directory that holds watched files, and whether the notifier watches it yet.
struct Dir {
    files: usize,
    watched: bool,
    /// A failure to watch it was logged already; later ones are not.
    warned: bool,
}

pub(super) struct Worker {
    rx: Receiver<Msg>,
    notifier: Option<RecommendedWatcher>,
    sink: Sink,
    sweep: Duration,
    tails: HashMap<WatchId, Tail>,
    by_path: HashMap<PathBuf, Vec<WatchId>>,
    dirs: HashMap<PathBuf, Dir>,
    /// Directories watched only to see a missing parent directory made (the nearest that
    /// exists of its ancestors, a few levels up at most).
    ancestors: BTreeSet<PathBuf>,
    /// Files to read in the next turn.
    dirty: BTreeSet<WatchId>,
}

impl Worker {
    pub fn new(rx: Receiver<Msg>, notifier: Option<RecommendedWatcher>, sink: Sink, sweep: Duration) -> Self {
        Self {
            rx,
            notifier,
            sink,
            sweep,
            tails: HashMap::new(),
            by_path: HashMap::new(),
            dirs: HashMap::new(),
            ancestors: BTreeSet::new(),
            dirty: BTreeSet::new(),
        }
    }

    /// Runs until `Msg::Stop` (or until every sender is gone).
    pub fn run(mut self) {
        let mut next_sweep = Instant::now() + self.sweep;
        loop {
            // With reading left over from the last turn, only look at what is already queued.
            let wait = if self.dirty.is_empty() {
                next_sweep.saturating_duration_since(Instant::now())
            } else {
                Duration::ZERO
            };
            match self.rx.recv_timeout(wait) {
                Ok(msg) => {
                    if !self.handle(msg) {
                        return;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            loop {
                match self.rx.try_recv() {
                    Ok(msg) => {
                        if !self.handle(msg) {
                            return;
                        }
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return,
                }
            }
            if Instant::now() >= next_sweep {
                self.sweep_all();
                next_sweep = Instant::now() + self.sweep;
            }
            self.turn();
        }
    }

    /// Takes in one message; `false` for `Stop`.
    fn handle(&mut self, msg: Msg) -> bool {
        match msg {
            Msg::Watch { id, path, offset } => self.add(id, path, offset),
            Msg::Unwatch(id) => self.remove(id),
            Msg::Changed(paths) => {
                for path in paths {
                    self.changed(&path);
                }
            }
            Msg::Rescan => self.dirty.extend(self.tails.keys().copied()),
            Msg::Stop => return false,
        }
        true
    }

    fn add(&mut self, id: WatchId, given: PathBuf, offset: u64) {
        let path = std::path::absolute(&given).unwrap_or_else(|_| given.clone());
        if let Some(parent) = path.parent() {
            let parent = parent.to_path_buf();
            self.dirs.entry(parent.clone()).or_insert(Dir { files: 0, watched: false, warned: false }).files += 1;
            // Watch the directory before the first read: what is written after that read wakes us.
            self.watch_dir(&parent);
        }
        self.by_path.entry(path.clone()).or_default().push(id);
        self.tails.insert(id, Tail::new(path, given, offset));
        self.dirty.insert(id);
    }

    fn remove(&mut self, id: WatchId) {
        self.dirty.remove(&id);
        let Some(tail) = self.tails.remove(&id) else { return };
        if let Some(ids) = self.by_path.get_mut(&tail.path) {
            ids.retain(|other| *other != id);
            if ids.is_empty() {
                self.by_path.remove(&tail.path);
            }
        }
        let Some(parent) = tail.path.parent() else { return };
        let Some(dir) = self.dirs.get_mut(parent) else { return };
        dir.files -= 1;
        if dir.files == 0 {
            let watched = dir.watched;
            self.dirs.remove(parent);
            if let (true, Some(notifier)) = (watched, self.notifier.as_mut()) {
                // Fails only when the directory is gone, and its watch with it.
                let _ = notifier.unwatch(parent);
            }
        }
    }

    /// A file event named `path`: a watched file, a watched directory itself, or a directory
    /// made on the way to a missing parent (which is watched now, and its files read).
    fn changed(&mut self, path: &Path) {
        if let Some(ids) = self.by_path.get(path) {
            self.dirty.extend(ids.iter().copied());
        }
        let waiting: Vec<PathBuf> =
            self.dirs.iter().filter(|(d, dir)| !dir.watched && d.starts_with(path)).map(|(d, _)| d.clone()).collect();
        for dir in waiting {
            self.watch_dir(&dir);
            if self.dirs.get(&dir).is_some_and(|d| d.watched) {
                let files = self.tails.iter().filter(|(_, t)| t.path.parent() == Some(dir.as_path()));
                let ids: Vec<WatchId> = files.map(|(id, _)| *id).collect();
                self.dirty.extend(ids);
            }
        }
        if let Some(dir) = self.dirs.get_mut(path) {
            // The directory was removed or renamed, and its watch with it: the sweep watches it
            // again once it exists, and reads its files.
            if dir.watched && !path.is_dir() {
                dir.watched = false;
                if let Some(notifier) = self.notifier.as_mut() {
                    let _ = notifier.unwatch(path);
                }
            }
        }
    }

    /// Asks the notifier to watch `dir`, unless it already does or there is no notifier. For a
    /// directory that does not exist yet, the nearest of its ancestors that does is watched (a
    /// few levels up at most; else the sweep finds it), so that its making is seen at once.
    fn watch_dir(&mut self, path: &Path) {
        let Some(notifier) = self.notifier.as_mut() else { return };
        let Some(dir) = self.dirs.get_mut(path) else { return };
        if dir.watched {
            return;
        }
        if !path.is_dir() {
            let nearest = path.ancestors().skip(1).take(ANCESTORS_UP).find(|a| a.is_dir());
            if let Some(a) = nearest.filter(|a| !self.ancestors.contains(*a)) {
                if notifier.watch(a, RecursiveMode::NonRecursive).is_ok() {
                    self.ancestors.insert(a.to_path_buf());
                }
            }
            return;
        }
        match notifier.watch(path, RecursiveMode::NonRecursive) {
            Ok(()) => dir.watched = true,
            Err(e) if !dir.warned => {
                dir.warned = true;
                tracing::warn!(dir = %path.display(), error = %e, "cannot watch for changes; checking every sweep");
            }
            Err(_) => {}
        }
    }

    /// The fallback for missed events: watch directories that have appeared, reread every file.
    fn sweep_all(&mut self) {
        let unwatched: Vec<PathBuf> =
            self.dirs.iter().filter(|(_, dir)| !dir.watched).map(|(p, _)| p.clone()).collect();
        for dir in unwatched {
            self.watch_dir(&dir);
        }
        self.dirty.extend(self.tails.keys().copied());
    }

    /// One turn: each file with news delivers at most one batch. Those with more stay dirty.
    fn turn(&mut self) {
        let dirty = std::mem::take(&mut self.dirty);
        for id in dirty {
            let Some(tail) = self.tails.get_mut(&id) else { continue };
            let batch = match tail.advance() {
                Ok(Some(batch)) => batch,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(file = %tail.path.display(), error = %e, "cannot read followed file");
                    continue;
                }
            };
            if batch.more {
                self.dirty.insert(id);
            }
            let lines = LogLines {
                id,
                path: tail.given.clone(),
                lines: batch.lines,
                offset: batch.offset,
                truncated: batch.truncated,
                partial: batch.partial,
            };
            if panic::catch_unwind(AssertUnwindSafe(|| (self.sink)(lines))).is_err() {
                tracing::error!(file = %tail.path.display(), "the log line sink panicked; lines were lost");
            }
        }
    }
}

/// Turns one notifier report into a message: a rescan for errors and overflows, nothing for
/// reads (our own reading opens the files), else the paths it names.
pub(super) fn event_msg(event: notify::Result<notify::Event>) -> Option<Msg> {
    match event {
        Err(e) => {
            tracing::debug!(error = %e, "file notifier error; rescanning");
            Some(Msg::Rescan)
        }
        Ok(event) if event.need_rescan() => Some(Msg::Rescan),
        Ok(event) if matches!(event.kind, EventKind::Access(_)) => None,
        Ok(event) => Some(Msg::Changed(event.paths)),
    }
}
