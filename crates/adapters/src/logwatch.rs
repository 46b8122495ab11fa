//! `LogWatcher`: follows many append-only files — Claude Code session logs, terminal output
//! written by `tmux pipe-pane` — from a byte offset, and hands over each complete new line.
//!
//! One watcher serves the whole daemon: one background thread and one file notifier (inotify on
//! Linux). The notifier watches the *parent directory* of each file, so a file that does not
//! exist yet is picked up when it appears, and one that is replaced is noticed. Its events only
//! wake the thread; the thread then reads each file from the offset it keeps. A slow sweep
//! (every 2 s unless told otherwise) rereads every file in case an event was missed, and
//! watches parent directories that did not exist before. Nothing is polled faster than that,
//! and a file that has not changed costs one `stat` per sweep.
//!
//! What is delivered:
//! - only complete lines: the bytes of a last line without its '\n' are kept until it ends;
//!   the '\n' (and a '\r' before it) are removed, and invalid UTF-8 is replaced (lossy);
//! - at most about 1 MiB of lines at once; a file with more delivers it over several turns,
//!   taking turns with the other files;
//! - a file shorter than the offset read so far, or another file at the path (another inode),
//!   starts again from 0 with `truncated: true` (possibly with no lines yet);
//! - a line longer than 32 MiB without a '\n' is delivered in pieces of that size.

mod tail;
mod worker;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::AdapterError;
use worker::Worker;

/// One followed file, as `LogWatcher::watch` returned it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WatchId(u64);

impl WatchId {
    pub fn get(self) -> u64 {
        self.0
    }
}

/// New complete lines of one followed file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLines {
    pub id: WatchId,
    /// The path as it was given to `watch`.
    pub path: PathBuf,
    /// Each line without its '\n'.
    pub lines: Vec<String>,
    /// The byte offset just after the last line in `lines`: where a later `watch` resumes.
    pub offset: u64,
    /// The file was truncated or replaced: `lines` start at its beginning, and whatever was
    /// delivered from it before no longer stands.
    pub truncated: bool,
    /// Text after the last complete line, when new bytes arrived that end no line (a shell
    /// prompt, a `[y/n]` question). It is delivered again, completed, as a line later.
    pub partial: Option<String>,
}

/// How a `LogWatcher` finds out about changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogWatchOptions {
    /// Wake on file events. Without them only the sweep finds news (for tests of the sweep).
    pub events: bool,
    /// How often every file is reread regardless of events.
    pub sweep: Duration,
}

impl Default for LogWatchOptions {
    fn default() -> Self {
        Self { events: true, sweep: Duration::from_secs(2) }
    }
}

/// What the caller and the notifier tell the watcher thread.
enum Msg {
    Watch {
        id: WatchId,
        path: PathBuf,
        offset: u64,
    },
    Unwatch(WatchId),
    /// A file event named these paths.
    Changed(Vec<PathBuf>),
    /// Events may have been lost: reread every file.
    Rescan,
    Stop,
}

/// Follows files and hands their new lines to a sink, on its own thread. Dropping it stops the
/// thread (after the delivery under way, if any).
pub struct LogWatcher {
    tx: Sender<Msg>,
    next_id: AtomicU64,
    thread: Option<JoinHandle<()>>,
}

impl LogWatcher {
    /// Starts the watcher thread with the default options. `sink` is called on that thread for
    /// every delivery, in order per file; it should return quickly (hand the lines on), as all
    /// files wait for it.
    pub fn new(sink: impl Fn(LogLines) + Send + 'static) -> Result<Self, AdapterError> {
        Self::with_options(sink, LogWatchOptions::default())
    }

    /// Like `new`, with `options`. `AdapterError::Watch` when the file notifier cannot start.
    pub fn with_options(
        sink: impl Fn(LogLines) + Send + 'static,
        options: LogWatchOptions,
    ) -> Result<Self, AdapterError> {
        let (tx, rx) = mpsc::channel();
        let notifier = if options.events {
            let events = tx.clone();
            let handler = move |event| {
                if let Some(msg) = worker::event_msg(event) {
                    // Fails only once the watcher thread has stopped.
                    let _ = events.send(msg);
                }
            };
            Some(notify::recommended_watcher(handler).map_err(|e| AdapterError::Watch(e.to_string()))?)
        } else {
            None
        };
        let worker = Worker::new(rx, notifier, Box::new(sink), options.sweep);
        let thread = thread::Builder::new()
            .name("bosun-logwatch".into())
            .spawn(move || worker.run())
            .map_err(|e| AdapterError::io("starting the log watcher thread", e))?;
        Ok(Self { tx, next_id: AtomicU64::new(1), thread: Some(thread) })
    }

    /// Follows `path` from byte `offset` (0 for the whole file; a file's length for only what is
    /// written from now on). The file, and even its directory, need not exist yet. Lines already
    /// complete past `offset` are delivered at once.
    pub fn watch(&self, path: PathBuf, offset: u64) -> WatchId {
        let id = WatchId(self.next_id.fetch_add(1, Ordering::Relaxed));
        self.send(Msg::Watch { id, path, offset });
        id
    }

    /// Stops following the file. A delivery already under way may still arrive; none starts
    /// after the thread has taken in this request. An unknown id is ignored.
    pub fn unwatch(&self, id: WatchId) {
        self.send(Msg::Unwatch(id));
    }

    fn send(&self, msg: Msg) {
        if self.tx.send(msg).is_err() {
            tracing::error!("the log watcher thread has stopped; files are no longer followed");
        }
    }
}

impl Drop for LogWatcher {
    fn drop(&mut self) {
        let _ = self.tx.send(Msg::Stop);
        if let Some(thread) = self.thread.take() {
            // Dropped from inside the sink: the thread stops once the sink returns.
            if thread.thread().id() != thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}
